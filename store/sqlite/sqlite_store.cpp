// sqlite_store.cpp — the engine on one SQLite file: SqliteStore is an
// EngineStore (store/engine_store.hpp: every genroc.* operation of the SQL
// API, the engine's) over this file's connection, and supplies what is its
// own: the transactions (one BEGIN IMMEDIATE per write, so several processes
// may share the file: SQLite lets one writer in at a time and busy_timeout
// makes the others wait), how a commit reaches the disk, the schema and its
// migrations, the test clock, the workers' lock files, and the routines the
// engine's STORE_* statements still reach here (store_call).
//
// Glossary
//   op        one Store method call = one transaction
//   stop      where the interpreter left the instance: a task (ready for a
//             worker, or parked for an activity worker), a timer, or the end
//   lease     lease_owner + lease_epoch + lease_expires on a running
//             instance; every claim draws a new random epoch (new_epoch),
//             complete/fail quote it
//   lapse     a lease that expired without renew: the task runs again (or,
//             OnlyOnce, fails with only_once.interrupted)
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>
#include <type_traits>

#include "admission.hpp"
#include "digest.hpp"
#include "engine/queue_rules.hpp"
#include "engine_store.hpp"
#include "report.hpp"
#include "log_payloads.hpp"
#include "steps.hpp"
#include "values.hpp"
#include "sqlite_db.hpp"
#include "sqlite_port.hpp"
#include "sqlite_schema.hpp"
#include "sqlite_store.hpp"

namespace genroc {
namespace {

using sqlite::Db;
using sqlite::Durability;
using sqlite::Query;

int64_t system_now_ms() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(
			   std::chrono::system_clock::now().time_since_epoch())
		.count();
}

std::string iso(int64_t ms) { return asl::format_time(ms); }

// A new lease epoch (genroc._fencing_epoch): random in 1 .. 2^63-1 and not
// `previous`.  A counter would hand the same epoch out again after a power
// loss took an unsynced claim (at essential a claim is not synced), and a
// worker still holding the lost lease could then report with it.
int64_t new_epoch(int64_t previous) {
	for (;;) {
		uint64_t bits = 0;
		if (RAND_bytes(reinterpret_cast<unsigned char *>(&bits), sizeof bits) != 1)
			throw Error("XX000", "could not generate a random lease epoch");
		const auto epoch = static_cast<int64_t>(bits & 0x7FFFFFFFFFFFFFFFULL);
		if (epoch != 0 && epoch != previous) return epoch;
	}
}

// sha256 of the text, as lowercase hex.
std::string sha256_hex(const std::string &text) {
	if (auto h = digest_hex(EVP_sha256(), text)) return *h;
	throw Error("XX000", "sha256: the digest failed");
}

// A timestamp in the forms PostgreSQL's timestamptz input takes for ISO
// dates: RFC 3339, a space instead of "T", no seconds, a zone as Z, +HH,
// +HHMM or +HH:MM, none (UTC, the session zone PgStore sets), or a date
// alone (its midnight, UTC).
bool parse_timestamp(const std::string &text, int64_t &ms) {
	static const std::regex re(
		R"(^\s*(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?\s*(?:([Zz])|([+-]\d{2})(?::?(\d{2}))?)?\s*$)");
	std::smatch m;
	// std::regex recurses per character: only texts of a timestamp's size
	// reach it (the longest form with spaces around is well under 64)
	if (text.size() > 64 || !std::regex_match(text, m, re)) return false;
	std::string rfc = m[1].str() + "T" + (m[2].matched ? m[2].str() : "00:00") + (m[3].matched ? m[3].str() : ":00");
	if (m[5].matched)
		rfc += m[5].str() + ":" + (m[6].matched ? m[6].str() : "00");
	else
		rfc += "Z";
	return asl::parse_time(rfc, ms);
}

// ---- the instance row ---------------------------------------------------

struct Inst {
	int64_t id = 0;
	int64_t definition_id = 0;
	std::string status;
	std::optional<std::string> state;
	json state_input, task_input;
	std::optional<std::string> resource;
	std::string queue;
	int64_t priority = 0;
	int64_t eligible_at = 0;
	std::optional<std::string> lease_owner;
	int64_t lease_epoch = 0;
	std::optional<int64_t> lease_expires;
	json retry_counts;
	int64_t attempt = 0, interruptions = 0;
	bool only_once = false;
	std::optional<int64_t> timeout_s, timeout_at, heartbeat_s, heartbeat_at;
	std::optional<std::string> wait_kind;
	std::optional<int64_t> wait_until;
	std::optional<std::string> activity, activity_token, activity_owner;
	json input;
	std::optional<std::string> name;
	int64_t created_at = 0;
	std::optional<int64_t> parent_id, root_id, child_index, child_gen;
	std::optional<std::string> scope;
	json fanout;
	std::optional<std::string> partition_key;
	json variables;	 // ASL variables (Assign); null: none

	bool ended() const { return status == "succeeded" || status == "failed" || status == "cancelled"; }
};

constexpr const char *INST_SELECT =
	"SELECT id, definition_id, status, state, state_input, task_input, resource, queue, priority, eligible_at, "
	"lease_owner, lease_epoch, lease_expires, retry_counts, attempt, interruptions, only_once, timeout_s, "
	"timeout_at, heartbeat_s, heartbeat_at, wait_kind, wait_until, activity, activity_token, activity_owner, "
	"input, name, created_at, parent_id, root_id, child_index, child_gen, scope, fanout, partition_key, "
	"variables FROM instances WHERE id = ?1";

Inst read_inst(const Query &q) {
	Inst i;
	i.id = q.i64(0);
	i.definition_id = q.i64(1);
	i.status = q.text(2);
	i.state = q.otext(3);
	i.state_input = q.js(4);
	i.task_input = q.js(5);
	i.resource = q.otext(6);
	i.queue = q.text(7);
	i.priority = q.i64(8);
	i.eligible_at = q.i64(9);
	i.lease_owner = q.otext(10);
	i.lease_epoch = q.i64(11);
	i.lease_expires = q.oi64(12);
	i.retry_counts = q.js(13);
	i.attempt = q.i64(14);
	i.interruptions = q.i64(15);
	i.only_once = q.i64(16) != 0;
	i.timeout_s = q.oi64(17);
	i.timeout_at = q.oi64(18);
	i.heartbeat_s = q.oi64(19);
	i.heartbeat_at = q.oi64(20);
	i.wait_kind = q.otext(21);
	i.wait_until = q.oi64(22);
	i.activity = q.otext(23);
	i.activity_token = q.otext(24);
	i.activity_owner = q.otext(25);
	i.input = q.js(26);
	i.name = q.otext(27);
	i.created_at = q.i64(28);
	i.parent_id = q.oi64(29);
	i.root_id = q.oi64(30);
	i.child_index = q.oi64(31);
	i.child_gen = q.oi64(32);
	i.scope = q.otext(33);
	i.fanout = q.js(34);
	i.partition_key = q.otext(35);
	i.variables = q.js(36);
	return i;
}


class SqliteStore final : public EngineStore {
  public:
	SqliteStore(const std::string &path, bool read_only, unsigned lane)
		: path_(path), db_(path, read_only, false, lane) {
		if (read_only) {
			// no journal mode change, no migration: both write
			try {
				check_schema();
			} catch (const Error &e) {
				// Reading a WAL file needs its -shm file, which SQLite cannot make
				// in a folder the caller may not write.  With no -wal file there
				// is no writer and nothing outside the main file: read it as
				// immutable (a reading command lasts an instant).
				if ((e.sqlstate != "25006" && e.sqlstate != "08006") || std::filesystem::exists(path + "-wal")) throw;
				db_ = sqlite::Db(path, true, true);
				check_schema();
			}
			// the statements that name them prepare (their write is then
			// refused, 25006)
			register_store_functions();
			return;
		}
		use_wal();
		// foreign keys on after the migration: schema 8 remakes the instances
		// table, which SQLite allows only with them off (sqlite_schema.hpp)
		migrate();
		db_.exec("PRAGMA foreign_keys=ON");
		register_store_functions();
	}
	~SqliteStore() override {
		for (auto &[_, fd] : worker_locks_) ::close(fd);
	}

	// The file in WAL mode.  Switching a new file to WAL takes its exclusive
	// lock, and a connection that loses that race to another process's
	// switch gets SQLITE_BUSY at once, without the busy handler (twenty
	// processes opening a new file in the same millisecond: about one start
	// in ten refused, faults_startup_test).  The switch is asked again until
	// it holds, for as long as a busy writer is waited for; a file already
	// in WAL mode answers at once.
	void use_wal() {
		const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(sqlite::kBusyTimeoutMs);
		for (;;) {
			try {
				db_.exec("PRAGMA journal_mode=WAL");
				return;
			} catch (const Error &e) {
				if (e.sqlstate != "55P03" || std::chrono::steady_clock::now() >= give_up) throw;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
		}
	}
	SqliteStore(const SqliteStore &) = delete;
	SqliteStore &operator=(const SqliteStore &) = delete;

	std::string kind() const override { return "sqlite"; }

	std::string now() override { return iso(now_ms()); }

	// Like the setting genroc.test_clock: any text is taken, empty means real
	// time, and a value that is not a time fails every operation that reads
	// the clock (22007), not the setting itself.
	void set_test_clock(const std::optional<std::string> &iso_time) override {
		test_clock_ = iso_time.value_or("");
	}

	void set_commit_delay(int) override {
		throw Error("0A000", "--pg-commit-delay needs PostgreSQL; SQLite has no commit delay");
	}

	bool wait_for_work(int timeout_ms) override {
		// SQLite has no notifications: a short sleep, and the caller polls.
		std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp(timeout_ms, 0, 50)));
		return false;
	}

	bool ping() override {
		try {
			Query q(db_, "SELECT 1");
			return q.next();
		} catch (const Error &) {
			return false;
		}
	}

  private:
	// ---- the engine's transactions (EngineStore: every operation) ---------

	void run_write(Commit c, const Body &body) override {
		write(durability_for(c), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			body(port);
			return 0;
		});
	}
	void run_read(const Body &body) override {
		read([&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			body(port);
			return 0;
		});
	}

	// A port whose STORE_* statements this store answers (store_call).
	sqlite::SqlitePort engine_port(int64_t now) {
		sqlite::SqlitePort port(db_, now);
		port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
		return port;
	}

	// The engine's STORE_* statements: the operations still written here.
	std::optional<engine::Rows> store_call(engine::Stmt s, engine::Params params, int64_t now) {
		const engine::Param *p = params.begin();
		auto one = [](std::string v) {
			engine::Rows rows;
			rows.emplace_back(std::vector<std::optional<std::string>>{std::move(v)});
			return rows;
		};
		switch (s) {
			case engine::Stmt::STORE_APPLY_STEP: return one(apply_step(p[0].i64(), json::parse(p[1].text()), now));
			// retention and the tick (engine/retention.cpp, engine/tick.cpp)
			case engine::Stmt::RETENTION_SETTINGS: {
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{
					std::to_string(log_options_.log_retention_ms * 1000),
					std::to_string(log_options_.instance_retention_ms * 1000),
					std::to_string(log_options_.object_grace_ms * 1000), "1"});
				return rows;
			}
			case engine::Stmt::TICK_INTERRUPT: return one(interrupt(p[0].i64(), p[1].text(), now));
			case engine::Stmt::TICK_WHO: {
				// this store's set_ticked_by name (kind binary for "genroc
				// worker <id>"), else "pid <pid>"
				const std::string by =
					ticked_by_.empty() ? "pid " + std::to_string(::getpid()) : ticked_by_.substr(0, 200);
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{
					by, by.rfind("genroc worker ", 0) == 0 ? "binary" : "session", ""});
				return rows;
			}
			// starting instances (engine/start.cpp): a timestamp option in
			// microseconds (NULL: it does not parse) and whether it is in range
			case engine::Stmt::START_PARSE_TIME: {
				int64_t ms = 0;
				engine::Rows rows;
				if (!parse_timestamp(p[0].text(), ms))
					rows.emplace_back(std::vector<std::optional<std::string>>{std::nullopt, std::nullopt});
				else
					rows.emplace_back(std::vector<std::optional<std::string>>{
						std::to_string(ms * 1000), (ms >= 0 && ms < 253402300800000) ? "1" : "0"});
				return rows;
			}
			case engine::Stmt::FLUSH_COMMIT: {
				const std::string c = p[0].text();
				flush_on_commit(c == "terminal"			   ? Commit::terminal
								: c == "only_once_claim"  ? Commit::only_once_claim
								: c == "only_once_report" ? Commit::only_once_report
								: c == "outside"		  ? Commit::outside
														  : Commit::progress);
				return engine::Rows{};
			}
			case engine::Stmt::INTERRUPT: return one(interrupt(p[0].i64(), p[1].text(), now));
			case engine::Stmt::STORE_INPUTS: {
				const Inst inst = load(p[0].i64());
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{inst.state_input.dump(), inst.input.dump()});
				return rows;
			}
			default: return std::nullopt;
		}
	}

	// the log's payload rule under this store's LogOptions (engine/log_payloads.hpp)
	engine::LogSettings log_settings() const {
		return {log_options_.payloads, log_options_.payload_max, log_options_.object_threshold};
	}

  private:
	// ---- worker lock files (what a live PostgreSQL session is there) ----
	//
	// A registered worker's store holds an exclusive flock() on a file beside
	// the database, one per worker id; the kernel releases it when the
	// process dies, however it dies.  So while the lock is held the worker is
	// alive, and once it is free the process that held it is gone.  flock
	// (not fcntl) because its locks belong to the open file: another store of
	// the same process opening and closing the file leaves it held, and a
	// second store of the same process asking for it is refused as another
	// process would be.  The engine cannot tell for a database without a
	// directory of its own (":memory:", a URI) or when the file cannot be
	// opened there.
	enum class LockState { taken, own, held_by_other, unknown };
	struct WorkerLockTry {
		LockState state = LockState::unknown;
		int fd = -1;  // set when this call took the lock
	};

	// The workers' host on SQLite: the lapse path is this store's interrupt,
	// and a holder's liveness its lock file (try_worker_lock, tried before
	// the registration reads the row): held by another process or by this
	// store, alive; free, dead; no lock file or no pid recorded, unknown.
	// A registration keeps the lock it took (registered()), unless it went
	// through a pooler (the lock was only a probe of the old holder).
	class WorkerHost final : public EngineStore::WorkerHost {
	  public:
		WorkerHost(SqliteStore &store, const std::string &worker, int64_t now, WorkerLockTry lock)
			: store_(store), worker_(worker), now_(now), lock_(lock) {}
		~WorkerHost() override {
			if (lock_.fd >= 0) ::close(lock_.fd);
		}
		void interrupt(int64_t instance, const std::string &reason) override {
			store_.interrupt(instance, reason, now_);
		}
		std::optional<bool> holder_alive(const std::string &, const engine::Row &held) override {
			if (lock_.state == LockState::held_by_other || lock_.state == LockState::own) return true;
			if (held.is_null(3) || lock_.state == LockState::unknown) return std::nullopt;
			return false;
		}
		std::optional<int64_t> session(bool pooled) override {
			pooled_ = pooled;
			if (pooled || (lock_.state != LockState::taken && lock_.state != LockState::own)) return std::nullopt;
			return static_cast<int64_t>(::getpid());
		}
		std::string durability() override { return durability_name(store_.durability()); }
		void registered() override {
			if (pooled_) {
				store_.worker_stopped(worker_);
			} else if (lock_.fd >= 0) {
				store_.worker_locks_[worker_] = lock_.fd;
				lock_.fd = -1;
			}
		}

	  private:
		SqliteStore &store_;
		std::string worker_;
		int64_t now_;
		WorkerLockTry lock_;
		bool pooled_ = false;
	};

	std::unique_ptr<EngineStore::WorkerHost> worker_host(const std::string &worker, int64_t now,
														 bool registering) override {
		return std::make_unique<WorkerHost>(*this, worker, now, registering ? try_worker_lock(worker) : WorkerLockTry{});
	}

	// stopped (or registered through a pooler): the id's lock is let go
	void worker_stopped(const std::string &worker) override {
		auto it = worker_locks_.find(worker);
		if (it != worker_locks_.end()) {
			::close(it->second);
			worker_locks_.erase(it);
		}
	}

	std::string worker_lock_path(const std::string &worker) const {
		if (path_.empty() || path_ == ":memory:" || path_.rfind("file:", 0) == 0) return "";
		return path_ + "-worker-" + sha256_hex(worker).substr(0, 32) + ".lock";
	}

	WorkerLockTry try_worker_lock(const std::string &worker) {
		WorkerLockTry t;
		if (worker_locks_.count(worker)) {
			t.state = LockState::own;  // this store's registration, alive
			return t;
		}
		const std::string p = worker_lock_path(worker);
		if (p.empty()) return t;
		// 0600 and never through a link: another user who could open it
		// could flock it and keep the worker from starting again.  One left
		// by an older version (0644) is made 0600 when it is ours.
		int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) return t;
		struct stat st;
		if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			::close(fd);
			return t;
		}
		if (st.st_uid == ::geteuid() && (st.st_mode & 077)) ::fchmod(fd, 0600);
		if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
			t.state = LockState::taken;
			t.fd = fd;
			return t;
		}
		const int err = errno;
		::close(fd);
		if (err == EWOULDBLOCK) t.state = LockState::held_by_other;
		return t;
	}

	std::map<std::string, int> worker_locks_;  // worker id -> its locked file

	// The one place where a commit's durability is decided (EngineStore::
	// flushes).  NORMAL in WAL mode never corrupts the file but may lose the
	// last commits on power loss; FULL syncs the WAL at COMMIT.  `none` is
	// NORMAL too: OFF could corrupt the file.
	Durability durability_for(Commit c) const { return flushes(c) ? Durability::full : Durability::normal; }

	// PRAGMA synchronous cannot change inside a transaction, so it is set
	// before BEGIN from what the operation is known to be (write()).  Some
	// classes show only inside: the claim of an OnlyOnce task, an instance
	// that ends.  Those call this; when the level wants a flush that the
	// transaction did not start with, write() syncs the WAL file right after
	// COMMIT and before returning, so nothing is confirmed before it is on
	// disk (one sync, as FULL would have done at COMMIT).
	void flush_on_commit(Commit c) {
		if (durability_for(c) == Durability::full && txn_durability_ != Durability::full) sync_after_commit_ = true;
	}

	Durability txn_durability_ = Durability::normal;
	bool sync_after_commit_ = false;

	int64_t now_ms() const {
		if (test_clock_.empty()) return system_now_ms();
		int64_t t;
		if (!parse_timestamp(test_clock_, t))
			throw Error(sqlstate::INVALID_DATETIME_FORMAT,
						"invalid input syntax for type timestamp with time zone: \"" + test_clock_ + "\"");
		return t;
	}

	// Runs fn(now) in one BEGIN IMMEDIATE transaction; rolls back on any
	// exception, so an error changes nothing (as a failed SQL function).
	// `now` is fixed for the whole transaction, as genroc.now() is.
	template <typename F>
	auto write(Durability d, F &&fn) -> std::invoke_result_t<F, int64_t> {
		db_.begin_immediate(d);
		txn_durability_ = d;
		sync_after_commit_ = false;
		try {
			auto r = fn(now_ms());
			db_.commit();
			if (sync_after_commit_) db_.sync_wal();
			return r;
		} catch (...) {
			db_.rollback();
			throw;
		}
	}

	// A read in one snapshot (a deferred transaction).
	template <typename F>
	auto read(F &&fn) -> std::invoke_result_t<F, int64_t> {
		db_.exec("BEGIN");
		try {
			auto r = fn(now_ms());
			db_.exec("COMMIT");
			return r;
		} catch (...) {
			db_.rollback();
			throw;
		}
	}

	// Creates the schema in a new file; brings a file of an older version up
	// to date (sqlite::MIGRATIONS, in this one transaction); refuses a file
	// of a newer or unknown version before touching it (it would be misread).
	// A store opened read-only reads only a file of this genroc's schema
	// version (55000 otherwise: it cannot migrate it).
	void check_schema() {
		read([&](int64_t) {
			std::string found = "(none)";
			{
				Query q(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
				if (q.next()) {
					Query v(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
					if (v.next()) found = v.text(0);
				}
			}
			if (found != std::to_string(sqlite::SCHEMA_VERSION))
				throw Error("55000", "SQLite database \"" + path_ + "\" has schema version " + found +
										 "; read-only, this genroc reads version " +
										 std::to_string(sqlite::SCHEMA_VERSION),
							"", "Open it once for writing (any genctl command that writes, or genroc) to create or "
								"migrate its schema.");
			return 0;
		});
	}

	void migrate() {
		write(Durability::normal, [&](int64_t) {
			bool has_meta = false;
			{
				Query q(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
				has_meta = q.next();
			}
			if (has_meta) {
				std::string found = "(none)";
				{
					Query q(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
					if (q.next()) found = q.text(0);
				}
				int version = 0;
				for (int v = 1; v <= sqlite::SCHEMA_VERSION; v++)
					if (found == std::to_string(v)) version = v;
				if (version == 0)
					throw Error("55000", "SQLite database \"" + path_ + "\" has schema version " + found +
											 "; this genroc reads version " + std::to_string(sqlite::SCHEMA_VERSION));
				bool remade = false;	// the table made anew once serves every later remaking
				for (; version < sqlite::SCHEMA_VERSION; version++) {
					if (sqlite::MIGRATIONS[version - 1] != sqlite::REORDER_INSTANCES) {
						db_.exec(sqlite::MIGRATIONS[version - 1]);
						continue;
					}
					if (remade) continue;
					remade = true;
					db_.exec(sqlite::REORDER_INSTANCES_BEFORE);
					db_.exec(sqlite::SCHEMA_SQL);
					db_.exec(sqlite::REORDER_INSTANCES_COPY);
					db_.exec(sqlite::SCHEMA_SQL);  // the indexes, now that their names are free
					Query fk(db_, "PRAGMA foreign_key_check");
					if (fk.next())
						throw Error("55000", "SQLite database \"" + path_ +
												 "\": a foreign key does not hold after the instances table was remade (table " +
												 fk.text(0) + ")");
				}
				Query(db_, "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
					  std::to_string(sqlite::SCHEMA_VERSION))
					.run();
				db_.exec(sqlite::LATER_INDEXES_SQL);
				return 0;
			}
			db_.exec(sqlite::SCHEMA_SQL);
			db_.exec(sqlite::TOKENS_SQL);
			db_.exec(sqlite::TICKERS_SQL);
			db_.exec(sqlite::ALIASES_SQL);
			db_.exec(sqlite::LATER_INDEXES_SQL);
			Query(db_, "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
				  std::to_string(sqlite::SCHEMA_VERSION))
				.run();
			return 0;
		});
	}

	static Error not_found(int64_t id) {
		return Error(sqlstate::INSTANCE_NOT_FOUND, "instance " + std::to_string(id) + " not found");
	}

	// The row with its values (references resolved: load_value).
	Inst load(int64_t id) {
		Inst inst;
		{
			Query q(db_, INST_SELECT, id);
			if (!q.next()) throw not_found(id);
			inst = read_inst(q);
		}
		inst.state_input = load_value(std::move(inst.state_input));
		inst.task_input = load_value(std::move(inst.task_input));
		inst.input = load_value(std::move(inst.input));
		return inst;
	}

	// ---- the store's paths the engine's statements call ----------------

	// Registered on the connection for the SQLite texts of statements.def
	// (engine/statements.def): each runs inside the calling statement's
	// transaction; its error goes back through the port with its SQLSTATE.
	void register_store_functions() {
		auto reg = [&](const char *name, int n, void (*fn)(sqlite3_context *, int, sqlite3_value **)) {
			const int rc =
				sqlite3_create_function_v2(db_.handle(), name, n, SQLITE_UTF8, this, fn, nullptr, nullptr, nullptr);
			if (rc != SQLITE_OK) sqlite::raise(db_.handle(), rc, std::string("registering ") + name);
		};
		// STEP_STOP: a value as a column keeps it (store_value): (JSON text, field, now)
		reg("genroc_store_value", 3, [](sqlite3_context *c, int, sqlite3_value **v) {
			host(c, [&](SqliteStore &s) {
				const std::string field = value_text(v[1]);
				return s.store_value(json::parse(value_text(v[0])), field.c_str(), sqlite3_value_int64(v[2])).dump();
			});
		});
		// LOG_ROW, STEP_LOG_ROWS: a log detail as the log keeps it, the
		// engine's rule (engine/log_payloads.hpp) under this store's
		// LogOptions: (JSON text, now); NULL for NULL
		reg("genroc_log_payloads", 2, [](sqlite3_context *c, int, sqlite3_value **v) {
			if (sqlite3_value_type(v[0]) == SQLITE_NULL) return sqlite3_result_null(c);
			host(c, [&](SqliteStore &s) {
				sqlite::SqlitePort port(s.db_, sqlite3_value_int64(v[1]));
				return engine::log_payloads(port, value_text(v[0]), s.log_settings());
			});
		});
		// STEP_STOP: a new lease epoch (new_epoch): (the previous one)
		reg("genroc_new_epoch", 1, [](sqlite3_context *c, int, sqlite3_value **v) {
			try {
				sqlite3_result_int64(c, new_epoch(sqlite3_value_int64(v[0])));
			} catch (...) {
				sqlite::keep_host_error(std::current_exception());
				sqlite3_result_error(c, "a genroc store function failed", -1);
			}
		});
	}
	static std::string value_text(sqlite3_value *v) {
		const auto *p = reinterpret_cast<const char *>(sqlite3_value_text(v));
		return p ? std::string(p, sqlite3_value_bytes(v)) : std::string();
	}
	// Runs a store function for SQLite: its text result, or its error kept
	// for the port (no exception crosses SQLite's C frames).
	template <typename F>
	static void host(sqlite3_context *c, F body) noexcept {
		try {
			const std::string out = body(*static_cast<SqliteStore *>(sqlite3_user_data(c)));
			sqlite3_result_text(c, out.c_str(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
		} catch (...) {
			sqlite::keep_host_error(std::current_exception());
			sqlite3_result_error(c, "a genroc store function failed", -1);
		}
	}

	// ---- large values (15_objects.sql) ----------------------------------

	static bool is_ref(const json &v) { return engine::is_ref(v); }

	// genroc._store_value: the engine's (engine/values.cpp), this store
	// measuring a value by its JSON text against the object threshold.
	json store_value(const json &v, const char *field, int64_t now) {
		const bool lookalike = is_ref(v);
		if (!lookalike && !v.is_object() && !v.is_array() &&
			!(v.is_string() && static_cast<int64_t>(v.get_ref<const std::string &>().size()) + 2 >
								   log_options_.object_threshold))
			return v;  // a number, a boolean, null, a short string
		std::string text = v.dump();
		const bool large = static_cast<int64_t>(text.size()) > log_options_.object_threshold;
		if (!lookalike && !large) return v;
		sqlite::SqlitePort port(db_, now);
		return json::parse(engine::store_value(port, text, field, large));
	}

	// genroc._load_value: the engine's (engine/values.cpp).
	json load_value(json v) {
		if (!is_ref(v)) return v;
		sqlite::SqlitePort port(db_, 0);
		return json::parse(engine::load_value(port, v.dump()));
	}

	// genroc._apply_step: the engine's step writer (engine/steps.cpp), which
	// asks the interpreter itself (engine/ask.cpp) and reaches this store's
	// log, fan-outs, event waits and partition slots through store_call.
	std::string apply_step(int64_t id, json request, int64_t now) {
		return with_engine(now, [&](engine::Port &port) { return engine::apply_step(port, id, request); });
	}

	// genroc._interrupt: the engine's (engine/steps.cpp).
	std::string interrupt(int64_t id, const std::string &reason, int64_t now) {
		return with_engine(now, [&](engine::Port &port) { return engine::interrupt(port, id, reason); });
	}

	// Runs an engine operation inside this transaction, on a port whose
	// STORE_* statements this store answers (store_call).
	template <typename F>
	std::string with_engine(int64_t now, F body) {
		sqlite::SqlitePort port(db_, now);
		port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
		return body(port);
	}

	// ---- queues: routing, partition slots, claim limits (55_queues.sql) --

	// genroc._queue_settings: the engine's (engine/queues.cpp).
	using QueueSettings = engine::QueueSettings;
	QueueSettings queue_settings(const std::string &queue) {
		sqlite::SqlitePort port(db_, 0);
		return engine::queue_settings(port, queue);
	}

	std::string path_;
	Db db_;
	std::string test_clock_;  // genroc.test_clock: "" = real time
};

}  // namespace

bool sqlite_process_setup() { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK; }

std::unique_ptr<Store> open_sqlite_store(const std::string &path, bool read_only, WriteLane lane) {
	static_assert(static_cast<unsigned>(WriteLane::worker) < sqlite::WriteTurns::kLanes, "a lane per WriteLane");
	return std::make_unique<SqliteStore>(path, read_only, static_cast<unsigned>(lane));
}

}  // namespace genroc
