// engine_store.cpp — the Store interface over the engine, in-process: each
// operation is the engine's (the file named at each group), in one
// transaction of the concrete store, its result in the Store's types.  The
// argument checks made before a JSON value is dumped (limits::) are the
// store's, as PostgreSQL's jsonb input makes them before the SQL function.
#include "engine_store.hpp"

#include <unistd.h>

#include "admin.hpp"
#include "aliases.hpp"
#include "callbacks.hpp"
#include "claim.hpp"
#include "control.hpp"
#include "engine.hpp"
#include "engine/metrics.hpp"
#include "instances.hpp"
#include "limits.hpp"
#include "many.hpp"
#include "objects.hpp"
#include "redrive.hpp"
#include "retention.hpp"
#include "start.hpp"
#include "tick.hpp"
#include "tokens.hpp"

namespace genroc {

namespace {

// A JSON argument's text as the engine takes a jsonb argument's.
std::string text_of(const json &v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }
std::optional<std::string> text_or_none(const json &v) {
	return v.is_null() ? std::nullopt : std::optional<std::string>(text_of(v));
}
StartResult start_result(const engine::Started &s) { return {s.id, s.is_new, s.status}; }
std::optional<std::string> values_option(bool refs) {
	return refs ? std::optional<std::string>(R"({"values": "ref"})") : std::nullopt;
}

}  // namespace

bool EngineStore::flushes(Commit c) const {
	switch (c) {
		case Commit::outside:
		case Commit::only_once_claim:
		case Commit::only_once_report: return level_ >= DurabilityLevel::essential;
		case Commit::terminal: return level_ >= DurabilityLevel::terminal;
		case Commit::progress: return level_ >= DurabilityLevel::strict;
	}
	return false;
}

std::optional<engine::Rows> EngineStore::store_answer(engine::Stmt s, engine::Params params) {
	const engine::Param *p = params.begin();
	engine::Rows rows;
	using Cells = std::vector<std::optional<std::string>>;
	switch (s) {
		case engine::Stmt::RETENTION_SETTINGS:	// engine/retention.cpp: in microseconds
			rows.emplace_back(Cells{std::to_string(log_options_.log_retention_ms * 1000),
									std::to_string(log_options_.instance_retention_ms * 1000),
									std::to_string(log_options_.object_grace_ms * 1000), "1"});
			return rows;
		case engine::Stmt::TICK_WHO: {
			// set_ticked_by's name (kind binary for "genroc worker <id>"), else "pid <pid>"
			const std::string by = ticked_by_.empty() ? "pid " + std::to_string(::getpid()) : ticked_by_.substr(0, 200);
			rows.emplace_back(Cells{by, by.rfind("genroc worker ", 0) == 0 ? "binary" : "session", ""});
			return rows;
		}
		case engine::Stmt::START_PARSE_TIME: {
			// engine/start.cpp: microseconds (NULL: it does not parse), whether in range
			int64_t ms = 0;
			if (!asl::parse_timestamptz(p[0].text(), ms))
				rows.emplace_back(Cells{std::nullopt, std::nullopt});
			else
				rows.emplace_back(Cells{std::to_string(ms * 1000), (ms >= 0 && ms < 253402300800000) ? "1" : "0"});
			return rows;
		}
		case engine::Stmt::FLUSH_COMMIT: {
			const std::string c = p[0].text();
			flush_on_commit(c == "terminal"			   ? Commit::terminal
							: c == "only_once_claim"  ? Commit::only_once_claim
							: c == "only_once_report" ? Commit::only_once_report
							: c == "outside"		  ? Commit::outside
													  : Commit::progress);
			return rows;
		}
		default: return std::nullopt;
	}
}

// ---- definitions and aliases (engine/definitions.cpp, engine/aliases.cpp)

DefineResult EngineStore::define(const std::string &name, const json &definition,
								 const std::optional<std::string> &source) {
	limits::check_definition_depth(definition);	 // before dump() recurses over it
	const std::string text = source ? *source : definition.dump();
	return write(Commit::progress, [&](engine::Port &port) {
		engine::Defined d = engine::define(port, name, text, source.has_value());
		return DefineResult{d.name, d.version, d.is_new};
	});
}

json EngineStore::list_definitions() {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const auto &d : engine::list_definitions(port))
			out.push_back({{"name", d.name}, {"version", d.version}, {"created_at", engine::iso_us(d.created_us)}});
		return out;
	});
}

json EngineStore::get_definition(const std::string &name, std::optional<int> version) {
	return read([&](engine::Port &port) { return json::parse(engine::get_definition(port, name, version)); });
}

void EngineStore::undefine(const std::string &name, std::optional<int> version) {
	write(Commit::progress, [&](engine::Port &port) { engine::undefine(port, name, version); });
}

json EngineStore::alias_set(const std::string &name, const std::string &alias, const json &routing,
							const std::optional<std::string> &description) {
	limits::check_json_depth(routing, "the routing");
	return write(Commit::progress, [&](engine::Port &port) {
		return json::parse(engine::alias_set(port, name, alias, routing.dump(), description));
	});
}

void EngineStore::alias_drop(const std::string &name, const std::string &alias) {
	write(Commit::progress, [&](engine::Port &port) { engine::alias_drop(port, name, alias); });
}

json EngineStore::get_alias(const std::string &name, const std::string &alias) {
	return read([&](engine::Port &port) { return json::parse(engine::get_alias(port, name, alias)); });
}

json EngineStore::list_aliases(const std::string &name) {
	return read([&](engine::Port &port) { return json::parse(engine::list_aliases(port, name)); });
}

// ---- instances (engine/start.cpp, control.cpp, redrive.cpp, instances.cpp, objects.cpp)

StartResult EngineStore::start(const std::string &definition, const json &input, const json &options) {
	const std::string text = text_of(input);
	return write(Commit::outside, [&](engine::Port &port) -> StartResult {
		const auto rows = engine::start(port, definition, text, options);
		if (rows.empty()) throw Error("XX000", "the instance under the idempotency key is gone");
		return start_result(rows.front());
	});
}

// genroc.start_many: start for each input, in one transaction (one commit).
std::vector<StartResult> EngineStore::start_many(const std::string &definition, const json &inputs,
												 const json &options) {
	return write(Commit::outside, [&](engine::Port &port) {
		std::vector<StartResult> out;
		for (const auto &s : engine::start_many(port, definition, inputs, options)) out.push_back(start_result(s));
		return out;
	});
}

std::string EngineStore::cancel(int64_t id, const std::optional<std::string> &error,
								const std::optional<std::string> &cause) {
	return write(Commit::outside, [&](engine::Port &port) { return engine::cancel(port, id, error, cause); });
}

std::string EngineStore::retry(int64_t id) {
	return write(Commit::outside, [&](engine::Port &port) { return engine::run_again(port, id, std::nullopt); });
}

std::string EngineStore::resume(int64_t id, const json &output) {
	limits::check_json_depth(output, "the task result");
	return write(Commit::outside, [&](engine::Port &port) { return engine::run_again(port, id, text_of(output)); });
}

std::string EngineStore::redrive(int64_t id, const std::optional<std::string> &client_token) {
	return write(Commit::outside, [&](engine::Port &port) { return engine::redrive(port, id, client_token); });
}

json EngineStore::get_instance(int64_t id, bool refs) {
	return read([&](engine::Port &port) { return json::parse(engine::get_instance(port, id, values_option(refs))); });
}

json EngineStore::list_instances(const json &filter) {
	limits::check_json_depth(filter, "the filter");	 // before dump() recurses over it
	const std::optional<std::string> text = text_or_none(filter);
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const std::string &j : engine::list_instances(port, text)) out.push_back(json::parse(j));
		return out;
	});
}

json EngineStore::history(int64_t id, bool refs) {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const engine::LogEntry &e : engine::history(port, id, values_option(refs)))
			out.push_back({{"seq", e.seq},
						   {"at", engine::iso_us(e.at_us)},
						   {"event", e.event},
						   {"state", e.state ? json(*e.state) : json(nullptr)},
						   {"detail", e.detail ? json::parse(*e.detail) : json(nullptr)}});
		return out;
	});
}

json EngineStore::get_object(const std::string &ref) {
	return read([&](engine::Port &port) { return json::parse(engine::get_object(port, ref)); });
}

// ---- workers and leases (engine/workers.cpp, claim.cpp, control.cpp, report.cpp, many.cpp)

json EngineStore::worker_register(const std::string &worker, const json &options) {
	limits::check_json_depth(options, "the worker options");  // before dump() recurses over it
	const std::optional<std::string> text = text_or_none(options);
	return write(Commit::progress, [&](engine::Port &port) {
		std::unique_ptr<WorkerHost> host = worker_host(worker);
		json out = json::parse(engine::worker_register(port, *host, worker, text));
		host->registered();
		return out;
	});
}

json EngineStore::worker_heartbeat(const std::string &worker) {
	return write(Commit::progress, [&](engine::Port &port) { return json::parse(engine::worker_heartbeat(port, worker)); });
}

json EngineStore::worker_drain(const std::string &worker) {
	return write(Commit::progress, [&](engine::Port &port) { return json::parse(engine::worker_drain(port, worker)); });
}

void EngineStore::worker_stop(const std::string &worker) {
	write(Commit::progress, [&](engine::Port &port) { engine::worker_stop(port, worker); });
	worker_stopped(worker);
}

json EngineStore::list_workers() {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const auto &w : engine::list_workers(port))
			out.push_back({{"worker", w.worker},
						   {"host", w.host},
						   {"queues", w.queues},
						   {"concurrency", w.concurrency ? json(*w.concurrency) : json(nullptr)},
						   {"lease_duration_ms", w.lease_duration_ms},
						   {"stale_after_ms", w.stale_after_ms},
						   {"started_at", engine::iso_us(w.started_us)},
						   {"heartbeat_at", engine::iso_us(w.heartbeat_us)},
						   {"stopped_at", w.stopped_us ? json(engine::iso_us(*w.stopped_us)) : json(nullptr)},
						   {"live", w.live},
						   {"running", w.running},
						   {"durability", w.durability},
						   {"draining", w.draining}});
		return out;
	});
}

std::optional<int64_t> EngineStore::claim_wake(const std::vector<std::string> &queues) {
	return read([&](engine::Port &port) { return engine::claim_wake(port, queues); });
}

std::vector<Task> EngineStore::claim(const std::string &worker, const std::vector<std::string> &queues, int n) {
	return write(Commit::progress, [&](engine::Port &port) {
		std::vector<Task> out;
		for (engine::HandedBack &t : engine::claim(port, worker, queues, n, port.now_ms() * 1000).tasks)
			out.push_back(task_of(std::move(t)));
		return out;
	});
}

std::vector<int64_t> EngineStore::renew(const std::string &worker, const std::vector<int64_t> &instance_ids) {
	return write(Commit::progress, [&](engine::Port &port) { return engine::renew(port, worker, instance_ids); });
}

void EngineStore::release(const std::string &worker, const std::vector<int64_t> &instance_ids) {
	write(Commit::progress, [&](engine::Port &port) { engine::release(port, worker, instance_ids); });
}

std::string EngineStore::complete(int64_t id, int64_t epoch, const json &output) {
	limits::check_json_depth(output, "the task result");
	return write(Commit::progress,
				 [&](engine::Port &port) { return engine::complete(port, id, epoch, text_of(output)); });
}

std::string EngineStore::fail(int64_t id, int64_t epoch, const std::string &error, const std::string &cause) {
	return write(Commit::progress, [&](engine::Port &port) { return engine::fail(port, id, epoch, error, cause); });
}

Task EngineStore::task_of(engine::HandedBack b) {
	Task t;
	t.instance_id = b.instance_id;
	t.epoch = b.epoch;
	t.state = b.state.value_or("");
	t.resource = b.resource.value_or("");
	t.input = json::parse(b.input);
	t.only_once = b.only_once;
	if (b.timeout_s) t.timeout_s = static_cast<int>(*b.timeout_s);
	t.attempt = static_cast<int>(b.attempt);
	t.lease_expires = asl::format_time(b.lease_expires_us / 1000);
	t.queue = std::move(b.queue);
	return t;
}

Store::Report EngineStore::report_of(engine::ReportResult r) {
	Report out;
	out.status = std::move(r.status);
	if (r.next) out.next = task_of(std::move(*r.next));
	return out;
}

// genroc.complete_and_claim / fail_and_claim: the report as above, and the
// next task handed back to the worker when it may take it.
Store::Report EngineStore::complete_and_claim(int64_t id, int64_t epoch, const json &output, const std::string &worker,
											  const std::vector<std::string> &queues) {
	limits::check_json_depth(output, "the task result");
	return write(Commit::progress, [&](engine::Port &port) {
		return report_of(engine::complete_and_claim(port, id, epoch, text_of(output), worker, queues));
	});
}

Store::Report EngineStore::fail_and_claim(int64_t id, int64_t epoch, const std::string &error, const std::string &cause,
										  const std::string &worker, const std::vector<std::string> &queues) {
	return write(Commit::progress, [&](engine::Port &port) {
		return report_of(engine::fail_and_claim(port, id, epoch, error, cause, worker, queues));
	});
}

// genroc.complete_many: each report as complete (complete_and_claim with a
// worker) makes it, in one transaction; a report on a missing instance or a
// lost lease is answered in its Outcome.
std::vector<Store::Outcome> EngineStore::complete_many(const std::vector<Completion> &reports,
													   const std::string &worker,
													   const std::vector<std::string> &queues) {
	engine::ManyReports many;
	many.instances.emplace();
	many.epochs.emplace();
	many.outputs.emplace();
	for (const auto &c : reports) {
		limits::check_json_depth(c.output, "the task result");
		many.instances->emplace_back(c.instance_id);
		many.epochs->emplace_back(c.epoch);
		many.outputs->emplace_back(text_of(c.output));
	}
	std::optional<std::string> w;
	std::optional<std::vector<std::string>> q;
	if (!worker.empty()) {
		w = worker;
		q = queues;
	}
	return write(Commit::progress, [&](engine::Port &port) {
		std::vector<Outcome> out;
		for (auto &m : engine::complete_many(port, many, w, q)) {
			Outcome o;
			o.instance_id = m.instance_id;
			o.status = m.status.value_or("");
			o.sqlstate = m.sqlstate.value_or("");
			if (m.next) o.next = task_of(std::move(*m.next));
			out.push_back(std::move(o));
		}
		return out;
	});
}

// ---- activities and events (engine/control.cpp, engine/callbacks.cpp: for
// activities and .waitForTaskToken tasks alike)

std::vector<ActivityTask> EngineStore::claim_activity(const std::string &activity, const std::string &worker, int n) {
	return write(Commit::progress, [&](engine::Port &port) {
		std::vector<ActivityTask> out;
		for (auto &c : engine::claim_activity(port, activity, worker, n)) {
			ActivityTask t;
			t.token = std::move(c.token);
			t.instance_id = c.instance_id;
			t.activity = std::move(c.activity);
			t.input = json::parse(c.input);
			if (c.heartbeat_s) t.heartbeat_s = static_cast<int>(*c.heartbeat_s);
			if (c.timeout_s) t.timeout_s = static_cast<int>(*c.timeout_s);
			out.push_back(std::move(t));
		}
		return out;
	});
}

std::string EngineStore::activity_succeed(const std::string &token, const json &output) {
	limits::check_json_depth(output, "the task result");
	return write(Commit::outside,
				 [&](engine::Port &port) { return engine::task_token_succeed(port, token, text_of(output)); });
}

std::string EngineStore::activity_fail(const std::string &token, const std::string &error, const std::string &cause) {
	return write(Commit::outside, [&](engine::Port &port) { return engine::task_token_fail(port, token, error, cause); });
}

void EngineStore::activity_heartbeat(const std::string &token) {
	write(Commit::progress, [&](engine::Port &port) { engine::task_token_heartbeat(port, token); });
}

std::string EngineStore::emit(int64_t id, const std::string &name, const json &payload) {
	limits::check_json_depth(payload, "the event payload");	// before dump() recurses over it
	return write(Commit::outside, [&](engine::Port &port) { return engine::emit(port, id, name, text_of(payload)); });
}

// ---- queues, tokens, roles, figures (engine/queues.cpp, tokens.cpp, metrics.cpp)

json EngineStore::queue_set(const std::string &name, const json &options) {
	limits::check_json_depth(options, "the queue options");	 // before dump() recurses over it
	const std::optional<std::string> text = text_or_none(options);
	return write(Commit::outside, [&](engine::Port &port) { return json::parse(engine::queue_set(port, name, text)); });
}

void EngineStore::queue_drop(const std::string &name) {
	write(Commit::outside, [&](engine::Port &port) { engine::queue_drop(port, name); });
}

json EngineStore::list_queues() {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const auto &q : engine::list_queues(port)) out.push_back(json::parse(engine::queue_row_json(q)));
		return out;
	});
}

json EngineStore::token_create(const std::string &name, const std::vector<std::string> &permissions,
							   const std::string &created_by, const std::optional<std::string> &token_text) {
	return write(Commit::outside, [&](engine::Port &port) {
		return json::parse(engine::token_create(
			port, name, std::vector<std::optional<std::string>>(permissions.begin(), permissions.end()), created_by,
			token_text));
	});
}

json EngineStore::token_verify(const std::string &token) {
	return read([&](engine::Port &port) -> json {
		auto found = engine::token_verify(port, token);
		return found ? json::parse(*found) : json(nullptr);
	});
}

json EngineStore::token_list() {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const auto &t : engine::token_list(port)) out.push_back(json::parse(t));
		return out;
	});
}

void EngineStore::token_revoke(const std::string &id) {
	write(Commit::outside, [&](engine::Port &port) { engine::token_revoke(port, id); });
}

json EngineStore::capabilities() {
	return read([&](engine::Port &port) { return json::parse(engine::capabilities(port)); });
}

json EngineStore::metrics(int max_definitions) {
	return read([&](engine::Port &port) { return json::parse(engine::metrics(port, max_definitions)); });
}

json EngineStore::tickers() {
	return read([&](engine::Port &port) {
		json out = json::array();
		for (const auto &t : engine::tickers(port))
			out.push_back({{"ticked_by", t.ticked_by},
						   {"kind", t.kind},
						   {"role", t.role},
						   {"first_tick_at", engine::iso_us(t.first_tick_us)},
						   {"last_tick_at", engine::iso_us(t.last_tick_us)},
						   {"ago_ms", t.ago_ms},
						   {"ticks", t.ticks}});
		return out;
	});
}

// ---- time and retention (engine/tick.cpp, engine/retention.cpp: the
// retention settings and the ticker's name are this store's, through its
// store-answered statements)

json EngineStore::tick(int limit) {
	if (limit < 1)
		throw Error(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not " + std::to_string(limit));
	return write(Commit::progress, [&](engine::Port &port) { return json::parse(engine::tick(port, limit)); });
}

json EngineStore::prune(int64_t log_retention_ms, int64_t instance_retention_ms, int limit) {
	if (limit < 1)
		throw Error(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not " + std::to_string(limit));
	if (log_retention_ms < 0 || instance_retention_ms < 0)
		throw Error(sqlstate::INVALID_PARAMETER_VALUE, "a retention must not be negative", "",
					"Use 0 to keep everything of that kind.");
	return write(Commit::progress, [&](engine::Port &port) {
		return json::parse(engine::prune(port, engine::Retention::of_us(log_retention_ms * 1000),
										 engine::Retention::of_us(instance_retention_ms * 1000), limit));
	});
}

}  // namespace genroc
