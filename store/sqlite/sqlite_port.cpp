// sqlite_port.cpp — the engine's port over sqlite3 prepared statements.
#include "sqlite_port.hpp"

#include "errors.hpp"
#include "limits.hpp"

namespace genroc::sqlite {

namespace {

const char *text_of(engine::Stmt s) {
	const auto &t = engine::statement_text(s);
	return t.sqlite;
}

void bind_all(sqlite3 *db, sqlite3_stmt *st, engine::Params params) {
	int i = 1;
	for (const engine::Param &p : params) {
		int rc;
		if (p.is_null()) {
			rc = sqlite3_bind_null(st, i);
		} else {
			switch (p.kind()) {
				case engine::Param::Kind::i64: rc = sqlite3_bind_int64(st, i, p.i64()); break;
				case engine::Param::Kind::boolean: rc = sqlite3_bind_int64(st, i, p.boolean() ? 1 : 0); break;
				case engine::Param::Kind::f64: rc = sqlite3_bind_double(st, i, p.f64()); break;
				default:
					rc = sqlite3_bind_text(st, i, p.text().data(), static_cast<int>(p.text().size()),
										   SQLITE_TRANSIENT);
					break;
			}
		}
		// a parameter this dialect's text does not use is out of range: fine
		if (rc != SQLITE_OK && rc != SQLITE_RANGE) raise(db, rc, "binding a parameter");
		i++;
	}
}

// The error of a store function the running statement called (one
// statement at a time per thread: a store runs one operation at a time).
thread_local std::exception_ptr host_error;

// Runs a prepared statement to its end; its rows when want_rows.
engine::Rows run(Db &db, engine::Stmt s, engine::Params params, bool want_rows, int64_t *changed) {
	const char *sql = text_of(s);
	StmtPtr own;
	sqlite3_stmt *st = db.prepare(sql, own);
	struct Reset {
		sqlite3_stmt *st;
		~Reset() {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
		}
	} reset{st};
	bind_all(db.handle(), st, params);
	engine::Rows rows;
	host_error = nullptr;
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) break;
		if (rc != SQLITE_ROW && host_error) std::rethrow_exception(std::exchange(host_error, nullptr));
		if (rc != SQLITE_ROW) raise(db.handle(), rc, std::string("statement ") + engine::statement_text(s).id);
		if (!want_rows) continue;
		const int n = sqlite3_column_count(st);
		std::vector<engine::Row::Cell> cells(n);
		for (int k = 0; k < n; k++) {  // an integer's text is made when asked, as SQLite writes it
			const int type = sqlite3_column_type(st, k);
			const auto *p = type == SQLITE_NULL || type == SQLITE_INTEGER ? nullptr : sqlite3_column_text(st, k);
			if (type == SQLITE_INTEGER) cells[k] = engine::Row::Cell::integer(sqlite3_column_int64(st, k));
			if (p) cells[k] = engine::Row::Cell::text({reinterpret_cast<const char *>(p), static_cast<size_t>(sqlite3_column_bytes(st, k))});
		}
		rows.emplace_back(std::move(cells));
	}
	if (changed) *changed = sqlite3_changes64(db.handle());
	return rows;
}

}  // namespace

void keep_host_error(std::exception_ptr e) noexcept { host_error = std::move(e); }

engine::Rows SqlitePort::query(engine::Stmt s, engine::Params params) {
	if (!text_of(s) && store_calls_)
		if (auto rows = store_calls_(s, params)) return std::move(*rows);
	if (!text_of(s))
		throw Error("XX000", std::string("engine: statement ") + engine::statement_text(s).id + " has no SQLite text");
	return run(db_, s, params, true, nullptr);
}

int64_t SqlitePort::exec(engine::Stmt s, engine::Params params) {
	if (!text_of(s) && store_calls_)
		if (auto rows = store_calls_(s, params)) return static_cast<int64_t>(rows->size());
	if (!text_of(s)) return 0;
	int64_t changed = 0;
	run(db_, s, params, false, &changed);
	return changed;
}

std::string SqlitePort::canonical_json(const std::string &text) {
	json j = json::parse(text, nullptr, false);
	if (j.is_discarded()) engine::raise(engine::Msg::JSON_SYNTAX);
	limits::check_json_depth(j, "the JSON text");  // before dump() recurses over it
	return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void SqlitePort::savepoint_begin() {
	db_.exec(("SAVEPOINT engine_" + std::to_string(savepoints_)).c_str());
	savepoints_++;
}

void SqlitePort::savepoint_release() {
	savepoints_--;
	db_.exec(("RELEASE engine_" + std::to_string(savepoints_)).c_str());
}

void SqlitePort::savepoint_rollback() noexcept {
	savepoints_--;
	const std::string name = "engine_" + std::to_string(savepoints_);
	try {
		db_.exec(("ROLLBACK TO " + name).c_str());
		db_.exec(("RELEASE " + name).c_str());
	} catch (...) {
		// the store's transaction fails as a whole then
	}
}

}  // namespace genroc::sqlite
