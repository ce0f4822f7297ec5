// callbacks_test.cpp — .waitForTaskToken tasks: the handler runs and
// returns, the instance waits for the result sent with the task token
// ($$.Task.Token / $states.context.Task.Token in its input), through
// ResultPath, Retry and Catch; HeartbeatSeconds and TimeoutSeconds; one
// token per attempt, used once.
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json callback_def(const json &extra = json::object()) {
	json t = {{"Type", "Task"},
			  {"Resource", "handler:notify.waitForTaskToken"},
			  {"Parameters", {{"doc.$", "$.doc"}, {"token.$", "$$.Task.Token"}}},
			  {"ResultPath", "$.reply"},
			  {"Next", "Done"}};
	t.update(extra);
	json states = {{"Notify", t}, {"Done", {{"Type", "Pass"}, {"End", true}}}};
	if (t.contains("Catch")) states["Caught"] = {{"Type", "Pass"}, {"End", true}};
	return {{"StartAt", "Notify"}, {"States", states}};
}

std::string token_of(const Task &t) {
	EXPECT_TRUE(t.input.contains("token") && t.input["token"].is_string()) << t.input.dump();
	return t.input.value("token", "");
}
}  // namespace

TEST_P(StoreTest, CallbackTokenInInputAndItsResultThroughResultPath) {
	define("cb", callback_def());
	worker("w1");
	auto r = store().start("cb", {{"doc", "d-1"}}, json::object());
	EXPECT_EQ(r.status, "ready");
	Task t = claim_one("w1");
	// the handler the resource names, its input with the token
	EXPECT_EQ(t.resource, "handler:notify");
	const std::string token = token_of(t);
	EXPECT_GE(token.size(), 32u);
	EXPECT_EQ(t.input.at("doc"), "d-1");
	// the handler's return hands the task over to waiting: its result is not the task's
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, {{"ignored", true}}), "waiting");
	json inst = instance(r.instance_id);
	EXPECT_EQ(inst.at("status"), "waiting");
	EXPECT_EQ(inst.at("wait_kind"), "callback");
	EXPECT_EQ(inst.at("state"), "Notify");
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());

	store().activity_heartbeat(token);
	EXPECT_EQ(store().activity_succeed(token, {{"ok", true}}), "succeeded");
	EXPECT_EQ(instance(r.instance_id).at("output"), json::parse(R"({"doc": "d-1", "reply": {"ok": true}})"));
	// used once
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(token, json::object()));
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_fail(token, "E", ""));
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_heartbeat(token));
	auto ev = events(r.instance_id);
	auto submitted = std::find(ev.begin(), ev.end(), "task_submitted");
	ASSERT_NE(submitted, ev.end());
	EXPECT_NE(std::find(submitted, ev.end(), "task_succeeded"), ev.end());
}

TEST_P(StoreTest, CallbackTasksReportedInABatchWaitEach) {
	define("cb", callback_def());
	worker("w1");
	int64_t a = start("cb", {{"doc", 1}}), b = start("cb", {{"doc", 2}});
	auto tasks = store().claim("w1", {"default"}, 5);
	ASSERT_EQ(tasks.size(), 2u);
	auto out = store().complete_many({{tasks[0].instance_id, tasks[0].epoch, json::object()},
									  {tasks[1].instance_id, tasks[1].epoch, json::object()}},
									 "w1", {"default"});
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0].status, "waiting");
	EXPECT_EQ(out[1].status, "waiting");
	EXPECT_EQ(instance(a).at("wait_kind"), "callback");
	EXPECT_EQ(instance(b).at("wait_kind"), "callback");
	EXPECT_NE(token_of(tasks[0]), token_of(tasks[1]));
	EXPECT_EQ(store().activity_succeed(token_of(tasks[1]), 2), "succeeded");
	EXPECT_EQ(status(a), "waiting");
	EXPECT_EQ(instance(b).at("output"), json::parse(R"({"doc": 2, "reply": 2})"));
}

// The batch paths keep the token too: start_many's first task, and a
// batch of reports whose next state is a callback task.
TEST_P(StoreTest, CallbackTasksScheduledByBatchesKeepTheirTokens) {
	define("first", callback_def());
	define("second", json::parse(R"({"StartAt": "Prep", "States": {
	  "Prep": {"Type": "Task", "Resource": "handler:prep", "Next": "Notify"},
	  "Notify": {"Type": "Task", "Resource": "handler:notify.waitForTaskToken",
	             "Parameters": {"token.$": "$$.Task.Token"}, "ResultPath": "$.reply", "End": true}}})"));
	worker("w1");
	auto started = store().start_many("first", json::array({json{{"doc", 1}}, json{{"doc", 2}}}), json::object());
	ASSERT_EQ(started.size(), 2u);
	int64_t c = start("second", {{"n", 1}}), d = start("second", {{"n", 2}});
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 4u);
	std::vector<Store::Completion> reports;
	for (const Task &t : tasks) reports.push_back({t.instance_id, t.epoch, json::object()});
	store().complete_many(reports, "", {});
	// the Prep tasks went on to their callback task, ready with a token of its own
	auto next = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(next.size(), 2u);
	for (const Task &t : next) EXPECT_EQ(store().complete(t.instance_id, t.epoch, json::object()), "waiting");
	for (const Task &t : tasks) {
		if (t.state == "Notify") {
			EXPECT_EQ(store().activity_succeed(token_of(t), "ok"), "succeeded");
		}
	}
	for (const Task &t : next) EXPECT_EQ(store().activity_succeed(token_of(t), "ok"), "succeeded");
	EXPECT_EQ(instance(c).at("output"), json::parse(R"({"reply": "ok"})"));  // Prep's result replaced the input
	EXPECT_EQ(status(d), "succeeded");
	EXPECT_EQ(instance(started[1].instance_id).at("output"), json::parse(R"({"doc": 2, "reply": "ok"})"));
}

TEST_P(StoreTest, CallbackFailureCaughtWithJsonataToken) {
	define("cb", json::parse(R"({
	  "QueryLanguage": "JSONata", "StartAt": "Notify",
	  "States": {
	    "Notify": {"Type": "Task", "Resource": "genroc:noop.waitForTaskToken",
	               "Arguments": {"t": "{% $states.context.Task.Token %}"}, "Next": "Done",
	               "Catch": [{"ErrorEquals": ["Rejected"], "Output": "{% $states.errorOutput %}", "Next": "Caught"}]},
	    "Done": {"Type": "Succeed"},
	    "Caught": {"Type": "Succeed"}
	  }})"));
	worker("w1");
	int64_t id = start("cb", {{"doc", 0}});
	Task t = claim_one("w1");
	EXPECT_EQ(t.resource, "genroc:noop");
	ASSERT_TRUE(t.input.at("t").is_string());
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, t.input), "waiting");
	EXPECT_EQ(store().activity_fail(t.input.at("t").get<std::string>(), "Rejected", "not signed"), "succeeded");
	EXPECT_EQ(instance(id).at("state"), "Caught");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"Error": "Rejected", "Cause": "not signed"})"));
}

TEST_P(StoreTest, CallbackRetryHasANewTokenAndTheOldOneIsRefused) {
	define("cb", callback_def({{"Retry", json::parse(R"([{"ErrorEquals": ["Rejected"], "IntervalSeconds": 1, "MaxAttempts": 1}])")}}));
	worker("w1");
	int64_t id = start("cb", {{"doc", 3}});
	Task first = claim_one("w1");
	const std::string old = token_of(first);
	EXPECT_EQ(store().complete(first.instance_id, first.epoch, json::object()), "waiting");
	EXPECT_EQ(store().activity_fail(old, "Rejected", ""), "ready");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(old, json::object()));
	at(1);
	Task second = claim_one("w1");
	EXPECT_EQ(second.attempt, 1);
	const std::string fresh = token_of(second);
	EXPECT_NE(fresh, old);
	EXPECT_EQ(store().complete(second.instance_id, second.epoch, json::object()), "waiting");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(old, json::object()));
	EXPECT_EQ(store().activity_succeed(fresh, "yes"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"doc": 3, "reply": "yes"})"));
}

TEST_P(StoreTest, CallbackHeartbeatTimeout) {
	define("cb", callback_def({{"HeartbeatSeconds", 5}, {"TimeoutSeconds", 100}}));
	worker("w1");
	int64_t id = start("cb", {{"doc", 0}});
	Task t = claim_one("w1");
	at(1);
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, json::object()), "waiting");  // heartbeats due from 1 + 5
	at(4);
	store().activity_heartbeat(token_of(t));  // then from 4 + 5
	at(8.999);
	EXPECT_EQ(store().tick(100).at("heartbeats"), 0);
	EXPECT_EQ(status(id), "waiting");
	at(9);
	EXPECT_EQ(store().tick(100).at("heartbeats"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "failed");
	EXPECT_EQ(inst.at("error"), "States.HeartbeatTimeout");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(token_of(t), json::object()));
}

TEST_P(StoreTest, CallbackTimeoutCountsFromTheClaim) {
	define("cb", callback_def({{"TimeoutSeconds", 10}}));
	worker("w1");
	int64_t id = start("cb", {{"doc", 0}});
	Task t = claim_one("w1");
	at(2);
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, json::object()), "waiting");
	at(9.999);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	at(10);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	EXPECT_EQ(instance(id).at("error"), "States.Timeout");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(token_of(t), json::object()));
}

TEST_P(StoreTest, CallbackResultBeforeTheHandlerReturns) {
	define("cb", callback_def());
	worker("w1");
	int64_t id = start("cb", {{"doc", 4}});
	Task t = claim_one("w1");
	// the handler passed the token on, and the answer came first
	EXPECT_EQ(store().activity_succeed(token_of(t), "early"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"doc": 4, "reply": "early"})"));
	// the handler's own report then finds its lease gone
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t.instance_id, t.epoch, json::object()));
}

TEST_P(StoreTest, WaitForTaskTokenOnlyAfterARunnableResource) {
	EXPECT_RAISES(sqlstate::INVALID_DEFINITION, "waitForTaskToken",
				  store().define("bad", callback_def({{"Resource", "activity:x.waitForTaskToken"}})));
	EXPECT_RAISES(sqlstate::INVALID_DEFINITION, "waitForTaskToken",
				  store().define("bad", callback_def({{"Resource", "genroc:event.waitForTaskToken"}})));
}

}  // namespace genroc::conformance
