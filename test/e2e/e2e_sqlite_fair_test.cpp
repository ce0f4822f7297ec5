// e2e_sqlite_fair_test.cpp — `genroc serve` on SQLite
// while starts arrive over HTTP as fast as a few clients can send them; the
// server's own worker must get its turns to write (claims, reports) and not
// starve behind the API's starts.  Before the writers of one file took turns
// (store/sqlite WriteTurns), the worker finished a few dozen tasks out of
// ~1,500 starts in 4s.  Turns in order of arrival alone are not enough once
// the API has a thread per HTTP connection (48 here): the worker is then 1
// writer among ~49 (10% of the starts finished).  The turns go round two
// lanes, the worker's connections and the others.
//
// The bound: the worker must finish at least a third as many tasks as the
// API started in the same window (each task is one start for the API, and
// a claim and a report for the worker).  Measured on a 2-core machine under
// other load, 48 clients: in turns 57-62% (1,100-1,250 starts/s, 700/s
// finished); without turns 3-26% (440-620 starts/s, 18-125/s finished), and
// some starts failed with busy timeouts.  With a thread per connection
// (same machine, heavier load): in lanes 66-71% (230-245 starts/s,
// 150-170/s finished); in one lane 10% (285 starts/s, 28/s finished).  The
// figures are printed.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

using Clock = std::chrono::steady_clock;

int64_t count_succeeded(const std::string &path) {
	sqlite3 *db = nullptr;
	int64_t n = -1;
	if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
		sqlite3_busy_timeout(db, 5000);
		sqlite3_stmt *st = nullptr;
		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM instances WHERE status = 'succeeded'", -1, &st, nullptr) ==
				SQLITE_OK &&
			sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n;
}

class SqliteServe : public WorkerTest {};

TEST_F(SqliteServe, TheWorkerGetsItsTurnsWhileTheApiTakesStarts) {
	const std::string path = dir_ + "/genroc.db";
	std::vector<std::string> argv = {genroc_bin(), "serve",	 "--database", path,
									 "--worker-id", "srv", "--listen",	  "127.0.0.1:0"};
	auto srv = std::make_unique<Proc>(argv, std::map<std::string, std::string>{{"GENROC_WORKER_ID", "srv"}},
									  dir_ + "/srv.log");
	int port = 0;
	ASSERT_TRUE(eventually(
		[&] {
			auto log = srv->log();
			auto at = log.find("listen=127.0.0.1:");
			if (at == std::string::npos) return false;
			port = std::atoi(log.c_str() + at + 17);
			return port > 0;
		},
		20s))
		<< srv->log();
	httplib::Client http("127.0.0.1", port);
	json def = {{"StartAt", "Work"},
				{"States", {{"Work", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"End", true}}}}}};
	auto d = http.Post("/api/definitions", json{{"name", "load"}, {"definition", def}}.dump(), "application/json");
	ASSERT_TRUE(d);
	ASSERT_EQ(d->status, 201) << d->body;

	// The load: clients sending starts back to back for 4 seconds.  Many of
	// them: with a few, the API's writes leave the file idle often enough
	// for SQLite's busy handler to let the worker in anyway.
	constexpr int kClients = 48;
	const auto window = std::chrono::seconds(4);
	std::atomic<int64_t> started{0}, refused{0};
	const int64_t done_before = count_succeeded(path);
	const auto t0 = Clock::now();
	std::vector<std::thread> clients;
	for (int c = 0; c < kClients; c++)
		clients.emplace_back([&] {
			httplib::Client cl("127.0.0.1", port);
			cl.set_read_timeout(30, 0);
			const std::string body = json{{"definition", "load"}}.dump();
			while (Clock::now() - t0 < window) {
				auto r = cl.Post("/api/instances", body, "application/json");
				if (r && r->status == 201) started++;
				else refused++;
			}
		});
	for (auto &t : clients) t.join();
	const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	const int64_t done = count_succeeded(path) - done_before;
	std::printf("genroc serve on SQLite: %lld starts acknowledged in %.1fs (%.0f/s, %lld refused); "
				"its worker finished %lld tasks meanwhile (%.0f/s, %.0f%% of the starts)\n",
				static_cast<long long>(started.load()), secs, started / secs, static_cast<long long>(refused.load()),
				static_cast<long long>(done), done / secs, started ? 100.0 * done / started : 0.0);
	ASSERT_GT(started.load(), 100) << "the API took too few starts to load the file\n" << srv->log();
	EXPECT_GE(done * 3, started.load()) << "the worker starved behind the API's starts\n" << srv->log();
	srv->signal(SIGTERM);
	srv->wait(20s);
}

}  // namespace
}  // namespace genroc::e2e_worker
