// more_test.cpp — finer points the regression suite pins on PostgreSQL,
// asserted on both stores: OnlyOnce with Retry and re-register, idempotent
// start after the end, cancel of a timer, activity order and deadlines of
// unclaimed activities, an exhausted retrier that decides alone.
#include "fixture.hpp"

#include <algorithm>

namespace genroc::conformance {

TEST_P(StoreTest, OnlyOnceRetriedAfterInterruptionIsANewAttempt) {
	define("once", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","OnlyOnce":true,
	  "End":true,"Retry":[{"ErrorEquals":["only_once.interrupted"],"IntervalSeconds":5,"MaxAttempts":1}]}}})"));
	worker("w1", {{"stale_after", "30s"}, {"lease_duration", "120s"}});
	int64_t id = start("once");
	Task t = claim_one("w1");
	// The worker crashes and registers again: the OnlyOnce task is not
	// handed back; Retry makes it a new attempt 5 s later.
	at(31);
	EXPECT_EQ(store().worker_register("w1", {{"lease_duration", "120s"}}).at("reclaimed"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "ready");
	EXPECT_EQ(inst.at("attempt"), 1);
	EXPECT_EQ(inst.at("eligible_at"), time_at(36));
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(36);
	Task again = claim_one("w1");
	EXPECT_EQ(again.attempt, 1);
	EXPECT_TRUE(again.only_once);
	EXPECT_NE(again.epoch, t.epoch);
	EXPECT_EQ(store().complete(id, again.epoch, "once"), "succeeded");
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "task_interrupted"), ev.end());
}

TEST_P(StoreTest, IdempotencyKeyHoldsAfterTheInstanceEnded) {
	define("quick", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}})"));
	auto first = store().start("quick", {{"n", 1}}, {{"idempotency_key", "k"}});
	EXPECT_EQ(first.status, "succeeded");
	auto again = store().start("quick", {{"n", 2}}, {{"idempotency_key", "k"}});
	EXPECT_FALSE(again.is_new);
	EXPECT_EQ(again.instance_id, first.instance_id);
	EXPECT_EQ(again.status, "succeeded");
	EXPECT_EQ(instance(first.instance_id).at("output"), json({{"n", 1}}));
}

TEST_P(StoreTest, CancelledTimerIsNotWokenByTick) {
	define("wait", json::parse(R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}})"));
	int64_t id = start("wait");
	store().cancel(id);
	at(10);
	EXPECT_EQ(store().tick(100).at("timers"), 0);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "cancelled");
	EXPECT_TRUE(inst.at("wait_until").is_null());
}

TEST_P(StoreTest, ActivityClaimOrderAndDeadlinesOfUnclaimedOnes) {
	define("act", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:review",
	  "TimeoutSeconds":30,"HeartbeatSeconds":10,"End":true}}})"));
	int64_t low = start("act", {{"who", "low"}}, {{"priority", 5}});
	int64_t high = start("act", {{"who", "high"}}, {{"priority", 1}});
	at(5);
	auto got = store().claim_activity("review", "reviewer", 1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].instance_id, high);
	EXPECT_EQ(got[0].input, json({{"who", "high"}}));
	// The claimed one misses its heartbeat at 15 s; the unclaimed one has no
	// heartbeat deadline but times out 30 s after parking.
	at(14.999);
	json c = store().tick(100);
	EXPECT_EQ(c.at("heartbeats"), 0);
	at(15);
	c = store().tick(100);
	EXPECT_EQ(c.at("heartbeats"), 1);
	EXPECT_EQ(instance(high).at("error"), "States.HeartbeatTimeout");
	EXPECT_EQ(status(low), "waiting");
	at(29.999);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	at(30);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	EXPECT_EQ(instance(low).at("error"), "States.Timeout");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_heartbeat(got[0].token));
}

TEST_P(StoreTest, AnExhaustedRetrierDecidesAloneAndMaxDelayCaps) {
	define("r", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true,
	  "Retry":[{"ErrorEquals":["Busy"],"IntervalSeconds":10,"BackoffRate":3,"MaxDelaySeconds":15,"MaxAttempts":2,"JitterStrategy":"NONE"},
	           {"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":5}]}}})"));
	worker("w1");
	int64_t id = start("r");
	Task t = claim_one("w1");
	store().fail(id, t.epoch, "Busy", "");
	EXPECT_EQ(instance(id).at("eligible_at"), time_at(10));
	at(10);
	t = claim_one("w1");
	store().fail(id, t.epoch, "Busy", "");
	EXPECT_EQ(instance(id).at("eligible_at"), time_at(25));  // 30 s capped to 15 s
	at(25);
	t = claim_one("w1");
	// Busy's retrier is used up; States.ALL's does not get a turn.
	EXPECT_EQ(store().fail(id, t.epoch, "Busy", "still"), "failed");
	EXPECT_EQ(instance(id).at("error"), "Busy");
}

}  // namespace genroc::conformance
