// invariants_test.cpp — the invariant checker itself, on both stores: a
// healthy database passes, and each kind of violation, written into the
// tables by hand, is reported (so the checks after the fault tests can fail).
#include <fstream>

#include "fault_support.hpp"

namespace genroc::faults {
namespace {

using json = nlohmann::json;

class Invariants : public FaultTest {
  protected:
	// One statement on the store, bypassing genroc (superuser on PostgreSQL).
	void raw(const std::string &sql) {
		std::string q = for_store(db_url_, sql);
		if (GetParam() == "postgres") {
			e2e_worker::pg_exec(db_url_, q);
		} else {
			auto s = store();	// the schema exists
			(void)s;
			std::string cmd = "sqlite3 '" + db_url_ + "' \"" + q + "\"";
			ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
		}
	}
};

TEST_P(Invariants, EachViolationIsReportedAndAHealthyDatabasePasses) {
	auto s = store();
	s->define("one", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:x","End":true}}})"));
	int64_t a = s->start("one", json::object(), json::object()).instance_id;
	int64_t b = s->start("one", json::object(), json::object()).instance_id;
	std::ofstream(effects()) << a << " T\n";
	InvariantInput in{{a, b}, true, effects(), true};
	EXPECT_TRUE(check_invariants(db_url_, in).empty());

	// A start acknowledged but missing.
	in.acknowledged.insert(b + 1000);
	// Stuck: waiting for nothing.
	raw("UPDATE {I} SET status = 'waiting', wait_kind = NULL WHERE id = " + std::to_string(a));
	// Stuck: running without a lease.
	raw("UPDATE {I} SET status = 'running', lease_owner = NULL, lease_expires = NULL WHERE id = " +
		std::to_string(b));
	// Two successes for one scheduling.
	for (int i = 0; i < 2; i++)
		raw("INSERT INTO {L} (instance_id, at, event, state) SELECT id, created_at, 'task_succeeded', 'T' FROM {I} "
			"WHERE id = " + std::to_string(b));
	// An OnlyOnce effect twice.
	std::ofstream(effects(), std::ios::app) << a << " T\n";

	auto v = check_invariants(db_url_, in);
	std::string all;
	for (auto &l : v) all += l + "\n";
	auto has = [&](const std::string &what) { return all.find(what) != std::string::npos; };
	EXPECT_TRUE(has("acknowledged starts missing: 1 of 3")) << all;
	EXPECT_TRUE(has("stuck instance (id status wait_kind state): " + std::to_string(a) + " waiting")) << all;
	EXPECT_TRUE(has("stuck instance (id status wait_kind state): " + std::to_string(b) + " running")) << all;
	EXPECT_TRUE(has("more than one success recorded (instance state visit count): " + std::to_string(b) + " T 1 2"))
		<< all;
	EXPECT_TRUE(has("OnlyOnce effect \"" + std::to_string(a) + " T\" happened 2 times")) << all;
	EXPECT_EQ(v.size(), 5u) << all;
}

INSTANTIATE_TEST_SUITE_P(Stores, Invariants, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &p) { return p.param; });

}  // namespace
}  // namespace genroc::faults
