// report.cpp — a worker's report of a task (engine/report.hpp), once for
// both stores.  The step is the step writer's (engine/steps.cpp), called
// in-process, as are the queue's room (genroc._room_freed) and a
// HandlerMissing's move (genroc._handler_missing: engine/admission.cpp);
// the hand-back's check (engine::handback_lease, asked by the step writer)
// too.  A task's request (task_request) is here, for
// every caller: the reports, an event's delivery and a token's result
// (engine/control.cpp, engine/callbacks.cpp), composition, fail_task.
#include "report.hpp"

#include "admission.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "steps.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

// The running instance under lease epoch `epoch`, locked (genroc._leased):
// RC003 / RC004; the worker holding the lease must be the caller's (an
// admin may report for any; 42501 otherwise).  An epoch is drawn at random
// for each claim and never handed out twice for an instance
// (docs/design.md "Fencing and liveness"), so the locked row still at
// `epoch` is that lease.  with_request: state_input and retry_counts read
// too (the request that continues the task).
struct Leased {
	int64_t id = 0, epoch = 0;
	bool only_once = false;
	std::string queue;
	std::optional<std::string> state, lease_owner;
	json retry_counts, state_input;
};

Leased leased(Port &port, const std::optional<int64_t> &instance, const std::optional<int64_t> &epoch,
			  bool with_request) {
	if (!epoch) raise(Msg::ARG_NULL, {"p_epoch"});
	if (!instance) raise(Msg::ARG_NULL, {"p_instance"});
	const std::string id = std::to_string(*instance);
	Rows rows = port.query(Stmt::REPORT_LEASED, {*instance, with_request});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {id});
	const Row &r = rows[0];
	const std::string status = r.text(0);
	const std::string at = r.otext(1).value_or("");
	if (status != "running" || at != std::to_string(*epoch))
		raise(Msg::REPORT_LEASE_LOST, {id},
			  "The report is for epoch " + std::to_string(*epoch) + "; the instance is " + status + " at epoch " + at +
				  ".");
	// another role's worker: the caller must be that role's member or an admin
	if (!r.is_null(6) && r.boolean(6)) port.exec(Stmt::REPORT_CHECK_OWNER, {*instance});
	Leased l;
	l.id = *instance;
	l.epoch = *epoch;
	l.only_once = r.boolean(2);
	l.queue = r.text(3);
	l.state = r.otext(4);
	l.lease_owner = r.otext(5);
	if (with_request) {
		if (!r.is_null(7)) l.retry_counts = parse_json(r.text(7), "the step request");
		l.state_input = parse_json(load_value(port, r.otext(8).value_or("null")), "the step request");
	}
	return l;
}

// The request that continues the leased task (task_request).
json task_request(const Leased &l, const char *op, const json *result, const std::optional<std::string> &error,
				  const std::optional<std::string> &cause) {
	TaskRow row;
	row.state = l.state;
	row.retry_counts = l.retry_counts;
	row.state_input = l.state_input;
	return engine::task_request(row, op, result, error, cause);
}

// What the reports do before their step: the progress commit class, the
// lease, an OnlyOnce report's flush.
Leased begin(Port &port, const std::optional<int64_t> &instance, const std::optional<int64_t> &epoch,
			 bool with_request) {
	Leased l = leased(port, instance, epoch, with_request);
	// an acknowledged OnlyOnce result must survive a crash: lost, the task
	// would come back running and end only_once.interrupted
	if (l.only_once) port.exec(Stmt::FLUSH_COMMIT, {"only_once_report"});
	return l;
}

void check_claim_args(const std::optional<std::string> &worker,
					  const std::optional<std::vector<std::string>> &queues) {
	if (!worker) raise(Msg::ARG_NULL, {"p_worker"});
	if (!queues) raise(Msg::ARG_NULL, {"p_queues"});
}

json succeeded_row(const Leased &l, const json &output) {
	return {{"event", "task_succeeded"},
			{"state", l.state ? json(*l.state) : json(nullptr)},
			{"detail",
			 {{"output", output},
			  {"worker", l.lease_owner ? json(*l.lease_owner) : json(nullptr)},
			  {"epoch", l.epoch}}}};
}

// A HandlerMissing report whose task moved to its handler's queue: its new
// status, else nullopt (it fails as reported).
std::optional<std::string> handler_missing(Port &port, const Leased &l, const std::optional<std::string> &error) {
	if (!error || *error != "genroc.HandlerMissing") return std::nullopt;
	Rows rows = port.query(Stmt::REPORT_HANDLER_MISSING, {l.id});
	if (rows.empty()) return std::nullopt;
	const Row &r = rows[0];
	MissingHandler m;
	m.id = l.id;
	m.resource = r.otext(0);
	m.queue = r.otext(1);
	m.lease_owner = r.otext(2);
	m.state = r.otext(3);
	m.lease_epoch = r.oi64(4);
	m.interruptions = r.oi64(5);
	return engine::handler_missing(port, m);
}

// What a report answers: the task handed back (handed_back) when the step
// left the instance running; otherwise the task that ended frees room in
// its queue.
ReportResult result(Port &port, const Leased &l, std::string status) {
	ReportResult out;
	out.status = std::move(status);
	if (out.status == "running")
		out.next = handed_back(port, l.id);
	else
		room_freed(port, l.queue);
	return out;
}

Handback handback_of(const std::string &worker, const std::vector<std::string> &queues) {
	Handback hb;
	hb.worker = worker;
	hb.queues = queues;
	return hb;
}

}  // namespace

TaskRow task_row(Port &port, int64_t instance) {
	Rows rows = port.query(Stmt::TASK_ROW, {instance});
	if (rows.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(instance)});
	const Row &r = rows[0];
	TaskRow t;
	t.state = r.otext(0);
	if (!r.is_null(1)) t.retry_counts = parse_json(r.text(1), "the task's request");
	t.state_input = parse_json(load_value(port, r.otext(2).value_or("null")), "the task's request");
	return t;
}

json task_request(const TaskRow &row, const char *op, const json *result, const std::optional<std::string> &error,
				  const std::optional<std::string> &cause) {
	json r = json::object();
	r["op"] = op;
	if (row.state) r["state"] = *row.state;
	if (!row.retry_counts.is_null()) r["retry_counts"] = row.retry_counts;
	if (error) r["error"] = *error;
	if (cause) r["cause"] = *cause;
	r["state_input"] = row.state_input;
	// a failure without an error name says so: "error": null
	if (std::string(op) == "task_failed" && !error) r["error"] = nullptr;
	// a success's result (a SQL NULL one: JSON null)
	if (std::string(op) == "task_succeeded") r["result"] = result ? *result : json(nullptr);
	return r;
}

void task_input(Port &port, const Row &r, int col, HandedBack &t) {
	t.input = r.otext(col).value_or("null");
	t.input_native = r.native(col);
	if (is_ref_text(t.input)) {
		t.input = load_value(port, t.input);
		t.input_native = nullptr;
	}
}

HandedBack handed_back(Port &port, int64_t instance) {
	Rows rows = port.query(Stmt::REPORT_TASK, {instance});
	if (rows.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(instance)});
	return handed_back_row(port, instance, rows[0], 0);
}

HandedBack handed_back_row(Port &port, int64_t instance, const Row &r, int first) {
	HandedBack t;
	t.instance_id = instance;
	t.epoch = r.i64(first);
	t.state = r.otext(first + 1);
	t.resource = r.otext(first + 2);
	task_input(port, r, first + 3, t);
	t.only_once = r.boolean(first + 4);
	t.timeout_s = r.oi64(first + 5);
	t.attempt = r.i64(first + 6);
	t.lease_expires_us = r.i64(first + 7);
	t.queue = r.text(first + 8);
	// on disk before its handler runs
	if (t.only_once) port.exec(Stmt::FLUSH_COMMIT, {"only_once_claim"});
	return t;
}

std::string complete(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
					 const std::optional<std::string> &output) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!output) raise(Msg::REPORT_OUTPUT_NULL);
	const Leased l = begin(port, instance, epoch, true);
	room_freed(port, l.queue);
	const json out = parse_json(*output, "the step request");
	// the task_succeeded entry goes in with the step's first log rows
	return apply_step(port, l.id, task_request(l, "task_succeeded", &out, std::nullopt, std::nullopt),
					  succeeded_row(l, out));
}

std::string fail(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
				 const std::optional<std::string> &error, const std::optional<std::string> &cause) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!error) raise(Msg::ARG_NULL, {"p_error"});
	const Leased l = begin(port, instance, epoch, false);
	room_freed(port, l.queue);
	if (auto moved = handler_missing(port, l, error)) return *moved;
	return fail_task(port, l.id, error, cause);
}

ReportResult complete_and_claim(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
								const std::optional<std::string> &output, const std::optional<std::string> &worker,
								const std::optional<std::vector<std::string>> &queues) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!output) raise(Msg::REPORT_OUTPUT_NULL);
	check_claim_args(worker, queues);
	const Leased l = begin(port, instance, epoch, true);
	const json out = parse_json(*output, "the step request");
	const Handback hb = handback_of(*worker, *queues);
	return result(port, l,
				  apply_step(port, l.id, task_request(l, "task_succeeded", &out, std::nullopt, std::nullopt),
							 succeeded_row(l, out), &hb));
}

ReportResult fail_and_claim(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
							const std::optional<std::string> &error, const std::optional<std::string> &cause,
							const std::optional<std::string> &worker,
							const std::optional<std::vector<std::string>> &queues) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	if (!error) raise(Msg::ARG_NULL, {"p_error"});
	check_claim_args(worker, queues);
	const Leased l = begin(port, instance, epoch, true);
	if (auto moved = handler_missing(port, l, error)) return result(port, l, *moved);
	// genroc._fail_task's task_failed row and step, with the hand-back
	const json first = {{"event", "task_failed"},
						{"state", l.state ? json(*l.state) : json(nullptr)},
						{"detail", {{"error", *error}, {"cause", cause ? json(*cause) : json(nullptr)}}}};
	const Handback hb = handback_of(*worker, *queues);
	return result(port, l, apply_step(port, l.id, task_request(l, "task_failed", nullptr, error, cause), first, &hb));
}

ReportResult complete_one_of_many(Port &port, int64_t instance, int64_t epoch, const std::string &output,
								  const std::optional<std::string> &worker,
								  const std::optional<std::vector<std::string>> &queues, std::string &not_taken) {
	Leased l;
	try {
		l = begin(port, instance, epoch, true);
	} catch (const Error &e) {
		// raised by leased before anything was written or locked
		if (e.sqlstate != sqlstate_of(Msg::INSTANCE_NOT_FOUND) && e.sqlstate != sqlstate_of(Msg::REPORT_LEASE_LOST))
			throw;
		not_taken = e.sqlstate;
		return {};
	}
	const json out = parse_json(output, "the step request");
	const json request = task_request(l, "task_succeeded", &out, std::nullopt, std::nullopt);
	if (!worker || !queues) {
		// complete's: the task's room freed before its step
		room_freed(port, l.queue);
		ReportResult r;
		r.status = apply_step(port, l.id, request, succeeded_row(l, out));
		return r;
	}
	const Handback hb = handback_of(*worker, *queues);
	return result(port, l, apply_step(port, l.id, request, succeeded_row(l, out), &hb));
}

}  // namespace genroc::engine
