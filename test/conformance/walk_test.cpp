// walk_test.cpp — every kind of step in one walk, on both stores:
// Pass → Choice → Task(handler) with Retry → Wait → Task(activity) → Succeed,
// driven through start / claim / fail / complete / tick / claim_activity /
// activity_succeed, ending with the output ASL prescribes.
#include "fixture.hpp"

namespace genroc::conformance {

TEST_P(StoreTest, OrderWalkFromStartToSucceed) {
	define("order", json::parse(R"({
	  "StartAt": "Prepare",
	  "States": {
	    "Prepare": {"Type": "Pass", "Parameters": {"order.$": "$.order", "total.$": "$.amount"},
	                "ResultPath": "$.prep", "Next": "Route"},
	    "Route": {"Type": "Choice",
	              "Choices": [{"Variable": "$.prep.total", "NumericGreaterThan": 100, "Next": "Charge"}],
	              "Default": "TooSmall"},
	    "TooSmall": {"Type": "Fail", "Error": "Order.TooSmall", "Cause": "orders start at 100"},
	    "Charge": {"Type": "Task", "Resource": "handler:charge", "InputPath": "$.prep", "ResultPath": "$.charge",
	               "Retry": [{"ErrorEquals": ["Bank.Busy"], "IntervalSeconds": 2, "MaxAttempts": 3,
	                          "BackoffRate": 2, "JitterStrategy": "NONE"}],
	               "Next": "CoolDown"},
	    "CoolDown": {"Type": "Wait", "Seconds": 10, "Next": "Ship"},
	    "Ship": {"Type": "Task", "Resource": "activity:ship",
	             "Parameters": {"order.$": "$.prep.order", "receipt.$": "$.charge.receipt"},
	             "ResultSelector": {"tracking.$": "$.tracking"}, "ResultPath": "$.shipment", "Next": "Done"},
	    "Done": {"Type": "Succeed"}
	  }})"));
	worker("w1", {{"host", "box-1"}});

	auto small = store().start("order", {{"order", "A-2"}, {"amount", 5}}, json::object());
	EXPECT_EQ(small.status, "failed");
	EXPECT_EQ(instance(small.instance_id).at("error"), "Order.TooSmall");
	EXPECT_EQ(instance(small.instance_id).at("cause"), "orders start at 100");

	auto r = store().start("order", {{"order", "A-1"}, {"amount", 150}}, json::object());
	EXPECT_EQ(r.status, "ready");
	const int64_t id = r.instance_id;
	EXPECT_EQ(instance(id).at("state"), "Charge");

	Task t = claim_one("w1");
	EXPECT_EQ(t.input, json({{"order", "A-1"}, {"total", 150}}));
	EXPECT_EQ(store().fail(id, t.epoch, "Bank.Busy", "try again"), "ready");
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(2);
	const int64_t first_epoch = t.epoch;
	t = claim_one("w1");
	EXPECT_NE(t.epoch, first_epoch);
	EXPECT_EQ(t.attempt, 1);
	store().fail(id, t.epoch, "Bank.Busy", "");
	at(5);
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(6);
	t = claim_one("w1");
	EXPECT_EQ(t.attempt, 2);
	EXPECT_EQ(store().complete(id, t.epoch, {{"receipt", "R-9"}}), "waiting");
	EXPECT_EQ(instance(id).at("state"), "CoolDown");
	EXPECT_EQ(instance(id).at("wait_until"), time_at(16));

	at(15);
	store().tick(1000);
	EXPECT_EQ(instance(id).at("state"), "CoolDown");
	at(16);
	store().tick(1000);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "waiting");
	EXPECT_EQ(inst.at("state"), "Ship");
	EXPECT_EQ(inst.at("wait_kind"), "activity");
	EXPECT_EQ(inst.at("activity"), "ship");

	auto got = store().claim_activity("ship", "warehouse", 1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].input, json({{"order", "A-1"}, {"receipt", "R-9"}}));
	EXPECT_EQ(store().activity_succeed(got[0].token, {{"tracking", "T-77"}, {"carrier", "post"}}), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"order": "A-1", "amount": 150,
	  "prep": {"order": "A-1", "total": 150}, "charge": {"receipt": "R-9"}, "shipment": {"tracking": "T-77"}})"));

	EXPECT_EQ(events(id),
			  (std::vector<std::string>{"started", "entered", "entered", "entered", "task_scheduled",	 // Prepare Route Charge
										"task_started", "task_failed", "task_scheduled",				 // busy, retry
										"task_started", "task_failed", "task_scheduled",				 // busy, retry
										"task_started", "task_succeeded", "entered", "wait_started",	 // CoolDown
										"wait_ended", "entered", "task_scheduled",						 // Ship
										"activity_claimed", "task_succeeded", "entered", "succeeded"}));
}

}  // namespace genroc::conformance
