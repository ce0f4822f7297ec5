// pg_store.cpp — the Store interface over libpq: each method calls one
// genroc.* SQL function and nothing else (the tables are the extension's).
//
// One execute-with-parameters path (PgStore::exec): every value travels as a
// parameter, no SQL is built from data.  Arrays go over as JSON and are
// unpacked in SQL, so no array literal is ever quoted by hand.
//
// A lost connection raises Error with SQLSTATE class 08 and drops the
// connection; the next call reconnects (and LISTENs again when it
// listened).  Retrying is the caller's business (worker loop).
//
// No session state but LISTEN and the hot path's named statements on a
// connection not found pooled: a server connection may be shared with other
// clients (a transaction pooler: pgbouncer pool_mode=transaction, whether
// said by --pooled or not), so nothing this process sets may stay on it
// after a transaction.  The settings (TimeZone, genroc.durability, the log
// settings, commit_delay, the test clock) go with every statement, in the
// same implicit transaction: a pipeline of set_config(..., true) and the
// statement, one Sync, one round trip (exec_with_settings); the application
// name travels in the start-up packet, which pgbouncer keeps per client and
// sets again on each server connection it lends the client.  The hot
// path's statements are named prepared statements on a connection not
// found pooled, their names this client connection's own (a random nonce:
// see exec); one found missing turns the store pooled.  Behind a
// transaction pooler (--pooled, or detected: pooler_detected) every
// statement is unnamed (PQsendQueryParams), no LISTEN is issued (a
// notification would reach a server connection, not this client:
// wait_for_work sleeps, polling), and the worker registers "pooled"
// (liveness by heartbeat).
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "limits.hpp"
#include "log.hpp"
#include "store.hpp"

namespace genroc {
namespace {

struct ConnCloser {
	void operator()(PGconn *c) const { PQfinish(c); }
};
struct ResultClearer {
	void operator()(PGresult *r) const { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnCloser>;
using Result = std::unique_ptr<PGresult, ResultClearer>;

// A timestamptz column as genroc's ISO-8601 UTC text.
#define ISO(col) "to_char((" col ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

constexpr const char *CONNECTION_FAILURE = "08006";

// A parameter: a value, or SQL NULL.
using Param = std::optional<std::string>;

// The parameters as libpq takes them: text, NULL for a null.
std::vector<const char *> param_values(std::initializer_list<Param> params) {
	std::vector<const char *> values;
	values.reserve(params.size());
	for (const auto &p : params) values.push_back(p ? p->c_str() : nullptr);
	return values;
}

std::string text(PGresult *r, int row, int col) {
	return PQgetisnull(r, row, col) ? std::string() : std::string(PQgetvalue(r, row, col));
}
bool is_null(PGresult *r, int row, int col) { return PQgetisnull(r, row, col); }
int64_t int64(PGresult *r, int row, int col) {
	return is_null(r, row, col) ? 0 : std::stoll(PQgetvalue(r, row, col));
}
std::optional<int> opt_int(PGresult *r, int row, int col) {
	if (is_null(r, row, col)) return std::nullopt;
	return std::stoi(PQgetvalue(r, row, col));
}
bool boolean(PGresult *r, int row, int col) {
	return !is_null(r, row, col) && PQgetvalue(r, row, col)[0] == 't';
}
json jsonb(PGresult *r, int row, int col) {
	return is_null(r, row, col) ? json(nullptr) : json::parse(PQgetvalue(r, row, col));
}
// A leased task as claim returns it, its columns (instance_id, epoch, state,
// resource, input, only_once, timeout_s, attempt, lease_expires, queue) from
// `col` on: claim, complete_and_claim / fail_and_claim, complete_many.
Task task_at(PGresult *r, int row, int col) {
	Task t;
	t.instance_id = int64(r, row, col);
	t.epoch = int64(r, row, col + 1);
	t.state = text(r, row, col + 2);
	t.resource = text(r, row, col + 3);
	t.input = jsonb(r, row, col + 4);
	t.only_once = boolean(r, row, col + 5);
	t.timeout_s = opt_int(r, row, col + 6);
	t.attempt = static_cast<int>(int64(r, row, col + 7));
	t.lease_expires = text(r, row, col + 8);
	t.queue = text(r, row, col + 9);
	return t;
}
// A caller's JSON as a query parameter.  dump() recurses over the value, so a
// value deeper than the interpreter's json_depth is refused first, with the
// words the server (and the SQLite store) use for it.
std::string param(const json &v, const char *what) {
	limits::check_json_depth(v, what);
	return v.dump();
}

json id_array(const std::vector<int64_t> &ids) {
	json a = json::array();
	for (auto id : ids) a.push_back(id);
	return a;
}

std::string trimmed(std::string s) {
	while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
	return s;
}

// 16 random hex digits: what names a client connection's prepared
// statements apart from any other client's.
std::string new_nonce() {
	static std::mutex m;
	static std::random_device rd;
	static std::mt19937_64 gen(rd());
	std::lock_guard<std::mutex> g(m);
	char buf[17];
	std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gen()));
	return buf;
}

// pg_backend_pid() on a connection, or -1.
long backend_pid(PGconn *c) {
	Result r(PQexec(c, "SELECT pg_backend_pid()"));
	if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != 1) return -1;
	return std::stol(PQgetvalue(r.get(), 0, 0));
}

// Whether the server behind `first` hands its sessions to several clients
// (a transaction pooler).  On PostgreSQL itself, and behind a session
// pooler, a client connection keeps one backend for its life, and two
// client connections open at once never share one.  So `first` and a second
// connection ask for pg_backend_pid() in turns, `first` twice in a row then
// the second, four rounds: a pid that changes on one connection, or a pid
// both saw, is a transaction pooler's doing.  pgbouncer lends the server
// connection just let go (the second connection then sees the first's
// pid) or, with server_round_robin = 1, the one idle longest (`first`'s two
// transactions in a row then land on two server connections when the pool
// has two idle, on the same one as the second's when it has one).  It may
// miss a pooler whose server connections other clients keep busy all along,
// never the other way round; --pooled says it without asking.  Nothing when
// it could not ask (the second connection refused, a query failed).
std::optional<bool> pooler_detected(PGconn *first, const std::string &conninfo) {
	const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
	const char *vals[] = {"5", "genroc", conninfo.c_str(), nullptr};
	Conn probe(PQconnectdbParams(keys, vals, 1));
	if (!probe || PQstatus(probe.get()) != CONNECTION_OK) return std::nullopt;
	std::set<long> firsts, probes;
	for (int i = 0; i < 4; ++i) {
		long a = backend_pid(first), a2 = backend_pid(first), b = backend_pid(probe.get());
		if (a < 0 || a2 < 0 || b < 0) return std::nullopt;
		firsts.insert({a, a2});
		probes.insert(b);
		if (firsts.size() > 1 || probes.size() > 1 || firsts.count(b) || probes.count(a) || probes.count(a2))
			return true;
	}
	return false;
}

// Once per process and database (asked again at the next connection when it
// could not ask); logged when found.
bool pooler_detected_once(PGconn *first, const std::string &conninfo) {
	static std::mutex m;
	static std::map<std::string, bool> known;
	std::lock_guard<std::mutex> g(m);
	auto it = known.find(conninfo);
	if (it != known.end()) return it->second;
	std::optional<bool> answer = pooler_detected(first, conninfo);
	if (!answer) return false;
	const bool found = *answer;
	known[conninfo] = found;
	if (found)
		log::warn("a transaction pooler is in front of PostgreSQL: work is polled (--poll-interval) "
				  "instead of LISTEN, a worker registers pooled (liveness by heartbeat); "
				  "--pooled says so without this check",
				  {});
	return found;
}

class PgStore final : public Store {
  public:
	PgStore(std::string conninfo, bool pooled)
		: conninfo_(std::move(conninfo)), pooled_flag_(pooled), pooled_(pooled) {
		rebuild_settings();
		connect();
	}

	std::string kind() const override { return "postgres"; }

	bool pooled() const override { return pooled_; }

	DefineResult define(const std::string &name, const json &definition,
						const std::optional<std::string> &source = std::nullopt) override {
		limits::check_definition_depth(definition);
		auto r = source ? exec("SELECT name, version, is_new FROM genroc.define($1, $2::text)", {name, *source})
						: exec("SELECT name, version, is_new FROM genroc.define($1, $2::jsonb)", {name, definition.dump()});
		return {text(r.get(), 0, 0), static_cast<int>(int64(r.get(), 0, 1)), boolean(r.get(), 0, 2)};
	}

	json list_definitions() override {
		// Timestamps as genroc's ISO text everywhere (to_jsonb would write "+00:00").
		return rows_as_json("SELECT to_jsonb(d) || jsonb_build_object('created_at', " ISO("d.created_at")
							") FROM genroc.list_definitions() d",
							{});
	}

	StartResult start(const std::string &definition, const json &input,
					  const json &options) override {
		auto r = exec("SELECT instance_id, is_new, status FROM genroc.start($1, $2::jsonb, $3::jsonb)",
					  {definition, param(input, "the input"), param(options, "the start options")});
		return {int64(r.get(), 0, 0), boolean(r.get(), 0, 1), text(r.get(), 0, 2)};
	}

	std::vector<StartResult> start_many(const std::string &definition, const json &inputs,
										const json &options) override {
		// each input's depth named by its index, as the server and SQLite name it
		if (inputs.is_array())
			for (size_t k = 0; k < inputs.size(); ++k)
				limits::check_json_depth(inputs[k], "the input at index " + std::to_string(k));
		auto r = exec("SELECT instance_id, status FROM genroc.start_many($1, $2::jsonb, $3::jsonb)",
					  {definition, inputs.dump(), param(options, "the start_many options")});
		std::vector<StartResult> out;
		out.reserve(PQntuples(r.get()));
		for (int k = 0; k < PQntuples(r.get()); ++k) out.push_back({int64(r.get(), k, 0), true, text(r.get(), k, 1)});
		return out;
	}

	std::string cancel(int64_t id, const std::optional<std::string> &error,
					   const std::optional<std::string> &cause) override {
		if (!error && !cause) return scalar("SELECT genroc.cancel($1)", {std::to_string(id)});
		return scalar("SELECT genroc.cancel($1, $2, $3)",
					  {std::to_string(id), error ? Param(*error) : std::nullopt, cause ? Param(*cause) : std::nullopt});
	}

	void undefine(const std::string &name, std::optional<int> version) override {
		exec("SELECT genroc.undefine($1, $2::int)", {name, version ? Param(std::to_string(*version)) : std::nullopt});
	}

	json alias_set(const std::string &name, const std::string &alias, const json &routing,
				   const std::optional<std::string> &description) override {
		auto r = exec("SELECT genroc.alias_set($1, $2, $3::jsonb, $4)",
					  {name, alias, param(routing, "the routing"), description ? Param(*description) : std::nullopt});
		return jsonb(r.get(), 0, 0);
	}

	void alias_drop(const std::string &name, const std::string &alias) override {
		exec("SELECT genroc.alias_drop($1, $2)", {name, alias});
	}

	json get_alias(const std::string &name, const std::string &alias) override {
		auto r = exec("SELECT genroc.get_alias($1, $2)", {name, alias});
		return jsonb(r.get(), 0, 0);
	}

	json list_aliases(const std::string &name) override {
		auto r = exec("SELECT genroc.list_aliases($1)", {name});
		return jsonb(r.get(), 0, 0);
	}

	std::string retry(int64_t id) override {
		return scalar("SELECT genroc.retry($1)", {std::to_string(id)});
	}

	std::string redrive(int64_t id, const std::optional<std::string> &client_token) override {
		return scalar("SELECT genroc.redrive($1, $2)", {std::to_string(id), client_token});
	}

	std::string resume(int64_t id, const json &output) override {
		return scalar("SELECT genroc.resume($1, $2::jsonb)", {std::to_string(id), param(output, "the task result")});
	}

	json get_definition(const std::string &name, std::optional<int> version) override {
		auto r = exec("SELECT genroc.get_definition($1, $2::int)",
					  {name, version ? Param(std::to_string(*version)) : std::nullopt});
		return jsonb(r.get(), 0, 0);
	}

	json get_instance(int64_t id, bool refs) override {
		auto r = refs ? exec("SELECT genroc.get_instance($1, '{\"values\": \"ref\"}')", {std::to_string(id)})
					  : exec("SELECT genroc.get_instance($1)", {std::to_string(id)});
		return jsonb(r.get(), 0, 0);
	}

	json get_object(const std::string &ref) override {
		auto r = exec("SELECT genroc.get_object($1)", {ref});
		return jsonb(r.get(), 0, 0);
	}

	json list_instances(const json &filter) override {
		return rows_as_json("SELECT genroc.list_instances($1::jsonb)", {param(filter, "the filter")});
	}

	json history(int64_t id, bool refs) override {
		return rows_as_json(refs ? "SELECT to_jsonb(h) || jsonb_build_object('at', " ISO("h.at") ") "
								   "FROM genroc.history($1, '{\"values\": \"ref\"}') h"
								 : "SELECT to_jsonb(h) || jsonb_build_object('at', " ISO("h.at") ") FROM genroc.history($1) h",
							{std::to_string(id)});
	}

	json worker_register(const std::string &worker, const json &options) override {
		auto r = exec("SELECT genroc.worker_register($1, $2::jsonb)", {worker, param(options, "the worker options")});
		return jsonb(r.get(), 0, 0);
	}

	json worker_heartbeat(const std::string &worker) override {
		auto r = exec_hot("SELECT genroc.worker_heartbeat($1)", {worker});
		return jsonb(r.get(), 0, 0);
	}

	json worker_drain(const std::string &worker) override {
		auto r = exec("SELECT genroc.worker_drain($1)", {worker});
		return jsonb(r.get(), 0, 0);
	}

	bool drain_woken() override { return std::exchange(drain_woken_, false); }

	void worker_stop(const std::string &worker) override {
		exec("SELECT genroc.worker_stop($1)", {worker});
	}

	json list_workers() override {
		return rows_as_json("SELECT to_jsonb(w) || jsonb_build_object('started_at', " ISO("w.started_at")
							", 'heartbeat_at', " ISO("w.heartbeat_at") ", 'stopped_at', " ISO("w.stopped_at")
							") FROM genroc.list_workers() w",
							{});
	}

	json queue_set(const std::string &name, const json &options) override {
		auto r = exec("SELECT genroc.queue_set($1, $2::jsonb)", {name, param(options, "the queue options")});
		return jsonb(r.get(), 0, 0);
	}

	void queue_drop(const std::string &name) override { exec("SELECT genroc.queue_drop($1)", {name}); }

	json list_queues() override {
		return rows_as_json("SELECT to_jsonb(q) || jsonb_build_object('oldest_ready_at', " ISO("q.oldest_ready_at")
							") FROM genroc.list_queues() q",
							{});
	}

	json token_create(const std::string &name, const std::vector<std::string> &permissions,
					  const std::string &created_by, const std::optional<std::string> &token_text) override {
		auto r = exec("SELECT genroc.token_create($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), $3, $4)",
					  {name, json(permissions).dump(), created_by, token_text});
		return jsonb(r.get(), 0, 0);
	}

	json token_verify(const std::string &token) override {
		auto r = exec("SELECT genroc.token_verify($1)", {token});
		return jsonb(r.get(), 0, 0);
	}

	json token_list() override { return rows_as_json("SELECT genroc.token_list()", {}); }

	json capabilities() override {
		auto r = exec("SELECT genroc.capabilities()", {});
		return jsonb(r.get(), 0, 0);
	}

	void token_revoke(const std::string &id) override { exec("SELECT genroc.token_revoke($1)", {id}); }

	std::optional<int64_t> claim_wake(const std::vector<std::string> &queues) override {
		auto r = exec("SELECT genroc.claim_wake(ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))",
					  {json(queues).dump()});
		if (PQgetisnull(r.get(), 0, 0)) return std::nullopt;
		return int64(r.get(), 0, 0);
	}

	std::vector<Task> claim(const std::string &worker, const std::vector<std::string> &queues,
							int n) override {
		auto r = exec_hot("SELECT instance_id, epoch, state, resource, input, only_once, timeout_s, attempt, " ISO("lease_expires")
					  ", queue FROM genroc.claim($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), $3)",
					  {worker, json(queues).dump(), std::to_string(n)});
		std::vector<Task> tasks;
		for (int i = 0; i < PQntuples(r.get()); i++) tasks.push_back(task_at(r.get(), i, 0));
		return tasks;
	}

	std::vector<int64_t> renew(const std::string &worker, const std::vector<int64_t> &ids) override {
		auto r = exec_hot("SELECT * FROM genroc.renew($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint))",
					  {worker, id_array(ids).dump()});
		std::vector<int64_t> kept;
		for (int i = 0; i < PQntuples(r.get()); i++) kept.push_back(int64(r.get(), i, 0));
		return kept;
	}

	void release(const std::string &worker, const std::vector<int64_t> &ids) override {
		exec("SELECT genroc.release($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint))",
			 {worker, id_array(ids).dump()});
	}

	std::string complete(int64_t id, int64_t epoch, const json &output) override {
		return first_cell(exec_hot("SELECT genroc.complete($1, $2, $3::jsonb)",
									{std::to_string(id), std::to_string(epoch), param(output, "the task result")}));
	}

	std::string fail(int64_t id, int64_t epoch, const std::string &error,
					 const std::string &cause) override {
		return first_cell(exec_hot("SELECT genroc.fail($1, $2, $3, $4)",
									{std::to_string(id), std::to_string(epoch), error, cause}));
	}

	Report complete_and_claim(int64_t id, int64_t epoch, const json &output, const std::string &worker,
							  const std::vector<std::string> &queues) override {
		if (!handback_) return {complete(id, epoch, output), std::nullopt};
		return handback_report(
			"SELECT status, instance_id, epoch, state, resource, input, only_once, timeout_s, attempt, " ISO(
				"lease_expires") ", queue FROM genroc.complete_and_claim($1, $2, $3::jsonb, $4, "
								 "ARRAY(SELECT jsonb_array_elements_text($5::jsonb)))",
			{std::to_string(id), std::to_string(epoch), param(output, "the task result"), worker, json(queues).dump()},
			[&] { return complete(id, epoch, output); });
	}

	Report fail_and_claim(int64_t id, int64_t epoch, const std::string &error, const std::string &cause,
						  const std::string &worker, const std::vector<std::string> &queues) override {
		if (!handback_) return {fail(id, epoch, error, cause), std::nullopt};
		return handback_report(
			"SELECT status, instance_id, epoch, state, resource, input, only_once, timeout_s, attempt, " ISO(
				"lease_expires") ", queue FROM genroc.fail_and_claim($1, $2, $3, $4, $5, "
								 "ARRAY(SELECT jsonb_array_elements_text($6::jsonb)))",
			{std::to_string(id), std::to_string(epoch), error, cause, worker, json(queues).dump()},
			[&] { return fail(id, epoch, error, cause); });
	}

	std::vector<Outcome> complete_many(const std::vector<Completion> &reports, const std::string &worker,
									   const std::vector<std::string> &queues) override {
		if (!many_) return complete_one_by_one(reports, worker, queues);
		json ids = json::array(), epochs = json::array(), outputs = json::array();
		for (const auto &c : reports) {
			limits::check_json_depth(c.output, "the task result");
			ids.push_back(c.instance_id);
			epochs.push_back(c.epoch);
			outputs.push_back(c.output);
		}
		Param w, q;
		if (!worker.empty()) {
			w = worker;
			q = json(queues).dump();
		}
		Result r;
		try {
			// the handed-back task's columns as claim's, from the third on
			r = exec_hot("SELECT status, sqlstate, instance_id, epoch, state, resource, input, only_once, timeout_s, "
					  "attempt, " ISO("lease_expires") ", queue FROM genroc.complete_many("
					  "ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::bigint), "
					  "ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint), "
					  "ARRAY(SELECT jsonb_array_elements($3::jsonb)), $4, "
					  "(SELECT ARRAY(SELECT jsonb_array_elements_text($5::jsonb)) WHERE $5 IS NOT NULL))",
					  {ids.dump(), epochs.dump(), outputs.dump(), w, q});
		} catch (const Error &e) {
			if (e.sqlstate != "42883") throw;
			many_ = false;
			return complete_one_by_one(reports, worker, queues);
		}
		std::vector<Outcome> out;
		for (int i = 0; i < PQntuples(r.get()); i++) {
			Outcome o;
			o.status = text(r.get(), i, 0);
			o.sqlstate = text(r.get(), i, 1);
			o.instance_id = int64(r.get(), i, 2);
			if (!is_null(r.get(), i, 3)) o.next = task_at(r.get(), i, 2);  // epoch: handed back
			out.push_back(std::move(o));
		}
		return out;
	}

	// complete_many for an extension without it (42883: an older server,
	// e.g. bench/ab.sh's base side): a report per call, in order.
	std::vector<Outcome> complete_one_by_one(const std::vector<Completion> &reports, const std::string &worker,
											 const std::vector<std::string> &queues) {
		std::vector<Outcome> out;
		for (const auto &c : reports) out.push_back(complete_one(c, worker, queues));
		return out;
	}

	std::vector<ActivityTask> claim_activity(const std::string &activity, const std::string &worker,
											 int n) override {
		auto r = exec("SELECT token, instance_id, activity, input, heartbeat_s, timeout_s"
					  " FROM genroc.claim_activity($1, $2, $3)",
					  {activity, worker, std::to_string(n)});
		std::vector<ActivityTask> out;
		for (int i = 0; i < PQntuples(r.get()); i++) {
			ActivityTask a;
			a.token = text(r.get(), i, 0);
			a.instance_id = int64(r.get(), i, 1);
			a.activity = text(r.get(), i, 2);
			a.input = jsonb(r.get(), i, 3);
			a.heartbeat_s = opt_int(r.get(), i, 4);
			a.timeout_s = opt_int(r.get(), i, 5);
			out.push_back(std::move(a));
		}
		return out;
	}

	std::string activity_succeed(const std::string &token, const json &output) override {
		return scalar("SELECT genroc.activity_succeed($1, $2::jsonb)", {token, param(output, "the task result")});
	}

	std::string activity_fail(const std::string &token, const std::string &error,
							  const std::string &cause) override {
		return scalar("SELECT genroc.activity_fail($1, $2, $3)", {token, error, cause});
	}

	void activity_heartbeat(const std::string &token) override {
		exec("SELECT genroc.activity_heartbeat($1)", {token});
	}

	std::string emit(int64_t id, const std::string &name, const json &payload) override {
		return scalar("SELECT genroc.emit($1, $2, $3::jsonb)", {std::to_string(id), name, param(payload, "the event payload")});
	}

	json tick(int limit) override {
		if (ticked_by_.empty()) {
			auto r = exec("SELECT genroc.tick($1)", {std::to_string(limit)});
			return jsonb(r.get(), 0, 0);
		}
		// The name for genroc.tickers, for this transaction only (nothing
		// stays on the session): the CTE is evaluated before the tick.
		auto r = exec("WITH s AS MATERIALIZED (SELECT set_config('application_name', $2, true)) "
					  "SELECT genroc.tick($1) FROM s",
					  {std::to_string(limit), ticked_by_});
		return jsonb(r.get(), 0, 0);
	}

	void set_ticked_by(const std::string &name) override { ticked_by_ = name; }

	json tickers() override {
		auto r = exec("SELECT coalesce(jsonb_agg(jsonb_build_object('ticked_by', t.ticked_by, 'kind', t.kind, "
					  "'role', t.role, 'first_tick_at', " ISO("t.first_tick_at") ", 'last_tick_at', "
					  ISO("t.last_tick_at") ", 'ago_ms', t.ago_ms, 'ticks', t.ticks)), '[]') FROM genroc.tickers() t",
					  {});
		return jsonb(r.get(), 0, 0);
	}

	json metrics(int max_definitions) override {
		auto r = exec("SELECT genroc.metrics($1)", {std::to_string(max_definitions)});
		return jsonb(r.get(), 0, 0);
	}

	std::string now() override { return scalar("SELECT " ISO("genroc.now()"), {}); }

	void set_test_clock(const std::optional<std::string> &iso_time) override {
		change_settings([&] { test_clock_ = iso_time; });
	}

	// A level the server always takes: tried at the next call.
	void set_durability(DurabilityLevel level) override {
		durability_ = level;
		rebuild_settings();
	}

	DurabilityLevel durability() override {
		auto level = parse_durability(scalar("SELECT genroc.durability()", {}));
		if (!level) throw Error("XX000", "genroc.durability() answered an unknown level");
		return *level;
	}

	void set_commit_delay(int microseconds) override {
		if (microseconds < 0 || microseconds > 100000)
			throw Error("22023", "--pg-commit-delay must be between 0 and 100000 microseconds, not " +
									 std::to_string(microseconds));
		// Superusers pass this check too; a role without the privilege would
		// only get a permission error from set_config, without the hint.
		if (scalar("SELECT has_parameter_privilege(current_user, 'commit_delay', 'SET')", {}) != "t")
			throw Error("42501", "--pg-commit-delay: role \"" + scalar("SELECT current_user", {}) +
									 "\" may not set commit_delay",
						"Setting commit_delay needs a superuser or GRANT SET ON PARAMETER commit_delay.",
						"Grant it, or set commit_delay in the server's parameters and leave --pg-commit-delay off.");
		change_settings([&] { commit_delay_ = microseconds; });
	}

	void set_log_options(const LogOptions &options) override {
		change_settings([&] { log_options_ = options; });
	}

	json prune(int64_t log_retention_ms, int64_t instance_retention_ms, int limit) override {
		auto r = exec("SELECT genroc.prune($1::bigint * interval '1 millisecond', "
					  "$2::bigint * interval '1 millisecond', $3)",
					  {std::to_string(log_retention_ms), std::to_string(instance_retention_ms),
					   std::to_string(limit)});
		return jsonb(r.get(), 0, 0);
	}

	bool wait_for_work(int timeout_ms) override {
		ensure_connected();
		if (pooled_) {
			// A notification would reach a server connection of the pool,
			// not this client: poll instead (the caller's --poll-interval).
			if (timeout_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
			return false;
		}
		if (!listening_) {
			exec("LISTEN genroc", {});
			exec("LISTEN genroc_drain", {});
			listening_ = true;
		}
		if (drain_notifications()) return true;
		pollfd p{PQsocket(conn_.get()), POLLIN, 0};
		if (p.fd < 0) return false;
		int rc = ::poll(&p, 1, timeout_ms);
		if (rc <= 0) return false;
		if (!PQconsumeInput(conn_.get())) {
			std::string msg = PQerrorMessage(conn_.get());
			drop_connection();
			throw Error(CONNECTION_FAILURE, "connection to PostgreSQL lost: " + trim(msg));
		}
		return drain_notifications();
	}

	bool ping() override {
		try {
			exec("SELECT 1", {});
			return true;
		} catch (const Error &) {
			return false;
		}
	}

  private:
	std::string conninfo_;
	std::map<std::string, std::string> prepared_;	// this connection's: SQL text -> statement name (exec_hot)
	std::string nonce_;					// this connection's, in its statements' names
	uint64_t statements_made_ = 0;		// the last statement name's number
	const bool pooled_flag_;	// --pooled
	bool pooled_;				// --pooled, or a transaction pooler detected
	Conn conn_;
	bool listening_ = false;
	bool drain_woken_ = false;	// a NOTIFY genroc_drain came (its payload is not read)
	bool handback_ = true;	// complete_and_claim is there (false after 42883)
	bool many_ = true;		// complete_many is there (false after 42883)
	// The settings every statement carries, as set_config parameters
	// (name, value, ...), and the statement that applies them.
	std::vector<std::string> settings_;
	std::string settings_sql_;
	std::optional<std::string> test_clock_;
	std::string ticked_by_;	// set_ticked_by: the tick's application_name
	std::optional<DurabilityLevel> durability_;
	std::optional<int> commit_delay_;
	// The database this connection found without the genroc extension
	// (check_extension_version), for the message of the first call that
	// then fails; empty when the extension is there.
	std::string missing_extension_db_;
	std::optional<LogOptions> log_options_;

	// A changed setting, tried at once with a statement that carries it: a
	// value the server refuses fails here, as a session setting did, and
	// the settings before it stay.  A lost connection refuses nothing: the
	// new settings stay, for the next call.
	template <class Change>
	void change_settings(Change change) {
		auto before = std::make_tuple(test_clock_, durability_, log_options_, commit_delay_);
		change();
		rebuild_settings();
		try {
			exec("SELECT 1", {});
		} catch (const Error &e) {
			if (e.sqlstate.rfind("08", 0) != 0 && e.sqlstate.rfind("57P0", 0) != 0) {
				std::tie(test_clock_, durability_, log_options_, commit_delay_) = before;
				rebuild_settings();
			}
			throw;
		}
	}

	static std::string trim(std::string s) { return trimmed(std::move(s)); }

	// The settings, as local ones for each transaction (none is ever set
	// for the session).  The module is loaded first (genroc.durability() in
	// the same statement, before the set_config calls) when a genroc.*
	// setting is among them: it defines them when it loads, and a value set
	// before that would be taken unchecked.
	void rebuild_settings() {
		std::vector<std::pair<std::string, std::string>> kv = {{"TimeZone", "UTC"}};
		if (test_clock_) kv.emplace_back("genroc.test_clock", *test_clock_);
		if (durability_) kv.emplace_back("genroc.durability", durability_name(*durability_));
		if (log_options_) {
			const LogOptions &o = *log_options_;
			kv.emplace_back("genroc.log_payloads", o.payloads ? "on" : "off");
			kv.emplace_back("genroc.log_payload_max", std::to_string(o.payload_max));
			kv.emplace_back("genroc.log_retention", std::to_string(o.log_retention_ms) + "ms");
			kv.emplace_back("genroc.instance_retention", std::to_string(o.instance_retention_ms) + "ms");
			kv.emplace_back("genroc.object_threshold", std::to_string(o.object_threshold));
			kv.emplace_back("genroc.object_grace", std::to_string(o.object_grace_ms) + "ms");
		}
		if (commit_delay_) kv.emplace_back("commit_delay", std::to_string(*commit_delay_));
		settings_.clear();
		settings_sql_ = "SELECT ";
		if (test_clock_ || durability_ || log_options_) settings_sql_ += "genroc.durability(), ";
		for (size_t i = 0; i < kv.size(); ++i) {
			settings_.push_back(kv[i].first);
			settings_.push_back(kv[i].second);
			if (i) settings_sql_ += ", ";
			settings_sql_ += "set_config($" + std::to_string(2 * i + 1) + ", $" + std::to_string(2 * i + 2) + ", true)";
		}
	}

	void connect() {
		// A default connect_timeout, so that an unreachable host cannot hang a
		// health check or a reconnect; one given in the URL/conninfo wins
		// (libpq lets values expanded from dbname override earlier keywords).
		// The application name goes in the start-up packet, which a pooler
		// keeps for this client (pgbouncer sets it again on each server
		// connection it lends the client); one in the URL wins.
		const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
		const char *vals[] = {"5", "genroc", conninfo_.c_str(), nullptr};
		Conn c(PQconnectdbParams(keys, vals, 1));
		if (!c || PQstatus(c.get()) != CONNECTION_OK) {
			std::string msg = c ? PQerrorMessage(c.get()) : "out of memory";
			throw Error(CONNECTION_FAILURE, "cannot connect to PostgreSQL: " + trim(msg));
		}
		prepared_.clear();
		nonce_ = new_nonce();
		conn_ = std::move(c);
		try {
			check_extension_version();
			if (!pooled_flag_) pooled_ = pooler_detected_once(conn_.get(), conninfo_);
		} catch (...) {
			conn_.reset();
			throw;
		}
		if (pooled_) {
			// A notification would reach a server connection of the pool.
			listening_ = false;
			return;
		}
		bool was_listening = listening_;
		listening_ = false;
		if (was_listening) {
			exec("LISTEN genroc", {});
			exec("LISTEN genroc_drain", {});
			listening_ = true;
		}
	}

	// The binary calls the SQL API of exactly one extension version
	// (genroc.control's, set by CMake): any other installed one is refused with RC020 and a
	// hint that says what to upgrade, on every connect (an ALTER EXTENSION
	// may have happened while the binary ran).  Not transient: the binary
	// stops instead of retrying.
	void check_extension_version() {
		auto r = exec_plain("SELECT (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'genroc'), "
							"current_database()",
							{});
		const std::string want = GENROC_EXTENSION_VERSION;
		const std::string db = text(r.get(), 0, 1);
		// No extension at all: the connection is still good for /healthz
		// (the database answers); the first genroc call fails, naming the
		// missing function.
		missing_extension_db_ = PQgetisnull(r.get(), 0, 0) ? db : std::string();
		if (PQgetisnull(r.get(), 0, 0)) return;
		std::string have = text(r.get(), 0, 0);
		if (have == want) return;
		auto number = [](const std::string &v) {
			int major = 0, minor = 0;
			std::sscanf(v.c_str(), "%d.%d", &major, &minor);
			return std::pair{major, minor};
		};
		bool older = number(have) < number(want);
		throw Error(sqlstate::EXTENSION_VERSION_MISMATCH,
					"the genroc extension in database \"" + db + "\" is version " + have +
						"; this genroc binary speaks version " + want,
					{},
					older ? "Upgrade the extension: install the genroc " + want +
								" extension files on the server, then ALTER EXTENSION genroc UPDATE TO '" + want + "'."
						  : "Upgrade this genroc binary (and genctl) to version " + have + ".");
	}

	void ensure_connected() {
		if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK) {
			drop_connection();
			connect();
		}
	}

	void drop_connection() {
		conn_.reset();
		prepared_.clear();
	}

	bool drain_notifications() {
		bool any = false;
		while (PGnotify *n = PQnotifies(conn_.get())) {
			any = true;
			// Anyone who can connect may NOTIFY either channel, with any
			// payload: both are wake-ups only, and no payload is read.
			if (std::strcmp(n->relname, "genroc_drain") == 0) drain_woken_ = true;
			PQfreemem(n);
		}
		return any;
	}

	// The one path to the server: parameters as text, results as text, the
	// settings in the same transaction (exec_with_settings).  On a
	// connection not found pooled, the settings statement and the hot
	// path's (exec_hot: claim, the reports, renew, the heartbeat) are named
	// prepared statements, parsed and planned once per connection; the rest
	// stay unnamed.  What naming saves, in server instructions per task
	// (bench/pg_named.sh: the postmaster under callgrind, one client
	// running this store's claim and complete_many statements over one-task
	// jobs, each after the settings statement, all named against all
	// unnamed): 3,594,179 against 4,773,617 with one task per call (25 %
	// saved), 463,803 against 499,380 with 32 (7 %); a run again differs
	// by up to 2 %.  More than 3 % per task, so on a connection of its own
	// the hot path keeps them (session settings, as before, were 3,400,295
	// and 462,089: settings with each transaction cost 6 % and 0.4 %).
	// Their names carry a random nonce made per client connection
	// (genroc_<nonce>_<n>), so two clients never collide on one server
	// connection whatever lends it; each is made in the pipeline of its
	// first use (PQsendPrepare before the statement: no round trip more).
	// One the server connection does not have, or has already (26000,
	// 42P05), proves a transaction pooler the detection missed (this
	// client's transactions reach other server connections): the store
	// turns pooled from then on (unnamed statements, no LISTEN wait), says
	// so, and runs this call again unnamed (the failed pipeline did
	// nothing).  "Cached plan must not change result type" (0A000: an ALTER
	// EXTENSION changed a function's columns under it): this connection's
	// statements are dropped and this call runs unnamed.
	Result exec(const char *sql, std::initializer_list<Param> params) { return run(sql, params, false); }
	Result exec_hot(const char *sql, std::initializer_list<Param> params) { return run(sql, params, true); }

	Result run(const char *sql, std::initializer_list<Param> params, bool hot) {
		ensure_connected();
		if (pooled_) return exec_with_settings(sql, params, false, false);
		try {
			return exec_with_settings(sql, params, true, hot);
		} catch (const Error &e) {
			if (!conn_) throw;
			if (e.sqlstate == "26000" || e.sqlstate == "42P05") {
				prepared_.clear();
				pooled_ = true;
				listening_ = false;
				log::warn("a transaction pooler is in front of PostgreSQL (a prepared statement of this "
						  "connection was missing or there already): from now on, unnamed statements and "
						  "work polled (--poll-interval) instead of LISTEN; --pooled says so from the start",
						  {{"sqlstate", e.sqlstate}});
				ensure_connected();
				return exec_with_settings(sql, params, false, false);
			}
			if (e.sqlstate != "0A000") throw;
			const auto made = std::move(prepared_);	// a reconnect meanwhile clears prepared_
			prepared_.clear();
			for (const auto &[text, name] : made) {
				try {
					exec_plain(("DEALLOCATE " + name).c_str(), {});
				} catch (const Error &) {
					if (!conn_) throw;
				}
			}
			ensure_connected();
			return exec_with_settings(sql, params, false, false);
		}
	}

	Result exec_plain(const char *sql, std::initializer_list<Param> params) {
		ensure_connected();
		const std::vector<const char *> values = param_values(params);
		return checked(Result(PQexecParams(conn_.get(), sql, static_cast<int>(values.size()), nullptr,
										   values.data(), nullptr, nullptr, 0)));
	}

	// One round trip, one implicit transaction: the settings statement and
	// the caller's, then a single Sync (PostgreSQL runs what comes before a
	// Sync as one transaction, so set_config(..., true) holds for the
	// statement and is gone after it; a pooler keeps the server connection
	// until the transaction ends).  A failed settings statement aborts the
	// caller's, which is then not run.  `named_settings`, `named`: the
	// settings statement, the caller's, as this connection's named prepared
	// statements, each made (PQsendPrepare) in the pipeline of its first use.
	Result exec_with_settings(const char *sql, std::initializer_list<Param> params, bool named_settings,
							  bool named) {
		PGconn *c = conn_.get();
		const std::vector<const char *> values = param_values(params);
		std::vector<const char *> settings;
		settings.reserve(settings_.size());
		for (const auto &v : settings_) settings.push_back(v.c_str());
		auto lost = [&](const std::string &state) {
			std::string msg = PQerrorMessage(c);
			drop_connection();
			throw Error(state, "connection to PostgreSQL lost: " + trim(msg));
		};
		// What each result up to the Sync answers, in order: a statement
		// made (its text) or one run (empty).
		std::vector<std::pair<std::string, std::string>> sent;	// text, name
		auto send = [&](const std::string &text, const std::vector<const char *> &vals, bool named) {
			const int n = static_cast<int>(vals.size());
			if (!named) {
				sent.emplace_back();
				return PQsendQueryParams(c, text.c_str(), n, nullptr, vals.data(), nullptr, nullptr, 0) == 1;
			}
			std::string name;
			auto it = prepared_.find(text);
			if (it != prepared_.end()) {
				name = it->second;
			} else {
				name = "genroc_" + nonce_ + "_" + std::to_string(++statements_made_);
				sent.emplace_back(text, name);
				if (PQsendPrepare(c, name.c_str(), text.c_str(), n, nullptr) != 1) return false;
			}
			sent.emplace_back();
			return PQsendQueryPrepared(c, name.c_str(), n, vals.data(), nullptr, nullptr, 0) == 1;
		};
		if (PQenterPipelineMode(c) != 1 || !send(settings_sql_, settings, named_settings) || !send(sql, values, named) ||
			PQpipelineSync(c) != 1)
			lost(CONNECTION_FAILURE);
		// Every result up to the Sync's; NULL ends one statement's results.
		std::vector<Result> got;
		bool synced = false;
		for (int guard = 0; guard < 32 && PQstatus(c) == CONNECTION_OK; ++guard) {
			PGresult *r = PQgetResult(c);
			if (!r) continue;
			if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
				PQclear(r);
				synced = true;
				break;
			}
			got.emplace_back(r);
		}
		if (!synced || PQstatus(c) != CONNECTION_OK || PQexitPipelineMode(c) != 1) {
			// The server (or the pooler: "server conn crashed?", 08P01) said
			// why before it went: keep its SQLSTATE when it is a connection's.
			std::string state = CONNECTION_FAILURE;
			for (auto &r : got) {
				const char *s = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
				if (s && (std::strncmp(s, "08", 2) == 0 || std::strncmp(s, "57P0", 4) == 0)) {
					state = s;
					break;
				}
			}
			lost(state);
		}
		if (got.size() != sent.size()) lost("08P01");
		// A statement made is kept even when the transaction fails (they are
		// not transactional); the first failure says why (those after it
		// were not run).
		for (size_t i = 0; i < got.size(); ++i)
			if (!sent[i].first.empty() && PQresultStatus(got[i].get()) == PGRES_COMMAND_OK)
				prepared_[sent[i].first] = sent[i].second;
		for (size_t i = 0; i + 1 < got.size(); ++i) {
			auto st = PQresultStatus(got[i].get());
			if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) checked(std::move(got[i]));	// throws
		}
		return checked(std::move(got.back()));
	}

	// r as the caller's result, or the Error it carries.
	Result checked(Result r) {
		auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
		if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) return r;

		if (!r || PQstatus(conn_.get()) != CONNECTION_OK) {
			std::string msg = PQerrorMessage(conn_.get());
			const char *state = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
			drop_connection();
			throw Error(state && std::strncmp(state, "57P0", 4) == 0 ? state : CONNECTION_FAILURE,
						"connection to PostgreSQL lost: " + trim(msg));
		}
		auto field = [&](int code) {
			const char *v = PQresultErrorField(r.get(), code);
			return v ? std::string(v) : std::string();
		};
		std::string state = field(PG_DIAG_SQLSTATE);
		std::string message = field(PG_DIAG_MESSAGE_PRIMARY);
		// No SQLSTATE: libpq made the error itself, not the server (a pooled
		// connection whose server went away in a crash restart fails so
		// before PQstatus says it is bad).  The connection is not to be
		// trusted: a connection failure, with libpq's text.
		if (state.empty()) {
			std::string msg = trim(PQresultErrorMessage(r.get()));
			if (msg.empty()) msg = trim(PQerrorMessage(conn_.get()));
			drop_connection();
			throw Error(CONNECTION_FAILURE,
						"connection to PostgreSQL lost: " + (msg.empty() ? std::string("no reason given") : msg));
		}
		// A database without the extension: say what to run, not only
		// `schema "genroc" does not exist`, which leaves a newcomer guessing.
		if (!missing_extension_db_.empty() && (state == "3F000" || state == "42883") &&
			message.find("genroc") != std::string::npos)
			throw Error(state,
						"the genroc extension is not installed in database \"" + missing_extension_db_ + "\" (" +
							message + ")",
						field(PG_DIAG_MESSAGE_DETAIL),
						"A superuser creates it: psql -d " + missing_extension_db_ +
							" -c 'CREATE EXTENSION genroc' (after make install on the server), then grants the "
							"roles their genroc_* group; docs/getting-started.md \"PostgreSQL\".");
		throw Error(state.empty() ? "XX000" : state, message, field(PG_DIAG_MESSAGE_DETAIL),
					field(PG_DIAG_MESSAGE_HINT));
	}

	// complete_and_claim / fail_and_claim's row; an extension without them
	// (undefined_function: an older server, e.g. bench/ab.sh's base side)
	// gets the plain report from here on.
	template <class Plain>
	Report handback_report(const char *sql, std::initializer_list<Param> params, Plain plain) {
		Result r;
		try {
			r = exec_hot(sql, params);
		} catch (const Error &e) {
			if (e.sqlstate != "42883") throw;
			handback_ = false;
			return {plain(), std::nullopt};
		}
		Report out;
		out.status = text(r.get(), 0, 0);
		if (!PQgetisnull(r.get(), 0, 1)) out.next = task_at(r.get(), 0, 1);
		return out;
	}

	std::string scalar(const char *sql, std::initializer_list<Param> params) { return first_cell(exec(sql, params)); }

	// The first row's first column, or "" for no row.
	static std::string first_cell(const Result &r) { return PQntuples(r.get()) ? text(r.get(), 0, 0) : std::string(); }

	json rows_as_json(const char *sql, std::initializer_list<Param> params) {
		auto r = exec(sql, params);
		json a = json::array();
		for (int i = 0; i < PQntuples(r.get()); i++) a.push_back(jsonb(r.get(), i, 0));
		return a;
	}
};

}  // namespace

std::unique_ptr<Store> open_pg_store(const std::string &conninfo, bool pooled) {
	return std::make_unique<PgStore>(conninfo, pooled);
}

}  // namespace genroc
