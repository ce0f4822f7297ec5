// faults_pgcrash_test.cpp — PostgreSQL stopped with `pg_ctl stop -m
// immediate` under load, at each durability level, with real `genroc worker`
// processes and clients starting instances (a Parallel with a child task and
// a timer, then an OnlyOnce task).  The cluster is the test's own
// (test/durability/cluster.*), started again at once.
//
// What each level promises (docs/design.md §4):
//   none       may lose the last moments of any work: acknowledged starts and
//              OnlyOnce claims are not checked; the rest still holds (nothing
//              stuck, one success per scheduling)
//   essential  + every acknowledged start is there, no OnlyOnce task twice
//   terminal, strict: the same checks (what they add, ended instances that
//              never rewind, is test/durability's flush test)
// An OnlyOnce task cut by the crash may end in only_once.interrupted at any
// level: its handler may have been running when the server went, and this
// test does not know which reports were acknowledged.  That an acknowledged
// OnlyOnce success is never turned into only_once.interrupted (its report is
// flushed at essential and above) is proven deterministically by
// test/durability/fencing_test.cpp, as is the crash-fencing sequence.
#include "../durability/cluster.hpp"
#include "fault_support.hpp"

namespace genroc::faults {
namespace {

using json = nlohmann::json;
using durability_test::OwnCluster;

class PgCrash : public FaultBase, public ::testing::WithParamInterface<DurabilityLevel> {};

// Where an OnlyOnce task cut by the crash may end in only_once.interrupted
// (every level; see the header).
bool kInterruptedAllowed(DurabilityLevel) { return true; }

TEST_P(PgCrash, ImmediateStopUnderLoadKeepsWhatTheLevelPromises) {
	const DurabilityLevel level = GetParam();
	const bool flushed_starts = level != DurabilityLevel::none;
	OwnCluster cluster("max_connections = 60\n");
	if (!cluster.ok()) {
		if (std::getenv("GENROC_TEST_REQUIRE_PG")) FAIL() << cluster.error();
		GTEST_SKIP() << cluster.error();
	}
	db_url_ = cluster.url();
	fault_handlers();
	store()->define("fan", json::parse(kFanJob));
	const std::string lvl = durability_name(level);
	procs_.push_back(worker("crash-w1", {"--durability", lvl, "--concurrency", "6"}));
	procs_.push_back(worker("crash-w2", {"--durability", lvl, "--concurrency", "6"}));

	const int crashes = scaled(1, 3);
	Load load(db_url_, "fan", json::object(), 2, 10ms, level);
	int before = 0;
	for (int c = 0; c < crashes; c++) {
		ASSERT_TRUE(eventually([&] { return load.acks() >= before + 60; }, 60s)) << "the load did not get going";
		ASSERT_TRUE(cluster.crash());
		before = load.acks();
		ASSERT_TRUE(cluster.start_again());
	}
	bool resumed = eventually([&] { return load.acks() >= before + 30; }, 60s);
	load.stop();
	ASSERT_TRUE(resumed) << "no start was acknowledged after the restart";
	std::fprintf(stderr, "pg crash at %s: %d crash(es), %d starts acknowledged, %d refused\n", lvl.c_str(), crashes,
				 load.acks(), load.errors());

	settle_and_check({load.acknowledged(), flushed_starts, effects(), flushed_starts}, 120s);
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a worker exited:\n" << p->log();
	auto ended = query_rows(db_url_,
							"SELECT id, status, coalesce(error, '') FROM {I} WHERE parent_id IS NULL AND status <> "
							"'succeeded'");
	for (auto &r : ended) {
		bool ok = r[1] == "failed" && r[2] == "only_once.interrupted" && kInterruptedAllowed(level);
		EXPECT_TRUE(ok) << "instance " << r[0] << " ended " << r[1] << " " << r[2];
	}
	procs_.clear();	// before the cluster goes
}

std::string level_name(const ::testing::TestParamInfo<DurabilityLevel> &p) { return durability_name(p.param); }

INSTANTIATE_TEST_SUITE_P(Levels, PgCrash,
						 ::testing::Values(DurabilityLevel::none, DurabilityLevel::essential,
										   DurabilityLevel::terminal, DurabilityLevel::strict),
						 level_name);

}  // namespace
}  // namespace genroc::faults
