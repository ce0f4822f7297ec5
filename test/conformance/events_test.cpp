// events_test.cpp — genroc:event waits and emit() on both stores
// (extension/sql/68_events.sql; the shim's emit / park_event): an event
// emitted before, during and after the wait's timeout.
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

const char *kApproval = R"({"StartAt":"Prepare","States":{
  "Prepare":{"Type":"Task","Resource":"handler:prep","Next":"Approval"},
  "Approval":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"approved"},
              "TimeoutSeconds":60,"ResultPath":"$.approval","Next":"Done",
              "Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.late","Next":"TooLate"}]},
  "TooLate":{"Type":"Fail","Error":"approval.Late","Cause":"nobody approved in time"},
  "Done":{"Type":"Succeed"}}})";

}  // namespace

TEST_P(StoreTest, AnEventEmittedDuringTheWaitIsDelivered) {
	define("approval", json::parse(kApproval));
	worker("w1");
	const int64_t id = start("approval", {{"order", 7}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().complete(id, t.epoch, {{"order", 7}}), "waiting");
	EXPECT_EQ(instance(id).at("wait_kind"), "event");
	EXPECT_EQ(instance(id).at("state"), "Approval");
	// another name is kept, the instance keeps waiting
	EXPECT_EQ(store().emit(id, "rejected", {{"by", "bob"}}), "kept");
	EXPECT_EQ(status(id), "waiting");
	at(59);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	EXPECT_EQ(store().emit(id, "approved", {{"by", "ann"}}), "delivered");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"order":7,"approval":{"by":"ann"}})"));
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "event_waiting"), ev.end());
	EXPECT_NE(std::find(ev.begin(), ev.end(), "event_kept"), ev.end());
	EXPECT_NE(std::find(ev.begin(), ev.end(), "event_received"), ev.end());
	// emitting to an ended instance is refused
	EXPECT_RAISES(sqlstate::INSTANCE_ENDED, "has already ended", store().emit(id, "approved", nullptr));
}

TEST_P(StoreTest, AnEventEmittedBeforeTheWaitIsKeptForIt) {
	define("approval", json::parse(kApproval));
	worker("w1");
	const int64_t id = start("approval", {{"order", 8}});
	EXPECT_EQ(store().emit(id, "approved", "early"), "kept");
	Task t = claim_one("w1");
	// reaching the wait takes the kept event at once
	EXPECT_EQ(store().complete(id, t.epoch, {{"order", 8}}), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"order":8,"approval":"early"})"));
}

TEST_P(StoreTest, AnEventAfterTheTimeoutFindsTheInstanceEnded) {
	define("approval", json::parse(kApproval));
	worker("w1");
	const int64_t id = start("approval");
	Task t = claim_one("w1");
	store().complete(id, t.epoch, json::object());
	at(60);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "approval.Late");
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "task_failed"), ev.end());  // the timeout, recorded
	EXPECT_RAISES(sqlstate::INSTANCE_ENDED, "", store().emit(id, "approved", 1));
}

// An event's payload and a token's result each go into the task's request
// and the log: numbers the interpreter's JSON holds exactly (an integer
// past int64, a double's every digit) read back the same from get_instance
// and history on both stores.
TEST_P(StoreTest, AnEventPayloadAndATokenResultKeepTheirNumbers) {
	define("numbers", json::parse(R"({"StartAt":"Approval","States":{
	  "Approval":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"approved"},
	              "ResultPath":"$.approval","Next":"Notify"},
	  "Notify":{"Type":"Task","Resource":"handler:notify.waitForTaskToken",
	            "Parameters":{"token.$":"$$.Task.Token"},"ResultPath":"$.reply","End":true}}})"));
	worker("w1");
	const json payload =
		json::parse(R"({"big": 12345678901234567890, "dec": 3.141592653589793, "neg": -9223372036854775807})");
	const json result =
		json::parse(R"({"big": 12345678901234567890, "dec": 0.12345678901234568, "huge": [1e300, 2.5e-300]})");
	const int64_t id = start("numbers", {{"order", 1}});
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(store().emit(id, "approved", payload), "delivered");
	Task t = claim_one("w1");
	EXPECT_EQ(store().complete(id, t.epoch, json::object()), "waiting");	// the handler's return
	EXPECT_EQ(store().activity_succeed(t.input.at("token").get<std::string>(), result), "succeeded");
	const json out = instance(id).at("output");
	EXPECT_EQ(out.at("approval"), payload);
	EXPECT_EQ(out.at("reply"), result);
	EXPECT_EQ(out.at("approval").at("big").dump(), "12345678901234567890");
	EXPECT_EQ(out.at("reply").at("dec").dump(), "0.12345678901234568");
	json received, succeeded;
	for (const json &row : store().history(id)) {
		if (row.at("event") == "event_received") received = row.at("detail");
		if (row.at("event") == "task_succeeded") succeeded = row.at("detail");
	}
	EXPECT_EQ(received.at("payload"), payload);
	EXPECT_EQ(received.at("payload").at("big").dump(), "12345678901234567890");
	EXPECT_EQ(succeeded.at("output"), result);
	EXPECT_EQ(succeeded.at("output").at("dec").dump(), "0.12345678901234568");
	EXPECT_EQ(succeeded.at("activity_worker"), nullptr);	 // a callback task: no activity worker
}

TEST_P(StoreTest, EmitChecksItsArguments) {
	define("approval", json::parse(kApproval));
	const int64_t id = start("approval");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().emit(id + 1000, "approved", 1));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_name", store().emit(id, "", 1));
}

}  // namespace genroc::conformance
