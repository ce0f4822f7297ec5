// calls_test.cpp — genroc:call and genroc:call.sync on both stores: a child
// instance of another definition (core/asl.hpp "call" outcome;
// extension/sql/65_children.sql; the shim's fan_out).
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

bool has(const std::vector<std::string> &events, const std::string &e) {
	return std::find(events.begin(), events.end(), e) != events.end();
}

// The called definition: one handler task, then its context.
const char *kBilling = R"({"StartAt":"Charge","States":{
  "Charge":{"Type":"Task","Resource":"handler:charge","ResultPath":"$.charged","Next":"Ctx"},
  "Ctx":{"Type":"Pass","Parameters":{"charged.$":"$.charged","exec.$":"$$.Execution.Id",
         "name.$":"$$.Execution.Name","machine.$":"$$.StateMachine.Id"},"End":true}}})";

const char *kSyncParent = R"({"StartAt":"Bill","States":{
  "Bill":{"Type":"Task","Resource":"genroc:call.sync",
          "Parameters":{"Definition":"billing","Input":{"amount.$":"$.amount"},"Name.$":"$.ref"},
          "ResultPath":"$.bill","End":true}}})";

}  // namespace

TEST_P(StoreTest, ASyncCallRunsAChildOfAnotherDefinitionAndReturnsItsOutput) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(kSyncParent));
	worker("w1");
	const int64_t id = start("order", {{"amount", 12}, {"ref", "bill-7"}});
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(instance(id).at("wait_kind"), "children");
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 1u);
	const int64_t child = kids[0].at("id").get<int64_t>();
	EXPECT_EQ(kids[0].at("definition"), "billing");
	EXPECT_EQ(kids[0].at("version"), 1);
	EXPECT_EQ(kids[0].at("root_id"), id);
	EXPECT_EQ(kids[0].at("name"), "bill-7");
	EXPECT_EQ(kids[0].at("scope"), nullptr);
	EXPECT_EQ(kids[0].at("input"), json({{"amount", 12}}));
	EXPECT_EQ(kids[0].at("status"), "ready");

	Task t = claim_one("w1");
	EXPECT_EQ(t.instance_id, child);
	EXPECT_EQ(t.state, "Charge");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, "ok"), "succeeded");
	EXPECT_EQ(status(child), "succeeded");
	EXPECT_EQ(status(id), "succeeded");
	// the child is an execution of its own: its $$.Execution is itself
	const json bill = {{"charged", "ok"},
					   {"exec", std::to_string(child)},
					   {"name", "bill-7"},
					   {"machine", "billing:1"}};
	EXPECT_EQ(instance(id).at("output"), json({{"amount", 12}, {"ref", "bill-7"}, {"bill", bill}}));
	auto ev = events(id);
	EXPECT_TRUE(has(ev, "call_started"));
	EXPECT_TRUE(has(ev, "call_done"));
}

TEST_P(StoreTest, AnAsyncCallReturnsTheChildIdAndGoesOn) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(R"({"StartAt":"Fire","States":{
	  "Fire":{"Type":"Task","Resource":"genroc:call","Parameters":{"Definition":"billing"},
	          "ResultPath":"$.call","Next":"After"},
	  "After":{"Type":"Task","Resource":"handler:after","End":true}}})"));
	worker("w1");
	const int64_t id = start("order", {{"k", 1}});
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 1u);
	const int64_t child = kids[0].at("id").get<int64_t>();
	EXPECT_EQ(kids[0].at("input"), json::object());  // Input absent: {}
	EXPECT_EQ(status(id), "ready");					 // already at After
	EXPECT_EQ(instance(id).at("state"), "After");
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	const Task &after = tasks[0].instance_id == id ? tasks[0] : tasks[1];
	const Task &charge = tasks[0].instance_id == id ? tasks[1] : tasks[0];
	EXPECT_EQ(after.input, json({{"k", 1}, {"call", {{"InstanceId", child}}}}));
	// the parent may end first; the child goes on and its end wakes nobody
	EXPECT_EQ(store().complete(after.instance_id, after.epoch, "done"), "succeeded");
	EXPECT_EQ(status(child), "running");
	EXPECT_EQ(store().complete(charge.instance_id, charge.epoch, "ok"), "succeeded");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), "done");
}

TEST_P(StoreTest, ACallPinsAVersionOrTakesTheLatest) {
	define("sub", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Pass","Result":"v1","End":true}}})"));
	define("sub", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Pass","Result":"v2","End":true}}})"));
	define("top", json::parse(R"({"StartAt":"Old","States":{
	  "Old":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"sub","Version":1},
	         "ResultPath":"$.old","Next":"New"},
	  "New":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"sub"},
	         "ResultPath":"$.new","End":true}}})"));
	const int64_t id = start("top");
	// both children end in their first step: the parent runs through
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json({{"old", "v1"}, {"new", "v2"}}));
	EXPECT_EQ(children_of(id).size(), 2u);
}

TEST_P(StoreTest, AFailedChildIsTheTasksErrorForRetryAndCatch) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(R"({"StartAt":"Bill","States":{
	  "Bill":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"billing"},
	          "Retry":[{"ErrorEquals":["Card.Declined"],"MaxAttempts":1,"IntervalSeconds":10}],
	          "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Refund"}],"End":true},
	  "Refund":{"Type":"Pass","End":true}}})"));
	worker("w1");
	const int64_t id = start("order", {{"k", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Card.Declined", "insufficient funds"), "failed");
	// retried: a new child 10 s later (tick lets it go)
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(instance(id).at("attempt"), 1);
	EXPECT_EQ(children_of(id).size(), 2u);
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(10);
	store().tick(100);
	t = claim_one("w1");
	EXPECT_NE(t.instance_id, children_of(id)[0].at("id").get<int64_t>());
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Card.Declined", "still no"), "failed");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"),
			  json({{"k", 1}, {"err", {{"Error", "Card.Declined"}, {"Cause", "still no"}}}}));
}

TEST_P(StoreTest, ACallOfAMissingDefinitionFailsWithDefinitionNotFound) {
	define("sub", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}})"));
	define("top", json::parse(R"({"StartAt":"C","States":{
	  "C":{"Type":"Task","Resource":"genroc:call","Parameters":{"Definition":"sub","Version":9},
	       "Catch":[{"ErrorEquals":["genroc.DefinitionNotFound"],"Next":"F"}],"End":true},
	  "F":{"Type":"Pass","End":true}}})"));
	define("plain", json::parse(R"({"StartAt":"C","States":{
	  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"nope"},"End":true}}})"));
	const int64_t id = start("top");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"),
			  json({{"Error", "genroc.DefinitionNotFound"},
					{"Cause", "state \"C\" calls definition \"sub\" version 9, which does not exist"}}));
	const int64_t id2 = start("plain");
	EXPECT_EQ(status(id2), "failed");
	EXPECT_EQ(instance(id2).at("error"), "genroc.DefinitionNotFound");
	EXPECT_EQ(instance(id2).at("state"), "C");
	EXPECT_TRUE(children_of(id2).empty());
}

TEST_P(StoreTest, ASyncCallTimesOutAndItsChildIsCancelled) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(R"({"StartAt":"Bill","States":{
	  "Bill":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"billing"},
	          "TimeoutSeconds":30,"End":true}}})"));
	worker("w1");
	const int64_t id = start("order");
	Task t = claim_one("w1");
	at(29);
	EXPECT_EQ(store().tick(100).at("timeouts"), 0);
	at(30);
	EXPECT_EQ(store().tick(100).at("timeouts"), 1);
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "States.Timeout");
	EXPECT_EQ(status(t.instance_id), "cancelled");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t.instance_id, t.epoch, "late"));
	auto ev = events(id);
	EXPECT_TRUE(has(ev, "task_failed"));  // recorded before it takes effect
}

TEST_P(StoreTest, CancellingAParentCancelsItsCalledChildren) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(R"({"StartAt":"Fire","States":{
	  "Fire":{"Type":"Task","Resource":"genroc:call","Parameters":{"Definition":"billing"},"Next":"Bill"},
	  "Bill":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"billing"},"End":true}}})"));
	const int64_t id = start("order");
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 2u);
	EXPECT_EQ(store().cancel(id), "cancelled");
	for (const auto &k : children_of(id)) EXPECT_EQ(k.at("status"), "cancelled") << k.dump();
}

TEST_P(StoreTest, CancellingACalledChildFailsTheSyncCall) {
	define("billing", json::parse(kBilling));
	define("order", json::parse(kSyncParent));
	const int64_t id = start("order", {{"amount", 1}, {"ref", "r"}});
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 1u);
	EXPECT_EQ(store().cancel(kids[0].at("id").get<int64_t>()), "cancelled");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "genroc.Cancelled");
}

TEST_P(StoreTest, EndlessRecursionStopsAtTheCallDepth) {
	define("rec", json::parse(R"({"StartAt":"C","States":{
	  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"rec"},"End":true}}})"));
	const int64_t id = start("rec");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "genroc.CallDepthExceeded");
	// the top and 32 nested children, every one failed with that error
	const auto all = store().list_instances({{"limit", 1000}});
	EXPECT_EQ(all.size(), 33u);
	for (const auto &i : all) EXPECT_EQ(i.at("error"), "genroc.CallDepthExceeded");
}

TEST_P(StoreTest, ACalledChildIsRoutedForItsOwnDefinitionWithTheParentsLabels) {
	store().queue_set("billing-q", {{"kind", "routed"}, {"match", {{"definitions", {"billing"}}}}});
	define("billing", json::parse(kBilling));
	define("order", json::parse(kSyncParent));
	const int64_t id = start("order", {{"amount", 1}, {"ref", "r"}}, {{"labels", {{"region", "eu"}}}});
	EXPECT_EQ(instance(id).at("queue"), "default.eu");
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 1u);
	EXPECT_EQ(kids[0].at("queue"), "billing-q.eu");
	EXPECT_EQ(kids[0].at("labels"), json({{"region", "eu"}}));
}

TEST_P(StoreTest, BranchesOfACalledChildBelongToThatChildsExecution) {
	define("sub", json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"X","States":{"X":{"Type":"Pass","Parameters":{"e.$":"$$.Execution.Id"},"End":true}}}]}}})"));
	define("top", json::parse(R"({"StartAt":"C","States":{
	  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"sub"},"End":true}}})"));
	const int64_t id = start("top");
	EXPECT_EQ(status(id), "succeeded");
	const int64_t child = children_of(id).at(0).at("id").get<int64_t>();
	EXPECT_EQ(instance(id).at("output"), json::array({{{"e", std::to_string(child)}}}));
	// the whole tree shares the top instance as its root (the filter "root")
	start("top");
	const json tree = store().list_instances({{"root", id}});
	ASSERT_EQ(tree.size(), 2u);	 // the called child and its branch, newest first
	EXPECT_EQ(tree[1].at("id"), child);
	EXPECT_EQ(tree[0].at("parent_id"), child);
	EXPECT_EQ(tree[0].at("root_id"), id);
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "root", store().list_instances({{"root", "x"}}));
}

}  // namespace genroc::conformance
