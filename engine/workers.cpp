// workers.cpp — genroc.worker_register, worker_heartbeat, worker_drain,
// worker_stop and list_workers (extension/sql/50_workers.sql declares them),
// once for both stores.
#include "admin.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "steps.hpp"

namespace genroc::engine {

namespace {

[[noreturn]] void not_registered(const std::string &worker, bool found) {
	raise(Msg::WORKER_NOT_REGISTERED, {worker},
		  message_text(found ? Msg::WORKER_NOT_REGISTERED_STOPPED_DETAIL : Msg::WORKER_NOT_REGISTERED_UNKNOWN_DETAIL,
					   {}),
		  message_text(Msg::WORKER_NOT_REGISTERED_HINT, {}));
}

}  // namespace

// genroc._live_worker: a registered, not stopped worker, its row locked;
// RC006 otherwise.
void live_worker(Port &port, const std::optional<std::string> &worker) {
	if (!worker) raise(Msg::ARG_NULL, {"p_worker"});
	Rows r = port.query(Stmt::WORKER_LIVE, {*worker});
	if (r.empty() || !r[0].boolean(0)) not_registered(*worker, !r.empty());
}

namespace {

// Gives back every running task leased to the worker (the lapse path,
// engine::interrupt).
int64_t take_back(Port &port, const std::string &worker, const std::string &reason) {
	int64_t n = 0;
	for (const Row &r : port.query(Stmt::WORKER_LEASES, {worker})) {
		interrupt(port, r.i64(0), reason);
		n++;
	}
	return n;
}

std::string worker_json_text(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

// Semantics: extension/sql/50_workers.sql, above worker_register.
std::string worker_register(Port &port, WorkerHost &host, const std::optional<std::string> &worker,
							const std::optional<std::string> &options) {
	port.exec(Stmt::CHECK_WORKER, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!worker) raise(Msg::ARG_NULL, {"p_worker"});
	if (worker->empty()) raise(Msg::ARG_EMPTY, {"p_worker"});
	check_name(*worker, "p_worker");
	const json opts = parse_options(port, options, "the worker options");
	check_options(port, opts, {"concurrency", "host", "lease_duration", "pooled", "queues", "stale_after"},
				  "worker options");
	bool pooled = false;
	if (opts.contains("pooled")) {
		if (!opts["pooled"].is_boolean()) raise(Msg::WORKER_POOLED_NOT_BOOLEAN, {shown(port, opts["pooled"])});
		pooled = opts["pooled"].get<bool>();
	}
	std::string host_name;
	if (opts.contains("host")) {
		host_name = text_option(port, opts["host"], "host");
		check_name(host_name, "option \"host\"");
	}
	Duration lease{"10 seconds", 10'000}, stale{"30 seconds", 30'000};
	if (opts.contains("lease_duration")) lease = duration_option(port, opts["lease_duration"], "lease_duration");
	if (opts.contains("stale_after")) stale = duration_option(port, opts["stale_after"], "stale_after");
	json queues = json::array({"default"});
	if (opts.contains("queues")) {
		queues = opts["queues"];
		bool ok = queues.is_array() && !queues.empty();
		for (auto &q : queues) ok = ok && q.is_string() && !q.get<std::string>().empty();
		if (!ok) raise(Msg::WORKER_QUEUES_INVALID, {shown(port, queues)});
		for (auto &q : queues) check_name(q.get<std::string>(), "option \"queues\"");
	}
	std::optional<int64_t> concurrency;
	if (opts.contains("concurrency")) {
		concurrency = int_option(port, opts["concurrency"], "concurrency");
		if (*concurrency < 1)
			raise(Msg::OPTION_AT_LEAST, {"concurrency", "1", std::to_string(*concurrency)});
	}

	const int64_t now = port.now_ms();
	port.exec(Stmt::LOCK_WORKER, {*worker});
	Rows held = port.query(Stmt::WORKER_FOR_REGISTER, {*worker, now});
	if (!held.empty() && held[0].boolean(5)) {
		// held, its heartbeat fresh: is the process that registered it alive?
		const Row &h = held[0];
		const std::string heartbeat = iso_us(h.i64(1));
		const std::optional<bool> alive = host.holder_alive(*worker, h);
		const bool pg = port.dialect() == Dialect::postgres;
		if (alive == true)
			raise(Msg::WORKER_ID_IN_USE, {*worker, h.text(0)},
				  pg ? message_text(Msg::WORKER_ID_IN_USE_SESSION_DETAIL, {h.text(3), heartbeat})
					 : message_text(Msg::WORKER_ID_IN_USE_LOCK_DETAIL,
									{h.is_null(3) ? std::string() : " (pid " + h.text(3) + ")", heartbeat}),
				  message_text(Msg::WORKER_ID_IN_USE_HINT, {}));
		if (!alive)
			raise(Msg::WORKER_LIVENESS_UNKNOWN, {*worker, h.text(0)},
				  message_text(pg ? Msg::WORKER_LIVENESS_POOLED_DETAIL : Msg::WORKER_LIVENESS_LOCK_DETAIL,
							   {heartbeat, h.text(2)}),
				  message_text(Msg::WORKER_LIVENESS_HINT, {}));
		// its process died with its session: the id and its work are taken
		// back now rather than after stale_after
	}
	const std::optional<int64_t> session = host.session(pooled);
	port.exec(Stmt::WORKER_UPSERT, {*worker, host_name, lease.interval, lease.ms, stale.interval, stale.ms,
									JsonText{worker_json_text(queues)}, concurrency, pooled, session, host.durability(),
									now});
	// A restart after a crash: what this id still holds is taken back at
	// once, as a lapsed lease would be.
	const int64_t reclaimed = take_back(port, *worker, "worker registered again");
	return worker_json_text(json{{"worker", *worker}, {"reclaimed", reclaimed}});
}

// Returns {"drain": true} once a drain was requested (worker_drain).
std::string worker_heartbeat(Port &port, const std::optional<std::string> &worker) {
	port.exec(Stmt::CHECK_WORKER, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!worker) raise(Msg::ARG_NULL, {"p_worker"});
	Rows r = port.query(Stmt::WORKER_HEARTBEAT, {*worker, port.now_ms()});
	if (r.empty()) {
		Rows found = port.query(Stmt::WORKER_LIVE, {*worker});
		not_registered(*worker, !found.empty());
	}
	return r[0].boolean(0) ? "{\"drain\": true}" : "{\"drain\": false}";
}

// Semantics: extension/sql/50_workers.sql, above worker_drain.
std::string worker_drain(Port &port, const std::optional<std::string> &worker) {
	port.exec(Stmt::CHECK_WORKER_OPERATOR, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	live_worker(port, worker);
	port.exec(Stmt::WORKER_DRAIN, {*worker, port.now_ms()});
	port.exec(Stmt::NOTIFY_DRAIN, {});
	const int64_t running = port.query(Stmt::WORKER_RUNNING, {*worker}).at(0).i64(0);
	return worker_json_text(json{{"worker", *worker}, {"draining", true}, {"running", running}});
}

// The worker's leases are released (as genroc.release) and the row is
// marked stopped, so its id can be registered again at once.
void worker_stop(Port &port, const std::optional<std::string> &worker) {
	port.exec(Stmt::CHECK_WORKER, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	live_worker(port, worker);
	take_back(port, *worker, "worker stopped");
	port.exec(Stmt::WORKER_STOPPED, {*worker, port.now_ms()});
}

std::vector<WorkerRow> list_workers(Port &port) {
	std::vector<WorkerRow> out;
	for (const Row &r : port.query(Stmt::WORKERS_LIST, {port.now_ms()})) {
		WorkerRow w;
		w.worker = r.text(0);
		w.host = r.text(1);
		for (auto &q : parse_json(r.text(2), "the queues")) w.queues.push_back(q.get<std::string>());
		w.concurrency = r.oi64(3);
		w.lease_duration_ms = r.i64(4);
		w.stale_after_ms = r.i64(5);
		w.started_us = r.i64(6);
		w.heartbeat_us = r.i64(7);
		w.stopped_us = r.oi64(8);
		w.live = r.boolean(9);
		w.running = r.i64(10);
		w.durability = r.text(11);
		w.draining = r.boolean(12);
		out.push_back(std::move(w));
	}
	return out;
}

}  // namespace genroc::engine
