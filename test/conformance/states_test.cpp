// states_test.cpp — inline states run inside start: Pass and its paths,
// Choice operators, Succeed, Fail, the context object, Wait with tick.
#include "fixture.hpp"

namespace genroc::conformance {

TEST_P(StoreTest, PassPathsInputParametersResultSelectorOutput) {
	define("paths", json::parse(R"({
	  "StartAt": "Pick",
	  "States": {
	    "Pick": {"Type": "Pass", "InputPath": "$.order",
	             "Parameters": {"sku.$": "$.sku", "fixed": 7, "exec.$": "$$.Execution.Id",
	                            "machine.$": "$$.StateMachine.Name"},
	             "ResultPath": "$.picked", "Next": "Merge"},
	    "Merge": {"Type": "Pass", "Result": {"n": 3}, "ResultPath": "$.deep.new.place", "Next": "Drop"},
	    "Drop": {"Type": "Pass", "Result": "ignored", "ResultPath": null, "OutputPath": "$.picked", "End": true}
	  }})"));
	auto r = store().start("paths", {{"order", {{"sku", "a-1"}, {"qty", 2}}}}, json::object());
	EXPECT_TRUE(r.is_new);
	EXPECT_EQ(r.status, "succeeded");
	json out = instance(r.instance_id).at("output");
	EXPECT_EQ(out, json({{"sku", "a-1"},
						 {"fixed", 7},
						 {"exec", std::to_string(r.instance_id)},
						 {"machine", "paths"}}));
}

TEST_P(StoreTest, ResultPathCreatesMissingObjectsAndNullKeepsTheInput) {
	define("rp", json::parse(R"({
	  "StartAt": "A",
	  "States": {
	    "A": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.a.b", "Next": "B"},
	    "B": {"Type": "Pass", "Result": 99, "ResultPath": null, "End": true}
	  }})"));
	int64_t id = start("rp", {{"keep", true}});
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"keep": true, "a": {"b": {"x": 1}}})"));
}

TEST_P(StoreTest, ExecutionNameAndContextObject) {
	define("ctx", json::parse(R"({
	  "StartAt": "A",
	  "States": {"A": {"Type": "Pass", "Parameters": {"name.$": "$$.Execution.Name", "input.$": "$$.Execution.Input",
	              "machine.$": "$$.StateMachine.Id", "state.$": "$$.State.Name"}, "End": true}}})"));
	int64_t id = start("ctx", {{"k", 1}}, {{"name", "run-1"}});
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"name": "run-1", "input": {"k": 1}, "machine": "ctx:1", "state": "A"})"));
	EXPECT_EQ(instance(id).at("name"), "run-1");
}

// A Map item's step after its task (a child with a scope) reads the
// context of the execution it was fanned out of: the Map's instance (its
// id, name, start and input), the state machine, a fresh token per step
// (the engine's ask: engine/ask.cpp); a top-level step's Execution.Id is
// its own, and its name the id when none was given.
TEST_P(StoreTest, ContextOfAMapItemIsItsExecutions) {
	define("ctxmap", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","End":true,
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:x","Next":"P"},
	    "P":{"Type":"Pass","End":true,"Parameters":{"id.$":"$$.Execution.Id","name.$":"$$.Execution.Name",
	      "input.$":"$$.Execution.Input","start.$":"$$.Execution.StartTime","machine.$":"$$.StateMachine.Id",
	      "token.$":"$$.Task.Token","state.$":"$$.State.Name"}}}}}}})"));
	worker("w1");
	at(1.5);
	const int64_t id = start("ctxmap", json::array({7}), {{"name", "run-m"}});
	at(3);
	const Task t = claim_one("w1");
	EXPECT_NE(t.instance_id, id);
	store().complete(t.instance_id, t.epoch, json::object());
	ASSERT_EQ(status(id), "succeeded");
	const json out = instance(id).at("output");
	ASSERT_TRUE(out.is_array() && out.size() == 1u) << out.dump();
	const json &item = out[0];
	EXPECT_EQ(item.at("id"), std::to_string(id));
	EXPECT_EQ(item.at("name"), "run-m");
	EXPECT_EQ(item.at("input"), json::array({7}));
	EXPECT_EQ(item.at("start"), time_at(1.5));
	EXPECT_EQ(item.at("machine"), "ctxmap:1");
	EXPECT_EQ(item.at("state"), "P");
	ASSERT_TRUE(item.at("token").is_string());
	EXPECT_GE(item.at("token").get<std::string>().size(), 32u);

	define("ctxtop", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,
	  "Parameters":{"id.$":"$$.Execution.Id","name.$":"$$.Execution.Name","start.$":"$$.Execution.StartTime"}}}})"));
	const int64_t top = start("ctxtop", json::object());
	EXPECT_EQ(instance(top).at("output"),
			  (json{{"id", std::to_string(top)}, {"name", std::to_string(top)}, {"start", time_at(3)}}));
}

namespace {
// A Choice with one rule per branch; each branch ends in a Pass that names it.
json choice_def() {
	return json::parse(R"({
	  "StartAt": "C",
	  "States": {
	    "C": {"Type": "Choice", "Default": "other", "Choices": [
	      {"Variable": "$.s", "StringEquals": "exact", "Next": "string_equals"},
	      {"Variable": "$.s", "StringMatches": "log-*.txt", "Next": "string_matches"},
	      {"Variable": "$.s", "StringLessThan": "b", "Next": "string_less"},
	      {"Variable": "$.n", "NumericEquals": 10, "Next": "numeric_equals"},
	      {"Variable": "$.n", "NumericGreaterThanEqualsPath": "$.limit", "Next": "numeric_ge_path"},
	      {"And": [{"Variable": "$.n", "NumericGreaterThan": 0}, {"Variable": "$.n", "NumericLessThan": 5}],
	       "Next": "and"},
	      {"Or": [{"Variable": "$.b", "BooleanEquals": true}, {"Variable": "$.flag", "IsNull": true}], "Next": "or"},
	      {"Not": {"Variable": "$.present", "IsPresent": false}, "Next": "not_present"},
	      {"Variable": "$.t", "TimestampLessThan": "2030-01-01T00:00:00Z", "Next": "timestamp_before"},
	      {"Variable": "$.v", "IsNumeric": true, "Next": "is_numeric"},
	      {"Variable": "$.v", "IsString": true, "Next": "is_string"}
	    ]},
	    "string_equals": {"Type": "Pass", "Result": "string_equals", "End": true},
	    "string_matches": {"Type": "Pass", "Result": "string_matches", "End": true},
	    "string_less": {"Type": "Pass", "Result": "string_less", "End": true},
	    "numeric_equals": {"Type": "Pass", "Result": "numeric_equals", "End": true},
	    "numeric_ge_path": {"Type": "Pass", "Result": "numeric_ge_path", "End": true},
	    "and": {"Type": "Pass", "Result": "and", "End": true},
	    "or": {"Type": "Pass", "Result": "or", "End": true},
	    "not_present": {"Type": "Pass", "Result": "not_present", "End": true},
	    "timestamp_before": {"Type": "Pass", "Result": "timestamp_before", "End": true},
	    "is_numeric": {"Type": "Pass", "Result": "is_numeric", "End": true},
	    "is_string": {"Type": "Pass", "Result": "is_string", "End": true},
	    "other": {"Type": "Pass", "Result": "other", "End": true}
	  }})");
}
}  // namespace

TEST_P(StoreTest, ChoiceOperatorsPickTheFirstMatchingRule) {
	define("choice", choice_def());
	// Every variable a rule reads is present (a missing one is
	// States.Runtime), with a value no rule matches; each case changes some.
	const json base = json::parse(
		R"({"s": "zzz", "n": -1, "limit": 1000, "b": false, "flag": "x", "t": "2031-01-01T00:00:00Z", "v": [1]})");
	const std::pair<const char *, const char *> cases[] = {
		{R"({})", "other"},
		{R"({"s": "exact"})", "string_equals"},
		{R"({"s": "log-2030.txt"})", "string_matches"},
		{R"({"s": "log-2030.csv"})", "other"},
		{R"({"s": "a"})", "string_less"},
		{R"({"n": 10})", "numeric_equals"},
		{R"({"n": 50, "limit": 50})", "numeric_ge_path"},
		{R"({"n": 3})", "and"},
		{R"({"b": true})", "or"},
		{R"({"flag": null})", "or"},
		{R"({"present": 1})", "not_present"},
		{R"({"t": "2029-12-31T23:59:59Z"})", "timestamp_before"},
		{R"({"v": 1.5})", "is_numeric"},
		{R"({"v": "x"})", "is_string"},
	};
	for (auto &[change, branch] : cases) {
		SCOPED_TRACE(change);
		json input = base;
		input.update(json::parse(change));
		int64_t id = start("choice", input);
		json inst = instance(id);
		EXPECT_EQ(inst.at("status"), "succeeded") << inst.dump();
		EXPECT_EQ(inst.at("output"), branch);
	}
}

TEST_P(StoreTest, NoChoiceMatchedWithoutDefaultFails) {
	define("nodefault", json::parse(R"({
	  "StartAt": "C",
	  "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "NumericEquals": 1, "Next": "D"}]},
	             "D": {"Type": "Succeed"}}})"));
	auto r = store().start("nodefault", {{"x", 2}}, json::object());
	EXPECT_EQ(r.status, "failed");
	EXPECT_EQ(instance(r.instance_id).at("error"), "States.NoChoiceMatched");
	EXPECT_EQ(status(start("nodefault", {{"x", 1}})), "succeeded");
}

TEST_P(StoreTest, ChoiceOnAMissingVariableFailsWithRuntime) {
	// As in Step Functions: a rule that cannot be evaluated fails the instance
	// (uncatchable States.Runtime) instead of taking the Default branch; an
	// IsPresent guard inside an And keeps the comparison from running.
	define("missing_var", json::parse(R"({
	  "StartAt": "C",
	  "States": {"C": {"Type": "Choice", "Default": "D",
	                   "Choices": [{"And": [{"Variable": "$.guarded", "IsPresent": true},
	                                        {"Variable": "$.guarded", "NumericEquals": 1}], "Next": "D"},
	                               {"Variable": "$.x", "NumericEquals": 1, "Next": "D"}]},
	             "D": {"Type": "Succeed"}}})"));
	auto r = store().start("missing_var", {{"y", 1}}, json::object());
	EXPECT_EQ(r.status, "failed");
	json inst = instance(r.instance_id);
	EXPECT_EQ(inst.at("error"), "States.Runtime");
	EXPECT_NE(inst.at("cause").get<std::string>().find("$.x"), std::string::npos) << inst.dump();
	EXPECT_EQ(status(start("missing_var", {{"x", 2}})), "succeeded");
}

TEST_P(StoreTest, FailStateWithErrorAndCause) {
	define("fail", json::parse(R"({
	  "StartAt": "F",
	  "States": {"F": {"Type": "Fail", "ErrorPath": "$.code", "Cause": "it broke"}}})"));
	auto r = store().start("fail", {{"code", "Order.Invalid"}}, json::object());
	EXPECT_EQ(r.status, "failed");
	json inst = instance(r.instance_id);
	EXPECT_EQ(inst.at("error"), "Order.Invalid");
	EXPECT_EQ(inst.at("cause"), "it broke");
	EXPECT_FALSE(inst.at("ended_at").is_null());
}

TEST_P(StoreTest, WaitSecondsFiresOnTickAtItsTime) {
	define("wait", json::parse(R"({
	  "StartAt": "W",
	  "States": {"W": {"Type": "Wait", "Seconds": 10, "Next": "Done"},
	             "Done": {"Type": "Pass", "Result": "woke", "End": true}}})"));
	auto r = store().start("wait", json::object(), json::object());
	EXPECT_EQ(r.status, "waiting");
	EXPECT_EQ(instance(r.instance_id).at("wait_kind"), "timer");
	EXPECT_EQ(instance(r.instance_id).at("wait_until"), time_at(10));

	at(9.999);
	EXPECT_EQ(store().tick(100).at("timers"), 0);
	EXPECT_EQ(status(r.instance_id), "waiting");

	at(10);
	EXPECT_EQ(store().tick(100).at("timers"), 1);
	EXPECT_EQ(status(r.instance_id), "succeeded");
	EXPECT_EQ(instance(r.instance_id).at("output"), "woke");
	EXPECT_EQ(store().tick(100).at("timers"), 0);
}

TEST_P(StoreTest, WaitTimestampPathAndSecondsPath) {
	define("waitpath", json::parse(R"({
	  "StartAt": "W1",
	  "States": {"W1": {"Type": "Wait", "TimestampPath": "$.until", "Next": "W2"},
	             "W2": {"Type": "Wait", "SecondsPath": "$.pause", "End": true}}})"));
	int64_t id = start("waitpath", {{"until", "2030-01-01T00:01:00Z"}, {"pause", 5}});
	EXPECT_EQ(instance(id).at("wait_until"), time_at(60));
	at(60);
	store().tick(100);
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(instance(id).at("wait_until"), time_at(65));
	at(65);
	store().tick(100);
	EXPECT_EQ(status(id), "succeeded");
	// A Wait whose time has already come runs inline.
	int64_t past = start("waitpath", {{"until", "2029-01-01T00:00:00Z"}, {"pause", 0}});
	EXPECT_EQ(status(past), "succeeded");
}

TEST_P(StoreTest, TickLimitBoundsEachKind) {
	define("wait1", json::parse(R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}})"));
	for (int i = 0; i < 3; i++) start("wait1");
	at(1);
	EXPECT_EQ(store().tick(2).at("timers"), 2);
	EXPECT_EQ(store().tick(2).at("timers"), 1);
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not 0", store().tick(0));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not -3", store().tick(-3));
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// The rest of the comparison family: the ...Path forms, the other
// orderings, and the type tests not covered above.
TEST_P(StoreTest, ChoiceComparisonFamilies) {
	define("choice2", json::parse(R"({
	  "StartAt": "C",
	  "States": {
	    "C": {"Type": "Choice", "Default": "none", "Choices": [
	      {"Variable": "$.a", "StringEqualsPath": "$.b", "Next": "string_equals_path"},
	      {"Variable": "$.a", "StringGreaterThanEquals": "m", "Next": "string_ge"},
	      {"Variable": "$.n", "NumericLessThanEquals": 0, "Next": "numeric_le"},
	      {"Variable": "$.n", "NumericLessThanPath": "$.m", "Next": "numeric_lt_path"},
	      {"Variable": "$.flag", "BooleanEqualsPath": "$.want", "Next": "boolean_equals_path"},
	      {"Variable": "$.t", "TimestampEquals": "2030-06-01T12:00:00Z", "Next": "timestamp_equals"},
	      {"Variable": "$.t", "TimestampGreaterThanEqualsPath": "$.since", "Next": "timestamp_ge_path"},
	      {"Variable": "$.t", "IsTimestamp": false, "Next": "not_a_timestamp"},
	      {"Variable": "$.flag", "IsBoolean": false, "Next": "flag_not_boolean"}
	    ]},
	    "string_equals_path": {"Type": "Succeed"}, "string_ge": {"Type": "Succeed"},
	    "numeric_le": {"Type": "Succeed"}, "numeric_lt_path": {"Type": "Succeed"},
	    "boolean_equals_path": {"Type": "Succeed"}, "timestamp_equals": {"Type": "Succeed"},
	    "timestamp_ge_path": {"Type": "Succeed"}, "not_a_timestamp": {"Type": "Succeed"},
	    "flag_not_boolean": {"Type": "Succeed"}, "none": {"Type": "Succeed"}
	  }})"));
	const json base = json::parse(
		R"({"a": "c", "b": "d", "n": 5, "m": 1, "flag": true, "want": false, "t": "2030-01-01T00:00:00Z", "since": "2031-01-01T00:00:00Z"})");
	const std::pair<const char *, const char *> cases[] = {
		{R"({})", "none"},
		{R"({"b": "c"})", "string_equals_path"},
		{R"({"a": "m"})", "string_ge"},
		{R"({"n": 0})", "numeric_le"},
		{R"({"m": 6})", "numeric_lt_path"},
		{R"({"want": true})", "boolean_equals_path"},
		{R"({"t": "2030-06-01T12:00:00Z"})", "timestamp_equals"},
		{R"({"since": "2029-01-01T00:00:00Z"})", "timestamp_ge_path"},
		{R"({"t": "yesterday"})", "not_a_timestamp"},
		{R"({"flag": "yes", "want": "yes"})", "flag_not_boolean"},
	};
	for (auto &[change, branch] : cases) {
		SCOPED_TRACE(change);
		json input = base;
		input.update(json::parse(change));
		int64_t id = start("choice2", input);
		EXPECT_EQ(status(id), "succeeded");
		EXPECT_EQ(instance(id).at("state"), branch);
	}
}

TEST_P(StoreTest, IntrinsicFunctionsAndSucceedOutputPath) {
	define("fmt", json::parse(R"J({
	  "StartAt": "F",
	  "States": {
	    "F": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('hello {}', $.who)",
	                                         "n.$": "States.ArrayLength($.items)"}, "Next": "S"},
	    "S": {"Type": "Succeed", "OutputPath": "$.greeting"}
	  }})J"));
	int64_t id = start("fmt", {{"who", "world"}, {"items", {1, 2, 3}}});
	EXPECT_EQ(instance(id).at("output"), "hello world");
	// A runtime fault in an intrinsic is an instance failure, not an API error.
	auto r = store().start("fmt", {{"who", "x"}, {"items", "not an array"}}, json::object());
	EXPECT_EQ(r.status, "failed");
	EXPECT_EQ(instance(r.instance_id).at("error"), "States.IntrinsicFailure");
}

// AWS's recorded answers where genroc used to differ: MathAdd rounds each
// argument first, StringToJson of a blank string is null, JSONPath unions
// select in the order given, and Task Credentials load.
TEST_P(StoreTest, AwsAnswersForMathAddStringToJsonAndUnions) {
	define("aws", json::parse(R"J({
	  "StartAt": "P",
	  "States": {
	    "P": {"Type": "Pass", "Parameters": {
	            "a.$": "States.MathAdd($.x, 0)", "b.$": "States.MathAdd(-0.5, 0.5)",
	            "c.$": "States.StringToJson($.blank)", "d.$": "$.list[2,0]",
	            "e.$": "$['x','blank']"}, "End": true}
	  }})J"));
	int64_t id = start("aws", {{"x", -2.5}, {"blank", "  "}, {"list", {"p", "q", "r"}}});
	EXPECT_EQ(instance(id).at("status"), "succeeded");
	EXPECT_EQ(instance(id).at("output"),
			  json::parse(R"({"a":-2,"b":1,"c":null,"d":["r","p"],"e":[-2.5,"  "]})"));
	define("creds", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h",
	  "End":true,"Credentials":{"RoleArn.$":"$.role"}}}})"));
}

// AWS's recorded answers for JSONPath: a script expression (@.length - 1)
// in an OutputPath, States.Format of an object and of an array (their JSON
// text), and a bracketed name with escaped quotes.
TEST_P(StoreTest, AwsAnswersForScriptIndexFormatOfObjectsAndEscapedQuotes) {
	define("awspath", json::parse(R"J({
	  "StartAt": "F",
	  "States": {
	    "F": {"Type": "Pass", "Parameters": {
	            "obj.$": "States.Format('o={}', $.o)", "arr.$": "States.Format('a={}', $.list)",
	            "q.$": "$['Test\\\\\"\\\"Name\\\"']", "list.$": "$.list"},
	          "OutputPath": "$.list[(@.length-1)].bar", "Next": "G"},
	    "G": {"Type": "Pass", "InputPath": "$", "End": true}
	  }})J"));
	int64_t id = start("awspath", json::parse(R"J({"o": {"k": [1, "x"]}, "list": [{"bar": 1}, {"bar": 2}],
	                                               "Test\\\"\"Name\"": "quoted"})J"));
	EXPECT_EQ(instance(id).at("status"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), 2);
	define("awsfmt", json::parse(R"J({
	  "StartAt": "F",
	  "States": {"F": {"Type": "Pass", "Parameters": {
	            "obj.$": "States.Format('o={}', $.o)", "arr.$": "States.Format('a={}', $.list)",
	            "q.$": "$['Test\\\\\"\\\"Name\\\"']"}, "End": true}}})J"));
	id = start("awsfmt", json::parse(R"J({"o": {"k": [1, "x"]}, "list": [{"bar": 1}, {"bar": 2}],
	                                     "Test\\\"\"Name\"": "quoted"})J"));
	EXPECT_EQ(instance(id).at("status"), "succeeded");
	EXPECT_EQ(instance(id).at("output"),
			  json::parse(R"J({"obj": "o={\"k\":[1,\"x\"]}", "arr": "a=[{\"bar\":1},{\"bar\":2}]", "q": "quoted"})J"));
}

// JSONata's joins and parents in an ASL state: the focus (@) and index (#)
// bindings join two arrays of the input, the parent operator (%) reads the
// order of each product.
TEST_P(StoreTest, JsonataFocusIndexAndParentInAState) {
	define("joins", json::parse(R"J({"QueryLanguage": "JSONata", "StartAt": "J", "States": {
	  "J": {"Type": "Pass", "Output": {
	          "loans": "{% $states.input.loans@$l.books@$b[$l.isbn = $b.isbn]#$i.{'title': $b.title, 'who': $l.customer, 'i': $i} %}",
	          "orders": "{% $states.input.orders.items.{'sku': sku, 'order': %.id} %}"},
	        "End": true}}})J"));
	int64_t id = start("joins", json::parse(R"J({
	  "loans": [{"customer": "ann", "isbn": "2"}, {"customer": "bob", "isbn": "1"}],
	  "books": [{"isbn": "1", "title": "One"}, {"isbn": "2", "title": "Two"}],
	  "orders": [{"id": "o1", "items": [{"sku": "a"}, {"sku": "b"}]}, {"id": "o2", "items": [{"sku": "c"}]}]})J"));
	EXPECT_EQ(instance(id).at("status"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"J({
	  "loans": [{"title": "Two", "who": "ann", "i": 0}, {"title": "One", "who": "bob", "i": 1}],
	  "orders": [{"sku": "a", "order": "o1"}, {"sku": "b", "order": "o1"}, {"sku": "c", "order": "o2"}]})J"));
}

// Both stores show the same fields (not only the same values for the fields
// a test happens to read).
TEST_P(StoreTest, ResultShapesAreTheSameOnBothStores) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	int64_t id = start("job");
	auto keys = [](const json &o) {
		std::vector<std::string> k;
		for (auto &[key, v] : o.items()) k.push_back(key);
		return k;
	};
	EXPECT_EQ(keys(instance(id)),
			  (std::vector<std::string>{"activity", "attempt", "cause", "child_index", "created_at", "definition",
										"eligible_at", "ended_at", "error", "id", "idempotency_key", "input",
										"interruptions", "labels", "lease_epoch", "lease_expires", "lease_owner", "name",
										"output", "parent_id", "partition_key", "priority", "queue", "resource",
										"root_id", "scope", "state", "status", "task_input", "updated_at", "variables", "version",
										"wait_kind", "wait_until"}));
	EXPECT_EQ(keys(store().history(id).at(0)), (std::vector<std::string>{"at", "detail", "event", "seq", "state"}));
	EXPECT_EQ(keys(store().list_workers().at(0)),
			  (std::vector<std::string>{"concurrency", "draining", "durability", "heartbeat_at", "host",
										"lease_duration_ms", "live", "queues", "running", "stale_after_ms", "started_at",
										"stopped_at", "worker"}));
	EXPECT_EQ(keys(store().list_definitions().at(0)), (std::vector<std::string>{"created_at", "name", "version"}));
	EXPECT_EQ(keys(store().tick(10)),
			  (std::vector<std::string>{"collected_objects", "heartbeats", "lapsed", "pruned_instances", "pruned_log_rows",
										"run_at", "timeouts", "timers"}));
	EXPECT_EQ(keys(store().prune(0, 0, 10)), (std::vector<std::string>{"instances", "log_rows", "objects"}));
	EXPECT_EQ(store().now(), time_at(0));
	EXPECT_EQ(store().list_workers().at(0).at("queues"), json::array({"default"}));
	EXPECT_TRUE(store().ping());
}

}  // namespace genroc::conformance

namespace genroc::conformance {

TEST_P(StoreTest, WaitTimestampThenFailWithCausePath) {
	define("deadline", json::parse(R"({
	  "StartAt": "Until",
	  "States": {
	    "Until": {"Type": "Wait", "Timestamp": "2030-01-01T00:00:30.500Z", "Next": "Give up"},
	    "Give up": {"Type": "Fail", "Error": "Deadline", "CausePath": "$.why"}
	  }})"));
	int64_t id = start("deadline", {{"why", "nobody came"}});
	EXPECT_EQ(instance(id).at("wait_until"), time_at(30.5));
	at(30.499);
	EXPECT_EQ(store().tick(10).at("timers"), 0);
	at(30.5);
	EXPECT_EQ(store().tick(10).at("timers"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "failed");
	EXPECT_EQ(inst.at("state"), "Give up");
	EXPECT_EQ(inst.at("error"), "Deadline");
	EXPECT_EQ(inst.at("cause"), "nobody came");
	EXPECT_EQ(inst.at("ended_at"), time_at(30.5));
}

}  // namespace genroc::conformance
