// children.cpp — composition (engine/children.hpp), once for both stores:
// a fan-out's children (Parallel branches, Map items, a genroc:call's one
// child), its counts (genroc._fanouts, the SQLite file's fanouts), the loop
// that starts its children and resumes the parent, and the wait for a
// genroc:event.
//
// What it reuses of the operations still written per store it reaches
// through statements: the log (`_log`) and stored values (`_load_value`).
// The step, cancelling, delivering an event, routing a call's child and the
// request that goes on from a task (task_request) are the engine's own
// (steps.cpp, control.cpp, admission.cpp, report.cpp), called here
// in-process.
#include "children.hpp"

#include <algorithm>
#include <vector>

#include "admission.hpp"
#include "control.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "report.hpp"
#include "steps.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

// calls and fan-outs nested deeper fail with genroc.CallDepthExceeded
constexpr int64_t kMaxCallDepth = 32;

// The parents whose advance_children loop runs further up this thread's
// stack (PL/pgSQL kept them in the setting genroc_fanout.active): a child
// of one that ends at once counts its end and leaves the rest to that loop.
thread_local std::vector<int64_t> advancing;

struct Advancing {
	explicit Advancing(int64_t id) { advancing.push_back(id); }
	~Advancing() { advancing.pop_back(); }
	Advancing(const Advancing &) = delete;
	Advancing &operator=(const Advancing &) = delete;
};

std::string child_json_text(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void child_log(Port &port, int64_t id, const char *event, const std::optional<std::string> &state, const json &detail) {
	port.exec(Stmt::LOG_ROW, {id, event, state,
							  detail.is_null() ? Param::null(Param::Kind::json) : Param(JsonText{child_json_text(detail)}),
							  port.now_ms()});
}

// A column's JSON text as its value: null for NULL, a stored value's
// reference loaded (genroc._load_value).
json value_of(Port &port, const std::optional<std::string> &text, const char *what) {
	if (!text) return json(nullptr);
	return parse_json(load_value(port, *text), what);
}

std::optional<std::string> child_opt_str(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() && it->is_string() ? std::optional<std::string>(it->get<std::string>()) : std::nullopt;
}
std::optional<int64_t> child_opt_int(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() && it->is_number() ? std::optional<int64_t>(it->get<int64_t>()) : std::nullopt;
}
json member(const json &out, const char *k) {
	auto it = out.find(k);
	return it != out.end() ? *it : json(nullptr);
}
Param json_param(const json &v) { return v.is_null() ? Param::null(Param::Kind::json) : Param(JsonText{child_json_text(v)}); }

// An outcome's retry counts (an array; none: empty) and their sum (the attempt).
json retry_counts(const json &out) {
	auto rc = out.find("retry_counts");
	return rc != out.end() && !rc->is_null() ? *rc : json::array();
}
int64_t attempt_of(const json &counts) {
	int64_t attempt = 0;
	if (counts.is_array())
		for (const auto &c : counts) attempt += c.is_number() ? c.get<int64_t>() : std::stoll(c.get<std::string>());
	return attempt;
}

// The request that goes on from the instance's task (task_request:
// engine/report.cpp, in-process).
json child_task_request(Port &port, int64_t id, const char *op, const json &result, const std::optional<std::string> &error,
				  const std::optional<std::string> &cause) {
	return engine::task_request(task_row(port, id), op, &result, error, cause);
}

// genroc._fanout_row: the counts row of a parent's fan-out of generation
// gen, made from its children when missing or of an earlier generation (a
// fan-out begun before the table existed; the counts then include every
// child's end so far).  The caller holds the parent's row lock.
void fanout_row(Port &port, int64_t parent, int64_t gen) {
	if (!port.query(Stmt::CHILDREN_COUNTS_THERE, {parent, gen}).empty()) return;
	port.exec(Stmt::CHILDREN_COUNTS_MAKE, {parent, gen});
}

// A wait for children or an event: the position's columns every such
// wait leaves (no task, no lease, no timer yet, no activity).
Stop waiting_stop(const std::optional<std::string> &state, const json &state_input, const json &counts,
				  const std::optional<int64_t> &timeout) {
	Stop s;
	s.status = "waiting";
	s.state = state;
	if (!state_input.is_null()) s.state_input = state_input;
	s.retry_counts = counts;
	s.attempt = attempt_of(counts);
	s.interruptions = 0;
	s.timeout_s = timeout;
	return s;
}

// genroc._depth: how many instances are above this one.
int64_t depth(Port &port, int64_t id) { return port.query(Stmt::CHILDREN_DEPTH, {id}).at(0).i64(0); }

}  // namespace

std::string fan_out(Port &port, int64_t parent, const json &out) {
	const int64_t now = port.now_ms();
	const std::string kind = out.at("kind").get<std::string>();
	const std::optional<std::string> state = child_opt_str(out, "state");
	const json counts = retry_counts(out);
	const int64_t delay = child_opt_int(out, "delay_ms").value_or(0);
	const std::optional<int64_t> timeout = child_opt_int(out, "timeout_s");
	const json state_input = member(out, "state_input");

	Rows pr = port.query(Stmt::CHILDREN_PARENT, {parent});
	if (pr.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(parent)});
	const json prev = pr[0].is_null(0) ? json() : parse_json(pr[0].text(0), "the fan-out");

	json items = json::array();
	std::optional<int64_t> called_id, called_version;
	if (kind == "parallel") {
		int64_t i = 0;
		for (const auto &b : out.at("branches")) {
			json it = b;
			it["index"] = i++;
			items.push_back(std::move(it));
		}
	} else if (kind == "map") {
		items = out.at("items");
	} else {
		const std::string name = child_opt_str(out, "definition").value_or("");
		const json version = member(out, "version");
		const std::string st = state.value_or("");
		std::optional<std::string> error, cause;
		bool may = false;
		{
			Rows d = port.query(Stmt::CHILDREN_CALLED,
								{name, version.is_number() ? Param(version.get<int64_t>()) : Param::null(Param::Kind::i64),
								 parent});
			if (!d.empty()) {
				called_id = d[0].i64(0);
				called_version = d[0].i64(1);
				may = !d[0].is_null(2) && d[0].boolean(2);
			}
		}
		if (!called_id) {
			error = "genroc.DefinitionNotFound";
			cause = "state \"" + st + "\" calls definition \"" + name + "\"" +
					(version.is_number() ? " version " + version.dump() : std::string()) + ", which does not exist";
		} else if (depth(port, parent) >= kMaxCallDepth) {
			error = "genroc.CallDepthExceeded";
			cause = "state \"" + st + "\" calls definition \"" + name + "\" below " + std::to_string(kMaxCallDepth) +
					" nested calls and fan-outs";
		}
		// the child is the caller's instance: its owner must be one who may
		// start that definition (12_roles.sql)
		if (!error && !may) {
			error = "genroc.PermissionDenied";
			cause = "state \"" + st + "\" calls definition \"" + name + "\", which the instance's role may not start";
		}
		if (error) {
			port.exec(Stmt::CHILDREN_CALL_STATE, {parent, state, json_param(state_input), JsonText{child_json_text(counts)}, now});
			return fail_task(port, parent, error, cause);
		}
		const json labels = pr[0].is_null(1) ? json::object() : parse_json(pr[0].text(1), "the labels");
		const std::string queue = route(port, *called_id, name, labels);
		items.push_back({{"index", 0},
						 {"input", member(out, "input")},
						 {"definition_id", *called_id},
						 {"name", member(out, "name")},
						 {"labels", labels},
						 {"queue", queue}});
	}
	const int64_t gen = (prev.is_object() && prev.contains("gen") && prev["gen"].is_number() ? prev["gen"].get<int64_t>() : 0) + 1;
	const int64_t max_conc = child_opt_int(out, "max_concurrency").value_or(0);
	const int64_t total = static_cast<int64_t>(items.size());
	json fanout = {{"kind", kind},
				   {"gen", gen},
				   {"total", total},
				   {"max_concurrency", max_conc},
				   {"tolerated_count", member(out, "tolerated_count")},
				   {"tolerated_percentage", member(out, "tolerated_percentage")}};
	if (kind == "call") fanout["sync"] = member(out, "sync");
	// the parent waits for its children (a sync call's TimeoutSeconds
	// counts from the child's start, after a retry's back-off)
	Stop park = waiting_stop(state, state_input, counts, timeout);
	park.wait_kind = "children";
	if (timeout) park.timeout_in = delay + *timeout * 1000;
	if (delay > 0) park.wait_until = now + delay;
	park.fanout = std::move(fanout);
	write_stop(port, parent, park);
	port.exec(Stmt::CHILDREN_INSERT, {parent, JsonText{child_json_text(items)}, gen, kind != "call", now});
	port.exec(Stmt::CHILDREN_COUNTS_RESET, {parent, gen, total});
	if (kind == "call") {
		Rows c = port.query(Stmt::CHILDREN_CALL_CHILD, {parent, gen});
		child_log(port, parent, "call_started", state,
			{{"definition", member(out, "definition")},
			 {"version", *called_version},
			 {"sync", member(out, "sync")},
			 {"delay_ms", delay},
			 {"child", c.empty() ? json(nullptr) : json(c[0].i64(0))}});
	} else {
		child_log(port, parent, "children_started", state,
			{{"kind", kind}, {"count", total}, {"max_concurrency", max_conc}, {"delay_ms", delay}});
	}
	if (delay == 0) advance_children(port, parent);
	return port.query(Stmt::CHILDREN_STATUS, {parent}).at(0).text(0);
}

void child_ended(Port &port, int64_t child) {
	Rows rows = port.query(Stmt::CHILDREN_ENDED_READ, {child});
	if (rows.empty()) return;  // not a child
	const Row &r = rows[0];
	const int64_t parent = r.i64(0);
	const std::optional<int64_t> gen = r.oi64(1), p_gen = r.oi64(6);
	if (r.text(4) != "waiting" || r.otext(5) != std::optional<std::string>("children") || p_gen != gen || !gen)
		return;	 // a child of a fan-out that is over (its siblings were cancelled)
	// started children are below next_index; one above it ended while it
	// was pending (cancelled from outside).  No row of this generation: it
	// is made from the children, this end included.
	if (port.exec(Stmt::CHILDREN_COUNT_END, {parent, r.oi64(2).value_or(0), r.text(3) == "succeeded", *gen}) == 0)
		fanout_row(port, parent, *gen);
	if (std::find(advancing.begin(), advancing.end(), parent) != advancing.end()) return;
	advance_children(port, parent);
}

void advance_children(Port &port, int64_t parent) {
	// the parent's columns once: while this loop runs, only the loop itself
	// changes the parent's row (a child that ends at once counts its end in
	// the counts and leaves the rest to this loop), and it leaves the loop
	// when it does
	Rows pr = port.query(Stmt::CHILDREN_LOOP_PARENT, {parent, port.now_ms()});
	if (pr.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(parent)});
	if (pr[0].text(0) != "waiting" || pr[0].otext(1) != std::optional<std::string>("children")) return;
	const std::string state = pr[0].otext(2).value_or("");
	const std::optional<std::string> state_opt = pr[0].otext(2);
	const bool due = pr[0].boolean(3);
	const json f = parse_json(pr[0].text(4), "the fan-out");
	const int64_t gen = f.at("gen").get<int64_t>();
	const int64_t max_conc = f.value("max_concurrency", json(0)).is_number() ? f["max_concurrency"].get<int64_t>() : 0;
	const int64_t total = f.at("total").get<int64_t>();
	const bool call = f.value("kind", json("")) == json("call");
	Advancing guard(parent);
	while (true) {
		Rows cr = port.query(Stmt::CHILDREN_COUNTS, {parent, gen});
		if (cr.empty()) {
			fanout_row(port, parent, gen);
			cr = port.query(Stmt::CHILDREN_COUNTS, {parent, gen});
			if (cr.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(parent)});
		}
		const int64_t live = cr[0].i64(0), pending = cr[0].i64(1), failed = cr[0].i64(2), next = cr[0].i64(3);

		if (failed > 0) {
			const json tc = f.value("tolerated_count", json(nullptr)), tp = f.value("tolerated_percentage", json(nullptr));
			std::optional<std::string> error, cause;
			bool fails = false;
			if (!tc.is_number() && !tp.is_number()) {
				// the first failed child's error; none when a Fail state
				// without Error ended it: the state fails all the same
				Rows ff = port.query(Stmt::CHILDREN_FIRST_FAILED, {parent, gen});
				if (!ff.empty()) {
					error = ff[0].otext(0);
					cause = ff[0].otext(1);
				}
				fails = true;
			} else if ((tc.is_number() && static_cast<double>(failed) > tc.get<double>()) ||
					   (tp.is_number() && static_cast<double>(failed) * 100 > tp.get<double>() * static_cast<double>(total))) {
				error = "States.ExceedToleratedFailureThreshold";
				cause = std::to_string(failed) + " of " + std::to_string(total) + " items of state \"" + state + "\" failed";
				fails = true;
			}
			if (fails) {
				cancel_children(port, parent, "state \"" + state + "\" failed: " + error.value_or("an error without a name"));
				child_log(port, parent, "children_failed", state_opt,
					{{"error", error ? json(*error) : json(nullptr)},
					 {"cause", cause ? json(*cause) : json(nullptr)},
					 {"failed", failed}});
				port.exec(Stmt::CHILDREN_WAIT_OVER, {parent});
				apply_step(port, parent, child_task_request(port, parent, "task_failed", json(), error, cause));
				return;
			}
		}

		if (pending > 0 && (max_conc == 0 || live < max_conc) && due) {
			Rows nr = port.query(Stmt::CHILDREN_NEXT_PENDING, {parent, gen, next});
			if (nr.empty()) raise(Msg::CHILDREN_PENDING_MISSING, {std::to_string(parent)});
			const int64_t child = nr[0].i64(0), index = nr[0].i64(1);
			port.exec(Stmt::CHILDREN_COUNT_START, {parent, index});
			// the child's first step: its one update sets status and
			// wait_kind whatever the outcome; its 'started' row goes in with
			// the step's
			const json input = value_of(port, nr[0].otext(3), "the input");
			const std::optional<std::string> scope = nr[0].otext(2);
			apply_step(port, child, json{{"op", "start"}, {"input", input}},
					   json{{"event", "started"},
							{"state", nullptr},
							{"detail",
							 {{"parent", parent}, {"index", index}, {"scope", scope ? json(*scope) : json(nullptr)},
							  {"input", input}}}});
			if (call && !(f.value("sync", json(false)).is_boolean() && f["sync"].get<bool>())) {
				// an async call goes on as soon as its child has started
				port.exec(Stmt::CHILDREN_WAIT_OVER, {parent});
				apply_step(port, parent,
						   child_task_request(port, parent, "task_succeeded", json{{"InstanceId", child}}, std::nullopt,
										std::nullopt));
				return;
			}
			continue;
		}

		if (live == 0 && pending == 0) {
			// once per fan-out: the outputs in order, and the parent's row
			json outputs = json::array();
			for (const Row &o : port.query(Stmt::CHILDREN_OUTPUTS, {parent, gen})) {
				if (o.text(0) == "succeeded") {
					outputs.push_back(value_of(port, o.otext(1), "the output"));
				} else {
					json e = json::object();
					if (!o.is_null(2)) e["Error"] = o.text(2);
					if (!o.is_null(3)) e["Cause"] = o.text(3);
					outputs.push_back(std::move(e));
				}
			}
			port.exec(Stmt::CHILDREN_WAIT_OVER, {parent});
			if (call) {
				child_log(port, parent, "call_done", state_opt, json());
				apply_step(port, parent,
						   child_task_request(port, parent, "task_succeeded", outputs.empty() ? json() : outputs.at(0),
										std::nullopt, std::nullopt));
				return;
			}
			child_log(port, parent, "children_done", state_opt, {{"count", total}, {"failed", failed}});
			Rows dp = port.query(Stmt::CHILDREN_DONE_PARENT, {parent});
			if (dp.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(parent)});
			json req = {{"op", "children_done"},
						{"state", state},
						{"state_input", value_of(port, dp[0].otext(0), "the state input")},
						{"outputs", std::move(outputs)}};
			if (!dp[0].is_null(1)) req["retry_counts"] = parse_json(dp[0].text(1), "the retry counts");
			apply_step(port, parent, req);
		}
		return;
	}
}

void cancel_children(Port &port, int64_t parent, const std::string &cause) {
	for (const Row &r : port.query(Stmt::CHILDREN_LIVE, {parent})) cancel_tree(port, r.i64(0), cause);
}

std::string park_event(Port &port, int64_t instance, const json &out) {
	const json counts = retry_counts(out);
	const std::optional<int64_t> timeout = child_opt_int(out, "timeout_s");
	const std::optional<std::string> state = child_opt_str(out, "state");
	const std::string name = child_opt_str(out, "name").value_or("");
	Stop park = waiting_stop(state, member(out, "state_input"), counts, timeout);
	park.resource = "genroc:event";
	park.wait_kind = "event";
	park.activity = name;
	if (timeout) park.timeout_in = *timeout * 1000;
	write_stop(port, instance, park);
	child_log(port, instance, "event_waiting", state,
		{{"name", member(out, "name")}, {"timeout_s", timeout ? json(*timeout) : json(nullptr)}});
	Rows kept = port.query(Stmt::EVENT_KEPT, {instance, name});
	if (kept.empty()) return "waiting";
	port.exec(Stmt::EVENT_TAKE, {kept[0].i64(0)});
	return deliver_event(port, instance, name, kept[0].otext(1).value_or("null"));
}

}  // namespace genroc::engine
