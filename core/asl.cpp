// asl.cpp — compile() (validation and indexing of a definition) and step()
// (running an instance from one event to its next stop).  See asl.hpp for
// the step protocol.
//
// Glossary
//   raw input        what a state receives (its "state input")
//   effective input  the raw input after InputPath (and Parameters)
//   transition       leaving a state with its output: End means the
//                    instance succeeded, otherwise the step enters Next
//   pre-task error   a failure while building a Task's input (Parameters,
//                    an intrinsic, TimeoutSecondsPath): only Catch applies,
//                    since there is no task to run again
//   post-task error  a failure while processing a task's result
//                    (ResultSelector, ResultPath, OutputPath): Retry (which
//                    runs the task again) and Catch both apply, as in ASL

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "internal.hpp"
#include "jsonata.hpp"

namespace genroc::asl {

using namespace detail;

namespace {

// A step that enters more states than this is taken for a loop of inline
// states that never stops (Pass -> Choice -> Pass ...), which would hold its
// transaction forever.  Generous enough for a counting loop over a few
// thousand items; a real loop over more should go through a Task or a Wait.
constexpr size_t kMaxEnteredPerStep = limits::STATES_PER_STEP;

// now_ms must be a time genroc can print (years 0000 to 9999), which also
// keeps now + any delay far from int64 overflow.
constexpr int64_t kMinNowMs = -62167219200000;	 // 0000-01-01T00:00:00Z
constexpr int64_t kMaxNowMs = 253402300799999;	 // 9999-12-31T23:59:59.999Z

// A Wait, timeout or delay must stay inside what int64 milliseconds hold.
constexpr int64_t kMaxSeconds = 100LL * 365 * 24 * 3600;
// AWS's bound on MaxInputBytesPerBatch (256 KiB).
constexpr int64_t kMaxBatchBytes = 262144;

enum class StateType { Pass, Task, Choice, Wait, Succeed, Fail, Parallel, Map };

// InputPath/OutputPath: absent means `$` (everything), null means {}.
struct IoPath {
	bool is_null = false;
	std::optional<Path> path;
};

// ResultPath: absent means `$` (the result replaces the input), null
// discards the result.
struct ResultPathSpec {
	bool discard = false;
	std::optional<Path> path;
};

// Parameters / ResultSelector, compiled.
struct Template {
	enum Kind { Literal, PathRef, Intrinsic, Object, Array } kind = Literal;
	json literal;
	std::shared_ptr<const Path> path;
	std::shared_ptr<const Call> call;
	// Object: keys[i] -> values[i].  Two vectors, not one of pairs: a pair
	// needs Template complete where a vector does not (clang refuses it).
	std::vector<std::string> keys;
	std::vector<Template> values;
	std::vector<Template> items;
};

// A field of a JSONata state: JSON in which every string of the form
// "{% expression %}" is a JSONata expression, evaluated when the state runs
// (Arguments, Output, Assign, Items, ItemSelector, ...).
struct JTemplate {
	enum Kind { Literal, Expr, Object, Array } kind = Literal;
	json literal;
	jsonata::ExpressionPtr expr;
	std::vector<std::string> keys;
	std::vector<JTemplate> values;
	std::vector<JTemplate> items;
};

// Assign: the variables a state sets, in the state's query language
// (JSONPath: a Parameters-like object, "name.$" keys take a path or an
// intrinsic; JSONata: a JTemplate object).
struct AssignSpec {
	bool jsonata = false;
	bool uses_states = false;  // JSONPath: a path reads $states
	Template path_form;
	JTemplate jsonata_form;
};

// A value taken from a literal, a path, or an intrinsic (Fail's ErrorPath),
// or a JSONata expression (a JSONata Fail's Error / Cause).
struct ValueSource {
	std::optional<std::string> literal;
	std::shared_ptr<const Path> path;
	std::shared_ptr<const Call> call;
	jsonata::ExpressionPtr expr;
	bool present() const { return literal || path || call || expr; }
};

struct Retrier {
	std::vector<std::string> errors;
	int64_t interval_s = 1;
	int64_t max_attempts = 3;
	double backoff_rate = 2.0;
	std::optional<int64_t> max_delay_s;
	bool full_jitter = false;
};

struct Catcher {
	std::vector<std::string> errors;
	std::string next;
	ResultPathSpec result_path;
	std::optional<AssignSpec> assign;
	std::optional<JTemplate> output;  // JSONata
};

struct Rule {
	enum Op {
		Compare,
		Matches,
		IsNull,
		IsPresent,
		IsNumeric,
		IsString,
		IsBoolean,
		IsTimestamp,
		And,
		Or,
		Not
	} op = Compare;
	char kind = 's';  // Compare: 's' string, 'n' numeric, 'b' boolean, 't' timestamp
	enum Cmp { Eq, Lt, Gt, Le, Ge } cmp = Eq;
	std::optional<Path> variable;
	json value;
	std::optional<Path> value_path;
	std::vector<Rule> kids;
	std::string next;
	// JSONata: the rule is its Condition (a boolean or an expression)
	jsonata::ExpressionPtr condition;
	bool condition_value = false;
	// a top-level rule's own Assign (both languages) and Output (JSONata)
	std::optional<AssignSpec> assign;
	std::optional<JTemplate> output;
};

struct State {
	std::string name;
	StateType type = StateType::Pass;
	std::string type_name;
	std::string next;
	bool end = false;
	IoPath input_path, output_path;
	std::optional<Template> parameters, result_selector;
	ResultPathSpec result_path;
	std::optional<json> result;
	std::vector<Retrier> retry;
	std::vector<Catcher> catchers;
	std::optional<int64_t> timeout_s, heartbeat_s;
	std::optional<Path> timeout_path, heartbeat_path;
	std::string resource;
	// Resource ends in .waitForTaskToken (stripped from resource): the
	// handler's return parks the state until a result arrives by its token
	bool wait_for_token = false;
	bool only_once = false;
	std::vector<Rule> choices;
	std::string default_next;
	std::optional<int64_t> seconds, timestamp_ms;
	std::optional<Path> seconds_path, timestamp_path;
	ValueSource error, cause;
	// Parallel: the scope of each branch; Map: the scope of the item
	// processor and how the items are made (scopes are JSON pointers into
	// the definition, see asl.hpp).
	std::vector<std::string> branch_scopes;
	std::string item_scope;
	std::optional<Path> items_path;
	std::optional<Template> item_selector;	// ItemSelector, or the older Parameters
	int64_t max_concurrency = 0;			// 0: no limit
	std::optional<int64_t> tolerated_count;
	std::optional<double> tolerated_pct;
	// The same three read from the input when the Map starts (the *Path forms).
	std::optional<Path> max_concurrency_path, tolerated_count_path, tolerated_pct_path;
	// ItemBatcher: items go to the item processor in batches of at most
	// batch_items items and batch_bytes bytes of JSON (0: no bound), as
	// {"Items": [...]} plus "BatchInput" when one is given.
	bool batched = false;
	int64_t batch_items = 0, batch_bytes = 0;
	std::optional<Path> batch_items_path, batch_bytes_path;
	jsonata::ExpressionPtr batch_items_x, batch_bytes_x;  // JSONata: {% %} sizes
	std::optional<Template> batch_input;
	// QueryLanguage JSONata: the fields below replace the JSONPath ones, and
	// the numbers above may come from expressions (evaluated when needed)
	bool jsonata = false;
	std::optional<JTemplate> arguments, output, items, j_item_selector, j_batch_input;
	jsonata::ExpressionPtr timeout_x, heartbeat_x, seconds_x, timestamp_x, max_concurrency_x,
		tolerated_count_x, tolerated_pct_x;
	std::optional<AssignSpec> assign;
};

// One state machine: the top of a definition, a Parallel branch, or a Map's
// item processor.
struct Machine {
	std::string start_at;
	std::map<std::string, State> states;
};

}  // namespace

class Definition {
  public:
	// Every machine of the definition by scope: "" is the top.
	std::map<std::string, Machine> machines;
	size_t state_count = 0;	 // over every machine (limit state_count)
	// Every state name of the machine and its branches and item processors:
	// AWS wants each unique across the whole definition.
	std::map<std::string, std::string> state_names;	 // name -> where it was first given
	bool jsonata = false;  // the top-level QueryLanguage
	// Variables: the names each machine's states assign (scope -> name ->
	// where first), and each nested machine's enclosing one (scope ->
	// parent scope), to refuse an inner Assign of an outer variable.
	std::map<std::string, std::map<std::string, std::string>> assigned;
	std::map<std::string, std::string> parent_scope;
	bool reads_context = true;			 // asl.hpp reads_context()
	bool reads_execution_input = true;	 // asl.hpp reads_execution_input()
	std::optional<json> start_task;		 // asl.hpp start_task()
	std::set<std::string> success_ends;	 // asl.hpp success_ends(): the states
};

namespace {

// ================================================================ compile

[[noreturn]] void fault(const std::string &where, const std::string &what) {
	throw Error(sqlstate::INVALID_DEFINITION, "invalid definition at " + where + ": " + what);
}

// A definition over one of the limits of limits.def: the same message shape
// as a fault, SQLSTATE 54000 (program_limit_exceeded).
[[noreturn]] void over_limit(const std::string &where, const std::string &what) {
	throw Error(limits::PROGRAM_LIMIT_EXCEEDED, "invalid definition at " + where + ": " + what);
}

// `where` + a member name, in the JSONPath form a reader can paste.
std::string member(const std::string &where, const std::string &name) {
	bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
	for (char c : name)
		plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
	if (plain)
		return where + "." + name;
	std::string q;
	for (char c : name) {
		if (c == '\'' || c == '\\')
			q += '\\';
		q += c;
	}
	return where + "['" + q + "']";
}

std::string element(const std::string &where, size_t i) {
	return where + "[" + std::to_string(i) + "]";
}

const std::string &text_of(const json &v, const std::string &where) {
	if (!v.is_string())
		fault(where, std::string("must be a string, not ") + v.type_name());
	return v.get_ref<const std::string &>();
}

int64_t positive_int(const json &v, const std::string &where) {
	if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) ||
		v.get<int64_t>() <= 0)
		fault(where, "must be a positive integer");
	if (v.get<int64_t>() > kMaxSeconds)
		fault(where, "must be at most " + std::to_string(kMaxSeconds));
	return v.get<int64_t>();
}

Path path_of(const json &v, const std::string &where) {
	const std::string &t = text_of(v, where);
	try {
		return Path::parse(t);
	} catch (const LimitExceeded &e) {
		over_limit(where, e.what());
	} catch (const SyntaxError &e) {
		fault(where, "\"" + t + "\" is not a valid path: " + e.what());
	}
}

// A reference path; one that only reads (ItemsPath, the *Path numbers and
// times) may start at a variable, one that writes (ResultPath) may not.
Path reference_path_of(const json &v, const std::string &where, bool reads = true) {
	Path p = path_of(v, where);
	if (!p.is_reference(reads))
		fault(where, "\"" + p.text() + "\" must be a reference path ($" +
						 (reads ? " or a $variable" : "") + " and field names or indices only)");
	return p;
}

IoPath io_path(const json &st, const char *field, const std::string &where) {
	IoPath io;
	auto it = st.find(field);
	if (it == st.end())
		return io;
	if (it->is_null())
		io.is_null = true;
	else
		io.path = path_of(*it, member(where, field));
	return io;
}

ResultPathSpec result_path_spec(const json &obj, const std::string &where) {
	ResultPathSpec rp;
	auto it = obj.find("ResultPath");
	if (it == obj.end())
		return rp;
	if (it->is_null())
		rp.discard = true;
	else
		rp.path = reference_path_of(*it, member(where, "ResultPath"), false);
	return rp;
}

std::shared_ptr<const Call> intrinsic_of(const std::string &text, const std::string &where) {
	try {
		return parse_intrinsic(text);
	} catch (const LimitExceeded &e) {
		over_limit(where, e.what());
	} catch (const SyntaxError &e) {
		fault(where, "\"" + text + "\" is not a valid intrinsic function call: " + e.what());
	}
}

Template compile_template(const json &v, const std::string &where) {
	limits::RecursionGuard guard;
	Template t;
	if (v.is_object()) {
		t.kind = Template::Object;
		std::set<std::string> keys;
		for (auto it = v.begin(); it != v.end(); ++it) {
			const std::string &key = it.key();
			const std::string at = member(where, key);
			const bool dynamic = key.size() > 2 && key.compare(key.size() - 2, 2, ".$") == 0;
			const std::string name = dynamic ? key.substr(0, key.size() - 2) : key;
			if (!keys.insert(name).second)
				fault(at, "the field \"" + name + "\" is given twice (with and without .$)");
			Template sub;
			if (dynamic) {
				const std::string &text = text_of(*it, at);
				if (!text.empty() && text[0] == '$') {
					sub.kind = Template::PathRef;
					sub.path = std::make_shared<Path>(path_of(*it, at));
				} else if (text.compare(0, 7, "States.") == 0) {
					sub.kind = Template::Intrinsic;
					sub.call = intrinsic_of(text, at);
				} else {
					fault(at, "a field ending in .$ takes a path or an intrinsic function call, "
							  "not \"" + text + "\"");
				}
			} else {
				sub = compile_template(*it, at);
			}
			t.keys.push_back(name);
			t.values.push_back(std::move(sub));
		}
	} else if (v.is_array()) {
		t.kind = Template::Array;
		for (size_t i = 0; i < v.size(); i++)
			t.items.push_back(compile_template(v[i], element(where, i)));
	} else {
		t.literal = v;
	}
	return t;
}

// A string of the form "{% expression %}": a JSONata expression.
bool is_expression(const json &v) {
	if (!v.is_string())
		return false;
	const std::string &t = v.get_ref<const std::string &>();
	return t.size() >= 4 && t.compare(0, 2, "{%") == 0 && t.compare(t.size() - 2, 2, "%}") == 0;
}

// Compiles the expression inside "{% ... %}" (once, here, at define time).
jsonata::ExpressionPtr expression_of(const json &v, const std::string &where) {
	const std::string &t = v.get_ref<const std::string &>();
	try {
		std::string body = t.substr(2, t.size() - 4);
		const size_t b = body.find_first_not_of(" \t\r\n"), e = body.find_last_not_of(" \t\r\n");
		body = b == std::string::npos ? std::string() : body.substr(b, e - b + 1);
		return jsonata::compile(body);
	} catch (const jsonata::JsonataError &e) {
		if (e.code == "L0001")
			over_limit(where, std::string(e.what()) + " (JSONata L0001)");
		fault(where, "\"" + t + "\" is not a valid JSONata expression: " + e.what() + " (" + e.code +
						 ")");
	}
}

JTemplate compile_jtemplate(const json &v, const std::string &where) {
	limits::RecursionGuard guard;
	JTemplate t;
	if (is_expression(v)) {
		t.kind = JTemplate::Expr;
		t.expr = expression_of(v, where);
	} else if (v.is_object()) {
		t.kind = JTemplate::Object;
		for (auto it = v.begin(); it != v.end(); ++it) {
			t.keys.push_back(it.key());
			t.values.push_back(compile_jtemplate(*it, member(where, it.key())));
		}
	} else if (v.is_array()) {
		t.kind = JTemplate::Array;
		for (size_t i = 0; i < v.size(); i++)
			t.items.push_back(compile_jtemplate(v[i], element(where, i)));
	} else {
		t.literal = v;
	}
	return t;
}

// A variable name: Unicode's identifier rule (a letter of any script or _,
// then letters, combining marks, digits or _; variable_name_at), at most
// variable_name characters (code points); "states" is reserved ($states).
void check_variable_name(const std::string &name, const std::string &where) {
	size_t chars = 0;
	if (name.empty() || variable_name_at(name, 0, &chars) != name.size())
		fault(where, "\"" + name +
						 "\" is not a valid variable name (a letter or _, then letters, digits or _; "
						 "letters of any script)");
	if (chars > limits::VARIABLE_NAME)
		fault(where, "a variable name has at most " + std::to_string(limits::VARIABLE_NAME) +
						 " characters" + limits::named("variable_name"));
	if (name == "states")
		fault(where, "\"states\" is reserved ($states is the state's input, result, error and context)");
}

// Assign, in either language; records the names the machine at `scope` sets.
// A JSONPath Assign's paths may read $states.input, $states.context and
// `extra` ("result" in a Task, Parallel or Map, "errorOutput" in a catcher).
AssignSpec compile_assign(const json &v, const std::string &where, bool jsonata,
						  const std::string &scope, Definition &d, const char *extra = nullptr) {
	if (!v.is_object())
		fault(where, "must be an object of variable names and values");
	AssignSpec a;
	a.jsonata = jsonata;
	for (auto it = v.begin(); it != v.end(); ++it) {
		const std::string &key = it.key();
		const bool dynamic = key.size() > 2 && key.compare(key.size() - 2, 2, ".$") == 0;
		if (dynamic && jsonata)
			fault(member(where, key), "a JSONata state's Assign takes {% %} expressions, not .$ fields");
		const std::string name = dynamic ? key.substr(0, key.size() - 2) : key;
		check_variable_name(name, member(where, key));
		d.assigned[scope].emplace(name, member(where, key));
	}
	if (jsonata) {
		a.jsonata_form = compile_jtemplate(v, where);
	} else {
		std::vector<std::string> fields = {"input", "context"};
		if (extra)
			fields.push_back(extra);
		StatesFields states(std::move(fields));
		a.path_form = compile_template(v, where);
		a.uses_states = states.used;
	}
	return a;
}

// Fields each state type allows (besides Type and Comment).
const std::map<std::string, std::set<std::string>> &allowed_fields() {
	static const std::map<std::string, std::set<std::string>> fields = {
		{"Pass",
		 {"Next", "End", "InputPath", "OutputPath", "Parameters", "ResultPath", "Result",
		  "QueryLanguage", "Assign", "Output"}},
		{"Task",
		 {"Next", "End", "InputPath", "OutputPath", "Parameters", "ResultSelector", "ResultPath",
		  "Retry", "Catch", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds",
		  "HeartbeatSecondsPath", "Resource", "OnlyOnce", "Credentials", "QueryLanguage",
		  "Assign", "Output", "Arguments"}},
		{"Choice",
		 {"InputPath", "OutputPath", "Choices", "Default", "QueryLanguage", "Assign", "Output"}},
		{"Wait",
		 {"Next", "End", "InputPath", "OutputPath", "Seconds", "Timestamp", "SecondsPath",
		  "TimestampPath", "QueryLanguage", "Assign", "Output"}},
		{"Succeed", {"InputPath", "OutputPath", "QueryLanguage", "Output"}},
		{"Fail", {"Error", "Cause", "ErrorPath", "CausePath", "QueryLanguage"}},
		{"Parallel",
		 {"Next", "End", "InputPath", "OutputPath", "Parameters", "ResultSelector", "ResultPath",
		  "Retry", "Catch", "Branches", "QueryLanguage", "Assign", "Output", "Arguments"}},
		{"Map",
		 {"Next", "End", "InputPath", "OutputPath", "Parameters", "ItemSelector", "ItemsPath",
		  "ItemProcessor", "Iterator", "MaxConcurrency", "MaxConcurrencyPath",
		  "ToleratedFailureCount", "ToleratedFailureCountPath", "ToleratedFailurePercentage",
		  "ToleratedFailurePercentagePath", "ItemBatcher", "Label", "ItemReader", "ResultWriter",
		  "ResultSelector", "ResultPath", "Retry", "Catch", "QueryLanguage", "Assign", "Output",
		  "Items"}},
	};
	return fields;
}

void check_error_list(const json &list, const std::string &where, bool last_entry) {
	if (!list.is_array() || list.empty())
		fault(where, "must be a non-empty array of error names");
	for (size_t i = 0; i < list.size(); i++) {
		const std::string &e = text_of(list[i], element(where, i));
		if (e.empty())
			fault(element(where, i), "an error name must not be empty");
		if (e == "States.ALL") {
			if (list.size() != 1)
				fault(element(where, i), "States.ALL must appear alone in ErrorEquals");
			if (!last_entry)
				fault(element(where, i), "a States.ALL entry must be the last one");
		}
	}
}

std::vector<std::string> strings(const json &list) {
	std::vector<std::string> out;
	for (const auto &e : list)
		out.push_back(e.get<std::string>());
	return out;
}

void check_fields(const json &obj, const std::set<std::string> &allowed, const std::string &where) {
	for (auto it = obj.begin(); it != obj.end(); ++it)
		if (!allowed.count(it.key()))
			fault(member(where, it.key()), "unknown field");
}

std::vector<Retrier> compile_retry(const json &v, const std::string &where) {
	if (!v.is_array())
		fault(where, "must be an array");
	std::vector<Retrier> out;
	for (size_t i = 0; i < v.size(); i++) {
		const std::string at = element(where, i);
		const json &r = v[i];
		if (!r.is_object())
			fault(at, "must be an object");
		check_fields(r,
					 {"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate",
					  "MaxDelaySeconds", "JitterStrategy", "Comment"},
					 at);
		Retrier rt;
		if (!r.contains("ErrorEquals"))
			fault(member(at, "ErrorEquals"), "is required");
		check_error_list(r["ErrorEquals"], member(at, "ErrorEquals"), i + 1 == v.size());
		rt.errors = strings(r["ErrorEquals"]);
		if (r.contains("IntervalSeconds"))
			rt.interval_s = positive_int(r["IntervalSeconds"], member(at, "IntervalSeconds"));
		if (r.contains("MaxAttempts")) {
			const json &m = r["MaxAttempts"];
			if (!m.is_number_integer() || m.get<int64_t>() < 0 ||
				(m.is_number_unsigned() && m.get<uint64_t>() > INT32_MAX))
				fault(member(at, "MaxAttempts"), "must be an integer >= 0");
			rt.max_attempts = m.get<int64_t>();
		}
		if (r.contains("BackoffRate")) {
			const json &b = r["BackoffRate"];
			if (!b.is_number() || !(b.get<double>() >= 1.0))
				fault(member(at, "BackoffRate"), "must be a number >= 1.0");
			rt.backoff_rate = b.get<double>();
		}
		if (r.contains("MaxDelaySeconds"))
			rt.max_delay_s = positive_int(r["MaxDelaySeconds"], member(at, "MaxDelaySeconds"));
		if (r.contains("JitterStrategy")) {
			const std::string &j = text_of(r["JitterStrategy"], member(at, "JitterStrategy"));
			if (j != "FULL" && j != "NONE")
				fault(member(at, "JitterStrategy"), "must be \"FULL\" or \"NONE\", not \"" + j + "\"");
			rt.full_jitter = j == "FULL";
		}
		out.push_back(std::move(rt));
	}
	return out;
}

void check_next(const std::string &next, const std::string &where,
				const std::map<std::string, json> &names) {
	if (!names.count(next))
		fault(where, "unknown state \"" + next + "\"");
}

std::vector<Catcher> compile_catch(const json &v, const std::string &where,
								   const std::map<std::string, json> &names, bool jsonata,
								   const std::string &scope, Definition &d) {
	if (!v.is_array())
		fault(where, "must be an array");
	std::vector<Catcher> out;
	for (size_t i = 0; i < v.size(); i++) {
		const std::string at = element(where, i);
		const json &c = v[i];
		if (!c.is_object())
			fault(at, "must be an object");
		check_fields(c, {"ErrorEquals", "Next", "ResultPath", "Comment", "Assign", "Output"}, at);
		if (jsonata && c.contains("ResultPath"))
			fault(member(at, "ResultPath"), "is a JSONPath field: a JSONata catcher uses Output "
											"($states.errorOutput) and Assign");
		if (!jsonata && c.contains("Output"))
			fault(member(at, "Output"), "is a JSONata field: it needs \"QueryLanguage\": \"JSONata\" "
										"on the state or the state machine");
		Catcher ct;
		if (!c.contains("ErrorEquals"))
			fault(member(at, "ErrorEquals"), "is required");
		check_error_list(c["ErrorEquals"], member(at, "ErrorEquals"), i + 1 == v.size());
		ct.errors = strings(c["ErrorEquals"]);
		if (!c.contains("Next"))
			fault(member(at, "Next"), "is required");
		ct.next = text_of(c["Next"], member(at, "Next"));
		check_next(ct.next, member(at, "Next"), names);
		ct.result_path = result_path_spec(c, at);
		if (c.contains("Assign"))
			ct.assign = compile_assign(c["Assign"], member(at, "Assign"), jsonata, scope, d,
									   "errorOutput");
		if (c.contains("Output"))
			ct.output = compile_jtemplate(c["Output"], member(at, "Output"));
		out.push_back(std::move(ct));
	}
	return out;
}

// Choice operators: name -> (op, kind, comparison, takes a path).
struct OperatorInfo {
	Rule::Op op;
	char kind;
	Rule::Cmp cmp;
	bool path;
};

const std::map<std::string, OperatorInfo> &operators() {
	static const std::map<std::string, OperatorInfo> ops = [] {
		std::map<std::string, OperatorInfo> m;
		const std::pair<const char *, char> kinds[] = {
			{"String", 's'}, {"Numeric", 'n'}, {"Boolean", 'b'}, {"Timestamp", 't'}};
		const std::pair<const char *, Rule::Cmp> cmps[] = {{"Equals", Rule::Eq},
															 {"LessThan", Rule::Lt},
															 {"GreaterThan", Rule::Gt},
															 {"LessThanEquals", Rule::Le},
															 {"GreaterThanEquals", Rule::Ge}};
		for (const auto &[kname, k] : kinds)
			for (const auto &[cname, c] : cmps) {
				if (k == 'b' && c != Rule::Eq)
					continue;  // booleans are only compared for equality
				m[std::string(kname) + cname] = {Rule::Compare, k, c, false};
				m[std::string(kname) + cname + "Path"] = {Rule::Compare, k, c, true};
			}
		m["StringMatches"] = {Rule::Matches, 's', Rule::Eq, false};
		m["IsNull"] = {Rule::IsNull, 0, Rule::Eq, false};
		m["IsPresent"] = {Rule::IsPresent, 0, Rule::Eq, false};
		m["IsNumeric"] = {Rule::IsNumeric, 0, Rule::Eq, false};
		m["IsString"] = {Rule::IsString, 0, Rule::Eq, false};
		m["IsBoolean"] = {Rule::IsBoolean, 0, Rule::Eq, false};
		m["IsTimestamp"] = {Rule::IsTimestamp, 0, Rule::Eq, false};
		m["And"] = {Rule::And, 0, Rule::Eq, false};
		m["Or"] = {Rule::Or, 0, Rule::Eq, false};
		m["Not"] = {Rule::Not, 0, Rule::Eq, false};
		return m;
	}();
	return ops;
}

Rule compile_rule(const json &r, const std::string &where, bool top,
				  const std::map<std::string, json> &names) {
	limits::RecursionGuard guard;
	if (!r.is_object())
		fault(where, "a choice rule must be an object");
	std::string op_name;
	for (auto it = r.begin(); it != r.end(); ++it) {
		const std::string &k = it.key();
		if (k == "Variable" || k == "Comment")
			continue;
		if (k == "Next") {
			if (!top)
				fault(member(where, k), "a nested rule (inside And, Or or Not) has no Next");
			continue;
		}
		if (!operators().count(k))
			fault(member(where, k), "unknown choice operator");
		if (!op_name.empty())
			fault(member(where, k), "a rule has exactly one operator, but this one also has " +
										op_name);
		op_name = k;
	}
	if (op_name.empty())
		fault(where, "a rule needs a comparison operator or And, Or, Not");
	const OperatorInfo &info = operators().at(op_name);
	Rule rule;
	rule.op = info.op;
	rule.kind = info.kind;
	rule.cmp = info.cmp;
	const std::string at = member(where, op_name);
	const json &v = r[op_name];
	if (info.op == Rule::And || info.op == Rule::Or || info.op == Rule::Not) {
		if (r.contains("Variable"))
			fault(member(where, "Variable"), op_name + " takes no Variable");
		if (info.op == Rule::Not) {
			rule.kids.push_back(compile_rule(v, at, false, names));
		} else {
			if (!v.is_array() || v.empty())
				fault(at, "must be a non-empty array of rules");
			for (size_t i = 0; i < v.size(); i++)
				rule.kids.push_back(compile_rule(v[i], element(at, i), false, names));
		}
	} else {
		if (!r.contains("Variable"))
			fault(member(where, "Variable"), "is required with " + op_name);
		rule.variable = path_of(r["Variable"], member(where, "Variable"));
		if (info.path) {
			rule.value_path = path_of(v, at);
		} else if (info.op == Rule::Compare || info.op == Rule::Matches) {
			switch (info.kind) {
			case 's':
				text_of(v, at);
				break;
			case 'n':
				if (!v.is_number())
					fault(at, "must be a number");
				break;
			case 'b':
				if (!v.is_boolean())
					fault(at, "must be a boolean");
				break;
			case 't': {
				int64_t ms;
				if (!parse_time(text_of(v, at), ms))
					fault(at, "\"" + v.get<std::string>() + "\" is not an RFC 3339 timestamp");
				break;
			}
			}
			rule.value = v;
		} else {  // Is* tests
			if (!v.is_boolean())
				fault(at, "must be true or false");
			rule.value = v;
		}
	}
	if (top) {
		if (!r.contains("Next"))
			fault(member(where, "Next"), "is required in a top-level choice rule");
		rule.next = text_of(r["Next"], member(where, "Next"));
		check_next(rule.next, member(where, "Next"), names);
	}
	return rule;
}

ValueSource value_source(const json &st, const char *field, const char *path_field,
						 const std::string &where, bool jsonata) {
	ValueSource src;
	const bool has = st.contains(field), has_path = st.contains(path_field);
	if (has && has_path)
		fault(member(where, path_field), std::string("cannot be used together with ") + field);
	if (has && jsonata && is_expression(st[field]))
		src.expr = expression_of(st[field], member(where, field));
	else if (has)
		src.literal = text_of(st[field], member(where, field));
	if (has_path) {
		const std::string at = member(where, path_field);
		const std::string &text = text_of(st[path_field], at);
		if (text.compare(0, 7, "States.") == 0)
			src.call = intrinsic_of(text, at);
		else
			src.path = std::make_shared<Path>(path_of(st[path_field], at));
	}
	return src;
}

void compile_resource(State &s, const json &st, const std::string &where) {
	if (!st.contains("Resource"))
		fault(member(where, "Resource"), "is required for a Task");
	const std::string at = member(where, "Resource");
	std::string res = text_of(st["Resource"], at);
	// NAME.waitForTaskToken: the task runs NAME, then waits for its token
	static const std::string kCallback = ".waitForTaskToken";
	if (res.size() > kCallback.size() &&
		res.compare(res.size() - kCallback.size(), kCallback.size(), kCallback) == 0) {
		res.resize(res.size() - kCallback.size());
		if (res.compare(0, 8, "handler:") != 0 && res != "genroc:noop" && res != "genroc:fail" &&
			res != "genroc:sleep")
			fault(at, "\".waitForTaskToken\" follows a handler:NAME, genroc:noop, genroc:fail or "
					  "genroc:sleep resource, not \"" + res + "\"");
		s.wait_for_token = true;
	}
	auto named = [&](const char *prefix) {
		const size_t n = std::char_traits<char>::length(prefix);
		if (res.compare(0, n, prefix) != 0)
			return false;
		const std::string name = res.substr(n);
		if (name.empty())
			fault(at, std::string("\"") + prefix + "\" needs a name after the colon");
		for (char c : name)
			if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
				fault(at, "the name in \"" + res + "\" must not contain spaces or control characters");
		return true;
	};
	if (named("handler:") || named("activity:") || res == "genroc:noop" || res == "genroc:fail" ||
		res == "genroc:sleep" || res == "genroc:event" || res == "genroc:call" ||
		res == "genroc:call.sync") {
		s.resource = res;
		return;
	}
	fault(at, "unknown resource \"" + res +
				  "\" (use handler:NAME, activity:NAME, genroc:noop, genroc:fail, genroc:sleep, "
				  "genroc:event, genroc:call or genroc:call.sync)");
}

void compile_machine(const json &obj, const std::string &where, const std::string &scope,
					 size_t nesting, Definition &d, const std::set<std::string> &extra_fields);

// A state name as one JSON pointer token (RFC 6901: ~ is ~0, / is ~1).
std::string pointer_token(const std::string &name) {
	std::string out;
	for (char c : name) {
		if (c == '~')
			out += "~0";
		else if (c == '/')
			out += "~1";
		else
			out += c;
	}
	return out;
}

// Parallel and Map: the sub-machines and the Map's own fields.
void compile_fanout(State &s, const json &st, const std::string &where, const std::string &scope,
					size_t nesting, Definition &d) {
	if (nesting >= limits::SCOPE_DEPTH)
		over_limit(where, "Parallel and Map states nest deeper than " +
							  std::to_string(limits::SCOPE_DEPTH) + " levels" +
							  limits::named("scope_depth"));
	const std::string here = scope + "/States/" + pointer_token(s.name);
	if (s.type == StateType::Parallel) {
		if (!st.contains("Branches"))
			fault(member(where, "Branches"), "is required for a Parallel state");
		const json &b = st["Branches"];
		const std::string at = member(where, "Branches");
		if (!b.is_array() || b.empty())
			fault(at, "must be a non-empty array of state machines");
		for (size_t i = 0; i < b.size(); i++) {
			s.branch_scopes.push_back(here + "/Branches/" + std::to_string(i));
			d.parent_scope[s.branch_scopes.back()] = scope;
			compile_machine(b[i], element(at, i), s.branch_scopes.back(), nesting + 1, d, {});
		}
		return;
	}
	const bool proc = st.contains("ItemProcessor"), iter = st.contains("Iterator");
	if (proc && iter)
		fault(member(where, "Iterator"), "cannot be used together with ItemProcessor");
	if (!proc && !iter)
		fault(member(where, "ItemProcessor"), "is required for a Map state");
	const char *pf = proc ? "ItemProcessor" : "Iterator";
	const std::string pat = member(where, pf);
	const json &p = st[pf];
	if (p.is_object() && p.contains("ProcessorConfig")) {
		const json &cfg = p["ProcessorConfig"];
		const std::string cat = member(pat, "ProcessorConfig");
		if (!cfg.is_object())
			fault(cat, "must be an object");
		check_fields(cfg, {"Mode", "ExecutionType"}, cat);
		if (cfg.contains("Mode")) {
			const std::string &mode = text_of(cfg["Mode"], member(cat, "Mode"));
			if (mode == "DISTRIBUTED")
				fault(member(cat, "Mode"), "distributed Map is not supported (only INLINE)");
			if (mode != "INLINE")
				fault(member(cat, "Mode"), "must be \"INLINE\", not \"" + mode + "\"");
		}
		if (cfg.contains("ExecutionType"))
			text_of(cfg["ExecutionType"], member(cat, "ExecutionType"));
	}
	s.item_scope = here + "/" + pf;
	d.parent_scope[s.item_scope] = scope;
	compile_machine(p, pat, s.item_scope, nesting + 1, d, {"ProcessorConfig"});
	if (st.contains("ItemsPath"))
		s.items_path = reference_path_of(st["ItemsPath"], member(where, "ItemsPath"));
	if (st.contains("ItemSelector") && st.contains("Parameters"))
		fault(member(where, "Parameters"), "cannot be used together with ItemSelector");
	for (const char *f : {"ItemSelector", "Parameters"})
		if (st.contains(f)) {
			if (s.jsonata && is_expression(st[f])) {
				s.j_item_selector = compile_jtemplate(st[f], member(where, f));
				continue;
			}
			if (!st[f].is_object())
				fault(member(where, f), "must be an object");
			if (s.jsonata)
				s.j_item_selector = compile_jtemplate(st[f], member(where, f));
			else
				s.item_selector = compile_template(st[f], member(where, f));
		}
	// JSONata: the three numbers may be expressions, read when the Map starts
	const std::pair<const char *, jsonata::ExpressionPtr *> expr_forms[] = {
		{"MaxConcurrency", &s.max_concurrency_x},
		{"ToleratedFailureCount", &s.tolerated_count_x},
		{"ToleratedFailurePercentage", &s.tolerated_pct_x}};
	for (const auto &[f, target] : expr_forms)
		if (s.jsonata && is_expression(st.value(f, json())))
			*target = expression_of(st[f], member(where, f));
	// the two whole numbers, when literal
	auto whole = [&](const char *f, const char *note) {
		const json &m = st[f];
		if (!m.is_number_integer() || m.get<int64_t>() < 0 ||
			(m.is_number_unsigned() && m.get<uint64_t>() > INT32_MAX))
			fault(member(where, f), std::string("must be an integer >= 0") + note);
		return m.get<int64_t>();
	};
	if (st.contains("MaxConcurrency") && !s.max_concurrency_x)
		s.max_concurrency = whole("MaxConcurrency", " (0: no limit)");
	if (st.contains("ToleratedFailureCount") && !s.tolerated_count_x)
		s.tolerated_count = whole("ToleratedFailureCount", "");
	if (st.contains("ToleratedFailurePercentage") && !s.tolerated_pct_x) {
		const json &m = st["ToleratedFailurePercentage"];
		if (!m.is_number() || m.get<double>() < 0 || m.get<double>() > 100)
			fault(member(where, "ToleratedFailurePercentage"), "must be a number from 0 to 100");
		s.tolerated_pct = m.get<double>();
	}
	// The *Path forms: a reference path read when the Map starts; one form
	// or the other.
	const std::pair<const char *, std::optional<Path> *> path_forms[] = {
		{"MaxConcurrency", &s.max_concurrency_path},
		{"ToleratedFailureCount", &s.tolerated_count_path},
		{"ToleratedFailurePercentage", &s.tolerated_pct_path}};
	for (const auto &[f, target] : path_forms) {
		const std::string pf = std::string(f) + "Path";
		if (!st.contains(pf))
			continue;
		if (st.contains(f))
			fault(member(where, pf), "cannot be used together with " + std::string(f));
		*target = reference_path_of(st[pf], member(where, pf));
	}
	if (st.contains("Label")) {
		const std::string &label = text_of(st["Label"], member(where, "Label"));
		if (label.empty() || label.size() > 40)
			fault(member(where, "Label"), "must have 1 to 40 characters");
		for (unsigned char c : label)
			if (c < 0x21 || c == 0x7f || std::string("<>{}[]?*\"#%^|~`$&,;:/").find(static_cast<char>(c)) != std::string::npos)
				fault(member(where, "Label"),
					  "may not contain spaces, control characters or any of < > { } [ ] ? * \" # % "
					  "^ | ~ ` $ & , ; : /");
	}
	for (const char *f : {"ItemReader", "ResultWriter"})
		if (st.contains(f))
			fault(member(where, f), std::string("reading items from or writing results to Amazon S3 "
												"is not supported: genroc's Map takes its items from "
												"the state input (ItemsPath) and returns its results "
												"as the state output"));
	if (st.contains("ItemBatcher")) {
		const std::string bw = member(where, "ItemBatcher");
		const json &b = st["ItemBatcher"];
		if (!b.is_object())
			fault(bw, "must be an object");
		check_fields(b,
					 {"MaxItemsPerBatch", "MaxItemsPerBatchPath", "MaxInputBytesPerBatch",
					  "MaxInputBytesPerBatchPath", "BatchInput"},
					 bw);
		s.batched = true;
		const std::tuple<const char *, int64_t *, std::optional<Path> *, jsonata::ExpressionPtr *,
						 int64_t>
			bounds[] = {{"MaxItemsPerBatch", &s.batch_items, &s.batch_items_path, &s.batch_items_x,
						 INT32_MAX},
						{"MaxInputBytesPerBatch", &s.batch_bytes, &s.batch_bytes_path, &s.batch_bytes_x,
						 kMaxBatchBytes}};
		for (const auto &[f, value, path, expr, most] : bounds) {
			const std::string pf = std::string(f) + "Path";
			if (b.contains(f) && b.contains(pf))
				fault(member(bw, pf), "cannot be used together with " + std::string(f));
			if (s.jsonata && b.contains(pf))
				fault(member(bw, pf), pf + " is a JSONPath field: a JSONata state gives " + f +
										  " as a number or a {% %} expression");
			if (s.jsonata && b.contains(f) && is_expression(b[f])) {
				*expr = expression_of(b[f], member(bw, f));
			} else if (b.contains(f)) {
				const json &m = b[f];
				if (!m.is_number_integer() || m.get<int64_t>() <= 0 ||
					(m.is_number_unsigned() && m.get<uint64_t>() > static_cast<uint64_t>(most)) ||
					m.get<int64_t>() > most)
					fault(member(bw, f), "must be an integer from 1 to " + std::to_string(most));
				*value = m.get<int64_t>();
			}
			if (b.contains(pf))
				*path = reference_path_of(b[pf], member(bw, pf));
		}
		if (!s.batch_items && !s.batch_bytes && !s.batch_items_path && !s.batch_bytes_path &&
			!s.batch_items_x && !s.batch_bytes_x)
			fault(bw, "needs MaxItemsPerBatch or MaxInputBytesPerBatch (or their Path forms)");
		if (b.contains("BatchInput")) {
			if (s.jsonata && is_expression(b["BatchInput"])) {
				s.j_batch_input = compile_jtemplate(b["BatchInput"], member(bw, "BatchInput"));
			} else {
				if (!b["BatchInput"].is_object())
					fault(member(bw, "BatchInput"), "must be an object");
				if (s.jsonata)
					s.j_batch_input = compile_jtemplate(b["BatchInput"], member(bw, "BatchInput"));
				else
					s.batch_input = compile_template(b["BatchInput"], member(bw, "BatchInput"));
			}
		}
	}
}

State compile_state(const std::string &name, const json &st, const std::string &where,
					const std::map<std::string, json> &names, const std::string &scope,
					size_t nesting, Definition &d) {
	if (!st.is_object())
		fault(where, "a state must be an object");
	State s;
	s.name = name;
	if (!st.contains("Type"))
		fault(member(where, "Type"), "is required");
	const std::string &type = text_of(st["Type"], member(where, "Type"));
	auto allowed = allowed_fields().find(type);
	if (allowed == allowed_fields().end())
		fault(member(where, "Type"), "unknown state type \"" + type + "\"");
	s.type_name = type;
	s.type = type == "Pass"		? StateType::Pass
			 : type == "Task"	? StateType::Task
			 : type == "Choice" ? StateType::Choice
			 : type == "Wait"	? StateType::Wait
			 : type == "Succeed" ? StateType::Succeed
			 : type == "Parallel" ? StateType::Parallel
			 : type == "Map"	? StateType::Map
								 : StateType::Fail;
	for (auto it = st.begin(); it != st.end(); ++it) {
		const std::string &k = it.key();
		if (k == "Type" || k == "Comment" || allowed->second.count(k))
			continue;
		if (k == "Retry" || k == "Catch")
			fault(member(where, k), "a " + type + " state cannot have " + k);
		fault(member(where, k), "unknown field for a " + type + " state");
	}
	if (st.contains("Comment"))
		text_of(st["Comment"], member(where, "Comment"));

	// QueryLanguage: the state's own, else the state machine's.  A JSONPath
	// machine may hold JSONata states; a JSONata machine no JSONPath state.
	s.jsonata = d.jsonata;
	if (st.contains("QueryLanguage")) {
		const std::string at = member(where, "QueryLanguage");
		const std::string &ql = text_of(st["QueryLanguage"], at);
		if (ql != "JSONPath" && ql != "JSONata")
			fault(at, "must be \"JSONPath\" or \"JSONata\", not \"" + ql + "\"");
		if (d.jsonata && ql == "JSONPath")
			fault(at, "a state of a JSONata state machine cannot use JSONPath (make the state "
					  "machine JSONPath and set JSONata on the states that use it)");
		s.jsonata = ql == "JSONata";
	}
	if (s.jsonata) {
		for (const char *f :
			 {"InputPath", "OutputPath", "Parameters", "ResultSelector", "ResultPath", "Result",
			  "ItemsPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath",
			  "TimestampPath", "ErrorPath", "CausePath", "MaxConcurrencyPath",
			  "ToleratedFailureCountPath", "ToleratedFailurePercentagePath"})
			if (st.contains(f))
				fault(member(where, f), std::string(f) +
											" is a JSONPath field: a JSONata state uses Arguments, "
											"Output, Assign and {% %} expressions instead");
		if (st.contains("Arguments"))
			s.arguments = compile_jtemplate(st["Arguments"], member(where, "Arguments"));
		if (st.contains("Output"))
			s.output = compile_jtemplate(st["Output"], member(where, "Output"));
		if (st.contains("Items")) {
			if (!st["Items"].is_array() && !is_expression(st["Items"]))
				fault(member(where, "Items"), "must be an array or a {% %} expression");
			s.items = compile_jtemplate(st["Items"], member(where, "Items"));
		}
	} else {
		for (const char *f : {"Arguments", "Output", "Items"})
			if (st.contains(f))
				fault(member(where, f), std::string(f) +
											" is a JSONata field: it needs \"QueryLanguage\": "
											"\"JSONata\" on the state or the state machine");
	}
	if (st.contains("Assign"))
		s.assign = compile_assign(st["Assign"], member(where, "Assign"), s.jsonata, scope, d,
								  s.type == StateType::Task || s.type == StateType::Parallel ||
										  s.type == StateType::Map
									  ? "result"
									  : nullptr);

	// Next / End: every type that may have them must have exactly one.
	if (allowed->second.count("Next")) {
		const bool has_next = st.contains("Next"), has_end = st.contains("End");
		if (has_next && has_end)
			fault(where, "a state has either Next or End, not both");
		if (!has_next && !has_end)
			fault(where, "a " + type + " state needs Next or End");
		if (has_next) {
			s.next = text_of(st["Next"], member(where, "Next"));
			check_next(s.next, member(where, "Next"), names);
		} else {
			if (st["End"] != true)
				fault(member(where, "End"), "must be true");
			s.end = true;
		}
	}

	s.input_path = io_path(st, "InputPath", where);
	s.output_path = io_path(st, "OutputPath", where);
	if (st.contains("Parameters"))
		s.parameters = compile_template(st["Parameters"], member(where, "Parameters"));
	if (st.contains("ResultSelector")) {
		if (!st["ResultSelector"].is_object())
			fault(member(where, "ResultSelector"), "must be an object");
		s.result_selector = compile_template(st["ResultSelector"], member(where, "ResultSelector"));
	}
	s.result_path = result_path_spec(st, where);
	if (st.contains("Result"))
		s.result = st["Result"];

	switch (s.type) {
	case StateType::Parallel:
	case StateType::Map:
		compile_fanout(s, st, where, scope, nesting, d);
		if (st.contains("Retry"))
			s.retry = compile_retry(st["Retry"], member(where, "Retry"));
		if (st.contains("Catch"))
			s.catchers = compile_catch(st["Catch"], member(where, "Catch"), names, s.jsonata, scope, d);
		if (s.type == StateType::Map)
			s.parameters.reset();	// Map's Parameters is its item selector
		break;
	case StateType::Task: {
		compile_resource(s, st, where);
		if (st.contains("Retry"))
			s.retry = compile_retry(st["Retry"], member(where, "Retry"));
		if (st.contains("Catch"))
			s.catchers = compile_catch(st["Catch"], member(where, "Catch"), names, s.jsonata, scope, d);
		if (st.contains("TimeoutSeconds") && st.contains("TimeoutSecondsPath"))
			fault(member(where, "TimeoutSecondsPath"), "cannot be used together with TimeoutSeconds");
		if (st.contains("HeartbeatSeconds") && st.contains("HeartbeatSecondsPath"))
			fault(member(where, "HeartbeatSecondsPath"),
				  "cannot be used together with HeartbeatSeconds");
		if (s.jsonata && is_expression(st.value("TimeoutSeconds", json())))
			s.timeout_x = expression_of(st["TimeoutSeconds"], member(where, "TimeoutSeconds"));
		else if (st.contains("TimeoutSeconds"))
			s.timeout_s = positive_int(st["TimeoutSeconds"], member(where, "TimeoutSeconds"));
		if (s.jsonata && is_expression(st.value("HeartbeatSeconds", json())))
			s.heartbeat_x = expression_of(st["HeartbeatSeconds"], member(where, "HeartbeatSeconds"));
		else if (st.contains("HeartbeatSeconds"))
			s.heartbeat_s = positive_int(st["HeartbeatSeconds"], member(where, "HeartbeatSeconds"));
		if (st.contains("TimeoutSecondsPath"))
			s.timeout_path = reference_path_of(st["TimeoutSecondsPath"],
											   member(where, "TimeoutSecondsPath"));
		if (st.contains("HeartbeatSecondsPath"))
			s.heartbeat_path = reference_path_of(st["HeartbeatSecondsPath"],
												 member(where, "HeartbeatSecondsPath"));
		if (s.timeout_s && s.heartbeat_s && *s.heartbeat_s >= *s.timeout_s)
			fault(member(where, "HeartbeatSeconds"), "must be smaller than TimeoutSeconds");
		// AWS's role to assume for the task: accepted so AWS definitions load;
		// genroc runs a task as the worker that claims it (docs/asl.md "Differences from AWS Step Functions").
		if (st.contains("Credentials")) {
			if (!st["Credentials"].is_object())
				fault(member(where, "Credentials"), "must be an object");
			if (s.jsonata)
				compile_jtemplate(st["Credentials"], member(where, "Credentials"));
			else
				compile_template(st["Credentials"], member(where, "Credentials"));
		}
		if (st.contains("OnlyOnce")) {
			if (!st["OnlyOnce"].is_boolean())
				fault(member(where, "OnlyOnce"), "must be true or false");
			s.only_once = st["OnlyOnce"].get<bool>();
		}
		break;
	}
	case StateType::Choice: {
		if (!st.contains("Choices"))
			fault(member(where, "Choices"), "is required for a Choice state");
		const json &choices = st["Choices"];
		const std::string at = member(where, "Choices");
		if (!choices.is_array() || choices.empty())
			fault(at, "must be a non-empty array of rules");
		for (size_t i = 0; i < choices.size(); i++) {
			const std::string rat = element(at, i);
			if (!choices[i].is_object())
				fault(rat, "a choice rule must be an object");
			if (s.jsonata) {
				const json &r = choices[i];
				check_fields(r, {"Condition", "Next", "Assign", "Output", "Comment"}, rat);
				Rule rule;
				if (!r.contains("Condition"))
					fault(member(rat, "Condition"), "is required in a JSONata choice rule");
				if (r["Condition"].is_boolean())
					rule.condition_value = r["Condition"].get<bool>();
				else if (is_expression(r["Condition"]))
					rule.condition = expression_of(r["Condition"], member(rat, "Condition"));
				else
					fault(member(rat, "Condition"), "must be true, false or a {% %} expression");
				if (!r.contains("Next"))
					fault(member(rat, "Next"), "is required in a top-level choice rule");
				rule.next = text_of(r["Next"], member(rat, "Next"));
				check_next(rule.next, member(rat, "Next"), names);
				if (r.contains("Assign"))
					rule.assign = compile_assign(r["Assign"], member(rat, "Assign"), true, scope, d);
				if (r.contains("Output"))
					rule.output = compile_jtemplate(r["Output"], member(rat, "Output"));
				s.choices.push_back(std::move(rule));
				continue;
			}
			if (choices[i].contains("Condition"))
				fault(member(rat, "Condition"), "is a JSONata field: it needs \"QueryLanguage\": "
												"\"JSONata\" on the state or the state machine");
			// a top-level rule's Assign, then the rule itself
			json r = choices[i];
			std::optional<AssignSpec> assign;
			if (r.contains("Assign")) {
				assign = compile_assign(r["Assign"], member(rat, "Assign"), false, scope, d);
				r.erase("Assign");
			}
			s.choices.push_back(compile_rule(r, rat, true, names));
			s.choices.back().assign = std::move(assign);
		}
		if (st.contains("Default")) {
			s.default_next = text_of(st["Default"], member(where, "Default"));
			check_next(s.default_next, member(where, "Default"), names);
		}
		break;
	}
	case StateType::Wait: {
		int n = 0;
		for (const char *f : {"Seconds", "Timestamp", "SecondsPath", "TimestampPath"})
			n += st.contains(f) ? 1 : 0;
		if (n != 1)
			fault(where, "a Wait state needs exactly one of Seconds, Timestamp, SecondsPath, "
						 "TimestampPath");
		if (s.jsonata && is_expression(st.value("Seconds", json()))) {
			s.seconds_x = expression_of(st["Seconds"], member(where, "Seconds"));
		} else if (st.contains("Seconds")) {
			const json &v = st["Seconds"];
			if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
				(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) ||
				v.get<int64_t>() > kMaxSeconds)
				fault(member(where, "Seconds"), "must be an integer >= 0 (and at most " +
													std::to_string(kMaxSeconds) + ")");
			s.seconds = v.get<int64_t>();
		}
		if (s.jsonata && is_expression(st.value("Timestamp", json()))) {
			s.timestamp_x = expression_of(st["Timestamp"], member(where, "Timestamp"));
		} else if (st.contains("Timestamp")) {
			int64_t ms;
			const std::string &t = text_of(st["Timestamp"], member(where, "Timestamp"));
			if (!parse_time(t, ms))
				fault(member(where, "Timestamp"), "\"" + t + "\" is not an RFC 3339 timestamp");
			s.timestamp_ms = ms;
		}
		if (st.contains("SecondsPath"))
			s.seconds_path = reference_path_of(st["SecondsPath"], member(where, "SecondsPath"));
		if (st.contains("TimestampPath"))
			s.timestamp_path = reference_path_of(st["TimestampPath"], member(where, "TimestampPath"));
		break;
	}
	case StateType::Fail:
		s.error = value_source(st, "Error", "ErrorPath", where, s.jsonata);
		s.cause = value_source(st, "Cause", "CausePath", where, s.jsonata);
		break;
	default:
		break;
	}
	return s;
}

// The states reachable from StartAt, in the order found.
std::set<std::string> reachable(const Machine &d) {
	std::set<std::string> seen{d.start_at};
	std::deque<std::string> todo{d.start_at};
	while (!todo.empty()) {
		const State &s = d.states.at(todo.front());
		todo.pop_front();
		std::vector<std::string> targets;
		if (!s.next.empty())
			targets.push_back(s.next);
		if (!s.default_next.empty())
			targets.push_back(s.default_next);
		for (const auto &r : s.choices)
			targets.push_back(r.next);
		for (const auto &c : s.catchers)
			targets.push_back(c.next);
		for (const auto &t : targets)
			if (seen.insert(t).second)
				todo.push_back(t);
	}
	return seen;
}

// Compiles the machine at `scope` (StartAt, States) and, through its
// Parallel and Map states, every machine nested in it.
void compile_machine(const json &def, const std::string &where, const std::string &scope,
					 size_t nesting, Definition &d, const std::set<std::string> &extra_fields) {
	limits::RecursionGuard guard;
	const std::string &root = where;
	if (!def.is_object())
		fault(root, std::string("a state machine must be a JSON object, not ") + def.type_name());
	std::set<std::string> allowed = {"StartAt", "States", "Comment"};
	if (scope.empty())
		allowed.insert({"Version", "TimeoutSeconds", "QueryLanguage"});
	allowed.insert(extra_fields.begin(), extra_fields.end());
	check_fields(def, allowed, root);
	if (def.contains("QueryLanguage")) {
		const std::string &ql = text_of(def["QueryLanguage"], member(root, "QueryLanguage"));
		if (ql != "JSONPath" && ql != "JSONata")
			fault(member(root, "QueryLanguage"),
				  "must be \"JSONPath\" or \"JSONata\", not \"" + ql + "\"");
		d.jsonata = ql == "JSONata";
	}
	if (def.contains("Comment"))
		text_of(def["Comment"], member(root, "Comment"));
	if (def.contains("Version"))
		text_of(def["Version"], member(root, "Version"));
	if (def.contains("TimeoutSeconds"))
		positive_int(def["TimeoutSeconds"], member(root, "TimeoutSeconds"));
	if (!def.contains("StartAt"))
		fault(member(root, "StartAt"), "is required");
	const std::string &start = text_of(def["StartAt"], member(root, "StartAt"));
	if (start.empty())
		fault(member(root, "StartAt"), "must not be empty");
	if (!def.contains("States"))
		fault(member(root, "States"), "is required");
	const json &states = def["States"];
	const std::string sw = member(root, "States");
	if (!states.is_object() || states.empty())
		fault(sw, "must be a non-empty object of states");
	d.state_count += states.size();
	if (d.state_count > limits::STATE_COUNT)
		over_limit(sw, "the definition has more than " + std::to_string(limits::STATE_COUNT) +
						   " states" + limits::named("state_count"));
	std::map<std::string, json> names;
	for (auto it = states.begin(); it != states.end(); ++it) {
		if (it.key().empty())
			fault(sw, "a state name must not be empty");
		if (it.key().size() > 80)
			fault(member(sw, it.key()), "a state name has at most 80 characters");
		names.emplace(it.key(), json());
		const auto first = d.state_names.emplace(it.key(), member(sw, it.key()));
		if (!first.second)
			fault(member(sw, it.key()), "the state name \"" + it.key() +
											"\" is already used at " + first.first->second +
											": state names are unique across the whole "
											"definition, branches and item processors included");
	}
	if (!names.count(start))
		fault(member(root, "StartAt"), "unknown state \"" + start + "\"");

	Machine m;
	m.start_at = start;
	for (auto it = states.begin(); it != states.end(); ++it)
		m.states.emplace(it.key(),
						 compile_state(it.key(), *it, member(sw, it.key()), names, scope, nesting, d));
	const auto seen = reachable(m);
	for (const auto &[name, st] : m.states)
		if (!seen.count(name))
			fault(member(sw, name), "state \"" + name + "\" is unreachable from StartAt");
	d.machines[scope] = std::move(m);
}

// Whether one string of a definition may read the context object (the
// rule in asl.hpp's reads_context): "$$" anywhere, or "$states" not
// followed by `.input`, `.result` or `.errorOutput` (blanks allowed around
// the dot, as JSONata allows them).
bool names_context(const std::string &s) {
	if (s.find("$$") != std::string::npos)
		return true;
	static const std::string kStates = "$states";
	for (size_t at = s.find(kStates); at != std::string::npos; at = s.find(kStates, at + 1)) {
		size_t k = at + kStates.size();
		auto skip_blanks = [&]() {
			while (k < s.size() && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r'))
				k++;
		};
		skip_blanks();
		if (k >= s.size() || s[k] != '.')
			return true;	// $states itself, indexed, or a longer name: may reach it
		k++;
		skip_blanks();
		size_t end = k;
		while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
			end++;
		const std::string field = s.substr(k, end - k);
		if (field != "input" && field != "result" && field != "errorOutput")
			return true;
	}
	return false;
}

// Whether one string of a definition may read $$.Execution.Input (the rule
// in asl.hpp's reads_execution_input).
bool names_execution_input(const std::string &s) {
	for (const std::string mark : {"$$", "$states.context"})
		for (size_t at = s.find(mark); at != std::string::npos; at = s.find(mark, at + mark.size())) {
			const std::string rest = s.substr(at + mark.size(), 14);
			if (!(rest.rfind(".Map.", 0) == 0 || rest.rfind(".StateMachine.", 0) == 0 ||
				  rest.rfind(".State.", 0) == 0 || rest.rfind(".Task.", 0) == 0))
				return true;
		}
	return false;
}

// Whether `names` holds for any key or string of a JSON value.
bool any_string(const json &v, bool (*names)(const std::string &)) {
	if (v.is_string())
		return names(v.get_ref<const std::string &>());
	if (v.is_object()) {
		for (auto it = v.begin(); it != v.end(); ++it)
			if (names(it.key()) || any_string(*it, names))
				return true;
		return false;
	}
	if (v.is_array())
		for (const auto &e : v)
			if (any_string(e, names))
				return true;
	return false;
}

}  // namespace

bool reads_context(const Definition &definition) { return definition.reads_context; }

bool reads_execution_input(const Definition &definition) { return definition.reads_execution_input; }

const std::optional<json> &start_task(const Definition &definition) { return definition.start_task; }

bool success_ends(const Definition &definition, const std::string &state) {
	return definition.success_ends.count(state) > 0;
}

std::optional<json> start_answer(const Definition &definition, const json &input) {
	const auto &task = definition.start_task;
	if (!task)
		return std::nullopt;
	limits::check_json_depth(input, "the input");
	return json{{"entered", (*task)["entered"]},
				{"outcome",
				 {{"kind", "task"},
				  {"state", (*task)["state"]},
				  {"resource", (*task)["resource"]},
				  {"state_input", input},
				  {"task_input", input},
				  {"timeout_s", (*task)["timeout_s"]},
				  {"heartbeat_s", (*task)["heartbeat_s"]},
				  {"only_once", (*task)["only_once"]},
				  {"retry_counts", (*task)["retry_counts"]},
				  {"delay_ms", 0}}}};
}

namespace {

// asl.hpp start_task(): what Runner::run answers for a start whose first
// state is such a Task (run_inline's entry, then enter_task with nothing
// read from the input).
std::optional<json> plain_start_task(const Machine &m) {
	const State &st = m.states.at(m.start_at);
	if (st.type != StateType::Task || st.resource == "genroc:event" ||
		st.resource == "genroc:call" || st.resource == "genroc:call.sync" || st.wait_for_token)
		return std::nullopt;
	if (st.jsonata ? (st.arguments || st.timeout_x || st.heartbeat_x)
				   : (st.input_path.is_null || st.input_path.path || st.parameters ||
					  st.timeout_path || st.heartbeat_path))
		return std::nullopt;
	if (st.timeout_s && st.heartbeat_s && *st.heartbeat_s >= *st.timeout_s)
		return std::nullopt;  // the step fails it: let it say so
	json entered = json::array();
	entered.push_back(json{{"state", st.name}, {"type", st.type_name}});
	return json{{"entered", std::move(entered)},
				{"state", st.name},
				{"resource", st.resource},
				{"timeout_s", st.timeout_s ? json(*st.timeout_s) : json(nullptr)},
				{"heartbeat_s", st.heartbeat_s ? json(*st.heartbeat_s) : json(nullptr)},
				{"only_once", st.only_once},
				{"retry_counts", std::vector<int64_t>(st.retry.size(), 0)}};
}

// asl.hpp success_ends(): the Tasks of the top machine whose success
// task_succeeded turns into leave(st, result) with nothing evaluated
// (bounded() passes a result within json_depth) and nothing committed.
std::set<std::string> plain_success_states(const Machine &m) {
	std::set<std::string> names;
	for (const auto &[name, st] : m.states) {
		if (st.type != StateType::Task || !st.end || st.wait_for_token)
			continue;
		bool plain = st.jsonata ? !st.output && !st.assign
								: !st.result_selector && !st.assign && !st.result_path.discard &&
									  (!st.result_path.path || st.result_path.path->is_root()) &&
									  !st.output_path.is_null &&
									  (!st.output_path.path || st.output_path.path->is_root());
		if (plain)
			names.insert(name);
	}
	return names;
}

}  // namespace

DefinitionPtr compile(const json &def) {
	if (!def.is_object())
		fault("$", std::string("a definition must be a JSON object, not ") + def.type_name());
	limits::check_definition_depth(def);  // first, before anything recurses over it
	auto d = std::make_shared<Definition>();
	compile_machine(def, "$", "", 0, *d, {});
	// A Parallel branch or Map item processor reads the variables of the
	// machines around it but may not assign them (AWS refuses it too).
	for (const auto &[scope, names] : d->assigned)
		for (auto up = d->parent_scope.find(scope); up != d->parent_scope.end();
			 up = d->parent_scope.find(up->second)) {
			auto outer = d->assigned.find(up->second);
			if (outer == d->assigned.end())
				continue;
			for (const auto &[name, where] : names)
				if (auto o = outer->second.find(name); o != outer->second.end())
					fault(where, "the variable \"" + name + "\" is assigned at " + o->second +
									 ", outside this Parallel branch or Map item processor: inner "
									 "states may read the variables around them but not assign them");
		}
	// a .waitForTaskToken task's outcome carries $$.Task.Token: its step needs the context
	bool callbacks = false;
	for (const auto &[scope, m] : d->machines)
		for (const auto &[name, st] : m.states)
			callbacks = callbacks || st.wait_for_token;
	d->reads_context = callbacks || any_string(def, names_context);
	d->reads_execution_input = d->reads_context && any_string(def, names_execution_input);
	d->start_task = plain_start_task(d->machines.at(""));
	d->success_ends = plain_success_states(d->machines.at(""));
	return d;
}

// ================================================================ step

namespace {

[[noreturn]] void bad_request(const std::string &what) {
	throw Error(sqlstate::INVALID_PARAMETER_VALUE, "invalid step request: " + what);
}

// What a JSONPath Assign that reads $states sees: the raw input, and the
// result or the error output where there is one (and the context).
struct StatesIn {
	const json *input = nullptr;
	const json *result = nullptr;
	const json *error_output = nullptr;
};

// What a path reads besides the input: the context object and the variables.
struct Ctx {
	const json &obj;
	const json &vars;
};

json select_or_fail(const Path &p, const json &input, const Ctx &ctx, const char *field,
					const std::string &state) {
	auto got = p.select(input, ctx.obj, &ctx.vars);
	if (!got)
		throw Failure(ERR_RUNTIME, std::string("in state \"") + state + "\", " + field + " " +
									   p.text() + " selects nothing from the " +
									   (p.is_context()				? "context object"
										: p.variable().empty() ? "input"
															   : "variables"));
	return std::move(*got);
}

// Data a state built (Parameters, ResultSelector, ResultPath, a task's
// result): deeper than json_depth it is States.Runtime, so no step answers
// with a value the next step would refuse, and no store keeps one.
json bounded(json v, const std::string &what, const std::string &state) {
	std::string where;
	if (!limits::within_depth(v, limits::JSON_DEPTH, "$", &where))
		throw Failure(ERR_RUNTIME, "in state \"" + state + "\", " + what + " nests deeper than " +
									   std::to_string(limits::JSON_DEPTH) +
									   " levels of arrays and objects at " + where +
									   limits::named("json_depth"));
	return v;
}

json build(const Template &t, const json &input, const Ctx &ctx, const char *field,
		   const std::string &state) {
	limits::RecursionGuard guard;
	switch (t.kind) {
	case Template::Literal:
		return t.literal;
	case Template::PathRef:
		return select_or_fail(*t.path, input, ctx, field, state);
	case Template::Intrinsic:
		try {
			return eval_intrinsic(*t.call, input, ctx.obj, &ctx.vars);
		} catch (const Failure &f) {
			throw Failure(f.error, std::string("in state \"") + state + "\", " + field + ": " +
									   f.what());
		}
	case Template::Object: {
		json out = json::object();
		for (size_t i = 0; i < t.keys.size(); i++)
			out[t.keys[i]] = build(t.values[i], input, ctx, field, state);
		return out;
	}
	case Template::Array: {
		json out = json::array();
		for (const auto &sub : t.items)
			out.push_back(build(sub, input, ctx, field, state));
		return out;
	}
	}
	return nullptr;
}

json eval_template(const Template &t, const json &input, const Ctx &ctx, const char *field,
				   const std::string &state) {
	return bounded(build(t, input, ctx, field, state), field, state);
}

json apply_io(const IoPath &io, const json &input, const Ctx &ctx, const char *field,
			  const std::string &state) {
	if (io.is_null)
		return json::object();
	if (!io.path)
		return input;
	return select_or_fail(*io.path, input, ctx, field, state);
}

json apply_result_path(const ResultPathSpec &rp, const json &raw, json result,
					   const std::string &state) {
	if (rp.discard)
		return raw;
	if (!rp.path || rp.path->is_root())
		return result;
	json out = raw;
	if (!rp.path->assign(out, std::move(result)))
		throw Failure(ERR_RESULT_PATH, "in state \"" + state + "\", ResultPath " + rp.path->text() +
										   " cannot be applied to the input");
	return bounded(std::move(out), "ResultPath", state);
}

bool error_matches(const std::vector<std::string> &patterns, const std::string &error) {
	for (const auto &p : patterns) {
		if (p == error)
			return true;
		if (p == "States.ALL" && error != ERR_RUNTIME)
			return true;
		// A heartbeat timeout is a kind of timeout (ASL: States.Timeout is
		// also raised for a missed heartbeat).
		if (p == "States.Timeout" && error == "States.HeartbeatTimeout")
			return true;
		if (p == "States.TaskFailed" && error != "States.Timeout" &&
			error != "States.HeartbeatTimeout" && error != ERR_RUNTIME)
			return true;
	}
	return false;
}

// `*` matches any run of characters; `\*` is a literal star, `\\` a backslash.
bool wildcard_match(const std::string &text, const std::string &pattern) {
	struct Tok {
		bool star;
		char c;
	};
	std::vector<Tok> toks;
	for (size_t i = 0; i < pattern.size(); i++) {
		if (pattern[i] == '\\' && i + 1 < pattern.size())
			toks.push_back({false, pattern[++i]});
		else if (pattern[i] == '*')
			toks.push_back({true, 0});
		else
			toks.push_back({false, pattern[i]});
	}
	// Greedy matching with backtracking to the last star: linear in practice.
	size_t t = 0, p = 0, star_p = SIZE_MAX, star_t = 0;
	while (t < text.size()) {
		if (p < toks.size() && !toks[p].star && toks[p].c == text[t]) {
			t++;
			p++;
		} else if (p < toks.size() && toks[p].star) {
			star_p = p++;
			star_t = t;
		} else if (star_p != SIZE_MAX) {
			p = star_p + 1;
			t = ++star_t;
		} else {
			return false;
		}
	}
	while (p < toks.size() && toks[p].star)
		p++;
	return p == toks.size();
}

int compare_numbers(const json &a, const json &b) {
	if (a == b)
		return 0;
	if (a.is_number_integer() && b.is_number_integer() && !a.is_number_unsigned() &&
		!b.is_number_unsigned())
		return a.get<int64_t>() < b.get<int64_t>() ? -1 : 1;
	if (a.is_number_unsigned() && b.is_number_unsigned())
		return a.get<uint64_t>() < b.get<uint64_t>() ? -1 : 1;
	return a.get<double>() < b.get<double>() ? -1 : 1;
}

bool cmp_result(Rule::Cmp cmp, int c) {
	switch (cmp) {
	case Rule::Eq:
		return c == 0;
	case Rule::Lt:
		return c < 0;
	case Rule::Gt:
		return c > 0;
	case Rule::Le:
		return c <= 0;
	case Rule::Ge:
		return c >= 0;
	}
	return false;
}

bool rule_true(const Rule &r, const json &input, const Ctx &ctx) {
	limits::RecursionGuard guard;
	switch (r.op) {
	case Rule::And:
		return std::all_of(r.kids.begin(), r.kids.end(),
						   [&](const Rule &k) { return rule_true(k, input, ctx); });
	case Rule::Or:
		return std::any_of(r.kids.begin(), r.kids.end(),
						   [&](const Rule &k) { return rule_true(k, input, ctx); });
	case Rule::Not:
		return !rule_true(r.kids[0], input, ctx);
	default:
		break;
	}
	const auto var = r.variable->select(input, ctx.obj, &ctx.vars);
	if (r.op == Rule::IsPresent)
		return var.has_value() == r.value.get<bool>();
	// As in Step Functions, every other test of a missing variable is a
	// States.Runtime failure, not "false": a rule that cannot be evaluated
	// must not quietly send the instance down another branch.  Guard with
	// IsPresent inside an And (And and Or stop at the first decisive rule).
	if (!var)
		throw Failure(ERR_RUNTIME, "a Choice rule's Variable " + r.variable->text() +
									   " selects nothing from the input");
	const json &v = *var;
	const bool want = r.value.is_boolean() && r.value.get<bool>();
	int64_t ms;
	switch (r.op) {
	case Rule::IsNull:
		return v.is_null() == want;
	case Rule::IsNumeric:
		return v.is_number() == want;
	case Rule::IsString:
		return v.is_string() == want;
	case Rule::IsBoolean:
		return v.is_boolean() == want;
	case Rule::IsTimestamp:
		return (v.is_string() && parse_time(v.get<std::string>(), ms)) == want;
	case Rule::Matches:
		return v.is_string() && wildcard_match(v.get<std::string>(), r.value.get<std::string>());
	default:
		break;
	}
	// Compare
	json rhs;
	if (r.value_path) {
		auto got = r.value_path->select(input, ctx.obj, &ctx.vars);
		if (!got)
			throw Failure(ERR_RUNTIME, "a Choice rule's path " + r.value_path->text() +
										   " selects nothing from the input");
		rhs = std::move(*got);
	} else {
		rhs = r.value;
	}
	switch (r.kind) {
	case 's':
		if (!v.is_string() || !rhs.is_string())
			return false;
		return cmp_result(r.cmp, v.get_ref<const std::string &>().compare(
									 rhs.get_ref<const std::string &>()));
	case 'n':
		if (!v.is_number() || !rhs.is_number())
			return false;
		return cmp_result(r.cmp, compare_numbers(v, rhs));
	case 'b':
		return v.is_boolean() && rhs.is_boolean() && v == rhs;
	case 't': {
		int64_t a, b;
		if (!v.is_string() || !rhs.is_string() || !parse_time(v.get<std::string>(), a) ||
			!parse_time(rhs.get<std::string>(), b))
			return false;
		return cmp_result(r.cmp, a < b ? -1 : a > b ? 1 : 0);
	}
	}
	return false;
}

// A positive whole number of seconds taken from the input at run time.
int64_t seconds_from(const Path &p, const json &input, const Ctx &ctx, const char *field,
					 const std::string &state, bool allow_zero) {
	const json v = select_or_fail(p, input, ctx, field, state);
	const bool ok = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) &&
					(allow_zero ? v.get<int64_t>() >= 0 : v.get<int64_t>() > 0) &&
					v.get<int64_t>() <= kMaxSeconds;
	if (!ok)
		throw Failure(ERR_RUNTIME, "in state \"" + state + "\", " + field + " " + p.text() +
									   " must select " + (allow_zero ? "an integer >= 0" : "a positive integer") +
									   ", not " + v.dump(-1, ' ', false, json::error_handler_t::replace));
	return v.get<int64_t>();
}

class Runner {
  public:
	// reads_context: whether the definition may read $$ (reads_context());
	// when it cannot, the context's State object is not kept up to date.
	Runner(const Machine &d, int64_t now, json ctx, json vars, bool reads_context)
		: def_(d), now_(now), ctxj_(std::move(ctx)), vars_(std::move(vars)), reads_context_(reads_context) {}

	// single: the step ends when the first state it runs leaves (outcome
	// "next"); tracing: the answer carries each state's values ("trace").
	void inspect(bool single, bool tracing) {
		single_ = single;
		tracing_ = tracing;
	}

	json answer(json outcome) {
		json a = {{"entered", std::move(entered_)}, {"outcome", std::move(outcome)}};
		if (vars_changed_)
			a["variables"] = std::move(vars_);
		if (tracing_)
			a["trace"] = std::move(trace_);
		return a;
	}

	// The record of `st` in the trace (the last one when it is st's, else a
	// new one), given `key` = `value`; nothing when not tracing.
	void note(const State &st, const char *key, const json &value) {
		if (!tracing_)
			return;
		if (trace_.empty() || trace_.back()["state"] != st.name)
			trace_.push_back({{"state", st.name}, {"type", st.type_name}});
		trace_.back()[key] = value;
	}

	// A branch or item ended by a Fail state without Error: the fan-out
	// state fails with that nameless error, past its Retry and Catch.
	json nameless_failure(const State &st, const json &raw, const json &cause) {
		return failed(nullptr, cause, st.name, raw);
	}

	// Enters `name` with `input` and runs inline states up to a stop.
	json run(std::string name, json input) { return drive(run_inline(std::move(name), std::move(input))); }

	// Finishes what an entry point (task_succeeded, handle_error, ...)
	// answered: while it asked to go on at another state (jump), runs from
	// there.  A loop, not a recursion: a step may enter up to
	// states_per_step states (Task -> Catch -> Task ...) on a bounded stack.
	json drive(json out) {
		while (pending_) {
			Pending p = std::move(*pending_);
			pending_.reset();
			if (single_)
				return next_state(std::move(p.state), std::move(p.input));
			out = run_inline(std::move(p.state), std::move(p.input));
		}
		return out;
	}

  private:
	json run_inline(std::string name, json input) {
		while (true) {
			if (entered_.size() >= kMaxEnteredPerStep)
				return failed(ERR_RUNTIME,
							  "more than " + std::to_string(kMaxEnteredPerStep) +
								  " states entered in one step (a loop of states that never stops?)",
							  name, input);
			if (single_ && !entered_.empty())
				return next_state(std::move(name), std::move(input));
			const State &st = def_.states.at(name);
			entered_.push_back({{"state", st.name}, {"type", st.type_name}});
			if (tracing_)  // a record of its own, even when the state enters itself again
				trace_.push_back({{"state", st.name}, {"type", st.type_name}, {"input", input}});
			set_state(st, 0);
			if (st.type == StateType::Task || st.type == StateType::Parallel ||
				st.type == StateType::Map)
				return enter_task(st, input, std::vector<int64_t>(st.retry.size(), 0), 0);
			try {
				json out;
				switch (st.type) {
				case StateType::Pass: {
					if (st.jsonata) {
						const auto env = environment(input);
						out = st.output ? jeval(*st.output, env, "Output", st.name) : input;
						commit(assign_of(st.assign, input, &env, st.name));
						break;
					}
					json eff = apply_io(st.input_path, input, ctx_, "InputPath", st.name);
					note(st, "afterInputPath", eff);
					if (st.parameters) {
						eff = eval_template(*st.parameters, eff, ctx_, "Parameters", st.name);
						note(st, "afterParameters", eff);
					}
					json result = st.result ? *st.result : std::move(eff);
					note(st, "result", result);
					json vars = assign_of(st.assign, result, nullptr, st.name, StatesIn{&input});
					out = apply_result_path(st.result_path, input, std::move(result), st.name);
					note(st, "afterResultPath", out);
					out = apply_io(st.output_path, out, ctx_, "OutputPath", st.name);
					commit(std::move(vars));
					break;
				}
				case StateType::Succeed: {
					if (st.jsonata)
						return ended(st, st.output ? jeval(*st.output, environment(input), "Output",
														   st.name)
												   : input);
					json eff = apply_io(st.input_path, input, ctx_, "InputPath", st.name);
					note(st, "afterInputPath", eff);
					return ended(st, apply_io(st.output_path, eff, ctx_, "OutputPath", st.name));
				}
				case StateType::Fail:
					return failed(fail_value(st.error, input, "ErrorPath", st.name),
								  fail_value(st.cause, input, "CausePath", st.name), st.name, input);
				case StateType::Choice: {
					// the rule that matched, else the Default; a rule's own
					// Assign / Output, else the state's
					const json eff = st.jsonata ? input
												: apply_io(st.input_path, input, ctx_, "InputPath", st.name);
					if (!st.jsonata)
						note(st, "afterInputPath", eff);
					std::optional<jsonata::Environment> env;
					if (st.jsonata)
						env = environment(input);
					const Rule *hit = nullptr;
					for (const auto &r : st.choices)
						if (st.jsonata ? condition_true(r, *env, st.name) : rule_true(r, eff, ctx_)) {
							hit = &r;
							break;
						}
					const std::string next = hit ? hit->next : st.default_next;
					if (next.empty())
						return failed(ERR_NO_CHOICE,
									  "in state \"" + st.name +
										  "\", no choice rule matched and there is no Default",
									  st.name, input);
					const auto &assign = hit && hit->assign ? hit->assign : st.assign;
					const auto &output = hit && hit->output ? hit->output : st.output;
					json vars = assign_of(assign, eff, env ? &*env : nullptr, st.name,
										  StatesIn{&input});
					if (st.jsonata)
						input = output ? jeval(*output, *env, "Output", st.name) : input;
					else
						input = apply_io(st.output_path, eff, ctx_, "OutputPath", st.name);
					commit(std::move(vars));
					note(st, "output", input);
					name = next;
					continue;
				}
				case StateType::Wait: {
					// JSONPath: InputPath first, as on entering any state
					std::optional<json> eff;
					if (!st.jsonata) {
						eff = apply_io(st.input_path, input, ctx_, "InputPath", st.name);
						note(st, "afterInputPath", *eff);
					}
					int64_t until = now_;
					if (st.seconds) {
						until = now_ + *st.seconds * 1000;
					} else if (st.timestamp_ms) {
						until = *st.timestamp_ms;
					} else if (st.jsonata) {
						const auto env = environment(input);
						if (st.seconds_x) {
							until = now_ + expr_int(*st.seconds_x, env, "Seconds", st.name, 0, kMaxSeconds) * 1000;
						} else {
							const json t = expr_value(*st.timestamp_x, env, "Timestamp", st.name);
							if (!t.is_string() || !parse_time(t.get<std::string>(), until))
								throw Failure(ERR_QUERY,
											  "in state \"" + st.name + "\", Timestamp {% " +
												  st.timestamp_x->text() +
												  " %} must give an RFC 3339 timestamp, not " +
												  t.dump(-1, ' ', false, json::error_handler_t::replace));
						}
					} else if (st.seconds_path) {
						until = now_ + seconds_from(*st.seconds_path, *eff, ctx_, "SecondsPath", st.name, true) * 1000;
					} else {
						const json t = select_or_fail(*st.timestamp_path, *eff, ctx_, "TimestampPath", st.name);
						if (!t.is_string() || !parse_time(t.get<std::string>(), until))
							throw Failure(ERR_RUNTIME,
										  "in state \"" + st.name + "\", TimestampPath " +
											  st.timestamp_path->text() +
											  " must select an RFC 3339 timestamp, not " +
											  t.dump(-1, ' ', false, json::error_handler_t::replace));
					}
					if (until > now_)
						return json{{"kind", "wait"},
									{"state", st.name},
									{"state_input", input},
									{"until_ms", until}};
					out = wait_output(st, input);
					break;
				}
				case StateType::Task:
				case StateType::Parallel:
				case StateType::Map:
					break;	// handled above
				}
				note(st, "output", out);
				if (st.end)
					return succeeded(std::move(out));
				name = st.next;
				input = std::move(out);
			} catch (const Failure &f) {
				return failed(f.error, f.what(), st.name, input);
			} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
				const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
				return failed(f.error, f.what(), st.name, input);
			}
		}
	}

  public:
	// The task finished with `result`.
	json task_succeeded(const State &st, const json &raw, const json &result,
						std::vector<int64_t> counts) {
		set_state(st, total(counts));
		note(st, "result", result);
		json out, vars;
		try {
			if (st.jsonata) {
				const auto env = environment(raw, &result);
				out = st.output ? jeval(*st.output, env, "Output", st.name) : result;
				vars = assign_of(st.assign, raw, &env, st.name);
			} else {
				json sel = st.result_selector ? eval_template(*st.result_selector, result, ctx_,
															  "ResultSelector", st.name)
											  : result;
				if (st.result_selector)
					note(st, "afterResultSelector", sel);
				vars = assign_of(st.assign, sel, nullptr, st.name, StatesIn{&raw, &result});
				out = apply_result_path(st.result_path, raw, std::move(sel), st.name);
				note(st, "afterResultPath", out);
				out = apply_io(st.output_path, out, ctx_, "OutputPath", st.name);
			}
			out = bounded(std::move(out), "the output", st.name);
		} catch (const Failure &f) {
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), true);
		} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
			const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), true);
		}
		commit(std::move(vars));
		return leave(st, std::move(out));
	}

	// The Wait's time has come.
	json timer_fired(const State &st, const json &raw) {
		set_state(st, 0);
		json out;
		try {
			out = wait_output(st, raw);
		} catch (const Failure &f) {
			return failed(f.error, f.what(), st.name, raw);
		} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
			const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
			return failed(f.error, f.what(), st.name, raw);
		}
		return leave(st, std::move(out));
	}

	// A Wait's output when its time has come, and its Assign.
	json wait_output(const State &st, const json &raw) {
		if (st.jsonata) {
			const auto env = environment(raw);
			json out = st.output ? jeval(*st.output, env, "Output", st.name) : raw;
			commit(assign_of(st.assign, raw, &env, st.name));
			return out;
		}
		json eff = apply_io(st.input_path, raw, ctx_, "InputPath", st.name);
		note(st, "afterInputPath", eff);
		json vars = assign_of(st.assign, eff, nullptr, st.name, StatesIn{&raw});
		json out = apply_io(st.output_path, eff, ctx_, "OutputPath", st.name);
		commit(std::move(vars));
		return out;
	}

	// The task (or this state's data processing) failed with `error`:
	// Retry, then Catch, then the instance fails.
	json handle_error(const State &st, const json &raw, const std::string &error,
					  const json &cause, std::vector<int64_t> counts, bool may_retry) {
		if (error == ERR_RUNTIME)  // never retried or caught (ASL)
			return failed(error, cause, st.name, raw);
		if (may_retry && error != "genroc.HandlerMissing") {
			for (size_t i = 0; i < st.retry.size(); i++) {
				const Retrier &r = st.retry[i];
				if (!error_matches(r.errors, error))
					continue;
				if (counts[i] < r.max_attempts) {
					const int64_t delay = retry_delay_ms(r, counts[i]);
					note(st, "errorDetails",
						 {{"retryIndex", i}, {"retryBackoffIntervalSeconds", delay / 1000}});
					counts[i]++;
					set_state(st, total(counts));
					return enter_task(st, raw, std::move(counts), delay);
				}
				break;	// the first matching retrier decides, even when spent
			}
		}
		for (const Catcher &c : st.catchers) {
			if (!error_matches(c.errors, error))
				continue;
			note(st, "errorDetails", {{"catchIndex", &c - st.catchers.data()}});
			json info = {{"Error", error}};
			if (!cause.is_null())
				info["Cause"] = cause;
			json out, vars;
			try {
				if (st.jsonata) {
					const auto env = environment(raw, nullptr, &info);
					out = c.output ? jeval(*c.output, env, "Catch Output", st.name) : info;
					vars = assign_of(c.assign, raw, &env, st.name);
				} else {
					vars = assign_of(c.assign, info, nullptr, st.name,
									 StatesIn{&raw, nullptr, &info});
					out = apply_result_path(c.result_path, raw, std::move(info), st.name);
				}
			} catch (const Failure &f) {
				return failed(f.error, f.what(), st.name, raw);
			} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
				const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
				return failed(f.error, f.what(), st.name, raw);
			}
			commit(std::move(vars));
			note(st, "output", out);
			return jump(c.next, std::move(out));
		}
		return failed(error, cause, st.name, raw);
	}

	// NONE: Interval * Rate^count, capped by MaxDelaySeconds; FULL: a random
	// delay between 0 and that.
	static int64_t retry_delay_ms(const Retrier &r, int64_t count) {
		double ms = static_cast<double>(r.interval_s) * 1000.0 *
					std::pow(r.backoff_rate, static_cast<double>(count));
		if (r.max_delay_s)
			ms = std::min(ms, static_cast<double>(*r.max_delay_s) * 1000.0);
		ms = std::min(ms, static_cast<double>(kMaxSeconds) * 1000.0);
		const int64_t delay = static_cast<int64_t>(std::llround(ms));
		if (!r.full_jitter || delay == 0)
			return delay;
		return static_cast<int64_t>(random_below_inclusive(static_cast<uint64_t>(delay)));
	}

	// Parallel and Map stop where a Task would: the store starts the
	// children (branches or items) and resumes this state with
	// children_done, or task_failed when the state fails.
	json enter_fanout(const State &st, const json &raw, std::vector<int64_t> counts,
					  int64_t delay_ms) {
		json out = {{"state", st.name}, {"state_input", raw}};
		try {
			if (st.jsonata)
				return jsonata_fanout(st, raw, std::move(counts), delay_ms);
			note(st, "input", raw);
			json eff = apply_io(st.input_path, raw, ctx_, "InputPath", st.name);
			note(st, "afterInputPath", eff);
			if (st.type == StateType::Parallel) {
				if (st.parameters) {
					eff = eval_template(*st.parameters, eff, ctx_, "Parameters", st.name);
					note(st, "afterParameters", eff);
				}
				json branches = json::array();
				for (const auto &scope : st.branch_scopes)
					branches.push_back({{"scope", scope}, {"input", eff}});
				out["kind"] = "parallel";
				out["branches"] = std::move(branches);
			} else {
				json items_v = st.items_path ? select_or_fail(*st.items_path, eff, ctx_, "ItemsPath",
															  st.name)
											 : eff;
				if (st.items_path)
					note(st, "afterItemsPath", items_v);
				if (!items_v.is_array())
					throw Failure(ERR_RUNTIME,
								  "in state \"" + st.name + "\", ItemsPath " +
									  (st.items_path ? st.items_path->text() : std::string("$")) +
									  " must select an array, not " + items_v.type_name());
				if (items_v.empty())  // nothing to run: the Map is done at once
					return task_succeeded(st, raw, json::array(), std::move(counts));
				std::vector<json> inputs;
				inputs.reserve(items_v.size());
				limits::count_work(items_v.size());
				limits::count_bytes(items_v.size() * limits::kItemBytes);
				for (size_t i = 0; i < items_v.size(); i++) {
					json input = items_v[i];
					if (st.item_selector) {
						json ctx = ctxj_;
						ctx["Map"] = {{"Item", {{"Index", i}, {"Value", items_v[i]}}}};
						input = eval_template(*st.item_selector, eff, Ctx{ctx, vars_}, "ItemSelector",
											  st.name);
					}
					inputs.push_back(std::move(input));
				}
				if (st.item_selector)
					note(st, "afterItemSelector", inputs);
				if (st.batched) {
					inputs = batches(st, std::move(inputs), eff, nullptr);
					note(st, "afterItemBatcher", inputs);
				}
				json items = json::array();
				for (size_t i = 0; i < inputs.size(); i++)
					items.push_back(
						{{"scope", st.item_scope}, {"input", std::move(inputs[i])}, {"index", i}});
				int64_t max_concurrency = st.max_concurrency;
				if (st.max_concurrency_path)
					max_concurrency = int_from(*st.max_concurrency_path, eff, "MaxConcurrencyPath",
											   st.name, INT32_MAX);
				json tol_count = st.tolerated_count ? json(*st.tolerated_count) : json(nullptr);
				if (st.tolerated_count_path)
					tol_count = int_from(*st.tolerated_count_path, eff, "ToleratedFailureCountPath",
										 st.name, INT32_MAX);
				json tol_pct = st.tolerated_pct ? json(*st.tolerated_pct) : json(nullptr);
				if (st.tolerated_pct_path) {
					const json v = select_or_fail(*st.tolerated_pct_path, eff, ctx_,
												  "ToleratedFailurePercentagePath", st.name);
					if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100)
						throw Failure(ERR_RUNTIME, "in state \"" + st.name +
													   "\", ToleratedFailurePercentagePath " +
													   st.tolerated_pct_path->text() +
													   " must select a number from 0 to 100, not " +
													   v.dump(-1, ' ', false,
															  json::error_handler_t::replace));
					tol_pct = v.get<double>();
				}
				out["kind"] = "map";
				out["items"] = std::move(items);
				out["max_concurrency"] = max_concurrency;
				out["tolerated_count"] = std::move(tol_count);
				out["tolerated_percentage"] = std::move(tol_pct);
			}
		} catch (const Failure &f) {
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), false);
		} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
			const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), false);
		}
		out["retry_counts"] = counts;
		out["delay_ms"] = delay_ms;
		return out;
	}

	// A whole number in least..most that `p` selects from `eff` (the *Path
	// forms).
	int64_t int_from(const Path &p, const json &eff, const char *field, const std::string &state,
					 int64_t most, int64_t least = 0) {
		const json v = select_or_fail(p, eff, ctx_, field, state);
		if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) ||
			v.get<int64_t>() < least || v.get<int64_t>() > most)
			throw Failure(ERR_RUNTIME, "in state \"" + state + "\", " + field + " " + p.text() +
										   " must select an integer from " + std::to_string(least) +
										   " to " +
										   std::to_string(most) + ", not " +
										   v.dump(-1, ' ', false, json::error_handler_t::replace));
		return v.get<int64_t>();
	}

	// ItemBatcher: consecutive items grouped into batches, each the input of
	// one item processor run: {"Items": [...]} and "BatchInput" when given.
	// A batch closes before it would pass MaxItemsPerBatch items or
	// MaxInputBytesPerBatch bytes of JSON; one item alone over the byte bound
	// is States.Runtime.
	std::vector<json> batches(const State &st, std::vector<json> items, const json &eff,
							  const jsonata::Environment *env) {
		int64_t most_items = st.batch_items, most_bytes = st.batch_bytes;
		if (st.batch_items_path)
			most_items = int_from(*st.batch_items_path, eff, "MaxItemsPerBatchPath", st.name,
								  INT32_MAX, 1);
		if (st.batch_bytes_path)
			most_bytes = int_from(*st.batch_bytes_path, eff, "MaxInputBytesPerBatchPath", st.name,
								  kMaxBatchBytes, 1);
		if (st.batch_items_x)
			most_items = expr_int(*st.batch_items_x, *env, "MaxItemsPerBatch", st.name, 1, INT32_MAX);
		if (st.batch_bytes_x)
			most_bytes =
				expr_int(*st.batch_bytes_x, *env, "MaxInputBytesPerBatch", st.name, 1, kMaxBatchBytes);
		json batch_input;
		if (st.batch_input)
			batch_input = eval_template(*st.batch_input, eff, ctx_, "BatchInput", st.name);
		if (st.j_batch_input)
			batch_input = jeval(*st.j_batch_input, *env, "BatchInput", st.name);
		auto start = [&] {
			json b = json::object();
			if (st.batch_input || st.j_batch_input)
				b["BatchInput"] = batch_input;
			b["Items"] = json::array();
			return b;
		};
		// {"Items":[]} and the BatchInput member, then a comma and an item each.
		const size_t frame = start().dump().size();
		std::vector<json> out;
		json cur = start();
		size_t bytes = frame;
		limits::count_work(items.size());
		for (auto &item : items) {
			const size_t size = item.dump(-1, ' ', false, json::error_handler_t::replace).size();
			if (most_bytes > 0 && frame + size > static_cast<size_t>(most_bytes))
				throw Failure(ERR_RUNTIME, "in state \"" + st.name + "\", an item of " +
											   std::to_string(size) +
											   " bytes does not fit MaxInputBytesPerBatch " +
											   std::to_string(most_bytes));
			const size_t grown = bytes + size + (cur["Items"].empty() ? 0 : 1);
			if (!cur["Items"].empty() &&
				((most_items > 0 && cur["Items"].size() >= static_cast<size_t>(most_items)) ||
				 (most_bytes > 0 && grown > static_cast<size_t>(most_bytes)))) {
				out.push_back(std::move(cur));
				cur = start();
				bytes = frame;
			}
			bytes += size + (cur["Items"].empty() ? 0 : 1);
			cur["Items"].push_back(std::move(item));
		}
		if (!cur["Items"].empty())
			out.push_back(std::move(cur));
		return out;
	}

	json enter_task(const State &st, const json &raw, std::vector<int64_t> counts, int64_t delay_ms) {
		if (st.type != StateType::Task)
			return enter_fanout(st, raw, std::move(counts), delay_ms);
		json task_input;
		std::optional<int64_t> timeout = st.timeout_s, heartbeat = st.heartbeat_s;
		try {
			if (st.jsonata) {
				const auto env = environment(raw);
				if (st.timeout_x)
					timeout = expr_int(*st.timeout_x, env, "TimeoutSeconds", st.name, 1, kMaxSeconds);
				if (st.heartbeat_x)
					heartbeat =
						expr_int(*st.heartbeat_x, env, "HeartbeatSeconds", st.name, 1, kMaxSeconds);
				if (timeout && heartbeat && *heartbeat >= *timeout)
					throw Failure(ERR_RUNTIME, "in state \"" + st.name + "\", the heartbeat (" +
												   std::to_string(*heartbeat) +
												   "s) must be shorter than the timeout (" +
												   std::to_string(*timeout) + "s)");
				task_input = st.arguments ? jeval(*st.arguments, env, "Arguments", st.name) : raw;
				if (st.arguments)
					note(st, "afterArguments", task_input);
			} else {
			json eff = apply_io(st.input_path, raw, ctx_, "InputPath", st.name);
			note(st, "afterInputPath", eff);
			if (st.timeout_path)
				timeout = seconds_from(*st.timeout_path, eff, ctx_, "TimeoutSecondsPath", st.name, false);
			if (st.heartbeat_path)
				heartbeat = seconds_from(*st.heartbeat_path, eff, ctx_, "HeartbeatSecondsPath",
										 st.name, false);
			if (timeout && heartbeat && *heartbeat >= *timeout)
				throw Failure(ERR_RUNTIME, "in state \"" + st.name + "\", the heartbeat (" +
											   std::to_string(*heartbeat) +
											   "s) must be shorter than the timeout (" +
											   std::to_string(*timeout) + "s)");
			task_input = st.parameters
							 ? eval_template(*st.parameters, eff, ctx_, "Parameters", st.name)
							 : std::move(eff);
			if (st.parameters)
				note(st, "afterParameters", task_input);
			}
			if (st.resource == "genroc:event" &&
				!(task_input.is_object() && task_input.contains("Name") &&
				  task_input["Name"].is_string() && !task_input["Name"].get<std::string>().empty()))
				throw Failure(ERR_RUNTIME, "in state \"" + st.name +
											   "\", a genroc:event task needs an input with a "
											   "non-empty string \"Name\" (the event to wait for)");
			if (is_call(st.resource))
				check_call_input(task_input, st.name);
		} catch (const Failure &f) {
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), false);
		} catch (const limits::BudgetExceeded &e) {  // the step's budget: States.Runtime
			const Failure f(ERR_RUNTIME, "in state \"" + st.name + "\", " + e.what());
			return handle_error(st, raw, f.error, json(f.what()), std::move(counts), false);
		}
		if (is_call(st.resource))
			return json{{"kind", "call"},
						{"state", st.name},
						{"state_input", raw},
						{"definition", task_input["Definition"]},
						{"version", task_input.value("Version", json(nullptr))},
						{"input", task_input.value("Input", json::object())},
						{"name", task_input.value("Name", json(nullptr))},
						{"sync", st.resource == "genroc:call.sync"},
						{"timeout_s", timeout && st.resource == "genroc:call.sync" ? json(*timeout)
																				  : json(nullptr)},
						{"retry_counts", counts},
						{"delay_ms", delay_ms}};
		if (st.resource == "genroc:event")
			return json{{"kind", "event"},
						{"state", st.name},
						{"state_input", raw},
						{"name", task_input["Name"]},
						{"timeout_s", timeout ? json(*timeout) : json(nullptr)},
						{"retry_counts", counts},
						{"delay_ms", delay_ms}};
		json task{{"kind", "task"},
				  {"state", st.name},
				  {"resource", st.resource},
				  {"state_input", raw},
				  {"task_input", std::move(task_input)},
				  {"timeout_s", timeout ? json(*timeout) : json(nullptr)},
				  {"heartbeat_s", heartbeat ? json(*heartbeat) : json(nullptr)},
				  {"only_once", st.only_once},
				  {"retry_counts", counts},
				  {"delay_ms", delay_ms}};
		if (st.wait_for_token)
			task["token"] = task_token();
		return task;
	}

	// $$.Task.Token as the store handed it in (null without one).
	json task_token() const {
		auto t = ctx_.obj.find("Task");
		if (t == ctx_.obj.end() || !t->is_object())
			return nullptr;
		auto k = t->find("Token");
		return k != t->end() && k->is_string() ? *k : json(nullptr);
	}

  private:
	static bool is_call(const std::string &resource) {
		return resource == "genroc:call" || resource == "genroc:call.sync";
	}

	// A call's task input (after Parameters): {"Definition": name, "Version":
	// n, "Input": any, "Name": text}; only Definition is required.
	static void check_call_input(const json &in, const std::string &state) {
		const std::string where = "in state \"" + state + "\", a genroc:call task input ";
		if (!in.is_object())
			throw Failure(ERR_RUNTIME, where + "must be an object {\"Definition\": name, "
											   "\"Version\", \"Input\", \"Name\"}, not " +
										   in.type_name());
		for (auto it = in.begin(); it != in.end(); ++it)
			if (it.key() != "Definition" && it.key() != "Version" && it.key() != "Input" &&
				it.key() != "Name")
				throw Failure(ERR_RUNTIME, where + "has an unknown field \"" + it.key() +
											   "\" (known: Definition, Version, Input, Name)");
		if (!in.contains("Definition") || !in["Definition"].is_string() ||
			in["Definition"].get<std::string>().empty())
			throw Failure(ERR_RUNTIME, where + "needs a non-empty string \"Definition\"");
		if (in.contains("Version") &&
			!(in["Version"].is_number_integer() && in["Version"].get<int64_t>() >= 1 &&
			  in["Version"].get<int64_t>() <= INT32_MAX))
			throw Failure(ERR_RUNTIME, where + "has \"Version\" " + in["Version"].dump() +
										   "; it must be a positive integer");
		if (in.contains("Name") &&
			!(in["Name"].is_string() && !in["Name"].get<std::string>().empty()))
			throw Failure(ERR_RUNTIME, where + "has \"Name\" " + in["Name"].dump() +
										   "; it must be a non-empty string");
	}

	const Machine &def_;
	int64_t now_;
	json ctxj_;	 // the context object $$
	json vars_;	 // the variables, as the step found them and Assign changed them
	Ctx ctx_{ctxj_, vars_};
	bool reads_context_;
	bool vars_changed_ = false;
	bool single_ = false, tracing_ = false;
	json trace_ = json::array();

	// ---------------------------------------------------------- JSONata

	// The variables and $states for a JSONata expression of a state with
	// raw input `input` (and its result, or the error a catcher handles).
	jsonata::Environment environment(const json &input, const json *result = nullptr,
									 const json *error_output = nullptr) const {
		jsonata::Environment e;
		e.now_ms = now_;
		for (auto it = vars_.begin(); it != vars_.end(); ++it)
			e.vars.emplace(it.key(), *it);
		json states = {{"input", input}, {"context", ctxj_}};
		if (result)
			states["result"] = *result;
		if (error_output)
			states["errorOutput"] = *error_output;
		e.vars["states"] = std::move(states);
		return e;
	}

	// One expression's value; an error or no value (undefined) is
	// States.QueryEvaluationError, which Retry and Catch see.  `$` is the
	// state input, as $states.input.
	static json expr_value(const jsonata::Expression &x, const jsonata::Environment &env,
						   const std::string &field, const std::string &state) {
		const json &input = env.vars.at("states").at("input");
		std::optional<json> v;
		try {
			v = jsonata::evaluate(x, &input, env);
		} catch (const jsonata::JsonataError &e) {
			throw Failure(ERR_QUERY, "in state \"" + state + "\", the JSONata expression {% " +
										 x.text() + " %} in " + field + " failed: " + e.what() +
										 " (" + e.code + ")");
		}
		if (!v)
			throw Failure(ERR_QUERY, "in state \"" + state + "\", the JSONata expression {% " +
										 x.text() + " %} in " + field +
										 " returned nothing (undefined)");
		return std::move(*v);
	}

	static json jbuild(const JTemplate &t, const jsonata::Environment &env, const char *field,
					   const std::string &state) {
		limits::RecursionGuard guard;
		switch (t.kind) {
		case JTemplate::Literal:
			return t.literal;
		case JTemplate::Expr:
			return expr_value(*t.expr, env, field, state);
		case JTemplate::Object: {
			json out = json::object();
			for (size_t i = 0; i < t.keys.size(); i++)
				out[t.keys[i]] = jbuild(t.values[i], env, field, state);
			return out;
		}
		case JTemplate::Array: {
			json out = json::array();
			for (const auto &sub : t.items)
				out.push_back(jbuild(sub, env, field, state));
			return out;
		}
		}
		return nullptr;
	}

	static json jeval(const JTemplate &t, const jsonata::Environment &env, const char *field,
					  const std::string &state) {
		return bounded(jbuild(t, env, field, state), field, state);
	}

	// A whole number in least..most from an expression (TimeoutSeconds,
	// Seconds, MaxConcurrency, ...).
	static int64_t expr_int(const jsonata::Expression &x, const jsonata::Environment &env,
							const char *field, const std::string &state, int64_t least,
							int64_t most) {
		const json v = expr_value(x, env, field, state);
		const double d = v.is_number() ? v.get<double>() : 0.5;
		if (!v.is_number() || std::floor(d) != d || d < static_cast<double>(least) ||
			d > static_cast<double>(most))
			throw Failure(ERR_QUERY, "in state \"" + state + "\", " + field + " {% " + x.text() +
										 " %} must give an integer from " + std::to_string(least) +
										 " to " + std::to_string(most) + ", not " +
										 v.dump(-1, ' ', false, json::error_handler_t::replace));
		return static_cast<int64_t>(d);
	}

	// A JSONata choice rule: its Condition must be true or false.
	static bool condition_true(const Rule &r, const jsonata::Environment &env,
							   const std::string &state) {
		if (!r.condition)
			return r.condition_value;
		const json v = expr_value(*r.condition, env, "Condition", state);
		if (!v.is_boolean())
			throw Failure(ERR_QUERY, "in state \"" + state + "\", the Condition {% " +
										 r.condition->text() + " %} must give true or false, not " +
										 v.dump(-1, ' ', false, json::error_handler_t::replace));
		return v.get<bool>();
	}

	// ---------------------------------------------------------- variables

	// The variables after `assign`, evaluated against the values the state
	// found (apply them with commit() once the state's output is known, so
	// Output and Assign both see the old values); null when there is none.
	// JSONPath: `$` is `input`; JSONata: the expressions see `env`.
	json assign_of(const std::optional<AssignSpec> &assign, const json &input,
				   const jsonata::Environment *env, const std::string &state,
				   const StatesIn &states = {}) const {
		if (!assign)
			return nullptr;
		json vals;
		if (assign->jsonata) {
			vals = jbuild(assign->jsonata_form, *env, "Assign", state);
		} else if (assign->uses_states) {
			json with_states = vars_.is_object() ? vars_ : json::object();
			json &st = with_states["states"] = {{"input", *states.input}, {"context", ctxj_}};
			if (states.result)
				st["result"] = *states.result;
			if (states.error_output)
				st["errorOutput"] = *states.error_output;
			vals = build(assign->path_form, input, Ctx{ctxj_, with_states}, "Assign", state);
		} else {
			vals = build(assign->path_form, input, ctx_, "Assign", state);
		}
		vals = bounded(std::move(vals), "Assign", state);
		size_t bytes = 0;
		for (auto it = vals.begin(); it != vals.end(); ++it) {
			const size_t n = it->dump(-1, ' ', false, json::error_handler_t::replace).size();
			if (n > limits::VARIABLE_SIZE)
				throw Failure(ERR_RUNTIME, "in state \"" + state + "\", the variable \"" + it.key() +
											   "\" would hold " + std::to_string(n) +
											   " bytes, more than " +
											   std::to_string(limits::VARIABLE_SIZE) +
											   limits::named("variable_size"));
			bytes += n;
		}
		if (bytes > limits::ASSIGN_SIZE)
			throw Failure(ERR_RUNTIME, "in state \"" + state + "\", Assign sets " +
										   std::to_string(bytes) + " bytes of values, more than " +
										   std::to_string(limits::ASSIGN_SIZE) +
										   limits::named("assign_size"));
		json merged = vars_.is_object() ? vars_ : json::object();
		for (auto it = vals.begin(); it != vals.end(); ++it)
			merged[it.key()] = std::move(*it);
		const size_t all = merged.dump(-1, ' ', false, json::error_handler_t::replace).size();
		if (all > limits::VARIABLES_SIZE)
			throw Failure(ERR_RUNTIME, "in state \"" + state + "\", the variables would hold " +
										   std::to_string(all) + " bytes, more than " +
										   std::to_string(limits::VARIABLES_SIZE) +
										   limits::named("variables_size"));
		return merged;
	}

	void commit(json merged) {
		if (merged.is_null())
			return;
		vars_ = std::move(merged);
		vars_changed_ = true;
	}

	// Parallel and Map in a JSONata state: Arguments (a branch's input),
	// Items, ItemSelector, the numbers from expressions.
	json jsonata_fanout(const State &st, const json &raw, std::vector<int64_t> counts,
						int64_t delay_ms) {
		json out = {{"state", st.name}, {"state_input", raw}};
		const auto env = environment(raw);
		if (st.type == StateType::Parallel) {
			const json input = st.arguments ? jeval(*st.arguments, env, "Arguments", st.name) : raw;
			if (st.arguments)
				note(st, "afterArguments", input);
			json branches = json::array();
			for (const auto &scope : st.branch_scopes)
				branches.push_back({{"scope", scope}, {"input", input}});
			out["kind"] = "parallel";
			out["branches"] = std::move(branches);
		} else {
			json items_v = st.items ? jeval(*st.items, env, "Items", st.name) : raw;
			if (!items_v.is_array())
				throw Failure(st.items ? ERR_QUERY : ERR_RUNTIME,
							  "in state \"" + st.name + "\", " +
								  (st.items ? "Items" : "the input of a Map without Items") +
								  " must be an array, not " + items_v.type_name());
			if (items_v.empty())
				return task_succeeded(st, raw, json::array(), std::move(counts));
			std::vector<json> inputs;
			inputs.reserve(items_v.size());
			for (size_t i = 0; i < items_v.size(); i++) {
				if (!st.j_item_selector) {
					inputs.push_back(items_v[i]);
					continue;
				}
				jsonata::Environment item_env = env;
				item_env.vars["states"]["context"]["Map"] = {
					{"Item", {{"Index", i}, {"Value", items_v[i]}}}};
				inputs.push_back(jeval(*st.j_item_selector, item_env, "ItemSelector", st.name));
			}
			if (st.batched)
				inputs = batches(st, std::move(inputs), raw, &env);
			json items = json::array();
			for (size_t i = 0; i < inputs.size(); i++)
				items.push_back(
					{{"scope", st.item_scope}, {"input", std::move(inputs[i])}, {"index", i}});
			json tol_count = st.tolerated_count ? json(*st.tolerated_count) : json(nullptr);
			if (st.tolerated_count_x)
				tol_count = expr_int(*st.tolerated_count_x, env, "ToleratedFailureCount", st.name, 0,
									 INT32_MAX);
			json tol_pct = st.tolerated_pct ? json(*st.tolerated_pct) : json(nullptr);
			if (st.tolerated_pct_x) {
				const json v = expr_value(*st.tolerated_pct_x, env, "ToleratedFailurePercentage",
										  st.name);
				if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100)
					throw Failure(ERR_QUERY, "in state \"" + st.name +
												 "\", ToleratedFailurePercentage must give a "
												 "number from 0 to 100, not " +
												 v.dump(-1, ' ', false, json::error_handler_t::replace));
				tol_pct = v.get<double>();
			}
			out["kind"] = "map";
			out["items"] = std::move(items);
			out["max_concurrency"] = st.max_concurrency_x
										 ? expr_int(*st.max_concurrency_x, env, "MaxConcurrency",
													st.name, 0, INT32_MAX)
										 : st.max_concurrency;
			out["tolerated_count"] = std::move(tol_count);
			out["tolerated_percentage"] = std::move(tol_pct);
		}
		out["retry_counts"] = counts;
		out["delay_ms"] = delay_ms;
		return out;
	}
	json entered_ = json::array();
	// Where the step goes on (see drive); set by jump.
	struct Pending {
		std::string state;
		json input;
	};
	std::optional<Pending> pending_;

	// Asks drive() to go on at `state` with `input`, once the caller's frames
	// have returned; the value returned is a placeholder nobody reads.
	json jump(std::string state, json input) {
		pending_ = Pending{std::move(state), std::move(input)};
		return nullptr;
	}

	static int64_t total(const std::vector<int64_t> &counts) {
		int64_t n = 0;
		for (auto c : counts)
			n += c;
		return n;
	}

	void set_state(const State &st, int64_t retry_count) {
		if (!reads_context_)
			return;	 // nothing reads it: no timestamp to format per state
		ctxj_["State"] = {{"Name", st.name},
						 {"EnteredTime", format_time(now_)},
						 {"RetryCount", retry_count}};
	}

	json leave(const State &st, json out) {
		note(st, "output", out);
		if (st.end)
			return succeeded(std::move(out));
		return jump(st.next, std::move(out));
	}

	// A Succeed state's end of the machine, its output in the trace.
	json ended(const State &st, json out) {
		note(st, "output", out);
		return succeeded(std::move(out));
	}

	// Single mode: where the state leads, and its output.
	static json next_state(std::string state, json output) {
		return json{{"kind", "next"}, {"state", std::move(state)}, {"output", std::move(output)}};
	}

	json fail_value(const ValueSource &src, const json &input, const char *field,
					const std::string &state) {
		if (src.literal)
			return *src.literal;
		json v;
		if (src.expr) {
			v = expr_value(*src.expr, environment(input), field[0] == 'E' ? "Error" : "Cause", state);
			if (!v.is_string())
				throw Failure(ERR_QUERY, "in state \"" + state + "\", " +
											 (field[0] == 'E' ? "Error" : "Cause") +
											 " must give a string, not " + v.type_name());
			return v;
		}
		if (src.path)
			v = select_or_fail(*src.path, input, ctx_, field, state);
		else if (src.call)
			v = eval_intrinsic(*src.call, input, ctxj_, &vars_);
		else
			return nullptr;
		if (!v.is_string())
			throw Failure(ERR_RUNTIME, "in state \"" + state + "\", " + field +
										   " must select a string, not " + v.type_name());
		return v;
	}

	static json succeeded(json output) {
		return json{{"kind", "succeeded"}, {"output", std::move(output)}};
	}
	// "state" and "state_input": where it failed, with that state's raw
	// input (what running it again needs)
	static json failed(const json &error, const json &cause, const std::string &state,
					   const json &state_input) {
		return json{{"kind", "failed"},
					{"error", error},
					{"cause", cause},
					{"state", state},
					{"state_input", state_input}};
	}
};

const json &field(const json &req, const char *name) {
	auto it = req.find(name);
	if (it == req.end())
		bad_request(std::string("\"") + name + "\" is required");
	return *it;
}

const State &request_state(const Machine &d, const json &req,
						   std::initializer_list<StateType> want) {
	const json &name = field(req, "state");
	if (!name.is_string())
		bad_request("\"state\" must be a string");
	auto it = d.states.find(name.get<std::string>());
	if (it == d.states.end())
		bad_request("no state \"" + name.get<std::string>() + "\" in this definition");
	if (std::find(want.begin(), want.end(), it->second.type) == want.end())
		bad_request("state \"" + it->first + "\" is a " + it->second.type_name + " state");
	return it->second;
}

std::vector<int64_t> request_counts(const State &st, const json &req) {
	std::vector<int64_t> counts(st.retry.size(), 0);
	auto it = req.find("retry_counts");
	if (it == req.end() || it->is_null())
		return counts;
	if (!it->is_array() || it->size() != counts.size())
		bad_request("\"retry_counts\" must be an array of " + std::to_string(counts.size()) +
					" integers (one per Retry entry of state \"" + st.name + "\")");
	for (size_t i = 0; i < counts.size(); i++) {
		const json &c = (*it)[i];
		if (!c.is_number_integer() || c.get<int64_t>() < 0)
			bad_request("\"retry_counts\" must hold integers >= 0");
		counts[i] = c.get<int64_t>();
	}
	return counts;
}

}  // namespace

json step(const Definition &d, const json &req) {
	limits::BudgetScope budget;	 // one budget of work and bytes for the whole step
	if (!req.is_object())
		bad_request("must be a JSON object");
	const json &op_v = field(req, "op");
	if (!op_v.is_string())
		bad_request("\"op\" must be a string");
	const std::string &op = op_v.get_ref<const std::string &>();
	const json &now_v = field(req, "now_ms");
	if (!now_v.is_number_integer() ||
		(now_v.is_number_unsigned() && now_v.get<uint64_t>() > INT64_MAX) ||
		now_v.get<int64_t>() < kMinNowMs || now_v.get<int64_t>() > kMaxNowMs)
		bad_request("\"now_ms\" must be an integer (milliseconds since the epoch, years 0000 "
					"to 9999)");
	// What the caller hands in must be within json_depth before anything
	// recurses over it (a copy, a comparison, a dump): the stores refuse a
	// payload that deep with this error, and their own checks at the door
	// (genroc._check_depth, the SQLite store's) use the same words.
	for (const auto &[f, what] : {std::pair{"input", "the input"},
								  std::pair{"state_input", "the state input"},
								  std::pair{"result", "the task result"}})
		if (auto it = req.find(f); it != req.end())
			limits::check_json_depth(*it, what);
	// Each child's output is within the limit; their array adds one level.
	if (auto it = req.find("outputs"); it != req.end() && it->is_array())
		for (const auto &o : *it)
			limits::check_json_depth(o, "a child's output");
	json ctx = json::object();
	if (auto it = req.find("context"); it != req.end() && !it->is_null()) {
		if (!it->is_object())
			bad_request("\"context\" must be an object");
		// $$.Execution.Input is the instance input, two levels down.
		if (!limits::within_depth(*it, limits::JSON_DEPTH + 2))
			limits::check_json_depth(*it, "the context object");
		ctx = *it;
	}
	std::string scope;
	if (auto it = req.find("scope"); it != req.end() && !it->is_null()) {
		if (!it->is_string())
			bad_request("\"scope\" must be a string");
		scope = it->get<std::string>();
	}
	auto mit = d.machines.find(scope);
	if (mit == d.machines.end())
		bad_request("no scope \"" + scope + "\" in this definition");
	const Machine &m = mit->second;
	json vars = json::object();
	if (auto it = req.find("variables"); it != req.end() && !it->is_null()) {
		if (!it->is_object())
			bad_request("\"variables\" must be an object");
		limits::check_json_depth(*it, "the variables");
		vars = *it;
	}
	Runner runner(m, now_v.get<int64_t>(), std::move(ctx), std::move(vars), d.reads_context);
	bool flags[2] = {false, false};
	for (int i = 0; i < 2; i++)
		if (auto it = req.find(i ? "trace" : "single"); it != req.end() && !it->is_null()) {
			if (!it->is_boolean())
				bad_request(std::string("\"") + (i ? "trace" : "single") + "\" must be a boolean");
			flags[i] = it->get<bool>();
		}
	runner.inspect(flags[0], flags[1]);
	json outcome;
	if (op == "start") {
		auto it = req.find("input");
		outcome = runner.run(m.start_at, it == req.end() ? json::object() : *it);
	} else if (op == "children_done") {
		const State &st = request_state(m, req, {StateType::Parallel, StateType::Map});
		const json &outputs = field(req, "outputs");
		if (!outputs.is_array())
			bad_request("\"outputs\" must be an array");
		outcome = runner.drive(runner.task_succeeded(st, field(req, "state_input"), outputs,
													 request_counts(st, req)));
	} else if (op == "task_succeeded") {
		const State &st = request_state(m, req, {StateType::Task});
		// a .waitForTaskToken task's handler returned: the state waits for
		// the result sent with its token ("callback": true marks that one)
		const auto cb = req.find("callback");
		if (st.wait_for_token && (cb == req.end() || !cb->is_boolean() || !cb->get<bool>()))
			return json{{"entered", json::array()}, {"outcome", {{"kind", "callback"}, {"state", st.name}}}};
		outcome = runner.drive(runner.task_succeeded(st, field(req, "state_input"),
													 field(req, "result"), request_counts(st, req)));
	} else if (op == "task_failed") {
		const State &st =
			request_state(m, req, {StateType::Task, StateType::Parallel, StateType::Map});
		// "error": null: a Fail state without Error ended a branch or an
		// item. A nameless error matches no Retry or Catch, so the state
		// fails as it is, as AWS fails the execution.
		const json &error = field(req, "error");
		if (!error.is_null() && (!error.is_string() || error.get_ref<const std::string &>().empty()))
			bad_request("\"error\" must be a non-empty string or null");
		json cause = req.contains("cause") ? req["cause"] : json(nullptr);
		if (!cause.is_null() && !cause.is_string())
			bad_request("\"cause\" must be a string or null");
		if (error.is_null())
			outcome = runner.drive(runner.nameless_failure(st, field(req, "state_input"), cause));
		else
			outcome = runner.drive(runner.handle_error(st, field(req, "state_input"),
													   error.get<std::string>(), cause,
													   request_counts(st, req), true));
	} else if (op == "timer_fired") {
		const State &st = request_state(m, req, {StateType::Wait});
		outcome = runner.drive(runner.timer_fired(st, field(req, "state_input")));
	} else if (op == "enter") {
		const State &st =
			request_state(m, req,
						  {StateType::Pass, StateType::Task, StateType::Choice, StateType::Wait,
						   StateType::Succeed, StateType::Fail, StateType::Parallel, StateType::Map});
		outcome = runner.run(st.name, field(req, "state_input"));
	} else {
		bad_request("unknown op \"" + op +
					"\" (start, enter, task_succeeded, task_failed, timer_fired, children_done)");
	}
	return runner.answer(std::move(outcome));
}

}  // namespace genroc::asl
