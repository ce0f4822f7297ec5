// sfn_history.cpp — an execution's instance log read as AWS's history (see
// history_events in sfn_api.hpp).
//
// genroc's log keeps, per instance, the states entered (name and type), the
// tasks (input, result, error), waits, fan-outs and the end; not each
// state's input and output.  Those are computed again: the interpreter
// re-runs each step of the log (step's "trace", core/asl.hpp) with the
// events the log holds (the input, each task's result or error, each
// fan-out's children's outputs), and every stop it reaches is checked
// against the log (the states entered, the task input, the fan-out's size,
// the output or error at the end).  When one differs (a step that read
// something the log does not keep: $$.Task.Token, $random, $uuid) the
// instance's states show no input or output rather than wrong ones.
#include <algorithm>
#include <map>

#include "sfn_api.hpp"

namespace genroc::sfn {

namespace {

// At most this many Parallel branches and Map items (all levels) are read
// into one history; past it, the fan-outs show without their iterations.
constexpr size_t kMaxChildren = 1000;

json history_when(const json &iso) {
	if (!iso.is_string()) return nullptr;
	int64_t ms = 0;
	if (!asl::parse_time(iso.get<std::string>(), ms)) return nullptr;
	return static_cast<double>(ms) / 1000.0;
}

// One instance of the execution: the top one, a Parallel branch or a Map item.
struct Member {
	json row;			   // get_instance / list_instances
	json log;			   // its log rows
	int64_t top_id = 0;	   // the execution's instance
	std::string map_name;  // a Map item: the Map state's name
	int64_t index = -1;	   // a Map item: its index
	std::vector<json> visits;	// each state entered, in order: {state, input?, output?}
};

// The name of the state whose ItemProcessor (or Iterator) a scope is, when it is one.
std::string map_of(const std::string &scope) {
	const std::string tail = scope.substr(scope.rfind('/') + 1);
	if (tail != "ItemProcessor" && tail != "Iterator") return {};
	std::string rest = scope.substr(0, scope.rfind('/'));
	std::string name = rest.substr(rest.rfind('/') + 1);
	std::string out;
	for (size_t i = 0; i < name.size(); i++) {
		if (name[i] == '~' && i + 1 < name.size()) {
			out += name[i + 1] == '1' ? '/' : '~';
			i++;
		} else {
			out += name[i];
		}
	}
	return out;
}

const json &detail_of(const json &row) {
	static const json none = json::object();
	return row.contains("detail") && row["detail"].is_object() ? row["detail"] : none;
}

// Re-runs the instance's steps from its log with a trace; fills m.visits, or
// leaves it empty when the log and the replay disagree.
void replay(Member &m, const std::map<int64_t, Member *> &members, const std::vector<Member *> &children,
			Store &store, std::map<std::pair<std::string, int>, asl::DefinitionPtr> &defs) {
	const std::string def_name = m.row.value("definition", "");
	const int version = m.row.value("version", 0);
	auto key = std::make_pair(def_name, version);
	if (!defs.count(key)) {
		try {
			defs[key] = asl::compile(store.get_definition(def_name, version).at("definition"));
		} catch (const Error &) {
			defs[key] = nullptr;
		}
	}
	const asl::DefinitionPtr def = defs[key];
	if (!def) return;
	const Member *top = members.count(m.top_id) ? members.at(m.top_id) : &m;
	json execution = {{"Id", std::to_string(m.top_id)},
					  {"Name", top->row["name"].is_string() ? top->row["name"] : json(std::to_string(m.top_id))},
					  {"StartTime", top->row.value("created_at", "")},
					  {"Input", top->row["input"]}};
	const json context = {{"Execution", execution},
						  {"StateMachine", {{"Id", def_name + ":" + std::to_string(version)}, {"Name", def_name}}},
						  {"Task", {{"Token", ""}}}};
	const json scope = m.row["scope"].is_string() ? m.row["scope"] : json("");
	json vars = json::object();
	json pending;	// the last outcome: where the instance stopped
	int64_t fanout_seq = 0;
	auto fail = [&] { m.visits.clear(); };
	for (const auto &row : m.log) {
		const std::string ev = row.value("event", "");
		const json &d = detail_of(row);
		json req;
		const json state = row["state"];
		if (ev == "started") {
			req = {{"op", "start"}, {"input", m.row["input"]}};
		} else if (ev == "task_succeeded" || ev == "task_failed" || ev == "wait_ended" || ev == "children_done" ||
				   ev == "children_failed") {
			if (!pending.is_object() || pending.value("state", "") != state) return fail();
			req = {{"state", state}, {"state_input", pending["state_input"]}};
			if (pending.contains("retry_counts")) req["retry_counts"] = pending["retry_counts"];
			if (ev == "task_succeeded") {
				if (!d.contains("output")) return fail();
				req["op"] = "task_succeeded";
				req["result"] = d["output"];
			} else if (ev == "task_failed" || ev == "children_failed") {
				req["op"] = "task_failed";
				req["error"] = d.contains("error") ? d["error"] : json();
				req["cause"] = d.contains("cause") && d["cause"].is_string() ? d["cause"] : json();
			} else if (ev == "wait_ended") {
				req["op"] = "timer_fired";
			} else {
				// the children of this fan-out, in order: their outputs
				std::vector<std::pair<int64_t, json>> outs;
				for (const Member *c : children)
					if (c->row.value("parent_id", json()) == m.row["id"] && !c->log.empty() &&
						c->log.front().value("seq", 0) > fanout_seq && c->log.front().value("seq", 0) < row.value("seq", 0))
						outs.emplace_back(c->row["child_index"].is_number() ? c->row["child_index"].get<int64_t>() : 0,
										  c->row["output"]);
				if (static_cast<int64_t>(outs.size()) != d.value("count", -1)) return fail();
				std::sort(outs.begin(), outs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
				json outputs = json::array();
				for (auto &o : outs) outputs.push_back(o.second);
				req["op"] = "children_done";
				req["outputs"] = outputs;
			}
		} else if (ev == "entered" || ev == "task_started" || ev == "activity_claimed" || ev == "queued" ||
				   ev == "slot_acquired" || ev == "run_at_reached" || ev == "wait_started" || ev == "task_submitted") {
			continue;
		} else if (ev == "task_scheduled") {
			if (!pending.is_object() || pending.value("kind", "") != "task") return fail();
			if (d.contains("input") && d["input"] != pending["task_input"]) return fail();
			continue;
		} else if (ev == "children_started") {
			fanout_seq = row.value("seq", 0);
			if (!pending.is_object()) return fail();
			const json &list = pending.contains("items") ? pending["items"] : pending["branches"];
			if (!list.is_array() || static_cast<int64_t>(list.size()) != d.value("count", -1)) return fail();
			continue;
		} else if (ev == "succeeded") {
			if (!pending.is_object() || pending.value("kind", "") != "succeeded") return fail();
			if (d.contains("output") && d["output"] != pending["output"]) return fail();
			continue;
		} else if (ev == "failed") {
			if (!pending.is_object() || pending.value("kind", "") != "failed" || d.value("error", json()) != pending["error"])
				return fail();
			continue;
		} else {
			// a retry, a resume, an event, a call, a cancel, an interruption:
			// steps the replay does not make; what it knows so far stands
			break;
		}
		int64_t now_ms = 0;
		if (!row["at"].is_string() || !asl::parse_time(row["at"].get<std::string>(), now_ms)) return fail();
		req["now_ms"] = now_ms;
		req["scope"] = scope;
		req["context"] = context;
		req["variables"] = vars;
		req["trace"] = true;
		json a;
		try {
			a = asl::step(*def, req);
		} catch (const Error &) {
			return fail();
		}
		if (a.contains("variables")) vars = a["variables"];
		pending = a["outcome"];
		for (const auto &rec : a["trace"]) {
			if (rec.contains("input")) {
				json v = {{"state", rec["state"]}, {"input", rec["input"]}};
				if (rec.contains("output")) v["output"] = rec["output"];
				m.visits.push_back(std::move(v));
			} else if (!m.visits.empty() && m.visits.back()["state"] == rec["state"] && rec.contains("output")) {
				m.visits.back()["output"] = rec["output"];
			}
		}
	}
	// the states entered must be those the log holds, in order
	size_t k = 0;
	for (const auto &row : m.log) {
		if (row.value("event", "") != "entered") continue;
		if (k < m.visits.size() && m.visits[k]["state"] != row["state"]) return fail();
		k++;
	}
}

}  // namespace

json history_events(const Options &o, Store &store, const json &inst, bool data) {
	const std::string prefix = "arn:aws:states:" + o.region + ":" + o.account + ":";
	// the execution's instances: the top one and its branches and items, all levels
	std::vector<std::unique_ptr<Member>> all;
	std::map<int64_t, Member *> by_id;
	auto add_member = [&](json row) {
		auto m = std::make_unique<Member>();
		m->row = std::move(row);
		json log = store.history(m->row.at("id").get<int64_t>());
		m->log = log.contains("history") ? log["history"] : log;
		by_id[m->row.at("id").get<int64_t>()] = m.get();
		all.push_back(std::move(m));
		return all.back().get();
	};
	Member *top = add_member(inst);
	top->top_id = inst.at("id").get<int64_t>();
	std::vector<Member *> children;
	for (size_t i = 0; i < all.size() && children.size() < kMaxChildren; i++) {
		Member *parent = all[i].get();
		if (parent != top && !parent->row["scope"].is_string()) continue;
		bool fans = false;
		for (const auto &r : parent->log) fans = fans || r.value("event", "") == "children_started";
		if (!fans) continue;
		json rows = store.list_instances({{"parent", parent->row.at("id")}, {"limit", kMaxChildren}});
		for (auto &r : rows) {
			if (!r["scope"].is_string() || children.size() >= kMaxChildren) continue;	// a genroc:call: its own execution
			Member *c = add_member(r);
			c->top_id = top->top_id;
			c->map_name = map_of(r["scope"].get<std::string>());
			if (!c->map_name.empty())
				c->index = r["child_index"].is_number() ? r["child_index"].get<int64_t>()
													   : detail_of(c->log.empty() ? json() : c->log.front()).value("index", 0);
			children.push_back(c);
		}
	}
	std::map<std::pair<std::string, int>, asl::DefinitionPtr> defs;
	for (auto &m : all) replay(*m, by_id, children, store, defs);

	// every instance's rows, in the order they were written; a branch's or
	// an item's rows all before its fan-out's end (a store may write a
	// child's last row after its parent went on)
	std::map<Member *, double> bound;
	for (auto &m : all) {
		double b = 1e300;
		auto p = by_id.find(m->row.value("parent_id", json(0)).is_number() ? m->row["parent_id"].get<int64_t>() : 0);
		if (m.get() != top && p != by_id.end() && !m->log.empty()) {
			const int64_t first = m->log.front().value("seq", 0);
			for (const auto &r : p->second->log) {
				const std::string ev = r.value("event", "");
				if ((ev == "children_done" || ev == "children_failed") && r.value("seq", 0) > first) {
					b = static_cast<double>(r.value("seq", 0)) - 0.5;
					break;
				}
			}
			b = std::min(b, bound.count(p->second) ? bound[p->second] : 1e300);
		}
		bound[m.get()] = b;
	}
	struct Row {
		double at;
		int64_t seq;
		const json *row;
		Member *m;
	};
	std::vector<Row> rows;
	for (auto &m : all)
		for (const auto &r : m->log) {
			const int64_t seq = r.value("seq", 0);
			rows.push_back({std::min(static_cast<double>(seq), bound[m.get()]), seq, &r, m.get()});
		}
	std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
		return a.at != b.at ? a.at < b.at : a.seq < b.seq;
	});

	json events = json::array();
	int64_t id = 0;
	// previousEventId as AWS chains it: an event follows the one before it
	// in the same execution, branch or iteration; the first event of a branch
	// or iteration follows its ParallelStateStarted / MapStateStarted, and a
	// fan-out's end follows the last event of its children.
	std::map<const Member *, int64_t> last_of;	// each member's last event
	std::map<int64_t, int64_t> fan_of;			// an instance id: its last fan-out's Started event
	const Member *cur = nullptr;
	bool joins = false;	 // the row at hand ends a fan-out
	auto add = [&](const json &at, const std::string &type, const char *details_key, json details) {
		int64_t prev = id;
		if (!joins) {
			if (auto l = last_of.find(cur); l != last_of.end()) {
				prev = l->second;
			} else if (cur && cur->row["parent_id"].is_number()) {
				auto f = fan_of.find(cur->row["parent_id"].get<int64_t>());
				if (f != fan_of.end()) prev = f->second;
			}
		}
		json e = {{"timestamp", history_when(at)}, {"type", type}, {"id", ++id}, {"previousEventId", prev}};
		if (details_key) e[details_key] = std::move(details);
		events.push_back(std::move(e));
		last_of[cur] = id;
		joins = false;	// the events after a fan-out's end follow it
		if ((type == "MapStateStarted" || type == "ParallelStateStarted") && cur && cur->row["id"].is_number())
			fan_of[cur->row["id"].get<int64_t>()] = id;
	};
	auto payload = [&](json &d, const char *key, const json &v) {
		if (data) d[key] = v.dump();
		d[std::string(key) + "Details"] = {{"truncated", false}};
	};
	struct Open {
		std::string state, type, resource, fan_kind;
		size_t visit = 0;	// the next visit of the instance's replay
		const json *out = nullptr;	// the open state's output, when the replay knows it
	};
	std::map<Member *, Open> open;
	auto activity_of = [](const std::string &r) { return r.rfind("activity:", 0) == 0; };
	auto close_state = [&](Open &s, const json &at, const json *output) {
		if (s.state.empty()) return;
		if (s.type != "Fail") {
			json d = {{"name", s.state}};
			if (!output) output = s.out;
			if (output) payload(d, "output", *output);
			add(at, s.type + "StateExited", "stateExitedEventDetails", d);
		}
		s.state.clear();
		s.out = nullptr;
	};
	for (const Row &each : rows) {
		const json &row = *each.row;
		Member *m = each.m;
		Open &s = open[m];
		const bool is_top = m == top;
		const std::string ev = row.value("event", "");
		const json &at = row["at"];
		const json &d = detail_of(row);
		const std::string state = row["state"].is_string() ? row["state"].get<std::string>() : "";
		cur = m;
		joins = ev == "children_done" || ev == "children_failed";
		if (ev == "started") {
			if (is_top) {
				json x = {{"roleArn", "arn:aws:iam::" + o.account + ":role/genroc"}};
				payload(x, "input", m->row["input"]);
				add(at, "ExecutionStarted", "executionStartedEventDetails", x);
			} else if (!m->map_name.empty()) {
				add(at, "MapIterationStarted", "mapIterationStartedEventDetails",
					{{"name", m->map_name}, {"index", m->index}});
			}
		} else if (ev == "entered") {
			close_state(s, at, nullptr);
			s.state = state;
			s.type = d.value("type", "Pass");
			json x = {{"name", state}};
			const json *visit = s.visit < m->visits.size() ? &m->visits[s.visit] : nullptr;
			s.visit++;
			if (visit && (*visit)["state"] == state) {
				payload(x, "input", (*visit)["input"]);
				if (visit->contains("output")) s.out = &(*visit)["output"];
			}
			add(at, s.type + "StateEntered", "stateEnteredEventDetails", x);
		} else if (ev == "task_scheduled") {
			s.resource = d.value("resource", "");
			if (activity_of(s.resource)) {
				json x = {{"resource", prefix + "activity:" + s.resource.substr(9)}};
				payload(x, "input", d.value("input", json()));
				if (d.contains("timeout_s") && d["timeout_s"].is_number()) x["timeoutInSeconds"] = d["timeout_s"];
				if (d.contains("heartbeat_s") && d["heartbeat_s"].is_number()) x["heartbeatInSeconds"] = d["heartbeat_s"];
				add(at, "ActivityScheduled", "activityScheduledEventDetails", x);
			} else {
				json x = {{"resourceType", "genroc"}, {"resource", s.resource}, {"region", o.region},
						  {"parameters", data ? d.value("input", json()).dump() : std::string("{}")}};
				add(at, "TaskScheduled", "taskScheduledEventDetails", x);
			}
		} else if (ev == "task_started" || ev == "activity_claimed") {
			if (activity_of(s.resource)) {
				json x = json::object();
				if (d.contains("worker") && d["worker"].is_string()) x["workerName"] = d["worker"];
				add(at, "ActivityStarted", "activityStartedEventDetails", x);
			} else {
				add(at, "TaskStarted", "taskStartedEventDetails", {{"resourceType", "genroc"}, {"resource", s.resource}});
			}
		} else if (ev == "task_succeeded") {
			json x = json::object();
			if (!activity_of(s.resource)) x = {{"resourceType", "genroc"}, {"resource", s.resource}};
			payload(x, "output", d.value("output", json()));
			if (activity_of(s.resource)) add(at, "ActivitySucceeded", "activitySucceededEventDetails", x);
			else add(at, "TaskSucceeded", "taskSucceededEventDetails", x);
		} else if (ev == "task_failed") {
			json x = json::object();
			if (d.contains("error") && d["error"].is_string()) x["error"] = d["error"];
			if (d.contains("cause") && d["cause"].is_string()) x["cause"] = d["cause"];
			const bool timeout = d.value("error", json()) == "States.Timeout";
			if (activity_of(s.resource)) {
				add(at, timeout ? "ActivityTimedOut" : "ActivityFailed",
					timeout ? "activityTimedOutEventDetails" : "activityFailedEventDetails", x);
			} else {
				x["resourceType"] = "genroc";
				x["resource"] = s.resource;
				add(at, timeout ? "TaskTimedOut" : "TaskFailed", timeout ? "taskTimedOutEventDetails" : "taskFailedEventDetails",
					x);
			}
		} else if (ev == "task_submitted") {
			// a .waitForTaskToken task's handler returned: it waits for its token
			json x = {{"resourceType", "genroc"}, {"resource", s.resource}};
			payload(x, "output", d.value("output", json()));
			add(at, "TaskSubmitted", "taskSubmittedEventDetails", x);
		} else if (ev == "redriven") {
			if (is_top)
				add(at, "ExecutionRedriven", "executionRedrivenEventDetails",
					{{"redriveCount", d.value("redrive_count", 0)}});
			// a Map or Parallel waiting on its children again is open again
			if (d.contains("kept") && !state.empty()) {
				s.state = state;
				s.type = s.fan_kind == "map" ? "Map" : "Parallel";
			}
		} else if (ev == "children_started") {
			s.fan_kind = d.value("kind", "");
			if (s.fan_kind == "map")
				add(at, "MapStateStarted", "mapStateStartedEventDetails", {{"length", d.value("count", 0)}});
			else if (s.fan_kind == "parallel")
				add(at, "ParallelStateStarted", nullptr, nullptr);
		} else if (ev == "children_done" || ev == "children_failed") {
			const bool ok = ev == "children_done" && d.value("failed", 0) == 0;
			if (s.fan_kind == "map") add(at, ok ? "MapStateSucceeded" : "MapStateFailed", nullptr, nullptr);
			else if (s.fan_kind == "parallel") add(at, ok ? "ParallelStateSucceeded" : "ParallelStateFailed", nullptr, nullptr);
		} else if (ev == "succeeded") {
			const json out = d.value("output", m->row.value("output", json()));
			close_state(s, at, s.out ? s.out : &out);
			if (is_top) {
				json x = json::object();
				payload(x, "output", out);
				add(at, "ExecutionSucceeded", "executionSucceededEventDetails", x);
			} else if (!m->map_name.empty()) {
				add(at, "MapIterationSucceeded", "mapIterationSucceededEventDetails",
					{{"name", m->map_name}, {"index", m->index}});
			}
		} else if (ev == "failed" || ev == "cancelled") {
			if (ev == "failed" && s.type != "Fail") close_state(s, at, nullptr);
			s.state.clear();
			if (is_top) {
				json x = json::object();
				const json err = d.value("error", m->row.value("error", json()));
				const json cause = d.value("cause", m->row.value("cause", json()));
				if (err.is_string()) x["error"] = err;
				if (cause.is_string()) x["cause"] = cause;
				if (ev == "cancelled") add(at, "ExecutionAborted", "executionAbortedEventDetails", x);
				else if (err == "States.Timeout" && state.empty())
					add(at, "ExecutionTimedOut", "executionTimedOutEventDetails", x);
				else add(at, "ExecutionFailed", "executionFailedEventDetails", x);
			} else if (!m->map_name.empty()) {
				add(at, ev == "cancelled" ? "MapIterationAborted" : "MapIterationFailed",
					ev == "cancelled" ? "mapIterationAbortedEventDetails" : "mapIterationFailedEventDetails",
					{{"name", m->map_name}, {"index", m->index}});
			}
		}
	}
	return events;
}

}  // namespace genroc::sfn
