// sfn_test_state.cpp — TestState: one state run by the interpreter alone
// (step's "single" and "trace" members, core/asl.hpp) on a given input, its
// output, next state, status and the value after each processing stage;
// nothing stored, no store touched.
//
// A Task, Parallel or Map runs only with a mock (AWS's `mock`: a result, or
// an errorOutput that Retry and Catch then see): genroc calls no task
// resource from TestState.
#include <chrono>

#include "json_guard.hpp"
#include "sfn_api.hpp"

namespace genroc::sfn {

namespace {

[[noreturn]] void refuse(const std::string &type, const std::string &message) { throw Failure{type, message, 400}; }

const json *member(const json &b, const char *name) {
	auto it = b.find(name);
	return it == b.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const json &b, const char *name) {
	const json *v = member(b, name);
	if (!v) return {};
	if (!v->is_string()) refuse("ValidationException", std::string("'") + name + "' must be a string");
	return v->get<std::string>();
}

// A member holding JSON text: its value, or `absent`.
json json_member(const json &b, const char *name, const char *error_type, const json &absent) {
	const json *v = member(b, name);
	if (!v) return absent;
	try {
		return parse_json_text(text(b, name), std::string("'") + name + "'");
	} catch (const Error &e) {
		refuse(error_type, std::string("Invalid '") + name + "': " + e.what());
	}
}

// Every state a state names as its next one (Next, Default, a rule's or a
// catcher's Next).
void next_states(const json &state, std::vector<std::string> &out) {
	auto add = [&](const json &o, const char *k) {
		if (o.is_object() && o.contains(k) && o[k].is_string()) out.push_back(o[k].get<std::string>());
	};
	add(state, "Next");
	add(state, "Default");
	for (const char *list : {"Choices", "Catch"})
		if (state.contains(list) && state[list].is_array())
			for (const auto &e : state[list]) add(e, "Next");
}

// The state to test, in a machine of its own: the state, and a Succeed
// state for each one it names (so that Next is valid and the step stops
// there), with the machine's QueryLanguage.
json machine_of(const json &definition, const std::string &state_name, std::string &name) {
	json state;
	json query_language;
	if (!state_name.empty()) {
		if (!definition.contains("States") || !definition["States"].is_object() ||
			!definition["States"].contains(state_name))
			refuse("ValidationException", "stateName '" + shown(state_name) +
											  "' is not a state of the definition's top-level States");
		state = definition["States"][state_name];
		if (definition.contains("QueryLanguage")) query_language = definition["QueryLanguage"];
		name = state_name;
	} else {
		if (definition.contains("States") && definition.contains("StartAt"))
			refuse("InvalidDefinition", "the definition is a state machine: name the state to test in stateName");
		state = definition;
		name = "TestState";
	}
	if (!state.is_object() || !state.contains("Type") || !state["Type"].is_string())
		refuse("InvalidDefinition", "Invalid State Definition: a state is an object with a string Type");
	json m = {{"StartAt", name}, {"States", {{name, state}}}};
	if (!query_language.is_null()) m["QueryLanguage"] = query_language;
	std::vector<std::string> nexts;
	next_states(state, nexts);
	for (const auto &n : nexts)
		if (!m["States"].contains(n)) m["States"][n] = {{"Type", "Succeed"}};
	return m;
}

// The stage values of the state, from the step's trace records, as AWS's
// InspectionData: JSON text but errorDetails.
void inspect(json &data, const json &answer) {
	if (!answer.contains("trace")) return;
	for (const auto &rec : answer["trace"]) {
		for (auto &[k, v] : rec.items()) {
			if (k == "state" || k == "type" || k == "output") continue;
			if (k == "errorDetails") data[k] = v;
			else data[k] = v.dump();
		}
	}
}

}  // namespace

json test_state(const Options &o, const json &b) {
	for (auto &[k, v] : b.items()) {
		static const char *known[] = {"definition", "roleArn", "input", "inspectionLevel", "revealSecrets", "variables",
									  "stateName", "mock", "context", "stateConfiguration"};
		bool ok = false;
		for (const char *n : known) ok = ok || k == n;
		if (!ok) refuse("ValidationException", "unknown member \"" + shown(k) + "\"");
	}
	if (!member(b, "definition"))
		refuse("ValidationException",
			   "1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null");
	text(b, "roleArn");
	const std::string level = member(b, "inspectionLevel") ? text(b, "inspectionLevel") : "INFO";
	if (level != "INFO" && level != "DEBUG" && level != "TRACE")
		refuse("ValidationException", "'inspectionLevel' must be INFO, DEBUG or TRACE");
	if (const json *r = member(b, "revealSecrets"); r && !r->is_boolean())
		refuse("ValidationException", "'revealSecrets' must be a boolean");
	const json definition = json_member(b, "definition", "InvalidDefinition", json());
	if (!definition.is_object()) refuse("InvalidDefinition", "Invalid State Definition: it must be a JSON object");
	const json input = json_member(b, "input", "InvalidExecutionInput", json::object());
	const json variables = json_member(b, "variables", "ValidationException", json::object());
	if (!variables.is_object()) refuse("ValidationException", "'variables' must hold a JSON object");
	const json *mock = member(b, "mock");
	if (mock && !mock->is_object()) refuse("ValidationException", "'mock' must be an object");
	json mock_result, mock_error;
	if (mock) {
		for (auto &[k, v] : mock->items())
			if (k != "result" && k != "errorOutput" && k != "fieldValidationMode")
				refuse("ValidationException", "unknown member \"mock." + shown(k) + "\"");
		if (member(*mock, "result")) mock_result = json_member(*mock, "result", "ValidationException", json());
		if (const json *e = member(*mock, "errorOutput")) {
			if (!e->is_object() || !member(*e, "error"))
				refuse("ValidationException", "'mock.errorOutput' must be an object with an 'error'");
			mock_error = {{"error", text(*e, "error")}, {"cause", member(*e, "cause") ? json(text(*e, "cause")) : json()}};
			if (mock_error["error"].get<std::string>().empty())
				refuse("ValidationException", "'mock.errorOutput.error' must not be empty");
		}
		if ((member(*mock, "result") != nullptr) == (member(*mock, "errorOutput") != nullptr))
			refuse("ValidationException", "'mock' needs exactly one of 'result' and 'errorOutput'");
	}
	const json context_in = json_member(b, "context", "ValidationException", json());
	if (!context_in.is_null() && !mock)
		refuse("ValidationException", "'context' may be given only with a 'mock'");
	if (!context_in.is_null() && !context_in.is_object())
		refuse("ValidationException", "'context' must hold a JSON object");
	int64_t retry_count = 0;
	if (const json *c = member(b, "stateConfiguration")) {
		if (!c->is_object()) refuse("ValidationException", "'stateConfiguration' must be an object");
		for (auto &[k, v] : c->items()) {
			if (k != "retrierRetryCount")
				refuse("ValidationException", "stateConfiguration." + shown(k) + " is not supported by genroc's TestState");
			if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 99999999)
				refuse("ValidationException", "'stateConfiguration.retrierRetryCount' must be an integer >= 0");
			retry_count = v.get<int64_t>();
		}
	}

	std::string name;
	const json machine = machine_of(definition, text(b, "stateName"), name);
	const std::string type = machine["States"][name]["Type"];
	const bool needs_mock = type == "Task" || type == "Parallel" || type == "Map";
	if (mock && !needs_mock)
		refuse("ValidationException", "a mock can be given only for a Task, Parallel or Map state, not a " + shown(type));
	if (!mock && needs_mock)
		refuse("ValidationException", "genroc's TestState runs a " + type +
										  " state only with a 'mock' (a result or an errorOutput): it calls no task "
										  "resource and starts no branch or item");
	if (type == "Map" && !mock_result.is_null() && !mock_result.is_array())
		refuse("ValidationException", "a Map state's mock result must be a JSON array (one result per item)");
	if (type == "Parallel" && !mock_result.is_null() && !mock_result.is_array())
		refuse("ValidationException", "a Parallel state's mock result must be a JSON array (one result per branch)");
	// A mocked Task calls nothing: any resource (a Lambda ARN, an HTTP task)
	// is tested as genroc's no-op task, which the mock answers.
	json runnable = machine;
	if (type == "Task" && runnable["States"][name].contains("Resource") &&
		runnable["States"][name]["Resource"].is_string())
		runnable["States"][name]["Resource"] = "genroc:noop";
	asl::DefinitionPtr def;
	try {
		def = asl::compile(runnable);
	} catch (const Error &e) {
		refuse("InvalidDefinition", std::string("Invalid State Definition: ") + e.what());
	}

	const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
							std::chrono::system_clock::now().time_since_epoch())
							.count();
	json context = context_in;
	if (context.is_null()) {
		const std::string prefix = "arn:aws:states:" + o.region + ":" + o.account + ":";
		context = {{"Execution",
					{{"Id", prefix + "execution:TestStateMachine:TestState"},
					 {"Input", input},
					 {"Name", "TestState"},
					 {"StartTime", asl::format_time(now)}}},
				   {"StateMachine", {{"Id", prefix + "stateMachine:TestStateMachine"}, {"Name", "TestStateMachine"}}}};
	}
	json base = {{"now_ms", now}, {"context", context}, {"variables", variables}, {"single", true}, {"trace", true}};
	json trace_of = json::object();	// the stage values of both steps, merged
	json answers = json::array();
	auto run = [&](json req) {
		for (auto &[k, v] : base.items()) req[k] = v;
		try {
			json a = asl::step(*def, req);
			if (a.contains("variables")) base["variables"] = a["variables"];
			answers.push_back(a);
			return a;
		} catch (const Error &e) {
			refuse("ValidationException", e.what());
		}
	};
	json a = run({{"op", "enter"}, {"state", name}, {"state_input", input}});
	json out = a["outcome"];
	const std::string kind = out.value("kind", "");
	bool mocked_error = false;
	if (kind == "wait") {
		// TestState does not wait: the time has come at once.
		a = run({{"op", "timer_fired"}, {"state", name}, {"state_input", input}});
	} else if (kind == "task" || kind == "parallel" || kind == "map" || kind == "event" || kind == "call") {
		json counts = json::array();
		for (size_t i = 0; i < out["retry_counts"].size(); i++) counts.push_back(retry_count);
		if (!mock_error.is_null()) {
			mocked_error = true;
			a = run({{"op", "task_failed"}, {"state", name}, {"state_input", input}, {"error", mock_error["error"]},
					 {"cause", mock_error["cause"]}, {"retry_counts", counts}});
		} else if (kind == "task" || kind == "event" || kind == "call") {
			a = run({{"op", "task_succeeded"}, {"state", name}, {"state_input", input}, {"result", mock_result},
					 {"retry_counts", counts}});
		} else {
			a = run({{"op", "children_done"}, {"state", name}, {"state_input", input}, {"outputs", mock_result},
					 {"retry_counts", counts}});
		}
		if (kind == "map") {
			json &first = answers[0]["outcome"];
			trace_of["maxConcurrency"] = first.value("max_concurrency", 0);
			if (first["tolerated_count"].is_number()) trace_of["toleratedFailureCount"] = first["tolerated_count"];
			if (first["tolerated_percentage"].is_number())
				trace_of["toleratedFailurePercentage"] = first["tolerated_percentage"];
		}
	}
	out = a["outcome"];
	const std::string end = out.value("kind", "");
	json r = json::object();
	bool caught = false;
	for (const auto &ans : answers) {
		inspect(trace_of, ans);
		for (const auto &rec : ans.value("trace", json::array()))
			if (rec.contains("errorDetails") && rec["errorDetails"].contains("catchIndex")) caught = true;
	}
	if (end == "next" || end == "succeeded") {
		r["output"] = out["output"].dump();
		if (end == "next") r["nextState"] = out["state"];
		r["status"] = caught ? "CAUGHT_ERROR" : "SUCCEEDED";
	} else if (end == "failed") {
		r["status"] = "FAILED";
		if (out["error"].is_string()) r["error"] = out["error"];
		if (out["cause"].is_string()) r["cause"] = out["cause"];
	} else if (end == "task" || end == "parallel" || end == "map" || end == "event" || end == "call") {
		r["status"] = "RETRIABLE";	// a Retry takes the mocked error: the state would run again
	} else {
		refuse("ValidationException", "the state ended its step with an outcome TestState does not know: " + end);
	}
	if (caught || r["status"] == "RETRIABLE") {
		// the error the state handled, when no Catch output names it
		const json &why = mocked_error ? mock_error : json();
		if (why.is_object()) {
			r["error"] = why["error"];
			if (why["cause"].is_string()) r["cause"] = why["cause"];
		} else if (caught) {
			// an error of the state's own processing, caught: as the catcher saw it
			for (const auto &rec : answers.back().value("trace", json::array()))
				if (rec.contains("output") && rec["output"].is_object() && rec["output"].contains("Error")) {
					r["error"] = rec["output"]["Error"];
					if (rec["output"].contains("Cause")) r["cause"] = rec["output"]["Cause"];
				}
		}
	}
	if (level != "INFO") {
		if (!base["variables"].empty()) trace_of["variables"] = base["variables"].dump();
		r["inspectionData"] = trace_of;
	}
	return r;
}

}  // namespace genroc::sfn
