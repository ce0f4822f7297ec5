// objects_test.cpp — large values stored once and referenced, on both
// stores (extension/sql/15_objects.sql; the shim's store_value, load_value,
// collect_objects): written once, read back identical, references on
// request, a replaced or pruned value readable for the grace and gone
// after it, the value_bytes limit.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {

const char *kThree = R"({"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"handler:a","Next":"B"},
  "B":{"Type":"Task","Resource":"handler:b","Next":"C"},
  "C":{"Type":"Task","Resource":"handler:c","End":true}}})";

// A value of about `bytes` bytes of JSON text that compresses poorly.
json payload(size_t bytes, char salt = 'a') {
	std::string s;
	s.reserve(bytes);
	uint32_t x = 2463534242u + static_cast<uint32_t>(salt);
	while (s.size() < bytes) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		s.push_back("0123456789abcdefghijklmnopqrstuvwxyz"[x % 36]);
	}
	return {{"blob", s}, {"salt", std::string(1, salt)}};
}

json objects(Store &s) { return s.metrics(0).at("objects"); }

bool is_ref(const json &v) { return v.is_object() && v.contains("genroc:object") && v.size() == 1; }

LogOptions options(int64_t threshold, int64_t grace_ms, bool payloads = true) {
	LogOptions o;
	o.payloads = payloads;
	o.object_threshold = threshold;
	o.object_grace_ms = grace_ms;
	return o;
}

}  // namespace

// A report that hands back the next task (complete_and_claim) gives its
// input as claim does: the value, not its reference.
TEST_P(StoreTest, AHandedBackTaskGetsItsLargeInputAsTheValue) {
	store().set_log_options(options(1024, 3'600'000));
	define("three", json::parse(kThree));
	worker("w1");
	const json big = payload(50'000);
	const int64_t id = start("three", big);
	Task a = claim_one("w1");
	Store::Report r = store().complete_and_claim(id, a.epoch, a.input, "w1", {"default"});
	ASSERT_TRUE(r.next.has_value());
	EXPECT_EQ(r.next->state, "B");
	EXPECT_EQ(r.next->input, big);
	r = store().fail_and_claim(id, r.next->epoch, "States.TaskFailed", "no", "w1", {"default"});
	EXPECT_EQ(r.status, "failed");
}

TEST_P(StoreTest, LargeValueIsStoredOnceAndReadBackIdentical) {
	store().set_log_options(options(1024, 3'600'000));
	define("three", json::parse(kThree));
	worker("w1");
	const json big = payload(200'000);
	const int64_t id = start("three", big);
	// input, state input, task input and two log entries: one object
	EXPECT_EQ(objects(store()).at("count"), 1);
	EXPECT_GE(objects(store()).at("bytes").get<int64_t>(), 200'000);
	EXPECT_LT(objects(store()).at("bytes").get<int64_t>(), 200'100);

	Task t = claim_one("w1");
	EXPECT_EQ(t.input, big);
	// passed on unchanged: nothing new
	EXPECT_EQ(store().complete(id, t.epoch, t.input), "ready");
	EXPECT_EQ(objects(store()).at("count"), 1);
	t = claim_one("w1");
	EXPECT_EQ(t.input, big);
	const json other = payload(50'000, 'b');
	EXPECT_EQ(store().complete(id, t.epoch, other), "ready");
	EXPECT_EQ(objects(store()).at("count"), 2);
	t = claim_one("w1");
	EXPECT_EQ(t.input, other);
	EXPECT_EQ(store().complete(id, t.epoch, other), "succeeded");
	EXPECT_EQ(objects(store()).at("count"), 2);

	// read back: values as they were
	const json inst = instance(id);
	EXPECT_EQ(inst.at("input"), big);
	EXPECT_EQ(inst.at("output"), other);
	bool saw_big = false;
	for (const auto &h : store().history(id))
		if (h.at("event") == "started") {
			EXPECT_EQ(h.at("detail").at("input"), big);
			saw_big = true;
		}
	EXPECT_TRUE(saw_big);
	const json listed = store().list_instances({{"limit", 1}});
	ASSERT_EQ(listed.size(), 1u);
	EXPECT_EQ(listed.at(0).at("input"), big);

	// references on request, each readable by get_object
	const json refs = store().get_instance(id, true);
	ASSERT_TRUE(is_ref(refs.at("input"))) << refs.at("input");
	ASSERT_TRUE(is_ref(refs.at("output"))) << refs.at("output");
	EXPECT_EQ(store().get_object(refs.at("input").at("genroc:object").get<std::string>()), big);
	EXPECT_EQ(store().get_object(refs.at("output").at("genroc:object").get<std::string>()), other);
	int ref_payloads = 0;
	for (const auto &h : store().history(id, true)) {
		const json &d = h.at("detail");
		for (const char *k : {"input", "output"})
			if (d.is_object() && d.contains(k) && is_ref(d.at(k))) {
				ref_payloads++;
				EXPECT_NO_THROW(store().get_object(d.at(k).at("genroc:object").get<std::string>()));
			}
	}
	EXPECT_GE(ref_payloads, 6);
	const json listed_refs = store().list_instances({{"limit", 1}, {"values", "ref"}});
	EXPECT_TRUE(is_ref(listed_refs.at(0).at("input")));

	EXPECT_RAISES(sqlstate::OBJECT_NOT_FOUND, "does not exist", store().get_object(std::string(64, '0')));
	EXPECT_RAISES("22023", "64 lowercase hex", store().get_object("nope"));
	EXPECT_RAISES("22023", "values", store().list_instances({{"values", "both"}}));
}

TEST_P(StoreTest, SmallValuesStayInTheRowAndLookAlikesRoundTrip) {
	store().set_log_options(options(1024, 3'600'000));
	define("three", json::parse(kThree));
	worker("w1");
	const int64_t id = start("three", {{"n", 1}});
	EXPECT_EQ(objects(store()).at("count"), 0);
	EXPECT_EQ(store().get_instance(id, true).at("input"), json({{"n", 1}}));
	// a small value shaped like a reference is kept as a value, never resolved
	const json lookalike = {{"genroc:object", std::string(64, 'a')}};
	Task t = claim_one("w1");
	EXPECT_EQ(store().complete(id, t.epoch, lookalike), "ready");
	t = claim_one("w1");
	EXPECT_EQ(t.input, lookalike);
	EXPECT_EQ(store().complete(id, t.epoch, t.input), "ready");
	t = claim_one("w1");
	EXPECT_EQ(store().complete(id, t.epoch, lookalike), "succeeded");
	EXPECT_EQ(instance(id).at("output"), lookalike);
	EXPECT_EQ(objects(store()).at("count"), 1);
}

TEST_P(StoreTest, ReplacedValueIsReadableForTheGraceAndGoneAfter) {
	// the log keeps no payloads: only the instance uses its values
	store().set_log_options(options(1024, 3'600'000, false));
	define("three", json::parse(kThree));
	worker("w1");
	const json first = payload(20'000, 'f');
	const json second = payload(20'000, 's');
	const int64_t id = start("three", first);
	Task t = claim_one("w1");
	EXPECT_EQ(store().complete(id, t.epoch, second), "ready");
	t = claim_one("w1");
	at(60);
	EXPECT_EQ(store().complete(id, t.epoch, {{"small", true}}), "ready");  // second replaced
	EXPECT_EQ(objects(store()).at("count"), 2);

	json ticked = store().tick(100);
	EXPECT_EQ(ticked.at("collected_objects"), 0);
	EXPECT_EQ(objects(store()).at("unused"), 1);  // second: found unused
	at(60 + 3000);
	EXPECT_EQ(store().tick(100).at("collected_objects"), 0);
	EXPECT_EQ(objects(store()).at("count"), 2);
	at(60 + 3601);
	EXPECT_EQ(store().tick(100).at("collected_objects"), 1);
	EXPECT_EQ(objects(store()).at("count"), 1);
	// the input it still uses is there
	EXPECT_EQ(instance(id).at("input"), first);
}

TEST_P(StoreTest, PrunedInstancesValuesGoAGraceAfter) {
	store().set_log_options(options(1024, 600'000));
	define("three", json::parse(kThree));
	worker("w1");
	const json big = payload(30'000, 'p');
	const int64_t id = start("three", big);
	for (int i = 0; i < 3; i++) {
		Task t = claim_one("w1");
		store().complete(id, t.epoch, t.input);
	}
	ASSERT_EQ(status(id), "succeeded");
	const std::string ref = store().get_instance(id, true).at("output").at("genroc:object").get<std::string>();
	at(120);
	json pruned = store().prune(0, 60'000, 100);
	EXPECT_EQ(pruned.at("instances"), 1);
	EXPECT_EQ(pruned.at("objects"), 0);
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().get_instance(id));
	// a client holding the reference still reads it within the grace
	EXPECT_EQ(store().get_object(ref), big);
	at(120 + 599);
	EXPECT_EQ(store().prune(0, 60'000, 100).at("objects"), 0);
	EXPECT_EQ(store().get_object(ref), big);
	at(120 + 601);
	EXPECT_EQ(store().prune(0, 60'000, 100).at("objects"), 1);
	EXPECT_RAISES(sqlstate::OBJECT_NOT_FOUND, "", store().get_object(ref));
	EXPECT_EQ(objects(store()).at("count"), 0);
}

TEST_P(StoreTest, ValueOverValueBytesIsRefused) {
	store().set_log_options(options(1024, 3'600'000));
	define("three", json::parse(kThree));
	json huge = {{"s", std::string(64 * 1024 * 1024, 'z')}};
	EXPECT_RAISES("54000", "value_bytes", store().start("three", huge, json::object()));
	EXPECT_EQ(objects(store()).at("count"), 0);
	EXPECT_EQ(store().list_instances(json::object()).size(), 0u);
}

}  // namespace genroc::conformance
