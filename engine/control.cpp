// control.cpp — genroc.cancel, retry, resume, emit, renew and release
// (engine/control.hpp), once for both stores.
//
// The step and the lapse path (engine/steps.cpp), a task's request
// (engine/report.cpp), stored values (engine/values.cpp), the first step,
// partition slots and routing (engine/admission.cpp) are called in-process;
// log rows are LOG_ROW's.
#include <algorithm>
#include <set>
#include <tuple>

#include "admin.hpp"
#include "admission.hpp"
#include "children.hpp"
#include "control.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "limits.hpp"
#include "report.hpp"
#include "steps.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

bool control_ended(const std::string &status) { return status == "succeeded" || status == "failed" || status == "cancelled"; }

std::string control_json_text(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// An object's text with members whose values are JSON texts as the caller
// has them (not parsed again: a number keeps every digit it was written with).
std::string with_raw(const json &object, std::initializer_list<std::pair<const char *, const std::string *>> raw) {
	std::string text = control_json_text(object);
	text.pop_back();  // '}'
	for (const auto &[key, value] : raw) {
		if (text.size() > 1) text += ',';
		text += json(key).dump() + ':' + *value;
	}
	return text + '}';
}

void control_log(Port &port, int64_t id, const char *event, const std::optional<std::string> &state, const json &detail) {
	port.exec(Stmt::LOG_ROW, {id, event, state, JsonText{control_json_text(detail)}, port.now_ms()});
}

void control_log(Port &port, int64_t id, const char *event, const std::optional<std::string> &state,
		 const std::string &detail) {
	port.exec(Stmt::LOG_ROW, {id, event, state, JsonText{detail}, port.now_ms()});
}

// An instance's row as control reads it, locked (genroc._lock_instance).
struct Instance {
	int64_t id = 0;
	std::optional<int64_t> parent_id, root_id;
	std::string status;
	std::optional<std::string> state, error, queue, wait_kind, activity;
};

Instance lock_instance(Port &port, std::optional<int64_t> id) {
	if (!id) raise(Msg::ARG_NULL, {"p_instance"});
	Rows rows = port.query(Stmt::CONTROL_INSTANCE, {*id});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(*id)});
	const Row &r = rows[0];
	Instance i;
	i.id = *id;
	i.parent_id = r.oi64(0);
	i.root_id = r.oi64(1);
	i.status = r.text(2);
	i.state = r.otext(3);
	i.error = r.otext(4);
	i.queue = r.otext(5);
	i.wait_kind = r.otext(6);
	i.activity = r.otext(7);
	return i;
}

// genroc._cancel: one try of genroc.cancel.
std::string cancel_once(Port &port, int64_t id, const std::optional<std::string> &error,
						const std::optional<std::string> &cause) {
	// the live descendants deepest first, the instance last: a child that
	// ends locks itself, then its parent
	for (const Row &r : port.query(Stmt::CONTROL_LIVE_DESCENDANTS, {id}))
		port.exec(Stmt::CONTROL_LOCK_ROW, {r.i64(0)});
	const Instance inst = lock_instance(port, id);
	if (control_ended(inst.status)) raise(Msg::INSTANCE_ENDED, {std::to_string(id), inst.status});
	cancel_tree(port, id, cause.value_or("cancelled by request"), std::string("the parent was cancelled"), error);
	engine::ended(port, id);											  // its partition slot goes to the next
	if (inst.parent_id) child_ended(port, id);							  // counts as a failed child
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	return "cancelled";
}

// An array of ids as JSON text (the statements' parameter).
JsonText ids_json(const std::vector<int64_t> &ids) { return JsonText{json(ids).dump()}; }

// The worker's checks before renew and release: its caller, the commit
// class, the arguments, a live registration (RC006).
void lease_checks(Port &port, const std::optional<std::string> &worker,
				  const std::optional<std::vector<int64_t>> &instances) {
	port.exec(Stmt::CHECK_WORKER, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!instances) raise(Msg::ARG_NULL, {"p_instances"});
	live_worker(port, worker);
}

}  // namespace

std::string cancel(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &error,
				   const std::optional<std::string> &cause) {
	port.exec(Stmt::CHECK_INSTANCE, {instance, "operator"});
	if (!instance) raise(Msg::ARG_NULL, {"p_instance"});
	if (error) check_name(*error, "p_error", 256);
	if (cause) {
		const auto chars = std::count_if(cause->begin(), cause->end(), [](char c) { return (c & 0xC0) != 0x80; });
		if (chars > 32768) raise(Msg::NAME_TOO_LONG, {"p_cause", "32768", std::to_string(chars)});
	}
	// Other lock orders remain possible (a fan-out that fails locks its
	// parent, then cancels the siblings; a child started while the tree was
	// being locked): a deadlock is retried
	constexpr int tries = 5;
	for (int attempt = 1;; attempt++) {
		Port::Savepoint sp(port);
		try {
			std::string out = cancel_once(port, *instance, error, cause);
			sp.release();
			return out;
		} catch (const Error &e) {
			if (e.sqlstate != "40P01" || attempt == tries) throw;
			sp.rollback();
		}
	}
}

void cancel_tree(Port &port, int64_t instance, const std::optional<std::string> &cause,
				 const std::optional<std::string> &children_cause, const std::optional<std::string> &error) {
	for (const Row &r : port.query(Stmt::CANCEL_TREE_CHILDREN, {instance}))
		cancel_tree(port, r.i64(0), children_cause ? children_cause : cause);
	Rows rows = port.query(Stmt::CANCEL_TREE_ROW, {instance});
	if (rows.empty() || control_ended(rows[0].text(0))) return;
	const Row &r = rows[0];
	const std::string previous = r.text(0);
	const std::optional<std::string> state = r.otext(1);
	// ended as cancelled where it stood: its lease, timer, task and
	// activity token dropped; its state, that state's input and its retry
	// counts kept (retry and resume run it again from there)
	Stop end;
	end.status = "cancelled";
	end.state = state;
	if (!r.is_null(2)) end.state_input = parse_json(r.text(2), "the state input");
	if (!r.is_null(3)) end.retry_counts = parse_json(r.text(3), "the retry counts");
	end.only_once = !r.is_null(4) && r.boolean(4);
	end.timeout_s = r.oi64(5);
	end.heartbeat_s = r.oi64(6);
	end.ended = true;
	end.error = error.value_or("genroc.Cancelled");
	end.cause = cause;
	write_stop(port, instance, end);
	json detail = {{"previous_status", previous}};
	if (cause) detail["cause"] = *cause;
	if (error) detail["error"] = *error;
	control_log(port, instance, "cancelled", state, detail);
}

std::string run_again(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &output) {
	const Instance inst = lock_instance(port, instance);
	const int64_t id = inst.id;
	port.exec(Stmt::CHECK_INSTANCE, {id, "operator"});
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (inst.parent_id)
		raise(Msg::RUN_AGAIN_PART_OF, {std::to_string(id), inst.root_id ? std::to_string(*inst.root_id) : "<NULL>"});
	if (inst.status != "failed") raise(Msg::RUN_AGAIN_NOT_FAILED, {std::to_string(id), inst.status});
	const json state = inst.state ? json(*inst.state) : json(nullptr);
	const std::string state_input = instance_inputs(port, id).first;
	std::string request;
	if (!output) {
		request = with_raw({{"op", "enter"}, {"state", state}}, {{"state_input", &state_input}});
	} else {
		const std::optional<std::string> type = port.query(Stmt::RUN_AGAIN_STATE_TYPE, {id}).at(0).otext(0);
		if (type != std::optional<std::string>("Task"))
			raise(Msg::RESUME_NOT_TASK, {std::to_string(id), inst.state.value_or("<NULL>"), type.value_or("<NULL>")},
				  {}, message_text(Msg::RESUME_NOT_TASK_HINT, {}));
		// at a .waitForTaskToken task: the result the token would bring
		request = with_raw({{"op", "task_succeeded"}, {"state", state}, {"callback", true}},
						   {{"state_input", &state_input}, {"result", &*output}});
	}
	// Routed again with today's queues: an instance that failed where no
	// worker had its handler goes to the handler's queue configured since.
	const Row def = port.query(Stmt::ROUTE_INSTANCE, {id}).at(0);
	const std::optional<std::string> queue = route(port, def.i64(0), def.text(1), parse_json(def.text(2), "the labels"));
	port.exec(Stmt::RUN_AGAIN_REOPEN, {id, queue, port.now_ms()});
	json detail = json::object();
	if (inst.error) detail["error"] = *inst.error;
	if (queue && queue != inst.queue) detail["queue"] = *queue;
	// a JSON null output is left out, as jsonb_strip_nulls leaves it
	const bool has_output = output && json::parse(*output, nullptr, false) != json(nullptr);
	control_log(port, id, output ? "resumed" : "retried", inst.state,
		has_output ? with_raw(detail, {{"output", &*output}}) : control_json_text(detail));
	return admit(port, id, parse_json(request, "the step request"));
}

std::string emit(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &name,
				 const std::optional<std::string> &payload) {
	port.exec(Stmt::CHECK_INSTANCE, {instance, "operator"});
	const Instance inst = lock_instance(port, instance);  // the caller's (or an operator's)
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (!name || name->empty()) raise(Msg::EVENT_NAME_EMPTY);
	check_name(*name, "p_name");
	if (control_ended(inst.status)) raise(Msg::INSTANCE_ENDED, {std::to_string(inst.id), inst.status});
	const std::string value = payload.value_or("null");
	{
		const json parsed = json::parse(value, nullptr, false);
		if (parsed.is_discarded()) raise(Msg::JSON_SYNTAX);
		limits::check_json_depth(parsed, "the event payload");
	}
	if (inst.status == "waiting" && inst.wait_kind == std::optional<std::string>("event") && inst.activity == name) {
		deliver_event(port, inst.id, *name, value);
		return "delivered";
	}
	port.exec(Stmt::EVENT_KEEP, {inst.id, *name, JsonText{value}, port.now_ms()});
	control_log(port, inst.id, "event_kept", inst.state, with_raw({{"name", *name}}, {{"payload", &value}}));
	return "kept";
}

std::string deliver_event(Port &port, int64_t instance, const std::string &name, const std::string &payload) {
	Rows rows = port.query(Stmt::CONTROL_STATUS, {instance});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(instance)});
	control_log(port, instance, "event_received", rows[0].otext(1), with_raw({{"name", name}}, {{"payload", &payload}}));
	// its state goes on as if its task returned the payload; the step reads
	// the request as JSON anyway, so the payload is parsed here once
	const json result = parse_json(payload, "the step request");
	return apply_step(port, instance,
					  task_request(task_row(port, instance), "task_succeeded", &result, std::nullopt, std::nullopt));
}

std::vector<int64_t> renew(Port &port, const std::optional<std::string> &worker,
						   const std::optional<std::vector<int64_t>> &instances) {
	lease_checks(port, worker, instances);
	const int64_t now = port.now_ms();
	port.query(Stmt::WORKER_HEARTBEAT, {*worker, now});
	std::vector<int64_t> kept;
	for (const Row &r : port.query(Stmt::LEASES_RENEW, {*worker, ids_json(*instances), now})) kept.push_back(r.i64(0));
	std::sort(kept.begin(), kept.end());
	return kept;
}

int64_t release(Port &port, const std::optional<std::string> &worker,
				const std::optional<std::vector<int64_t>> &instances) {
	lease_checks(port, worker, instances);
	int64_t n = 0;
	for (const Row &r : port.query(Stmt::LEASES_HELD, {*worker, ids_json(*instances)})) {
		interrupt(port, r.i64(0), "released by worker");
		n++;
	}
	return n;
}

std::vector<ActivityClaim> claim_activity(Port &port, const std::optional<std::string> &activity,
										  const std::optional<std::string> &worker, std::optional<int64_t> n) {
	port.exec(Stmt::CHECK_WORKER, {worker});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!activity) raise(Msg::ARG_NULL, {"p_activity"});
	if (!worker) raise(Msg::ARG_NULL, {"p_worker"});
	if (!n) raise(Msg::ARG_NULL, {"p_n"});
	if (*n < 1) raise(Msg::CLAIM_N_AT_LEAST, {std::to_string(*n)});
	struct Claimed {
		ActivityClaim task;
		std::optional<std::string> state;
		int64_t priority, eligible;
	};
	std::vector<Claimed> rows;
	for (const Row &r : port.query(Stmt::ACTIVITY_CLAIM, {*activity, *worker, *n, port.now_ms()})) {
		Claimed c;
		c.task.instance_id = r.i64(0);
		c.state = r.otext(1);
		c.task.token = r.otext(2).value_or("");
		c.task.activity = r.text(3);
		c.task.input = r.otext(4).value_or("null");
		c.task.heartbeat_s = r.oi64(5);
		c.task.timeout_s = r.oi64(6);
		c.priority = r.i64(7);
		c.eligible = r.i64(8);
		rows.push_back(std::move(c));
	}
	std::sort(rows.begin(), rows.end(), [](const Claimed &a, const Claimed &b) {
		return std::tie(a.priority, a.eligible, a.task.instance_id) <
			   std::tie(b.priority, b.eligible, b.task.instance_id);
	});
	std::vector<ActivityClaim> out;
	out.reserve(rows.size());
	for (Claimed &c : rows) {
		control_log(port, c.task.instance_id, "activity_claimed", c.state,
			json{{"worker", *worker}, {"activity", c.task.activity}});
		c.task.input = load_value(port, c.task.input);
		out.push_back(std::move(c.task));
	}
	return out;
}

std::optional<int64_t> claim_wake(Port &port, const std::optional<std::vector<std::string>> &queues) {
	if (!queues) raise(Msg::ARG_NULL, {"p_queues"});
	if (!port.query(Stmt::CLAIM_WAKE_RATED, {}).at(0).boolean(0)) return std::nullopt;
	const int64_t now = port.now_ms();
	std::optional<int64_t> wake;
	auto earliest = [&](const Rows &rows) {
		if (rows.empty() || rows[0].is_null(0)) return;
		const int64_t ms = rows[0].i64(0);
		wake = wake ? std::min(*wake, ms) : ms;
	};
	for (const std::string &queue : std::set<std::string>(queues->begin(), queues->end())) {
		const QueueSettings s = queue_settings(port, queue);
		if (!s.rate && !s.partition_rate) continue;
		if (port.query(Stmt::CLAIM_WAKE_READY, {queue, now}).empty()) continue;
		if (s.rate) earliest(port.query(Stmt::CLAIM_WAKE_RATE, {queue, *s.rate, s.period_ms.value_or(0), now}));
		if (s.partition_rate)
			earliest(port.query(Stmt::CLAIM_WAKE_PARTITION,
								{queue, *s.partition_rate, s.partition_period_ms.value_or(0), now}));
	}
	return wake;
}

}  // namespace genroc::engine
