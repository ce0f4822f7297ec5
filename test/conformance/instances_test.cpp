// instances_test.cpp — start options, idempotent start, cancel (RC008),
// get/list instances, history events, RC003.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json task_def() {
	return json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Pass","Next":"T"},"T":{"Type":"Task","Resource":"handler:h","Next":"Done"},"Done":{"Type":"Succeed"}}})");
}
}  // namespace

TEST_P(StoreTest, IdempotencyKeyReturnsTheSameInstance) {
	define("job", task_def());
	auto first = store().start("job", {{"n", 1}}, {{"idempotency_key", "order-42"}});
	EXPECT_TRUE(first.is_new);
	auto second = store().start("job", {{"n", 2}}, {{"idempotency_key", "order-42"}});
	EXPECT_FALSE(second.is_new);
	EXPECT_EQ(second.instance_id, first.instance_id);
	EXPECT_EQ(second.status, "ready");
	EXPECT_EQ(instance(first.instance_id).at("input"), json({{"n", 1}}));
	auto other = store().start("job", {{"n", 3}}, {{"idempotency_key", "order-43"}});
	EXPECT_TRUE(other.is_new);
	EXPECT_NE(other.instance_id, first.instance_id);
	EXPECT_EQ(store().list_instances({{"definition", "job"}}).size(), 2u);
}

TEST_P(StoreTest, StartOptionsAreChecked) {
	define("job", task_def());
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "colour", store().start("job", json::object(), {{"colour", 1}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "priority", store().start("job", json::object(), {{"priority", "high"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "labels", store().start("job", json::object(), {{"labels", {{"k", 1}}}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "run_at", store().start("job", json::object(), {{"run_at", "tomorrow-ish"}}));
	EXPECT_TRUE(store().list_instances(json::object()).empty());
}

namespace {
// An instance as get_instance and history show it, without its id.
json without_id(Store &s, int64_t id) {
	json inst = s.get_instance(id);
	json log = s.history(id);
	for (auto &e : log) e.erase("seq");
	for (const char *k : {"id", "root_id", "activity_token"}) inst.erase(k);
	return {{"instance", inst}, {"log", log}};
}
}  // namespace

TEST_P(StoreTest, StartManyStartsWhatStartStarts) {
	define("job", task_def());
	define("waits", json::parse(R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}})"));
	const json inputs = json::array({json{{"n", 1}}, 2, "three", nullptr});
	const json opts = {{"priority", 3}, {"labels", {{"team", "a"}}}};
	auto many = store().start_many("job", inputs, opts);
	ASSERT_EQ(many.size(), inputs.size());
	for (size_t k = 0; k < many.size(); ++k) {
		EXPECT_TRUE(many[k].is_new);
		EXPECT_EQ(many[k].status, "ready");
		if (k > 0) {
			EXPECT_GT(many[k].instance_id, many[k - 1].instance_id);  // in input order
		}
		auto one = store().start("job", inputs[k], opts);
		EXPECT_EQ(without_id(store(), many[k].instance_id), without_id(store(), one.instance_id)) << "input " << k;
	}
	// a first step that waits takes start's own path
	auto waits = store().start_many("waits", json::array({1, 2}), json::object());
	ASSERT_EQ(waits.size(), 2u);
	EXPECT_EQ(waits[1].status, "waiting");
	EXPECT_EQ(without_id(store(), waits[0].instance_id),
			  without_id(store(), store().start("waits", 1, json::object()).instance_id));
	EXPECT_TRUE(store().start_many("job", json::array(), json::object()).empty());

	// claimed in input order, and they run
	worker("w1");
	for (size_t k = 0; k < many.size(); ++k) {
		Task t = claim_one("w1");
		EXPECT_EQ(t.instance_id, many[k].instance_id);
		EXPECT_EQ(t.input, inputs[k]);
	}
}

TEST_P(StoreTest, StartManyChecksItsArgumentsAndStartsNoneOnAnError) {
	define("job", task_def());
	const json one = json::array({1});
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "p_inputs must be a JSON array",
				  store().start_many("job", json{{"n", 1}}, json::object()));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "idempotency_key",
				  store().start_many("job", one, {{"idempotency_key", "k"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "name", store().start_many("job", one, {{"name", "k"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "priority", store().start_many("job", one, {{"priority", "high"}}));
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "nope", store().start_many("nope", one, json::object()));
	json many = json::array();
	for (size_t k = 0; k <= kMaxStartMany; ++k) many.push_back(k);
	EXPECT_RAISES("54000", "10001 inputs", store().start_many("job", many, json::object()));
	json deep = 1;
	for (int k = 0; k < 600; ++k) deep = json::array({deep});
	EXPECT_RAISES("54000", "the input at index 1",
				  store().start_many("job", json::array({1, deep}), json::object()));
	EXPECT_TRUE(store().list_instances(json::object()).empty());
}

TEST_P(StoreTest, CancelEndsALiveInstanceAndRefusesLateReports) {
	define("job", task_def());
	worker("w1");
	int64_t id = start("job");
	Task t = claim_one("w1");
	at(1);
	EXPECT_EQ(store().cancel(id), "cancelled");
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "cancelled");
	EXPECT_EQ(inst.at("error"), "genroc.Cancelled");
	EXPECT_EQ(inst.at("ended_at"), time_at(1));
	EXPECT_TRUE(inst.at("lease_owner").is_null());
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(id, t.epoch, json::object()));
	EXPECT_RAISES(sqlstate::INSTANCE_ENDED, "", store().cancel(id));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().cancel(987654));
	// A cancelled instance is no longer leased: nothing lapses, nothing to claim.
	at(100);
	EXPECT_EQ(store().tick(100).at("lapsed"), 0);
	EXPECT_TRUE(store().claim("w1", {"default"}, 1).empty());

	// Cancelling a waiting activity invalidates its token.
	define("act", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:x","End":true}}})"));
	int64_t act = start("act");
	auto got = store().claim_activity("x", "outside", 1);
	ASSERT_EQ(got.size(), 1u);
	store().cancel(act);
	EXPECT_RAISES(sqlstate::TASK_TOKEN_INVALID, "", store().activity_succeed(got[0].token, json::object()));
	// Succeeded instances cannot be cancelled either.
	define("quick", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}}})"));
	EXPECT_RAISES(sqlstate::INSTANCE_ENDED, "", store().cancel(start("quick")));
}

TEST_P(StoreTest, GetAndListInstances) {
	define("job", task_def());
	define("quick", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}}})"));
	int64_t a = start("job", json::object(), {{"labels", {{"tenant", "acme"}, {"env", "prod"}}}, {"partition_key", "acme/prod"}});
	int64_t b = start("job", json::object(), {{"labels", {{"tenant", "other"}, {"odd \"key\".$[0]", "v"}}}});
	int64_t c = start("quick");
	json ia = instance(a);
	EXPECT_EQ(ia.at("id"), a);
	EXPECT_EQ(ia.at("definition"), "job");
	EXPECT_EQ(ia.at("version"), 1);
	EXPECT_EQ(ia.at("status"), "ready");
	EXPECT_EQ(ia.at("state"), "T");
	EXPECT_EQ(ia.at("resource"), "handler:h");
	EXPECT_EQ(ia.at("queue"), "default");
	EXPECT_EQ(ia.at("labels"), json({{"tenant", "acme"}, {"env", "prod"}}));
	EXPECT_EQ(ia.at("partition_key"), "acme/prod");
	EXPECT_EQ(ia.at("created_at"), time_at(0));
	EXPECT_TRUE(ia.at("ended_at").is_null());
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().get_instance(123456));
	EXPECT_RAISES(sqlstate::INSTANCE_NOT_FOUND, "", store().history(123456));

	auto ids = [](const json &list) {
		std::vector<int64_t> out;
		for (auto &i : list) out.push_back(i.at("id").get<int64_t>());
		return out;
	};
	// Newest first.
	EXPECT_EQ(ids(store().list_instances(json::object())), (std::vector<int64_t>{c, b, a}));
	EXPECT_EQ(ids(store().list_instances({{"status", "ready"}})), (std::vector<int64_t>{b, a}));
	EXPECT_EQ(ids(store().list_instances({{"definition", "quick"}})), (std::vector<int64_t>{c}));
	EXPECT_EQ(ids(store().list_instances({{"label", {{"tenant", "acme"}}}})), (std::vector<int64_t>{a}));
	EXPECT_EQ(ids(store().list_instances({{"label", {{"tenant", "acme"}, {"env", "dev"}}}})), std::vector<int64_t>{});
	EXPECT_EQ(ids(store().list_instances({{"limit", 1}})), (std::vector<int64_t>{c}));
	EXPECT_EQ(ids(store().list_instances({{"label", {{"odd \"key\".$[0]", "v"}}}})), (std::vector<int64_t>{b}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "sort", store().list_instances({{"sort", "id"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "status", store().list_instances({{"status", "sleeping"}}));
}

// The console's paging: a keyset walk by id (before = the last id of a page)
// and a window of creation times, combined with the other filters.
TEST_P(StoreTest, ListInstancesPagesByKeyAndFiltersByTime) {
	define("job", task_def());
	define("quick", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}}})"));
	std::vector<int64_t> made;
	for (int i = 0; i < 7; ++i) {
		at(10 * i);
		made.push_back(start(i % 2 ? "quick" : "job"));
	}
	auto ids = [](const json &list) {
		std::vector<int64_t> out;
		for (auto &i : list) out.push_back(i.at("id").get<int64_t>());
		return out;
	};
	// Pages of 3, newest first, each starting below the last id of the one before.
	std::vector<int64_t> walked;
	json filter = {{"limit", 3}};
	for (int page = 0; page < 5; ++page) {
		json got = store().list_instances(filter);
		if (got.empty()) break;
		for (auto id : ids(got)) walked.push_back(id);
		filter["before"] = got.back().at("id");
	}
	EXPECT_EQ(walked, std::vector<int64_t>(made.rbegin(), made.rend()));
	EXPECT_EQ(ids(store().list_instances({{"before", made[3]}, {"definition", "job"}})),
			  (std::vector<int64_t>{made[2], made[0]}));
	// created_after inclusive, created_before exclusive.
	EXPECT_EQ(ids(store().list_instances({{"created_after", time_at(20)}, {"created_before", time_at(50)}})),
			  (std::vector<int64_t>{made[4], made[3], made[2]}));
	EXPECT_EQ(ids(store().list_instances({{"created_after", time_at(25)}, {"definition", "quick"}})),
			  (std::vector<int64_t>{made[5], made[3]}));
	EXPECT_TRUE(store().list_instances({{"created_before", time_at(0)}}).empty());
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "before", store().list_instances({{"before", "x"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "before", store().list_instances({{"before", -1}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "created_after",
				  store().list_instances({{"created_after", "soon"}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "created_before", store().list_instances({{"created_before", 5}}));
}

// The console's name filter: an instance's name, exactly, with the others.
TEST_P(StoreTest, ListInstancesFiltersByName) {
	define("job", task_def());
	const int64_t a = start("job", json::object(), {{"name", "nightly-1"}});
	const int64_t b = start("job", json::object(), {{"name", "nightly-2"}});
	start("job");
	auto ids = [](const json &list) {
		std::vector<int64_t> out;
		for (auto &i : list) out.push_back(i.at("id").get<int64_t>());
		return out;
	};
	EXPECT_EQ(ids(store().list_instances({{"name", "nightly-2"}})), (std::vector<int64_t>{b}));
	EXPECT_EQ(ids(store().list_instances({{"name", "nightly-1"}, {"definition", "job"}, {"top", true}})),
			  (std::vector<int64_t>{a}));
	EXPECT_TRUE(store().list_instances({{"name", "nightly"}}).empty());	 // exactly, not a prefix
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "name", store().list_instances({{"name", 7}}));
}

// list_instances' filter is checked the same on both stores (the engine's,
// engine/instances.cpp): each malformed key is 22023 naming it.
TEST_P(StoreTest, ListInstancesFilterErrors) {
	define("job", task_def());
	start("job");
	EXPECT_EQ(store().list_instances({{"values", "ref"}, {"limit", 10000}, {"offset", 0}}).size(), 1u);
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "list_instances filter must be a JSON object",
				  store().list_instances(json::array()));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"root\"", store().list_instances({{"root", -1}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"root\"", store().list_instances({{"root", 1.5}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"parent\"", store().list_instances({{"parent", json::array()}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"before\"",
				  store().list_instances({{"before", 1000000000000000000LL}}));	 // 19 digits
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"limit\"", store().list_instances({{"limit", 0}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"limit\"", store().list_instances({{"limit", 10001}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"label\"", store().list_instances({{"label", {{"k", 1}}}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"definition\"", store().list_instances({{"definition", ""}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"values\"", store().list_instances({{"values", "both"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"values\"",
				  store().list_instances({{"values", json::array({"ref"})}}));
	// the first malformed key in the order they are read: status before limit
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "\"status\"",
				  store().list_instances({{"limit", 0}, {"status", "sleeping"}}));
}

// capabilities: every key, a boolean each (an SQLite file's user has all).
TEST_P(StoreTest, CapabilitiesNameEachOne) {
	const json c = store().capabilities();
	EXPECT_TRUE(c.at("role").is_string()) << c.dump();
	for (const char *k : {"admin", "operator", "worker", "user", "token_verify", "token_create"})
		EXPECT_TRUE(c.at(k).is_boolean()) << k << " " << c.dump();
}

TEST_P(StoreTest, HistoryRecordsEveryStepInOrder) {
	define("job", task_def());
	worker("w1");
	int64_t id = start("job", {{"in", 1}});
	Task t = claim_one("w1");
	store().fail(id, t.epoch, "Oops", "first try");  // no Retry: the instance fails
	EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "entered", "task_scheduled", "task_started",
													"task_failed", "failed"}));
	json h = store().history(id);
	EXPECT_EQ(h[1].at("state"), "P");
	EXPECT_EQ(h[1].at("detail").at("type"), "Pass");
	EXPECT_EQ(h[3].at("state"), "T");
	EXPECT_EQ(h[3].at("detail").at("resource"), "handler:h");
	EXPECT_EQ(h[4].at("detail").at("worker"), "w1");
	EXPECT_EQ(h[5].at("detail").at("error"), "Oops");
	EXPECT_EQ(h[6].at("detail").at("error"), "Oops");
	for (size_t i = 1; i < h.size(); i++) EXPECT_LT(h[i - 1].at("seq"), h[i].at("seq"));
	// Times are genroc's ISO-8601 UTC text, as everywhere in the API.
	EXPECT_EQ(h[0].at("at"), time_at(0));

	int64_t ok = start("job");
	Task t2 = claim_one("w1");
	store().complete(ok, t2.epoch, {{"done", true}});
	auto ev = events(ok);
	ASSERT_GE(ev.size(), 3u);
	EXPECT_EQ(ev[ev.size() - 3], "task_succeeded");
	EXPECT_EQ(ev[ev.size() - 2], "entered");
	EXPECT_EQ(ev.back(), "succeeded");
}

TEST_P(StoreTest, HistoryOfWaitsLapsesAndCancel) {
	define("wait", json::parse(R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"Next":"T"},"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1", {{"lease_duration", "2s"}});
	int64_t id = start("wait");
	at(5);
	store().tick(100);
	claim_one("w1");
	at(7.25);
	store().tick(100);
	store().cancel(id);
	EXPECT_EQ(store().history(id).back().at("at"), time_at(7.25));
	EXPECT_EQ(events(id), (std::vector<std::string>{"started", "entered", "wait_started", "wait_ended", "entered",
													"task_scheduled", "task_started", "task_interrupted", "cancelled"}));
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// The test clock takes what PostgreSQL's timestamptz input takes for ISO
// dates; a value that is not a time fails on use (22007), and empty is real
// time.
TEST_P(StoreTest, TestClockFormsAndBadValues) {
	const std::pair<const char *, double> forms[] = {
		{"2030-01-01 00:00Z", 0},
		{"2030-01-01 02:00:00+02", 0},
		{"2030-01-01T00:00:01.5Z", 1.5},
		{"2029-12-31 23:00:00-01:00", 0},
		{"2030-01-01 00:01:00", 60},
	};
	for (auto &[text, seconds] : forms) {
		SCOPED_TRACE(text);
		store().set_test_clock(std::string(text));
		EXPECT_EQ(store().now(), time_at(seconds));
	}
	define("quick", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}}})"));
	store().set_test_clock(std::string("2030-01-01 00:00Z"));
	int64_t delayed = start("quick", json::object(), {{"run_at", "2030-01-01 00:00:30+00"}});
	EXPECT_EQ(instance(delayed).at("wait_until"), time_at(30));

	EXPECT_NO_THROW(store().set_test_clock(std::string("not a time")));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "not a time", store().now());
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "", store().start("quick", json::object(), json::object()));
	store().set_test_clock(std::string(""));
	EXPECT_NE(store().now(), time_at(0));
	EXPECT_EQ(store().start("quick", json::object(), json::object()).status, "succeeded");
	store().set_test_clock(std::nullopt);
	EXPECT_NE(store().now(), time_at(0));
}

}  // namespace genroc::conformance
