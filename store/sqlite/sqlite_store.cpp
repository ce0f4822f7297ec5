// sqlite_store.cpp — the engine on one SQLite file: SqliteStore is an
// EngineStore (store/engine_store.hpp: every genroc.* operation of the SQL
// API, the engine's) over this file's connection, and supplies what is its
// own: the transactions (one BEGIN IMMEDIATE per write, so several processes
// may share the file: SQLite lets one writer in at a time and busy_timeout
// makes the others wait; one Store method call is one transaction), how a
// commit reaches the disk, the schema and its migrations, the test clock,
// and the SQL functions the engine's SQLite texts call.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <thread>
#include <type_traits>

#include "claim.hpp"
#include "engine_store.hpp"
#include "log_payloads.hpp"
#include "values.hpp"
#include "sqlite_db.hpp"
#include "sqlite_port.hpp"
#include "sqlite_schema.hpp"
#include "sqlite_store.hpp"
#include "worker_locks.hpp"

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

	// A port whose statements without SQLite text EngineStore answers.
	sqlite::SqlitePort engine_port(int64_t now) {
		sqlite::SqlitePort port(db_, now);
		port.set_store_calls([this](engine::Stmt s, engine::Params params) { return store_answer(s, params); });
		return port;
	}

	// the log's payload rule under this store's LogOptions (engine/log_payloads.hpp)
	engine::LogSettings log_settings() const {
		return {log_options_.payloads, log_options_.payload_max, log_options_.object_threshold};
	}

  private:
	// ---- the workers' host: their lock files (store/worker_locks.hpp) ----
	std::unique_ptr<EngineStore::WorkerHost> worker_host(const std::string &worker) override {
		return worker_locks_.host(worker, durability_name(durability()));
	}
	void worker_stopped(const std::string &worker) override { worker_locks_.release(worker); }

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
	void flush_on_commit(Commit c) override {
		if (durability_for(c) == Durability::full && txn_durability_ != Durability::full) sync_after_commit_ = true;
	}

	Durability txn_durability_ = Durability::normal;
	bool sync_after_commit_ = false;

	int64_t now_ms() const {
		if (test_clock_.empty()) return system_now_ms();
		int64_t t;
		if (!asl::parse_timestamptz(test_clock_, t))
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
		// STEP_STOP: a value as a column keeps it (engine::store_value): (JSON text, field, now)
		reg("genroc_store_value", 3, [](sqlite3_context *c, int, sqlite3_value **v) {
			host(c, [&](SqliteStore &s) {
				const std::string field = value_text(v[1]);
				sqlite::SqlitePort port(s.db_, sqlite3_value_int64(v[2]));
				return engine::store_value(port, json::parse(value_text(v[0])), field, s.log_options_.object_threshold).dump();
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
		// a claim's new lease epoch (engine::new_epoch): (the previous one)
		reg("genroc_new_epoch", 1, [](sqlite3_context *c, int, sqlite3_value **v) {
			try {
				sqlite3_result_int64(c, engine::new_epoch(sqlite3_value_int64(v[0])));
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

	std::string path_;
	Db db_;
	WorkerLocks worker_locks_{path_};
	std::string test_clock_;  // genroc.test_clock: "" = real time
};

}  // namespace

bool sqlite_process_setup() { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK; }

std::unique_ptr<Store> open_sqlite_store(const std::string &path, bool read_only, WriteLane lane) {
	static_assert(static_cast<unsigned>(WriteLane::worker) < sqlite::WriteTurns::kLanes, "a lane per WriteLane");
	return std::make_unique<SqliteStore>(path, read_only, static_cast<unsigned>(lane));
}

}  // namespace genroc
