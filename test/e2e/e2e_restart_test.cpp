// e2e_restart_test.cpp — a worker restarted with its own
// id after kill -9 takes its work back at once, and a second live worker
// with the same id is refused at once, naming the host; on both stores, with
// real genroc processes.
//
// --stale-after is 30s here: the old rule (wait until the heartbeat is
// stale) would take 30s for either answer.  What tells "at once" from
// "after stale-after" is the path the worker took, asserted from its log:
// the registration itself took the task back ("reclaimed=1"), a live
// holder was proven alive (RC005), and never "retrying until stale-after"
// (the RC010 wait).  The times are printed, never asserted: the failure
// timeouts are generous and say nothing about speed.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>

#include "config.hpp"
#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

int runs_of_step(const std::string &dir) {
	int n = 0;
	for (auto &l : read_lines(dir + "/runs.log"))
		if (l.find(" Step ") != std::string::npos) ++n;
	return n;
}

class RestartById : public EachStoreWorkerTest {
  protected:
	int64_t start_one_step(const json &params) {
		json def = {{"StartAt", "Step"},
					{"States",
					 {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", params}, {"Next", "Done"}}},
					  {"Done", {{"Type", "Succeed"}}}}}};
		auto s = store();
		s->define("restart", def);
		return s->start("restart", json::object(), json::object()).instance_id;
	}
	// worker() names a process's log after the id and the count of procs_:
	// two lives of one id need that count to grow between them.
	std::unique_ptr<Proc> life(const std::string &id) {
		auto p = worker(id, kSlow);
		procs_.emplace_back();
		return p;
	}
	// 60s leases never lapse within the test: only the restart can take the
	// task back.
	const std::vector<std::string> kSlow = {"--lease-duration", "60s", "--stale-after", "30s"};
};

TEST_P(RestartById, AfterKill9TheSameIdTakesItsWorkBackAtOnce) {
	auto a = life("wa");
	int64_t id = start_one_step({{"sleep", 120}, {"sleep_once", true}});
	ASSERT_TRUE(eventually([&] { return runs_of_step(dir_) == 1; }, 30s)) << a->log();
	a->signal(SIGKILL);
	ASSERT_TRUE(a->wait(5s));
	const auto t0 = Clock::now();
	auto again = life("wa");
	ASSERT_TRUE(eventually([&] { return again->log().find("worker started") != std::string::npos; }, 30s))
		<< again->log();
	const double registered = seconds_since(t0);
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	const double done = seconds_since(t0);
	std::printf("[%s] restart by id: registered after %.2fs, the task taken back and finished after %.2fs "
				"(stale-after 30s)\n",
				GetParam().c_str(), registered, done);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << again->log();
	EXPECT_EQ(runs_of_step(dir_), 2);
	EXPECT_EQ(again->log().find("retrying until stale-after"), std::string::npos) << again->log();
	// the take-back is the registration's ("reclaimed" 1), not a lapse
	EXPECT_NE(again->log().find("reclaimed=1"), std::string::npos) << again->log();
}

TEST_P(RestartById, ASecondLiveWorkerWithTheSameIdIsRefusedAtOnceNamingTheHost) {
	auto a = life("same");
	ASSERT_TRUE(eventually([&] { return a->log().find("worker started") != std::string::npos; }, 30s)) << a->log();
	const auto t0 = Clock::now();
	auto b = life("same");
	auto st = b->wait(25s);
	const double took = seconds_since(t0);
	std::printf("[%s] live duplicate refused after %.2fs (stale-after 30s)\n", GetParam().c_str(), took);
	ASSERT_EQ(exit_code(st), 1) << b->log();
	const std::string log = b->log();
	EXPECT_NE(log.find("in use by a live worker"), std::string::npos) << log;
	// proven alive (RC005), not "cannot tell, wait until stale" (RC010,
	// which logs this warning first and gives up only after stale-after)
	EXPECT_EQ(log.find("retrying until stale-after"), std::string::npos) << log;
	EXPECT_NE(log.find("--worker-id"), std::string::npos) << log;	// what to do about it
	EXPECT_NE(log.find(host_name()), std::string::npos) << log;
	EXPECT_TRUE(a->running()) << a->log();
}

// The default worker id: two workers of one host on
// different stores both start without --worker-id; a restart of one with
// the same command line gets the same id back at once; an alike second
// worker on the same store is refused with a hint to give --worker-id.
TEST_P(RestartById, TheDefaultIdIsTheHostWithASuffixPerStore) {
	auto plain = [&](const std::string &database, const std::string &log) {
		const std::string url = GetParam() == "postgres" && database == db_url_ ? binary_url(db_url_, "worker") : database;
		return std::make_unique<Proc>(
			std::vector<std::string>{genroc_bin(), "worker", "--database", url, "--lease-duration", "60s",
									 "--stale-after", "30s", "--poll-interval", "200ms"},
			std::map<std::string, std::string>{{"GENROC_WORKER_ID", ""}}, dir_ + "/" + log + ".log");
	};
	auto started = [](Proc &p) {
		return eventually([&] { return p.log().find("worker started") != std::string::npos; }, 30s);
	};
	auto ids = [](Store &s) {
		std::vector<std::string> out;
		for (auto &w : s.list_workers())
			if (w.value("live", false)) out.push_back(w.at("worker").get<std::string>());
		return out;
	};
	const std::string other_db = dir_ + "/other.db";
	auto a = plain(db_url_, "a");
	auto b = plain(other_db, "b");
	ASSERT_TRUE(started(*a)) << a->log();
	ASSERT_TRUE(started(*b)) << b->log();
	auto here = store();
	auto there = open_store(other_db);
	ASSERT_EQ(ids(*here).size(), 1u);
	ASSERT_EQ(ids(*there).size(), 1u);
	const std::string id = ids(*here)[0];
	EXPECT_EQ(id.rfind(host_name() + "-", 0), 0u) << id;
	EXPECT_NE(ids(*there)[0], id);
	// the same command line again while the first lives: refused, with the hint
	auto c = plain(db_url_, "c");
	auto st = c->wait(25s);
	ASSERT_EQ(exit_code(st), 1) << c->log();
	EXPECT_NE(c->log().find(id), std::string::npos) << c->log();
	EXPECT_NE(c->log().find("--worker-id"), std::string::npos) << c->log();
	EXPECT_TRUE(a->running()) << a->log();
	// a crash and a restart: the same id, taken back at once
	a->signal(SIGKILL);
	ASSERT_TRUE(a->wait(5s));
	const auto t0 = Clock::now();
	auto again = plain(db_url_, "again");
	ASSERT_TRUE(started(*again)) << again->log();
	std::printf("[%s] default id restarted after %.2fs (stale-after 30s)\n", GetParam().c_str(), seconds_since(t0));
	EXPECT_EQ(again->log().find("retrying until stale-after"), std::string::npos) << again->log();
	EXPECT_NE(again->log().find("worker registered"), std::string::npos) << again->log();
	EXPECT_EQ(ids(*here), std::vector<std::string>{id});
	EXPECT_TRUE(b->running()) << b->log();
}

INSTANTIATE_TEST_SUITE_P(Stores, RestartById, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e_worker
