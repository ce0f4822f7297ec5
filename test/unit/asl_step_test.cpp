// asl_step_test.cpp — step(): Pass, Task, Wait, Succeed, Fail, the data flow
// (InputPath, Parameters, ResultSelector, ResultPath, OutputPath), Retry,
// Catch, the context object and the "entered" list.

#include <set>

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

const json kCtx = J(R"({"Execution":{"Id":"42","Input":{"a":1},"Name":"run-42",
                       "StartTime":"2026-11-29T10:00:00.000Z"},
                       "StateMachine":{"Id":"m:1","Name":"m"},"Task":{"Token":"tok-1"}})");

json task_request(const std::string &op, const std::string &state, const json &state_input) {
	return json{{"op", op}, {"state", state}, {"state_input", state_input}, {"context", kCtx}};
}

}  // namespace

// ---------------------------------------------------------------- Pass / Succeed / Fail

TEST(Step, PassResultEndsTheInstance) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":"hello","End":true}})"), J("{}"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":"hello"})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"A","type":"Pass"}])"));
}

TEST(Step, PassWithoutResultPassesItsInputThrough) {
	auto a = start(machine(R"({"A":{"Type":"Pass","End":true}})"), J(R"({"x":[1,2]})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"x":[1,2]})"));
}

TEST(Step, EnteredListsEveryInlineStateInOrder) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Choice",
	  "Choices":[{"Variable":"$.go","BooleanEquals":true,"Next":"C"}],"Default":"D"},
	  "C":{"Type":"Succeed"},"D":{"Type":"Fail","Error":"E"}})"),
				   J(R"({"go":true})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"A","type":"Pass"},{"state":"B","type":"Choice"},
	                             {"state":"C","type":"Succeed"}])"));
	EXPECT_EQ(outcome(a)["kind"], "succeeded");
}

TEST(Step, PassResultPathNestsAndCreatesObjects) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":{"v":1},"ResultPath":"$.a.b","End":true}})"),
				   J(R"({"keep":true})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"keep":true,"a":{"b":{"v":1}}})"));
}

TEST(Step, ResultPathNullDiscardsTheResult) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":5,"ResultPath":null,"End":true}})"),
				   J(R"({"keep":1})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"keep":1})"));
}

TEST(Step, ResultPathDollarReplacesTheInput) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":5,"ResultPath":"$","End":true}})"),
				   J(R"({"keep":1})"));
	EXPECT_EQ(outcome(a)["output"], 5);
}

TEST(Step, ResultPathIntoAnArrayElement) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":"x","ResultPath":"$.l[1]","End":true}})"),
				   J(R"({"l":[0,1,2]})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"l":[0,"x",2]})"));
}

TEST(Step, ResultPathThroughAScalarFailsInAPass) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":1,"ResultPath":"$.s.x","End":true}})"),
				   J(R"({"s":"text"})"));
	EXPECT_EQ(outcome(a)["kind"], "failed");
	EXPECT_EQ(outcome(a)["error"], "States.ResultPathMatchFailure");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("$.s.x"), std::string::npos);
}

TEST(Step, ResultPathOnAnInputThatIsNotAnObjectFails) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Result":1,"ResultPath":"$.x","End":true}})"),
				   J("[1]"));
	EXPECT_EQ(outcome(a)["error"], "States.ResultPathMatchFailure");
}

TEST(Step, InputPathOutputPathAndParameters) {
	auto a = start(machine(R"({"A":{"Type":"Pass","InputPath":"$.in",
	  "Parameters":{"fixed":1,"v.$":"$.v","nested":{"w.$":"$.w"},"list":[{"x.$":"$.v"}]},
	  "OutputPath":"$.nested","End":true}})"),
				   J(R"({"in":{"v":7,"w":"w!"}})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"w":"w!"})"));
}

TEST(Step, ParametersProcessesNestedArrays) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Parameters":{"list":[{"x.$":"$.v"},2]},"End":true}})"),
				   J(R"({"v":"vv"})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"list":[{"x":"vv"},2]})"));
}

TEST(Step, InputPathNullGivesAnEmptyObject) {
	auto a = start(machine(R"({"A":{"Type":"Pass","InputPath":null,"End":true}})"), J(R"({"x":1})"));
	EXPECT_EQ(outcome(a)["output"], json::object());
}

TEST(Step, OutputPathNullGivesAnEmptyObject) {
	auto a = start(machine(R"({"A":{"Type":"Pass","OutputPath":null,"End":true}})"), J(R"({"x":1})"));
	EXPECT_EQ(outcome(a)["output"], json::object());
}

TEST(Step, MissingInputPathIsStatesRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Pass","InputPath":"$.nope","End":true}})"), J("{}"));
	EXPECT_EQ(outcome(a)["kind"], "failed");
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("InputPath $.nope"), std::string::npos);
}

TEST(Step, MissingOutputPathIsStatesRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Succeed","OutputPath":"$.nope"}})"), J("{}"));
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
}

TEST(Step, MissingParametersPathIsStatesRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Parameters":{"x.$":"$.nope"},"End":true}})"),
				   J("{}"));
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("Parameters $.nope"), std::string::npos);
}

TEST(Step, SucceedAppliesInputAndOutputPath) {
	auto a = start(machine(R"({"A":{"Type":"Succeed","InputPath":"$.a","OutputPath":"$.b"}})"),
				   J(R"({"a":{"b":3}})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":3})"));
}

TEST(Step, FailWithErrorAndCause) {
	auto a = start(machine(R"({"A":{"Type":"Fail","Error":"Bad","Cause":"because"}})"), J("{}"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"failed","error":"Bad","cause":"because","state":"A","state_input":{}})"));
}

TEST(Step, FailWithoutErrorOrCauseGivesNulls) {
	auto a = start(machine(R"({"A":{"Type":"Fail"}})"), J("{}"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"failed","error":null,"cause":null,"state":"A","state_input":{}})"));
}

TEST(Step, FailWithErrorPathAndCausePath) {
	auto a = start(machine(R"({"A":{"Type":"Fail","ErrorPath":"$.e","CausePath":"$$.Execution.Name"}})"),
				   J(R"({"e":"Oops"})"), 1000, kCtx);
	EXPECT_EQ(outcome(a), J(R"({"kind":"failed","error":"Oops","cause":"run-42","state":"A","state_input":{"e":"Oops"}})"));
}

TEST(Step, FailCausePathWithAnIntrinsic) {
	auto a = start(machine(R"j({"A":{"Type":"Fail","Error":"E","CausePath":"States.Format('n={}', $.n)"}})j"),
				   J(R"({"n":3})"));
	EXPECT_EQ(outcome(a)["cause"], "n=3");
}

TEST(Step, FailErrorPathThatIsNotAStringIsRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Fail","ErrorPath":"$.e"}})"), J(R"({"e":5})"));
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	auto b = start(machine(R"({"A":{"Type":"Fail","ErrorPath":"$.missing"}})"), J("{}"));
	EXPECT_EQ(outcome(b)["error"], "States.Runtime");
}

TEST(Step, AnInlineLoopIsStoppedWithStatesRuntime) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}})"),
				   J("{}"));
	EXPECT_EQ(outcome(a)["error"], "States.Runtime");
	EXPECT_EQ(a["entered"].size(), 10000u);
}

// ---------------------------------------------------------------- Task

TEST(Step, TaskStopsWithItsInputAndSettings) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:resize","InputPath":"$.in",
	  "Parameters":{"size.$":"$.size","token.$":"$$.Task.Token"},"TimeoutSeconds":30,
	  "HeartbeatSeconds":10,"OnlyOnce":true,"Retry":[{"ErrorEquals":["X"]},{"ErrorEquals":["Y"]}],
	  "End":true}})");
	auto a = start(def, J(R"({"in":{"size":3}})"), 1000, kCtx);
	EXPECT_EQ(outcome(a), J(R"({"kind":"task","state":"A","resource":"handler:resize",
	  "state_input":{"in":{"size":3}},"task_input":{"size":3,"token":"tok-1"},
	  "timeout_s":30,"heartbeat_s":10,"only_once":true,"retry_counts":[0,0],"delay_ms":0})"));
}

TEST(Step, WaitForTaskTokenRunsItsResourceThenWaitsForTheToken) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:notify.waitForTaskToken",
	  "Parameters":{"t.$":"$$.Task.Token"},"ResultPath":"$.r","End":true}})");
	auto d = asl::compile(def);
	EXPECT_TRUE(asl::reads_context(*d));  // its outcome carries the token
	EXPECT_FALSE(asl::start_task(*d).has_value());
	EXPECT_FALSE(asl::success_ends(*d, "A"));
	auto a = start(def, J(R"({"x":1})"), 1000, kCtx);
	EXPECT_EQ(outcome(a)["resource"], "handler:notify");
	EXPECT_EQ(outcome(a)["token"], "tok-1");
	EXPECT_EQ(outcome(a)["task_input"], J(R"({"t":"tok-1"})"));
	// the handler's return: the state waits; the result sent by the token goes on
	json req = task_request("task_succeeded", "A", J(R"({"x":1})"));
	req["result"] = "handler's";
	EXPECT_EQ(run(def, req), J(R"({"entered":[],"outcome":{"kind":"callback","state":"A"}})"));
	req["result"] = "token's";
	req["callback"] = true;
	EXPECT_EQ(outcome(run(def, req)), J(R"({"kind":"succeeded","output":{"x":1,"r":"token's"}})"));
	// a plain task ignores the flag; the suffix needs a resource that runs
	EXPECT_FALSE(outcome(start(machine(R"({"A":{"Type":"Task","Resource":"handler:n","End":true}})"),
							   J("{}"), 1000, kCtx))
					 .contains("token"));
	EXPECT_NE(compile_error(machine(R"({"A":{"Type":"Task","Resource":"activity:a.waitForTaskToken","End":true}})"))
				  .find("\".waitForTaskToken\" follows"),
			  std::string::npos);
}

TEST(Step, TaskWithoutTimeoutsGivesNulls) {
	auto a = start(machine(R"({"A":{"Type":"Task","Resource":"activity:approve","End":true}})"),
				   J(R"({"x":1})"));
	EXPECT_EQ(outcome(a)["timeout_s"], nullptr);
	EXPECT_EQ(outcome(a)["heartbeat_s"], nullptr);
	EXPECT_EQ(outcome(a)["only_once"], false);
	EXPECT_EQ(outcome(a)["retry_counts"], json::array());
	EXPECT_EQ(outcome(a)["task_input"], J(R"({"x":1})"));
}

TEST(Step, TimeoutAndHeartbeatPathsResolveAtEntry) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"genroc:noop","TimeoutSecondsPath":"$.t",
	  "HeartbeatSecondsPath":"$.h","End":true}})");
	auto a = start(def, J(R"({"t":60,"h":5})"));
	EXPECT_EQ(outcome(a)["timeout_s"], 60);
	EXPECT_EQ(outcome(a)["heartbeat_s"], 5);
	EXPECT_EQ(outcome(start(def, J(R"({"t":"60","h":5})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"t":0,"h":5})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"t":5,"h":5})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"h":5})")))["error"], "States.Runtime");
}

TEST(Step, TaskSucceededAppliesResultSelectorResultPathOutputPath) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","ResultSelector":{"n.$":"$.count",
	  "state.$":"$$.State.Name"},"ResultPath":"$.res","OutputPath":"$.res","Next":"B"},
	  "B":{"Type":"Succeed"}})");
	auto req = task_request("task_succeeded", "A", J(R"({"orig":1})"));
	req["result"] = J(R"({"count":4,"other":0})");
	auto a = run(def, req);
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":{"n":4,"state":"A"}})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"B","type":"Succeed"}])"));
}

TEST(Step, TaskResultReplacesTheInputByDefault) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","End":true}})");
	auto req = task_request("task_succeeded", "A", J(R"({"orig":1})"));
	req["result"] = J(R"([1,2])");
	EXPECT_EQ(outcome(run(def, req))["output"], J("[1,2]"));
}

TEST(Step, TaskResultPathFailureIsCatchable) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","ResultPath":"$.s.x",
	  "Catch":[{"ErrorEquals":["States.ResultPathMatchFailure"],"Next":"B","ResultPath":"$.err"}],
	  "End":true},"B":{"Type":"Succeed"}})");
	auto req = task_request("task_succeeded", "A", J(R"({"s":1})"));
	req["result"] = 2;
	auto o = outcome(run(def, req));
	EXPECT_EQ(o["kind"], "succeeded");
	EXPECT_EQ(o["output"]["s"], 1);
	EXPECT_EQ(o["output"]["err"]["Error"], "States.ResultPathMatchFailure");
}

TEST(Step, TaskResultSelectorMissingPathIsRuntimeAndNotCaught) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","ResultSelector":{"x.$":"$.no"},
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"B"}],"End":true},"B":{"Type":"Succeed"}})");
	auto req = task_request("task_succeeded", "A", J("{}"));
	req["result"] = J("{}");
	auto o = outcome(run(def, req));
	EXPECT_EQ(o["kind"], "failed");
	EXPECT_EQ(o["error"], "States.Runtime");
}

TEST(Step, TaskFailedWithoutRetryOrCatchFailsTheInstance) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","End":true}})");
	auto req = task_request("task_failed", "A", J("{}"));
	req["error"] = "Boom";
	req["cause"] = "it broke";
	EXPECT_EQ(outcome(run(def, req)), J(R"({"kind":"failed","error":"Boom","cause":"it broke","state":"A","state_input":{}})"));
	req.erase("cause");
	EXPECT_EQ(outcome(run(def, req)), J(R"({"kind":"failed","error":"Boom","cause":null,"state":"A","state_input":{}})"));
}

// ---------------------------------------------------------------- Retry

namespace {

json retry_def(const std::string &retry) {
	return machine(R"({"A":{"Type":"Task","Resource":"handler:h","Retry":)" + retry +
				   R"(,"Parameters":{"n.$":"$$.State.RetryCount"},"End":true}})");
}

json fail_with(const json &def, const std::string &error, const json &counts) {
	auto req = task_request("task_failed", "A", J(R"({"in":1})"));
	req["error"] = error;
	req["retry_counts"] = counts;
	return outcome(run(def, req));
}

}  // namespace

TEST(Retry, DefaultsAreOneSecondTimesTwoThreeTimes) {
	auto def = retry_def(R"([{"ErrorEquals":["States.ALL"]}])");
	auto o = fail_with(def, "Boom", J("[0]"));
	EXPECT_EQ(o["kind"], "task");
	EXPECT_EQ(o["delay_ms"], 1000);
	EXPECT_EQ(o["retry_counts"], J("[1]"));
	EXPECT_EQ(o["state_input"], J(R"({"in":1})"));
	EXPECT_EQ(o["task_input"], J(R"({"n":1})"));  // $$.State.RetryCount
	EXPECT_EQ(fail_with(def, "Boom", J("[1]"))["delay_ms"], 2000);
	EXPECT_EQ(fail_with(def, "Boom", J("[2]"))["delay_ms"], 4000);
	auto spent = fail_with(def, "Boom", J("[3]"));
	EXPECT_EQ(spent["kind"], "failed");
	EXPECT_EQ(spent["error"], "Boom");
}

TEST(Retry, BackoffArithmeticWithMaxDelay) {
	auto def = retry_def(R"([{"ErrorEquals":["E"],"IntervalSeconds":3,"BackoffRate":1.5,
	  "MaxAttempts":10,"MaxDelaySeconds":10,"JitterStrategy":"NONE"}])");
	EXPECT_EQ(fail_with(def, "E", J("[0]"))["delay_ms"], 3000);
	EXPECT_EQ(fail_with(def, "E", J("[1]"))["delay_ms"], 4500);
	EXPECT_EQ(fail_with(def, "E", J("[2]"))["delay_ms"], 6750);
	EXPECT_EQ(fail_with(def, "E", J("[3]"))["delay_ms"], 10000);  // 10125 capped
	EXPECT_EQ(fail_with(def, "E", J("[9]"))["delay_ms"], 10000);
	EXPECT_EQ(fail_with(def, "E", J("[10]"))["kind"], "failed");
}

TEST(Retry, FullJitterStaysWithinBoundsAndVaries) {
	auto def = retry_def(R"([{"ErrorEquals":["E"],"IntervalSeconds":2,"MaxAttempts":5,
	  "JitterStrategy":"FULL"}])");
	std::set<int64_t> seen;
	for (int i = 0; i < 200; i++) {
		const int64_t d = fail_with(def, "E", J("[2]"))["delay_ms"].get<int64_t>();
		ASSERT_GE(d, 0);
		ASSERT_LE(d, 8000);
		seen.insert(d);
	}
	EXPECT_GT(seen.size(), 50u);  // random, not a constant
}

TEST(Retry, MaxAttemptsZeroNeverRetries) {
	auto def = retry_def(R"([{"ErrorEquals":["E"],"MaxAttempts":0}])");
	EXPECT_EQ(fail_with(def, "E", J("[0]"))["kind"], "failed");
}

TEST(Retry, FirstMatchingRetrierDecidesEvenWhenSpent) {
	auto def = retry_def(R"([{"ErrorEquals":["E"],"MaxAttempts":1},
	  {"ErrorEquals":["States.ALL"],"MaxAttempts":5}])");
	auto o = fail_with(def, "E", J("[0,0]"));
	EXPECT_EQ(o["retry_counts"], J("[1,0]"));
	EXPECT_EQ(fail_with(def, "E", J("[1,0]"))["kind"], "failed");
	EXPECT_EQ(fail_with(def, "Other", J("[1,0]"))["retry_counts"], J("[1,1]"));
}

TEST(Retry, TaskFailedMatchesAllButTimeouts) {
	auto def = retry_def(R"([{"ErrorEquals":["States.TaskFailed"]}])");
	EXPECT_EQ(fail_with(def, "Custom", J("[0]"))["kind"], "task");
	EXPECT_EQ(fail_with(def, "States.Timeout", J("[0]"))["kind"], "failed");
	EXPECT_EQ(fail_with(def, "States.HeartbeatTimeout", J("[0]"))["kind"], "failed");
}

TEST(Retry, TimeoutMatchesHeartbeatTimeout) {
	auto def = retry_def(R"([{"ErrorEquals":["States.Timeout"]}])");
	EXPECT_EQ(fail_with(def, "States.HeartbeatTimeout", J("[0]"))["kind"], "task");
	EXPECT_EQ(fail_with(def, "States.Timeout", J("[0]"))["kind"], "task");
	EXPECT_EQ(fail_with(def, "Other", J("[0]"))["kind"], "failed");
}

TEST(Retry, HandlerMissingSkipsRetriers) {
	auto def = retry_def(R"([{"ErrorEquals":["States.ALL"]}])");
	EXPECT_EQ(fail_with(def, "genroc.HandlerMissing", J("[0]"))["kind"], "failed");
}

TEST(Retry, StatesRuntimeIsNeverRetried) {
	auto def = retry_def(R"([{"ErrorEquals":["States.ALL"]}])");
	EXPECT_EQ(fail_with(def, "States.Runtime", J("[0]"))["kind"], "failed");
}

TEST(Retry, RetryCountsOfTheWrongShapeAreARequestError) {
	auto def = retry_def(R"([{"ErrorEquals":["E"]}])");
	auto req = task_request("task_failed", "A", J("{}"));
	req["error"] = "E";
	req["retry_counts"] = J("[0,0]");
	try {
		run(def, req);
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "22023");
	}
}

// ---------------------------------------------------------------- Catch

namespace {

json catch_def() {
	return machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	  "Catch":[{"ErrorEquals":["E1","E2"],"Next":"One"},
	           {"ErrorEquals":["E2"],"Next":"Two"},
	           {"ErrorEquals":["States.ALL"],"Next":"All","ResultPath":"$.error"}],"End":true},
	  "One":{"Type":"Pass","Result":"one","ResultPath":"$.via","End":true},
	  "Two":{"Type":"Pass","Result":"two","ResultPath":"$.via","End":true},
	  "All":{"Type":"Pass","Result":"all","ResultPath":"$.via","End":true}})");
}

}  // namespace

TEST(Catch, CatchersAreTriedInOrder) {
	auto def = catch_def();
	EXPECT_EQ(fail_with(def, "E2", nullptr)["output"],
			  J(R"({"Error":"E2","via":"one"})"));  // default ResultPath $ replaces the input
	auto o = fail_with(def, "Zzz", nullptr);
	EXPECT_EQ(o["output"], J(R"({"in":1,"error":{"Error":"Zzz"},"via":"all"})"));
}

TEST(Catch, CauseIsPassedOn) {
	auto req = task_request("task_failed", "A", J(R"({"in":1})"));
	req["error"] = "Zzz";
	req["cause"] = "why";
	auto a = run(catch_def(), req);
	EXPECT_EQ(outcome(a)["output"]["error"], J(R"({"Error":"Zzz","Cause":"why"})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"All","type":"Pass"}])"));
}

TEST(Catch, AllDoesNotCatchStatesRuntime) {
	auto o = fail_with(catch_def(), "States.Runtime", nullptr);
	EXPECT_EQ(o["kind"], "failed");
	EXPECT_EQ(o["error"], "States.Runtime");
}

TEST(Catch, CatchAfterRetriesAreSpent) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	  "Retry":[{"ErrorEquals":["E"],"MaxAttempts":1}],
	  "Catch":[{"ErrorEquals":["E"],"Next":"B","ResultPath":null}],"End":true},
	  "B":{"Type":"Succeed"}})");
	EXPECT_EQ(fail_with(def, "E", J("[0]"))["kind"], "task");
	auto o = fail_with(def, "E", J("[1]"));
	EXPECT_EQ(o, J(R"({"kind":"succeeded","output":{"in":1}})"));
}

TEST(Catch, HandlerMissingIsCaught) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	  "Retry":[{"ErrorEquals":["States.ALL"]}],
	  "Catch":[{"ErrorEquals":["genroc.HandlerMissing"],"Next":"B"}],"End":true},
	  "B":{"Type":"Succeed"}})");
	EXPECT_EQ(fail_with(def, "genroc.HandlerMissing", J("[0]"))["output"],
			  J(R"({"Error":"genroc.HandlerMissing"})"));
}

TEST(Catch, IntrinsicFailureInParametersIsCaughtWithoutRetry) {
	auto def = machine(R"j({"A":{"Type":"Task","Resource":"handler:h",
	  "Parameters":{"x.$":"States.ArrayGetItem($.l, 5)"},
	  "Retry":[{"ErrorEquals":["States.ALL"]}],
	  "Catch":[{"ErrorEquals":["States.IntrinsicFailure"],"Next":"B","ResultPath":"$.err"}],"End":true},
	  "B":{"Type":"Succeed"}})j");
	auto a = start(def, J(R"({"l":[1]})"));
	EXPECT_EQ(outcome(a)["kind"], "succeeded");
	EXPECT_EQ(outcome(a)["output"]["err"]["Error"], "States.IntrinsicFailure");
	EXPECT_EQ(a["entered"], J(R"([{"state":"A","type":"Task"},{"state":"B","type":"Succeed"}])"));
}

TEST(Catch, CatcherResultPathThatCannotApplyFailsTheInstance) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h",
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"B","ResultPath":"$.in.x"}],"End":true},
	  "B":{"Type":"Succeed"}})");
	auto o = fail_with(def, "E", nullptr);
	EXPECT_EQ(o["error"], "States.ResultPathMatchFailure");
}

// ---------------------------------------------------------------- Wait

TEST(Wait, SecondsInTheFutureStops) {
	auto a = start(machine(R"({"A":{"Type":"Wait","Seconds":10,"Next":"B"},"B":{"Type":"Succeed"}})"),
				   J(R"({"x":1})"), 5000);
	EXPECT_EQ(outcome(a), J(R"({"kind":"wait","state":"A","state_input":{"x":1},"until_ms":15000})"));
}

TEST(Wait, ZeroSecondsContinuesInline) {
	auto a = start(machine(R"({"A":{"Type":"Wait","Seconds":0,"Next":"B"},"B":{"Type":"Succeed"}})"),
				   J(R"({"x":1})"));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":{"x":1}})"));
}

TEST(Wait, TimestampInThePastContinuesInlineAndFutureStops) {
	auto def = machine(R"({"A":{"Type":"Wait","Timestamp":"2026-01-01T00:00:00Z","End":true}})");
	int64_t t;
	ASSERT_TRUE(asl::parse_time("2026-01-01T00:00:00Z", t));
	EXPECT_EQ(outcome(start(def, J("{}"), t))["kind"], "succeeded");  // due exactly now
	auto o = outcome(start(def, J("{}"), t - 1));
	EXPECT_EQ(o["kind"], "wait");
	EXPECT_EQ(o["until_ms"], t);
}

TEST(Wait, SecondsPathAndTimestampPathAfterInputPath) {
	auto def = machine(R"({"A":{"Type":"Wait","InputPath":"$.w","SecondsPath":"$.s","Next":"B"},
	  "B":{"Type":"Succeed"}})");
	EXPECT_EQ(outcome(start(def, J(R"({"w":{"s":3}})"), 1000))["until_ms"], 4000);
	EXPECT_EQ(outcome(start(def, J(R"({"w":{"s":-1}})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"w":{"s":"3"}})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"w":{"s":1.5}})")))["error"], "States.Runtime");
	EXPECT_EQ(outcome(start(def, J(R"({"w":{}})")))["error"], "States.Runtime");
	auto ts = machine(R"({"A":{"Type":"Wait","TimestampPath":"$.t","End":true}})");
	auto o = outcome(start(ts, J(R"({"t":"2030-01-01T00:00:00+01:00"})"), 0));
	int64_t t;
	ASSERT_TRUE(asl::parse_time("2029-12-31T23:00:00Z", t));
	EXPECT_EQ(o["until_ms"], t);
	EXPECT_EQ(outcome(start(ts, J(R"({"t":"tomorrow"})")))["error"], "States.Runtime");
}

TEST(Wait, TimerFiredAppliesOutputPathAndGoesOn) {
	auto def = machine(R"({"A":{"Type":"Wait","Seconds":10,"InputPath":"$.a","OutputPath":"$.b",
	  "Next":"B"},"B":{"Type":"Pass","End":true}})");
	auto a = run(def, task_request("timer_fired", "A", J(R"({"a":{"b":"done"}})")));
	EXPECT_EQ(outcome(a), J(R"({"kind":"succeeded","output":"done"})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"B","type":"Pass"}])"));
}

// ---------------------------------------------------------------- context object

TEST(Context, StoreFieldsAndStateFields) {
	auto def = machine(R"({"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Parameters":{
	  "id.$":"$$.Execution.Id","machine.$":"$$.StateMachine.Name","state.$":"$$.State.Name",
	  "entered.$":"$$.State.EnteredTime","retries.$":"$$.State.RetryCount","all.$":"$$.Execution.Input"},
	  "End":true}})");
	int64_t now;
	ASSERT_TRUE(asl::parse_time("2026-11-29T10:20:46.123Z", now));
	auto o = outcome(start(def, J("{}"), now, kCtx));
	EXPECT_EQ(o["output"], J(R"({"id":"42","machine":"m","state":"B",
	  "entered":"2026-11-29T10:20:46.123Z","retries":0,"all":{"a":1}})"));
}

TEST(Context, MissingContextFieldIsRuntime) {
	auto def = machine(R"({"A":{"Type":"Pass","Parameters":{"x.$":"$$.Nope"},"End":true}})");
	EXPECT_EQ(outcome(start(def, J("{}"), 0, kCtx))["error"], "States.Runtime");
}

// ---------------------------------------------------------------- requests

TEST(Request, MalformedRequestsAre22023) {
	auto d = asl::compile(machine(R"({"A":{"Type":"Task","Resource":"handler:h","Next":"W"},
	  "W":{"Type":"Wait","Seconds":1,"End":true}})"));
	const char *bad[] = {
		R"("start")",
		R"({"now_ms":1})",
		R"({"op":"start"})",
		R"({"op":"start","now_ms":"1"})",
		R"({"op":"start","now_ms":1.5})",
		R"({"op":"start","now_ms":253402300800000})",
		R"({"op":"start","now_ms":-62167219200001})",
		R"({"op":"explode","now_ms":1})",
		R"({"op":"start","now_ms":1,"context":[]})",
		R"({"op":"task_succeeded","now_ms":1,"state":"A","state_input":{}})",
		R"({"op":"task_succeeded","now_ms":1,"state":"Nope","state_input":{},"result":1})",
		R"({"op":"task_succeeded","now_ms":1,"state":"W","state_input":{},"result":1})",
		R"({"op":"task_failed","now_ms":1,"state":"A","state_input":{}})",
		R"({"op":"task_failed","now_ms":1,"state":"A","state_input":{},"error":""})",
		R"({"op":"task_failed","now_ms":1,"state":"A","state_input":{},"error":"E","cause":3})",
		R"({"op":"timer_fired","now_ms":1,"state":"A","state_input":{}})",
		R"({"op":"timer_fired","now_ms":1,"state":"W"})",
	};
	for (const char *b : bad) {
		try {
			asl::step(*d, J(b));
			ADD_FAILURE() << "accepted: " << b;
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "22023") << b;
			EXPECT_NE(std::string(e.what()).find("invalid step request"), std::string::npos);
		}
	}
}

TEST(Request, StartWithoutInputUsesAnEmptyObject) {
	auto d = asl::compile(machine(R"({"A":{"Type":"Pass","End":true}})"));
	auto a = asl::step(*d, J(R"({"op":"start","now_ms":5})"));
	EXPECT_EQ(outcome(a)["output"], json::object());
}

// ---------------------------------------------------------------- finer points

TEST(Step, PassResultWinsOverParameters) {
	auto a = start(machine(R"({"A":{"Type":"Pass","Parameters":{"p":1},"Result":{"r":2},"End":true}})"),
				   J("{}"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"r":2})"));
}

TEST(Step, ResultPathAppliesToTheRawInputNotTheInputPath) {
	auto a = start(machine(R"({"A":{"Type":"Pass","InputPath":"$.in","ResultPath":"$.out","End":true}})"),
				   J(R"({"in":{"v":1},"keep":true})"));
	EXPECT_EQ(outcome(a)["output"], J(R"({"in":{"v":1},"keep":true,"out":{"v":1}})"));
}

TEST(Retry, PostTaskErrorRunsTheTaskAgain) {
	auto def = machine(R"({"A":{"Type":"Task","Resource":"handler:h","ResultPath":"$.s.x",
	  "Retry":[{"ErrorEquals":["States.ResultPathMatchFailure"],"MaxAttempts":1}],"End":true}})");
	auto req = task_request("task_succeeded", "A", J(R"({"s":1})"));
	req["result"] = 2;
	auto o = outcome(run(def, req));
	EXPECT_EQ(o["kind"], "task");
	EXPECT_EQ(o["retry_counts"], J("[1]"));
	req["retry_counts"] = J("[1]");
	EXPECT_EQ(outcome(run(def, req))["error"], "States.ResultPathMatchFailure");
}

TEST(Retry, TaskInputFailingOnTheRetryGoesToCatch) {
	// The retry's input reads $$.State.RetryCount, which is out of range on
	// the first retry: that failure is caught, and not retried again.
	auto def = machine(R"j({"A":{"Type":"Task","Resource":"handler:h",
	  "Parameters":{"v.$":"States.ArrayGetItem($.l, $$.State.RetryCount)"},
	  "Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":5}],
	  "Catch":[{"ErrorEquals":["States.IntrinsicFailure"],"Next":"B","ResultPath":"$.err"}],
	  "End":true},"B":{"Type":"Succeed"}})j");
	auto first = outcome(start(def, J(R"({"l":["only"]})")));
	EXPECT_EQ(first["task_input"], J(R"({"v":"only"})"));
	auto req = task_request("task_failed", "A", J(R"({"l":["only"]})"));
	req["error"] = "Boom";
	req["retry_counts"] = J("[0]");
	auto o = outcome(run(def, req));
	EXPECT_EQ(o["kind"], "succeeded");
	EXPECT_EQ(o["output"]["err"]["Error"], "States.IntrinsicFailure");
}

TEST(Wait, TimestampInlineAppliesInputAndOutputPath) {
	auto def = machine(R"({"A":{"Type":"Wait","Timestamp":"2000-01-01T00:00:00Z","InputPath":"$.a",
	  "OutputPath":"$.b","End":true}})");
	EXPECT_EQ(outcome(start(def, J(R"({"a":{"b":7}})"), 1'000'000'000'000))["output"], 7);
}

TEST(Wait, FutureWaitKeepsTheRawInput) {
	auto def = machine(R"({"A":{"Type":"Wait","SecondsPath":"$.s","InputPath":"$.w","End":true}})");
	auto o = outcome(start(def, J(R"({"w":{"s":2},"other":1})"), 0));
	EXPECT_EQ(o["state_input"], J(R"({"w":{"s":2},"other":1})"));
	EXPECT_EQ(o["until_ms"], 2000);
}

TEST(Step, StateNamesWithSpecialCharacters) {
	json def = J(R"({"StartAt":"first step","States":{"first step":{"Type":"Task",
	  "Resource":"activity:x","Next":"it's done"},"it's done":{"Type":"Succeed"}}})");
	auto o = outcome(start(def, J("{}")));
	EXPECT_EQ(o["state"], "first step");
	auto req = task_request("task_succeeded", "first step", J("{}"));
	req["result"] = 1;
	auto a = run(def, req);
	EXPECT_EQ(a["entered"], J(R"([{"state":"it's done","type":"Succeed"}])"));
	EXPECT_EQ(compile_error(R"({"StartAt":"A","States":{"A":{"Type":"Pass","Next":"it's"}}})"),
			  "invalid definition at $.States.A.Next: unknown state \"it's\"");
	EXPECT_EQ(compile_error(R"({"StartAt":"A","States":{"A":{"Type":"Succeed"},"it's":{"Type":"Succeed"}}})"),
			  "invalid definition at $.States['it\\'s']: state \"it's\" is unreachable from StartAt");
}

TEST(Step, TheStoreContextIsNotChangedButStateIsReplaced) {
	json ctx = kCtx;
	ctx["State"] = {{"Name", "stale"}};
	auto def = machine(R"({"A":{"Type":"Pass","Parameters":{"s.$":"$$.State.Name","t.$":"$$.Task.Token"},
	  "End":true}})");
	EXPECT_EQ(outcome(start(def, J("{}"), 0, ctx))["output"], J(R"({"s":"A","t":"tok-1"})"));
}
