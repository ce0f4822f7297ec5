// asl_trace_test.cpp — step()'s "single" and "trace" members: one state run
// alone (the outcome "next"), and the values each processing stage computed
// (TestState's inspection data, a history's state input and output).

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

json traced(const json &def, json request) {
	request["trace"] = true;
	return run(def, std::move(request));
}

}  // namespace

TEST(Trace, PassStagesAndTheNextStateWhenSingle) {
	const json def = machine(R"({"A":{"Type":"Pass","InputPath":"$.in","Parameters":{"v.$":"$.x"},
	  "ResultPath":"$.r","OutputPath":"$.r","Next":"B"},"B":{"Type":"Succeed"}})");
	auto a = traced(def, {{"op", "enter"}, {"state", "A"}, {"state_input", J(R"({"in":{"x":7}})")},
						  {"single", true}});
	EXPECT_EQ(outcome(a), J(R"({"kind":"next","state":"B","output":{"v":7}})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"A","type":"Pass"}])"));
	ASSERT_EQ(a["trace"].size(), 1u);
	EXPECT_EQ(a["trace"][0], J(R"({"state":"A","type":"Pass","input":{"in":{"x":7}},
	  "afterInputPath":{"x":7},"afterParameters":{"v":7},"result":{"v":7},
	  "afterResultPath":{"in":{"x":7},"r":{"v":7}},"output":{"v":7}})"));
}

TEST(Trace, WithoutSingleTheStepGoesOnAndTracesEveryState) {
	const json def = machine(R"({"A":{"Type":"Pass","Result":1,"Next":"B"},
	  "B":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":1,"Next":"C"}]},
	  "C":{"Type":"Succeed"}})");
	auto a = traced(def, {{"op", "start"}, {"input", json::object()}});
	EXPECT_EQ(outcome(a)["kind"], "succeeded");
	ASSERT_EQ(a["trace"].size(), 3u);
	EXPECT_EQ(a["trace"][0]["output"], 1);
	EXPECT_EQ(a["trace"][1]["input"], 1);
	EXPECT_EQ(a["trace"][1]["output"], 1);
	EXPECT_EQ(a["trace"][2]["state"], "C");
	EXPECT_EQ(a["trace"][2]["output"], 1);
}

TEST(Trace, NoTraceWhenNotAsked) {
	auto a = start(machine(R"({"A":{"Type":"Pass","End":true}})"), J("{}"));
	EXPECT_FALSE(a.contains("trace"));
}

TEST(Trace, ChoiceLeadsToItsRuleWhenSingle) {
	const json def = machine(R"({"A":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericGreaterThan":5,
	  "Next":"Big"}],"Default":"Small"},"Big":{"Type":"Succeed"},"Small":{"Type":"Succeed"}})");
	auto a = traced(def, {{"op", "enter"}, {"state", "A"}, {"state_input", J(R"({"n":9})")}, {"single", true}});
	EXPECT_EQ(outcome(a), J(R"({"kind":"next","state":"Big","output":{"n":9}})"));
}

TEST(Trace, TaskInputThenItsResultThroughSelectorAndPath) {
	const json def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","InputPath":"$.q",
	  "Parameters":{"id.$":"$.id"},"ResultSelector":{"got.$":"$.v"},"ResultPath":"$.out","Next":"B"},
	  "B":{"Type":"Succeed"}})");
	const json in = J(R"({"q":{"id":3}})");
	auto a = traced(def, {{"op", "enter"}, {"state", "A"}, {"state_input", in}, {"single", true}});
	EXPECT_EQ(outcome(a)["kind"], "task");
	EXPECT_EQ(a["trace"][0]["afterInputPath"], J(R"({"id":3})"));
	EXPECT_EQ(a["trace"][0]["afterParameters"], J(R"({"id":3})"));
	auto b = traced(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", in},
						  {"result", J(R"({"v":"x"})")}, {"single", true}});
	EXPECT_EQ(outcome(b), J(R"({"kind":"next","state":"B","output":{"q":{"id":3},"out":{"got":"x"}}})"));
	EXPECT_EQ(b["trace"][0]["result"], J(R"({"v":"x"})"));
	EXPECT_EQ(b["trace"][0]["afterResultSelector"], J(R"({"got":"x"})"));
	EXPECT_EQ(b["trace"][0]["afterResultPath"], J(R"({"q":{"id":3},"out":{"got":"x"}})"));
	EXPECT_FALSE(b["trace"][0].contains("input"));	// entered in an earlier step
}

TEST(Trace, RetryThenCatchAreInTheErrorDetails) {
	const json def = machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	  "Retry":[{"ErrorEquals":["Other"]},{"ErrorEquals":["Boom"],"MaxAttempts":1,"IntervalSeconds":2}],
	  "Catch":[{"ErrorEquals":["Nope"],"Next":"B"},{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"B"}],
	  "End":true},"B":{"Type":"Pass","End":true}})");
	const json req = {{"op", "task_failed"}, {"state", "A"}, {"state_input", J("{}")}, {"error", "Boom"},
					  {"cause", "why"}, {"single", true}};
	auto a = traced(def, req);
	EXPECT_EQ(outcome(a)["kind"], "task");
	EXPECT_EQ(a["trace"][0]["errorDetails"], J(R"({"retryIndex":1,"retryBackoffIntervalSeconds":2})"));
	json again = req;
	again["retry_counts"] = {0, 1};
	auto b = traced(def, again);
	EXPECT_EQ(outcome(b), J(R"({"kind":"next","state":"B","output":{"err":{"Error":"Boom","Cause":"why"}}})"));
	EXPECT_EQ(b["trace"][0]["errorDetails"], J(R"({"catchIndex":1})"));
}

TEST(Trace, JsonataArgumentsAndOutput) {
	const json def = J(R"({"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Task",
	  "Resource":"handler:h","Arguments":{"n":"{% $states.input.n + 1 %}"},
	  "Output":"{% $states.result.v * 2 %}","End":true}}})");
	auto a = traced(def, {{"op", "enter"}, {"state", "A"}, {"state_input", J(R"({"n":1})")}, {"single", true}});
	EXPECT_EQ(a["trace"][0]["afterArguments"], J(R"({"n":2})"));
	auto b = traced(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", J(R"({"n":1})")},
						  {"result", J(R"({"v":5})")}, {"single", true}});
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":10})"));
	EXPECT_EQ(b["trace"][0]["output"], 10);
}

TEST(Trace, MapItemsPathAndSelector) {
	const json def = machine(R"({"A":{"Type":"Map","ItemsPath":"$.xs","ItemSelector":{"i.$":"$$.Map.Item.Index",
	  "v.$":"$$.Map.Item.Value"},"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},
	  "End":true}})");
	auto a = traced(def, {{"op", "enter"}, {"state", "A"}, {"state_input", J(R"({"xs":["a","b"]})")}});
	EXPECT_EQ(outcome(a)["kind"], "map");
	EXPECT_EQ(a["trace"][0]["afterItemsPath"], J(R"(["a","b"])"));
	EXPECT_EQ(a["trace"][0]["afterItemSelector"], J(R"([{"i":0,"v":"a"},{"i":1,"v":"b"}])"));
}

TEST(Trace, ABadFlagIsRefused) {
	const json def = machine(R"({"A":{"Type":"Pass","End":true}})");
	try {
		run(def, {{"op", "start"}, {"single", "yes"}});
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "22023");
		EXPECT_NE(std::string(e.what()).find("\"single\""), std::string::npos);
	}
}
