// e2e_slots_test.cpp — a worker uses every slot it has: tasks claimed
// together on a worker with free places all start their handlers (real
// processes) at once, without waiting for a running task to end (both
// stores).
//
// The handlers block until the test releases them: whether all of them
// started is seen before any ends, with no timing assumption (the bound is
// for failure only).
#include <sys/stat.h>

#include <fstream>

#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

class Slots : public WorkerTest, public ::testing::WithParamInterface<std::string> {
  protected:
	void SetUp() override {
		WorkerTest::SetUp();
		use_store(GetParam());
		if (IsSkipped() || HasFatalFailure()) return;
		// quick: answers at once.  block: marks that it started, then waits
		// for the release file.
		auto quick = script("quick.sh", R"SH(cat >/dev/null
printf '{"who":"%s"}\n' "$E2E_WHO")SH");
		auto block = script("block.sh", R"SH(cat >/dev/null
: > "$E2E_DIR/started.$GENROC_INSTANCE_ID"
while [ ! -e "$E2E_DIR/release" ]; do sleep 0.05; done
printf '{"who":"%s"}\n' "$E2E_WHO")SH");
		handlers_ = handlers_file({{"quick", quick}, {"block", block}});
	}
	int started(const std::vector<StartResult> &ids) {
		int n = 0;
		struct stat st;
		for (const auto &r : ids)
			n += ::stat((dir_ + "/started." + std::to_string(r.instance_id)).c_str(), &st) == 0;
		return n;
	}
};

json slots_task(const std::string &handler) {
	return {{"StartAt", "T"},
			{"States", {{"T", {{"Type", "Task"}, {"Resource", "handler:" + handler}, {"End", true}}}}}};
}

// One task first, so the worker keeps exactly one idle thread; then six
// tasks started together (one claim takes them) on --concurrency 8: all six
// handlers start before any is released.  Before, every task of the batch
// woke that one idle thread and the other five waited for a running one to
// end (six `sleep 8` handlers started at 0.2, 8.6, 8.6, 8.7, 16.8 and 16.9 s).
TEST_P(Slots, TasksClaimedTogetherAllStartWhileSlotsAreFree) {
	auto w = worker("ws", {"--concurrency", "8"});
	auto s = store();
	s->define("quick", slots_task("quick"));
	s->define("block", slots_task("block"));
	json first = wait_status(s->start("quick", json::object(), json::object()).instance_id, {"succeeded", "failed"}, 60s);
	ASSERT_EQ(first.value("status", ""), "succeeded") << first.dump() << w->log();

	const auto ids = s->start_many("block", json::array({1, 2, 3, 4, 5, 6}), json::object());
	ASSERT_EQ(ids.size(), 6u);
	const bool all = eventually([&] { return started(ids) == 6; }, 60s);
	const int seen = started(ids);
	std::ofstream(dir_ + "/release").put('\n');
	EXPECT_TRUE(all) << seen << " of 6 handlers started while 7 slots were free\n" << w->log();
	for (const auto &r : ids) {
		json i = wait_status(r.instance_id, {"succeeded", "failed"}, 60s);
		EXPECT_EQ(i.value("status", ""), "succeeded") << i.dump() << w->log();
	}
}

INSTANTIATE_TEST_SUITE_P(Stores, Slots, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e_worker
