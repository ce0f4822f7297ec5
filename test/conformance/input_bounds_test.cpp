// input_bounds_test.cpp — what both stores refuse at the door (docs/limits.md
// "Identifier limits"): a run_at outside 1970..9999
// (infinity, -infinity, year 1, BC), and names with control characters or
// over their length bound (worker ids, definition, queue, handler, host,
// instance name, idempotency key, partition key, labels, event and token
// names), each 22023 naming the field; the bounds themselves are accepted.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {

const json kJob = json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})");
const std::string k200(200, 'n');
const std::string k201(201, 'n');

}  // namespace

TEST_P(StoreTest, RunAtOutside1970To9999IsRefused) {
	define("job", kJob);
	for (const char *t : {"infinity", "-infinity", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z"}) {
		auto r = raised([&] { store().start("job", json::object(), {{"run_at", t}}); });
		// PostgreSQL parses infinity and year 1 and refuses the range (22008);
		// the shim does not parse infinity at all (22007): both name run_at
		EXPECT_TRUE(r.sqlstate == "22008" || r.sqlstate == "22007") << t << ": " << r.sqlstate << " " << r.message;
		EXPECT_NE(r.message.find("\"run_at\""), std::string::npos) << t << ": " << r.message;
	}
	EXPECT_RAISES("22008", "option \"run_at\" must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z",
				  store().start("job", json::object(), {{"run_at", "0001-01-01T00:00:00Z"}}));
	if (GetParam() == "postgres")
		EXPECT_RAISES("22008", "\"run_at\"", store().start("job", json::object(), {{"run_at", "0044-03-15 BC"}}));
	// a text no store's timestamp input takes, and a value that is no text
	// (the engine's time_option: the store's input caught, its own words)
	EXPECT_RAISES("22007", "invalid timestamp for option \"run_at\": \"soon\"",
				  store().start("job", json::object(), {{"run_at", "soon"}}));
	EXPECT_RAISES("22007", "option \"run_at\" must be a timestamp string, not 5",
				  store().start("job", json::object(), {{"run_at", 5}}));
	EXPECT_RAISES("22007", "invalid timestamp for option \"created_after\": \"soon\"",
				  store().list_instances({{"created_after", "soon"}}));
	// the edges are taken
	EXPECT_EQ(status(start("job", json::object(), {{"run_at", "1970-01-01T00:00:00Z"}})), "ready");
	int64_t late = start("job", json::object(), {{"run_at", "9999-12-31T23:59:59.999Z"}});
	EXPECT_EQ(status(late), "waiting");
	EXPECT_EQ(instance(late).at("wait_until"), "9999-12-31T23:59:59.999Z");
}

TEST_P(StoreTest, WorkerIdsWithControlCharactersOrTooLongAreRefused) {
	EXPECT_RAISES("22023", "p_worker must not contain control characters", store().worker_register("w\n1", json::object()));
	EXPECT_RAISES("22023", "p_worker must not contain control characters", store().worker_register("w\x1b[31m", json::object()));
	EXPECT_RAISES("22023", "p_worker must not contain control characters",
				  store().worker_register("w\xc2\x85", json::object()));	// U+0085
	EXPECT_RAISES("22023", "p_worker must be at most 200 characters long, not 100000",
				  store().worker_register(std::string(100000, 'w'), json::object()));
	// 200 characters (not bytes): é is two bytes
	std::string accents;
	for (int i = 0; i < 200; i++) accents += "\xc3\xa9";
	EXPECT_EQ(store().worker_register(accents, json::object()).at("worker"), accents);
	EXPECT_EQ(store().worker_register(k200, json::object()).at("worker"), k200);
	EXPECT_RAISES("22023", "option \"host\" must be at most 200", store().worker_register("w", {{"host", k201}}));
	EXPECT_RAISES("22023", "option \"queues\" must not contain control characters",
				  store().worker_register("w", {{"queues", {"default", "q\t"}}}));
	EXPECT_TRUE(store().list_workers().size() == 2);
}

TEST_P(StoreTest, NamesOverTheirBoundAreRefusedNamingTheField) {
	EXPECT_RAISES("22023", "p_name must be at most 200 characters long, not 201", store().define(k201, kJob));
	EXPECT_RAISES("22023", "p_name must not contain control characters", store().define("job\r", kJob));
	EXPECT_EQ(define(k200, kJob), 1);
	define("job", kJob);
	for (const char *opt : {"idempotency_key", "partition_key", "name"}) {
		EXPECT_RAISES("22023", "option \"" + std::string(opt) + "\" must be at most 200 characters long, not 201",
					  store().start("job", json::object(), {{opt, k201}}));
		EXPECT_RAISES("22023", "option \"" + std::string(opt) + "\" must not contain control characters",
					  store().start("job", json::object(), {{opt, "a\x7f"}}));
	}
	EXPECT_RAISES("22023", "a label key must be at most 200 characters long",
				  store().start("job", json::object(), {{"labels", {{k201, "v"}}}}));
	EXPECT_RAISES("22023", "label \"team\" must be at most 1000 characters long, not 1001",
				  store().start("job", json::object(), {{"labels", {{"team", std::string(1001, 'v')}}}}));
	EXPECT_RAISES("22023", "label \"team\" must not contain control characters",
				  store().start("job", json::object(), {{"labels", {{"team", "a\nb"}}}}));
	int64_t id = start("job", json::object(),
					   {{"idempotency_key", k200}, {"partition_key", k200}, {"name", k200},
						{"labels", {{k200, std::string(1000, 'v')}}}});
	EXPECT_EQ(instance(id).at("idempotency_key"), k200);

	EXPECT_RAISES("22023", "p_name must be at most 200", store().queue_set(k201, {{"kind", "tenant"}}));
	EXPECT_RAISES("22023", "option \"handler\" must not contain control characters",
				  store().queue_set("hq", {{"kind", "handler"}, {"handler", "h\x01"}}));
	EXPECT_RAISES("22023", "p_name must be at most 200", store().emit(id, k201, nullptr));
	EXPECT_RAISES("22023", "p_name must not contain control characters", store().emit(id, "ev\n", nullptr));
	EXPECT_EQ(store().emit(id, k200, nullptr), "kept");
	EXPECT_RAISES("22023", "p_name must be at most 200", store().token_create(k201, {"reader"}, "cli", std::nullopt));
	EXPECT_RAISES("22023", "p_created_by must not contain control characters",
				  store().token_create("t", {"reader"}, "cli\n", std::nullopt));
}

}  // namespace genroc::conformance
