// complete_many_test.cpp — many reports in one call (genroc.complete_many):
// each as complete (or complete_and_claim, with a worker) makes it, in the
// order given; a report on a lost lease or a missing instance is answered
// in its outcome while the others go on; a misuse takes none.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json one_task() { return json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"); }
json two_tasks() {
	return json::parse(R"({"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
		"B":{"Type":"Task","Resource":"handler:h","End":true}}})");
}
// instance id -> lease epoch of the tasks a claim gave
std::map<int64_t, int64_t> epochs_of(const std::vector<Task> &tasks) {
	std::map<int64_t, int64_t> epoch;
	for (const auto &t : tasks) epoch[t.instance_id] = t.epoch;
	return epoch;
}
}  // namespace

TEST_P(StoreTest, CompleteManyReportsEachAsCompleteWould) {
	define("one", one_task());
	worker("w1");
	int64_t a = start("one", {{"n", 1}});
	int64_t b = start("one", {{"n", 2}});
	int64_t c = start("one", {{"n", 3}});
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 3u);
	auto epoch = epochs_of(tasks);
	at(1);
	// c first: the outcomes come in the order of the reports
	auto out = store().complete_many({{c, epoch[c], "three"}, {a, epoch[a], json{{"ok", 1}}}, {b, epoch[b], nullptr}},
									 "", {});
	ASSERT_EQ(out.size(), 3u);
	EXPECT_EQ(out[0].instance_id, c);
	EXPECT_EQ(out[1].instance_id, a);
	EXPECT_EQ(out[2].instance_id, b);
	for (const auto &o : out) {
		EXPECT_EQ(o.status, "succeeded");
		EXPECT_EQ(o.sqlstate, "");
		EXPECT_FALSE(o.next.has_value());
	}
	EXPECT_EQ(instance(a).at("output"), json({{"ok", 1}}));
	EXPECT_EQ(instance(b).at("output"), nullptr);
	EXPECT_EQ(instance(c).at("output"), "three");
	// the log complete writes
	for (int64_t id : {a, b, c})
		EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "task_scheduled", "task_started",
														"task_succeeded", "succeeded"}));
	const json hist = store().history(a);
	EXPECT_EQ(hist.at(4).at("detail"), json({{"output", {{"ok", 1}}}, {"worker", "w1"}, {"epoch", epoch[a]}}));
	// nothing to report: no outcome
	EXPECT_TRUE(store().complete_many({}, "", {}).empty());
}

TEST_P(StoreTest, CompleteManyAnswersReportsItDoesNotTakeAndTakesTheOthers) {
	define("one", one_task());
	worker("w1");
	int64_t a = start("one");
	int64_t b = start("one");
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	auto epoch = epochs_of(tasks);
	auto out = store().complete_many({{a + b + 1000, 1, 1},	  // no such instance
									  {a, epoch[a] + 1, 2},	  // a stale epoch
									  {b, epoch[b], 3},
									  {b, epoch[b], 4}},  // the same report again: b has ended
									 "", {});
	ASSERT_EQ(out.size(), 4u);
	EXPECT_EQ(out[0].sqlstate, sqlstate::INSTANCE_NOT_FOUND);
	EXPECT_EQ(out[0].status, "");
	EXPECT_EQ(out[1].sqlstate, sqlstate::LEASE_LOST);
	EXPECT_EQ(out[1].status, "");
	EXPECT_EQ(out[2].sqlstate, "");
	EXPECT_EQ(out[2].status, "succeeded");
	EXPECT_EQ(out[3].sqlstate, sqlstate::LEASE_LOST);
	EXPECT_EQ(instance(a).at("status"), "running");	// its lease is still w1's
	EXPECT_EQ(instance(b).at("output"), 3);
	EXPECT_EQ(events(b).back(), "succeeded");
	// a's own report still goes through
	EXPECT_EQ(store().complete(a, epoch[a], 5), "succeeded");
}

TEST_P(StoreTest, CompleteManyWithAWorkerHandsBackTheNextTasks) {
	define("two", two_tasks());
	worker("w1", {{"lease_duration", "7s"}});
	worker("w2");
	int64_t a = start("two", {{"n", 1}});
	int64_t b = start("two", {{"n", 2}});
	auto tasks = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(tasks.size(), 2u);
	auto epoch = epochs_of(tasks);
	at(1);
	auto out = store().complete_many({{a, epoch[a], {{"n", 10}}}, {b, epoch[b], {{"n", 20}}}}, "w1", {"default"});
	ASSERT_EQ(out.size(), 2u);
	for (const auto &o : out) {
		EXPECT_EQ(o.status, "running");
		ASSERT_TRUE(o.next.has_value());
		EXPECT_EQ(o.next->instance_id, o.instance_id);
		EXPECT_EQ(o.next->state, "B");
		EXPECT_EQ(o.next->lease_expires, time_at(8));
		EXPECT_NE(o.next->epoch, epoch[o.instance_id]);
	}
	EXPECT_EQ(out[0].next->input, json({{"n", 10}}));
	EXPECT_EQ(out[1].next->input, json({{"n", 20}}));
	EXPECT_EQ(events(a), (std::vector<std::string>{"started", "entered", "task_scheduled", "task_started",
												   "task_succeeded", "entered", "task_scheduled", "task_started"}));
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	// the last step: the instances end, nothing handed back
	auto last = store().complete_many({{a, out[0].next->epoch, 1}, {b, out[1].next->epoch, 2}}, "w1", {"default"});
	ASSERT_EQ(last.size(), 2u);
	EXPECT_EQ(last[0].status, "succeeded");
	EXPECT_FALSE(last[0].next.has_value());
	EXPECT_EQ(instance(b).at("output"), 2);
	// another worker's id: the report is taken, the next task stays ready
	int64_t c = start("two");
	Task t = claim_one("w1");
	auto other = store().complete_many({{c, t.epoch, 3}}, "w2", {"default"});
	ASSERT_EQ(other.size(), 1u);
	EXPECT_EQ(other[0].status, "ready");
	EXPECT_FALSE(other[0].next.has_value());
}

TEST_P(StoreTest, CompleteManyTakesNoneOnAMisuse) {
	define("one", one_task());
	worker("w1");
	int64_t a = start("one");
	Task t = claim_one("w1");
	std::vector<Store::Completion> many(10001, Store::Completion{a, t.epoch, 1});
	EXPECT_RAISES("54000", "10001 elements", store().complete_many(many, "", {}));
	json deep = 1;
	for (int i = 0; i < 600; i++) deep = json::array({deep});
	EXPECT_RAISES("54000", "", store().complete_many({{a, t.epoch, 1}, {a, t.epoch, deep}}, "", {}));
	EXPECT_EQ(instance(a).at("status"), "running");
	EXPECT_EQ(store().complete(a, t.epoch, 1), "succeeded");
}

}  // namespace genroc::conformance
