// logs_test.cpp — the instance log's payload options and retention on both
// stores (engine/log_payloads.cpp, the one payload rule; engine/retention.cpp
// and engine/tick.cpp, genroc.prune and tick).
#include <algorithm>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;

const char *kTask = R"({"StartAt":"Work","States":{
  "Work":{"Type":"Task","Resource":"handler:work","Next":"Gate"},
  "Gate":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"ResultPath":"$.got","End":true}}})";

// A Parallel of two branches, the second a Map of the input's items: a tree
// of 1 + 2 + items instances that ends inside start() (Pass states only).
const char *kFan = R"({"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
  {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},
  {"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","End":true,
    "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}}}}}]}}})";

// Its children end at once, then the root waits ten days.
const char *kFanThenWait = R"({"StartAt":"P","States":{"P":{"Type":"Parallel","Next":"W","Branches":[
  {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}]},
  "W":{"Type":"Wait","Seconds":864000,"End":true}}})";

const char *kEcho = R"({"StartAt":"E","States":{"E":{"Type":"Pass","End":true}}})";
const char *kOneTask = R"({"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}})";

bool has_payload(const json &detail) {
	return detail.is_object() && (detail.contains("input") || detail.contains("output") || detail.contains("payload"));
}

std::vector<int64_t> tree_of(Store &s, int64_t root) {
	std::vector<int64_t> out;
	for (const auto &i : s.list_instances({{"root", root}, {"limit", 10000}})) out.push_back(i.at("id").get<int64_t>());
	return out;
}

}  // namespace

TEST_P(StoreTest, LogPayloadsOffKeepsEventsAndStatesButNoPayload) {
	LogOptions o;
	o.payloads = false;
	store().set_log_options(o);
	define("job", json::parse(kTask));
	worker("w1");
	const int64_t id = start("job", {{"secret", "s3"}});
	Task t = claim_one("w1");
	EXPECT_EQ(store().emit(id, "early", {{"pin", 1234}}), "kept");
	EXPECT_EQ(store().complete(id, t.epoch, {{"secret", "s4"}}), "waiting");
	EXPECT_EQ(store().emit(id, "go", {{"pin", 5678}}), "delivered");
	ASSERT_EQ(status(id), "succeeded");

	const json hist = store().history(id);
	for (const auto &h : hist)
		EXPECT_FALSE(has_payload(h.at("detail"))) << h.dump();
	EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "task_scheduled", "task_started",
													"event_kept", "task_succeeded", "entered", "event_waiting",
													"event_received", "succeeded"}));
	// states and the other details stay
	EXPECT_EQ(hist[1].at("state"), "Work");
	EXPECT_EQ(hist[2].at("detail").at("resource"), "handler:work");
	EXPECT_EQ(hist[3].at("detail").at("worker"), "w1");
	EXPECT_EQ(hist[4].at("detail").at("name"), "early");
	EXPECT_EQ(hist[8].at("detail").at("name"), "go");
	// the instance keeps its own input and output
	EXPECT_EQ(instance(id).at("output").at("got"), json({{"pin", 5678}}));

	// on again: payloads are back for what is logged from now on
	store().set_log_options(LogOptions{});
	const int64_t id2 = start("job", {{"secret", "s5"}});
	EXPECT_EQ(store().history(id2).front().at("detail").at("input"), json({{"secret", "s5"}}));
}

TEST_P(StoreTest, LogPayloadMaxReplacesALongerPayloadWithAMarker) {
	LogOptions o;
	o.payload_max = 16;
	store().set_log_options(o);
	define("job", json::parse(kOneTask));
	worker("w1");
	const int64_t id = start("job", "short");	// "\"short\"": 7 bytes, kept whole
	Task t = claim_one("w1");
	// a JSON string's text is the same on both stores: 28 bytes with its quotes
	store().complete(id, t.epoch, "abcdefghijklmnopqrstuvwxyz");
	const json hist = store().history(id);
	EXPECT_EQ(hist.front().at("detail").at("input"), "short");
	auto succeeded = std::find_if(hist.begin(), hist.end(), [](const json &h) { return h.at("event") == "task_succeeded"; });
	ASSERT_NE(succeeded, hist.end());
	EXPECT_EQ(succeeded->at("detail").at("output"),
			  json({{"truncated", true}, {"bytes", 28}, {"head", "\"abcdefghijklmno"}}));
	EXPECT_EQ(succeeded->at("detail").at("worker"), "w1");
	// the instance's own output is whole
	EXPECT_EQ(instance(id).at("output"), "abcdefghijklmnopqrstuvwxyz");

	// 0: no limit
	o.payload_max = 0;
	store().set_log_options(o);
	const int64_t id2 = start("job", std::string(100, 'x'));
	EXPECT_EQ(store().history(id2).front().at("detail").at("input"), std::string(100, 'x'));
}

// One rule on one text for both stores (engine/log_payloads.cpp): a payload
// is measured by its JSON text as jsonb writes it (": " after a key, ", "
// between items, shorter keys first), so the same detail is truncated, or
// stored as a value, alike on PostgreSQL and SQLite.
TEST_P(StoreTest, LogPayloadRulesMeasureTheSameTextOnBothStores) {
	define("echo", json::parse(kEcho));
	json ones = json::array();
	for (int k = 0; k < 200; k++) ones.push_back(1);
	// [1, 1, ...]: 200 + 199 * 2 + 2 = 600 bytes (401 written compactly)
	LogOptions o;
	o.payload_max = 500;
	store().set_log_options(o);
	const int64_t id = start("echo", ones);
	const json started = store().history(id).front().at("detail").at("input");
	EXPECT_EQ(started.at("truncated"), true);
	EXPECT_EQ(started.at("bytes"), 600);
	std::string head = "[1";
	while (head.size() < 256) head += ", 1";
	EXPECT_EQ(started.at("head"), head.substr(0, 256));

	// an object's head: its keys as jsonb orders them, the shorter first
	const json keyed = {{"aa", std::string(600, 'x')}, {"b", 1}};
	const int64_t id2 = start("echo", keyed);
	const json marker = store().history(id2).front().at("detail").at("input");
	EXPECT_EQ(marker.at("bytes"), 618);	// {"b": 1, "aa": "x…x"}
	EXPECT_EQ(marker.at("head"), ("{\"b\": 1, \"aa\": \"" + std::string(600, 'x')).substr(0, 256));
	// within the limit: whole
	const int64_t id3 = start("echo", json::array({1, 2, 3}));
	EXPECT_EQ(store().history(id3).front().at("detail").at("input"), json::array({1, 2, 3}));

	// stored as a value: 400 ones are 1,200 bytes of log text (801
	// compactly), over a threshold of 1,024
	o = LogOptions{};
	o.object_threshold = 1024;
	store().set_log_options(o);
	json more = json::array();
	for (int k = 0; k < 400; k++) more.push_back(1);
	const int64_t id4 = start("echo", more);
	const json refs = store().history(id4, true);
	const json &input = refs.front().at("detail").at("input");
	EXPECT_TRUE(input.is_object() && input.contains("genroc:object")) << refs.front().dump();
	EXPECT_EQ(store().history(id4).front().at("detail").at("input"), more);
	// 300 ones (900 bytes) stay in the row
	json fewer = json::array();
	for (int k = 0; k < 300; k++) fewer.push_back(1);
	const int64_t id5 = start("echo", fewer);
	EXPECT_EQ(store().history(id5, true).front().at("detail").at("input"), fewer);
}

TEST_P(StoreTest, LogRetentionPrunesOldRowsOldestFirstInBatches) {
	define("echo", json::parse(kEcho));
	const int64_t old1 = start("echo", {{"n", 1}});
	const int64_t old2 = start("echo", {{"n", 2}});
	const size_t old_rows = store().history(old1).size() + store().history(old2).size();
	ASSERT_EQ(old_rows, 6u);
	at(3600);
	const int64_t young = start("echo", {{"n", 3}});

	// a retention of 0 prunes nothing
	EXPECT_EQ(store().prune(0, 0, 1000), json({{"log_rows", 0}, {"instances", 0}, {"objects", 0}}));
	// at most p_limit rows per call, the oldest first
	EXPECT_EQ(store().prune(kHour / 2, 0, 4).at("log_rows"), 4);
	EXPECT_EQ(store().history(old1).size(), 0u);
	EXPECT_EQ(store().history(old2).size(), 2u);
	EXPECT_EQ(store().prune(kHour / 2, 0, 4).at("log_rows"), 2);
	EXPECT_EQ(store().prune(kHour / 2, 0, 4).at("log_rows"), 0);
	EXPECT_EQ(store().history(young).size(), 3u);
	// the instances themselves stay
	EXPECT_EQ(status(old1), "succeeded");
	EXPECT_RAISES("22023", "a retention must not be negative", store().prune(-1, 0, 10));
	EXPECT_RAISES("22023", "a retention must not be negative", store().prune(0, -1, 10));
	EXPECT_RAISES("22023", "p_limit must be at least 1, not 0", store().prune(kHour, 0, 0));
}

TEST_P(StoreTest, InstanceRetentionDeletesAConcludedTreeWithItsLogsAndEvents) {
	define("fan", json::parse(kFan));
	define("job", json::parse(kTask));
	const int64_t root = start("fan", {{"items", {1, 2, 3}}});
	ASSERT_EQ(status(root), "succeeded");
	const auto tree = tree_of(store(), root);
	ASSERT_EQ(tree.size(), 5u);	// 2 branches, 3 Map items
	// a cancelled instance with a kept event
	const int64_t kept = start("job", {});
	EXPECT_EQ(store().emit(kept, "later", {{"k", 1}}), "kept");
	store().cancel(kept);

	at(23 * 3600);
	EXPECT_EQ(store().prune(0, kDay, 1000), json({{"log_rows", 0}, {"instances", 0}, {"objects", 0}}));
	at(25 * 3600);
	EXPECT_EQ(store().prune(0, kDay, 1000), json({{"log_rows", 0}, {"instances", 7}, {"objects", 0}}));
	for (int64_t id : tree) EXPECT_RAISES("RC003", "", store().get_instance(id));
	EXPECT_RAISES("RC003", "", store().get_instance(root));
	EXPECT_RAISES("RC003", "", store().history(root));
	EXPECT_RAISES("RC003", "", store().get_instance(kept));
	EXPECT_TRUE(store().list_instances({{"limit", 100}}).empty());
	// the definitions stay
	EXPECT_EQ(store().list_definitions().size(), 2u);
}

TEST_P(StoreTest, InstanceRetentionLeavesALiveTreeAlone) {
	define("fan_then_wait", json::parse(kFanThenWait));
	define("job", json::parse(kTask));
	const int64_t root = start("fan_then_wait", {});
	ASSERT_EQ(status(root), "waiting");
	const auto tree = tree_of(store(), root);
	ASSERT_EQ(tree.size(), 1u);
	ASSERT_EQ(status(tree[0]), "succeeded");
	// a live instance of its own, never pruned however old
	const int64_t running = start("job", {});

	at(5 * 86400);	// no tick: the Wait has not fired
	EXPECT_EQ(store().prune(0, kHour, 1000).at("instances"), 0);
	EXPECT_EQ(status(root), "waiting");
	EXPECT_EQ(status(tree[0]), "succeeded");
	EXPECT_EQ(status(running), "ready");
	EXPECT_FALSE(store().history(tree[0]).empty());
}

TEST_P(StoreTest, InstanceRetentionWaitsForALiveCalledChildOfAConcludedRoot) {
	define("job", json::parse(kOneTask));
	define("caller", json::parse(R"({"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"genroc:call",
	  "Parameters":{"Definition":"job"},"End":true}}})"));
	worker("w1");
	const int64_t root = start("caller", {});
	ASSERT_EQ(status(root), "succeeded");	// genroc:call does not wait
	const auto tree = tree_of(store(), root);
	ASSERT_EQ(tree.size(), 1u);
	ASSERT_EQ(status(tree[0]), "ready");

	at(5 * 86400);
	EXPECT_EQ(store().prune(0, kDay, 1000).at("instances"), 0);
	EXPECT_EQ(status(root), "succeeded");
	Task t = claim_one("w1");
	EXPECT_EQ(t.instance_id, tree[0]);
	EXPECT_EQ(store().complete(t.instance_id, t.epoch, "done"), "succeeded");
	// the tree is concluded now, but the root's own end is what counts
	EXPECT_EQ(store().prune(0, kDay, 1000).at("instances"), 2);
	EXPECT_RAISES("RC003", "", store().get_instance(tree[0]));
}

TEST_P(StoreTest, InstanceRetentionRespectsTheBatchBound) {
	define("echo", json::parse(kEcho));
	define("fan", json::parse(kFan));
	const int64_t a = start("echo", {});
	const int64_t b = start("echo", {});
	at(1);
	const int64_t root = start("fan", {{"items", {1, 2, 3}}});	// 6 instances
	at(10 * 86400);
	// a and b (ended first), then the tree's two newest instances
	EXPECT_EQ(store().prune(0, kDay, 4).at("instances"), 4);
	EXPECT_RAISES("RC003", "", store().get_instance(a));
	EXPECT_RAISES("RC003", "", store().get_instance(b));
	EXPECT_EQ(status(root), "succeeded");	// the top-level instance goes last
	EXPECT_EQ(tree_of(store(), root).size(), 3u);
	EXPECT_EQ(store().prune(0, kDay, 4).at("instances"), 4);
	EXPECT_RAISES("RC003", "", store().get_instance(root));
	EXPECT_EQ(store().prune(0, kDay, 4).at("instances"), 0);
}

TEST_P(StoreTest, TickPrunesByTheStoreLogOptionsOnlyWhenSet) {
	define("echo", json::parse(kEcho));
	const int64_t id = start("echo", {});
	at(30 * 86400);
	// the defaults (what plain SQL has): tick prunes nothing
	json done = store().tick(100);
	EXPECT_EQ(done.at("pruned_log_rows"), 0);
	EXPECT_EQ(done.at("pruned_instances"), 0);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(store().history(id).size(), 3u);

	LogOptions o;
	o.log_retention_ms = 7 * kDay;
	store().set_log_options(o);
	const int64_t fresh = start("echo", {});
	done = store().tick(2);
	EXPECT_EQ(done.at("pruned_log_rows"), 2);	// p_limit bounds pruning too
	EXPECT_EQ(done.at("pruned_instances"), 0);
	EXPECT_EQ(store().tick(100).at("pruned_log_rows"), 1);
	EXPECT_EQ(store().history(fresh).size(), 3u);

	o.instance_retention_ms = kDay;
	store().set_log_options(o);
	EXPECT_EQ(store().tick(100).at("pruned_instances"), 1);
	EXPECT_RAISES("RC003", "", store().get_instance(id));
	EXPECT_EQ(status(fresh), "succeeded");
}

}  // namespace genroc::conformance
