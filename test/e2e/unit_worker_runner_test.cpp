// unit_worker_runner_test.cpp — the worker loop in-process on a SQLite file,
// with in-process handlers that block on latches (no timing assumptions):
// the concurrency cap, --prefetch, task threads kept for the next task, a
// claimed batch starting on every free place, shutdown
// releasing what outlives the grace (OnlyOnce included),
// genroc.HandlerMissing, lease_age_ms.
#include <gtest/gtest.h>

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "pg_test.hpp"
#include "runner.hpp"
#include "store.hpp"

namespace genroc {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds timeout = 20s) {
	auto deadline = std::chrono::steady_clock::now() + timeout;
	for (;;) {
		if (pred()) return true;
		if (std::chrono::steady_clock::now() >= deadline) return false;
		std::this_thread::sleep_for(10ms);
	}
}

// Counts handlers running at once; they block until released.
struct Gate {
	std::mutex m;
	std::condition_variable cv;
	int running = 0, max_running = 0, started = 0, released = 0;
	TaskResult enter(const json &in, const TaskContext &ctx) {
		std::unique_lock<std::mutex> g(m);
		++running;
		++started;
		max_running = std::max(max_running, running);
		cv.notify_all();
		// The cancel token has its own condition variable: look at it often.
		while (!(released > 0 || ctx.cancel->cancelled())) cv.wait_for(g, 5ms);
		--running;
		if (released > 0) {
			--released;
			return TaskResult::success(in);
		}
		return TaskResult::abandon();
	}
	void release(int n) {
		std::lock_guard<std::mutex> g(m);
		released += n;
		cv.notify_all();
	}
	int get(int Gate::*field) {
		std::lock_guard<std::mutex> g(m);
		return this->*field;
	}
};

class Runner_ : public ::testing::Test {
  protected:
	void SetUp() override {
		char tmpl[] = "/tmp/genroc-unit-runner.XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
		db_ = dir_ + "/genroc.db";
		store_ = open_store(db_);
		handlers_ = HandlerRegistry::with_builtins();
		handlers_.add("gate", [this](const json &in, const TaskContext &ctx) { return gate_.enter(in, ctx); });
	}
	void TearDown() override {
		stop_.request();
		if (thread_.joinable()) thread_.join();
		runner_.reset();
		fs::remove_all(dir_);
	}
	void run(int concurrency, Millis grace = 15s, std::vector<std::string> queues = {"default"}, int prefetch = 0) {
		WorkerOptions o;
		o.worker_id = "unit";
		o.host = "unit-host";
		o.concurrency = concurrency;
		o.prefetch = prefetch;
		o.queues = queues;
		o.shutdown_grace = grace;
		o.tick_interval = 50ms;
		o.poll_interval = 20ms;
		std::string db = db_;
		runner_ = std::make_unique<Runner>(o, handlers_, [db] { return open_store(db); });
		EXPECT_EQ(runner_->lease_age_ms(), -1);
		thread_ = std::thread([this] { rc_ = runner_->run(stop_); });
	}
	int64_t start_task(const std::string &resource, bool only_once = false) {
		json task = {{"Type", "Task"}, {"Resource", resource}, {"End", true}};
		if (only_once) task["OnlyOnce"] = true;
		std::string name = "d" + std::to_string(++defs_);
		store_->define(name, {{"StartAt", "T"}, {"States", {{"T", task}}}});
		return store_->start(name, {{"n", defs_}}, json::object()).instance_id;
	}
	std::string status(int64_t id) { return store_->get_instance(id)["status"]; }
	int count(const std::vector<int64_t> &ids, const std::string &s) {
		int n = 0;
		for (auto id : ids) n += status(id) == s;
		return n;
	}
	// Lets the gated handlers end one at a time, each seen succeeded
	// before the next is let go.
	bool release_each(const std::vector<int64_t> &ids) {
		for (int done = 1; done <= static_cast<int>(ids.size()); ++done) {
			gate_.release(1);
			if (!eventually([&] { return count(ids, "succeeded") >= done; })) return false;
		}
		return true;
	}
	int stop_and_wait() {
		stop_.request();
		thread_.join();
		return rc_;
	}

	std::string dir_, db_;
	std::unique_ptr<Store> store_;
	HandlerRegistry handlers_;
	Gate gate_, gate2_;	 // members: a handler may still run in TearDown
	StopFlag stop_;
	std::unique_ptr<Runner> runner_;
	std::thread thread_;
	int rc_ = -1;
	int defs_ = 0;
};

TEST_F(Runner_, RunsAtMostConcurrencyTasksAtOnce) {
	std::vector<int64_t> ids;
	for (int i = 0; i < 5; ++i) ids.push_back(start_task("handler:gate"));
	run(2);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 2; }));
	EXPECT_EQ(runner_->running(), 2);
	EXPECT_GE(runner_->lease_age_ms(), 0);
	// Release one at a time: each frees a slot that a queued task takes.
	ASSERT_TRUE(release_each(ids));
	EXPECT_EQ(gate_.get(&Gate::max_running), 2);
	EXPECT_EQ(gate_.get(&Gate::started), 5);
	EXPECT_EQ(stop_and_wait(), 0);
}

TEST_F(Runner_, ShutdownReleasesWhatOutlivesTheGrace) {
	int64_t plain = start_task("handler:gate");
	int64_t once = start_task("handler:gate", true);
	run(4, 50ms);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 2; }));
	EXPECT_EQ(stop_and_wait(), 0);
	// Released: the plain task is ready for another worker at once; the
	// OnlyOnce one is not run again but fails.
	EXPECT_EQ(status(plain), "ready");
	json inst = store_->get_instance(once);
	EXPECT_EQ(inst["status"], "failed") << inst.dump();
	EXPECT_EQ(inst["error"], "only_once.interrupted");
	EXPECT_EQ(gate_.get(&Gate::running), 0);
}

TEST_F(Runner_, ShutdownWaitsForRunningTasksWithinTheGrace) {
	int64_t id = start_task("handler:gate");
	run(4, 20s);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 1; }));
	stop_.request();
	// Still draining: the task is running and holds the worker.
	EXPECT_EQ(status(id), "running");
	gate_.release(1);
	thread_.join();
	EXPECT_EQ(rc_, 0);
	EXPECT_EQ(status(id), "succeeded");
}

// A task runs on a thread an earlier task ran on (Runner::Threads): 20
// tasks, two slots, never more than two threads (a task handed out while a
// thread is on its way back to idle waits for it).  A thread made per task
// would count 20.
TEST_F(Runner_, TaskThreadsAreKeptForTheNextTask) {
	std::mutex m;
	int threads = 0;
	handlers_.add("count", [&](const json &in, const TaskContext &) {
		thread_local bool seen = false;
		if (!seen) {
			seen = true;
			std::lock_guard<std::mutex> g(m);
			++threads;
		}
		return TaskResult::success(in);
	});
	std::vector<int64_t> ids;
	for (int i = 0; i < 20; ++i) ids.push_back(start_task("handler:count"));
	run(2);
	ASSERT_TRUE(eventually([&] {
		for (auto id : ids)
			if (status(id) != "succeeded") return false;
		return true;
	}));
	EXPECT_EQ(stop_and_wait(), 0);
	std::lock_guard<std::mutex> g(m);
	EXPECT_GE(threads, 1);
	EXPECT_LE(threads, 2);
}

// Tasks claimed together start on every free place at once
// (Runner::Threads): one thread is kept idle from an earlier task, then six
// tasks that block are claimed in one batch on --concurrency 8, and all six
// handlers run before any ends.  Before, every task of the batch saw the
// same one idle thread (the count drops only when the woken thread runs), so
// no thread was made and five waited for a running task to end.
TEST_F(Runner_, TasksClaimedTogetherAllStartWhileSlotsAreFree) {
	handlers_.add("quick", [](const json &in, const TaskContext &) { return TaskResult::success(in); });
	const int64_t first = start_task("handler:quick");
	run(8);
	ASSERT_TRUE(eventually([&] { return status(first) == "succeeded" && runner_->running() == 0; }));
	// one transaction: the worker's next claim takes all six
	store_->define("blocking", {{"StartAt", "T"}, {"States", {{"T", {{"Type", "Task"}, {"Resource", "handler:gate"}, {"End", true}}}}}});
	auto started = store_->start_many("blocking", json::array({1, 2, 3, 4, 5, 6}), json::object());
	ASSERT_EQ(started.size(), 6u);
	// a bound for failure only: before, five stayed queued until one ended
	const bool all_running = eventually([&] { return gate_.get(&Gate::running) == 6; }, 30s);
	EXPECT_TRUE(all_running) << "handlers running: " << gate_.get(&Gate::running)
							 << ", worker holds: " << runner_->running();
	EXPECT_EQ(gate_.get(&Gate::started), 6);
	gate_.release(6);
	ASSERT_TRUE(eventually([&] {
		for (const auto &r : started)
			if (status(r.instance_id) != "succeeded") return false;
		return true;
	}));
	EXPECT_LE(gate_.get(&Gate::max_running), 8);
	EXPECT_EQ(stop_and_wait(), 0);
}

// The Runner on either store (Runner_ itself runs on SQLite): on
// PostgreSQL a database made from GENROC_TEST_TEMPLATE for the test.
class RunnerOnStores : public Runner_, public ::testing::WithParamInterface<std::string> {
  protected:
	void SetUp() override {
		Runner_::SetUp();
		if (GetParam() != "postgres") return;
		const char *url = std::getenv("GENROC_TEST_PG_URL");
		if (!url || !*url) {
			const char *need = std::getenv("GENROC_TEST_REQUIRE_PG");
			if (need && std::string(need) == "1") FAIL() << "GENROC_TEST_PG_URL is not set but GENROC_TEST_REQUIRE_PG=1";
			GTEST_SKIP() << "GENROC_TEST_PG_URL is not set";
		}
		const char *tmpl = std::getenv("GENROC_TEST_TEMPLATE");
		admin_url_ = test::with_database(url, "postgres");
		pg_db_ = "genroc_unit_runner_" + std::to_string(getpid());
		test::pg_exec(admin_url_, "DROP DATABASE IF EXISTS " + pg_db_ + " WITH (FORCE)");
		test::pg_exec(admin_url_, "CREATE DATABASE " + pg_db_ + " TEMPLATE " +
									  std::string(tmpl && *tmpl ? tmpl : "genroc_template"));
		db_ = test::with_database(url, pg_db_);
		store_ = open_store(db_);
	}
	void TearDown() override {
		Runner_::TearDown();
		store_.reset();
		if (!pg_db_.empty()) test::pg_exec(admin_url_, "DROP DATABASE IF EXISTS " + pg_db_ + " WITH (FORCE)");
	}
	// Holds back every write of the worker's until release(): SQLite's
	// write lock, or on PostgreSQL a lock on the instances table that the
	// report's row lock waits for.
	void hold_writes() {
		if (GetParam() == "sqlite") {
			ASSERT_EQ(sqlite3_open(db_.c_str(), &lite_), SQLITE_OK);
			ASSERT_EQ(sqlite3_exec(lite_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(lite_);
			return;
		}
		pg_ = PQconnectdb(db_.c_str());
		ASSERT_EQ(PQstatus(pg_), CONNECTION_OK) << PQerrorMessage(pg_);
		PGresult *r = PQexec(pg_, "BEGIN; LOCK TABLE genroc._instances IN EXCLUSIVE MODE");
		ASSERT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(pg_);
		PQclear(r);
	}
	void release() {
		if (lite_) {
			EXPECT_EQ(sqlite3_exec(lite_, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
			sqlite3_close(lite_);
			lite_ = nullptr;
		}
		if (pg_) {
			PQclear(PQexec(pg_, "ROLLBACK"));
			PQfinish(pg_);
			pg_ = nullptr;
		}
	}
	std::string admin_url_, pg_db_;
	sqlite3 *lite_ = nullptr;
	PGconn *pg_ = nullptr;
};

// A thread waiting for its report's commit steps aside: a held task starts
// meanwhile, and still no more than --concurrency handlers run at once.
// The commit is held back by another connection's lock (the report waits,
// or fails busy and tries again, far longer than this).
TEST_P(RunnerOnStores, AHeldTaskStartsWhileAReportWaitsForItsCommit) {
	std::vector<int64_t> ids;
	for (int i = 0; i < 3; ++i) ids.push_back(start_task("handler:gate"));
	run(1, 15s, {"default"}, 2);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 1 && runner_->running() == 3; }));
	hold_writes();
	if (HasFatalFailure()) return;
	gate_.release(1);  // the first ends; its report cannot commit
	const bool second_started = eventually([&] { return gate_.get(&Gate::started) == 2; }, 5s);
	// the first's slot is held (its lease renewed) until its report commits
	const int held = runner_->running();
	release();
	EXPECT_TRUE(second_started) << "the held task waited for the other's report";
	EXPECT_EQ(held, 3);
	gate_.release(2);
	ASSERT_TRUE(eventually([&] { return count(ids, "succeeded") == 3; }));
	EXPECT_EQ(gate_.get(&Gate::max_running), 1);
	EXPECT_EQ(gate_.get(&Gate::started), 3);
	EXPECT_EQ(stop_and_wait(), 0);
}

// Reports that go together (one batch while another is in the database)
// and fail together: each is then sent alone, so one report's error stays
// its own.  Here the batch holds a good result and one nested past
// json_depth: the good one's instance succeeds, the other's task is
// reported failed (States.DataLimitExceeded) and its instance fails.
TEST_P(RunnerOnStores, AReportItsBatchCannotTakeIsSentAloneAndFailsOnlyItsTask) {
	Gate &second = gate2_;
	handlers_.add("gate2", [&](const json &in, const TaskContext &ctx) { return second.enter(in, ctx); });
	handlers_.add("deep2", [&](const json &in, const TaskContext &ctx) {
		TaskResult r = second.enter(in, ctx);
		if (r.kind != TaskResult::Kind::succeeded) return r;
		json v = 1;
		for (int i = 0; i < 600; ++i) v = json::array({std::move(v)});
		return TaskResult::success(std::move(v));
	});
	const int64_t first = start_task("handler:gate");
	const int64_t good = start_task("handler:gate2");
	const int64_t deep = start_task("handler:deep2");
	run(3);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 1 && second.get(&Gate::running) == 2; }));
	hold_writes();
	if (HasFatalFailure()) return;
	gate_.release(1);  // its report is the batch in the database, held there
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 0; }));
	second.release(2);	// these two gather for the next batch
	const bool both_returned = eventually([&] { return second.get(&Gate::running) == 0; });
	release();
	ASSERT_TRUE(both_returned);
	ASSERT_TRUE(eventually([&] { return status(first) == "succeeded" && status(good) == "succeeded" && status(deep) == "failed"; }))
		<< status(first) << " " << status(good) << " " << status(deep);
	json inst = store_->get_instance(deep);
	EXPECT_EQ(inst["error"], "States.DataLimitExceeded") << inst.dump();
	EXPECT_EQ(stop_and_wait(), 0);
}

INSTANTIATE_TEST_SUITE_P(Stores, RunnerOnStores, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

// --prefetch: tasks claimed beyond the free slots are leased to the worker
// (other workers cannot take them) and wait for a thread; no more than
// --concurrency run at once, and each runs once.
TEST_F(Runner_, PrefetchedTasksAreHeldLeasedAndRunAtMostConcurrencyAtOnce) {
	std::vector<int64_t> ids;
	for (int i = 0; i < 7; ++i) ids.push_back(start_task("handler:gate"));
	run(2, 15s, {"default"}, 3);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 2 && runner_->running() == 5; }));
	EXPECT_EQ(count(ids, "running"), 5);  // leased: two running, three held
	EXPECT_EQ(count(ids, "ready"), 2);
	ASSERT_TRUE(release_each(ids));
	EXPECT_EQ(gate_.get(&Gate::max_running), 2);
	EXPECT_EQ(gate_.get(&Gate::started), 7);
	EXPECT_EQ(stop_and_wait(), 0);
}

// At shutdown the held tasks are not started: their leases go back at once
// and they are ready for another worker, while the running one finishes.
TEST_F(Runner_, ShutdownReleasesPrefetchedTasksWithoutRunningThem) {
	std::vector<int64_t> ids;
	for (int i = 0; i < 4; ++i) ids.push_back(start_task("handler:gate"));
	run(1, 20s, {"default"}, 3);
	ASSERT_TRUE(eventually([&] { return gate_.get(&Gate::running) == 1 && runner_->running() == 4; }));
	stop_.request();
	gate_.release(1);
	thread_.join();
	EXPECT_EQ(rc_, 0);
	EXPECT_EQ(count(ids, "succeeded"), 1);
	EXPECT_EQ(count(ids, "ready"), 3);
	EXPECT_EQ(gate_.get(&Gate::started), 1);
}

// It reports genroc.HandlerMissing; with no queue for that handler yet,
// genroc makes one and the task waits there for a worker that has it.
TEST_F(Runner_, ATaskWithoutItsHandlerWaitsInItsHandlersQueue) {
	int64_t id = start_task("handler:absent");
	run(1);
	ASSERT_TRUE(eventually([&] { return store_->get_instance(id)["queue"] == "absent"; }));
	EXPECT_EQ(status(id), "ready");
	EXPECT_EQ(stop_and_wait(), 0);
}

// In its handler's own queue, a worker serving it without the handler
// fails the task at once.
TEST_F(Runner_, ATaskWithoutItsHandlerInItsHandlersQueueFailsWithHandlerMissing) {
	store_->queue_set("absent", {{"kind", "handler"}, {"handler", "absent"}});
	int64_t id = start_task("handler:absent");
	ASSERT_EQ(store_->get_instance(id)["queue"], "absent");
	run(1, 15s, {"absent"});
	ASSERT_TRUE(eventually([&] { return status(id) == "failed"; }));
	EXPECT_EQ(store_->get_instance(id)["error"], "genroc.HandlerMissing");
	EXPECT_EQ(stop_and_wait(), 0);
}

}  // namespace
}  // namespace genroc
