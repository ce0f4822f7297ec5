// sqlite_db.hpp — RAII owners for sqlite3* and sqlite3_stmt*, a statement
// cache, and the one transaction shape every write of the shim uses.
//
// Glossary
//   Db       one open database file (one connection), with its statement cache
//   Query    one execution of a cached statement: binds its arguments on
//            construction, steps through rows, and resets the statement when
//            it goes out of scope (so a cached statement is never left busy)
//   Durability  how hard a commit must reach the disk; decided in one place
//            (SqliteStore::durability_for) and applied here before BEGIN
//   write turns  the writers of one file in this process queue for it
//            (WriteTurns) before BEGIN IMMEDIATE: SQLite's busy handler polls
//            with growing sleeps, so under a steady stream of writers one
//            connection could lose every race (a server's worker starved by
//            its API threads)
//   lane     the kind of writer a connection belongs to (0: any, 1: the
//            worker's); the turns go round the lanes that have writers
//            waiting, first come first served within a lane, so one lane's
//            many writers (an API thread per connection) cannot crowd out
//            another's few
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "asl.hpp"

namespace genroc::sqlite {

// What busy_timeout gives another process; a writer of this process waits
// as long for its turn, and a store retries its switch to WAL as long.
inline constexpr int kBusyTimeoutMs = 10000;

// Throws genroc::Error for a SQLite result code (SQLSTATE chosen by kind).
[[noreturn]] void raise(sqlite3 *db, int rc, std::string_view what);

struct StmtDeleter {
	void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

struct DbDeleter {
	void operator()(sqlite3 *db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, DbDeleter>;

// Commit durability: which commits reach the disk before they are confirmed.
// Only the level is chosen per transaction;
// PRAGMA synchronous cannot change inside one, so it is set before BEGIN.
enum class Durability { normal, full };

// A fair lock between lanes of writers.  Each lane is a queue in order of
// arrival; a release hands the turn to the first waiter of the next lane
// after the one that had it (round-robin) that has anyone waiting.  So while
// a lane has writers waiting it gets at least one turn in kLanes, however
// many writers the other lanes have.  A waiter that gives up (timeout) leaves
// its queue, and no turn is ever handed to it.
class WriteTurns {
  public:
	static constexpr unsigned kLanes = 2;
	// True once it is this caller's turn; false after `timeout`.  lane is
	// taken modulo kLanes.
	bool acquire(unsigned lane, std::chrono::milliseconds timeout);
	void release();
	// How many writers of lane wait now (tests, to order their arrivals).
	size_t waiting(unsigned lane);
	// The turns of one database file in this process (by its canonical path).
	static std::shared_ptr<WriteTurns> for_file(const std::string &path);

  private:
	struct Waiter {
		std::condition_variable cv;
		bool granted = false;
	};
	std::mutex m_;
	bool held_ = false;	 // when false, no one waits: a release hands the turn on
	unsigned last_ = 0;	 // the lane of the last turn given
	std::deque<Waiter *> waiting_[kLanes];
};

class Db {
  public:
	// Opens the file at path.  read_only: never writes nor creates it (a
	// missing file is 08006); else creates it when missing, mode 0600 (the
	// -wal and -shm files SQLite makes take the main file's mode).
	// immutable (read_only only): SQLite takes the file as unchanging and
	// needs no -shm file (for a folder the caller cannot write).
	// lane: this connection's lane in the file's write turns.
	explicit Db(const std::string &path, bool read_only = false, bool immutable = false, unsigned lane = 0);
	~Db() { end_turn(); }
	Db(const Db &) = delete;
	Db &operator=(const Db &) = delete;
	// Takes other's connection (a store reopening its file another way); this
	// one's statements are finalized and its turn ended first.
	Db &operator=(Db &&other) noexcept {
		if (this == &other) return *this;
		end_turn();
		cache_.clear();
		db_ = std::move(other.db_);
		turns_ = std::move(other.turns_);
		lane_ = other.lane_;
		my_turn_ = std::exchange(other.my_turn_, false);
		cache_ = std::move(other.cache_);
		sync_ = other.sync_;
		return *this;
	}

	sqlite3 *handle() const { return db_.get(); }
	// Runs SQL text without parameters or results (DDL, pragmas).
	void exec(const char *sql);
	// The cached prepared statement for this SQL text, or, while that one
	// is in use, a fresh one that `own` keeps.
	sqlite3_stmt *prepare(const char *sql, StmtPtr &own);

	void begin_immediate(Durability d);
	void commit();
	// Flushes the WAL file to disk now (what synchronous=FULL does at
	// COMMIT), for a transaction found to need it only after it began.
	void sync_wal();
	void rollback() noexcept;

  private:
	void end_turn() noexcept;
	void run_cached(const char *sql);
	DbPtr db_;
	std::shared_ptr<WriteTurns> turns_;
	unsigned lane_ = 0;
	bool my_turn_ = false;	// between begin_immediate and commit/rollback
	std::unordered_map<std::string, StmtPtr> cache_;
	std::optional<Durability> sync_;  // the PRAGMA synchronous now in force
};

class Query {
  public:
	template <typename... Args>
	Query(Db &db, const char *sql, const Args &...args) : db_(db), s_(db.prepare(sql, own_)) {
		int i = 1;
		(bind(i++, args), ...);
	}
	~Query() {
		sqlite3_reset(s_);
		sqlite3_clear_bindings(s_);
	}
	Query(const Query &) = delete;
	Query &operator=(const Query &) = delete;

	// Steps to the next row; false when done.
	bool next();
	// Runs a statement that returns no rows (or whose rows are not wanted).
	void run();

	bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
	int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
	std::optional<int64_t> oi64(int col) const {
		return is_null(col) ? std::nullopt : std::optional<int64_t>(i64(col));
	}
	std::string text(int col) const;
	std::optional<std::string> otext(int col) const {
		return is_null(col) ? std::nullopt : std::optional<std::string>(text(col));
	}
	json js(int col) const;	// NULL reads as JSON null

  private:
	void bind(int i, std::nullopt_t);
	void bind(int i, int64_t v);
	void bind(int i, const std::string &v);
	template <typename T>
	void bind(int i, const std::optional<T> &v) {
		if (v)
			bind(i, *v);
		else
			bind(i, std::nullopt);
	}

	Db &db_;
	StmtPtr own_;  // set only when the cached statement was busy
	sqlite3_stmt *s_;
};

}  // namespace genroc::sqlite
