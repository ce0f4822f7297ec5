// redrive_test.cpp — genroc.redrive on both stores: a failed, timed-out or
// cancelled instance goes on from where it stopped; a Map or Parallel reruns
// only its children that did not succeed, the others keeping their outputs.
#include <algorithm>
#include <map>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

// Each item a Task: its handler answers the item's "i" times ten.
const char *kMap = R"({"StartAt":"Each","States":{
  "Each":{"Type":"Map","ItemsPath":"$.items","End":true,
          "ItemProcessor":{"StartAt":"Work","States":{
            "Work":{"Type":"Task","Resource":"handler:work","End":true}}}}}})";

const char *kMapAtMostTwo = R"({"StartAt":"Each","States":{
  "Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"End":true,
          "ItemProcessor":{"StartAt":"Work","States":{
            "Work":{"Type":"Task","Resource":"handler:work","End":true}}}}}})";

json items(int n) {
	json a = json::array();
	for (int i = 0; i < n; i++) a.push_back({{"i", i}});
	return {{"items", a}};
}

int count(const std::vector<std::string> &events, const std::string &event) {
	return static_cast<int>(std::count(events.begin(), events.end(), event));
}

}  // namespace

TEST_P(StoreTest, RedriveOfAMapRerunsOnlyItsFailedItems) {
	define("each", json::parse(kMap));
	worker("w1");
	const int64_t id = start("each", items(10));
	// the ten items' tasks: eight succeed, item 3 fails the Map, which
	// cancels item 7, still running
	std::map<int, int> runs;
	std::map<int, Task> held;
	for (int k = 0; k < 10; k++) {
		Task t = claim_one("w1");
		runs[t.input.at("i").get<int>()]++;
		held[t.input.at("i").get<int>()] = t;
	}
	for (auto &[i, t] : held) {
		if (i == 3 || i == 7) continue;
		EXPECT_EQ(store().complete(t.instance_id, t.epoch, i * 10), "succeeded");
	}
	EXPECT_EQ(store().fail(held[3].instance_id, held[3].epoch, "Boom", "item 3"), "failed");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "Boom");
	EXPECT_EQ(status(held[7].instance_id), "cancelled");

	EXPECT_EQ(store().redrive(id), "waiting");
	EXPECT_EQ(instance(id).at("error"), nullptr);
	// only items 3 and 7 run again
	std::vector<Task> again;
	again.push_back(claim_one("w1"));
	again.push_back(claim_one("w1"));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	for (const Task &t : again) {
		const int i = t.input.at("i").get<int>();
		runs[i]++;
		EXPECT_EQ(t.state, "Work");
		EXPECT_EQ(store().complete(t.instance_id, t.epoch, i * 10), "succeeded");
	}
	for (int i = 0; i < 10; i++) EXPECT_EQ(runs[i], i == 3 || i == 7 ? 2 : 1) << "item " << i;
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse("[0,10,20,30,40,50,60,70,80,90]"));
	// the children were not made again: the same ten
	EXPECT_EQ(children_of(id).size(), 10u);
	EXPECT_EQ(count(events(id), "redriven"), 1);
}

TEST_P(StoreTest, RedriveOfAMapKeepsItsMaxConcurrency) {
	define("each", json::parse(kMapAtMostTwo));
	worker("w1");
	const int64_t id = start("each", items(6));
	// items 0 and 1 run; 0 succeeds and 2 starts; 1 fails the Map: 2 is
	// cancelled while it runs, 3 to 5 before they started
	Task t0 = claim_one("w1"), t1 = claim_one("w1");
	ASSERT_EQ(t0.input.at("i"), 0);
	EXPECT_EQ(store().complete(t0.instance_id, t0.epoch, 0), "succeeded");
	Task t2 = claim_one("w1");
	ASSERT_EQ(t2.input.at("i"), 2);
	EXPECT_EQ(store().fail(t1.instance_id, t1.epoch, "Boom", "item 1"), "failed");
	EXPECT_EQ(status(id), "failed");

	EXPECT_EQ(store().redrive(id), "waiting");
	std::vector<int> order;
	for (;;) {
		auto tasks = store().claim("w1", {"default"}, 10);
		if (tasks.empty()) break;
		EXPECT_LE(tasks.size(), 2u);  // never more than two items at once
		for (const Task &t : tasks) {
			const int i = t.input.at("i").get<int>();
			order.push_back(i);
			store().complete(t.instance_id, t.epoch, i * 10);
		}
	}
	std::sort(order.begin(), order.end());
	EXPECT_EQ(order, std::vector<int>({1, 2, 3, 4, 5}));  // item 0 kept
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse("[0,10,20,30,40,50]"));
}

TEST_P(StoreTest, RedriveOfAParallelRerunsOnlyItsFailedBranch) {
	define("par", json::parse(R"({"StartAt":"Both","States":{"Both":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:a","End":true}}},
	  {"StartAt":"B","States":{"B":{"Type":"Task","Resource":"handler:b","End":true}}}]}}})"));
	worker("w1");
	const int64_t id = start("par", {{"k", 1}});
	Task a = claim_one("w1"), b = claim_one("w1");
	if (a.state != "A") std::swap(a, b);
	EXPECT_EQ(store().complete(a.instance_id, a.epoch, "from a"), "succeeded");
	EXPECT_EQ(store().fail(b.instance_id, b.epoch, "Boom", "b"), "failed");
	EXPECT_EQ(status(id), "failed");

	EXPECT_EQ(store().redrive(id), "waiting");
	Task again = claim_one("w1");
	EXPECT_EQ(again.state, "B");
	EXPECT_EQ(again.input, json({{"k", 1}}));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	EXPECT_EQ(store().complete(again.instance_id, again.epoch, "from b"), "succeeded");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::array({"from a", "from b"}));
}

TEST_P(StoreTest, RedriveEntersTheFailedTaskAgainWithItsInputAndCounts) {
	define("two", json::parse(R"({"StartAt":"Prep","States":{
	  "Prep":{"Type":"Pass","Result":"prepared","ResultPath":"$.prep","Next":"Charge"},
	  "Charge":{"Type":"Task","Resource":"handler:charge","End":true}}})"));
	worker("w1");
	const int64_t id = start("two", {{"k", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Declined", "1"), "failed");
	EXPECT_EQ(store().redrive(id), "ready");
	t = claim_one("w1");
	EXPECT_EQ(t.state, "Charge");
	EXPECT_EQ(t.input, json({{"k", 1}, {"prep", "prepared"}}));
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Declined", "2"), "failed");
	EXPECT_EQ(store().redrive(id), "ready");
	t = claim_one("w1");
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, "paid"), "succeeded");
	EXPECT_EQ(instance(id).at("output"), "paid");
	// each redrive is a log row, with the count so far
	const json h = store().history(id);
	const json &rows = h.contains("history") ? h.at("history") : h;
	std::vector<int> counts;
	for (const json &r : rows) {
		if (r.at("event") == "redriven") {
			counts.push_back(r.at("detail").at("redrive_count").get<int>());
		}
	}
	EXPECT_EQ(counts, std::vector<int>({1, 2}));
}

TEST_P(StoreTest, RedriveWithTheSameClientTokenRedrivesOnce) {
	define("two", json::parse(R"({"StartAt":"Charge","States":{
	  "Charge":{"Type":"Task","Resource":"handler:charge","End":true}}})"));
	worker("w1");
	const int64_t id = start("two", {{"k", 1}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Declined", "1"), "failed");
	EXPECT_EQ(store().redrive(id, "req-1"), "ready");
	// the same request again: its status, nothing redriven (it is not stopped)
	EXPECT_EQ(store().redrive(id, "req-1"), "ready");
	t = claim_one("w1");
	EXPECT_EQ(store().fail(t.instance_id, t.epoch, "Declined", "2"), "failed");
	// stopped again: the old token still answers without redriving
	EXPECT_EQ(store().redrive(id, "req-1"), "failed");
	EXPECT_EQ(store().redrive(id, "req-2"), "ready");
	int redriven = 0;
	const json h = store().history(id);
	for (const json &r : h.contains("history") ? h.at("history") : h)
		if (r.at("event") == "redriven") redriven++;
	EXPECT_EQ(redriven, 2);
	EXPECT_RAISES("22023", "p_client_token", store().redrive(id, ""));
	EXPECT_RAISES("22023", "p_client_token", store().redrive(id, std::string(65, 'x')));
}

TEST_P(StoreTest, RedriveOfACancelledMapRunsWhatDidNotSucceed) {
	define("each", json::parse(kMap));
	worker("w1");
	const int64_t id = start("each", items(3));
	Task t0 = claim_one("w1");
	EXPECT_EQ(store().complete(t0.instance_id, t0.epoch, t0.input.at("i").get<int>() * 10), "succeeded");
	EXPECT_EQ(store().cancel(id), "cancelled");
	EXPECT_EQ(store().redrive(id), "waiting");
	int runs = 0;
	for (auto tasks = store().claim("w1", {"default"}, 10); !tasks.empty();
		 tasks = store().claim("w1", {"default"}, 10)) {
		for (const Task &t : tasks) {
			runs++;
			EXPECT_NE(t.input, t0.input);
			store().complete(t.instance_id, t.epoch, t.input.at("i").get<int>() * 10);
		}
	}
	EXPECT_EQ(runs, 2);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse("[0,10,20]"));
}

TEST_P(StoreTest, RedriveReachesAFailedFanOutInsideAMapItem) {
	// each item a Parallel of two Tasks: item 1's branch B fails, which
	// fails item 1 and the Map; the redrive reruns only that branch
	define("nested", json::parse(R"({"StartAt":"Each","States":{
	  "Each":{"Type":"Map","ItemsPath":"$.items","End":true,"ItemProcessor":{"StartAt":"Both","States":{
	    "Both":{"Type":"Parallel","End":true,"Branches":[
	      {"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:a","End":true}}},
	      {"StartAt":"B","States":{"B":{"Type":"Task","Resource":"handler:b","End":true}}}]}}}}}})"));
	worker("w1");
	const int64_t id = start("nested", items(2));
	std::vector<Task> tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 4u);
	std::sort(tasks.begin(), tasks.end(), [](const Task &x, const Task &y) {
		return std::make_pair(x.input.at("i").get<int>(), x.state) < std::make_pair(y.input.at("i").get<int>(), y.state);
	});
	for (int k = 0; k < 3; k++) {
		const Task &t = tasks[k];
		store().complete(t.instance_id, t.epoch, t.state + std::to_string(t.input.at("i").get<int>()));
	}
	EXPECT_EQ(store().fail(tasks[3].instance_id, tasks[3].epoch, "Boom", "item 1, branch B"), "failed");
	EXPECT_EQ(status(id), "failed");

	EXPECT_EQ(store().redrive(id), "waiting");
	Task again = claim_one("w1");
	EXPECT_EQ(again.state, "B");
	EXPECT_EQ(again.input, json({{"i", 1}}));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	store().complete(again.instance_id, again.epoch, "B1");
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"([["A0","B0"],["A1","B1"]])"));
}

TEST_P(StoreTest, RedriveRefusesWhatHasNotStopped) {
	define("each", json::parse(kMap));
	define("pass", json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}})"));
	worker("w1");
	const int64_t live = start("each", items(1));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "is waiting", store().redrive(live));
	Task t = claim_one("w1");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "part of instance " + std::to_string(live),
				  store().redrive(t.instance_id));
	store().fail(t.instance_id, t.epoch, "Boom", "x");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "part of instance " + std::to_string(live),
				  store().redrive(t.instance_id));
	const int64_t done = start("pass");
	EXPECT_EQ(status(done), "succeeded");
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FAILED, "is succeeded", store().redrive(done));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "instance 999999 not found", store().redrive(999999));
}

}  // namespace genroc::conformance
