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
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "", store().tick(0));
}

}  // namespace genroc::conformance
