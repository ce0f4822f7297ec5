// crash_test.cpp — PostgreSQL crashes under load (pg_ctl stop -m immediate)
// while real `genroc worker` processes run at --durability essential, and
// comes back.  Then, within bounded waits on real events:
//   - every start the driver saw acknowledged exists;
//   - every activity result the driver saw acknowledged is there (the
//     instance it finished has succeeded);
//   - no OnlyOnce task ran twice (its command appends to a file);
//   - no instance is stuck: all of them end;
//   - the workers carry on by themselves (the same processes finish the work
//     started after the restart).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "../e2e/e2e_worker_support.hpp"
#include "cluster.hpp"

namespace genroc::durability_test {
namespace {

using namespace std::chrono_literals;
using e2e_worker::eventually;
using e2e_worker::read_lines;

const json kJob = json::parse(R"({"StartAt":"Step","States":{
	"Step":{"Type":"Task","Resource":"handler:step","Next":"Once"},
	"Once":{"Type":"Task","Resource":"handler:record","OnlyOnce":true,"End":true}}})");
// An approval claimed by the driver just before the crash may never be
// reported (the claim committed, the answer was lost with the connection):
// like any claimed activity it then waits for its TimeoutSeconds, and ends.
const json kApproval = json::parse(R"({"StartAt":"Wait","States":{
	"Wait":{"Type":"Task","Resource":"activity:approve","TimeoutSeconds":10,"End":true}}})");

class CrashTest : public e2e_worker::WorkerTest {};

TEST_F(CrashTest, AcknowledgedWorkSurvivesAnImmediateStopAndWorkersCarryOn) {
	OwnCluster cluster("max_connections = 50\n");
	if (!cluster.ok()) {
		if (std::getenv("GENROC_TEST_REQUIRE_PG")) FAIL() << cluster.error();
		GTEST_SKIP() << cluster.error();
	}
	db_url_ = cluster.url();
	{
		auto s = open_store(db_url_);
		s->define("job", kJob);
		s->define("approval", kApproval);
	}
	auto step = script("step.sh", "cat >/dev/null\necho '{}'");
	auto record = script("record.sh",
						 "cat >/dev/null\necho \"$GENROC_INSTANCE_ID\" >> \"$E2E_DIR/effects.log\"\necho '{}'");
	handlers_ = handlers_file({{"step", step}, {"record", record}});
	procs_.push_back(worker("crash-w1", {"--durability", "essential", "--concurrency", "8"}));
	procs_.push_back(worker("crash-w2", {"--durability", "essential", "--concurrency", "8"}));

	// The driver: starts jobs and approvals, and approves parked ones, like
	// outside clients; it records only what was acknowledged.
	std::mutex mu;
	std::set<int64_t> started, approved;
	std::atomic<bool> stop{false};
	std::atomic<int> acks{0};
	auto driver = [&](int which) {
		std::unique_ptr<Store> s;
		while (!stop) {
			try {
				if (!s) s = open_store(db_url_);	// durability essential by default
				if (which == 0) {
					auto r = s->start("job", json::object(), json::object());
					std::lock_guard<std::mutex> l(mu);
					started.insert(r.instance_id);
				} else {
					auto r = s->start("approval", json::object(), json::object());
					{
						std::lock_guard<std::mutex> l(mu);
						started.insert(r.instance_id);
					}
					for (auto &a : s->claim_activity("approve", "driver", 4)) {
						s->activity_succeed(a.token, json{{"ok", true}});
						std::lock_guard<std::mutex> l(mu);
						approved.insert(a.instance_id);
					}
				}
				acks++;
			} catch (const Error &) {
				// Not acknowledged: the server is down or restarting.  A new
				// connection later; pacing while it is down.
				s.reset();
				std::this_thread::sleep_for(50ms);
			}
		}
	};
	std::thread d0(driver, 0), d1(driver, 1);

	// Load, then the crash in the middle of it.
	ASSERT_TRUE(eventually([&] { return acks.load() >= 150; }, 60s)) << "the load did not get going";
	ASSERT_TRUE(cluster.crash());
	const int acks_at_crash = acks.load();
	ASSERT_TRUE(cluster.start_again());
	// More load after the restart, through the same worker processes.
	bool resumed = eventually([&] { return acks.load() >= acks_at_crash + 100; }, 60s);
	stop = true;
	d0.join();
	d1.join();
	ASSERT_TRUE(resumed) << "the driver could not work after the restart";
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a worker exited:\n" << p->log();

	// Parked approvals left by the driver: finish them, as its clients would.
	auto s = open_store(db_url_);
	for (;;) {
		auto tasks = s->claim_activity("approve", "driver", 100);
		if (tasks.empty()) break;
		for (auto &a : tasks) {
			s->activity_succeed(a.token, json{{"ok", true}});
			approved.insert(a.instance_id);
		}
	}

	// Every acknowledged start is there, and every instance ends (ticks and
	// lease lapses included) within a bound.
	std::map<std::string, int> statuses;
	bool all_ended = eventually(
		[&] {
			statuses.clear();
			for (int64_t id : started) {
				std::string st;
				try {
					st = s->get_instance(id).value("status", "");
				} catch (const Error &e) {
					st = "missing (" + e.sqlstate + ")";
				}
				statuses[st]++;
			}
			return statuses["succeeded"] + statuses["failed"] == static_cast<int>(started.size());
		},
		90s);
	std::ostringstream summary;
	for (auto &[k, v] : statuses) summary << k << "=" << v << " ";
	EXPECT_TRUE(all_ended) << "not every acknowledged instance ended: " << summary.str();
	EXPECT_EQ(statuses.count("missing (RC003)") ? statuses["missing (RC003)"] : 0, 0) << summary.str();

	// Every acknowledged activity result is there.
	for (int64_t id : approved) {
		auto inst = s->get_instance(id);
		EXPECT_EQ(inst.value("status", ""), "succeeded") << "approval " << id << ": " << inst.dump();
	}

	// No OnlyOnce task ran twice; an instance whose OnlyOnce task was cut by
	// the crash failed with only_once.interrupted instead of running again.
	std::map<std::string, int> runs;
	for (auto &l : read_lines(dir_ + "/effects.log")) runs[l]++;
	for (auto &[id, n] : runs) EXPECT_EQ(n, 1) << "OnlyOnce task of instance " << id << " ran " << n << " times";
	// An approval whose claim committed but whose answer the crash lost
	// fails with States.Timeout (kApproval above), which is no loss either.
	int interrupted = 0, timed_out = 0;
	for (int64_t id : started) {
		auto inst = s->get_instance(id);
		if (inst.value("status", "") != "failed") continue;
		if (inst.value("definition", "") == "approval" && !approved.count(id)) {
			EXPECT_EQ(inst.value("error", ""), "States.Timeout") << inst.dump();
			timed_out++;
		} else {
			EXPECT_EQ(inst.value("error", ""), "only_once.interrupted") << inst.dump();
			interrupted++;
		}
	}
	std::fprintf(stderr,
				 "crash test: %zu started, %zu approvals, %d acks before the crash, %s, %d OnlyOnce interrupted, "
				 "%d unanswered approvals timed out\n",
				 started.size(), approved.size(), acks_at_crash, summary.str().c_str(), interrupted, timed_out);
	procs_.clear();
}

}  // namespace
}  // namespace genroc::durability_test
