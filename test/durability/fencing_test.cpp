// fencing_test.cpp — a lease epoch that a crash took back
// is never handed out again, so a worker that held its result through the
// outage cannot report it into somebody else's lease.  And the
// acknowledged report of an OnlyOnce task survives the same outage.
//
// The sequence, on both stores, at durability essential (where a claim and
// the completion of a plain task are not flushed):
//   X claims T1, completes it, claims T2           (none of it on disk)
//   the database loses what was not on disk        (a crash / a power cut)
//   Y claims T1 again, fails it, claims the retry
//   X reports T2's result with the epoch it got   → RC004, nothing changes
// With a per-instance counter, Y's two claims hand out exactly X's two
// epochs again, and X's late report was accepted as T1's output.
//
// PostgreSQL: a cluster of the test's own.  Its WAL writer, background
// writer and checkpointer are stopped with SIGSTOP, so the unflushed commits
// stay in shared memory (wal_buffers); SIGKILL of the WAL writer then makes
// the postmaster kill every backend and run crash recovery from the WAL on
// disk, which lacks them.
//
// SQLite: every file the store opens goes through a VFS that keeps a copy of
// the file as it was at its last xSync, i.e. what a disk is guaranteed to
// hold after a power cut (the OS may have written more; it need not have).
// The power cut is a new directory holding those copies: the weakest state a
// real power loss may leave, reached without root or a disk of our own.  (A
// file SQLite deleted stays deleted, as SQLite assumes of a journal it
// deleted to commit.)
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "sqlite_store.hpp"
#include "sync_vfs.hpp"
#include "store.hpp"

namespace genroc::durability_test {
namespace {

using json = nlohmann::json;

// T1 may be retried (it is the one Y fails); T2 follows it.
const json kTwoSteps = json::parse(R"({"StartAt":"T1","States":{
	"T1":{"Type":"Task","Resource":"handler:h","Next":"T2",
		  "Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":3}]},
	"T2":{"Type":"Task","Resource":"handler:h","End":true}}})");

const char *kT0 = "2030-01-01T00:00:00Z";
const char *kT10 = "2030-01-01T00:00:10Z";

std::unique_ptr<Store> at_t0(std::unique_ptr<Store> s) {
	s->set_durability(DurabilityLevel::essential);
	s->set_test_clock(std::string(kT0));
	return s;
}

Task claim_one(Store &s, const std::string &worker) {
	auto t = s.claim(worker, {"default"}, 1);
	if (t.size() != 1) throw std::runtime_error("expected one task for " + worker + ", got " + std::to_string(t.size()));
	return t[0];
}

// What X did before the outage: returns the epoch of its claim of T2.
struct BeforeOutage {
	int64_t id = 0;
	int64_t t1_epoch = 0, t2_epoch = 0;
};

BeforeOutage x_runs_ahead(Store &x) {
	x.define("fence", kTwoSteps);
	x.worker_register("X", {{"host", "host-x"}, {"lease_duration", "1h"}, {"stale_after", "1h"}});
	x.worker_register("Y", {{"host", "host-y"}, {"lease_duration", "1h"}, {"stale_after", "1h"}});
	BeforeOutage b;
	// start is work from outside: flushed, and with it everything before.
	b.id = x.start("fence", json::object(), json::object()).instance_id;
	Task t1 = claim_one(x, "X");
	b.t1_epoch = t1.epoch;
	EXPECT_EQ(t1.state, "T1");
	EXPECT_EQ(x.complete(b.id, t1.epoch, json{{"from", "X", "step", "T1"}}), "ready");
	Task t2 = claim_one(x, "X");
	EXPECT_EQ(t2.state, "T2");
	b.t2_epoch = t2.epoch;
	return b;
}

// After the outage: the claims are gone (otherwise this test proves
// nothing), Y runs T1 again and fails it, claims the retry, and X's late
// report with its T2 epoch must be refused without changing anything.
void y_then_late_x(Store &y, Store &x_again, const BeforeOutage &b) {
	json inst = y.get_instance(b.id);
	ASSERT_EQ(inst.at("status"), "ready") << "the outage did not take the claims back: " << inst.dump();
	ASSERT_EQ(inst.at("state"), "T1") << inst.dump();

	Task y1 = claim_one(y, "Y");
	EXPECT_EQ(y1.state, "T1");
	EXPECT_EQ(y.fail(b.id, y1.epoch, "Boom", "Y's run of T1 failed"), "ready");
	y.set_test_clock(std::string(kT10));
	Task y2 = claim_one(y, "Y");
	EXPECT_EQ(y2.state, "T1");
	EXPECT_EQ(y2.attempt, 1);
	std::printf("epochs: X T1 %lld, X T2 %lld; after the outage Y T1 %lld, Y retry %lld\n",
				static_cast<long long>(b.t1_epoch), static_cast<long long>(b.t2_epoch),
				static_cast<long long>(y1.epoch), static_cast<long long>(y2.epoch));

	try {
		std::string st = x_again.complete(b.id, b.t2_epoch, json{{"from", "X", "step", "T2"}});
		ADD_FAILURE() << "X's late report of T2 (epoch " << b.t2_epoch << ") was accepted into Y's lease of T1 (epoch "
					  << y2.epoch << "): status " << st;
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "RC004") << e.what();
	}
	// Nothing changed: Y still holds T1 under its epoch, no success recorded.
	inst = y.get_instance(b.id);
	EXPECT_EQ(inst.at("status"), "running") << inst.dump();
	EXPECT_EQ(inst.at("state"), "T1") << inst.dump();
	EXPECT_EQ(inst.at("lease_owner"), "Y") << inst.dump();
	EXPECT_EQ(inst.at("lease_epoch"), y2.epoch) << inst.dump();
	for (const json &h : y.history(b.id))
		EXPECT_NE(h.at("event"), "task_succeeded") << "a success was recorded: " << h.dump();
	// and Y's own report is the one that counts
	EXPECT_EQ(y.complete(b.id, y2.epoch, json{{"from", "Y"}}), "ready");
	EXPECT_EQ(y.get_instance(b.id).at("state"), "T2");
}

// ---- SQLite: a VFS that remembers each file as of its last sync --------------

std::mutex g_synced_mutex;
std::string g_watched_dir;							// only files in here are copied
std::map<std::string, std::string> g_synced;		// path -> content at its last sync

void install_remembering_vfs() {
	install_sync_vfs(
		{[](sqlite3_file *f, const sqlite3_io_methods *real, const std::string &path) {
			 {
				 std::lock_guard<std::mutex> lock(g_synced_mutex);
				 if (g_watched_dir.empty() || path.rfind(g_watched_dir, 0) != 0) return;
			 }
			 sqlite3_int64 size = 0;
			 if (real->xFileSize(f, &size) != SQLITE_OK) return;
			 std::string content(static_cast<size_t>(size), '\0');
			 if (size > 0 && real->xRead(f, content.data(), static_cast<int>(size), 0) != SQLITE_OK) return;
			 std::lock_guard<std::mutex> lock(g_synced_mutex);
			 g_synced[path] = std::move(content);
		 },
		 // A deleted file stays deleted: SQLite deletes a rollback journal to
		 // commit (here: the switch to WAL mode when the file is created).
		 [](const std::string &path) {
			 std::lock_guard<std::mutex> lock(g_synced_mutex);
			 g_synced.erase(path);
		 }});
}

// A folder whose files the VFS remembers ("live") and one for what a power
// cut leaves of them ("after"), under a fresh temporary folder.
struct PowerCutDirs {
	std::filesystem::path live, after;
};
PowerCutDirs power_cut_dirs(const std::string &prefix) {
	install_remembering_vfs();
	auto base = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
	std::filesystem::remove_all(base);
	PowerCutDirs d{base / "live", base / "after"};
	std::filesystem::create_directories(d.live);
	std::lock_guard<std::mutex> lock(g_synced_mutex);
	g_watched_dir = d.live.string();
	return d;
}

// Writes into `to` the files of `from` as they were at their last sync (a
// file never synced is absent, as it may be after a power cut).
void power_cut(const std::filesystem::path &from, const std::filesystem::path &to) {
	std::filesystem::create_directories(to);
	std::lock_guard<std::mutex> lock(g_synced_mutex);
	for (auto &[path, content] : g_synced) {
		std::filesystem::path p(path);
		if (p.parent_path() != from) continue;
		std::ofstream out(to / p.filename(), std::ios::binary);
		out.write(content.data(), static_cast<std::streamsize>(content.size()));
	}
}

TEST(SqliteFencing, AnEpochLostToAPowerCutIsNeverHandedOutAgain) {
	const auto [live, after] = power_cut_dirs("genroc-fence-");
	auto x = at_t0(open_sqlite_store((live / "g.db").string()));
	BeforeOutage b = x_runs_ahead(*x);
	power_cut(live, after);
	auto y = at_t0(open_sqlite_store((after / "g.db").string()));
	auto x_again = at_t0(open_sqlite_store((after / "g.db").string()));
	y_then_late_x(*y, *x_again, b);
	y.reset();
	x_again.reset();
	x.reset();
	std::filesystem::remove_all(live.parent_path());
}

// ---- PostgreSQL: WAL kept in shared memory, then a crash ------------------

const char *kHeldWal =
	"autovacuum = off\n"
	"wal_level = minimal\n"
	"max_wal_senders = 0\n"
	"wal_buffers = 16MB\n"
	"checkpoint_timeout = 1d\n"
	"max_wal_size = 10GB\n"
	"restart_after_crash = on\n";

std::string one_value(PGconn *c, const char *sql) {
	PGresult *r = PQexec(c, sql);
	std::string v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
	PQclear(r);
	return v;
}

// Runs `before` on a store of X with the WAL writer, background writer and
// checkpointer stopped, crashes the server, and returns a store of the
// restarted server (null when it did not come back).
std::unique_ptr<Store> pg_crash_after(OwnCluster &cluster, const std::function<void(Store &)> &warm,
									  const std::function<void(Store &)> &before) {
	PGconn *admin = PQconnectdb(cluster.url().c_str());
	if (PQstatus(admin) != CONNECTION_OK) {
		ADD_FAILURE() << PQerrorMessage(admin);
		PQfinish(admin);
		return nullptr;
	}
	auto pid_of = [&](const char *type) {
		return std::atoi(one_value(admin, (std::string("SELECT pid FROM pg_stat_activity WHERE backend_type = '") +
										  type + "'").c_str())
							 .c_str());
	};
	const int walwriter = pid_of("walwriter"), bgwriter = pid_of("background writer"),
			  checkpointer = pid_of("checkpointer");
	if (walwriter <= 0 || bgwriter <= 0 || checkpointer <= 0) {
		ADD_FAILURE() << "cannot find the WAL writer, background writer and checkpointer";
		PQfinish(admin);
		return nullptr;
	}

	auto x = at_t0(open_pg_store(cluster.url()));
	warm(*x);  // the catalog is warm before the writers stop
	// From here on nothing writes WAL out of wal_buffers but a flushed commit.
	// Each must be stopped in its idle wait: one stopped while it writes WAL
	// holds WALWriteLock, and every later flush waits on it forever.
	const std::string idle =
		"SELECT count(*) FROM pg_stat_activity WHERE pid IN (" + std::to_string(walwriter) + ", " +
		std::to_string(bgwriter) + ", " + std::to_string(checkpointer) +
		") AND wait_event IN ('WalWriterMain', 'BgWriterMain', 'BgWriterHibernate', 'CheckpointerMain')";
	bool stopped_idle = false;
	for (int attempt = 0; attempt < 200 && !stopped_idle; attempt++) {
		for (int pid : {walwriter, bgwriter, checkpointer})
			if (::kill(pid, SIGSTOP) != 0) ADD_FAILURE() << "cannot stop " << pid;
		stopped_idle = one_value(admin, idle.c_str()) == "3";
		if (!stopped_idle) {
			for (int pid : {walwriter, bgwriter, checkpointer}) ::kill(pid, SIGCONT);
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		}
	}
	PQfinish(admin);
	if (!stopped_idle) {
		ADD_FAILURE() << "the WAL writer, background writer and checkpointer were never idle together";
		for (int pid : {walwriter, bgwriter, checkpointer}) ::kill(pid, SIGKILL);
		return nullptr;
	}
	before(*x);
	// The crash: the postmaster sees its WAL writer die, kills every backend
	// and recovers from the WAL on disk.  (The stopped ones get SIGKILL too,
	// rather than waiting out the postmaster's SIGQUIT grace.)
	for (int pid : {walwriter, bgwriter, checkpointer}) ::kill(pid, SIGKILL);
	x.reset();

	std::unique_ptr<Store> y;
	for (int i = 0; i < 600 && !y; i++) {
		try {
			auto s = open_pg_store(cluster.url());
			if (s->ping()) y = std::move(s);
		} catch (const Error &) {
		}
		if (!y) std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	if (!y) ADD_FAILURE() << "PostgreSQL did not come back after the crash";
	return y ? at_t0(std::move(y)) : nullptr;
}

#define OWN_CLUSTER(name)                                                     \
	OwnCluster name(kHeldWal);                                                \
	if (!name.ok()) {                                                         \
		if (std::getenv("GENROC_TEST_REQUIRE_PG")) FAIL() << name.error();    \
		GTEST_SKIP() << name.error();                                         \
	}

TEST(PgFencing, AnEpochLostToACrashIsNeverHandedOutAgain) {
	OWN_CLUSTER(cluster);
	BeforeOutage b;
	auto y = pg_crash_after(
		cluster, [](Store &x) { x.define("fence", kTwoSteps); }, [&](Store &x) { b = x_runs_ahead(x); });
	ASSERT_TRUE(y);
	auto x_again = at_t0(open_pg_store(cluster.url()));
	y_then_late_x(*y, *x_again, b);
}

// ---- an acknowledged OnlyOnce result survives the outage -----------------
//
// At essential the claim of an OnlyOnce task is flushed, and so must be its
// report: otherwise the outage takes the success back, the task is found
// running with nobody holding it, and it ends only_once.interrupted although
// it succeeded (and its effect happened).

const json kOnlyOnceThenPlain = json::parse(R"({"StartAt":"Charge","States":{
	"Charge":{"Type":"Task","Resource":"handler:h","OnlyOnce":true,"Next":"Ship"},
	"Ship":{"Type":"Task","Resource":"handler:h","End":true}}})");

int64_t charge_acknowledged(Store &x) {
	x.define("charge", kOnlyOnceThenPlain);
	x.worker_register("X", {{"host", "host-x"}, {"lease_duration", "1h"}, {"stale_after", "1h"}});
	int64_t id = x.start("charge", json::object(), json::object()).instance_id;
	Task t = claim_one(x, "X");
	EXPECT_TRUE(t.only_once);
	EXPECT_EQ(x.complete(id, t.epoch, json{{"charged", true}}), "ready");	// acknowledged
	return id;
}

void charge_still_succeeded(Store &y, int64_t id) {
	json inst = y.get_instance(id);
	EXPECT_EQ(inst.at("state"), "Ship") << "the acknowledged OnlyOnce success was lost: " << inst.dump();
	EXPECT_EQ(inst.at("status"), "ready") << inst.dump();
	// and nothing turns it into only_once.interrupted later
	y.set_test_clock(std::string("2030-01-02T00:00:00Z"));
	y.tick(100);
	inst = y.get_instance(id);
	EXPECT_NE(inst.value("error", json()).dump(), "\"only_once.interrupted\"") << inst.dump();
	EXPECT_EQ(inst.at("state"), "Ship") << inst.dump();
}

TEST(PgOnlyOnce, AnAcknowledgedSuccessSurvivesACrash) {
	OWN_CLUSTER(cluster);
	int64_t id = 0;
	auto y = pg_crash_after(
		cluster, [](Store &x) { x.define("warm", kTwoSteps); }, [&](Store &x) { id = charge_acknowledged(x); });
	ASSERT_TRUE(y);
	charge_still_succeeded(*y, id);
}

TEST(SqliteOnlyOnce, AnAcknowledgedSuccessSurvivesAPowerCut) {
	const auto [live, after] = power_cut_dirs("genroc-oo-");
	auto x = at_t0(open_sqlite_store((live / "g.db").string()));
	int64_t id = charge_acknowledged(*x);
	power_cut(live, after);
	{
		auto y = at_t0(open_sqlite_store((after / "g.db").string()));
		charge_still_succeeded(*y, id);
	}
	x.reset();
	std::filesystem::remove_all(live.parent_path());
}

}  // namespace
}  // namespace genroc::durability_test
