// asl_fanout_test.cpp — step() for Parallel and Map: the fan-out outcomes,
// children_done (ResultSelector, ResultPath, OutputPath, Next), a failed
// fan-out through task_failed (Retry, Catch), $$.Map.Item, and sub-machines
// addressed by scope.

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

const char *kParallel = R"({"StartAt":"P","States":{
  "P":{"Type":"Parallel","InputPath":"$.in","ResultSelector":{"both.$":"$"},
       "ResultPath":"$.out","Next":"Done",
       "Retry":[{"ErrorEquals":["Boom"],"MaxAttempts":1,"IntervalSeconds":2}],
       "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],
       "Branches":[
         {"StartAt":"B0","States":{"B0":{"Type":"Pass","Result":"zero","End":true}}},
         {"StartAt":"B1","States":{"B1":{"Type":"Task","Resource":"genroc:noop","End":true}}}]},
  "Done":{"Type":"Succeed"},
  "Caught":{"Type":"Pass","End":true}}})";

const char *kMap = R"({"StartAt":"M","States":{
  "M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":2,"ToleratedFailureCount":1,
       "ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value","k.$":"$.k"},
       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},
       "End":true}}})";

}  // namespace

TEST(Fanout, ParallelGivesEveryBranchItsScopeAndInput) {
	auto a = start(J(kParallel), J(R"({"in":{"x":1}})"));
	const json o = outcome(a);
	EXPECT_EQ(o["kind"], "parallel");
	EXPECT_EQ(o["state"], "P");
	EXPECT_EQ(o["state_input"], J(R"({"in":{"x":1}})"));
	EXPECT_EQ(o["branches"], J(R"([{"scope":"/States/P/Branches/0","input":{"x":1}},
	                              {"scope":"/States/P/Branches/1","input":{"x":1}}])"));
	EXPECT_EQ(o["retry_counts"], J("[0]"));
	EXPECT_EQ(o["delay_ms"], 0);
}

TEST(Fanout, ABranchRunsInItsScope) {
	auto a = run(J(kParallel), J(R"({"op":"start","scope":"/States/P/Branches/1","input":{"x":1}})"));
	EXPECT_EQ(outcome(a)["kind"], "task");
	EXPECT_EQ(outcome(a)["state"], "B1");
	auto b = run(J(kParallel), J(R"({"op":"start","scope":"/States/P/Branches/0","input":{}})"));
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":"zero"})"));
}

TEST(Fanout, UnknownScopeIsABadRequest) {
	try {
		run(J(kParallel), J(R"({"op":"start","scope":"/States/Nope","input":{}})"));
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "22023");
		EXPECT_STREQ(e.what(), "invalid step request: no scope \"/States/Nope\" in this definition");
	}
}

TEST(Fanout, ChildrenDoneAppliesResultSelectorAndResultPath) {
	auto a = run(J(kParallel), J(R"({"op":"children_done","state":"P","state_input":{"in":1},
	                                 "outputs":["zero",{"x":1}]})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":{"in":1,"out":{"both":["zero",{"x":1}]}}})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"Done","type":"Succeed"}])"));
}

TEST(Fanout, AFailedParallelIsRetriedThenCaught) {
	auto a = run(J(kParallel), J(R"({"op":"task_failed","state":"P","state_input":{"in":{"y":2}},
	                                 "error":"Boom","cause":"c"})"));
	EXPECT_EQ(outcome(a)["kind"], "parallel");
	EXPECT_EQ(outcome(a)["retry_counts"], J("[1]"));
	EXPECT_EQ(outcome(a)["delay_ms"], 2000);
	auto b = run(J(kParallel), J(R"({"op":"task_failed","state":"P","state_input":{"in":{"y":2}},
	                                 "error":"Boom","cause":"c","retry_counts":[1]})"));
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":{"in":{"y":2},"err":{"Error":"Boom","Cause":"c"}}})"));
}

TEST(Fanout, MapItemsWithItemSelectorAndContext) {
	auto a = start(J(kMap), J(R"({"xs":["a","b","c"],"k":7})"));
	const json o = outcome(a);
	EXPECT_EQ(o["kind"], "map");
	EXPECT_EQ(o["max_concurrency"], 2);
	EXPECT_EQ(o["tolerated_count"], 1);
	EXPECT_TRUE(o["tolerated_percentage"].is_null());
	ASSERT_EQ(o["items"].size(), 3u);
	EXPECT_EQ(o["items"][1], J(R"({"scope":"/States/M/ItemProcessor","index":1,
	                               "input":{"i":1,"v":"b","k":7}})"));
}

TEST(Fanout, MapOfNothingIsDoneAtOnce) {
	auto a = start(J(kMap), J(R"({"xs":[],"k":7})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":[]})"));
}

TEST(Fanout, MapItemsPathMustSelectAnArray) {
	auto a = start(J(kMap), J(R"({"xs":{"no":1},"k":7})"));
	EXPECT_EQ(outcome(a)["kind"], "failed");
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
}

TEST(Fanout, NestedMapInParallelHasItsOwnScope) {
	auto def = J(R"({"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"M","States":{"M":{"Type":"Map","End":true,"Iterator":
	    {"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}}}}]}}})");
	auto a = run(def, J(R"({"op":"start","scope":"/States/P/Branches/0","input":[1,2]})"));
	EXPECT_EQ(outcome(a)["items"][0]["scope"], "/States/P/Branches/0/States/M/Iterator");
	auto b = run(def, J(R"({"op":"start","scope":"/States/P/Branches/0/States/M/Iterator","input":5})"));
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":5})"));
}

// ---------------------------------------------------------------- events

TEST(Event, AnEventTaskParksWithItsNameAndTimeout) {
	auto def = J(R"({"StartAt":"E","States":{"E":{"Type":"Task","Resource":"genroc:event",
	  "Parameters":{"Name.$":"$.wait_for"},"TimeoutSeconds":30,"ResultPath":"$.got","End":true}}})");
	auto a = start(def, J(R"({"wait_for":"approved"})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"event","state":"E","state_input":{"wait_for":"approved"},
	  "name":"approved","timeout_s":30,"retry_counts":[],"delay_ms":0})"));
	auto b = run(def, J(R"({"op":"task_succeeded","state":"E","state_input":{"wait_for":"approved"},
	                        "result":{"by":"ann"}})"));
	EXPECT_EQ(outcome(b)["output"], J(R"({"wait_for":"approved","got":{"by":"ann"}})"));
}

TEST(Event, AnEventTaskWithoutANameFails) {
	auto def = J(R"({"StartAt":"E","States":{"E":{"Type":"Task","Resource":"genroc:event","End":true}}})");
	auto a = start(def, J(R"({"x":1})"));
	EXPECT_EQ(outcome(a)["kind"], "failed");
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
}

// ---------------------------------------------------------------- calls

TEST(Call, ASyncCallAsksForAChildWithItsDefinitionVersionInputAndName) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Task","Resource":"genroc:call.sync",
	  "Parameters":{"Definition":"billing","Version":2,"Input.$":"$.order","Name":"bill-1"},
	  "TimeoutSeconds":60,"ResultPath":"$.bill","End":true}}})");
	auto a = start(def, J(R"({"order":{"id":7}})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"call","state":"C","state_input":{"order":{"id":7}},
	  "definition":"billing","version":2,"input":{"id":7},"name":"bill-1","sync":true,
	  "timeout_s":60,"retry_counts":[],"delay_ms":0})"));
	// the child's output comes back as the task's result
	auto b = run(def, J(R"({"op":"task_succeeded","state":"C","state_input":{"order":{"id":7}},
	                        "result":{"paid":true}})"));
	EXPECT_EQ(outcome(b)["output"], J(R"({"order":{"id":7},"bill":{"paid":true}})"));
}

TEST(Call, AnAsyncCallDefaultsVersionNameAndInputAndHasNoTimeout) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Task","Resource":"genroc:call",
	  "Parameters":{"Definition":"audit"},"TimeoutSeconds":5,"End":true}}})");
	auto a = start(def, J(R"({"x":1})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"call","state":"C","state_input":{"x":1},
	  "definition":"audit","version":null,"input":{},"name":null,"sync":false,
	  "timeout_s":null,"retry_counts":[],"delay_ms":0})"));
}

TEST(Call, AChildFailureGoesThroughRetryAndCatch) {
	auto def = J(R"({"StartAt":"C","States":{
	  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"d"},
	       "Retry":[{"ErrorEquals":["Boom"],"MaxAttempts":1,"IntervalSeconds":2}],
	       "Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},
	  "F":{"Type":"Pass","End":true}}})");
	auto a = run(def, J(R"({"op":"task_failed","state":"C","state_input":{},"error":"Boom","cause":"c"})"));
	EXPECT_EQ(outcome(a)["kind"], "call");
	EXPECT_EQ(outcome(a)["delay_ms"], 2000);
	EXPECT_EQ(outcome(a)["retry_counts"], J("[1]"));
	auto b = run(def, J(R"({"op":"task_failed","state":"C","state_input":{},"error":"Boom",
	                        "cause":"c","retry_counts":[1]})"));
	EXPECT_EQ(outcome(b), J(R"({"kind":"succeeded","output":{"Error":"Boom","Cause":"c"}})"));
}

TEST(Call, ABadCallInputIsARuntimeErrorNamingTheField) {
	const std::pair<const char *, const char *> cases[] = {
		{R"("billing")", "must be an object"},
		{R"({"Input":{}})", "needs a non-empty string \"Definition\""},
		{R"({"Definition":""})", "needs a non-empty string \"Definition\""},
		{R"({"Definition":"d","Version":0})", "\"Version\" 0; it must be a positive integer"},
		{R"({"Definition":"d","Version":"2"})", "\"Version\" \"2\"; it must be a positive integer"},
		{R"({"Definition":"d","Name":5})", "\"Name\" 5; it must be a non-empty string"},
		{R"({"Definition":"d","Queue":"q"})", "unknown field \"Queue\""},
	};
	for (const auto &[params, message] : cases) {
		SCOPED_TRACE(params);
		// States.Runtime is never caught, not even by States.ALL
		const json def = J(R"({"StartAt":"C","States":{"C":{"Type":"Task","Resource":"genroc:call.sync",
		  "InputPath":"$.p","Catch":[{"ErrorEquals":["States.ALL"],"Next":"F"}],"End":true},
		  "F":{"Type":"Pass","End":true}}})");
		auto a = start(def, json{{"p", J(params)}});
		EXPECT_EQ(outcome(a)["kind"], "failed");
		EXPECT_EQ(outcome(a)["error"], "States.Runtime");
		EXPECT_NE(outcome(a)["cause"].get<std::string>().find(message), std::string::npos)
			<< outcome(a)["cause"];
	}
}

// ---------------------------------------------------------------- enter

TEST(Enter, EntersTheNamedStateWithItsInputAndFreshRetryCounts) {
	auto def = J(R"({"StartAt":"A","States":{
	  "A":{"Type":"Pass","Result":1,"ResultPath":"$.a","Next":"T"},
	  "T":{"Type":"Task","Resource":"handler:t","Retry":[{"ErrorEquals":["X"]}],"End":true}}})");
	auto a = run(def, J(R"({"op":"enter","state":"T","state_input":{"k":2}})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"task","state":"T","resource":"handler:t","state_input":{"k":2},
	  "task_input":{"k":2},"timeout_s":null,"heartbeat_s":null,"only_once":false,
	  "retry_counts":[0],"delay_ms":0})"));
	auto b = run(def, J(R"({"op":"enter","state":"A","state_input":{}})"));
	EXPECT_EQ(outcome(b)["state"], "T");
	EXPECT_EQ(outcome(b)["task_input"], J(R"({"a":1})"));
	EXPECT_THROW(run(def, J(R"({"op":"enter","state":"Nope","state_input":{}})")), Error);
}

// The *Path forms of MaxConcurrency and the tolerated failures are read
// from the input when the Map starts.
TEST(Fanout, MapLimitsFromPaths) {
	const json def = J(R"({"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
	  "MaxConcurrencyPath":"$.mc","ToleratedFailureCountPath":"$.tc",
	  "ToleratedFailurePercentagePath":"$.tp","Label":"fan-out_1",
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},
	  "End":true}}})");
	const json o = outcome(start(def, J(R"({"xs":[1,2,3],"mc":2,"tc":1,"tp":12.5})")));
	EXPECT_EQ(o["kind"], "map");
	EXPECT_EQ(o["max_concurrency"], 2);
	EXPECT_EQ(o["tolerated_count"], 1);
	EXPECT_EQ(o["tolerated_percentage"], 12.5);
	// A path that selects no whole number in range fails the state.
	const json bad = outcome(start(def, J(R"({"xs":[1],"mc":-1,"tc":1,"tp":1})")));
	EXPECT_EQ(bad["kind"], "failed");
	EXPECT_EQ(bad["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"xs":[1],"mc":1,"tc":1,"tp":101})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"xs":[1],"tc":1,"tp":1})")))["error"], "States.Runtime");
}

// ItemBatcher: batches of at most MaxItemsPerBatch items (and
// MaxInputBytesPerBatch bytes), each {"BatchInput", "Items"}.
TEST(Fanout, ItemBatcherGroupsItems) {
	const json def = J(R"({"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
	  "ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"k.$":"$.k"}},
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},
	  "End":true}}})");
	const json o = outcome(start(def, J(R"({"xs":[1,2,3,4,5],"k":"v"})")));
	ASSERT_EQ(o["items"].size(), 3u);
	EXPECT_EQ(o["items"][0]["input"], J(R"({"BatchInput":{"k":"v"},"Items":[1,2]})"));
	EXPECT_EQ(o["items"][2]["input"], J(R"({"BatchInput":{"k":"v"},"Items":[5]})"));
	EXPECT_EQ(o["items"][2]["index"], 2);
	// By bytes: {"Items":[]} is 12 bytes, each item "aaaa" 6 more (and a comma).
	const json by_bytes = J(R"({"StartAt":"M","States":{"M":{"Type":"Map",
	  "ItemBatcher":{"MaxInputBytesPerBatchPath":"$.b"},"ItemsPath":"$.xs",
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},
	  "End":true}}})");
	const json ob = outcome(start(by_bytes, J(R"({"xs":["aaaa","aaaa","aaaa"],"b":25})")));
	ASSERT_EQ(ob["items"].size(), 2u);
	EXPECT_EQ(ob["items"][0]["input"], J(R"({"Items":["aaaa","aaaa"]})"));
	EXPECT_EQ(ob["items"][1]["input"], J(R"({"Items":["aaaa"]})"));
	// One item alone over the bound fails the state.
	EXPECT_EQ(outcome(start(by_bytes, J(R"({"xs":["aaaa"],"b":13})")))["error"], "States.Runtime");
}

TEST(Fanout, MapFieldsAreChecked) {
	auto refused = [](const std::string &extra) {
		return compile_error(R"({"StartAt":"M","States":{"M":{"Type":"Map",)" + extra +
							 R"(,"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Succeed"}}},"End":true}}})");
	};
	EXPECT_EQ(refused(R"("MaxConcurrency":1,"MaxConcurrencyPath":"$.m")"),
			  "invalid definition at $.States.M.MaxConcurrencyPath: cannot be used together with "
			  "MaxConcurrency");
	EXPECT_EQ(refused(R"("ToleratedFailureCountPath":"$.a[*]")"),
			  "invalid definition at $.States.M.ToleratedFailureCountPath: \"$.a[*]\" must be a "
			  "reference path ($ or a $variable and field names or indices only)");
	EXPECT_EQ(refused(R"("Label":"has space")"),
			  "invalid definition at $.States.M.Label: may not contain spaces, control characters "
			  "or any of < > { } [ ] ? * \" # % ^ | ~ ` $ & , ; : /");
	EXPECT_EQ(refused(R"("ItemBatcher":{})"),
			  "invalid definition at $.States.M.ItemBatcher: needs MaxItemsPerBatch or "
			  "MaxInputBytesPerBatch (or their Path forms)");
	EXPECT_EQ(refused(R"("ItemBatcher":{"MaxInputBytesPerBatch":262145})"),
			  "invalid definition at $.States.M.ItemBatcher.MaxInputBytesPerBatch: must be an "
			  "integer from 1 to 262144");
	EXPECT_EQ(refused(R"("ItemReader":{"Resource":"arn:aws:states:::s3:getObject"})"),
			  "invalid definition at $.States.M.ItemReader: reading items from or writing results "
			  "to Amazon S3 is not supported: genroc's Map takes its items from the state input "
			  "(ItemsPath) and returns its results as the state output");
}
