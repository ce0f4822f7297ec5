// redrive.cpp — genroc.redrive (engine/redrive.hpp), once for both stores.
//
// The step (engine/steps.cpp), the first step or a partition slot (admit,
// engine/admission.cpp), stored values (engine/values.cpp) and the fan-out's
// loop (engine/children.cpp) are called in-process; log rows are LOG_ROW's.
#include <algorithm>
#include <vector>

#include "admission.hpp"
#include "children.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "redrive.hpp"
#include "steps.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

// An instance's row as the redrive reads it, locked.
struct Stopped {
	int64_t id = 0;
	std::optional<int64_t> parent_id, root_id;
	std::string status;
	std::optional<std::string> state;
	json fanout;
};

Stopped read_locked(Port &port, int64_t id) {
	Rows rows = port.query(Stmt::REDRIVE_LOCK, {id});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(id)});
	const Row &r = rows[0];
	Stopped s;
	s.id = id;
	s.parent_id = r.oi64(0);
	s.root_id = r.oi64(1);
	s.status = r.text(2);
	s.state = r.otext(3);
	if (!r.is_null(4)) s.fanout = json::parse(r.text(4), nullptr, false);
	return s;
}

void redrive_log(Port &port, int64_t id, const char *event, const std::optional<std::string> &state, const json &detail) {
	port.exec(Stmt::LOG_ROW, {id, event, state, JsonText{detail.dump()}, port.now_ms()});
}

int64_t redrives_so_far(Port &port, int64_t id) { return port.query(Stmt::REDRIVE_COUNT, {id}).at(0).i64(0); }

// The generation of the Map or Parallel fan-out the instance stopped on:
// the state it stopped in is that fan-out's, and nothing was entered since
// its children started (the state did not fail before fanning out, in a
// loop that ran it before).
std::optional<int64_t> stopped_fanout(Port &port, const Stopped &s) {
	if (!s.state || !s.fanout.is_object() || !s.fanout.contains("gen") || !s.fanout["gen"].is_number_integer())
		return std::nullopt;
	const std::string kind = s.fanout.value("kind", "");
	if (kind != "map" && kind != "parallel") return std::nullopt;
	Rows last = port.query(Stmt::REDRIVE_LAST_STEP_EVENT, {s.id});
	if (last.empty() || last[0].text(0) == "entered" || last[0].otext(1) != s.state) return std::nullopt;
	return s.fanout["gen"].get<int64_t>();
}

// Whether the parent still waits on the fan-out of generation gen (a child
// that ended at once may have ended it: failed it, or completed it).
bool still_waiting(Port &port, int64_t parent, int64_t gen) {
	Rows rows = port.query(Stmt::REDRIVE_PARENT_NOW, {parent});
	if (rows.empty() || rows[0].text(0) != "waiting" || rows[0].otext(1) != std::optional<std::string>("children") ||
		rows[0].is_null(2))
		return false;
	const json f = json::parse(rows[0].text(2), nullptr, false);
	return f.is_object() && f.value("gen", int64_t(-1)) == gen;
}

// extra: members the top instance's 'redriven' row gets besides its counts
void go_on(Port &port, const Stopped &s, bool top, const json &extra = json::object());

// A child that never started, started now with its item's input (as the
// fan-out's loop starts one).
void start_child(Port &port, int64_t parent, int64_t id, int64_t index) {
	const json input = parse_json(instance_inputs(port, id).second, "the input");
	port.exec(Stmt::REDRIVE_REOPEN, {id, "ready", Param::null(Param::Kind::text), port.now_ms()});
	redrive_log(port, id, "started", std::nullopt, {{"parent", parent}, {"index", index}, {"input", input}});
	apply_step(port, id, json{{"op", "start"}, {"input", input}});
}

// The Map or Parallel waits on its children of generation gen again: the
// succeeded ones are kept; the others run again.  Children start in index
// order, so those that started are below the fan-out's next_index and those
// that never did above it; the counts say so: those that run again now
// (redriven, or never started but below a started one) are live, the rest
// pending, started by the fan-out's loop within MaxConcurrency.
void reopen(Port &port, const Stopped &s, int64_t gen, int64_t count, const json &extra) {
	struct Child {
		int64_t id, index;
		bool started;
	};
	std::vector<Child> rerun;
	int64_t total = 0, succeeded = 0, last_started = -1, first_unstarted = -1, max_index = -1;
	for (const Row &r : port.query(Stmt::REDRIVE_CHILDREN, {s.id, gen})) {
		total++;
		const int64_t id = r.i64(0), index = r.i64(1);
		const std::string status = r.text(2);
		max_index = std::max(max_index, index);
		if (!r.boolean(4)) raise(Msg::REDRIVE_CHILD_LIVE, {std::to_string(s.id), std::to_string(id), status});
		if (status == "succeeded") {
			succeeded++;
			continue;
		}
		const bool started = !r.is_null(3);
		if (started) last_started = std::max(last_started, index);
		if (!started && first_unstarted < 0) first_unstarted = index;
		rerun.push_back({id, index, started});
	}
	const int64_t next = last_started >= 0 ? last_started + 1 : first_unstarted >= 0 ? first_unstarted : max_index + 1;
	const int64_t now = port.now_ms();
	port.exec(Stmt::REDRIVE_REOPEN, {s.id, "waiting", "children", now});
	std::vector<Child> run_now;
	int64_t pending = 0;
	for (const Child &c : rerun) {
		if (!c.started && c.index >= next) {
			port.exec(Stmt::REDRIVE_REOPEN, {c.id, "waiting", "pending", now});
			pending++;
		} else {
			run_now.push_back(c);
		}
	}
	port.exec(Stmt::REDRIVE_FANOUT_COUNTS, {s.id, gen, total, next, static_cast<int64_t>(run_now.size()), pending,
											succeeded});
	json detail = {{"redrive_count", count},
				   {"previous_status", s.status},
				   {"kept", succeeded},
				   {"rerun", static_cast<int64_t>(rerun.size())}};
	detail.update(extra);
	redrive_log(port, s.id, "redriven", s.state, detail);
	for (const Child &c : run_now) {
		if (!still_waiting(port, s.id, gen)) break;
		if (c.started)
			go_on(port, read_locked(port, c.id), false);
		else
			start_child(port, s.id, c.id, c.index);
	}
	advance_children(port, s.id);
}

// A stopped instance goes on: its fan-out reopened, or its state entered
// again (its first one when it stopped before any).
void go_on(Port &port, const Stopped &s, bool top, const json &extra) {
	const int64_t count = redrives_so_far(port, s.id) + 1;
	if (auto gen = stopped_fanout(port, s)) {
		reopen(port, s, *gen, count, extra);
		return;
	}
	const auto [state_input, input] = instance_inputs(port, s.id);
	const json request = s.state ? json{{"op", "enter"}, {"state", *s.state},
										{"state_input", parse_json(state_input, "the state input")}}
								 : json{{"op", "start"}, {"input", parse_json(input, "the input")}};
	port.exec(Stmt::REDRIVE_REOPEN, {s.id, "ready", Param::null(Param::Kind::text), port.now_ms()});
	json detail = {{"redrive_count", count}, {"previous_status", s.status}};
	detail.update(extra);
	redrive_log(port, s.id, "redriven", s.state, detail);
	// a top instance takes its partition's slot again; children hold none
	if (top)
		admit(port, s.id, request);
	else
		apply_step(port, s.id, request);
}

}  // namespace

std::string redrive(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &client_token) {
	if (!instance) raise(Msg::ARG_NULL, {"p_instance"});
	if (client_token) {
		if (client_token->empty()) raise(Msg::REDRIVE_CLIENT_TOKEN_EMPTY);
		check_name(*client_token, "p_client_token", 64);
	}
	const Stopped s = read_locked(port, *instance);
	port.exec(Stmt::CHECK_INSTANCE, {*instance, "operator"});
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (client_token && port.query(Stmt::REDRIVE_TOKEN_SEEN, {s.id, *client_token}).at(0).boolean(0))
		return s.status;	// that request was done: nothing again
	if (s.parent_id)
		raise(Msg::REDRIVE_PART_OF, {std::to_string(s.id), std::to_string(s.root_id.value_or(*s.parent_id))});
	if (s.status != "failed" && s.status != "cancelled") raise(Msg::REDRIVE_NOT_STOPPED, {std::to_string(s.id), s.status});
	json extra = json::object();
	if (client_token) extra["client_token"] = *client_token;
	go_on(port, s, true, extra);
	return port.query(Stmt::REDRIVE_PARENT_NOW, {s.id}).at(0).text(0);
}

}  // namespace genroc::engine
