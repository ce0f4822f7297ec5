// asl_context_test.cpp — reads_context(): which definitions may read the
// context object $$, and that a step of one that cannot gives the same
// answer with the request's "context" left out (what the stores rely on
// when they leave it out).

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

bool reads(const std::string &definition) { return asl::reads_context(*asl::compile(J(definition))); }

// A one-state JSONPath machine "A" whose state body is `body`.
std::string plain_one(const std::string &body) { return R"j({"StartAt":"A","States":{"A":)j" + body + "}}"; }

// The same in a JSONata machine.
std::string one_jsonata(const std::string &body) {
	return R"j({"QueryLanguage":"JSONata","StartAt":"A","States":{"A":)j" + body + "}}";
}

// A context as a store writes it.
json a_context() {
	return J(R"j({"Execution":{"Id":"7","Name":"seven","StartTime":"2026-12-04T10:00:00.000Z",
	               "Input":{"n":1}},"StateMachine":{"Id":"d:1","Name":"d"},
	             "Task":{"Token":"00000000-0000-4000-8000-000000000000"}})j");
}

}  // namespace

TEST(ReadsContext, NoContextPathMeansNo) {
	EXPECT_FALSE(reads(plain_one(R"j({"Type":"Task","Resource":"handler:h","End":true})j")));
	EXPECT_FALSE(reads(plain_one(R"j({"Type":"Pass","Parameters":{"x.$":"$.a","f.$":"States.Format('{}', $.b)"},
	                           "ResultPath":"$.r","End":true})j")));
	EXPECT_FALSE(reads(one_jsonata(R"j({"Type":"Pass","Output":{"n":"{% $states.input.n + 1 %}"},"End":true})j")));
	EXPECT_FALSE(reads(one_jsonata(
		R"j({"Type":"Task","Resource":"handler:h","Output":"{% $states . result %}",
		    "Catch":[{"ErrorEquals":["States.ALL"],"Output":"{% $states.errorOutput %}","Next":"B"}],"Next":"B"},
		  "B":{"Type":"Succeed"})j")));
}

TEST(ReadsContext, AnyContextPathOrAnOpenStatesMeansYes) {
	// JSONPath's $$, in a template, an intrinsic's argument, a path field
	EXPECT_TRUE(reads(plain_one(R"j({"Type":"Pass","Parameters":{"id.$":"$$.Execution.Id"},"End":true})j")));
	EXPECT_TRUE(reads(plain_one(R"j({"Type":"Pass","Parameters":{"f.$":"States.Format('{}', $$.Execution.Name)"},"End":true})j")));
	EXPECT_TRUE(reads(plain_one(R"j({"Type":"Task","Resource":"handler:h","InputPath":"$$.Execution.Input","End":true})j")));
	// a Map's item context, a state nested in a branch
	EXPECT_TRUE(reads(plain_one(R"j({"Type":"Map","ItemSelector":{"v.$":"$$.Map.Item.Value"},
	  "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true})j")));
	EXPECT_TRUE(reads(plain_one(R"j({"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass",
	  "Parameters":{"t.$":"$$.State.EnteredTime"},"End":true}}}],"End":true})j")));
	// JSONata: $states.context, with blanks, and $states reached otherwise
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $states.context.Execution.Id %}","End":true})j")));
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $states . context %}","End":true})j")));
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $lookup($states, 'context') %}","End":true})j")));
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $states %}","End":true})j")));
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $states.`context` %}","End":true})j")));
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $states.input ~> $keys() & $states[0] %}","End":true})j")));
	// JSONata's own $$ (its root) is taken as a read, to be safe
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Output":"{% $$.n %}","End":true})j")));
	// an Assign that keeps it in a variable
	EXPECT_TRUE(reads(one_jsonata(R"j({"Type":"Pass","Assign":{"c":"{% $states.context %}"},"End":true})j")));
}

// For definitions that cannot read it, every step answers the same with
// and without the context: a start through several inline states, a
// task's success and failure (Retry, Catch), a Choice, a Wait, a Map.
TEST(ReadsContext, StepsOfADefinitionThatCannotReadItAnswerTheSameWithout) {
	const std::string defs[] = {
		R"j({"StartAt":"P","States":{
		  "P":{"Type":"Pass","Parameters":{"x.$":"$.a","f.$":"States.Format('{}-{}', $.a, States.MathAdd(1, 2))"},
		       "ResultPath":"$.p","Next":"C"},
		  "C":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericGreaterThan":1,"Next":"T"}],"Default":"W"},
		  "W":{"Type":"Wait","Seconds":5,"Next":"T"},
		  "T":{"Type":"Task","Resource":"handler:h","TimeoutSeconds":30,
		       "Retry":[{"ErrorEquals":["E"],"IntervalSeconds":1,"MaxAttempts":2}],
		       "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"M"}],
		       "ResultSelector":{"r.$":"$.r"},"ResultPath":"$.t","Next":"M"},
		  "M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},
		       "End":true}}})j",
		R"j({"QueryLanguage":"JSONata","StartAt":"A","States":{
		  "A":{"Type":"Pass","Assign":{"k":"{% $states.input.a * 2 %}"},"Output":"{% $states.input %}","Next":"T"},
		  "T":{"Type":"Task","Resource":"handler:h","Arguments":{"k":"{% $k %}","now":"{% $millis() > 0 %}"},
		       "Output":"{% $merge([$states.input, {'t': $states.result}]) %}",
		       "Catch":[{"ErrorEquals":["States.ALL"],"Output":"{% $states.errorOutput %}","Next":"E"}],"Next":"E"},
		  "E":{"Type":"Succeed"}}})j",
	};
	const json input = J(R"j({"a":2,"items":[1,2]})j");
	for (const auto &text : defs) {
		const json def = J(text);
		auto d = asl::compile(def);
		ASSERT_FALSE(asl::reads_context(*d)) << text;
		const std::string task = "T";	// the task state of both
		const json requests[] = {
			{{"op", "start"}, {"input", input}},
			{{"op", "task_succeeded"}, {"state", task}, {"state_input", input}, {"result", {{"r", 5}}}},
			{{"op", "task_failed"}, {"state", task}, {"state_input", input}, {"error", "E"}, {"cause", "c"}},
			{{"op", "task_failed"}, {"state", task}, {"state_input", input}, {"error", "X"}, {"cause", "c"}},
		};
		for (json request : requests) {
			request["now_ms"] = 1'000'000;
			const json without = asl::step(*d, request);
			request["context"] = a_context();
			EXPECT_EQ(asl::step(*d, request), without) << text << "\n" << request.dump();
		}
	}
}

// The comparison above can tell: a definition that reads it answers
// differently without it.
TEST(ReadsContext, ADefinitionThatReadsItAnswersDifferentlyWithout) {
	auto d = asl::compile(J(plain_one(R"j({"Type":"Pass","Parameters":{"id.$":"$$.Execution.Id"},"End":true})j")));
	ASSERT_TRUE(asl::reads_context(*d));
	json request = {{"op", "start"}, {"input", json::object()}, {"now_ms", 1'000'000}};
	const json without = asl::step(*d, request);
	request["context"] = a_context();
	EXPECT_NE(asl::step(*d, request), without);
}

// reads_execution_input: the same walk, narrower rule (what a store fetches
// from an ancestor's row for a branch or item).
TEST(ReadsContext, ExecutionInputOnlyForAContextPathOtherThanMapStateMachineStateTask) {
	auto input = [](const std::string &definition) {
		return asl::reads_execution_input(*asl::compile(J(definition)));
	};
	EXPECT_FALSE(input(plain_one(R"j({"Type":"Task","Resource":"handler:h","End":true})j")));
	EXPECT_TRUE(input(plain_one(R"j({"Type":"Pass","Parameters":{"i.$":"$$.Execution.Input"},"End":true})j")));
	EXPECT_TRUE(input(plain_one(R"j({"Type":"Pass","Parameters":{"i.$":"$$"},"End":true})j")));
	EXPECT_FALSE(input(plain_one(R"j({"Type":"Map","ItemSelector":{"v.$":"$$.Map.Item.Value"},
	  "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Parameters":{"t.$":"$$.Task.Token",
	  "s.$":"$$.State.Name","m.$":"$$.StateMachine.Id"},"End":true}}},"End":true})j")));
	EXPECT_TRUE(input(one_jsonata(R"j({"Type":"Pass","Output":"{% $states.context.Execution.Input %}","End":true})j")));
	EXPECT_FALSE(input(one_jsonata(R"j({"Type":"Pass","Output":"{% $states.context.Task.Token %}","End":true})j")));
}
