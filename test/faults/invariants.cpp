// invariants.cpp — see invariants.hpp.  The queries are written once, in the
// SQL both PostgreSQL and SQLite read (window functions, EXISTS, CASE); only
// the table names are filled in per store.
#include "invariants.hpp"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace genroc::faults {

namespace {

bool is_postgres(const std::string &db) {
	return db.rfind("postgres://", 0) == 0 || db.rfind("postgresql://", 0) == 0 ||
		   db.find('=') != std::string::npos;
}

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
	for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
	return s;
}

// Live: queued, ready, running, waiting.
const char *const kLive = "('queued', 'ready', 'running', 'waiting')";

// Each live instance with nothing to move it on.
const std::string kStuck = std::string(R"SQL(
SELECT i.id, i.status, coalesce(i.wait_kind, ''), coalesce(i.state, '')
FROM {I} i
WHERE i.status IN )SQL") + kLive + R"SQL(
  AND NOT (
	i.status = 'ready'
	OR (i.status = 'running' AND i.lease_owner IS NOT NULL AND i.lease_expires IS NOT NULL)
	OR (i.status = 'waiting' AND coalesce(i.wait_kind, '') IN ('timer', 'run_at') AND i.wait_until IS NOT NULL)
	OR (i.status = 'waiting' AND coalesce(i.wait_kind, '') IN ('activity', 'event'))
	OR (i.status = 'waiting' AND i.wait_kind = 'callback' AND i.activity_token IS NOT NULL)
	OR (i.status = 'waiting' AND coalesce(i.wait_kind, '') = 'children'
		AND EXISTS (SELECT 1 FROM {I} c WHERE c.parent_id = i.id AND c.status IN )SQL" + kLive + R"SQL())
	OR (i.status = 'waiting' AND coalesce(i.wait_kind, '') = 'pending'
		AND EXISTS (SELECT 1 FROM {I} p WHERE p.id = i.parent_id AND p.status = 'waiting'
					AND p.wait_kind = 'children'))
	OR (i.status = 'queued'
		AND EXISTS (SELECT 1 FROM {I} o WHERE o.queue = i.queue AND o.id <> i.id
					AND (o.partition_key = i.partition_key OR (o.partition_key IS NULL AND i.partition_key IS NULL))
					AND o.status IN ('ready', 'running', 'waiting')))
  )
ORDER BY i.id
)SQL";

// Per scheduling of a state (the n-th task_scheduled of that instance and
// state), the successes recorded; more than one is a double report.
const char *const kDoubleSuccess = R"SQL(
SELECT instance_id, state, visit, count(*)
FROM (SELECT instance_id, state, event,
			 sum(CASE WHEN event = 'task_scheduled' THEN 1 ELSE 0 END)
				 OVER (PARTITION BY instance_id, state ORDER BY seq) AS visit
	  FROM {L} WHERE event IN ('task_scheduled', 'task_succeeded')) x
WHERE event = 'task_succeeded'
GROUP BY instance_id, state, visit
HAVING count(*) > 1
ORDER BY 1, 2, 3
)SQL";

struct PgFree {
	void operator()(PGconn *c) const { PQfinish(c); }
	void operator()(PGresult *r) const { PQclear(r); }
};
struct SqliteClose {
	void operator()(sqlite3 *d) const { sqlite3_close_v2(d); }
	void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};

std::vector<std::vector<std::string>> pg_rows(const std::string &url, const std::string &sql) {
	std::unique_ptr<PGconn, PgFree> c(PQconnectdb(url.c_str()));
	if (PQstatus(c.get()) != CONNECTION_OK)
		throw std::runtime_error(std::string("invariants: cannot connect: ") + PQerrorMessage(c.get()));
	std::unique_ptr<PGresult, PgFree> r(PQexec(c.get(), sql.c_str()));
	if (PQresultStatus(r.get()) != PGRES_TUPLES_OK)
		throw std::runtime_error(std::string("invariants: ") + PQerrorMessage(c.get()) + "\n" + sql);
	std::vector<std::vector<std::string>> out;
	for (int i = 0; i < PQntuples(r.get()); i++) {
		std::vector<std::string> row;
		for (int j = 0; j < PQnfields(r.get()); j++) row.push_back(PQgetvalue(r.get(), i, j));
		out.push_back(std::move(row));
	}
	return out;
}

std::vector<std::vector<std::string>> sqlite_rows(const std::string &path, const std::string &sql) {
	sqlite3 *h = nullptr;
	int rc = sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
	std::unique_ptr<sqlite3, SqliteClose> db(h);
	if (rc != SQLITE_OK) throw std::runtime_error("invariants: cannot open " + path + ": " + sqlite3_errstr(rc));
	sqlite3_busy_timeout(h, 10000);
	sqlite3_stmt *s = nullptr;
	if (sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
		throw std::runtime_error(std::string("invariants: ") + sqlite3_errmsg(h) + "\n" + sql);
	std::unique_ptr<sqlite3_stmt, SqliteClose> stmt(s);
	std::vector<std::vector<std::string>> out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		std::vector<std::string> row;
		for (int j = 0; j < sqlite3_column_count(s); j++) {
			auto *t = sqlite3_column_text(s, j);
			row.push_back(t ? reinterpret_cast<const char *>(t) : "");
		}
		out.push_back(std::move(row));
	}
	if (rc != SQLITE_DONE) throw std::runtime_error(std::string("invariants: ") + sqlite3_errmsg(h));
	return out;
}

std::string join(const std::vector<std::string> &row) {
	std::string s;
	for (auto &c : row) s += (s.empty() ? "" : " ") + c;
	return s;
}

}  // namespace

std::string for_store(const std::string &database, const std::string &sql) {
	bool pg = is_postgres(database);
	return replace_all(replace_all(sql, "{I}", pg ? "genroc._instances" : "instances"), "{L}",
					   pg ? "genroc._log" : "log");
}

std::vector<std::vector<std::string>> query_rows(const std::string &database, const std::string &sql) {
	std::string q = for_store(database, sql);
	return is_postgres(database) ? pg_rows(database, q) : sqlite_rows(database, q);
}

int64_t live_instances(const std::string &database) {
	auto rows = query_rows(database, std::string("SELECT count(*) FROM {I} WHERE status IN ") + kLive);
	return std::stoll(rows.at(0).at(0));
}

std::vector<std::string> check_invariants(const std::string &database, const InvariantInput &in) {
	std::vector<std::string> v;
	if (in.check_acknowledged && !in.acknowledged.empty()) {
		std::set<int64_t> present;
		for (auto &r : query_rows(database, "SELECT id FROM {I} WHERE parent_id IS NULL"))
			present.insert(std::stoll(r[0]));
		int missing = 0;
		std::string some;
		for (int64_t id : in.acknowledged)
			if (!present.count(id) && ++missing <= 10) some += " " + std::to_string(id);
		if (missing)
			v.push_back("acknowledged starts missing: " + std::to_string(missing) + " of " +
						std::to_string(in.acknowledged.size()) + " (e.g." + some + ")");
	}
	for (auto &r : query_rows(database, kStuck))
		v.push_back("stuck instance (id status wait_kind state): " + join(r));
	for (auto &r : query_rows(database, kDoubleSuccess))
		v.push_back("more than one success recorded (instance state visit count): " + join(r));
	if (in.check_once && !in.effects_file.empty()) {
		std::map<std::string, int> n;
		std::ifstream f(in.effects_file);
		for (std::string l; std::getline(f, l);)
			if (!l.empty()) n[l]++;
		for (auto &[effect, count] : n)
			if (count > 1) v.push_back("OnlyOnce effect \"" + effect + "\" happened " + std::to_string(count) + " times");
	}
	return v;
}

}  // namespace genroc::faults
