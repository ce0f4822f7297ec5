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

// A JSONPath state's Assign may read $states: input (the raw input), context,
// result (Task, Parallel, Map: the result before ResultSelector) and, in a
// catcher, errorOutput; get_instance shows the variables.
TEST_P(StoreTest, JsonPathAssignReadsStates) {
	define("jpstates", json::parse(R"J({"StartAt":"Get","States":{
	  "Get":{"Type":"Task","Resource":"handler:g","InputPath":"$.req",
	         "Parameters":{"id.$":"$.id"},"ResultSelector":{"p.$":"$.price"},
	         "Assign":{"raw.$":"$states.input","res.$":"$states.result","sel.$":"$",
	                   "state.$":"$states.context.State.Name",
	                   "msg.$":"States.Format('id {}', $states.input.req.id)"},
	         "Catch":[{"ErrorEquals":["Boom"],"Next":"Failed",
	                   "Assign":{"err.$":"$states.errorOutput.Error","in.$":"$states.input.req.id"}}],
	         "Next":"Show"},
	  "Show":{"Type":"Pass","Parameters":{"raw.$":"$raw","res.$":"$res","sel.$":"$sel",
	          "state.$":"$state","msg.$":"$msg"},"End":true},
	  "Failed":{"Type":"Pass","Parameters":{"err.$":"$err","in.$":"$in"},"End":true}}})J"));
	worker("w1");
	const json input = json::parse(R"({"req":{"id":7},"other":1})");
	const int64_t ok = start("jpstates", input);
	EXPECT_EQ(instance(ok).at("variables"), json::object());  // no Assign has run yet
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"id", 7}}));
	store().complete(t.instance_id, t.epoch, {{"price", 3}, {"qty", 2}});
	EXPECT_EQ(instance(ok).at("output"), json::parse(R"({"raw":{"req":{"id":7},"other":1},
	    "res":{"price":3,"qty":2},"sel":{"p":3},"state":"Get","msg":"id 7"})"));
	EXPECT_EQ(instance(ok).at("variables"), json::parse(R"({"raw":{"req":{"id":7},"other":1},
	    "res":{"price":3,"qty":2},"sel":{"p":3},"state":"Get","msg":"id 7"})"));
	const int64_t bad = start("jpstates", input);
	t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Boom", "it broke");
	EXPECT_EQ(instance(bad).at("output"), json::parse(R"({"err":"Boom","in":7})"));
	EXPECT_EQ(instance(bad).at("variables"), json::parse(R"({"err":"Boom","in":7})"));
}

TEST_P(StoreTest, DefineRefusesStatesOutsideAJsonPathAssignAndFieldsItLacks) {
	EXPECT_RAISES("RC001", "$.States.A.Parameters['x.$']: \"$states.input\" is not a valid path: $states is reserved",
				  store().define("st1", json::parse(R"({"StartAt":"A","States":{
				      "A":{"Type":"Pass","Parameters":{"x.$":"$states.input"},"End":true}}})")));
	EXPECT_RAISES("RC001", "must be followed by one of its fields: input, context",
				  store().define("st2", json::parse(R"({"StartAt":"A","States":{
				      "A":{"Type":"Pass","Assign":{"x.$":"$states.result"},"End":true}}})")));
	EXPECT_RAISES("RC001", "must be followed by one of its fields: input, context, result",
				  store().define("st3", json::parse(R"({"StartAt":"A","States":{
				      "A":{"Type":"Task","Resource":"handler:a",
				           "Assign":{"x.$":"$states.errorOutput"},"End":true}}})")));
	EXPECT_RAISES("RC001", "must be followed by one of its fields: input, context, errorOutput",
				  store().define("st4", json::parse(R"({"StartAt":"A","States":{
				      "A":{"Type":"Task","Resource":"handler:a","End":true,
				           "Catch":[{"ErrorEquals":["States.ALL"],"Next":"B",
				                     "Assign":{"x.$":"$states.result"}}]},
				      "B":{"Type":"Succeed"}}})")));
}

// Variable names follow Unicode's identifier rule: letters of any script.
TEST_P(StoreTest, UnicodeVariableNames) {
	define("uvars", json::parse(R"J({"StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"prénom.$":"$.n","数量":3,"Δ_1":true},"Next":"Read"},
	  "Read":{"Type":"Pass","QueryLanguage":"JSONata",
	          "Output":{"n":"{% $prénom %}","twice":"{% $数量 * 2 %}","d":"{% $Δ_1 %}"},"Next":"Path"},
	  "Path":{"Type":"Pass","Parameters":{"n.$":"$prénom","f.$":"States.Format('{}', $数量)",
	          "prev.$":"$"},"End":true}}})J"));
	const int64_t id = start("uvars", {{"n", "Zoë"}});
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"n":"Zoë","f":"3",
	    "prev":{"n":"Zoë","twice":6,"d":true}})"));
	EXPECT_EQ(instance(id).at("variables"), json::parse(R"({"prénom":"Zoë","数量":3,"Δ_1":true})"));
	auto assign = [&](const std::string &name) {
		return store().define("ubad", json({{"StartAt", "A"},
											{"States", {{"A", {{"Type", "Pass"},
															   {"Assign", {{name, 1}}},
															   {"End", true}}}}}}));
	};
	EXPECT_RAISES("RC001", "\"1x\" is not a valid variable name", assign("1x"));
	EXPECT_RAISES("RC001", "\"a-b\" is not a valid variable name", assign("a-b"));
	EXPECT_RAISES("RC001", "\"★\" is not a valid variable name", assign("★"));
	std::string eighty;
	for (int i = 0; i < 80; i++)
		eighty += "é";	// 80 characters, 160 bytes
	EXPECT_NO_THROW(assign(eighty));
	EXPECT_RAISES("RC001", "at most 80 characters", assign(eighty + "é"));
}

// ItemBatcher's sizes: {% %} in a JSONata Map, a path (here to a variable) in
// a JSONPath one; a value out of range is AWS's error for the language.
TEST_P(StoreTest, ItemBatcherSizesFromExpressionsAndPaths) {
	define("jbatch", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"M","States":{
	  "M":{"Type":"Map","Items":"{% $states.input.xs %}",
	       "ItemBatcher":{"MaxItemsPerBatch":"{% $states.input.n %}",
	                      "MaxInputBytesPerBatch":"{% $states.input.b %}"},
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	define("pbatch", json::parse(R"({"StartAt":"Set","States":{
	  "Set":{"Type":"Pass","Assign":{"size.$":"$.n"},"Next":"M"},
	  "M":{"Type":"Map","ItemsPath":"$.xs","ItemBatcher":{"MaxItemsPerBatchPath":"$size"},
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	worker("w1");
	for (const char *def : {"jbatch", "pbatch"}) {
		SCOPED_TRACE(def);
		const int64_t id = start(def, {{"xs", {1, 2, 3, 4, 5}}, {"n", 2}, {"b", 1000}});
		std::vector<json> inputs;
		for (int i = 0; i < 3; i++) {
			Task t = claim_one("w1");
			inputs.push_back(t.input);
			store().complete(t.instance_id, t.epoch, t.input.at("Items").size());
		}
		EXPECT_EQ(inputs.front(), json::parse(R"({"Items":[1,2]})"));
		EXPECT_EQ(inputs.back(), json::parse(R"({"Items":[5]})"));
		EXPECT_EQ(status(id), "succeeded");
		EXPECT_EQ(instance(id).at("output"), json::parse("[2,2,1]"));
	}
	const int64_t zero = start("jbatch", {{"xs", {1}}, {"n", 0}, {"b", 1000}});
	EXPECT_EQ(status(zero), "failed");
	EXPECT_EQ(instance(zero).at("error"), "States.QueryEvaluationError");
	EXPECT_NE(instance(zero).at("cause").get<std::string>().find("MaxItemsPerBatch"), std::string::npos);
	const int64_t big = start("jbatch", {{"xs", {1}}, {"n", 1}, {"b", 262145}});
	EXPECT_EQ(instance(big).at("error"), "States.QueryEvaluationError");
	const int64_t pzero = start("pbatch", {{"xs", {1}}, {"n", 0}});
	EXPECT_EQ(status(pzero), "failed");
	EXPECT_EQ(instance(pzero).at("error"), "States.Runtime");
	EXPECT_NE(instance(pzero).at("cause").get<std::string>().find("must select an integer from 1"),
			  std::string::npos);
	EXPECT_RAISES("RC001", "MaxItemsPerBatchPath is a JSONPath field",
				  store().define("jbad", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"M","States":{
				      "M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatchPath":"$.n"},
				           "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},
				           "End":true}}})")));
}

// A regular expression's work counts against jsonata_steps (PCRE2's
// callouts, core/jsonata_regex.cpp), so a pathological pattern ends the
// state with States.QueryEvaluationError (L0001) instead of holding the
// step (a PostgreSQL backend) for hours; a Catch sees it.
TEST_P(StoreTest, PathologicalRegexEndsWithAQueryEvaluationError) {
	define("jregex", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"M","States":{
	  "M":{"Type":"Pass","Output":"{% $match($states.input.s, /(a+)+[bc]/).match %}","End":true}}})"));
	const int64_t id = start("jregex", {{"s", std::string(40, 'a')}});
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "States.QueryEvaluationError");
	const std::string cause = instance(id).at("cause");
	EXPECT_NE(cause.find("a regular expression took more than"), std::string::npos) << cause;
	EXPECT_NE(cause.find("L0001"), std::string::npos) << cause;
	define("jregex2", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"handler:t",
	       "Arguments":{"s":"{% $replace($states.input.s, /(a|aa)+$/, 'x') %}"},
	       "Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Next":"Caught"}],"End":true},
	  "Caught":{"Type":"Pass","Output":"{% $states.input.Error %}","End":true}}})"));
	const int64_t caught = start("jregex2", {{"s", std::string(60, 'a') + "b"}});
	EXPECT_EQ(status(caught), "succeeded");
	EXPECT_EQ(instance(caught).at("output"), "States.QueryEvaluationError");
	// An ordinary pattern on the longest subject still runs.
	const int64_t fine = start("jregex", {{"s", std::string(1000, 'a') + "b"}});  // found at once
	EXPECT_EQ(status(fine), "succeeded");
	EXPECT_EQ(instance(fine).at("output"), std::string(1000, 'a') + "b");
}

}  // namespace genroc::conformance
