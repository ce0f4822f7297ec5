// sqlite_file_test.cpp — what only the SQLite shim has: the file itself.
// Reopening keeps everything, a file of an older schema version is brought
// up to date, another schema version is refused, a file that is not a
// database is refused, several processes share one file, the files are
// created 0600, a symbolic link in place of the file is refused, the worker
// lock files are 0600 and never followed through a link, and a read-only
// file is read by a read-only store.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "sqlite_schema.hpp"
#include "sqlite_store.hpp"

namespace genroc {
namespace {

class SqliteFile : public ::testing::Test {
  protected:
	void SetUp() override {
		path_ = (std::filesystem::temp_directory_path() /
				 ("genroc-sqlite-file-" + std::to_string(getpid()) + "-" +
				  ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
					.string();
		remove_files();
	}
	void TearDown() override { remove_files(); }
	void remove_files() {
		for (const char *s : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + s);
	}
	std::string path_;
};

const json kJob = json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})");

TEST_F(SqliteFile, ReopeningKeepsDefinitionsInstancesAndLeases) {
	int64_t id, epoch;
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:00Z");
		s->define("job", kJob);
		id = s->start("job", {{"k", 1}}, json::object()).instance_id;
		s->worker_register("w1", json::object());
		auto t = s->claim("w1", {"default"}, 1);
		ASSERT_EQ(t.size(), 1u);
		epoch = t[0].epoch;
	}
	auto s = open_sqlite_store(path_);
	s->set_test_clock("2030-01-01T00:00:01Z");
	json inst = s->get_instance(id);
	EXPECT_EQ(inst.at("status"), "running");
	EXPECT_EQ(inst.at("lease_owner"), "w1");
	EXPECT_EQ(inst.at("input"), json({{"k", 1}}));
	EXPECT_EQ(s->define("job", kJob).is_new, false);
	EXPECT_EQ(inst.at("lease_epoch"), epoch);
	EXPECT_EQ(s->complete(id, epoch, "ok"), "succeeded");
}

TEST_F(SqliteFile, AnotherSchemaVersionIsRefused) {
	{
		auto s = open_sqlite_store(path_);
	}
	sqlite3 *db = nullptr;
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
			  SQLITE_OK);
	sqlite3_close(db);
	try {
		open_sqlite_store(path_);
		FAIL() << "opened a file of schema version 99";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "55000");
		EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos) << e.what();
	}
}

// Version 1 had no partition_rate_limit (2) and no tokens (3): both are
// added on open, and what the file held is kept.
TEST_F(SqliteFile, AVersion1FileIsBroughtUpToDate) {
	int64_t id;
	{
		auto s = open_sqlite_store(path_);
		s->queue_set("default", {{"rate_limit", {{"count", 5}, {"period", "1m"}}}});
		s->define("job", kJob);
		id = s->start("job", json::object(), json::object()).instance_id;
	}
	sqlite3 *db = nullptr;
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db,
						   "DROP INDEX queue_starts_partition;"
						   "ALTER TABLE queue_starts DROP COLUMN partition_key;"
						   "ALTER TABLE queues DROP COLUMN partition_rate_limit;"
						   "ALTER TABLE queues DROP COLUMN partition_rate_period_ms;"
						   "DROP TABLE tokens;"
						   "ALTER TABLE workers DROP COLUMN session_pid;"
						   "ALTER TABLE workers DROP COLUMN drain_requested_at;"
						   "DROP TABLE tickers;"
						   "ALTER TABLE instances DROP COLUMN variables;"
						   "ALTER TABLE definitions DROP COLUMN source;"
						   "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
						   nullptr, nullptr, nullptr),
			  SQLITE_OK)
		<< sqlite3_errmsg(db);
	sqlite3_close(db);
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:00Z");
		EXPECT_EQ(s->get_instance(id).at("status"), "ready");
		EXPECT_EQ(s->list_queues().at(0).at("rate_limit"), 5);
		json q = s->queue_set("default", {{"partition_concurrency", 5},
										  {"rate_limit", {{"count", 5}, {"period", "1m"}}},
										  {"partition_rate_limit", {{"count", 1}, {"period", "1m"}}}});
		EXPECT_EQ(q.at("partition_rate_limit"), 1);
		for (int i = 0; i < 2; i++) s->start("job", json::object(), {{"partition_key", "p"}});
		s->worker_register("w1", json::object());
		// the keyless instance from before and one of partition p
		EXPECT_EQ(s->claim("w1", {"default"}, 5).size(), 2u);
		json t = s->token_create("w", {"worker"}, "cli", std::nullopt);
		EXPECT_EQ(s->token_verify(t.at("token")).at("name"), "w");
		s->tick(10);	// 4 -> 5: who ticks
		EXPECT_EQ(s->tickers().size(), 1u);
		// 5 -> 6: the variables of an instance (ASL Assign)
		s->define("vars", json::parse(R"({"StartAt":"A","States":{
		    "A":{"Type":"Pass","Assign":{"v":7},"Next":"B"},
		    "B":{"Type":"Pass","Parameters":{"v.$":"$v"},"End":true}}})"));
		EXPECT_EQ(s->get_instance(s->start("vars", json::object(), json::object()).instance_id)
					  .at("output"),
				  json({{"v", 7}}));
		EXPECT_EQ(s->worker_drain("w1").at("draining"), true);	// 6 -> 7: drain requests
		EXPECT_EQ(s->worker_heartbeat("w1"), json({{"drain", true}}));
		// 9 -> 10: a definition's text as written
		EXPECT_EQ(s->get_definition("job", std::nullopt).at("source"), nullptr);
		s->define("src", json::parse("{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}"),
				  std::string("{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}"));
		EXPECT_EQ(s->get_definition("src", std::nullopt).at("source"),
				  "{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}");
	}
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	sqlite3_stmt *st = nullptr;
	ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, nullptr),
			  SQLITE_OK);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	EXPECT_EQ(std::string(reinterpret_cast<const char *>(sqlite3_column_text(st, 0))),
			  std::to_string(genroc::sqlite::SCHEMA_VERSION));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

namespace {
// The first row's first column of sql, as text ("" when none).
std::string one_text(sqlite3 *db, const char *sql) {
	sqlite3_stmt *st = nullptr;
	if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return "error: " + std::string(sqlite3_errmsg(db));
	std::string out;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		out = reinterpret_cast<const char *>(sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}
}  // namespace

// Version 8 remade the instances table with the large values last: a
// version 7 file (fanout after input, as then) gets the new column order
// and keeps its rows, their log (whose ON DELETE CASCADE would have emptied
// it, had the old table been dropped with foreign keys on), a Map's parent
// and children, the indexes, and the AUTOINCREMENT counter (the id of a
// deleted newest instance is not given again).
TEST_F(SqliteFile, AVersion7FileGetsTheLargeValuesLast) {
	const json map = json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,
	    "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}},
	    "End":true}}})");
	int64_t done, parent, gone;
	size_t done_log = 0;
	std::string indexes;
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:00Z");
		s->define("job", kJob);
		s->define("map", map);
		s->worker_register("w1", json::object());
		done = s->start("job", {{"k", 1}}, json::object()).instance_id;
		auto t = s->claim("w1", {"default"}, 1);
		ASSERT_EQ(t.size(), 1u);
		EXPECT_EQ(s->complete(t[0].instance_id, t[0].epoch, json({{"r", 2}})), "succeeded");
		parent = s->start("map", json::array({1, 2}), json::object()).instance_id;
		gone = s->start("job", json::object(), json::object()).instance_id;
		done_log = s->history(done).size();
		EXPECT_GE(done_log, 4u);
	}
	sqlite3 *db = nullptr;
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	indexes = one_text(db, "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master "
						   "WHERE type = 'index' AND tbl_name = 'instances' ORDER BY name)");
	const std::string fanout = one_text(db, ("SELECT fanout FROM instances WHERE id = " + std::to_string(parent)).c_str());
	ASSERT_FALSE(fanout.empty());
	// version 7's order for the column that matters here: fanout after input
	ASSERT_EQ(sqlite3_exec(db,
						   ("ALTER TABLE instances DROP COLUMN fanout;"
							"ALTER TABLE instances ADD COLUMN fanout TEXT;"
							"UPDATE instances SET fanout = '" + fanout + "' WHERE id = " + std::to_string(parent) + ";"
							"DELETE FROM log WHERE instance_id = " + std::to_string(gone) + ";"
							"DELETE FROM instances WHERE id = " + std::to_string(gone) + ";"
							"ALTER TABLE definitions DROP COLUMN source;"
							"UPDATE meta SET value = '7' WHERE key = 'schema_version'")
							   .c_str(),
						   nullptr, nullptr, nullptr),
			  SQLITE_OK)
		<< sqlite3_errmsg(db);
	EXPECT_LT(std::stoi(one_text(db, "SELECT cid FROM pragma_table_info('instances') WHERE name = 'input'")),
			  std::stoi(one_text(db, "SELECT cid FROM pragma_table_info('instances') WHERE name = 'fanout'")));
	const std::string log_rows = one_text(db, "SELECT count(*) FROM log");
	sqlite3_close(db);
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:01Z");
		EXPECT_EQ(s->get_instance(done).at("output"), json({{"r", 2}}));
		EXPECT_EQ(s->history(done).size(), done_log);
		EXPECT_GT(s->start("job", json::object(), json::object()).instance_id, gone);
		// the Map goes on from where it stood: its two items one after the other
		for (int i = 0; i < 2; i++) {
			auto t = s->claim("w1", {"default"}, 5);
			ASSERT_GE(t.size(), 1u);
			for (auto &task : t)
				if (task.state == "T") s->complete(task.instance_id, task.epoch, task.input);
		}
		EXPECT_EQ(s->get_instance(parent).at("status"), "succeeded");
		EXPECT_EQ(s->get_instance(parent).at("output"), json::array({1, 2}));
	}
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	EXPECT_EQ(one_text(db, "SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(genroc::sqlite::SCHEMA_VERSION));
	const int input_at = std::stoi(one_text(db, "SELECT cid FROM pragma_table_info('instances') WHERE name = 'input'"));
	for (const char *hot : {"status", "wait_kind", "fanout", "parent_id", "lease_epoch"})
		EXPECT_LT(std::stoi(one_text(db, ("SELECT cid FROM pragma_table_info('instances') WHERE name = '" +
										  std::string(hot) + "'")
											 .c_str())),
				  input_at)
			<< hot;
	EXPECT_EQ(one_text(db, "SELECT count(*) FROM pragma_table_info('instances')"), "44");
	EXPECT_EQ(one_text(db, "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master "
						   "WHERE type = 'index' AND tbl_name = 'instances' ORDER BY name)"),
			  indexes);
	EXPECT_EQ(one_text(db, "SELECT count(*) FROM sqlite_master WHERE name = 'instances_old'"), "0");
	EXPECT_EQ(one_text(db, "SELECT count(*) FROM pragma_foreign_key_check"), "0");
	EXPECT_GE(std::stoll(one_text(db, "SELECT count(*) FROM log")), std::stoll(log_rows));
	sqlite3_close(db);
}

TEST_F(SqliteFile, AFileThatIsNotADatabaseIsRefused) {
	std::ofstream(path_) << "this is not a SQLite database, just some text that is long enough to look like a header\n";
	try {
		open_sqlite_store(path_);
		FAIL() << "opened a text file";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate.substr(0, 2), "08") << e.what();
	}
}

// Real processes, each with its own connection, claim from one file: every
// task goes to exactly one of them.
TEST_F(SqliteFile, SeveralProcessesShareOneFile) {
	constexpr int kTasks = 60, kProcs = 3;
	{
		auto s = open_sqlite_store(path_);
		s->define("job", kJob);
		for (int i = 0; i < kTasks; i++) s->start("job", json::object(), json::object());
	}
	std::vector<pid_t> pids;
	std::vector<std::string> outs;
	for (int p = 0; p < kProcs; p++) {
		outs.push_back(path_ + ".claims" + std::to_string(p));
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			int rc = 0;
			try {
				auto s = open_sqlite_store(path_);
				std::string w = "w" + std::to_string(p);
				s->worker_register(w, json::object());
				std::ofstream out(outs.back());
				for (;;) {
					auto tasks = s->claim(w, {"default"}, 2);
					if (tasks.empty()) break;
					for (auto &t : tasks) {
						out << t.instance_id << "\n";
						s->complete(t.instance_id, t.epoch, json::object());
					}
				}
			} catch (...) {
				rc = 1;
			}
			_exit(rc);
		}
		pids.push_back(pid);
	}
	for (pid_t pid : pids) {
		int st = 0;
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a claimer process failed";
	}
	std::multiset<int64_t> claimed;
	for (auto &o : outs) {
		std::ifstream in(o);
		int64_t id;
		while (in >> id) claimed.insert(id);
		std::filesystem::remove(o);
	}
	EXPECT_EQ(claimed.size(), static_cast<size_t>(kTasks));
	EXPECT_EQ(std::set<int64_t>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(kTasks));
	auto s = open_sqlite_store(path_);
	EXPECT_EQ(s->list_instances({{"status", "succeeded"}, {"limit", 1000}}).size(), static_cast<size_t>(kTasks));
}

// The file holds inputs, outputs and token hashes: genroc creates it 0600,
// and SQLite gives its -wal and -shm files the main file's mode.
TEST_F(SqliteFile, TheFilesAreCreatedReadableByTheOwnerOnly) {
	const mode_t old_umask = ::umask(0);	// the mode must not rely on the umask
	auto s = open_sqlite_store(path_);
	::umask(old_umask);
	s->define("job", kJob);
	s->start("job", json::object(), json::object());
	for (const char *suffix : {"", "-wal", "-shm"}) {
		struct stat st{};
		ASSERT_EQ(::stat((path_ + suffix).c_str(), &st), 0) << path_ << suffix << " is missing";
		EXPECT_EQ(st.st_mode & 0777, 0600u) << path_ << suffix;
	}
}

// Another user who may write the database's folder (a shared /tmp) plants
// a symbolic link where the file will be: genroc refuses the path, naming
// it (42501), whether the link is dangling (SQLite would create its target,
// 0644) or leads to a file (an empty victim would be overwritten with a
// database), read-only too; the target is left as it was.  A link in a
// folder of the path is the owner's choice and is followed.
TEST_F(SqliteFile, ASymlinkInPlaceOfTheDatabaseIsRefusedAndItsTargetUntouched) {
	const std::string target = path_ + ".target";
	struct Cleanup {
		std::vector<std::string> paths;
		~Cleanup() {
			for (auto &p : paths) std::filesystem::remove_all(p);
		}
	} cleanup{{target, path_ + ".dir", path_ + ".dirlink"}};
	auto refused = [&](bool read_only) {
		try {
			open_sqlite_store(path_, read_only);
			ADD_FAILURE() << "opened a database through a symbolic link (read_only " << read_only << ")";
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "42501") << e.what();
			EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
			EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
		}
	};
	// dangling: nothing is created at the target
	std::filesystem::create_symlink(target, path_);
	refused(false);
	refused(true);
	EXPECT_FALSE(std::filesystem::exists(target));
	EXPECT_FALSE(std::filesystem::exists(target + "-wal"));
	// to an empty file: it stays empty, with its mode
	std::ofstream(target).flush();
	::chmod(target.c_str(), 0644);
	refused(false);
	refused(true);
	struct stat st{};
	ASSERT_EQ(::stat(target.c_str(), &st), 0);
	EXPECT_EQ(st.st_size, 0);
	EXPECT_EQ(st.st_mode & 0777, 0644u);
	std::filesystem::remove(path_);

	// a linked folder: opened, and the file made 0600 in the real folder
	std::filesystem::create_directory(path_ + ".dir");
	std::filesystem::create_directory_symlink(path_ + ".dir", path_ + ".dirlink");
	const mode_t old_umask = ::umask(0);
	{
		auto s = open_sqlite_store(path_ + ".dirlink/genroc.db");
		s->define("job", kJob);
	}
	::umask(old_umask);
	ASSERT_EQ(::lstat((path_ + ".dir/genroc.db").c_str(), &st), 0);
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A registered worker's lock file is 0600 (another user who could open it
// could flock it and keep the worker from starting again), one left 0644
// is made 0600, and a link planted in its place is not followed.
TEST_F(SqliteFile, TheWorkerLockFileIsTheOwnersOnlyAndNoLinkIsFollowed) {
	auto lock_files = [&] {
		std::vector<std::string> found;
		const std::string prefix = std::filesystem::path(path_).filename().string() + "-worker-";
		for (auto &e : std::filesystem::directory_iterator(std::filesystem::path(path_).parent_path()))
			if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().string());
		return found;
	};
	const std::string target = path_ + ".lock-target";
	struct Cleanup {
		std::function<std::vector<std::string>()> list;
		std::string target;
		~Cleanup() {
			for (auto &p : list()) std::filesystem::remove(p);
			std::filesystem::remove(target);
		}
	} cleanup{lock_files, target};
	const mode_t old_umask = ::umask(0);
	{
		auto s = open_sqlite_store(path_);
		s->worker_register("w1", json::object());
		s->worker_stop("w1");
	}
	::umask(old_umask);
	auto files = lock_files();
	ASSERT_EQ(files.size(), 1u);
	const std::string lock = files[0];
	struct stat st{};
	ASSERT_EQ(::lstat(lock.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600u);

	// left 0644 (an older genroc): 0600 once a worker takes it again
	::chmod(lock.c_str(), 0644);
	{
		auto s = open_sqlite_store(path_);
		s->worker_register("w1", json::object());
		s->worker_stop("w1");
	}
	ASSERT_EQ(::lstat(lock.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600u);

	// a link in its place: not followed (the target is not made)
	std::filesystem::remove(lock);
	std::filesystem::create_symlink(target, lock);
	{
		auto s = open_sqlite_store(path_);
		s->worker_register("w1", json::object());
	}
	EXPECT_FALSE(std::filesystem::exists(target));
	ASSERT_EQ(::lstat(lock.c_str(), &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// A file the caller may read but not write: a store opened read-only reads
// it (genctl's listing commands), a write through it is 25006 naming the
// file, and nothing on disk changes.
TEST_F(SqliteFile, AReadOnlyStoreReadsAndRefusesWritesCleanly) {
	int64_t id;
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:00Z");
		s->define("job", kJob);
		id = s->start("job", {{"k", 1}}, json::object()).instance_id;
		s->worker_register("w1", json::object());
	}
	ASSERT_EQ(::chmod(path_.c_str(), 0444), 0);
	struct stat before{};
	ASSERT_EQ(::stat(path_.c_str(), &before), 0);
	{
		auto s = open_sqlite_store(path_, true);
		EXPECT_EQ(s->get_instance(id).at("input"), json({{"k", 1}}));
		EXPECT_EQ(s->list_definitions().size(), 1u);
		EXPECT_EQ(s->list_instances(json::object()).size(), 1u);
		EXPECT_FALSE(s->history(id).empty());
		EXPECT_EQ(s->list_workers().size(), 1u);
		EXPECT_FALSE(s->list_queues().empty());
		EXPECT_TRUE(s->token_list().empty());
		try {
			s->start("job", json::object(), json::object());
			FAIL() << "a read-only store wrote";
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "25006") << e.what();
			EXPECT_NE(std::string(e.what()).find("\"" + path_ + "\" is read-only"), std::string::npos) << e.what();
		}
	}
	struct stat after{};
	ASSERT_EQ(::stat(path_.c_str(), &after), 0);
	EXPECT_EQ(after.st_size, before.st_size);
	EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	ASSERT_EQ(::chmod(path_.c_str(), 0600), 0);
	// a missing file is not created by a read-only open
	std::filesystem::remove(path_);
	for (const char *suffix : {"-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
	try {
		open_sqlite_store(path_, true);
		FAIL() << "opened a missing file read-only";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "08006") << e.what();
	}
	EXPECT_FALSE(std::filesystem::exists(path_));
}

}  // namespace
}  // namespace genroc

namespace genroc {
namespace {

// The binary's process-wide setting (sqlite_process_setup): SQLite keeps no
// memory statistics, so no allocation of SQLite takes their mutex.  Each
// case runs in a child process with SQLite shut down first (a setting
// counts only before SQLite initializes).
int memory_used_after_a_start(bool setup, const std::string &path) {
	const pid_t pid = fork();
	if (pid == 0) {
		sqlite3_shutdown();
		if (setup) {
			if (!sqlite_process_setup()) _exit(3);
		} else if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1) != SQLITE_OK) {
			_exit(3);
		}
		{
			auto s = open_sqlite_store(path);
			s->define("job", kJob);
			s->start("job", json::object(), json::object());
			if (sqlite_process_setup()) _exit(4);	// SQLite is initialized: too late
			_exit(sqlite3_memory_used() > 0 ? 1 : 0);
		}
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST_F(SqliteFile, TheBinarysProcessSetupTurnsOffSqlitesMemoryStatistics) {
	EXPECT_EQ(memory_used_after_a_start(false, path_), 1) << "with statistics, SQLite counts its memory";
	remove_files();
	EXPECT_EQ(memory_used_after_a_start(true, path_), 0) << "3: refused; 4: accepted after SQLite initialized";
}

// Whether the statement's program builds a temporary b-tree (OpenEphemeral).
bool opens_ephemeral(sqlite3 *db, const std::string &sql) {
	sqlite3_stmt *st = nullptr;
	EXPECT_EQ(sqlite3_prepare_v2(db, ("EXPLAIN " + sql).c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
	bool found = false;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (std::string(reinterpret_cast<const char *>(sqlite3_column_text(st, 1))) == "OpenEphemeral") found = true;
	sqlite3_finalize(st);
	return found;
}

// The writes of a step, as the store's claim and apply_step make them.
const char *const kStepWrites[] = {
	"UPDATE instances SET status = 'running', lease_owner = 'w', updated_at = 1 WHERE id = 1",
	"UPDATE instances SET status = ?2, state = ?3, wait_kind = ?4, wait_until = NULL, updated_at = 1 WHERE id = ?1",
};

// Version 9 wrote the CHECKs on status and wait_kind as comparisons: an IN
// list of more than two values made SQLite build a temporary b-tree on
// every write that set either column.  A version 8 file (IN lists) gets the
// comparisons, keeps its rows, and a bad status is still refused.
TEST_F(SqliteFile, AVersion8FileGetsItsChecksWithoutInLists) {
	int64_t id;
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:00Z");
		s->define("job", kJob);
		id = s->start("job", {{"k", 1}}, json::object()).instance_id;
	}
	sqlite3 *db = nullptr;
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	for (const char *write : kStepWrites) EXPECT_FALSE(opens_ephemeral(db, write)) << write;
	// version 8's CHECKs, put back in the table's text
	const std::string table = one_text(db, "SELECT sql FROM sqlite_master WHERE name = 'instances'");
	std::string v8 = table;
	auto swap = [&](const std::string &from_word, const std::string &to_word, const std::string &in_list) {
		const size_t a = v8.find("CHECK (" + from_word);
		const size_t b = v8.find(to_word, a);
		ASSERT_NE(a, std::string::npos);
		ASSERT_NE(b, std::string::npos);
		v8.replace(a, b - a, "CHECK (" + in_list + ")");
	};
	swap("status =", ",\n\tstate ", "status IN ('queued', 'ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled')");
	swap("wait_kind =", ",\n\twait_until", "wait_kind IN ('timer', 'run_at', 'activity', 'children', 'pending', 'event')");
	ASSERT_NE(v8, table);
	sqlite3_stmt *st = nullptr;
	ASSERT_EQ(sqlite3_exec(db, "PRAGMA writable_schema = ON", nullptr, nullptr, nullptr), SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE sqlite_master SET sql = ?1 WHERE name = 'instances'", -1, &st, nullptr),
			  SQLITE_OK);
	sqlite3_bind_text(st, 1, v8.c_str(), -1, SQLITE_TRANSIENT);
	ASSERT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db);
	sqlite3_finalize(st);
	ASSERT_EQ(sqlite3_exec(db,
						   "ALTER TABLE definitions DROP COLUMN source;"
						   "UPDATE meta SET value = '8' WHERE key = 'schema_version'",
						   nullptr, nullptr, nullptr),
			  SQLITE_OK);
	sqlite3_close(db);
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	for (const char *write : kStepWrites) EXPECT_TRUE(opens_ephemeral(db, write)) << "version 8: " << write;
	sqlite3_close(db);
	{
		auto s = open_sqlite_store(path_);
		s->set_test_clock("2030-01-01T00:00:01Z");
		EXPECT_EQ(s->get_instance(id).at("input"), json({{"k", 1}}));
		s->worker_register("w1", json::object());
		auto t = s->claim("w1", {"default"}, 1);
		ASSERT_EQ(t.size(), 1u);
		EXPECT_EQ(s->complete(t[0].instance_id, t[0].epoch, "ok"), "succeeded");
	}
	ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
	EXPECT_EQ(one_text(db, "SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(genroc::sqlite::SCHEMA_VERSION));
	EXPECT_EQ(one_text(db, "SELECT sql FROM sqlite_master WHERE name = 'instances'"), table);
	for (const char *write : kStepWrites) EXPECT_FALSE(opens_ephemeral(db, write)) << "version 10: " << write;
	EXPECT_NE(sqlite3_exec(db, "UPDATE instances SET status = 'lost' WHERE id = 1", nullptr, nullptr, nullptr), SQLITE_OK);
	EXPECT_NE(std::string(sqlite3_errmsg(db)).find("CHECK constraint failed"), std::string::npos) << sqlite3_errmsg(db);
	EXPECT_NE(sqlite3_exec(db, "UPDATE instances SET wait_kind = 'nap' WHERE id = 1", nullptr, nullptr, nullptr), SQLITE_OK);
	EXPECT_EQ(sqlite3_exec(db, "UPDATE instances SET status = 'waiting', wait_kind = 'event' WHERE id = 1", nullptr,
						   nullptr, nullptr),
			  SQLITE_OK);
	sqlite3_close(db);
}

}  // namespace
}  // namespace genroc
