// steps.cpp — the step writer (apply_step): one interpreter step
// for a locked instance and the row where it stops.  The step itself is
// the engine's ask (engine/ask.cpp: the interpreter in-process); what
// follows is written once here: one row writer
// per outcome kind, each saying every column of the instance's position
// it leaves (Stop), all written by the one statement STEP_STOP (the
// waits of engine/children.cpp and a cancel write theirs through it too); the log
// rows in one insert; then what the outcome hands on: a fan-out, an event
// wait, a child's end (engine/children.cpp), a partition slot (reached
// through a statement).
#include "steps.hpp"

#include <algorithm>
#include <utility>

#include "admin.hpp"
#include "admission.hpp"
#include "ask.hpp"
#include "children.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "limits.hpp"
#include "report.hpp"

namespace genroc::engine {

int64_t write_stop(Port &port, int64_t id, const Stop &s) {
	const auto text = [](const std::optional<std::string> &v) { return v ? Param(*v) : Param::null(Param::Kind::text); };
	const auto i64 = [](const std::optional<int64_t> &v) { return v ? Param(*v) : Param::null(Param::Kind::i64); };
	const auto js = [](const std::optional<json> &v) {
		return v ? Param(JsonText{v->dump()}) : Param::null(Param::Kind::json);
	};
	Rows rows = port.query(Stmt::STEP_STOP,
						   {id, s.status, text(s.state), js(s.state_input), js(s.task_input), text(s.resource),
							i64(s.eligible_in), text(s.lease_owner), s.new_epoch, i64(s.lease_in), js(s.retry_counts),
							i64(s.attempt), i64(s.interruptions), s.only_once, i64(s.timeout_s), i64(s.timeout_in),
							i64(s.heartbeat_s), text(s.wait_kind), i64(s.wait_until), text(s.activity),
							text(s.activity_token), s.ended, js(s.output), text(s.error), text(s.cause),
							port.now_ms(), js(s.fanout)});
	if (rows.empty()) throw Error("XX000", "instance " + std::to_string(id) + " is missing");
	return rows[0].i64(0);
}

HandbackRoom handback_room(Port &port, const Handback &hb) {
	HandbackRoom room;
	Rows w = port.query(Stmt::STEP_HANDBACK_WORKER, {hb.worker});
	if (w.empty() || w[0].is_null(0)) return room;
	room.lease_ms = w[0].i64(0);
	const bool limited = w[0].boolean(1);
	for (const std::string &q : hb.queues) {
		if (!limited) {
			room.open.push_back(q);
			continue;
		}
		const QueueSettings s = queue_settings(port, q);
		if (s.rate || s.partition_rate) continue;
		if (s.global > 0) room.counted.emplace_back(q, s.global);
		else room.open.push_back(q);
	}
	return room;
}

std::optional<int64_t> handback_lease(Port &port, int64_t id, const Handback &hb) {
	Rows r = port.query(Stmt::STEP_HANDBACK_ROW, {id});
	if (r.empty() || r[0].is_null(0) || r[0].is_null(1) || r[0].text(0) != hb.worker) return std::nullopt;
	const std::string queue = r[0].text(1);
	if (std::find(hb.queues.begin(), hb.queues.end(), queue) == hb.queues.end()) return std::nullopt;
	const HandbackRoom room = handback_room(port, Handback{hb.worker, {queue}});
	if (!room.lease_ms) return std::nullopt;
	if (!room.open.empty()) return room.lease_ms;
	if (room.counted.empty()) return std::nullopt;
	const int64_t running = port.query(Stmt::STEP_HANDBACK_RUNNING, {queue, id}).at(0).i64(0);
	if (running >= room.counted.front().second) return std::nullopt;
	return room.lease_ms;
}

namespace {

std::optional<int64_t> opt_int(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() && it->is_number() ? std::optional<int64_t>(it->get<int64_t>()) : std::nullopt;
}
std::optional<std::string> opt_str(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() && it->is_string() ? std::optional<std::string>(it->get<std::string>()) : std::nullopt;
}
std::optional<json> opt_json(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() ? std::optional<json>(*it) : std::nullopt;
}
json log_row(const char *event, const std::optional<std::string> &state, json detail) {
	return {{"event", event}, {"state", state ? json(*state) : json(nullptr)}, {"detail", std::move(detail)}};
}

// ---- the row writers, one per outcome kind ------------------------------

// 'task': a handler task ready (eligible after its retry back-off), an
// activity waiting for its worker with a new token, or (a hand-back) the
// task leased to the reporting worker as claim leases it.
Stop task_stop(const json &out, const std::string &token, int64_t delay, int64_t attempt,
			   const std::optional<int64_t> &handback_lease_ms, const std::optional<std::string> &worker) {
	Stop s;
	const std::string resource = out.at("resource").get<std::string>();
	const bool activity = resource.rfind("activity:", 0) == 0;
	const bool handback = handback_lease_ms.has_value();
	const auto timeout = opt_int(out, "timeout_s");
	s.status = handback ? "running" : activity ? "waiting" : "ready";
	s.state = opt_str(out, "state");
	s.state_input = opt_json(out, "state_input");
	s.task_input = opt_json(out, "task_input");
	s.resource = resource;
	s.eligible_in = delay;
	if (handback) {
		s.lease_owner = worker;
		s.new_epoch = true;
		s.lease_in = *handback_lease_ms;
	}
	auto rc = out.find("retry_counts");
	s.retry_counts = rc != out.end() && !rc->is_null() ? *rc : json::array();
	s.attempt = attempt;
	s.interruptions = 0;
	s.only_once = out.value("only_once", json(false)).is_boolean() && out["only_once"].get<bool>();
	s.timeout_s = timeout;
	s.heartbeat_s = opt_int(out, "heartbeat_s");
	// handler tasks: TimeoutSeconds counts from the claim (set there)
	if (activity && timeout) s.timeout_in = delay + *timeout * 1000;
	else if (handback && timeout) s.timeout_in = *timeout * 1000;
	if (activity) {
		s.wait_kind = "activity";
		s.activity = resource.substr(9);
		s.activity_token = token;
	} else if (out.contains("token")) {
		// a .waitForTaskToken task keeps the token its input was made with
		s.activity_token = out["token"].is_string() ? out["token"].get<std::string>() : token;
	}
	return s;
}

// 'wait': a timer until until_ms.
Stop wait_stop(const json &out) {
	Stop s;
	s.status = "waiting";
	s.state = opt_str(out, "state");
	s.state_input = opt_json(out, "state_input");
	s.attempt = 0;
	s.interruptions = 0;
	s.wait_kind = "timer";
	s.wait_until = out.at("until_ms").get<int64_t>();
	return s;
}

// 'succeeded' / 'failed': the end; a failed instance keeps where it failed
// and that state's input (retry / resume run it again from there).
Stop end_stop(const json &out, const std::string &kind, const std::optional<std::string> &last_state) {
	Stop s;
	const bool ok = kind == "succeeded";
	s.status = kind;
	s.state = last_state;
	if (!ok) s.state_input = opt_json(out, "state_input");
	s.ended = true;
	if (ok) s.output = opt_json(out, "output");
	else {
		s.error = opt_str(out, "error");
		s.cause = opt_str(out, "cause");
	}
	return s;
}

}  // namespace

std::string apply_step(Port &port, int64_t id, const json &request, const json &first, const Handback *handback,
					   const std::string *first_text) {
	const int64_t now = port.now_ms();
	Asked a = ask(port, id, request, now);
	const json answer = std::move(a.answer);
	const std::optional<std::string> row_state = std::move(a.state);
	const bool has_parent = a.has_parent;
	const bool partitioned = a.partitioned;
	const std::string token = std::move(a.token);

	// an Assign changed the variables: kept before the outcome's rows, so a
	// fan-out's children copy them
	if (auto v = answer.find("variables"); v != answer.end())
		port.exec(Stmt::STEP_VARIABLES, {id, JsonText{v->dump()}});
	const json &out = answer.at("outcome");
	const json entered = answer.value("entered", json::array());
	std::optional<std::string> last_state = row_state;
	if (!entered.empty()) last_state = entered.back().at("state").get<std::string>();

	// the log: p_first, the 'entered' rows, then the outcome's rows
	json rows = json::array();
	if (!first.is_null()) {
		json f = first;
		rows.push_back(std::move(f));
	}
	for (const auto &e : entered)
		rows.push_back({{"event", "entered"}, {"state", e.at("state")}, {"detail", {{"type", e.at("type")}}},
						{"plain", true}});

	const std::string kind = out.at("kind").get<std::string>();
	std::string status;
	bool notify = false;
	if (kind == "task") {
		const int64_t delay = out.value("delay_ms", json(0)).is_number() ? out["delay_ms"].get<int64_t>() : 0;
		int64_t attempt = 0;
		if (auto rc = out.find("retry_counts"); rc != out.end() && rc->is_array())
			for (const auto &c : *rc) attempt += c.is_number() ? c.get<int64_t>() : std::stoll(c.get<std::string>());
		const std::string resource = out.at("resource").get<std::string>();
		const bool activity = resource.rfind("activity:", 0) == 0;
		// the report hands the next task back to its worker (complete_and_claim,
		// fail_and_claim, which checked that the worker may take it): leased
		// here as claim leases it, in this one update
		std::optional<int64_t> lease_ms;
		if (handback && !activity && delay == 0) lease_ms = handback_lease(port, id, *handback);
		const Stop s = task_stop(out, token, delay, attempt, lease_ms,
								 handback ? std::optional<std::string>(handback->worker) : std::nullopt);
		const int64_t epoch = write_stop(port, id, s);
		status = s.status;
		rows.push_back(log_row("task_scheduled", s.state,
							   {{"resource", resource}, {"input", out.value("task_input", json(nullptr))},
								{"attempt", attempt}, {"delay_ms", delay}}));
		if (lease_ms)
			// claim's task_started row, as claim writes it
			rows.push_back(log_row("task_started", s.state,
								   {{"worker", handback->worker}, {"epoch", epoch}, {"attempt", attempt}}));
		else if (status == "ready" && delay == 0)
			notify = true;
	} else if (kind == "callback") {
		// a .waitForTaskToken task's handler returned: the instance waits for
		// the result sent with the token the task kept
		status = "waiting";
		port.exec(Stmt::STEP_CALLBACK, {id, now});
		// the handler's return is not the task's result: logged as handed over
		if (!rows.empty() && !first.is_null() && first.value("event", json()) == json("task_succeeded"))
			rows[0]["event"] = "task_submitted";
	} else if (kind == "parallel" || kind == "map" || kind == "call" || kind == "event") {
		// written after the log rows below: a fan-out and an event wait write
		// their own rows after them
	} else if (kind == "wait") {
		const Stop s = wait_stop(out);
		write_stop(port, id, s);
		status = s.status;
		rows.push_back(log_row("wait_started", s.state, {{"until", asl::format_time(*s.wait_until)}}));
	} else if (kind == "succeeded" || kind == "failed") {
		if (kind == "failed")
			if (auto st = opt_str(out, "state")) last_state = st;
		const Stop s = end_stop(out, kind, last_state);
		write_stop(port, id, s);
		status = s.status;
		rows.push_back(log_row(kind.c_str(), last_state,
							   kind == "succeeded" ? json{{"output", out.value("output", json(nullptr))}}
												   : json{{"error", out.value("error", json(nullptr))},
														  {"cause", out.value("cause", json(nullptr))}}));
	} else {
		raise(Msg::STEP_UNKNOWN_OUTCOME, {out.dump()});
	}
	if (first_text) {
		// a row the caller wrote as text goes first (start's 'started', its
		// input as the caller wrote it)
		std::string text = rows.dump();
		text = "[" + *first_text + (rows.empty() ? "]" : "," + text.substr(1));
		port.exec(Stmt::STEP_LOG_ROWS, {id, JsonText{std::move(text)}, port.now_ms()});
	} else if (!rows.empty()) {
		port.exec(Stmt::STEP_LOG_ROWS, {id, JsonText{rows.dump()}, port.now_ms()});
	}
	if (notify) port.exec(Stmt::STEP_NOTIFY, {});
	if (kind == "parallel" || kind == "map" || kind == "call")
		return fan_out(port, id, out);
	if (kind == "event") return park_event(port, id, out);
	if (status == "succeeded" || status == "failed") {
		if (has_parent) child_ended(port, id);	// the last one wakes the parent
		port.exec(Stmt::FLUSH_COMMIT, {"terminal"});
		if (partitioned) engine::ended(port, id);	// its partition slot goes to the next
	}
	return status;
}

std::string fail_task(Port &port, int64_t id, const std::optional<std::string> &error,
					  const std::optional<std::string> &cause) {
	const TaskRow row = task_row(port, id);
	const json first = log_row("task_failed", row.state,
							   {{"error", error ? json(*error) : json(nullptr)}, {"cause", cause ? json(*cause) : json(nullptr)}});
	return apply_step(port, id, task_request(row, "task_failed", nullptr, error, cause), first);
}

std::string interrupt(Port &port, int64_t id, const std::string &reason) {
	constexpr int64_t max_interruptions = 5;
	Rows r = port.query(Stmt::STEP_INTERRUPT_READ, {id});
	if (r.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(id)});
	const std::optional<std::string> state = r[0].otext(0);
	const int64_t interruptions = r[0].i64(3);
	const bool only_once = r[0].boolean(4);
	// A worker that gives its leases back on purpose (a drain at SIGTERM,
	// worker_stop) did not crash: not counted towards genroc.Interrupted, so
	// rolling restarts during a long task never end it.  Such a release
	// needs a live worker acting, so it cannot loop on its own.
	const bool counted = reason != "released by worker" && reason != "worker stopped";
	port.exec(Stmt::STEP_LOG_ROWS,
			  {id, JsonText{json::array({log_row("task_interrupted", state,
												 {{"reason", reason},
												  {"worker", r[0].is_null(1) ? json(nullptr) : json(r[0].text(1))},
												  {"epoch", r[0].i64(2)},
												  {"interruptions", interruptions + (counted ? 1 : 0)},
												  {"counted", counted}})})
								.dump()}, port.now_ms()});
	const std::string name = state.value_or("");
	if (only_once)
		return fail_task(port, id, "only_once.interrupted",
						 "the lease of OnlyOnce task \"" + name + "\" was lost (" + reason + "); it is not run again");
	if (counted && interruptions + 1 >= max_interruptions) {
		// counted on the row too, so the failed instance shows why
		port.exec(Stmt::STEP_INTERRUPT_COUNT, {id});
		return fail_task(port, id, "genroc.Interrupted",
						 "task \"" + name + "\" was interrupted " + std::to_string(max_interruptions) +
							 " times in one attempt");
	}
	port.exec(Stmt::STEP_INTERRUPT_READY, {id, static_cast<int64_t>(counted ? 1 : 0), port.now_ms()});
	port.exec(Stmt::STEP_NOTIFY, {});
	return "ready";
}

}  // namespace genroc::engine
