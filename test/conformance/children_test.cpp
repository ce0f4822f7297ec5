// children_test.cpp — composition on both stores: Parallel and Map run as
// child instances of their parent (core/asl.hpp "parallel" / "map"
// outcomes; extension/sql/65_children.sql; the shim's fan_out).
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

bool ended(const json &i) {
	const auto st = i.at("status").get<std::string>();
	return st == "succeeded" || st == "failed" || st == "cancelled";
}

// Live: started and not ended (a Map item not started yet waits 'pending').
int live_children(const std::vector<json> &kids) {
	int n = 0;
	for (const auto &c : kids)
		if (!ended(c) && c.at("wait_kind") != "pending") n++;
	return n;
}

const char *kParallel = R"({"StartAt":"P","States":{
  "P":{"Type":"Parallel","ResultPath":"$.results","Next":"Done",
       "Branches":[
         {"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:a","End":true}}},
         {"StartAt":"B","States":{"B":{"Type":"Pass","Result":"b","End":true}}},
         {"StartAt":"C","States":{"C":{"Type":"Task","Resource":"handler:c","End":true}}}]},
  "Done":{"Type":"Succeed"}}})";

}  // namespace

TEST_P(StoreTest, ParallelOutputsAreInBranchOrder) {
	define("par", json::parse(kParallel));
	worker("w1");
	const int64_t id = start("par", {{"in", 1}});
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(instance(id).at("wait_kind"), "children");
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 3u);
	for (size_t i = 0; i < kids.size(); i++) {
		EXPECT_EQ(kids[i].at("child_index"), i);
		EXPECT_EQ(kids[i].at("root_id"), id);
		EXPECT_EQ(kids[i].at("scope"), "/States/P/Branches/" + std::to_string(i));
	}
	EXPECT_EQ(kids[1].at("status"), "succeeded");  // a Pass branch ends in the fan-out

	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	// finish C before A: the output order is still the branch order
	const Task &a = tasks[0].state == "A" ? tasks[0] : tasks[1];
	const Task &c = tasks[0].state == "A" ? tasks[1] : tasks[0];
	EXPECT_EQ(a.input, json({{"in", 1}}));
	EXPECT_EQ(store().complete(c.instance_id, c.epoch, "c-out"), "succeeded");
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(store().complete(a.instance_id, a.epoch, {{"a", 1}}), "succeeded");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"in":1,"results":[{"a":1},"b","c-out"]})"));
	auto ev = events(id);
	EXPECT_NE(std::find(ev.begin(), ev.end(), "children_started"), ev.end());
	EXPECT_NE(std::find(ev.begin(), ev.end(), "children_done"), ev.end());
}

TEST_P(StoreTest, AFailingBranchFailsTheParallelAndCancelsItsSiblings) {
	define("par", json::parse(kParallel));
	worker("w1");
	const int64_t id = start("par");
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	const Task &a = tasks[0].state == "A" ? tasks[0] : tasks[1];
	const Task &c = tasks[0].state == "A" ? tasks[1] : tasks[0];
	EXPECT_EQ(store().fail(a.instance_id, a.epoch, "A.Broke", "no luck"), "failed");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "A.Broke");
	EXPECT_EQ(instance(id).at("cause"), "no luck");
	EXPECT_EQ(status(c.instance_id), "cancelled");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(c.instance_id, c.epoch, 1));
}

TEST_P(StoreTest, ParallelRetryCatchAndResultSelector) {
	define("par", json::parse(R"({"StartAt":"P","States":{
	  "P":{"Type":"Parallel","ResultSelector":{"first.$":"$[0]"},"ResultPath":"$.r","Next":"Done",
	       "Retry":[{"ErrorEquals":["Flaky"],"MaxAttempts":1,"IntervalSeconds":5}],
	       "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],
	       "Branches":[{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:a","End":true}}}]},
	  "Done":{"Type":"Succeed"},"Caught":{"Type":"Pass","End":true}}})"));
	worker("w1");
	const int64_t id = start("par", {{"k", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Flaky", "once"), "failed");
	// retried after 5s: the new fan-out's children start when tick finds it due
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(instance(id).at("attempt"), 1);
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(4);
	store().tick(100);
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());
	at(5);
	EXPECT_EQ(store().tick(100).at("timers"), 1);
	t = claim_one("w1");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, {{"v", 2}}), "succeeded");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"k":1,"r":{"first":{"v":2}}})"));
	EXPECT_EQ(children_of(id).size(), 2u);  // one per fan-out

	const int64_t id2 = start("par", {{"k", 2}});
	t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Other", "bad");
	EXPECT_EQ(status(id2), "succeeded");
	EXPECT_EQ(instance(id2).at("output"), json::parse(R"({"k":2,"err":{"Error":"Other","Cause":"bad"}})"));
}

TEST_P(StoreTest, MapOfAThousandItemsKeepsMaxConcurrency) {
	define("map", json::parse(R"J({"StartAt":"M","States":{
	  "M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":7,
	       "ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value"},
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "ResultSelector":{"n.$":"States.ArrayLength($)","last.$":"$[999]"},
	       "End":true}}})J"));
	worker("w1", {{"concurrency", 1000}});
	json xs = json::array();
	for (int i = 0; i < 1000; i++) xs.push_back(i * 2);
	const int64_t id = start("map", {{"xs", xs}});
	EXPECT_EQ(live_children(children_of(id)), 7);
	int done = 0, round = 0;
	while (true) {
		auto tasks = store().claim("w1", {"default"}, 5);
		if (tasks.empty()) break;
		for (const auto &t : tasks) {
			EXPECT_EQ(t.input.at("v"), t.input.at("i").get<int>() * 2);
			store().complete(t.instance_id, t.epoch, t.input.at("i"));
			done++;
		}
		if (++round % 20 == 0 || done == 1000) {
			const int live = live_children(children_of(id));
			EXPECT_LE(live, 7) << "after " << done << " items";
			EXPECT_EQ(live, std::min(7, 1000 - done)) << "after " << done << " items";
		}
	}
	EXPECT_EQ(done, 1000);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"n":1000,"last":999})"));
}

TEST_P(StoreTest, MapLiveChildrenNeverExceedMaxConcurrency) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":3,
	       "Iterator":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	worker("w1");
	const int64_t id = start("map", json::array({1, 2, 3, 4, 5, 6, 7, 8}));
	int done = 0;
	while (true) {
		EXPECT_LE(live_children(children_of(id)), 3);
		auto tasks = store().claim("w1", {"default"}, 1);
		if (tasks.empty()) break;
		EXPECT_LE(live_children(children_of(id)), 3);
		store().complete(tasks[0].instance_id, tasks[0].epoch, tasks[0].input.get<int>() * 10);
		done++;
	}
	EXPECT_EQ(done, 8);
	EXPECT_EQ(instance(id).at("output"), json::parse("[10,20,30,40,50,60,70,80]"));
}

TEST_P(StoreTest, MapToleratedFailures) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","ToleratedFailureCount":1,
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	worker("w1");
	// one failure of three is tolerated; the failed item's output is its error
	const int64_t ok = start("map", json::array({0, 1, 2}));
	for (const auto &t : store().claim("w1", {"default"}, 10)) {
		if (t.input == 1)
			store().fail(t.instance_id, t.epoch, "Item.Bad", "one");
		else
			store().complete(t.instance_id, t.epoch, t.input);
	}
	EXPECT_EQ(status(ok), "succeeded");
	EXPECT_EQ(instance(ok).at("output"), json::parse(R"([0,{"Error":"Item.Bad","Cause":"one"},2])"));

	// a second failure exceeds the count: the Map fails and the rest is cancelled
	const int64_t bad = start("map", json::array({0, 1, 2}));
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 3u);
	store().fail(tasks[0].instance_id, tasks[0].epoch, "Item.Bad", "x");
	EXPECT_EQ(status(bad), "waiting");
	store().fail(tasks[1].instance_id, tasks[1].epoch, "Item.Bad", "y");
	EXPECT_EQ(status(bad), "failed");
	EXPECT_EQ(instance(bad).at("error"), "States.ExceedToleratedFailureThreshold");
	EXPECT_EQ(status(tasks[2].instance_id), "cancelled");
}

TEST_P(StoreTest, MapToleratedPercentage) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","ToleratedFailurePercentage":50,
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:fail","End":true}}},
	       "Catch":[{"ErrorEquals":["States.ExceedToleratedFailureThreshold"],"Next":"Over"}],
	       "End":true},
	  "Over":{"Type":"Pass","Result":"over","End":true}}})"));
	worker("w1");
	// 2 of 4 failed = 50%: tolerated; the third would be 75%
	const int64_t id = start("map", json::array({{{"Error", "E"}}, 1, {{"Error", "E"}}, {{"Error", "E"}}}));
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 4u);
	std::sort(tasks.begin(), tasks.end(), [](const Task &a, const Task &b) { return a.instance_id < b.instance_id; });
	store().fail(tasks[0].instance_id, tasks[0].epoch, "E", "");
	store().complete(tasks[1].instance_id, tasks[1].epoch, 1);
	store().fail(tasks[2].instance_id, tasks[2].epoch, "E", "");
	EXPECT_EQ(status(id), "waiting");
	store().fail(tasks[3].instance_id, tasks[3].epoch, "E", "");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), "over");
}

TEST_P(StoreTest, MapRetryAndCatch) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","ItemsPath":"$.xs","ResultPath":"$.out",
	       "Retry":[{"ErrorEquals":["Again"],"MaxAttempts":1,"IntervalSeconds":1}],
	       "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Caught"}],
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true},
	  "Caught":{"Type":"Pass","End":true}}})"));
	worker("w1");
	const int64_t id = start("map", {{"xs", {1, 2}}});
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	store().fail(tasks[0].instance_id, tasks[0].epoch, "Again", "");
	EXPECT_EQ(status(tasks[1].instance_id), "cancelled");
	at(1);
	store().tick(100);
	tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	store().fail(tasks[1].instance_id, tasks[1].epoch, "Again", "twice");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({"xs":[1,2],"err":{"Error":"Again","Cause":"twice"}})"));
}

TEST_P(StoreTest, MapOfNothingAndInlineItems) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","Parameters":{"x.$":"$$.Map.Item.Value","exec.$":"$$.Execution.Id"},
	       "Iterator":{"StartAt":"T","States":{"T":{"Type":"Pass","End":true}}},"End":true}}})"));
	const int64_t empty = start("map", json::array());
	EXPECT_EQ(status(empty), "succeeded");
	EXPECT_EQ(instance(empty).at("output"), json::array());
	const int64_t id = start("map", json::array({"a", "b"}));
	EXPECT_EQ(status(id), "succeeded");
	const std::string exec = std::to_string(id);
	EXPECT_EQ(instance(id).at("output"), json::array({{{"x", "a"}, {"exec", exec}}, {{"x", "b"}, {"exec", exec}}}));
}

TEST_P(StoreTest, ParallelInMapNestsChildren) {
	define("pm", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":2,"End":true,
	       "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	         {"StartAt":"X","States":{"X":{"Type":"Task","Resource":"handler:x","End":true}}},
	         {"StartAt":"Y","States":{"Y":{"Type":"Pass","Result":"y","End":true}}}]}}}}}})"));
	worker("w1");
	const int64_t id = start("pm", json::array({1, 2, 3}));
	int done = 0;
	while (true) {
		auto tasks = store().claim("w1", {"default"}, 10);
		if (tasks.empty()) break;
		for (const auto &t : tasks) {
			EXPECT_EQ(instance(t.instance_id).at("root_id"), id);
			store().complete(t.instance_id, t.epoch, t.input.get<int>() + 100);
			done++;
		}
	}
	EXPECT_EQ(done, 3);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"([[101,"y"],[102,"y"],[103,"y"]])"));
}

TEST_P(StoreTest, CancellingAParentCancelsItsChildren) {
	define("pm", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":1,"End":true,
	       "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	         {"StartAt":"X","States":{"X":{"Type":"Task","Resource":"handler:x","End":true}}}]}}}}}})"));
	worker("w1");
	const int64_t id = start("pm", json::array({1, 2}));
	Task t = claim_one("w1");
	EXPECT_EQ(store().cancel(id), "cancelled");
	for (const auto &i : store().list_instances({{"limit", 100}})) {
		EXPECT_EQ(i.at("status"), "cancelled") << i.dump();
		EXPECT_EQ(i.at("cause"), i.at("id") == id ? "cancelled by request" : "the parent was cancelled") << i.dump();
	}
	const json last = store().history(id).back();
	EXPECT_EQ(last.at("event"), "cancelled");
	EXPECT_EQ(last.at("detail").at("cause"), "cancelled by request");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t.instance_id, t.epoch, 1));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
}

TEST_P(StoreTest, CancellingABranchFailsTheParallel) {
	define("par", json::parse(kParallel));
	const int64_t id = start("par");
	auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 3u);
	EXPECT_EQ(store().cancel(kids[0].at("id").get<int64_t>()), "cancelled");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "genroc.Cancelled");
	EXPECT_EQ(status(kids[2].at("id").get<int64_t>()), "cancelled");
}

// The counts a fan-out keeps on its parent (genroc._fanouts, the shim's
// fanouts), as get_instance shows them under "children": they follow every
// child's start and end, and only those: a child's crash (its lease lapses,
// the task runs again) changes nothing, a pending item cancelled from
// outside stops waiting and counts as failed, and the next item started
// passes over it.
TEST_P(StoreTest, MapCountsFollowItsChildrenThroughALapseAndACancel) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":2,"ToleratedFailureCount":5,
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	worker("w1", {{"lease_duration", "5s"}});
	const int64_t id = start("map", json::array({0, 1, 2, 3, 4}));
	auto counts = [&] { return instance(id).at("children"); };
	auto expect = [&](int ok, int failed, int running, int waiting) {
		return json{{"kind", "map"},	   {"total", 5},		  {"succeeded", ok},
					{"failed", failed}, {"running", running}, {"waiting", waiting}};
	};
	EXPECT_EQ(counts(), expect(0, 0, 2, 3));

	// item 0's worker dies: its lease lapses and the task is handed out again
	Task t0 = claim_one("w1");
	EXPECT_EQ(t0.input, 0);
	at(5);
	EXPECT_EQ(store().tick(100).at("lapsed"), 1);
	EXPECT_EQ(counts(), expect(0, 0, 2, 3));
	auto again = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(again.size(), 2u);  // items 0 (its second run) and 1
	EXPECT_EQ(counts(), expect(0, 0, 2, 3));
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(t0.instance_id, t0.epoch, "stale"));
	EXPECT_EQ(counts(), expect(0, 0, 2, 3));

	// item 3, still pending, is cancelled from outside
	const auto kids = children_of(id);
	ASSERT_EQ(kids.size(), 5u);
	EXPECT_EQ(kids[3].at("wait_kind"), "pending");
	EXPECT_EQ(store().cancel(kids[3].at("id").get<int64_t>()), "cancelled");
	EXPECT_EQ(counts(), expect(0, 1, 2, 2));

	for (const auto &t : again) store().complete(t.instance_id, t.epoch, t.input.get<int>() * 10);
	EXPECT_EQ(counts(), expect(2, 1, 2, 0));  // items 2 and 4 started, 3 passed over
	auto last = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(last.size(), 2u);
	EXPECT_EQ(last[0].input.get<int>() + last[1].input.get<int>(), 6);
	for (const auto &t : last)
		if (t.input == 2)
			store().fail(t.instance_id, t.epoch, "Item.Bad", "two");
		else
			store().complete(t.instance_id, t.epoch, t.input.get<int>() * 10);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(counts(), expect(3, 2, 0, 0));
	const json out = instance(id).at("output");
	ASSERT_EQ(out.size(), 5u);
	EXPECT_EQ(out[0], 0);
	EXPECT_EQ(out[1], 10);
	EXPECT_EQ(out[2], json::parse(R"({"Error":"Item.Bad","Cause":"two"})"));
	EXPECT_EQ(out[3].at("Error"), "genroc.Cancelled");
	EXPECT_EQ(out[4], 40);
}

// A retried Map starts its counts over with its new children (held back
// by the back-off: all waiting).
TEST_P(StoreTest, MapCountsStartOverWhenTheMapIsRetried) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":1,
	       "Retry":[{"ErrorEquals":["Item.Bad"],"IntervalSeconds":1,"MaxAttempts":1}],
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	worker("w1");
	const int64_t id = start("map", json::array({1, 2, 3}));
	Task t = claim_one("w1");
	store().fail(t.instance_id, t.epoch, "Item.Bad", "once");
	// the Map waits out its back-off: the new children wait, none started
	EXPECT_EQ(instance(id).at("children"),
			  json::parse(R"({"kind":"map","total":3,"succeeded":0,"failed":0,"running":0,"waiting":3})"));
	at(1);
	store().tick(100);
	for (int i = 0; i < 3; i++) {
		Task u = claim_one("w1");
		store().complete(u.instance_id, u.epoch, u.input);
	}
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse("[1,2,3]"));
	EXPECT_EQ(instance(id).at("children"),
			  json::parse(R"({"kind":"map","total":3,"succeeded":3,"failed":0,"running":0,"waiting":0})"));
}

TEST_P(StoreTest, ListInstancesByParentTopAndOffset) {
	define("map", json::parse(R"({"StartAt":"M","States":{
	  "M":{"Type":"Map","MaxConcurrency":1,
	       "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}},
	       "End":true}}})"));
	const int64_t a = start("map", json::array({0, 1, 2, 3, 4}));
	const int64_t b = start("map", json::array({5}));
	auto ids = [](const json &list) {
		std::vector<int64_t> out;
		for (const auto &i : list) out.push_back(i.at("id").get<int64_t>());
		return out;
	};
	EXPECT_EQ(ids(store().list_instances({{"top", true}})), (std::vector<int64_t>{b, a}));
	json kids = store().list_instances({{"parent", a}, {"limit", 2}, {"offset", 1}});
	ASSERT_EQ(kids.size(), 2u);
	EXPECT_EQ(kids[0].at("child_index"), 1);
	EXPECT_EQ(kids[1].at("child_index"), 2);
	EXPECT_EQ(store().list_instances({{"parent", a}, {"status", "waiting"}}).size(), 4u);
	EXPECT_EQ(store().list_instances({{"parent", a}, {"offset", 5}}).size(), 0u);
	EXPECT_EQ(store().list_instances({{"parent", a}, {"top", true}}).size(), 0u);
	EXPECT_EQ(store().list_instances({{"limit", 3}}).size(), 3u);  // children too without "top"
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"offset\"", store().list_instances({{"offset", -1}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"top\"", store().list_instances({{"top", 1}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"parent\"", store().list_instances({{"parent", "x"}}));
	EXPECT_FALSE(instance(kids[0].at("id").get<int64_t>()).contains("children"));
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// ItemBatcher and MaxConcurrencyPath run the same on both stores: five items
// in batches of two are three children, at most one live at a time, and the
// output is each batch's output in batch order.
TEST_P(StoreTest, MapItemBatcherAndMaxConcurrencyPath) {
	define("batched", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
	  "MaxConcurrencyPath":"$.mc","ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"tag.$":"$.tag"}},
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}},
	  "End":true}}})"));
	worker("w1");
	const int64_t id = start("batched", {{"xs", {1, 2, 3, 4, 5}}, {"mc", 1}, {"tag", "t"}});
	std::vector<json> seen;
	for (int i = 0; i < 3; i++) {
		auto tasks = store().claim("w1", {"default"}, 10);
		ASSERT_EQ(tasks.size(), 1u) << "batch " << i;
		seen.push_back(tasks[0].input);
		store().complete(tasks[0].instance_id, tasks[0].epoch, tasks[0].input.at("Items").size());
	}
	EXPECT_EQ(seen[0], json::parse(R"({"BatchInput":{"tag":"t"},"Items":[1,2]})"));
	EXPECT_EQ(seen[2], json::parse(R"({"BatchInput":{"tag":"t"},"Items":[5]})"));
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse("[2,2,1]"));
	EXPECT_EQ(children_of(id).size(), 3u);
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// A Map item that ends in a Fail state with no Error and no Cause fails the
// Map (and, with no Catch that could match a nameless error, the instance),
// as AWS does; it used to count as a success.
TEST_P(StoreTest, AMapItemEndingInANamelessFailFailsTheMap) {
	define("nameless", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
	  "Catch":[{"ErrorEquals":["Other"],"Next":"Caught"}],
	  "ItemProcessor":{"StartAt":"C","States":{
	    "C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":2,"Next":"F"}],"Default":"S"},
	    "F":{"Type":"Fail"},"S":{"Type":"Succeed"}}},
	  "Next":"Done"},"Done":{"Type":"Succeed"},"Caught":{"Type":"Pass","End":true}}})"));
	const int64_t id = start("nameless", {{"xs", {1, 2, 3}}});
	EXPECT_EQ(status(id), "failed");
	EXPECT_TRUE(instance(id).at("error").is_null());
	EXPECT_TRUE(instance(id).at("cause").is_null());
	// Tolerated, it is one failed item among three.
	define("tolerated", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs",
	  "ToleratedFailureCount":1,
	  "ItemProcessor":{"StartAt":"C","States":{
	    "C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":2,"Next":"F"}],"Default":"S"},
	    "F":{"Type":"Fail"},"S":{"Type":"Succeed"}}},
	  "End":true}}})"));
	const int64_t ok = start("tolerated", {{"xs", {1, 2, 3}}});
	EXPECT_EQ(status(ok), "succeeded");
	EXPECT_EQ(instance(ok).at("output"), json::parse(R"([1,{},3])"));
}

}  // namespace genroc::conformance
