// activities_test.cpp — activity:NAME tasks run by outside programs:
// claim_activity, succeed/fail by token (RC007), heartbeats, TimeoutSeconds
// and HeartbeatSeconds.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json activity_def(const json &extra = json::object()) {
	json t = {{"Type", "Task"}, {"Resource", "activity:approve"}, {"ResultPath", "$.approval"}, {"Next", "Done"}};
	t.update(extra);
	json states = {{"Ask", t}, {"Done", {{"Type", "Pass"}, {"End", true}}}};
	// Only a Catch makes "Caught" reachable (an unreachable state is refused).
	if (t.contains("Catch")) states["Caught"] = {{"Type", "Pass"}, {"End", true}};
	return {{"StartAt", "Ask"}, {"States", states}};
}
}  // namespace

TEST_P(StoreTest, ActivityIsClaimedAndSucceededByToken) {
	define("act", activity_def({{"Parameters", {{"doc.$", "$.doc"}, {"token.$", "$$.Task.Token"}}}}));
	auto r = store().start("act", {{"doc", "d-1"}}, json::object());
	EXPECT_EQ(r.status, "waiting");
	EXPECT_EQ(instance(r.instance_id).at("wait_kind"), "activity");
	EXPECT_TRUE(store().claim_activity("other", "outside-1", 5).empty());

	auto got = store().claim_activity("approve", "outside-1", 5);
	ASSERT_EQ(got.size(), 1u);
	const ActivityTask &a = got[0];
	EXPECT_EQ(a.instance_id, r.instance_id);
	EXPECT_EQ(a.activity, "approve");
	EXPECT_FALSE(a.token.empty());
	// $$.Task.Token in Parameters is the token the claim hands out.
	EXPECT_EQ(a.input, json({{"doc", "d-1"}, {"token", a.token}}));
	// Handed out once only.
	EXPECT_TRUE(store().claim_activity("approve", "outside-2", 5).empty());
	// a batch of none is refused, on both stores by the engine's one check
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_n must be at least 1, not 0",
				  store().claim_activity("approve", "outside-2", 0));

	store().activity_heartbeat(a.token);
	EXPECT_EQ(store().activity_succeed(a.token, {{"ok", true}}), "succeeded");
	EXPECT_EQ(instance(r.instance_id).at("output"),
			  json::parse(R"({"doc": "d-1", "approval": {"ok": true}})"));
	// A used token is no longer valid; neither is an unknown one.
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(a.token, json::object()));
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_heartbeat(a.token));
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_fail("no-such-token", "E", ""));
	// The message never repeats the token (a credential).
	auto late = raised([&] { store().activity_succeed(a.token, json::object()); });
	EXPECT_EQ(late.message.find(a.token), std::string::npos) << late.message;
}

TEST_P(StoreTest, ActivityFailureGoesThroughCatch) {
	define("act", activity_def({{"Catch", json::parse(R"([{"ErrorEquals": ["Rejected"], "ResultPath": "$.why", "Next": "Caught"}])")}}));
	int64_t id = start("act", {{"doc", 2}});
	auto got = store().claim_activity("approve", "outside", 1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(store().activity_fail(got[0].token, "Rejected", "not signed"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"doc": 2, "why": {"Error": "Rejected", "Cause": "not signed"}})"));
	EXPECT_EQ(instance(id).at("state"), "Caught");
}

TEST_P(StoreTest, ActivityHeartbeatTimeout) {
	define("act", activity_def({{"HeartbeatSeconds", 5}, {"TimeoutSeconds", 100}}));
	int64_t id = start("act");
	at(50);  // the heartbeat clock starts at the claim
	auto got = store().claim_activity("approve", "outside", 1);
	ASSERT_EQ(got.size(), 1u);
	ASSERT_TRUE(got[0].heartbeat_s.has_value());
	EXPECT_EQ(*got[0].heartbeat_s, 5);
	EXPECT_EQ(*got[0].timeout_s, 100);
	at(54);
	store().activity_heartbeat(got[0].token);
	at(58.999);
	EXPECT_EQ(store().tick(100).at("heartbeats"), 0);
	EXPECT_EQ(status(id), "waiting");
	at(59);
	EXPECT_EQ(store().tick(100).at("heartbeats"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "failed");
	EXPECT_EQ(inst.at("error"), "States.HeartbeatTimeout");
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(got[0].token, json::object()));
}

TEST_P(StoreTest, ActivityTimeoutCountsFromParkingAndIsRetried) {
	define("act", activity_def({{"TimeoutSeconds", 20},
								{"Retry", json::parse(R"([{"ErrorEquals": ["States.Timeout"], "IntervalSeconds": 3, "MaxAttempts": 1}])")}}));
	int64_t id = start("act");
	at(19.999);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	at(20);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	// Retried: parked again, claimable after the 3s back-off, with a new token.
	EXPECT_EQ(status(id), "waiting");
	at(22.999);
	EXPECT_TRUE(store().claim_activity("approve", "outside", 1).empty());
	at(23);
	auto got = store().claim_activity("approve", "outside", 1);
	ASSERT_EQ(got.size(), 1u);
	// The retry's timeout counts from when it became eligible: 23 + 20.
	at(42.999);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	at(43);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	EXPECT_EQ(instance(id).at("error"), "States.Timeout");
	EXPECT_EQ(status(id), "failed");
}

}  // namespace genroc::conformance
