// variables_test.cpp — JSONata states and variables (Assign) end to end on
// both stores: the variables kept with the instance between steps (a task
// claimed and completed in between), handed to Parallel branches and Map
// items, States.QueryEvaluationError caught, AWS's documented examples.
#include "fixture.hpp"

namespace genroc::conformance {

// AWS's developer guide, "Passing data between states with variables": an
// Assign of three values, read later as $productName and $count.
TEST_P(StoreTest, JsonPathAssignIsReadByALaterStateAcrossATask) {
	define("vars", json::parse(R"J({"StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"productName":"product1","count":42,"available":true},
	         "Next":"Work"},
	  "Work":{"Type":"Task","Resource":"handler:w","Parameters":{"n.$":"$count"},
	          "ResultSelector":{"r.$":"$.r"},"Assign":{"result.$":"$.r"},"Next":"Read"},
	  "Read":{"Type":"Pass","Parameters":{"name.$":"$productName","count.$":"$count",
	          "available.$":"$available","result.$":"$result",
	          "msg.$":"States.Format('{} x{}', $productName, $count)"},"End":true}}})J"));
	worker("w1");
	const int64_t id = start("vars");
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json::parse(R"({"n":42})"));
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, {{"r", "done"}}), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"name":"product1","count":42,
	    "available":true,"result":"done","msg":"product1 x42"})"));
}

// AWS's developer guide, "Using Amazon States Language" (JSONata): a Task
// assigns $foo from its input, a Choice compares it, the Default fails.
TEST_P(StoreTest, JsonataChoiceOnAVariableAsAwsDocumentsIt) {
	define("jchoice", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"FirstState","States":{
	  "FirstState":{"Type":"Task","Assign":{"foo":"{% $states.input.foo_input %}"},
	                "Resource":"handler:f","Next":"ChoiceState"},
	  "ChoiceState":{"Type":"Choice","Default":"DefaultState","Choices":[
	     {"Next":"FirstMatchState","Condition":"{% $foo = 1 %}"},
	     {"Next":"SecondMatchState","Condition":"{% $foo = 2 %}"}]},
	  "FirstMatchState":{"Type":"Pass","Output":"first","End":true},
	  "SecondMatchState":{"Type":"Pass","Output":{"second":"{% $foo %}"},"End":true},
	  "DefaultState":{"Type":"Fail","Error":"DefaultStateError","Cause":"No Matches!"}}})"));
	worker("w1");
	const int64_t two = start("jchoice", {{"foo_input", 2}});
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"foo_input", 2}}));
	store().complete(t.instance_id, t.epoch, json::object());
	EXPECT_EQ(instance(two).at("output"), json({{"second", 2}}));
	const int64_t three = start("jchoice", {{"foo_input", 3}});
	t = claim_one("w1");
	store().complete(t.instance_id, t.epoch, json::object());
	EXPECT_EQ(status(three), "failed");
	EXPECT_EQ(instance(three).at("error"), "DefaultStateError");
	EXPECT_EQ(instance(three).at("cause"), "No Matches!");
}

TEST_P(StoreTest, JsonataTaskArgumentsOutputAndAVariableAcrossSteps) {
	define("jtask", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"Get","States":{
	  "Get":{"Type":"Task","Resource":"handler:get","TimeoutSeconds":"{% $states.input.t %}",
	         "Arguments":{"id":"{% $states.input.id %}"},
	         "Output":{"price":"{% $states.result.price %}"},
	         "Assign":{"item":"{% $states.result %}"},"Next":"Wait"},
	  "Wait":{"Type":"Wait","Seconds":"{% $states.input.price %}","Next":"Total"},
	  "Total":{"Type":"Pass","Output":{"total":"{% $item.price * $item.qty %}",
	                                   "name":"{% $item.name %}"},"End":true}}})"));
	worker("w1");
	const int64_t id = start("jtask", {{"id", "sku-1"}, {"t", 30}});
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"id", "sku-1"}}));
	EXPECT_EQ(t.timeout_s, 30);
	store().complete(t.instance_id, t.epoch, {{"price", 4}, {"qty", 3}, {"name", "pen"}});
	EXPECT_EQ(status(id), "waiting");  // Wait 4 s
	at(5);
	store().tick(100);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"total":12,"name":"pen"})"));
}

// Map items and Parallel branches read the variables of the states around
// them (a copy made at the fan-out); what they assign stays theirs.
TEST_P(StoreTest, MapItemsAndParallelBranchesReadOuterVariables) {
	define("jmap", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"factor":"{% $states.input.f %}"},"Next":"M"},
	  "M":{"Type":"Map","Items":"{% $states.input.xs %}","MaxConcurrency":"{% 1 %}",
	       "ItemSelector":{"x":"{% $states.context.Map.Item.Value %}",
	                       "i":"{% $states.context.Map.Item.Index %}"},
	       "ItemProcessor":{"StartAt":"Mul","States":{
	          "Mul":{"Type":"Task","Resource":"handler:mul",
	                 "Arguments":{"x":"{% $states.input.x %}","by":"{% $factor %}"},
	                 "Assign":{"mine":"{% $states.result %}"},
	                 "Output":"{% $exists($mine) ? -1 : $states.result %}","End":true}}},
	       "Output":{"products":"{% $states.result %}"},"Next":"P"},
	  "P":{"Type":"Parallel","Arguments":{"p":"{% $states.input.products %}"},
	       "Branches":[
	         {"StartAt":"B1","States":{"B1":{"Type":"Pass",
	            "Output":{"sum":"{% $sum($states.input.p) %}","f":"{% $factor %}",
	                      "ef":"{% $states.context.Execution.Input.f %}"},"End":true}}},
	         {"StartAt":"B2","States":{"B2":{"Type":"Pass","QueryLanguage":"JSONata",
	            "Output":"{% $exists($mine) %}","End":true}}}],
	       "End":true}}})"));
	worker("w1");
	const int64_t id = start("jmap", {{"f", 10}, {"xs", {1, 2, 3}}});
	for (int i = 0; i < 3; i++) {
		Task t = claim_one("w1");
		EXPECT_EQ(t.input, json({{"x", i + 1}, {"by", 10}}));
		store().complete(t.instance_id, t.epoch, t.input.at("x").get<int>() * 10);
	}
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"([{"sum":60,"f":10,"ef":10},false])"));
}

TEST_P(StoreTest, JsonPathParallelBranchReadsAnOuterVariable) {
	define("ppar", json::parse(R"({"StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"greeting.$":"$.g"},"Next":"P"},
	  "P":{"Type":"Parallel","End":true,"Branches":[
	     {"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t",
	        "Parameters":{"say.$":"$greeting"},"End":true}}}]}}})"));
	worker("w1");
	const int64_t id = start("ppar", {{"g", "hi"}});
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"say", "hi"}}));
	store().complete(t.instance_id, t.epoch, "ok");
	EXPECT_EQ(instance(id).at("output"), json::array({"ok"}));
}

TEST_P(StoreTest, QueryEvaluationErrorIsCaughtAndAssigns) {
	define("jcatch", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"handler:t","Output":"{% $states.result.missing %}",
	       "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"Caught",
	                 "Assign":{"err":"{% $states.errorOutput.Error %}"}}],"End":true},
	  "Caught":{"Type":"Pass","Output":{"err":"{% $err %}",
	            "cause":"{% $contains($states.input.Cause, 'returned nothing (undefined)') %}"},
	            "End":true}}})"));
	worker("w1");
	const int64_t id = start("jcatch");
	Task t = claim_one("w1");
	store().complete(t.instance_id, t.epoch, {{"present", 1}});
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"),
			  json::parse(R"({"err":"States.QueryEvaluationError","cause":true})"));
}

TEST_P(StoreTest, DefineRefusesJsonataFaultsAndAnInnerAssignOfAnOuterVariable) {
	EXPECT_RAISES("RC001", "$.States.A.InputPath: InputPath is a JSONPath field",
				  store().define("bad1", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"A",
				      "States":{"A":{"Type":"Pass","InputPath":"$.x","End":true}}})")));
	EXPECT_RAISES("RC001", "is not a valid JSONata expression",
				  store().define("bad2", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"A",
				      "States":{"A":{"Type":"Pass","Output":"{% 1 + %}","End":true}}})")));
	EXPECT_RAISES("RC001", "inner states may read the variables around them but not assign them",
				  store().define("bad3", json::parse(R"({"StartAt":"A","States":{
				      "A":{"Type":"Pass","Assign":{"x":1},"Next":"M"},
				      "M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"I","States":{
				        "I":{"Type":"Pass","Assign":{"x":2},"End":true}}}}}})")));
}

}  // namespace genroc::conformance
