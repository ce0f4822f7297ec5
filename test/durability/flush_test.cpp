// flush_test.cpp — proof, on both stores, of which commits reach the disk
// before they are confirmed at each --durability level (DESIGN §4).
//
// SQLite: every file the store opens goes through a VFS that counts xSync
// calls (the WAL file's sync is the commit's flush); a commit flushed iff the
// count grew during the operation.
//
// PostgreSQL: a cluster of the test's own whose WAL writer does not flush by
// itself within the test (wal_writer_delay 10s, no byte threshold, no
// background writer, no autovacuum, no checkpoints), and right after each
// operation a second connection compares pg_current_wal_flush_lsn() with
// pg_current_wal_insert_lsn(): the operation's commit record is the last
// WAL written, so it was flushed iff the flush position reached the insert
// position.  The one thing that could still flush an unflushed commit is the
// WAL writer's own timer, at most once per wal_writer_delay: a sequence that
// saw an unexpected flush is run once more, right away, and must then match.
// A flush that is missing is never excused.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "sqlite_store.hpp"
#include "sync_vfs.hpp"
#include "store.hpp"

namespace genroc::durability_test {
namespace {

using json = nlohmann::json;

// ---- SQLite: a VFS that counts syncs ---------------------------------------

std::atomic<int> g_syncs{0};

void install_counting_vfs() {
	install_sync_vfs({[](sqlite3_file *, const sqlite3_io_methods *, const std::string &) { g_syncs++; }, nullptr});
}

// ---- the probes -------------------------------------------------------------

// Tells whether the commit of the operation just run was flushed.
class Probe {
  public:
	virtual ~Probe() = default;
	virtual void before() = 0;
	virtual bool flushed() = 0;
};

class SqliteProbe final : public Probe {
  public:
	void before() override { start_ = g_syncs.load(); }
	bool flushed() override { return g_syncs.load() > start_; }

  private:
	int start_ = 0;
};

class PgProbe final : public Probe {
  public:
	explicit PgProbe(const std::string &url) : conn_(PQconnectdb(url.c_str())) {}
	~PgProbe() override { PQfinish(conn_); }
	bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }
	void before() override {}
	bool flushed() override {
		// The gap between the two positions: 0 when flushed, or the size of a
		// page header when the commit ended right at a page end (the insert
		// position then points past the next page's header).  An unflushed
		// commit leaves at least its own record (40 bytes or more) unflushed.
		PGresult *r = PQexec(conn_,
							 "SELECT pg_current_wal_insert_lsn() - pg_current_wal_flush_lsn() <= 24");
		bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
		bool flushed = ok && PQgetvalue(r, 0, 0)[0] == 't';
		if (!ok) ADD_FAILURE() << "probe query failed: " << PQerrorMessage(conn_);
		PQclear(r);
		return flushed;
	}

  private:
	PGconn *conn_;
};

// ---- the operations and what each level flushes ------------------------------

struct Expect {
	const char *op;
	bool none, essential, terminal, strict;
	bool at(DurabilityLevel l) const {
		switch (l) {
			case DurabilityLevel::none: return none;
			case DurabilityLevel::essential: return essential;
			case DurabilityLevel::terminal: return terminal;
			case DurabilityLevel::strict: return strict;
		}
		return false;
	}
};

// The table this test proves (docs/design.md §4).
const std::vector<Expect> kTable = {
	//  operation                    none   essential terminal strict
	{"define", false, false, false, true},
	{"worker_register", false, false, false, true},
	{"start", false, true, true, true},
	{"claim (plain task)", false, false, false, true},
	{"complete (instance goes on)", false, false, false, true},
	{"complete (instance ends)", false, false, true, true},
	{"claim (OnlyOnce task)", false, true, true, true},
	{"complete (OnlyOnce task, instance goes on)", false, true, true, true},
	{"claim_activity", false, false, false, true},
	{"activity_succeed", false, true, true, true},
	{"cancel", false, true, true, true},
	{"worker_heartbeat", false, false, false, true},
};

const json kTwoTasks = json::parse(R"({"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
	"B":{"Type":"Task","Resource":"handler:h","End":true}}})");
// An OnlyOnce task followed by a plain one: its complete does not end the
// instance, so only the OnlyOnce rule can make that commit flush.
const json kOnlyOnce = json::parse(R"({"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:h","OnlyOnce":true,"Next":"B"},
	"B":{"Type":"Task","Resource":"handler:h","End":true}}})");
const json kActivity = json::parse(R"({"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"activity:approve","End":true}}})");

// Runs every operation of kTable once on `store` and returns, per operation,
// whether its commit was flushed.  `tag` keeps names unique per run.
std::map<std::string, bool> run_sequence(Store &store, Probe &probe, const std::string &tag) {
	std::map<std::string, bool> seen;
	auto measure = [&](const char *op, auto &&fn) {
		probe.before();
		fn();
		seen[op] = probe.flushed();
	};
	const std::string two = "two-" + tag, oo = "oo-" + tag, act = "act-" + tag, w = "w-" + tag;
	measure("define", [&] { store.define(two, kTwoTasks); });
	store.define(oo, kOnlyOnce);
	store.define(act, kActivity);
	measure("worker_register", [&] { store.worker_register(w, json::object()); });

	StartResult s1;
	measure("start", [&] { s1 = store.start(two, json::object(), json::object()); });
	std::vector<Task> t;
	measure("claim (plain task)", [&] { t = store.claim(w, {"default"}, 1); });
	if (t.size() != 1 || t[0].only_once) {
		ADD_FAILURE() << "expected one plain task";
		return seen;
	}
	std::string st;
	measure("complete (instance goes on)", [&] { st = store.complete(t[0].instance_id, t[0].epoch, json::object()); });
	EXPECT_EQ(st, "ready");
	t = store.claim(w, {"default"}, 1);
	EXPECT_EQ(t.size(), 1u);
	if (t.size() != 1) return seen;
	measure("complete (instance ends)", [&] { st = store.complete(t[0].instance_id, t[0].epoch, json::object()); });
	EXPECT_EQ(st, "succeeded");

	store.start(oo, json::object(), json::object());
	measure("claim (OnlyOnce task)", [&] { t = store.claim(w, {"default"}, 1); });
	EXPECT_TRUE(t.size() == 1 && t[0].only_once);
	if (t.size() != 1) return seen;
	measure("complete (OnlyOnce task, instance goes on)",
			[&] { st = store.complete(t[0].instance_id, t[0].epoch, json::object()); });
	EXPECT_EQ(st, "ready");
	// its plain task B, so nothing is left for the next sequence to claim
	t = store.claim(w, {"default"}, 1);
	if (t.size() != 1 || t[0].only_once) {
		ADD_FAILURE() << "expected the OnlyOnce process's plain task";
		return seen;
	}
	EXPECT_EQ(store.complete(t[0].instance_id, t[0].epoch, json::object()), "succeeded");

	store.start(act, json::object(), json::object());
	std::vector<ActivityTask> a;
	measure("claim_activity", [&] { a = store.claim_activity("approve", w, 1); });
	EXPECT_EQ(a.size(), 1u);
	if (a.size() != 1) return seen;
	measure("activity_succeed", [&] { st = store.activity_succeed(a[0].token, json::object()); });
	EXPECT_EQ(st, "succeeded");

	auto s4 = store.start(two, json::object(), json::object());
	measure("cancel", [&] { store.cancel(s4.instance_id); });
	measure("worker_heartbeat", [&] { store.worker_heartbeat(w); });
	return seen;
}

// What differs from kTable: "op: expected X, flushed Y" lines; and whether a
// missing flush is among them (never excused).
std::vector<std::string> mismatches(const std::map<std::string, bool> &seen, DurabilityLevel level,
									bool *missing_flush) {
	std::vector<std::string> out;
	*missing_flush = false;
	for (const auto &e : kTable) {
		auto it = seen.find(e.op);
		if (it == seen.end()) {
			out.push_back(std::string(e.op) + ": not run");
			*missing_flush = true;
			continue;
		}
		if (it->second != e.at(level)) {
			out.push_back(std::string(e.op) + ": expected " + (e.at(level) ? "flushed" : "not flushed") +
						  ", was " + (it->second ? "flushed" : "not flushed"));
			if (e.at(level)) *missing_flush = true;
		}
	}
	return out;
}

const std::vector<DurabilityLevel> kLevels = {DurabilityLevel::none, DurabilityLevel::essential,
											  DurabilityLevel::terminal, DurabilityLevel::strict};

std::string joined(const std::vector<std::string> &lines) {
	std::string s;
	for (auto &l : lines) s += "  " + l + "\n";
	return s;
}

// ---- SQLite -----------------------------------------------------------------

TEST(SqliteDurability, EachLevelFlushesExactlyItsCommits) {
	install_counting_vfs();
	auto dir = std::filesystem::temp_directory_path() / ("genroc-dur-" + std::to_string(::getpid()));
	std::filesystem::create_directories(dir);
	for (auto level : kLevels) {
		SCOPED_TRACE(durability_name(level));
		auto path = (dir / (std::string(durability_name(level)) + ".db")).string();
		auto store = open_sqlite_store(path);
		store->set_durability(level);
		EXPECT_EQ(store->durability(), level);
		SqliteProbe probe;
		bool missing = false;
		auto diff = mismatches(run_sequence(*store, probe, durability_name(level)), level, &missing);
		EXPECT_TRUE(diff.empty()) << "at " << durability_name(level) << ":\n" << joined(diff);
	}
	std::filesystem::remove_all(dir);
}

TEST(SqliteDurability, DefaultIsEssentialAndCommitDelayIsRefused) {
	auto dir = std::filesystem::temp_directory_path() / ("genroc-dur-d-" + std::to_string(::getpid()));
	std::filesystem::create_directories(dir);
	auto store = open_sqlite_store((dir / "d.db").string());
	EXPECT_EQ(store->durability(), DurabilityLevel::essential);
	try {
		store->set_commit_delay(10);
		ADD_FAILURE() << "set_commit_delay succeeded on SQLite";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "0A000");
	}
	std::filesystem::remove_all(dir);
}

// ---- PostgreSQL ---------------------------------------------------------------

const char *kQuietWal =
	"wal_writer_delay = 10000ms\n"
	// the largest value: the WAL writer flushes on its timer only (0 would
	// make it flush whatever it writes)
	"wal_writer_flush_after = 2147483647\n"
	"autovacuum = off\n"
	// with wal_level replica the background writer logs a running-xacts
	// snapshot every 15 s: an unflushed record that can land between a
	// flushed commit and the probe.  minimal logs none.
	"wal_level = minimal\n"
	"max_wal_senders = 0\n"
	"bgwriter_lru_maxpages = 0\n"
	"checkpoint_timeout = 1d\n"
	"max_wal_size = 10GB\n"
	"wal_buffers = 16MB\n";

class PgDurability : public ::testing::Test {
  protected:
	static void SetUpTestSuite() {
		cluster_ = new OwnCluster(kQuietWal);
	}
	static void TearDownTestSuite() {
		delete cluster_;
		cluster_ = nullptr;
	}
	void SetUp() override {
		if (!cluster_->ok()) {
			if (std::getenv("GENROC_TEST_REQUIRE_PG")) FAIL() << cluster_->error();
			GTEST_SKIP() << cluster_->error();
		}
	}
	static OwnCluster *cluster_;
};
OwnCluster *PgDurability::cluster_ = nullptr;

TEST_F(PgDurability, EachLevelFlushesExactlyItsCommits) {
	for (auto level : kLevels) {
		SCOPED_TRACE(durability_name(level));
		auto store = open_pg_store(cluster_->url());
		store->set_durability(level);
		EXPECT_EQ(store->durability(), level);
		PgProbe probe(cluster_->url());
		ASSERT_TRUE(probe.ok());
		std::vector<std::string> diff;
		for (int run = 0; run < 2; run++) {
			bool missing = false;
			diff = mismatches(run_sequence(*store, probe, std::string(durability_name(level)) + std::to_string(run)),
							  level, &missing);
			if (diff.empty() || missing) break;
			// Only unexpected flushes: the WAL writer's timer may have fired once;
			// it cannot again within wal_writer_delay, so run again at once.
		}
		EXPECT_TRUE(diff.empty()) << "at " << durability_name(level) << ":\n" << joined(diff);
	}
}

// One transaction that does outside work and then ordinary work commits
// flushed: a later statement never takes back an earlier request.
TEST_F(PgDurability, ALaterStatementNeverDowngradesAFlush) {
	auto store = open_pg_store(cluster_->url());
	store->define("dg", kTwoTasks);
	store->worker_register("w-dg", json::object());
	PGconn *c = PQconnectdb(cluster_->url().c_str());
	ASSERT_EQ(PQstatus(c), CONNECTION_OK);
	auto q = [&](const char *sql) {
		PGresult *r = PQexec(c, sql);
		std::string v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) ? PQgetvalue(r, 0, 0) : "";
		if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
			ADD_FAILURE() << sql << ": " << PQerrorMessage(c);
		PQclear(r);
		return v;
	};
	// Flushed iff, after COMMIT, the flush position reached the insert
	// position this session saw just before it (past all of the transaction's
	// own records): WAL that others write afterwards cannot blur the answer.
	std::string before;
	auto commit = [&] {
		before = q("SELECT pg_current_wal_insert_lsn()");
		q("COMMIT");
	};
	auto flushed = [&] { return q(("SELECT pg_current_wal_flush_lsn() >= '" + before + "'::pg_lsn").c_str()) == "t"; };
	q("SET genroc.durability = 'essential'");
	for (int run = 0; run < 2; run++) {
		q("BEGIN");
		q("SELECT genroc.start('dg')");
		EXPECT_EQ(q("SELECT current_setting('synchronous_commit')"), "on");
		q("SELECT genroc.worker_heartbeat('w-dg')");
		EXPECT_EQ(q("SELECT current_setting('synchronous_commit')"), "on");
		commit();
		EXPECT_TRUE(flushed());
		// and the other way round: progress first, then outside work
		q("BEGIN");
		q("SELECT genroc.worker_heartbeat('w-dg')");
		EXPECT_EQ(q("SELECT current_setting('synchronous_commit')"), "off");
		q("SELECT genroc.start('dg')");
		commit();
		EXPECT_TRUE(flushed());
	}
	PQfinish(c);
}

TEST_F(PgDurability, CommitDelayNeedsThePrivilege) {
	// The cluster's user is a superuser: allowed.
	auto store = open_pg_store(cluster_->url());
	EXPECT_NO_THROW(store->set_commit_delay(50));
	// A worker role (docs/security.md "Roles and ownership") without the privilege:
	// refused with 42501 before anything is set.
	int rc = 0;
	shell("psql -X -q '" + cluster_->url() + "' -c \"DROP ROLE IF EXISTS plain; CREATE ROLE plain LOGIN "
		  "IN ROLE genroc_worker\" 2>&1", &rc);
	ASSERT_EQ(rc, 0);
	std::string plain_url = cluster_->url();
	plain_url.replace(plain_url.find("postgres@"), 9, "plain@");
	auto plain = open_pg_store(plain_url);
	try {
		plain->set_commit_delay(50);
		ADD_FAILURE() << "a role without the privilege set commit_delay";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "42501");
		EXPECT_NE(std::string(e.what()).find("commit_delay"), std::string::npos) << e.what();
	}
	EXPECT_THROW(plain->set_commit_delay(-1), Error);
	// GRANT SET ON PARAMETER is enough.
	shell("psql -X -q '" + cluster_->url() + "' -c 'GRANT SET ON PARAMETER commit_delay TO plain' 2>&1", &rc);
	ASSERT_EQ(rc, 0);
	auto granted = open_pg_store(plain_url);
	EXPECT_NO_THROW(granted->set_commit_delay(50));
	EXPECT_EQ(granted->durability(), DurabilityLevel::essential);
}

}  // namespace
}  // namespace genroc::durability_test
