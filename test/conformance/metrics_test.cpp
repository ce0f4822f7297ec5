// metrics_test.cpp — the operators' figures on both stores (docs/operations.md
// "Metrics", 75_metrics.sql): genroc.metrics (instances by status and by
// definition with its bound, queue depth and the age of the oldest ready
// task, live workers), the queue a claim reports, and who ticks
// (genroc.tickers, named by set_ticked_by).
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json task_def() {
	return {{"StartAt", "T"}, {"States", {{"T", {{"Type", "Task"}, {"Resource", "handler:h"}, {"End", true}}}}}};
}
json queue_of(const json &m, const std::string &name) {
	for (auto &q : m.at("queues"))
		if (q.at("queue") == name) return q;
	return nullptr;
}
int64_t count_of(const json &rows, const json &match) {
	for (auto &r : rows) {
		bool all = true;
		for (auto &[k, v] : match.items()) all = all && r.value(k, json()) == v;
		if (all) return r.at("count").get<int64_t>();
	}
	return 0;
}
}  // namespace

TEST_P(StoreTest, MetricsCountQueuesAndBoundDefinitions) {
	define("alpha", task_def());
	define("beta", task_def());
	store().queue_set("bulk", {{"kind", "routed"}, {"match", {{"definitions", {"beta"}}}}});
	json m = store().metrics(50);
	EXPECT_EQ(m.at("instances").size(), 7u) << m.dump();
	for (auto &r : m.at("instances")) EXPECT_EQ(r.at("count"), 0) << m.dump();
	EXPECT_EQ(queue_of(m, "bulk").at("ready"), 0);
	EXPECT_EQ(queue_of(m, "bulk").at("oldest_ready_s"), 0);
	EXPECT_EQ(m.at("workers_alive"), 0);

	start("alpha");
	at(10);
	start("alpha");
	start("beta");
	start("beta", json::object(), {{"run_at", "2030-01-01T01:00:00Z"}});	 // waiting: not ready
	at(30);
	m = store().metrics(50);
	EXPECT_EQ(count_of(m.at("instances"), {{"status", "ready"}}), 3) << m.dump();
	EXPECT_EQ(count_of(m.at("instances"), {{"status", "waiting"}}), 1) << m.dump();
	EXPECT_EQ(count_of(m.at("by_definition"), {{"definition", "alpha"}, {"status", "ready"}}), 2) << m.dump();
	EXPECT_EQ(m.at("definitions_omitted"), 0);
	json d = queue_of(m, "default");
	EXPECT_EQ(d.at("ready"), 2) << m.dump();
	EXPECT_DOUBLE_EQ(d.at("oldest_ready_s").get<double>(), 30) << m.dump();
	EXPECT_DOUBLE_EQ(queue_of(m, "bulk").at("oldest_ready_s").get<double>(), 20) << m.dump();

	// a claim reports its queue; running and live workers move
	worker("w1", {{"queues", {"default", "bulk"}}});
	auto tasks = store().claim("w1", {"bulk"}, 5);
	ASSERT_EQ(tasks.size(), 1u);
	EXPECT_EQ(tasks[0].queue, "bulk");
	tasks = store().claim("w1", {"default"}, 1);
	ASSERT_EQ(tasks.size(), 1u);
	EXPECT_EQ(tasks[0].queue, "default");
	m = store().metrics(50);
	d = queue_of(m, "default");
	EXPECT_EQ(d.at("ready"), 1) << m.dump();
	EXPECT_EQ(d.at("running"), 1) << m.dump();
	EXPECT_EQ(d.at("workers"), 1) << m.dump();
	EXPECT_DOUBLE_EQ(d.at("oldest_ready_s").get<double>(), 20) << m.dump();	// the 10 s one is left
	EXPECT_EQ(m.at("workers_alive"), 1);

	// the bound: alpha has the most instances, beta is left out
	m = store().metrics(1);
	EXPECT_EQ(count_of(m.at("by_definition"), {{"definition", "alpha"}, {"status", "running"}}), 1) << m.dump();
	EXPECT_EQ(count_of(m.at("by_definition"), {{"definition", "beta"}, {"status", "running"}}), 0) << m.dump();
	EXPECT_EQ(m.at("definitions_omitted"), 1) << m.dump();
	EXPECT_EQ(store().metrics(0).at("by_definition"), json::array());
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_max_definitions", store().metrics(-1));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_max_definitions", store().metrics(1001));
}

// Every status is in "instances", 0 when no instance has it (a gauge that
// vanishes reads as "no data", not 0), in the order of their names; the
// statuses of the rows that do exist are counted as before.
TEST_P(StoreTest, MetricsNameEveryStatusEvenAtZero) {
	const json every = {"cancelled", "failed", "queued", "ready", "running", "succeeded", "waiting"};
	auto statuses = [](const json &m) {
		json out = json::array();
		for (auto &r : m.at("instances")) out.push_back(r.at("status"));
		return out;
	};
	json m = store().metrics(50);
	EXPECT_EQ(statuses(m), every) << m.dump();
	define("alpha", task_def());
	const int64_t done = start("alpha");
	start("alpha");
	worker("w1");
	Task t = claim_one("w1");
	ASSERT_EQ(t.instance_id, done);
	store().complete(t.instance_id, t.epoch, json::object());
	m = store().metrics(50);
	EXPECT_EQ(statuses(m), every) << m.dump();
	EXPECT_EQ(count_of(m.at("instances"), {{"status", "succeeded"}}), 1) << m.dump();
	EXPECT_EQ(count_of(m.at("instances"), {{"status", "ready"}}), 1) << m.dump();
	// the others are there (statuses() above), each with a count of 0
	for (auto &r : m.at("instances")) {
		if (r.at("status") != "succeeded" && r.at("status") != "ready") {
			EXPECT_EQ(r.at("count"), 0) << m.dump();
		}
	}
}

TEST_P(StoreTest, TickersNameWhoTicksAndWhen) {
	EXPECT_EQ(store().tickers(), json::array());
	store().set_ticked_by("genroc worker w9");
	store().tick(100);
	at(2.5);
	store().tick(100);
	at(3);
	json t = store().tickers();
	ASSERT_EQ(t.size(), 1u) << t.dump();
	EXPECT_EQ(t[0].at("ticked_by"), "genroc worker w9");
	EXPECT_EQ(t[0].at("kind"), "binary");
	EXPECT_EQ(t[0].at("ticks"), 2);
	EXPECT_EQ(t[0].at("ago_ms"), 500);
	EXPECT_EQ(t[0].at("first_tick_at"), "2030-01-01T00:00:00.000Z");
	EXPECT_EQ(t[0].at("last_tick_at"), "2030-01-01T00:00:02.500Z");
	// an unnamed caller is a session; gone after 7 days without a tick
	store().set_ticked_by("");
	store().tick(100);
	t = store().tickers();
	ASSERT_EQ(t.size(), 2u) << t.dump();
	EXPECT_EQ(t[0].at("kind"), "session") << t.dump();
	at(3 + 7 * 24 * 3600 + 1);
	store().tick(100);
	t = store().tickers();
	ASSERT_EQ(t.size(), 1u) << t.dump();
	EXPECT_EQ(t[0].at("kind"), "session") << t.dump();
}

}  // namespace genroc::conformance
