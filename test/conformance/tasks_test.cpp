// tasks_test.cpp — handler tasks through claim/complete/fail: results and
// paths, Retry back-off (exact eligibility times), Catch order, TimeoutSeconds,
// priority and claim order, queues, delayed start.
#include "fixture.hpp"

namespace genroc::conformance {

TEST_P(StoreTest, TaskResultGoesThroughResultSelectorAndResultPath) {
	define("task", json::parse(R"({
	  "StartAt": "Work",
	  "States": {
	    "Work": {"Type": "Task", "Resource": "handler:calc", "Parameters": {"x.$": "$.x"},
	             "ResultSelector": {"total.$": "$.sum"}, "ResultPath": "$.result", "Next": "Done"},
	    "Done": {"Type": "Succeed"}
	  }})"));
	worker("w1");
	auto r = store().start("task", {{"x", 4}}, json::object());
	EXPECT_EQ(r.status, "ready");
	Task t = claim_one("w1");
	EXPECT_EQ(t.instance_id, r.instance_id);
	EXPECT_EQ(t.state, "Work");
	EXPECT_EQ(t.resource, "handler:calc");
	EXPECT_EQ(t.input, json({{"x", 4}}));
	EXPECT_GT(t.epoch, 0);
	EXPECT_EQ(t.attempt, 0);
	EXPECT_FALSE(t.only_once);
	EXPECT_FALSE(t.timeout_s.has_value());
	EXPECT_EQ(t.lease_expires, time_at(10));
	EXPECT_EQ(status(r.instance_id), "running");
	// Claimed once: nothing more to claim.
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());

	EXPECT_EQ(store().complete(t.instance_id, t.epoch, {{"sum", 9}, {"noise", true}}), "succeeded");
	EXPECT_EQ(instance(r.instance_id).at("output"), json::parse(R"({"x": 4, "result": {"total": 9}})"));
	// A second report of the same lease is refused.
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t.instance_id, t.epoch, json::object()));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().complete(999999, 1, json::object()));
}

TEST_P(StoreTest, RetryBackOffMakesTheTaskEligibleAtExactTimes) {
	define("retry", json::parse(R"({
	  "StartAt": "Call",
	  "States": {
	    "Call": {"Type": "Task", "Resource": "handler:flaky", "End": true,
	             "Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 2, "BackoffRate": 3,
	                        "MaxAttempts": 3, "MaxDelaySeconds": 10, "JitterStrategy": "NONE"}]}
	  }})"));
	worker("w1");
	int64_t id = start("retry");
	// Delays: 2s, 2*3 = 6s, then 2*9 = 18s capped at 10s; the 4th failure ends it.
	const double delays[] = {2, 6, 10};
	double now = 0;
	Task t = claim_one("w1");
	for (int attempt = 0; attempt < 3; attempt++) {
		SCOPED_TRACE("attempt " + std::to_string(attempt));
		EXPECT_EQ(t.attempt, attempt);
		EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "try again"), "ready");
		EXPECT_EQ(instance(id).at("eligible_at"), time_at(now + delays[attempt]));
		at(now + delays[attempt] - 0.001);
		EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty()) << "claimed before its back-off ended";
		now += delays[attempt];
		at(now);
		t = claim_one("w1");
	}
	EXPECT_EQ(t.attempt, 3);
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "for good"), "failed");
	json inst = instance(id);
	EXPECT_EQ(inst.at("error"), "Flaky");
	EXPECT_EQ(inst.at("cause"), "for good");
}

TEST_P(StoreTest, RetryOnlyForMatchingErrorsAndStatesAllIsLast) {
	define("retry2", json::parse(R"({
	  "StartAt": "Call",
	  "States": {
	    "Call": {"Type": "Task", "Resource": "handler:h", "End": true,
	             "Retry": [{"ErrorEquals": ["Slow"], "IntervalSeconds": 1, "MaxAttempts": 1},
	                       {"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "MaxAttempts": 1}]}
	  }})"));
	worker("w1");
	int64_t id = start("retry2");
	Task t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Other", "");
	EXPECT_EQ(instance(id).at("eligible_at"), time_at(5));  // the States.ALL retrier
	at(5);
	t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Other", ""), "failed");
}

TEST_P(StoreTest, CatchTakesTheFirstMatchingCatcherInOrder) {
	define("catch", json::parse(R"({
	  "StartAt": "Call",
	  "States": {
	    "Call": {"Type": "Task", "Resource": "handler:h", "End": true,
	             "Catch": [{"ErrorEquals": ["Payment.Declined"], "ResultPath": "$.why", "Next": "Declined"},
	                       {"ErrorEquals": ["States.ALL"], "Next": "Anything"}]},
	    "Declined": {"Type": "Pass", "End": true},
	    "Anything": {"Type": "Pass", "Result": "caught by States.ALL", "End": true}
	  }})"));
	worker("w1");
	int64_t declined = start("catch", {{"order", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Payment.Declined", "card expired"), "succeeded");
	EXPECT_EQ(instance(declined).at("output"),
			  json::parse(R"({"order": 1, "why": {"Error": "Payment.Declined", "Cause": "card expired"}})"));

	int64_t other = start("catch", {{"order", 2}});
	t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Disk.Full", "no space"), "succeeded");
	EXPECT_EQ(instance(other).at("output"), "caught by States.ALL");
}

TEST_P(StoreTest, HandlerMissingSkipsRetryButNotCatch) {
	define("missing", json::parse(R"({
	  "StartAt": "Call",
	  "States": {
	    "Call": {"Type": "Task", "Resource": "handler:nobody", "End": true,
	             "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 5}],
	             "Catch": [{"ErrorEquals": ["genroc.HandlerMissing"], "Next": "NoHandler"}]},
	    "NoHandler": {"Type": "Fail", "Error": "NoHandler"}
	  }})"));
	// in its handler's queue (a miss elsewhere moves it there instead)
	store().queue_set("nobody", {{"kind", "handler"}, {"handler", "nobody"}});
	worker("w1", {{"queues", {"nobody"}}});
	int64_t id = start("missing");
	Task t = claim_one("w1", {"nobody"});
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "genroc.HandlerMissing", "no handler nobody"), "failed");
	EXPECT_EQ(instance(id).at("error"), "NoHandler");
}

TEST_P(StoreTest, TaskTimeoutFailsWithStatesTimeoutFromTheClaim) {
	define("timeout", json::parse(R"({
	  "StartAt": "Call",
	  "States": {
	    "Call": {"Type": "Task", "Resource": "handler:slow", "TimeoutSeconds": 30, "End": true,
	             "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": "$.err", "Next": "TimedOut"}]},
	    "TimedOut": {"Type": "Pass", "End": true}
	  }})"));
	worker("w1", {{"lease_duration", "60s"}});
	int64_t id = start("timeout");
	at(100);  // waiting in the queue does not count
	Task t = claim_one("w1");
	ASSERT_TRUE(t.timeout_s.has_value());
	EXPECT_EQ(*t.timeout_s, 30);
	at(129.999);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	EXPECT_EQ(status(id), "running");
	at(130);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "succeeded");
	EXPECT_EQ(inst.at("output").at("err").at("Error"), "States.Timeout");
	// The worker's late report is refused and changes nothing.
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t.instance_id, t.epoch, json::object()));
	EXPECT_EQ(instance(id).at("status"), "succeeded");
}

TEST_P(StoreTest, ClaimOrderIsPriorityThenEligibleTimeThenId) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	int64_t low = start("job", json::object(), {{"priority", 5}});
	at(1);
	int64_t high = start("job", json::object(), {{"priority", -1}});
	int64_t mid_a = start("job", json::object(), {{"priority", 2}});
	at(2);
	int64_t mid_b = start("job", json::object(), {{"priority", 2}});
	at(3);
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 4u);
	EXPECT_EQ(tasks[0].instance_id, high);
	EXPECT_EQ(tasks[1].instance_id, mid_a);
	EXPECT_EQ(tasks[2].instance_id, mid_b);
	EXPECT_EQ(tasks[3].instance_id, low);
}

// Several queues in one claim: one order over all of them, at most n, a
// queue named twice taken once, a queue not named left alone.
TEST_P(StoreTest, ClaimOrderRunsAcrossTheGivenQueues) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	const json eu = {{"region", "eu"}};
	int64_t eu_low = start("job", json::object(), {{"priority", 5}, {"labels", eu}});
	int64_t def_low = start("job", json::object(), {{"priority", 5}});
	at(1);
	int64_t eu_high = start("job", json::object(), {{"priority", 1}, {"labels", eu}});
	int64_t def_mid = start("job", json::object(), {{"priority", 3}});
	int64_t us = start("job", json::object(), {{"priority", 0}, {"labels", {{"region", "us"}}}});
	at(2);
	auto first = store().claim("w1", {"default.eu", "default", "default.eu"}, 3);
	ASSERT_EQ(first.size(), 3u);
	EXPECT_EQ(first[0].instance_id, eu_high);
	EXPECT_EQ(first[1].instance_id, def_mid);
	EXPECT_EQ(first[2].instance_id, eu_low);  // priority and time as def_low's, a smaller id
	auto rest = store().claim("w1", {"default", "default.eu"}, 10);
	ASSERT_EQ(rest.size(), 1u);
	EXPECT_EQ(rest[0].instance_id, def_low);
	EXPECT_EQ(status(us), "ready");
}

TEST_P(StoreTest, ClaimTakesOnlyTheGivenQueuesAndAtMostN) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	for (int i = 0; i < 3; i++) start("job");
	EXPECT_TRUE(store().claim("w1", {"elsewhere"}, 10).empty());
	EXPECT_EQ(store().claim("w1", {"default"}, 2).size(), 2u);
	EXPECT_EQ(store().claim("w1", {"default"}, 2).size(), 1u);
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "", store().claim("w1", {"default"}, 0));
}

TEST_P(StoreTest, WorkerConcurrencyLimitsClaims) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1", {{"concurrency", 2}});
	for (int i = 0; i < 3; i++) start("job");
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	store().complete(tasks[0].instance_id, tasks[0].epoch, json::object());
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 1u);
}

TEST_P(StoreTest, DelayedStartRunsWhenRunAtComes) {
	define("job", json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Pass","Next":"T"},"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	auto r = store().start("job", {{"k", 1}}, {{"run_at", time_at(60)}});
	EXPECT_EQ(r.status, "waiting");
	EXPECT_EQ(instance(r.instance_id).at("wait_kind"), "run_at");
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(59);
	EXPECT_EQ(store().tick(100).at("run_at"), 0);
	EXPECT_EQ(status(r.instance_id), "waiting");
	at(60);
	EXPECT_EQ(store().tick(100).at("run_at"), 1);
	EXPECT_EQ(status(r.instance_id), "ready");
	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"k", 1}}));
	// A run_at in the past starts at once.
	EXPECT_EQ(store().start("job", json::object(), {{"run_at", time_at(-5)}}).status, "ready");
}

}  // namespace genroc::conformance
