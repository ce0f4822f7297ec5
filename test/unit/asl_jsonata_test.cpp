// asl_jsonata_test.cpp — JSONata states and variables in the interpreter:
// QueryLanguage at the top and per state, Arguments / Output / Assign /
// Condition / Items, {% %} in the fields that take one, $states, the
// JSONPath fields a JSONata state refuses, States.QueryEvaluationError
// through Retry and Catch; Assign in both languages with AWS's scoping and
// evaluation order, and its limits.

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

json jsonata_machine(const std::string &states) {
	return J(R"({"QueryLanguage":"JSONata","StartAt":"A","States":)" + states + "}");
}

json with_vars(json request, const json &vars) {
	request["variables"] = vars;
	return request;
}

}  // namespace

// ------------------------------------------------------------------ compile

TEST(JsonataCompile, AcceptsAJsonataMachineAndJsonataStatesInAJsonPathOne) {
	EXPECT_EQ(compile_error(jsonata_machine(
				  R"({"A":{"Type":"Pass","Output":{"n":"{% $states.input.n + 1 %}"},"End":true}})")),
			  "<accepted>");
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Pass","QueryLanguage":"JSONata",
	                                  "Output":"{% $states.input %}","Next":"B"},
	                              "B":{"Type":"Pass","InputPath":"$.x","End":true}})")),
			  "<accepted>");
}

TEST(JsonataCompile, AJsonataMachineRefusesAJsonPathState) {
	EXPECT_EQ(compile_error(jsonata_machine(
				  R"({"A":{"Type":"Pass","QueryLanguage":"JSONPath","End":true}})")),
			  "invalid definition at $.States.A.QueryLanguage: a state of a JSONata state machine "
			  "cannot use JSONPath (make the state machine JSONPath and set JSONata on the states "
			  "that use it)");
	EXPECT_NE(compile_error(J(R"({"QueryLanguage":"XPath","StartAt":"A",
	                              "States":{"A":{"Type":"Succeed"}}})"))
				  .find("must be \"JSONPath\" or \"JSONata\""),
			  std::string::npos);
}

TEST(JsonataCompile, AJsonataStateRefusesEachJsonPathField) {
	const std::pair<const char *, const char *> cases[] = {
		{"Pass", R"("InputPath":"$.a")"},		{"Pass", R"("OutputPath":"$.a")"},
		{"Pass", R"("Parameters":{"a":1})"},	{"Pass", R"("ResultPath":"$.a")"},
		{"Pass", R"("Result":1)"},				{"Task", R"("ResultSelector":{"a":1})"},
		{"Task", R"("TimeoutSecondsPath":"$.t")"}, {"Task", R"("HeartbeatSecondsPath":"$.t")"},
	};
	for (const auto &[type, field] : cases) {
		const std::string name = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
		const std::string res = std::string(type) == "Task" ? R"("Resource":"genroc:noop",)" : "";
		const std::string def = std::string(R"({"A":{"Type":")") + type + R"(",)" + res + field +
								R"(,"End":true}})";
		EXPECT_EQ(compile_error(jsonata_machine(def)),
				  "invalid definition at $.States.A." + name + ": " + name +
					  " is a JSONPath field: a JSONata state uses Arguments, Output, Assign and "
					  "{% %} expressions instead")
			<< def;
	}
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Wait","SecondsPath":"$.s","End":true}})"))
				  .find("$.States.A.SecondsPath: SecondsPath is a JSONPath field"),
			  std::string::npos);
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Fail","ErrorPath":"$.e"}})"))
				  .find("$.States.A.ErrorPath: ErrorPath is a JSONPath field"),
			  std::string::npos);
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Map","ItemsPath":"$.xs",
	    "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"End":true}})"))
				  .find("$.States.A.ItemsPath: ItemsPath is a JSONPath field"),
			  std::string::npos);
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Task","Resource":"genroc:noop",
	    "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.e","Next":"B"}],"End":true},
	    "B":{"Type":"Succeed"}})"))
				  .find("$.States.A.Catch[0].ResultPath: is a JSONPath field"),
			  std::string::npos);
}

TEST(JsonataCompile, AJsonPathStateRefusesTheJsonataFields) {
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Pass","Output":{"a":1},"End":true}})")),
			  "invalid definition at $.States.A.Output: Output is a JSONata field: it needs "
			  "\"QueryLanguage\": \"JSONata\" on the state or the state machine");
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Task","Resource":"genroc:noop",
	                                    "Arguments":{},"End":true}})"))
				  .find("$.States.A.Arguments: Arguments is a JSONata field"),
			  std::string::npos);
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Choice","Choices":[
	    {"Condition":"{% true %}","Next":"B"}]},"B":{"Type":"Succeed"}})"))
				  .find("$.States.A.Choices[0].Condition: is a JSONata field"),
			  std::string::npos);
}

TEST(JsonataCompile, ASyntaxErrorIsRefusedAtDefineTimeWithItsPath) {
	const std::string e = compile_error(
		jsonata_machine(R"({"A":{"Type":"Pass","Output":{"x":["{% 1 + %}"]},"End":true}})"));
	EXPECT_EQ(e.rfind("invalid definition at $.States.A.Output.x[0]: \"{% 1 + %}\" is not a valid "
					  "JSONata expression: ",
					  0),
			  0u)
		<< e;
	EXPECT_NE(e.find("(S0"), std::string::npos) << e;
	// a string that is not wholly {% ... %} is a literal
	EXPECT_EQ(compile_error(jsonata_machine(
				  R"({"A":{"Type":"Pass","Output":{"x":"price {% 1 + %}"},"End":true}})")),
			  "<accepted>");
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Choice","Choices":[
	    {"Condition":"{% ( %}","Next":"B"}]},"B":{"Type":"Succeed"}})"))
				  .find("$.States.A.Choices[0].Condition"),
			  std::string::npos);
	EXPECT_NE(compile_error(jsonata_machine(R"({"A":{"Type":"Choice","Choices":[
	    {"Next":"B"}]},"B":{"Type":"Succeed"}})"))
				  .find("$.States.A.Choices[0].Condition: is required"),
			  std::string::npos);
}

TEST(VariablesCompile, NamesAreCheckedAndStatesIsReserved) {
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{"1x":1},"End":true}})")),
			  "invalid definition at $.States.A.Assign['1x']: \"1x\" is not a valid variable name "
			  "(a letter or _, then letters, digits or _; letters of any script)");
	// Unicode's identifier rule: letters of any script, combining marks,
	// digits after the first; the limit counts characters, not bytes
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{"ça_va":1,"Ωμέγα2":2,"名前":3,"_x":4},
	    "Next":"B"},"B":{"Type":"Pass","Parameters":{"a.$":"$ça_va","b.$":"$Ωμέγα2.x"},"End":true}})")),
			  "<accepted>");
	for (const char *bad : {"x y", "a.b", "€uro", "😀", "x😀", "٣x"})
		EXPECT_NE(compile_error(machine(std::string(R"({"A":{"Type":"Pass","Assign":{")") + bad +
										R"(":1},"End":true}})"))
					  .find("is not a valid variable name"),
				  std::string::npos)
			<< bad;
	// the reading reference paths may start at a variable, ResultPath may not
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Map","ItemsPath":"$xs","MaxConcurrencyPath":"$n",
	    "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}})")),
			  "<accepted>");
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Pass","ResultPath":"$v.x","End":true}})"))
				  .find("must be a reference path ($ and field names"),
			  std::string::npos);
	std::string greek;
	for (int i = 0; i < 80; i++)
		greek += "λ";
	EXPECT_EQ(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{")" + greek + R"(":1},"End":true}})")),
			  "<accepted>");
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{")" + greek + R"(λ":1},"End":true}})"))
				  .find("limit variable_name"),
			  std::string::npos);
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{"states":1},"End":true}})"))
				  .find("\"states\" is reserved"),
			  std::string::npos);
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Pass","Assign":{")" + std::string(81, 'v') +
									R"(":1},"End":true}})"))
				  .find("limit variable_name"),
			  std::string::npos);
	EXPECT_NE(compile_error(jsonata_machine(
				  R"({"A":{"Type":"Pass","Assign":{"x.$":"$.a"},"End":true}})"))
				  .find("a JSONata state's Assign takes {% %} expressions, not .$ fields"),
			  std::string::npos);
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Succeed","Assign":{"x":1}}})"))
				  .find("$.States.A.Assign: unknown field for a Succeed state"),
			  std::string::npos);
}

TEST(VariablesCompile, InnerStatesMayNotAssignAnOuterVariable) {
	const std::string e = compile_error(machine(R"({
	  "A":{"Type":"Pass","Assign":{"total":0},"Next":"M"},
	  "M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"I","States":{
	     "I":{"Type":"Pass","Assign":{"total":1},"End":true}}}}})"));
	EXPECT_EQ(e, "invalid definition at $.States.M.ItemProcessor.States.I.Assign.total: the "
				 "variable \"total\" is assigned at $.States.A.Assign.total, outside this Parallel "
				 "branch or Map item processor: inner states may read the variables around them "
				 "but not assign them");
	// two levels down, and in a catcher
	EXPECT_NE(compile_error(machine(R"({
	  "P":{"Type":"Parallel","End":true,"Assign":{"z.$":"$"},"Branches":[{"StartAt":"M","States":{
	    "M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"T","States":{
	      "T":{"Type":"Task","Resource":"genroc:noop","End":true,
	           "Catch":[{"ErrorEquals":["States.ALL"],"Assign":{"z":1},"Next":"E"}]},
	      "E":{"Type":"Succeed"}}}}}}]},
	  "A":{"Type":"Pass","Next":"P"}})"))
				  .find("the variable \"z\" is assigned at $.States.P.Assign['z.$']"),
			  std::string::npos);
	// inner machines may use the same names side by side, and read outer ones
	EXPECT_EQ(compile_error(machine(R"({
	  "A":{"Type":"Pass","Assign":{"k":1},"Next":"P"},
	  "P":{"Type":"Parallel","End":true,"Branches":[
	    {"StartAt":"X","States":{"X":{"Type":"Pass","Assign":{"t.$":"$k"},"End":true}}},
	    {"StartAt":"Y","States":{"Y":{"Type":"Pass","Assign":{"t":2},"End":true}}}]}})")),
			  "<accepted>");
}

// ------------------------------------------------------------------ step

TEST(JsonataStep, PassOutputReadsStatesInputAndContext) {
	auto a = start(jsonata_machine(R"({"A":{"Type":"Pass","End":true,
	    "Output":{"sum":"{% $sum($states.input.items.price) %}",
	              "who":"{% $states.context.Execution.Name %}",
	              "state":"{% $states.context.State.Name %}",
	              "dollar":"{% $.k %}","lit":"plain {text}"}}})"),
				   J(R"({"items":[{"price":2},{"price":3.5}],"k":"v"})"), 1'000'000,
				   J(R"({"Execution":{"Name":"run-1"}})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":{"sum":5.5,"who":"run-1",
	    "state":"A","dollar":"v","lit":"plain {text}"}})"));
	EXPECT_FALSE(a.contains("variables"));
	// without Output, a Pass passes its input on
	auto b = start(jsonata_machine(R"({"A":{"Type":"Pass","End":true}})"), J(R"({"x":1})"));
	EXPECT_EQ(outcome(b)["output"], J(R"({"x":1})"));
}

TEST(JsonataStep, TaskArgumentsOutputAndAssignWithStatesResult) {
	const json def = jsonata_machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	    "Arguments":{"id":"{% $states.input.order.id %}","n":"{% $count($states.input.order.lines) %}"},
	    "TimeoutSeconds":"{% $states.input.t %}","HeartbeatSeconds":5,
	    "Output":{"order":"{% $states.input.order.id %}","status":"{% $states.result.status %}"},
	    "Assign":{"lastStatus":"{% $states.result.status %}","seen":"{% $states.input.order.id %}"},
	    "Next":"B"},
	  "B":{"Type":"Pass","Output":{"o":"{% $states.input %}","v":"{% $lastStatus %}"},"End":true}})");
	const json input = J(R"({"order":{"id":"o-7","lines":[1,2,3]},"t":60})");
	auto a = start(def, input);
	EXPECT_EQ(outcome(a)["kind"], "task");
	EXPECT_EQ(outcome(a)["task_input"], J(R"({"id":"o-7","n":3})"));
	EXPECT_EQ(outcome(a)["timeout_s"], 60);
	EXPECT_EQ(outcome(a)["heartbeat_s"], 5);
	auto b = run(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", input},
					   {"result", J(R"({"status":"shipped"})")}});
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":{
	    "o":{"order":"o-7","status":"shipped"},"v":"shipped"}})"));
	EXPECT_EQ(b["variables"], J(R"({"lastStatus":"shipped","seen":"o-7"})"));
	// without Output, the task's result is the state's output
	auto c = run(jsonata_machine(R"({"A":{"Type":"Task","Resource":"handler:h","End":true}})"),
				 {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", input},
				  {"result", J(R"({"r":1})")}});
	EXPECT_EQ(outcome(c)["output"], J(R"({"r":1})"));
}

TEST(JsonataStep, AssignAndOutputSeeTheValuesTheStateFound) {
	const json def = jsonata_machine(R"({
	  "A":{"Type":"Pass","Assign":{"x":"{% $x + 1 %}","y":"{% $x %}"},
	       "Output":{"x_seen":"{% $x %}"},"Next":"B"},
	  "B":{"Type":"Pass","Output":{"x":"{% $x %}","y":"{% $y %}","in":"{% $states.input %}"},
	       "End":true}})");
	auto a = run(def, with_vars({{"op", "start"}, {"input", json::object()}}, J(R"({"x":1})")));
	EXPECT_EQ(outcome(a)["output"], J(R"({"x":2,"y":1,"in":{"x_seen":1}})"));
	EXPECT_EQ(a["variables"], J(R"({"x":2,"y":1})"));
}

TEST(JsonataStep, ChoiceConditionWithTheRulesAssignAndOutput) {
	const json def = jsonata_machine(R"({
	  "A":{"Type":"Choice","Default":"Low",
	       "Choices":[{"Condition":"{% $states.input.n > 10 %}","Next":"High",
	                   "Assign":{"band":"high"},"Output":{"n":"{% $states.input.n * 2 %}"}},
	                  {"Condition":false,"Next":"High"}],
	       "Assign":{"band":"low"}},
	  "High":{"Type":"Pass","Output":{"band":"{% $band %}","in":"{% $states.input %}"},"End":true},
	  "Low":{"Type":"Pass","Output":{"band":"{% $band %}","in":"{% $states.input %}"},"End":true}})");
	EXPECT_EQ(outcome(start(def, J(R"({"n":11})")))["output"],
			  J(R"({"band":"high","in":{"n":22}})"));
	EXPECT_EQ(outcome(start(def, J(R"({"n":3})")))["output"], J(R"({"band":"low","in":{"n":3}})"));
	// a Condition that gives no boolean
	auto bad = start(jsonata_machine(R"({"A":{"Type":"Choice","Default":"B",
	    "Choices":[{"Condition":"{% $states.input.n %}","Next":"B"}]},"B":{"Type":"Succeed"}})"),
					 J(R"({"n":1})"));
	EXPECT_EQ(outcome(bad)["kind"], "failed");
	EXPECT_EQ(outcome(bad)["error"], "States.QueryEvaluationError");
	EXPECT_NE(outcome(bad)["cause"].get<std::string>().find("must give true or false, not 1"),
			  std::string::npos);
}

TEST(JsonataStep, WaitSecondsAndTimestampExpressions) {
	auto a = start(jsonata_machine(R"({"A":{"Type":"Wait","Seconds":"{% $states.input.s * 2 %}",
	    "Assign":{"waited":true},"Output":{"w":"{% $waited %}"},"End":true}})"),
				   J(R"({"s":5})"), 1'000'000);
	EXPECT_EQ(outcome(a), J(R"({"kind":"wait","state":"A","state_input":{"s":5},"until_ms":1010000})"));
	auto b = run(jsonata_machine(R"({"A":{"Type":"Wait","Seconds":"{% $states.input.s * 2 %}",
	    "Assign":{"waited":true},"Output":{"w":"{% $waited %}"},"End":true}})"),
				 {{"op", "timer_fired"}, {"state", "A"}, {"state_input", J(R"({"s":5})")}});
	// Output sees the value from before the state: $waited is not set yet
	EXPECT_EQ(outcome(b)["kind"], "failed");
	EXPECT_EQ(outcome(b)["error"], "States.QueryEvaluationError");
	auto c = start(jsonata_machine(R"({"A":{"Type":"Wait","Timestamp":"{% $states.input.at %}",
	    "End":true}})"),
				   J(R"({"at":"1970-01-01T00:20:00Z"})"), 1'000'000);
	EXPECT_EQ(outcome(c)["until_ms"], 1'200'000);
	auto d = start(jsonata_machine(R"({"A":{"Type":"Wait","Seconds":"{% -1 %}","End":true}})"),
				   json::object());
	EXPECT_EQ(outcome(d)["error"], "States.QueryEvaluationError");
}

TEST(JsonataStep, FailErrorAndCauseExpressions) {
	auto a = start(jsonata_machine(R"({"A":{"Type":"Fail","Error":"{% 'E.' & $states.input.code %}",
	    "Cause":"{% $string($states.input.n) %}"}})"),
				   J(R"({"code":"Bad","n":4})"));
	EXPECT_EQ(outcome(a)["error"], "E.Bad");
	EXPECT_EQ(outcome(a)["cause"], "4");
	auto b = start(jsonata_machine(R"({"A":{"Type":"Fail","Error":"{% 42 %}"}})"), json::object());
	EXPECT_EQ(outcome(b)["error"], "States.QueryEvaluationError");
}

TEST(JsonataStep, AnUndefinedValueIsAQueryEvaluationError) {
	auto a = start(jsonata_machine(R"({"A":{"Type":"Pass","Output":{"x":"{% $states.input.nope %}"},
	    "End":true}})"),
				   J(R"({"a":1})"));
	EXPECT_EQ(outcome(a)["kind"], "failed");
	EXPECT_EQ(outcome(a)["error"], "States.QueryEvaluationError");
	EXPECT_EQ(outcome(a)["cause"], "in state \"A\", the JSONata expression {% $states.input.nope %} "
								   "in Output returned nothing (undefined)");
}

TEST(JsonataStep, QueryEvaluationErrorIsCaughtWithErrorOutputAndAssign) {
	const json def = jsonata_machine(R"({
	  "A":{"Type":"Task","Resource":"handler:h","Output":"{% $error('bad result') %}",
	       "Retry":[{"ErrorEquals":["States.QueryEvaluationError"],"MaxAttempts":1}],
	       "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"Caught",
	                 "Assign":{"why":"{% $states.errorOutput.Error %}"},
	                 "Output":{"e":"{% $states.errorOutput.Error %}","in":"{% $states.input.k %}"}}],
	       "End":true},
	  "Caught":{"Type":"Pass","Output":{"why":"{% $why %}","got":"{% $states.input %}"},"End":true}})");
	const json in = J(R"({"k":7})");
	// the first failure is retried (the task runs again) ...
	auto a = run(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", in},
					   {"result", 1}});
	EXPECT_EQ(outcome(a)["kind"], "task");
	EXPECT_EQ(outcome(a)["retry_counts"], J("[1]"));
	// ... the second goes to the catcher
	auto b = run(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", in},
					   {"result", 1}, {"retry_counts", J("[1]")}});
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":{"why":"States.QueryEvaluationError",
	    "got":{"e":"States.QueryEvaluationError","in":7}}})"));
	EXPECT_EQ(b["variables"], J(R"({"why":"States.QueryEvaluationError"})"));
	// a catcher without Output hands on the error output
	auto c = run(jsonata_machine(R"({"A":{"Type":"Task","Resource":"handler:h","End":true,
	    "Catch":[{"ErrorEquals":["States.ALL"],"Next":"B"}]},"B":{"Type":"Succeed"}})"),
				 {{"op", "task_failed"}, {"state", "A"}, {"state_input", in}, {"error", "X"},
				  {"cause", "c"}});
	EXPECT_EQ(outcome(c)["output"], J(R"({"Error":"X","Cause":"c"})"));
	// Arguments that fail: Catch only (nothing to retry)
	auto d = start(jsonata_machine(R"({"A":{"Type":"Task","Resource":"handler:h","End":true,
	    "Arguments":"{% $number('x') %}",
	    "Retry":[{"ErrorEquals":["States.ALL"]}],
	    "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"B"}]},"B":{"Type":"Succeed"}})"),
				   in);
	EXPECT_EQ(outcome(d)["kind"], "succeeded");
	EXPECT_EQ(outcome(d)["output"]["Error"], "States.QueryEvaluationError");
}

TEST(JsonataStep, MapItemsItemSelectorAndNumbersFromExpressions) {
	const json def = jsonata_machine(R"({"A":{"Type":"Map","End":true,
	    "Items":"{% $states.input.xs[$ > 1] %}",
	    "ItemSelector":{"v":"{% $states.context.Map.Item.Value %}",
	                    "i":"{% $states.context.Map.Item.Index %}","k":"{% $k %}"},
	    "MaxConcurrency":"{% $states.input.mc %}","ToleratedFailurePercentage":"{% 12.5 %}",
	    "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}},
	    "Output":{"n":"{% $count($states.result) %}","sum":"{% $sum($states.result) %}"},
	    "Assign":{"count":"{% $count($states.result) %}"}}})");
	const json in = J(R"({"xs":[1,2,3],"mc":2})");
	auto a = run(def, with_vars({{"op", "start"}, {"input", in}}, J(R"({"k":"K"})")));
	const json o = outcome(a);
	EXPECT_EQ(o["kind"], "map");
	EXPECT_EQ(o["items"], J(R"([{"scope":"/States/A/ItemProcessor","index":0,"input":{"v":2,"i":0,"k":"K"}},
	                          {"scope":"/States/A/ItemProcessor","index":1,"input":{"v":3,"i":1,"k":"K"}}])"));
	EXPECT_EQ(o["max_concurrency"], 2);
	EXPECT_EQ(o["tolerated_percentage"], 12.5);
	auto b = run(def, with_vars({{"op", "children_done"}, {"state", "A"}, {"state_input", in},
								 {"outputs", J("[4,6]")}},
								J(R"({"k":"K"})")));
	EXPECT_EQ(outcome(b)["output"], J(R"({"n":2,"sum":10})"));
	EXPECT_EQ(b["variables"], J(R"({"k":"K","count":2})"));
	// Items that are not an array
	auto c = start(jsonata_machine(R"({"A":{"Type":"Map","End":true,"Items":"{% 5 %}",
	    "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Succeed"}}}}})"),
				   json::object());
	EXPECT_EQ(outcome(c)["error"], "States.QueryEvaluationError");
}

TEST(JsonataStep, ParallelArgumentsAreEachBranchsInput) {
	auto a = start(jsonata_machine(R"({"A":{"Type":"Parallel","End":true,
	    "Arguments":{"x":"{% $states.input.a * 10 %}"},
	    "Branches":[{"StartAt":"B","States":{"B":{"Type":"Succeed"}}},
	                {"StartAt":"C","States":{"C":{"Type":"Succeed"}}}]}})"),
				   J(R"({"a":2})"));
	EXPECT_EQ(outcome(a)["branches"], J(R"([{"scope":"/States/A/Branches/0","input":{"x":20}},
	                                       {"scope":"/States/A/Branches/1","input":{"x":20}}])"));
}

TEST(JsonataStep, AnInnerMachineReadsTheVariablesItIsGiven) {
	const json def = jsonata_machine(R"({"A":{"Type":"Map","End":true,
	    "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Pass",
	        "Output":{"item":"{% $states.input %}","outer":"{% $limit %}"},
	        "Assign":{"local":1},"End":true}}}}})");
	auto a = run(def, {{"op", "start"},
					   {"scope", "/States/A/ItemProcessor"},
					   {"input", 3},
					   {"variables", J(R"({"limit":9})")}});
	EXPECT_EQ(outcome(a)["output"], J(R"({"item":3,"outer":9})"));
	EXPECT_EQ(a["variables"], J(R"({"limit":9,"local":1})"));
}

// ------------------------------------------------------------------ JSONPath

TEST(VariablesStep, JsonPathAssignPathsIntrinsicsAndLaterStates) {
	const json def = machine(R"J({
	  "A":{"Type":"Pass","Parameters":{"v.$":"$.in"},"ResultPath":"$.r",
	       "Assign":{"a.$":"$.v","b":1,"c.$":"States.Format('<{}>', $.v.name)"},"Next":"B"},
	  "B":{"Type":"Pass","Parameters":{"a.$":"$a","name.$":"$a.name","b.$":"$b",
	       "f.$":"States.Format('{} and {}', $a.name, $c)"},"Next":"C"},
	  "C":{"Type":"Choice","Choices":[{"Variable":"$b","NumericEquals":1,"Next":"D",
	       "Assign":{"b":2,"old.$":"$b"}}]},
	  "D":{"Type":"Pass","Parameters":{"b.$":"$b","old.$":"$old","in.$":"$"},"End":true}})J");
	auto a = start(def, J(R"({"in":{"name":"n1"}})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"b":2,"old":1,"in":{"a":{"name":"n1"},"name":"n1","b":1,
	    "f":"n1 and <n1>"}})"));
	EXPECT_EQ(a["variables"], J(R"({"a":{"name":"n1"},"b":2,"c":"<n1>","old":1})"));
}

TEST(VariablesStep, JsonPathTaskAssignSeesTheSelectedResultAndCatchTheError) {
	const json def = machine(R"({
	  "A":{"Type":"Task","Resource":"handler:h","ResultSelector":{"s.$":"$.status"},
	       "ResultPath":"$.res","Assign":{"st.$":"$.s"},"Next":"B",
	       "Catch":[{"ErrorEquals":["States.ALL"],"Assign":{"err.$":"$.Error"},"ResultPath":"$.e",
	                 "Next":"B"}]},
	  "B":{"Type":"Pass","End":true}})");
	auto a = run(def, {{"op", "task_succeeded"}, {"state", "A"}, {"state_input", J("{}")},
					   {"result", J(R"({"status":"ok"})")}});
	EXPECT_EQ(outcome(a)["output"], J(R"({"res":{"s":"ok"}})"));
	EXPECT_EQ(a["variables"], J(R"({"st":"ok"})"));
	auto b = run(def, {{"op", "task_failed"}, {"state", "A"}, {"state_input", J("{}")},
					   {"error", "Boom"}});
	EXPECT_EQ(outcome(b)["output"], J(R"({"e":{"Error":"Boom"}})"));
	EXPECT_EQ(b["variables"], J(R"({"err":"Boom"})"));
}

TEST(VariablesStep, AMissingVariableIsStatesRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Parameters":{"x.$":"$nope"},"End":true}})"),
				   json::object());
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("$nope selects nothing from the variables"),
			  std::string::npos);
}

TEST(VariablesStep, SizeLimits) {
	const std::string big(300000, 'x');
	auto a = start(machine(R"({"A":{"Type":"Pass","Assign":{"v.$":"$.s"},"End":true}})"),
				   json{{"s", big}});
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("limit variable_size"), std::string::npos);
	const std::string half(200000, 'x');
	auto b = start(machine(R"({"A":{"Type":"Pass","Assign":{"v.$":"$.s","w.$":"$.s"},"End":true}})"),
				   json{{"s", half}});
	EXPECT_NE(outcome(b)["cause"].get<std::string>().find("limit assign_size"), std::string::npos);
	json many = json::object();
	for (int i = 0; i < 60; i++)
		many["v" + std::to_string(i)] = half;
	auto c = run(machine(R"({"A":{"Type":"Pass","Assign":{"w":1},"End":true}})"),
				 with_vars({{"op", "start"}, {"input", json::object()}}, many));
	EXPECT_NE(outcome(c)["cause"].get<std::string>().find("limit variables_size"), std::string::npos);
	// no Assign, no variables in the answer
	auto d = start(machine(R"({"A":{"Type":"Pass","End":true}})"), json::object());
	EXPECT_FALSE(d.contains("variables"));
}
