// e2e_http_test.cpp — the HTTP API served in-process (start_api on an
// ephemeral port) over a real store, SQLite and PostgreSQL, driven with an
// HTTP client: each route's answer and its errors.
#include <httplib.h>

#include <atomic>
#include <set>
#include <thread>

#include "e2e_http_support.hpp"
#include "http_api.hpp"

namespace genroc::e2e::api_test {
namespace {

const json kHello = json::parse(R"({"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}})");
const json kApprove =
	json::parse(R"({"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"activity:approve","End":true}}})");

struct Reply {
	int status = 0;
	json body;
	std::string raw;
};

class HttpApiTest : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override {
		std::string skip;
		db_.create(GetParam(), skip);
		if (!skip.empty()) GTEST_SKIP() << skip;
		// the API as a role with what docs/security.md "Roles and ownership" says it needs
		const std::string url = binary_url(db_.url(), "api");
		ApiOptions o;
		o.listen = "127.0.0.1:0";
		o.max_body = 64 * 1024;
		HealthInfo h;
		h.worker_id = "w-http";
		h.manual_tick = true;
		h.lease_age_ms = [this] { return lease_age_.load(); };
		server_ = start_api(o, [url] { return open_store(url); }, h);
		client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
		client_->set_read_timeout(30, 0);
	}

	void TearDown() override {
		client_.reset();
		if (server_) server_->stop();
		server_.reset();
		db_.drop();
	}

	static Reply reply(const httplib::Result &r) {
		Reply out;
		if (!r) {
			ADD_FAILURE() << "no HTTP answer: " << httplib::to_string(r.error());
			return out;
		}
		out.status = r->status;
		out.raw = r->body;
		out.body = json::parse(r->body, nullptr, false);
		EXPECT_FALSE(out.body.is_discarded()) << "not JSON: " << r->body;
		EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
		return out;
	}
	Reply get(const std::string &path) { return reply(client_->Get(path.c_str())); }
	Reply post(const std::string &path, const std::string &body) {
		return reply(client_->Post(path.c_str(), body, "application/json"));
	}
	Reply post(const std::string &path, const json &body) { return post(path, body.dump()); }

	// Asserts an error answer: status, SQLSTATE, and part of the message.
	static void expect_error(const Reply &r, int status, const std::string &sqlstate, const std::string &part = "") {
		EXPECT_EQ(r.status, status) << r.raw;
		ASSERT_TRUE(r.body.contains("error")) << r.raw;
		EXPECT_EQ(r.body["error"].value("sqlstate", ""), sqlstate) << r.raw;
		EXPECT_NE(r.body["error"].value("message", "").find(part), std::string::npos) << r.raw;
	}

	int64_t start_instance(const std::string &def, const json &input = json::object(),
						   const json &options = json::object()) {
		auto r = post("/api/instances", json{{"definition", def}, {"input", input}, {"options", options}});
		EXPECT_TRUE(r.status == 201 || r.status == 200) << r.raw;
		return r.body.value("instance_id", int64_t(0));
	}

	void define(const std::string &name, const json &def) {
		auto r = post("/api/definitions", json{{"name", name}, {"definition", def}});
		ASSERT_TRUE(r.status == 201 || r.status == 200) << r.raw;
	}

	TestDatabase db_;
	std::unique_ptr<ApiServer> server_;
	std::unique_ptr<httplib::Client> client_;
	std::atomic<int64_t> lease_age_{812};
};

TEST_P(HttpApiTest, HealthzHasExactlyTheDocumentedShape) {
	auto r = get("/healthz");
	EXPECT_EQ(r.status, 200);
	EXPECT_EQ(r.raw, R"({"status":"ok","worker_id":"w-http","database":")" + GetParam() +
						 R"(","lease_age_ms":812,"manual_tick":true,"ticking":[]})" + "\n");	// nobody ticked
	// A process that runs no worker reports null.
	lease_age_ = -1;
	r = get("/healthz");
	EXPECT_EQ(r.status, 200);
	EXPECT_TRUE(r.body["lease_age_ms"].is_null()) << r.raw;
	EXPECT_EQ(r.body.size(), 6u) << r.raw;
}

TEST_P(HttpApiTest, DefinitionsRegisterAndList) {
	auto r = post("/api/definitions", json{{"name", "hello"}, {"definition", kHello}});
	EXPECT_EQ(r.status, 201) << r.raw;
	EXPECT_EQ(r.body, (json{{"name", "hello"}, {"version", 1}, {"is_new", true}}));
	// Same content: the same version, not new.
	r = post("/api/definitions", json{{"name", "hello"}, {"definition", kHello}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["is_new"], false);
	EXPECT_EQ(r.body["version"], 1);

	r = get("/api/definitions");
	EXPECT_EQ(r.status, 200);
	ASSERT_EQ(r.body["definitions"].size(), 1u) << r.raw;
	EXPECT_EQ(r.body["definitions"][0]["name"], "hello");
	EXPECT_EQ(r.body["definitions"][0]["version"], 1);
}

TEST_P(HttpApiTest, DefinitionErrors) {
	json bad = {{"StartAt", "Nope"}, {"States", {{"Hi", {{"Type", "Pass"}, {"End", true}}}}}};
	expect_error(post("/api/definitions", json{{"name", "bad"}, {"definition", bad}}), 400, "RC001");
	expect_error(post("/api/definitions", json{{"definition", kHello}}), 400, "22004", "\"name\"");
	expect_error(post("/api/definitions", json{{"name", 7}, {"definition", kHello}}), 400, "22023",
				 "\"name\" must be a string");
	expect_error(post("/api/definitions", json{{"name", "x"}, {"definition", "text"}}), 400, "22023",
				 "\"definition\" must be an object");
	expect_error(post("/api/definitions", json{{"name", "x"}, {"definition", kHello}, {"nmae", 1}}), 400,
				 "22023", "unknown field \"nmae\"");
	expect_error(post("/api/definitions", std::string("{\"name\": \"x\", ")), 400, "22P02", "not valid JSON");
	expect_error(post("/api/definitions", std::string("[1,2]")), 400, "22023", "JSON object");
	// None of those stored anything.
	EXPECT_EQ(get("/api/definitions").body["definitions"].size(), 0u);
}

TEST_P(HttpApiTest, InstancesStartGetHistoryAndIdempotentRepeat) {
	define("hello", kHello);
	auto r = post("/api/instances", json{{"definition", "hello"}, {"input", {{"who", "world"}}},
										  {"options", {{"idempotency_key", "k-1"}}}});
	EXPECT_EQ(r.status, 201) << r.raw;
	int64_t id = r.body["instance_id"];
	EXPECT_GT(id, 0);
	EXPECT_EQ(r.body["is_new"], true);
	EXPECT_EQ(r.body["status"], "succeeded");

	r = post("/api/instances", json{{"definition", "hello"}, {"options", {{"idempotency_key", "k-1"}}}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["instance_id"], id);
	EXPECT_EQ(r.body["is_new"], false);

	r = get("/api/instances/" + std::to_string(id));
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["status"], "succeeded");
	EXPECT_EQ(r.body["output"], "hello");
	EXPECT_EQ(r.body["input"], (json{{"who", "world"}}));

	r = get("/api/instances/" + std::to_string(id) + "/history");
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["instance_id"], id);
	ASSERT_TRUE(r.body["history"].is_array());
	ASSERT_GE(r.body["history"].size(), 2u) << r.raw;
	EXPECT_EQ(r.body["history"][0]["event"], "started");
	EXPECT_EQ(r.body["history"].back()["event"], "succeeded");
}

TEST_P(HttpApiTest, InstancesStartedInABatch) {
	define("hello", kHello);
	define("approve", kApprove);
	auto r = post("/api/instances/batch",
				  json{{"definition", "approve"}, {"inputs", {1, {{"n", 2}}, nullptr}}, {"options", {{"priority", 2}}}});
	EXPECT_EQ(r.status, 201) << r.raw;
	ASSERT_EQ(r.body["instances"].size(), 3u) << r.raw;
	for (const json &i : r.body["instances"]) EXPECT_EQ(i["status"], "waiting");
	EXPECT_EQ(get("/api/instances/" + r.body["instances"][1]["instance_id"].dump()).body["input"], (json{{"n", 2}}));
	r = post("/api/instances/batch", json{{"definition", "hello"}, {"inputs", json::array()}});
	EXPECT_EQ(r.status, 201) << r.raw;
	EXPECT_EQ(r.body["instances"], json::array());

	expect_error(post("/api/instances/batch", json{{"definition", "hello"}}), 400, "22004", "\"inputs\"");
	expect_error(post("/api/instances/batch", json{{"definition", "hello"}, {"inputs", {{"n", 1}}}}), 400, "22023",
				 "\"inputs\" must be an array");
	expect_error(post("/api/instances/batch", json{{"definition", "hello"}, {"inputs", {1}}, {"options", {{"name", "x"}}}}),
				 400, "22023", "name");
	expect_error(post("/api/instances/batch", json{{"definition", "nope"}, {"inputs", {1}}}), 404, "RC002");
	json many = json::array();
	for (size_t k = 0; k <= kMaxStartMany; ++k) many.push_back(k);
	expect_error(post("/api/instances/batch", json{{"definition", "hello"}, {"inputs", many}}), 400, "54000",
				 "at most 10000");
	EXPECT_EQ(get("/api/instances").body["instances"].size(), 3u);
}

// A list answer is read from the store in chunks of 100 (bounded in bytes):
// a longer page is still whole, in order, no row twice, offset and filters
// as in one statement.
TEST_P(HttpApiTest, ListPagesLongerThanAChunkAreWholeAndInOrder) {
	define("approve", kApprove);
	json inputs = json::array();
	for (int k = 0; k < 250; ++k) inputs.push_back(k);
	ASSERT_EQ(post("/api/instances/batch", json{{"definition", "approve"}, {"inputs", inputs}}).status, 201);
	auto ids = [&](const std::string &query) {
		std::vector<int64_t> out;
		auto r = get("/api/instances?" + query);
		EXPECT_EQ(r.status, 200) << r.raw.substr(0, 300);
		for (const auto &i : r.body["instances"]) out.push_back(i["id"].get<int64_t>());
		return out;
	};
	const auto all = ids("limit=250");
	ASSERT_EQ(all.size(), 250u);
	for (size_t k = 1; k < all.size(); ++k) EXPECT_EQ(all[k], all[k - 1] - 1) << k;
	EXPECT_EQ(ids("limit=150&offset=10"), std::vector<int64_t>(all.begin() + 10, all.begin() + 160));
	EXPECT_EQ(ids("limit=300&status=waiting&before=" + std::to_string(all[5])),
			  std::vector<int64_t>(all.begin() + 6, all.end()));
	EXPECT_EQ(ids("limit=1000&offset=240").size(), 10u);
	EXPECT_EQ(ids("").size(), 100u);  // the default page
}

TEST_P(HttpApiTest, InstanceErrors) {
	define("hello", kHello);
	expect_error(get("/api/instances/987654"), 404, "RC003");
	expect_error(get("/api/instances/987654/history"), 404, "RC003");
	expect_error(post("/api/instances/987654/cancel", std::string()), 404, "RC003");
	expect_error(get("/api/instances/abc"), 400, "22023", "\"abc\"");
	expect_error(get("/api/instances/-3"), 400, "22023");
	expect_error(post("/api/instances", json{{"definition", "nope"}}), 404, "RC002");
	expect_error(post("/api/instances", json{{"input", {}}}), 400, "22004", "\"definition\"");
	expect_error(post("/api/instances", json{{"definition", "hello"}, {"options", {{"colour", "red"}}}}), 400,
				 "22023", "colour");
	expect_error(post("/api/instances", json{{"definition", "hello"}, {"options", "fast"}}), 400, "22023",
				 "\"options\" must be an object");
	EXPECT_EQ(get("/api/instances").body["instances"].size(), 0u);
}

// Instance retention: once genroc.prune deleted a concluded instance, its
// id answers 404 like one that never was.  The pruning session's own test
// clock is far ahead; the server's sessions keep real time.
TEST_P(HttpApiTest, APrunedInstanceAnswers404) {
	define("hello", kHello);
	const int64_t id = start_instance("hello");
	ASSERT_EQ(get("/api/instances/" + std::to_string(id)).body.value("status", ""), "succeeded");
	auto pruner = open_store(db_.url());
	pruner->set_test_clock("2100-01-01T00:00:00.000Z");
	EXPECT_EQ(pruner->prune(0, 86'400'000, 100).at("instances"), 1);
	expect_error(get("/api/instances/" + std::to_string(id)), 404, "RC003");
	expect_error(get("/api/instances/" + std::to_string(id) + "/history"), 404, "RC003");
}

TEST_P(HttpApiTest, ListFilters) {
	define("hello", kHello);
	define("approve", kApprove);
	int64_t a = start_instance("hello", json::object(), {{"labels", {{"team", "red"}}}});
	int64_t b = start_instance("approve", json::object(), {{"labels", {{"team", "blue"}}}});
	int64_t c = start_instance("approve", json::object(), {{"labels", {{"team", "red"}, {"env", "prod"}}}});

	auto ids = [](const Reply &r) {
		std::set<int64_t> out;
		for (auto &i : r.body["instances"]) out.insert(i["id"].get<int64_t>());
		return out;
	};
	auto r = get("/api/instances");
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(ids(r), (std::set<int64_t>{a, b, c}));
	EXPECT_EQ(ids(get("/api/instances?status=waiting")), (std::set<int64_t>{b, c}));
	EXPECT_EQ(ids(get("/api/instances?definition=hello")), (std::set<int64_t>{a}));
	EXPECT_EQ(ids(get("/api/instances?label=team:red")), (std::set<int64_t>{a, c}));
	EXPECT_EQ(ids(get("/api/instances?label=team:red&label=env:prod")), (std::set<int64_t>{c}));
	EXPECT_EQ(ids(get("/api/instances?definition=approve&label=team:blue")), (std::set<int64_t>{b}));
	EXPECT_EQ(get("/api/instances?limit=2").body["instances"].size(), 2u);

	expect_error(get("/api/instances?label=team"), 400, "22023", "key:value");
	expect_error(get("/api/instances?limit=0"), 400, "22023", "limit");
	expect_error(get("/api/instances?limit=ten"), 400, "22023", "limit");
	expect_error(get("/api/instances?colour=red"), 400, "22023", "colour");
}

// The console's routes: keyset pages and time windows of the list, one
// definition by version, the queues, who the caller is, and the console's
// own files.
TEST_P(HttpApiTest, ConsoleRoutes) {
	define("hello", kHello);
	// version 2 stops at a task: its instances stay ready (no worker here)
	define("hello", json::parse(R"({"StartAt":"Bye","States":{"Bye":{"Type":"Task","Resource":"genroc:noop","End":true}}})"));
	std::vector<int64_t> made;
	for (int i = 0; i < 5; ++i) made.push_back(start_instance("hello"));
	auto ids = [](const Reply &r) {
		std::vector<int64_t> out;
		for (auto &i : r.body["instances"]) out.push_back(i["id"].get<int64_t>());
		return out;
	};
	auto page = get("/api/instances?limit=2&before=" + std::to_string(made[3]));
	EXPECT_EQ(ids(page), (std::vector<int64_t>{made[2], made[1]})) << page.raw;
	EXPECT_EQ(ids(get("/api/instances?created_after=2000-01-01T00:00:00Z")).size(), 5u);
	EXPECT_TRUE(ids(get("/api/instances?created_before=2000-01-01T00:00:00Z")).empty());
	expect_error(get("/api/instances?before=x"), 400, "22023", "before");
	expect_error(get("/api/instances?created_after=soon"), 400, "22007", "created_after");

	auto d = get("/api/definitions/hello");
	EXPECT_EQ(d.status, 200) << d.raw;
	EXPECT_EQ(d.body["version"], 2);
	EXPECT_EQ(d.body["definition"]["StartAt"], "Bye");
	d = get("/api/definitions/hello?version=1");
	EXPECT_EQ(d.body["definition"], kHello) << d.raw;
	expect_error(get("/api/definitions/hello?version=9"), 404, "RC002");
	expect_error(get("/api/definitions/nope"), 404, "RC002");
	expect_error(get("/api/definitions/hello?version=one"), 400, "22023", "version");
	expect_error(get("/api/definitions/hello?colour=red"), 400, "22023", "colour");

	auto q = get("/api/queues");
	EXPECT_EQ(q.status, 200) << q.raw;
	ASSERT_FALSE(q.body["queues"].empty()) << q.raw;
	EXPECT_EQ(q.body["queues"][0]["name"], "default");
	EXPECT_EQ(q.body["queues"][0]["depth"], 5);
	EXPECT_TRUE(q.body["queues"][0]["oldest_ready_at"].is_string()) << q.raw;

	auto w = get("/api/whoami");
	EXPECT_EQ(w.body, (json{{"auth", false}, {"name", nullptr}, {"permissions", nullptr}})) << w.raw;

	auto redirect = client_->Get("/ui");
	ASSERT_TRUE(redirect);
	EXPECT_EQ(redirect->status, 302);
	EXPECT_EQ(redirect->get_header_value("Location"), "/ui/");
	auto index = client_->Get("/ui/");
	ASSERT_TRUE(index);
	EXPECT_EQ(index->status, 200);
	EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
	EXPECT_NE(index->body.find("<script defer src=\"app.js\"></script>"), std::string::npos);
	EXPECT_NE(index->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
	auto script = client_->Get("/ui/app.js");
	ASSERT_TRUE(script);
	EXPECT_EQ(script->status, 200);
	EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
	EXPECT_GT(script->body.size(), 10000u);
	expect_error(get("/ui/nope.js"), 404, "42883", "nope.js");
	expect_error(get("/ui/../api/instances"), 404, "42883");
}

TEST_P(HttpApiTest, CancelThenCancelAgainIsAConflict) {
	define("approve", kApprove);
	int64_t id = start_instance("approve");
	auto r = post("/api/instances/" + std::to_string(id) + "/cancel", std::string());
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body, (json{{"instance_id", id}, {"status", "cancelled"}}));
	EXPECT_EQ(get("/api/instances/" + std::to_string(id)).body["status"], "cancelled");
	expect_error(post("/api/instances/" + std::to_string(id) + "/cancel", std::string("{}")), 409, "RC008");
	expect_error(post("/api/instances/" + std::to_string(id) + "/cancel", json{{"force", true}}), 400, "22023",
				 "force");
}

TEST_P(HttpApiTest, RetryAndResumeAFailedInstance) {
	define("approve", kApprove);
	int64_t id = start_instance("approve", {{"k", 1}});
	const std::string base = "/api/instances/" + std::to_string(id);
	expect_error(post(base + "/retry", std::string()), 409, "RC009", "not failed");
	auto fail_it = [&] {
		auto r = post("/api/activities/approve/claim", json{{"worker", "ext-1"}});
		ASSERT_EQ(r.body["tasks"].size(), 1u) << r.raw;
		post("/api/activities/fail", json{{"token", r.body["tasks"][0]["token"]}, {"error", "Rejected"}});
		EXPECT_EQ(get(base).body["status"], "failed");
	};
	fail_it();
	auto r = post(base + "/retry", std::string());
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body, (json{{"instance_id", id}, {"status", "waiting"}}));	// parked at the activity again
	fail_it();
	expect_error(post(base + "/resume", json{{"outcome", 1}}), 400, "22023", "outcome");
	r = post(base + "/resume", json{{"output", {{"approved", true}}}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body, (json{{"instance_id", id}, {"status", "succeeded"}}));
	EXPECT_EQ(get(base).body["output"], (json{{"approved", true}}));
	expect_error(post("/api/instances/987654/retry", std::string()), 404, "RC003");
}

// The actions an instance takes now come with it (the console shows only
// these), and POST /api/instances/bulk acts on many by ids or by a filter:
// a dry run counts, what does not apply is skipped with the store's reason,
// each one goes through the single route's store call.
TEST_P(HttpApiTest, ActionsAndBulkCancelAndRetry) {
	define("approve", kApprove);
	std::vector<int64_t> ids;
	for (int i = 0; i < 4; ++i) ids.push_back(start_instance("approve", json::object(), {{"name", "run-" + std::to_string(i)}}));
	auto path = [](int64_t id) { return "/api/instances/" + std::to_string(id); };
	EXPECT_EQ(get(path(ids[3])).body["actions"], json::array({"cancel"}));  // waits for an activity, not an event
	for (int i = 0; i < 3; ++i) {
		auto r = post("/api/activities/approve/claim", json{{"worker", "ext-1"}});
		ASSERT_EQ(r.body["tasks"].size(), 1u) << r.raw;
		post("/api/activities/fail", json{{"token", r.body["tasks"][0]["token"]}, {"error", "Rejected"}});
	}
	std::vector<int64_t> failed, live;
	for (auto id : ids) (get(path(id)).body["status"] == "failed" ? failed : live).push_back(id);
	ASSERT_EQ(failed.size(), 3u);
	EXPECT_EQ(get(path(failed[0])).body["actions"], json::array({"retry", "resume", "redrive"}));  // failed in a Task

	// by name, exactly
	auto named = get("/api/instances?name=run-2");
	ASSERT_EQ(named.body["instances"].size(), 1u) << named.raw;
	EXPECT_EQ(named.body["instances"][0]["id"], ids[2]);

	json all = json::array({ids[0], ids[1], ids[2], ids[3]});
	auto dry = post("/api/instances/bulk", json{{"action", "retry"}, {"ids", all}, {"dry_run", true}});
	EXPECT_EQ(dry.status, 200) << dry.raw;
	EXPECT_EQ(dry.body["matched"], 4);
	EXPECT_EQ(dry.body["would"], 3);
	EXPECT_EQ(dry.body["skipped"], 1);
	for (auto id : failed) EXPECT_EQ(get(path(id)).body["status"], "failed") << "a dry run acted";
	auto done = post("/api/instances/bulk", json{{"action", "retry"}, {"ids", all}});
	EXPECT_EQ(done.body["done"], 3) << done.raw;
	EXPECT_EQ(done.body["skipped"], 1) << done.raw;
	for (const auto &r : done.body["results"]) {
		if (r["instance_id"] == live[0]) {
			EXPECT_EQ(r["outcome"], "skipped");
			EXPECT_NE(r["reason"].get<std::string>().find("not failed"), std::string::npos) << r;
		} else {
			EXPECT_EQ(r["outcome"], "done");
			EXPECT_EQ(r["status"], "waiting");	// parked at the activity again
		}
	}
	for (auto id : failed) EXPECT_EQ(get(path(id)).body["status"], "waiting");

	// by a filter: every live approve instance
	auto cancel = post("/api/instances/bulk",
					   json{{"action", "cancel"}, {"filter", {{"definition", "approve"}, {"status", "waiting"}}}});
	EXPECT_EQ(cancel.body["done"], 4) << cancel.raw;
	EXPECT_EQ(cancel.body["more"], false);
	for (auto id : ids) EXPECT_EQ(get(path(id)).body["status"], "cancelled");
	EXPECT_EQ(get(path(ids[0])).body["actions"], json::array({"redrive"}));	// cancelled: redriven, not retried

	// an unknown id fails alone; the others go on
	auto mixed = post("/api/instances/bulk", json{{"action", "cancel"}, {"ids", {ids[0], 987654}}});
	EXPECT_EQ(mixed.status, 200) << mixed.raw;
	EXPECT_EQ(mixed.body["skipped"], 1);
	EXPECT_EQ(mixed.body["failed"], 1);
	EXPECT_EQ(mixed.body["results"][1]["error"]["sqlstate"], "RC003") << mixed.raw;

	expect_error(post("/api/instances/bulk", json{{"action", "resume"}, {"ids", {ids[0]}}}), 400, "22023", "action");
	expect_error(post("/api/instances/bulk", json{{"action", "cancel"}}), 400, "22023", "exactly one");
	expect_error(post("/api/instances/bulk", json{{"action", "cancel"}, {"ids", json::array()}}), 400, "22023", "ids");
	expect_error(post("/api/instances/bulk", json{{"action", "cancel"}, {"ids", {"7"}}}), 400, "22023", "ids");
	expect_error(post("/api/instances/bulk", json{{"action", "cancel"}, {"filter", {{"colour", "red"}}}}), 400, "22023",
				 "colour");
	expect_error(post("/api/instances/bulk", json{{"action", "cancel"}, {"filter", {{"status", "sleepy"}}}}), 400,
				 "22023", "status");

	// redrive: one by its route, the others in bulk; each waits at its activity again
	auto redriven = post(path(ids[0]) + "/redrive", std::string());
	EXPECT_EQ(redriven.status, 200) << redriven.raw;
	EXPECT_EQ(redriven.body, (json{{"instance_id", ids[0]}, {"status", "waiting"}}));
	expect_error(post(path(ids[0]) + "/redrive", std::string()), 409, "RC009", "can be redriven");
	auto bulk = post("/api/instances/bulk", json{{"action", "redrive"}, {"ids", all}});
	EXPECT_EQ(bulk.body["done"], 3) << bulk.raw;
	EXPECT_EQ(bulk.body["skipped"], 1) << bulk.raw;
	for (auto id : ids) EXPECT_EQ(get(path(id)).body["status"], "waiting");
}

TEST_P(HttpApiTest, EmitAnEventToAnInstance) {
	define("gate", json::parse(R"({"StartAt":"G","States":{"G":{"Type":"Task","Resource":"genroc:event",
	  "Parameters":{"Name":"open"},"ResultPath":"$.got","End":true}}})"));
	int64_t id = start_instance("gate", {{"k", 1}});
	const std::string base = "/api/instances/" + std::to_string(id) + "/events/";
	auto r = post(base + "other", std::string());
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body, (json{{"instance_id", id}, {"event", "other"}, {"result", "kept"}}));
	r = post(base + "open", json{{"by", "ann"}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["result"], "delivered");
	auto inst = get("/api/instances/" + std::to_string(id)).body;
	EXPECT_EQ(inst["status"], "succeeded");
	EXPECT_EQ(inst["output"], (json{{"k", 1}, {"got", {{"by", "ann"}}}}));
	expect_error(post(base + "open", std::string("{}")), 409, "RC008");
}

TEST_P(HttpApiTest, ActivitiesClaimHeartbeatSucceedFail) {
	define("approve", kApprove);
	int64_t first = start_instance("approve", {{"order", 1}});
	int64_t second = start_instance("approve", {{"order", 2}});

	auto r = post("/api/activities/approve/claim", json{{"worker", "ext-1"}, {"n", 5}});
	EXPECT_EQ(r.status, 200) << r.raw;
	ASSERT_EQ(r.body["tasks"].size(), 2u) << r.raw;
	std::map<int64_t, std::string> token;
	for (auto &t : r.body["tasks"]) {
		EXPECT_EQ(t["activity"], "approve");
		EXPECT_TRUE(t["token"].is_string());
		EXPECT_TRUE(t.contains("heartbeat_s") && t.contains("timeout_s")) << t;
		token[t["instance_id"].get<int64_t>()] = t["token"];
	}
	ASSERT_EQ(token.size(), 2u);
	EXPECT_EQ(r.body["tasks"][0]["input"]["order"].is_number(), true);
	// Nothing left to claim.
	EXPECT_EQ(post("/api/activities/approve/claim", json{{"worker", "ext-1"}}).body["tasks"].size(), 0u);

	r = post("/api/activities/heartbeat", json{{"token", token[first]}});
	EXPECT_EQ(r.status, 200) << r.raw;

	r = post("/api/activities/succeed", json{{"token", token[first]}, {"output", {{"approved", true}}}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["status"], "succeeded");
	EXPECT_EQ(get("/api/instances/" + std::to_string(first)).body["output"], (json{{"approved", true}}));

	// A used token is stale: 409, and nothing changes.
	expect_error(post("/api/activities/succeed", json{{"token", token[first]}, {"output", 1}}), 409, "RC007");
	expect_error(post("/api/activities/heartbeat", json{{"token", token[first]}}), 409, "RC007");
	expect_error(post("/api/activities/fail", json{{"token", "no-such-token"}, {"error", "E"}}), 409, "RC007");

	r = post("/api/activities/fail", json{{"token", token[second]}, {"error", "Rejected"}, {"cause", "too big"}});
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["status"], "failed");
	auto inst = get("/api/instances/" + std::to_string(second)).body;
	EXPECT_EQ(inst["error"], "Rejected");
	EXPECT_EQ(inst["cause"], "too big");
}

TEST_P(HttpApiTest, ActivityRequestErrors) {
	expect_error(post("/api/activities/approve/claim", json::object()), 400, "22004", "\"worker\"");
	expect_error(post("/api/activities/approve/claim", json{{"worker", "w"}, {"n", "2"}}), 400, "22023",
				 "\"n\" must be an integer");
	expect_error(post("/api/activities/approve/claim", json{{"worker", "w"}, {"n", 0}}), 400, "22023", "\"n\"");
	expect_error(post("/api/activities/succeed", json{{"output", 1}}), 400, "22004", "\"token\"");
	expect_error(post("/api/activities/fail", json{{"token", "t"}}), 400, "22004", "\"error\"");
	expect_error(post("/api/activities/fail", json{{"token", "t"}, {"error", "E"}, {"cause", 3}}), 400, "22023",
				 "\"cause\"");
}

TEST_P(HttpApiTest, WorkersAreListed) {
	{
		auto store = open_store(db_.url());
		store->worker_register("w-listed", {{"host", "box-1"}});
	}
	auto r = get("/api/workers");
	EXPECT_EQ(r.status, 200) << r.raw;
	ASSERT_EQ(r.body["workers"].size(), 1u) << r.raw;
	EXPECT_EQ(r.body["workers"][0]["worker"], "w-listed");
	EXPECT_EQ(r.body["workers"][0]["host"], "box-1");
}

// POST /api/workers/{id}/drain: genroc.worker_drain; GET /api/workers shows
// the worker draining; an unknown id is 409 (RC006, as for every call naming a worker).
TEST_P(HttpApiTest, AWorkerIsDrainedOverHttp) {
	auto store = open_store(db_.url());	// kept open: on SQLite its lock keeps the worker live
	store->worker_register("w-drained", {{"host", "box-1"}});
	store->worker_register("w-kept", {{"host", "box-2"}});
	auto r = post("/api/workers/w-drained/drain", json::object());
	EXPECT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body, (json{{"worker", "w-drained"}, {"draining", true}, {"running", 0}})) << r.raw;
	auto list = get("/api/workers");
	ASSERT_EQ(list.body["workers"].size(), 2u) << list.raw;
	EXPECT_EQ(list.body["workers"][0]["draining"], true) << list.raw;
	EXPECT_EQ(list.body["workers"][1]["draining"], false) << list.raw;
	EXPECT_EQ(store->worker_heartbeat("w-drained"), json({{"drain", true}}));
	expect_error(post("/api/workers/ghost/drain", json::object()), 409, "RC006", "ghost");
	expect_error(post("/api/workers/w-kept/drain", json{{"now", true}}), 400, "22023", "now");
}

// GET /api/queues: list_queues, and the queues with ready tasks that no live
// worker serves, each with who would serve it.
TEST_P(HttpApiTest, QueuesListTheOnesNoWorkerServes) {
	auto store = open_store(db_.url());	// kept open: its workers stay live
	{
		store->queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
		store->define("deploy", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task",
			"Resource":"handler:ansible","End":true}}})"));
		store->start("deploy", json::object(), json::object());
		store->worker_register("w-default", {{"queues", {"default"}}});
	}
	auto r = get("/api/queues");
	ASSERT_EQ(r.status, 200) << r.raw;
	EXPECT_EQ(r.body["queues"].size(), 2u) << r.raw;
	ASSERT_EQ(r.body["unserved"].size(), 1u) << r.raw;
	EXPECT_EQ(r.body["unserved"][0]["queue"], "ansible");
	EXPECT_EQ(r.body["unserved"][0]["depth"], 1);
	EXPECT_NE(r.body["unserved"][0]["hint"].get<std::string>().find("handler \"ansible\""), std::string::npos)
		<< r.raw;
	store->worker_register("w-ansible", {{"queues", {"ansible"}}});
	r = get("/api/queues");
	EXPECT_EQ(r.body["unserved"].size(), 0u) << r.raw;
}

TEST_P(HttpApiTest, OversizedBodyIs413AndUnknownRouteIs404) {
	std::string big = R"({"name":"x","definition":{"Comment":")" + std::string(70 * 1024, 'a') + R"("}})";
	expect_error(post("/api/definitions", big), 413, "54000", "limit");
	expect_error(get("/api/nothing-here"), 404, "42883", "/api/nothing-here");
	expect_error(get("/api/activities/succeed"), 404, "42883");
	EXPECT_EQ(get("/api/definitions").body["definitions"].size(), 0u);
	// The server still serves after refusing those.
	EXPECT_EQ(get("/healthz").status, 200);
}

// Several clients at once share the store pool: every start is answered once.
TEST_P(HttpApiTest, ConcurrentRequests) {
	define("hello", kHello);
	constexpr int kThreads = 6, kEach = 8;
	std::atomic<int> created{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; t++)
		threads.emplace_back([&, t] {
			httplib::Client c("127.0.0.1", server_->port());
			c.set_read_timeout(30, 0);
			for (int i = 0; i < kEach; i++) {
				json body = {{"definition", "hello"},
							 {"options", {{"idempotency_key", "c-" + std::to_string(t) + "-" + std::to_string(i)}}}};
				auto r = c.Post("/api/instances", body.dump(), "application/json");
				if (r && r->status == 201) created++;
				else ADD_FAILURE() << (r ? r->body : httplib::to_string(r.error()));
			}
		});
	for (auto &t : threads) t.join();
	EXPECT_EQ(created.load(), kThreads * kEach);
	EXPECT_EQ(get("/api/instances?limit=1000").body["instances"].size(), size_t(kThreads * kEach));
}

// docs/operations.md "Large values": a large input is the same value read back, and on
// request a reference that GET /api/objects/{ref} serves.
TEST_P(HttpApiTest, LargeValuesAsValuesOrReferences) {
	const json kEcho = json::parse(R"({"StartAt":"E","States":{"E":{"Type":"Pass","End":true}}})");
	define("echo", kEcho);
	std::string blob;
	for (int i = 0; blob.size() < 30000; i++) blob += std::to_string(i * 7919 % 10007) + ",";
	const json big = {{"blob", blob}};
	const int64_t id = start_instance("echo", big);
	const std::string path = "/api/instances/" + std::to_string(id);

	auto r = get(path);
	ASSERT_EQ(r.status, 200) << r.raw.substr(0, 300);
	EXPECT_EQ(r.body["input"], big);
	EXPECT_EQ(r.body["output"], big);
	r = get(path + "?values=ref");
	ASSERT_EQ(r.status, 200) << r.raw.substr(0, 300);
	ASSERT_TRUE(r.body["input"].is_object() && r.body["input"].contains("genroc:object")) << r.raw.substr(0, 300);
	EXPECT_LT(r.raw.size(), 2000u);
	const std::string ref = r.body["input"]["genroc:object"];
	EXPECT_EQ(r.body["output"], r.body["input"]);  // the same value: one object

	r = get("/api/objects/" + ref);
	EXPECT_EQ(r.status, 200);
	EXPECT_EQ(r.body, big);

	r = get(path + "/history?values=ref");
	ASSERT_EQ(r.status, 200) << r.raw.substr(0, 300);
	EXPECT_EQ(r.body["history"][0]["detail"]["input"]["genroc:object"], ref);
	r = get(path + "/history");
	EXPECT_EQ(r.body["history"][0]["detail"]["input"], big);
	r = get("/api/instances?values=ref&limit=1");
	ASSERT_EQ(r.status, 200) << r.raw.substr(0, 300);
	EXPECT_EQ(r.body["instances"][0]["input"]["genroc:object"], ref);

	expect_error(get("/api/objects/" + std::string(64, '0')), 404, "RC011", "does not exist");
	expect_error(get("/api/objects/nothex"), 400, "22023", "64 lowercase hex");
	expect_error(get(path + "?values=both"), 400, "22023", "values");
	expect_error(get(path + "?other=1"), 400, "22023", "unknown query parameter");
	expect_error(get("/api/instances?values=both"), 400, "22023", "values");
}

INSTANTIATE_TEST_SUITE_P(Stores, HttpApiTest, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e::api_test
