// callbacks.cpp — genroc.activity_succeed, activity_fail and
// activity_heartbeat (extension/sql/60_activities.sql declares them): the
// results sent by a task token, an activity's or a .waitForTaskToken
// task's (callbacks.hpp).  The step (engine/steps.cpp) and a task's request
// (engine/report.cpp) are called in-process.
#include "admission.hpp"
#include "callbacks.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "report.hpp"
#include "steps.hpp"

namespace genroc::engine {

namespace {

struct Holder {
	int64_t id = 0;
	std::string state;
	std::optional<std::string> activity_owner;
	std::string status;
	std::optional<std::string> queue;
};

// The instance holding the token, locked (genroc._activity); RC007 when
// none does.
Holder holder(Port &port, const std::optional<std::string> &token) {
	if (!token) raise(Msg::ARG_NULL, {"p_token"});
	Rows rows = port.query(Stmt::TASK_TOKEN_HOLDER, {*token});
	if (rows.empty())
		raise(Msg::TASK_TOKEN_INVALID, {},
			  "No activity or task is waiting with that token: it is unknown, already reported, timed out or "
			  "cancelled, or a retry gave the task a new one.");
	const Row &r = rows[0];
	return {r.i64(0), r.otext(1).value_or(""), r.otext(2), r.text(3), r.otext(4)};
}

// A callback task's handler still running: its queue gets its room back,
// as a report gives it (the task ends here, not by the handler's report).
void release_running(Port &port, const Holder &h) {
	if (h.status == "running") room_freed(port, h.queue.value_or(""));  // no queue: the default's limits
}

}  // namespace

std::string task_token_succeed(Port &port, const std::optional<std::string> &token,
							   const std::optional<std::string> &output) {
	port.exec(Stmt::TASK_TOKEN_CHECK_OWNER, {token});
	if (!output) raise(Msg::TASK_TOKEN_OUTPUT_NULL);
	Holder h = holder(port, token);
	release_running(port, h);
	// the step reads the request as JSON anyway: the result is parsed here once
	const json result = parse_json(*output, "the step request");
	const TaskRow row = task_row(port, h.id);
	json request = task_request(row, "task_succeeded", &result, std::nullopt, std::nullopt);
	request["callback"] = true;	 // the result the token brings, not a handler's return
	// the 'task_succeeded' row goes in with the step's first log rows
	const json first = {{"event", "task_succeeded"},
						{"state", row.state ? json(*row.state) : json(nullptr)},
						{"detail",
						 {{"output", result},
						  {"activity_worker", h.activity_owner ? json(*h.activity_owner) : json(nullptr)}}}};
	std::string status = apply_step(port, h.id, request, first);
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	return status;
}

std::string task_token_fail(Port &port, const std::optional<std::string> &token,
							const std::optional<std::string> &error, const std::optional<std::string> &cause) {
	port.exec(Stmt::TASK_TOKEN_CHECK_OWNER, {token});
	if (!error) raise(Msg::ARG_NULL, {"p_error"});
	Holder h = holder(port, token);
	release_running(port, h);
	std::string status = fail_task(port, h.id, *error, cause);	// Retry and Catch decide
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	return status;
}

void task_token_heartbeat(Port &port, const std::optional<std::string> &token) {
	Holder h = holder(port, token);
	port.exec(Stmt::TASK_TOKEN_CHECK_OWNER, {token});
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	port.exec(Stmt::TASK_TOKEN_HEARTBEAT, {h.id, port.now_ms()});
}

}  // namespace genroc::engine
