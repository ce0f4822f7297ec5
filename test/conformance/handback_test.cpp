// handback_test.cpp — a report that hands back the instance's next task
// (complete_and_claim, fail_and_claim): what the worker gets, the same log
// and fencing as complete + claim, and when the task is NOT handed back
// (a queue the worker does not serve, queue limits, another worker's id, a
// stopped or draining worker, a retry delay, no handler task next).
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json three_tasks(const std::string &handler = "h") {
	auto task = [&](const char *next) {
		json t = {{"Type", "Task"}, {"Resource", "handler:" + handler}};
		if (next) t["Next"] = next;
		else t["End"] = true;
		return t;
	};
	return {{"StartAt", "A"}, {"States", {{"A", task("B")}, {"B", task("C")}, {"C", task(nullptr)}}}};
}
json queue_named(Store &s, const std::string &name) {
	for (auto &q : s.list_queues())
		if (q.at("name") == name) return q;
	return nullptr;
}
}  // namespace

TEST_P(StoreTest, CompleteAndClaimHandsBackTheNextTaskAsClaimWould) {
	define("three", three_tasks());
	worker("w1", {{"lease_duration", "7s"}});
	int64_t id = start("three", {{"n", 0}});
	Task a = claim_one("w1");
	at(1);
	Store::Report rb = store().complete_and_claim(id, a.epoch, {{"n", 1}}, "w1", {"default"});
	EXPECT_EQ(rb.status, "running");
	ASSERT_TRUE(rb.next.has_value());
	const Task &b = *rb.next;
	EXPECT_EQ(b.instance_id, id);
	EXPECT_EQ(b.state, "B");
	EXPECT_EQ(b.resource, "handler:h");
	EXPECT_EQ(b.input, json({{"n", 1}}));
	EXPECT_EQ(b.attempt, 0);
	EXPECT_EQ(b.queue, "default");
	EXPECT_EQ(b.lease_expires, time_at(8));	// now + the worker's lease_duration
	EXPECT_GT(b.epoch, 0);
	EXPECT_NE(b.epoch, a.epoch);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "running");
	EXPECT_EQ(inst.at("lease_owner"), "w1");
	EXPECT_EQ(inst.at("lease_epoch"), b.epoch);
	// fencing: the reported epoch is spent; nothing else claims the task
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(id, a.epoch, "late"));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	// the log is the one complete + claim writes
	EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "task_scheduled", "task_started",
													"task_succeeded", "entered", "task_scheduled", "task_started"}));
	const json hist = store().history(id);
	EXPECT_EQ(hist.back().at("detail"), json({{"worker", "w1"}, {"epoch", b.epoch}, {"attempt", 0}}));

	Store::Report rc = store().complete_and_claim(id, b.epoch, {{"n", 2}}, "w1", {"default"});
	ASSERT_TRUE(rc.next.has_value());
	EXPECT_EQ(rc.next->state, "C");
	// the last task: the instance ends, nothing to hand back
	Store::Report rd = store().complete_and_claim(id, rc.next->epoch, {{"n", 3}}, "w1", {"default"});
	EXPECT_EQ(rd.status, "succeeded");
	EXPECT_FALSE(rd.next.has_value());
	EXPECT_EQ(instance(id).at("output"), json({{"n", 3}}));
}

TEST_P(StoreTest, HandedBackTaskTimesOutFromItsHandBack) {
	define("timed", json::parse(R"({"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
		"B":{"Type":"Task","Resource":"handler:h","TimeoutSeconds":5,"End":true}}})"));
	worker("w1", {{"lease_duration", "1h"}});
	int64_t id = start("timed");
	Task a = claim_one("w1");
	at(2);
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"default"});
	ASSERT_TRUE(r.next.has_value());
	EXPECT_EQ(r.next->timeout_s, 5);
	at(6.999);
	store().tick(100);
	EXPECT_EQ(status(id), "running");
	at(7);
	store().tick(100);
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "States.Timeout");
}

TEST_P(StoreTest, NextTaskInAQueueTheWorkerDoesNotServeIsNotHandedBack) {
	define("three", three_tasks());
	worker("w1", {{"queues", {"gpu", "default"}}});
	worker("w2");
	int64_t id = start("three");
	Task a = claim_one("w1");
	// w1 says it serves only gpu now: the default queue's task stays ready
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"gpu"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "ready");
	EXPECT_TRUE(inst.at("lease_owner").is_null());
	Task b = claim_one("w2");
	EXPECT_EQ(b.instance_id, id);
	EXPECT_EQ(b.state, "B");
}

TEST_P(StoreTest, HandBackNeverGoesOverAQueuesGlobalConcurrency) {
	define("train", three_tasks("train"));
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 2}});
	worker("w1", {{"queues", {"gpu"}}});
	worker("w2", {{"queues", {"gpu"}}});
	int64_t i1 = start("train");
	start("train");
	start("train");
	Task t1 = claim_one("w1", {"gpu"});
	claim_one("w2", {"gpu"});
	EXPECT_EQ(queue_named(store(), "gpu").at("running"), 2);
	// the queue is full; w1 keeps its one slot: handed back, still 2 running
	Store::Report r = store().complete_and_claim(t1.instance_id, t1.epoch, "x", "w1", {"gpu"});
	ASSERT_TRUE(r.next.has_value());
	EXPECT_EQ(r.next->instance_id, i1);
	EXPECT_EQ(queue_named(store(), "gpu").at("running"), 2);
	// the limit lowered to 1 while 2 run: a hand-back would keep 2 running
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 1}});
	r = store().complete_and_claim(i1, r.next->epoch, "x", "w1", {"gpu"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	EXPECT_EQ(queue_named(store(), "gpu").at("running"), 1);
	EXPECT_TRUE(store().claim("w1", {"gpu"}, 10).empty());
}

TEST_P(StoreTest, RateLimitedQueueLeavesTheNextTaskToClaim) {
	define("three", three_tasks());
	store().queue_set("default", {{"rate_limit", {{"count", 1}, {"period", "10s"}}}});
	worker("w1");
	int64_t id = start("three");
	Task a = claim_one("w1");
	// the one start of the window is spent: the next task waits for claim
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"default"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(10.001);
	EXPECT_EQ(claim_one("w1").state, "B");
}

TEST_P(StoreTest, OnlyTheLeaseHolderWhileRegisteredGetsTheNextTask) {
	define("three", three_tasks());
	worker("w1");
	worker("w2");
	int64_t id = start("three");
	Task a = claim_one("w1");
	// w2 names itself on w1's lease: the report counts, the task stays ready
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w2", {"default"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	Task b = claim_one("w1");
	// a stopped worker's id: nothing handed back (worker_stop released its
	// tasks; a report from a second registration under the old id would
	// reach here only through a lease it holds)
	store().worker_stop("w1");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete_and_claim(id, b.epoch, "x", "w1", {"default"}));
	EXPECT_EQ(status(id), "ready");
}

// A worker asked to drain finishes what it holds and takes nothing more:
// its report counts, the next task stays ready for another worker.
TEST_P(StoreTest, ADrainingWorkerIsHandedNothingBack) {
	define("three", three_tasks());
	worker("w1");
	worker("w2");
	int64_t id = start("three");
	Task a = claim_one("w1");
	store().worker_drain("w1");
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"default"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	EXPECT_EQ(claim_one("w2").state, "B");
}

TEST_P(StoreTest, FailAndClaimHandsBackACatchButNotARetryBackOff) {
	define("flaky", json::parse(R"({"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"handler:h",
			 "Retry":[{"ErrorEquals":["Again"],"IntervalSeconds":2,"MaxAttempts":1}],
			 "Catch":[{"ErrorEquals":["Boom"],"Next":"Cleanup"}],"End":true},
		"Cleanup":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1");
	int64_t id = start("flaky");
	Task a = claim_one("w1");
	// a retry after 2 s: not ready at once, so not handed back
	Store::Report r = store().fail_and_claim(id, a.epoch, "Again", "first", "w1", {"default"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(2);
	Task a2 = claim_one("w1");
	EXPECT_EQ(a2.attempt, 1);
	r = store().fail_and_claim(id, a2.epoch, "Boom", "second", "w1", {"default"});
	EXPECT_EQ(r.status, "running");
	ASSERT_TRUE(r.next.has_value());
	EXPECT_EQ(r.next->state, "Cleanup");
	EXPECT_NE(r.next->epoch, a2.epoch);
	EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "task_scheduled", "task_started",
													"task_failed", "task_scheduled", "task_started", "task_failed",
													"entered", "task_scheduled", "task_started"}));
	r = store().complete_and_claim(id, r.next->epoch, "cleaned", "w1", {"default"});
	EXPECT_EQ(r.status, "succeeded");
	EXPECT_FALSE(r.next.has_value());
}

TEST_P(StoreTest, OnlyHandlerTasksReadyAtOnceAreHandedBack) {
	define("mixed", json::parse(R"({"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"handler:h","Next":"W"},
		"W":{"Type":"Wait","Seconds":5,"Next":"B"},
		"B":{"Type":"Task","Resource":"handler:h","Next":"Act"},
		"Act":{"Type":"Task","Resource":"activity:review","End":true}}})"));
	worker("w1");
	int64_t id = start("mixed");
	Task a = claim_one("w1");
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"default"});
	EXPECT_EQ(r.status, "waiting");	// the Wait
	EXPECT_FALSE(r.next.has_value());
	at(5);
	store().tick(100);
	Task b = claim_one("w1");
	r = store().complete_and_claim(id, b.epoch, "y", "w1", {"default"});
	EXPECT_EQ(r.status, "waiting");	// an activity: for claim_activity
	EXPECT_FALSE(r.next.has_value());
	EXPECT_EQ(store().claim_activity("review", "ext", 1).size(), 1u);
}

TEST_P(StoreTest, HandedBackOnlyOnceTaskSaysSo) {
	define("once", json::parse(R"({"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
		"B":{"Type":"Task","Resource":"handler:h","OnlyOnce":true,"End":true}}})"));
	worker("w1");
	int64_t id = start("once");
	Task a = claim_one("w1");
	Store::Report r = store().complete_and_claim(id, a.epoch, "x", "w1", {"default"});
	ASSERT_TRUE(r.next.has_value());
	EXPECT_TRUE(r.next->only_once);
	// released, an OnlyOnce task is not run again
	store().release("w1", {id});
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "only_once.interrupted");
}

}  // namespace genroc::conformance
