// retry_test.cpp — genroc.retry and genroc.resume on both stores: a failed
// top-level instance runs again from the state it failed in, or goes on
// after it with an output given by hand.
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

const char *kOrder = R"({"StartAt":"Prep","States":{
  "Prep":{"Type":"Pass","Result":"prepared","ResultPath":"$.prep","Next":"Charge"},
  "Charge":{"Type":"Task","Resource":"handler:charge","ResultPath":"$.charge",
            "Retry":[{"ErrorEquals":["Flaky"],"MaxAttempts":1}],"Next":"Ship"},
  "Ship":{"Type":"Task","Resource":"handler:ship","End":true}}})";

}  // namespace

TEST_P(StoreTest, RetryRunsTheFailedStateAgainWithItsInput) {
	define("order", json::parse(kOrder));
	worker("w1");
	const int64_t id = start("order", {{"k", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "1"), "ready");	 // its Retry, 1 s later
	at(1);
	t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "2"), "failed");
	EXPECT_EQ(instance(id).at("state"), "Charge");
	EXPECT_EQ(instance(id).at("error"), "Flaky");

	EXPECT_EQ(store().retry(id), "ready");
	const json i = instance(id);
	EXPECT_EQ(i.at("state"), "Charge");
	EXPECT_EQ(i.at("error"), nullptr);
	EXPECT_EQ(i.at("ended_at"), nullptr);
	EXPECT_EQ(i.at("attempt"), 0);	// Retry counts start over
	t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"k", 1}, {"prep", "prepared"}}));
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "3"), "ready");	 // Retry applies again
	at(2);
	t = claim_one("w1");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, "paid"), "ready");
	t = claim_one("w1");
	EXPECT_EQ(t.state, "Ship");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, "shipped"), "succeeded");
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "retried"), ev.end());
}

TEST_P(StoreTest, ResumeGoesOnAfterTheFailedTaskWithAnOutputGivenByHand) {
	define("order", json::parse(kOrder));
	worker("w1");
	const int64_t id = start("order", {{"k", 1}});
	Task t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Card.Declined", "no");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(store().resume(id, {{"paid_by", "phone"}}), "ready");
	t = claim_one("w1");
	EXPECT_EQ(t.state, "Ship");
	EXPECT_EQ(t.input, json({{"k", 1}, {"prep", "prepared"}, {"charge", {{"paid_by", "phone"}}}}));
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "resumed"), ev.end());
}

TEST_P(StoreTest, RetryAndResumeRefuseWhatIsNotAFailedTopInstance) {
	define("order", json::parse(kOrder));
	define("stop", json::parse(R"({"StartAt":"F","States":{"F":{"Type":"Fail","Error":"No"}}})"));
	define("par", json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"X","States":{"X":{"Type":"Task","Resource":"handler:x","End":true}}}]}}})"));
	worker("w1");
	const int64_t live = start("order");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "not failed", store().retry(live));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "not failed", store().resume(live, 1));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().retry(999999));
	store().cancel(live);
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "cancelled, not failed", store().retry(live));
	// a Fail state: retry enters it again (and fails again); resume refuses
	const int64_t stopped = start("stop");
	EXPECT_EQ(status(stopped), "failed");
	EXPECT_EQ(instance(stopped).at("state"), "F");
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "a Fail state", store().resume(stopped, 1));
	EXPECT_EQ(store().retry(stopped), "failed");
	// a child is retried through its top instance
	const int64_t p = start("par");
	Task t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Boom", "x");
	EXPECT_EQ(status(p), "failed");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "part of instance " + std::to_string(p),
				  store().retry(t.instance_id));
	// the top instance's retry starts a new set of children
	EXPECT_EQ(store().retry(p), "waiting");
	t = claim_one("w1");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, 5), "succeeded");
	EXPECT_EQ(status(p), "succeeded");
	EXPECT_EQ(instance(p).at("output"), json::array({5}));
}

TEST_P(StoreTest, ARetriedInstanceWithAPartitionKeyWaitsForASlot) {
	define("order", json::parse(kOrder));
	worker("w1");
	const int64_t a = start("order", json::object(), {{"partition_key", "acct-1"}});
	Task t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Card.Declined", "no");
	EXPECT_EQ(status(a), "failed");
	const int64_t b = start("order", json::object(), {{"partition_key", "acct-1"}});  // takes the slot
	EXPECT_EQ(status(b), "ready");
	EXPECT_EQ(store().retry(a), "queued");
	t = claim_one("w1");
	EXPECT_EQ(t.instance_id, b);
	store().complete(t.instance_id, t.epoch, 1);
	t = claim_one("w1");
	store().complete(t.instance_id, t.epoch, 1);  // b ends: a gets the slot and runs Charge again
	EXPECT_EQ(status(b), "succeeded");
	t = claim_one("w1");
	EXPECT_EQ(t.instance_id, a);
	EXPECT_EQ(t.state, "Charge");
}

}  // namespace genroc::conformance
