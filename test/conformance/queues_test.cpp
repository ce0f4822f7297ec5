// queues_test.cpp — queues as configuration (queue_set, queue_drop,
// list_queues), routing at start, partition slots, global concurrency and
// rate limits (per queue and per partition) in claim (docs/sql-api.md "Queues and
// routing", 55_queues.sql).
#include <atomic>
#include <map>
#include <thread>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json handler_def(const std::string &handler) {
	return {{"StartAt", "T"},
			{"States", {{"T", {{"Type", "Task"}, {"Resource", "handler:" + handler}, {"End", true}}}}}};
}
json pass_def() { return json::parse(R"({"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}})"); }
json wait_then_task_def() {
	return json::parse(R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"Next":"T"},
		"T":{"Type":"Task","Resource":"handler:build","End":true}}})");
}
std::string queue_of(Store &s, int64_t id) { return s.get_instance(id).at("queue").get<std::string>(); }
json queue_named(Store &s, const std::string &name) {
	for (auto &q : s.list_queues())
		if (q.at("name") == name) return q;
	return nullptr;
}
}  // namespace

TEST_P(StoreTest, QueueSetChecksItsOptions) {
	const auto bad = sqlstate::INVALID_PARAMETER_VALUE;
	EXPECT_RAISES(bad, "kind", store().queue_set("gpu", json::object()));
	EXPECT_RAISES(bad, "kind", store().queue_set("gpu", {{"kind", "fancy"}}));
	EXPECT_RAISES(bad, "colour", store().queue_set("gpu", {{"kind", "tenant"}, {"colour", 1}}));
	EXPECT_RAISES(bad, "\".\"", store().queue_set("gpu.eu", {{"kind", "tenant"}}));
	EXPECT_RAISES(bad, "default", store().queue_set("gpu", {{"kind", "default"}}));
	EXPECT_RAISES(bad, "match", store().queue_set("gpu", {{"kind", "routed"}}));
	EXPECT_RAISES(bad, "match", store().queue_set("gpu", {{"kind", "routed"}, {"match", json::object()}}));
	EXPECT_RAISES(bad, "colour", store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"colour", {"x"}}}}}));
	EXPECT_RAISES(bad, "match.definitions",
				  store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", "ml-*"}}}}));
	EXPECT_RAISES(bad, "match.labels", store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"labels", {{"a", 1}}}}}}));
	// an empty list or object would match every start
	EXPECT_RAISES(bad, "option \"match.definitions\" must not be empty",
				  store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", json::array()}}}}));
	EXPECT_RAISES(bad, "option \"match.tenants\" must not be empty",
				  store().queue_set("gpu", {{"kind", "routed"},
											{"match", {{"definitions", {"ml-*"}}, {"tenants", json::array()}}}}));
	EXPECT_RAISES(bad, "option \"match.labels\" must not be empty",
				  store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"labels", json::object()}}}}));
	EXPECT_RAISES(bad, "match", store().queue_set("gpu", {{"kind", "tenant"}, {"match", {{"tenants", json::array()}}}}));
	EXPECT_RAISES(bad, "handler", store().queue_set("gpu", {{"kind", "handler"}}));
	EXPECT_RAISES(bad, "handler", store().queue_set("gpu", {{"kind", "tenant"}, {"handler", "x"}}));
	EXPECT_RAISES(bad, "global_concurrency", store().queue_set("gpu", {{"kind", "tenant"}, {"global_concurrency", -1}}));
	EXPECT_RAISES(bad, "partition_concurrency",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_concurrency", 0}}));
	EXPECT_RAISES(bad, "rate_limit", store().queue_set("gpu", {{"kind", "tenant"}, {"rate_limit", 5}}));
	EXPECT_RAISES(bad, "rate_limit", store().queue_set("gpu", {{"kind", "tenant"}, {"rate_limit", {{"count", 5}}}}));
	EXPECT_RAISES(bad, "rate_limit.count",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"rate_limit", {{"count", 0}, {"period", "1s"}}}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "rate_limit.period",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"rate_limit", {{"count", 1}, {"period", "soon"}}}}));
	EXPECT_RAISES(bad, "option \"partition_rate_limit\" must be an object",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", 5}}));
	EXPECT_RAISES(bad, "option \"partition_rate_limit\" needs",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", {{"period", "1s"}}}}));
	EXPECT_RAISES(bad, "option \"partition_rate_limit.count\" must be at least 1",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", {{"count", 0}, {"period", "1s"}}}}));
	EXPECT_RAISES(bad, "partition_rate_limit.count",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", {{"count", "2"}, {"period", "1s"}}}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "partition_rate_limit.period",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", {{"count", 1}, {"period", "soon"}}}}));
	EXPECT_RAISES(bad, "partition_rate_limit.period",
				  store().queue_set("gpu", {{"kind", "tenant"}, {"partition_rate_limit", {{"count", 1}, {"period", 0}}}}));
	EXPECT_RAISES(bad, "burst",
				  store().queue_set("gpu", {{"kind", "tenant"},
											{"partition_rate_limit", {{"count", 1}, {"period", "1s"}, {"burst", 2}}}}));
	EXPECT_RAISES(bad, "cannot be dropped", store().queue_drop("default"));
	EXPECT_RAISES("42704", "gpu", store().queue_drop("gpu"));
	// nothing was created by the refused calls
	ASSERT_EQ(store().list_queues().size(), 1u);
	EXPECT_EQ(store().list_queues()[0].at("name"), "default");

	// one handler has at most one queue; a tenant's name is its own
	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
	EXPECT_RAISES(bad, "already has the queue", store().queue_set("ansible2", {{"kind", "handler"}, {"handler", "ansible"}}));
	store().queue_set("acme", {{"kind", "tenant"}});
	EXPECT_RAISES(bad, "tenant", store().queue_set("acme", {{"kind", "routed"}, {"match", {{"tenants", {"acme"}}}}}));
	EXPECT_RAISES(bad, "tenant", store().queue_set("ansible", {{"kind", "tenant"}}));
	store().queue_drop("acme");
	EXPECT_RAISES("42704", "acme", store().queue_drop("acme"));
}

TEST_P(StoreTest, ListQueuesShowsKindsLimitsAndWorkersAlsoWhenEmpty) {
	json gpu = store().queue_set(
		"gpu", {{"kind", "routed"}, {"match", {{"definitions", {"ml-*"}}}}, {"global_concurrency", 2}});
	EXPECT_EQ(gpu.at("kind"), "routed");
	EXPECT_EQ(gpu.at("global_concurrency"), 2);
	EXPECT_EQ(gpu.at("partition_concurrency"), 1);	// the default queue's
	EXPECT_EQ(gpu.at("depth"), 0);
	EXPECT_EQ(gpu.at("workers"), json::array());
	EXPECT_EQ(gpu.at("match"), json({{"definitions", {"ml-*"}}}));
	store().queue_set("default", {{"partition_concurrency", 3}, {"rate_limit", {{"count", 10}, {"period", "1m"}}}});
	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
	worker("w1", {{"queues", {"default", "gpu", "default.eu", "odd"}}});
	json qs = store().list_queues();
	std::vector<std::string> names;
	for (auto &q : qs) names.push_back(q.at("name"));
	EXPECT_EQ(names, (std::vector<std::string>{"ansible", "default", "default.eu", "gpu", "odd"}));
	json eu = queue_named(store(), "default.eu");
	EXPECT_EQ(eu.at("kind"), "region");
	EXPECT_EQ(eu.at("partition_concurrency"), 3);
	EXPECT_EQ(eu.at("rate_limit"), 10);
	EXPECT_EQ(eu.at("rate_period_ms"), 60000);
	EXPECT_EQ(eu.at("partition_rate_limit"), nullptr);
	EXPECT_EQ(eu.at("partition_rate_period_ms"), nullptr);
	EXPECT_EQ(queue_named(store(), "odd").at("kind"), "unconfigured");
	EXPECT_EQ(queue_named(store(), "gpu").at("workers"), json::array({"w1"}));
	EXPECT_EQ(queue_named(store(), "gpu").at("partition_concurrency"), 3);	// follows the default queue
	EXPECT_EQ(queue_named(store(), "ansible").at("handler"), "ansible");
	EXPECT_EQ(queue_named(store(), "ansible").at("workers"), json::array());

	// depth, queued and running count what sits in the queue (3 slots for
	// partition p: the 4th waits)
	define("ml-train", handler_def("train"));
	EXPECT_TRUE(queue_named(store(), "gpu").at("oldest_ready_at").is_null());
	at(clock() + 2);
	const std::string first_ready = time_at(clock());
	for (int i = 0; i < 4; i++) start("ml-train", json::object(), {{"partition_key", "p"}});
	at(clock() + 1);
	start("ml-train");
	claim_one("w1", {"gpu"});
	json g = queue_named(store(), "gpu");
	EXPECT_EQ(g.at("depth"), 3);
	EXPECT_EQ(g.at("queued"), 1);
	EXPECT_EQ(g.at("running"), 1);
	// since when the oldest ready task is claimable (the first start's)
	EXPECT_EQ(g.at("oldest_ready_at"), first_ready);
	// a stopped worker serves nothing
	store().worker_stop("w1");
	EXPECT_EQ(queue_named(store(), "gpu").at("workers"), json::array());
}

TEST_P(StoreTest, RoutingPrecedenceHandlerRoutedTenantDefault) {
	define("build", handler_def("build"));
	define("ml-train", handler_def("train"));
	define("deploy", handler_def("ansible"));
	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
	store().queue_set("gpu", {{"kind", "routed"},
							  {"match", {{"definitions", {"ml-*", "deploy"}}, {"labels", {{"env", "prod*"}}}}}});
	store().queue_set("catchall", {{"kind", "routed"}, {"match", {{"definitions", {"*"}}}}});
	store().queue_set("acme", {{"kind", "tenant"}});

	// handler queue wins over a matching routed queue
	EXPECT_EQ(queue_of(store(), start("deploy", json::object(), {{"labels", {{"env", "prod"}}}})), "ansible");
	// first routed queue whose match applies (both lists and labels must match)
	EXPECT_EQ(queue_of(store(), start("ml-train", json::object(), {{"labels", {{"env", "production"}}}})), "gpu");
	// gpu does not match (no env label); catchall matches everything
	EXPECT_EQ(queue_of(store(), start("ml-train", json::object(), {{"labels", {{"tenant", "acme"}}}})), "catchall");
	store().queue_drop("catchall");
	// routed wins over tenant; then tenant; then default
	EXPECT_EQ(queue_of(store(), start("ml-train", json::object(), {{"labels", {{"tenant", "acme"}}}})), "acme");
	EXPECT_EQ(queue_of(store(), start("build", json::object(), {{"labels", {{"tenant", "other"}}}})), "default");
	EXPECT_EQ(queue_of(store(), start("build", json::object(), {{"labels", {{"env", "prod"}}}})), "default");
	// region label: <queue>.<region>
	EXPECT_EQ(queue_of(store(), start("build", json::object(), {{"labels", {{"region", "eu"}}}})), "default.eu");
	EXPECT_EQ(queue_of(store(), start("deploy", json::object(), {{"labels", {{"region", "us"}}}})), "ansible.us");
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "region",
				  store().start("build", json::object(), {{"labels", {{"region", "eu.west"}}}}));
	// a start cannot choose its queue
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "queue", store().start("build", json::object(), {{"queue", "gpu"}}));
	// a glob is the whole name; * and ? only
	define("ml_x", handler_def("train"));
	store().queue_set("under", {{"kind", "routed"}, {"match", {{"definitions", {"ml?x"}}}}});
	EXPECT_EQ(queue_of(store(), start("ml_x")), "under");
	store().queue_drop("under");
	define("mlxx", handler_def("train"));
	store().queue_set("literal", {{"kind", "routed"}, {"match", {{"definitions", {"ml_x%"}}}}});
	EXPECT_EQ(queue_of(store(), start("mlxx")), "default");
}

TEST_P(StoreTest, TheQueueIsKeptThroughRetriesTimersAndConfigChanges) {
	define("build", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:build",
		"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":2}],"Next":"W"},
		"W":{"Type":"Wait","Seconds":5,"Next":"U"},"U":{"Type":"Task","Resource":"handler:build","End":true}}})"));
	store().queue_set("builds", {{"kind", "routed"}, {"match", {{"definitions", {"build"}}}}});
	worker("w1", {{"queues", {"builds", "default"}}});
	int64_t id = start("build");
	EXPECT_EQ(queue_of(store(), id), "builds");
	store().queue_drop("builds");		// later config never moves it
	Task t = claim_one("w1", {"builds"});
	store().fail(id, t.epoch, "boom", "");	// retried: same queue
	at(2);
	t = claim_one("w1", {"builds"});
	store().complete(id, t.epoch, json::object());
	EXPECT_EQ(status(id), "waiting");
	at(10);
	store().tick(100);
	EXPECT_EQ(queue_of(store(), id), "builds");
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());
	t = claim_one("w1", {"builds"});
	store().complete(id, t.epoch, json::object());
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(queue_of(store(), id), "builds");
}

// An instance that failed in default before its handler's queue
// existed; retry (and resume) route it again, to the handler's queue
// configured since.
TEST_P(StoreTest, RetryRoutesAgainWithTheQueuesOfToday) {
	define("deploy", handler_def("ansible"));
	worker("w1", {{"queues", {"default", "ansible"}}});
	int64_t id = start("deploy");
	EXPECT_EQ(queue_of(store(), id), "default");
	Task t = claim_one("w1", {"default"});
	store().fail(id, t.epoch, "boom", "no retrier");
	EXPECT_EQ(status(id), "failed");
	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
	EXPECT_EQ(store().retry(id), "ready");
	EXPECT_EQ(queue_of(store(), id), "ansible");
	auto entry = [&](const std::string &event) {
		json found;
		for (auto &e : store().history(id))
			if (e.at("event") == event) found = e;
		return found;
	};
	EXPECT_EQ(entry("retried").at("detail").at("queue"), "ansible");
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());
	t = claim_one("w1", {"ansible"});
	store().fail(id, t.epoch, "boom", "");
	// unchanged routing: the log says nothing of the queue
	EXPECT_EQ(store().resume(id, json::object()), "succeeded");
	EXPECT_FALSE(entry("resumed").at("detail").contains("queue"));
	EXPECT_EQ(queue_of(store(), id), "ansible");
}

// A handler's queue made after instances that need the handler
// were started (before any worker with it had announced its queue) takes
// the ones not ended, Map items with their parent, so that a worker without
// the handler does not claim them from default; a leased task keeps its lease.
TEST_P(StoreTest, AHandlerQueueMadeLaterTakesTheInstancesThatNeedItsHandler) {
	define("deploy", handler_def("ansible"));
	define("build", handler_def("build"));
	define("fleet", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,"End":true,
		"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:ansible","End":true}}}}}})"));
	worker("w1", {{"queues", {"default", "ansible", "ansible.eu"}}});
	const int64_t done = start("deploy");
	Task t = claim_one("w1", {"default"});
	store().complete(done, t.epoch, json::object());
	const int64_t running = start("deploy");
	const Task leased = claim_one("w1", {"default"});
	ASSERT_EQ(leased.instance_id, running);
	const int64_t ready = start("deploy");
	const int64_t eu = start("deploy", json::object(), {{"labels", {{"region", "eu"}}}});
	const int64_t other = start("build");
	const int64_t map = start("fleet", json::array({1, 2}));
	EXPECT_EQ(queue_of(store(), ready), "default");

	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}});
	EXPECT_EQ(queue_of(store(), done), "default");	// ended: left as it was
	EXPECT_EQ(queue_of(store(), running), "ansible");
	EXPECT_EQ(queue_of(store(), ready), "ansible");
	EXPECT_EQ(queue_of(store(), eu), "ansible.eu");
	EXPECT_EQ(queue_of(store(), other), "default");
	EXPECT_EQ(queue_of(store(), map), "ansible");
	int items = 0;
	for (auto &c : store().list_instances({{"parent", map}})) {
		EXPECT_EQ(c.at("queue"), "ansible");
		items++;
	}
	EXPECT_EQ(items, 2);
	// default now holds only the instance without the handler
	auto from_default = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(from_default.size(), 1u);
	EXPECT_EQ(from_default[0].instance_id, other);
	store().complete(running, leased.epoch, json::object());
	EXPECT_EQ(status(running), "succeeded");
	// the same config again moves nothing
	store().queue_set("ansible", {{"kind", "handler"}, {"handler", "ansible"}, {"global_concurrency", 2}});
	EXPECT_EQ(queue_of(store(), eu), "ansible.eu");
	EXPECT_EQ(store().claim("w1", {"ansible"}, 10).size(), 2u);	// ready and the Map's first item
}

// fail_and_claim's genroc.HandlerMissing is fail's: the task moves to its
// handler's queue, ready there, and nothing is handed back to the worker
// that lacks the handler (the report's row says 'ready' with no task).
TEST_P(StoreTest, AMissingHandlerReportedWithAClaimHandsNothingBack) {
	define("deploy", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:ansible",
		"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":3}],"End":true}}})"));
	worker("w1", {{"queues", {"default"}}});
	worker("w2", {{"queues", {"ansible"}}});
	const int64_t id = start("deploy");
	Task t = claim_one("w1", {"default"});
	ASSERT_EQ(t.instance_id, id);
	Store::Report r = store().fail_and_claim(id, t.epoch, "genroc.HandlerMissing", "no handler ansible here", "w1",
											 {"default"});
	EXPECT_EQ(r.status, "ready");
	EXPECT_FALSE(r.next.has_value());
	EXPECT_EQ(queue_of(store(), id), "ansible");
	// the report is taken once: the same epoch again is a lost lease
	EXPECT_RAISES("RC004", "lease lost on instance",
				  store().fail_and_claim(id, t.epoch, "genroc.HandlerMissing", "", "w1", {"default"}));
	auto tasks = store().claim("w2", {"ansible"}, 10);
	ASSERT_EQ(tasks.size(), 1u);
	EXPECT_EQ(tasks[0].instance_id, id);
}

// A task whose handler has no queue yet reached a worker without
// that handler (genroc.HandlerMissing reported from outside the handler's
// queue): genroc makes the handler's queue, moves every instance not ended
// that needs the handler there, and the task waits in it, ready, with its
// interruption not counted (an OnlyOnce one too: its handler never ran).
TEST_P(StoreTest, AMissingHandlerMakesItsQueueAndTheTaskWaitsThere) {
	define("deploy", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:ansible",
		"OnlyOnce":true,"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":3}],"End":true}}})"));
	define("build", handler_def("build"));
	worker("w1", {{"queues", {"default"}}});
	worker("w2", {{"queues", {"ansible", "ansible.eu"}}});
	const int64_t first = start("deploy");
	const int64_t second = start("deploy");
	const int64_t eu = start("deploy", json::object(), {{"labels", {{"region", "eu"}}}});
	const int64_t other = start("build");
	EXPECT_EQ(queue_of(store(), first), "default");
	Task t = claim_one("w1", {"default"});
	ASSERT_EQ(t.instance_id, first);
	Task t2 = claim_one("w1", {"default"});
	ASSERT_EQ(t2.instance_id, second);
	EXPECT_EQ(store().fail(first, t.epoch, "genroc.HandlerMissing", "no handler ansible here"), "ready");
	json q = queue_named(store(), "ansible");
	EXPECT_EQ(q.at("kind"), "handler");
	EXPECT_EQ(q.at("handler"), "ansible");
	EXPECT_EQ(queue_of(store(), first), "ansible");
	EXPECT_EQ(queue_of(store(), second), "ansible");
	EXPECT_EQ(queue_of(store(), eu), "ansible.eu");
	EXPECT_EQ(queue_of(store(), other), "default");
	json i = instance(first);
	EXPECT_EQ(i.at("status"), "ready");
	json moved;
	for (auto &e : store().history(first))
		if (e.at("event") == "task_interrupted") moved = e;
	ASSERT_TRUE(moved.is_object());
	EXPECT_EQ(moved.at("detail").at("reason"), "handler missing");
	EXPECT_EQ(moved.at("detail").at("counted"), false);
	EXPECT_EQ(moved.at("detail").at("handler"), "ansible");
	EXPECT_EQ(moved.at("detail").at("queue"), "ansible");
	// the second, moved with its lease while w1 ran it: its report (w1
	// serves default, not ansible) makes it ready there too
	EXPECT_EQ(status(second), "running");
	EXPECT_EQ(store().fail(second, t2.epoch, "genroc.HandlerMissing", "no handler ansible here"), "ready");
	EXPECT_EQ(queue_of(store(), second), "ansible");
	// started now: routed to the handler's queue at once
	EXPECT_EQ(queue_of(store(), start("deploy")), "ansible");
	// default holds only the instance without the handler
	auto from_default = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(from_default.size(), 1u);
	EXPECT_EQ(from_default[0].instance_id, other);
	// a worker serving the handler's queue runs it (the OnlyOnce task was
	// not failed: its handler never ran)
	auto got = store().claim("w2", {"ansible"}, 1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].instance_id, first);
	// a miss inside the handler's own queue fails as reported, without the
	// retrier (a worker that serves the queue lacks the handler)
	EXPECT_EQ(store().fail(first, got[0].epoch, "genroc.HandlerMissing", "serves ansible, lacks it"), "failed");
	EXPECT_EQ(instance(first).at("error"), "genroc.HandlerMissing");
	Task e = claim_one("w2", {"ansible.eu"});
	EXPECT_EQ(e.instance_id, eu);
	store().complete(eu, e.epoch, json::object());
	EXPECT_EQ(status(eu), "succeeded");
}

// The cases where a missing handler still fails the task as reported: a
// name a queue of another kind has, a resource that is not a handler, and
// a handler whose queue existed before (its instances were routed there;
// this one was not, because another handler's queue came first by name).
TEST_P(StoreTest, AMissingHandlerFailsWhenItsQueueCannotBeMadeOrWasThere) {
	define("tenant-h", handler_def("acme"));
	store().queue_set("acme", {{"kind", "tenant"}});
	define("two", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:alpha","Next":"B"},
		"B":{"Type":"Task","Resource":"handler:beta","End":true}}})"));
	store().queue_set("alpha", {{"kind", "handler"}, {"handler", "alpha"}});
	store().queue_set("beta", {{"kind", "handler"}, {"handler", "beta"}});
	worker("w1", {{"queues", {"default", "alpha"}}});
	const int64_t a = start("tenant-h");
	Task t = claim_one("w1", {"default"});
	EXPECT_EQ(store().fail(a, t.epoch, "genroc.HandlerMissing", "no acme"), "failed");
	EXPECT_EQ(queue_named(store(), "acme").at("kind"), "tenant");
	const int64_t b = start("two");
	EXPECT_EQ(queue_of(store(), b), "alpha");
	t = claim_one("w1", {"alpha"});
	store().complete(b, t.epoch, json::object());
	t = claim_one("w1", {"alpha"});	// B's task, in alpha's queue, needs beta
	EXPECT_EQ(store().fail(b, t.epoch, "genroc.HandlerMissing", "no beta"), "failed");
	EXPECT_EQ(queue_of(store(), b), "alpha");
}

TEST_P(StoreTest, PartitionSlotsAreHeldFromStartToEndAndHandedOutInOrder) {
	define("build", handler_def("build"));
	worker("w1");
	int64_t a = start("build", json::object(), {{"partition_key", "app/prod"}});
	auto b = store().start("build", json::object(), {{"partition_key", "app/prod"}, {"priority", 5}});
	int64_t c = start("build", json::object(), {{"partition_key", "app/prod"}});
	int64_t other = start("build", json::object(), {{"partition_key", "app/dev"}});
	int64_t free = start("build");
	EXPECT_EQ(status(a), "ready");
	EXPECT_EQ(b.status, "queued");
	EXPECT_EQ(status(c), "queued");
	EXPECT_EQ(status(other), "ready");
	EXPECT_EQ(status(free), "ready");
	EXPECT_EQ((std::vector<std::string>{"started", "queued"}), events(c));
	EXPECT_EQ(store().list_instances({{"status", "queued"}}).size(), 2u);

	// the holder keeps its slot while it runs
	Task t = claim_one("w1");
	ASSERT_EQ(t.instance_id, a);
	auto more = store().claim("w1", {"default"}, 10);
	EXPECT_EQ(more.size(), 2u);	// other, free: the queued ones are not ready
	// its end hands the slot to the next in order (priority first: c before b)
	EXPECT_EQ(store().complete(a, t.epoch, json::object()), "succeeded");
	EXPECT_EQ(status(c), "ready");
	EXPECT_EQ(status(b.instance_id), "queued");
	auto ev = events(c);
	EXPECT_EQ(std::vector<std::string>(ev.begin(), ev.begin() + 4),
			  (std::vector<std::string>{"started", "queued", "slot_acquired", "entered"}));
	// a cancel frees the slot too
	EXPECT_EQ(store().cancel(c), "cancelled");
	EXPECT_EQ(status(b.instance_id), "ready");
	// a queued instance can be cancelled; it held nothing
	int64_t d = start("build", json::object(), {{"partition_key", "app/prod"}});
	EXPECT_EQ(status(d), "queued");
	EXPECT_EQ(store().cancel(d), "cancelled");
	EXPECT_EQ(status(b.instance_id), "ready");
}

TEST_P(StoreTest, PartitionSlotsFollowTheQueueSettingAndInlineEnds) {
	define("build", handler_def("build"));
	define("quick", pass_def());
	// an instance that ends in its first step frees its slot at once
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(store().start("quick", json::object(), {{"partition_key", "k"}}).status, "succeeded");
	int64_t a = start("build", json::object(), {{"partition_key", "k"}});
	int64_t b = start("build", json::object(), {{"partition_key", "k"}});
	int64_t c = start("build", json::object(), {{"partition_key", "k"}});
	EXPECT_EQ(status(b), "queued");
	// a queued quick one runs when a slot frees, and frees it again at once
	int64_t q = start("quick", json::object(), {{"partition_key", "k"}});
	EXPECT_EQ(status(q), "queued");
	// raising partition_concurrency hands out the new slots now, in order
	store().queue_set("default", {{"partition_concurrency", 3}});
	EXPECT_EQ(status(a), "ready");
	EXPECT_EQ(status(b), "ready");
	EXPECT_EQ(status(c), "ready");
	EXPECT_EQ(status(q), "queued");
	worker("w1");
	Task t = claim_one("w1");
	store().complete(t.instance_id, t.epoch, json::object());
	EXPECT_EQ(status(q), "succeeded");	// got the slot and ended in that transaction
	// a delayed start holds no slot until its run_at
	store().queue_set("default", {{"partition_concurrency", 2}});
	int64_t later = start("build", json::object(), {{"partition_key", "k"}, {"run_at", time_at(60)}});
	EXPECT_EQ(status(later), "waiting");
	at(61);
	EXPECT_EQ(store().tick(100).at("run_at"), 1);
	EXPECT_EQ(status(later), "queued");	// b and c hold both slots
	auto batch = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(batch.size(), 2u);
	store().complete(batch[0].instance_id, batch[0].epoch, json::object());
	EXPECT_EQ(status(later), "ready");
	// a Wait keeps the slot (held from start to end): two slots, two Waits
	define("waits", wait_then_task_def());
	int64_t w1 = start("waits", json::object(), {{"partition_key", "w"}});
	int64_t w2 = start("waits", json::object(), {{"partition_key", "w"}});
	int64_t w3 = start("waits", json::object(), {{"partition_key", "w"}});
	EXPECT_EQ(status(w1), "waiting");
	EXPECT_EQ(status(w2), "waiting");
	EXPECT_EQ(status(w3), "queued");
}

TEST_P(StoreTest, GlobalConcurrencyCapsRunningTasksOverAllWorkers) {
	define("train", handler_def("train"));
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 2}});
	worker("w1", {{"queues", {"gpu", "default"}}});
	worker("w2", {{"queues", {"gpu", "default"}}});
	define("build", handler_def("build"));
	for (int i = 0; i < 5; i++) start("train");
	int64_t b = start("build");
	auto first = store().claim("w1", {"gpu"}, 1);
	ASSERT_EQ(first.size(), 1u);
	// w2 asks for 10 of both queues: one gpu slot is left, and the batch is
	// bounded by that room (the build is taken by the next claim)
	auto second = store().claim("w2", {"gpu", "default"}, 10);
	ASSERT_EQ(second.size(), 1u);
	EXPECT_TRUE(store().claim("w1", {"gpu"}, 10).empty());
	auto builds = store().claim("w2", {"gpu", "default"}, 10);	// gpu is full: left out
	ASSERT_EQ(builds.size(), 1u);
	EXPECT_EQ(builds[0].instance_id, b);
	EXPECT_EQ(queue_named(store(), "gpu").at("running"), 2);
	store().complete(first[0].instance_id, first[0].epoch, json::object());
	EXPECT_EQ(store().claim("w1", {"gpu"}, 10).size(), 1u);
	// 0 = no limit
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 0}});
	EXPECT_EQ(store().claim("w1", {"gpu"}, 10).size(), 2u);
	// the per-worker concurrency still applies with a global limit
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 50}});
	for (int i = 0; i < 4; i++) start("train");
	worker("w3", {{"queues", {"gpu"}}, {"concurrency", 1}});
	EXPECT_EQ(store().claim("w3", {"gpu"}, 10).size(), 1u);
}

TEST_P(StoreTest, RateLimitMakesTasksWaitInsteadOfFailing) {
	define("build", handler_def("build"));
	store().queue_set("default", {{"rate_limit", {{"count", 2}, {"period", "10s"}}}});
	worker("w1");
	for (int i = 0; i < 5; i++) start("build");
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 2u);
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(5);
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(10.001);	// the window slides past the first two starts
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 2u);
	at(20.5);
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 1u);
	for (auto &i : store().list_instances({{"definition", "build"}})) EXPECT_EQ(i.at("status"), "running");
	// a region queue has the limits of its queue, counted on its own
	for (int i = 0; i < 3; i++) start("build", json::object(), {{"labels", {{"region", "eu"}}}});
	EXPECT_EQ(store().claim("w1", {"default.eu"}, 10).size(), 2u);
}

// claim_wake: when the rate window of a queue holding back a ready task
// has room again (the worker sleeps that long at most, not --poll-interval).
TEST_P(StoreTest, ClaimWakeSaysWhenARateWindowOpens) {
	define("build", handler_def("build"));
	worker("w1");
	start("build");
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);	// no queue has a rate limit
	store().queue_set("default", {{"rate_limit", {{"count", 2}, {"period", "10s"}}}});
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);	// room in the window
	for (int i = 0; i < 3; i++) start("build");
	EXPECT_EQ(store().claim("w1", {"default"}, 1).size(), 1u);
	at(3);
	EXPECT_EQ(store().claim("w1", {"default"}, 1).size(), 1u);
	// full, with ready tasks: the first start leaves the window at 10s
	EXPECT_EQ(store().claim_wake({"default", "other"}), 7000);
	at(9.5);
	EXPECT_EQ(store().claim_wake({"default"}), 500);
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());
	at(10);
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);	// room again
	EXPECT_EQ(store().claim("w1", {"default"}, 5).size(), 1u);
	// full again (starts at 3 and 10): the one at 3 leaves at 13
	EXPECT_EQ(store().claim_wake({"default"}), 3000);
	EXPECT_EQ(store().claim("w1", {"default"}, 5).size(), 0u);
	at(13);
	EXPECT_EQ(store().claim("w1", {"default"}, 5).size(), 1u);
	// full, but nothing ready: nothing to wake for
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);
}

namespace {
std::map<std::string, int> by_partition(Store &s, const std::vector<Task> &tasks) {
	std::map<std::string, int> out;
	for (auto &t : tasks) {
		json key = s.get_instance(t.instance_id).at("partition_key");
		out[key.is_null() ? "-" : key.get<std::string>()]++;
	}
	return out;
}
}  // namespace

// claim_wake for partition_rate_limit windows: the first full partition
// holding a ready task says when the worker looks again; a partition with
// nothing ready, or a queue rate window, is counted on its own.
TEST_P(StoreTest, ClaimWakeSaysWhenAPartitionRateWindowOpens) {
	define("build", handler_def("build"));
	store().queue_set("default",
					  {{"partition_concurrency", 10}, {"partition_rate_limit", {{"count", 2}, {"period", "10s"}}}});
	worker("w1");
	for (int i = 0; i < 3; i++) start("build", json::object(), {{"partition_key", "a"}});
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);	// room in every window
	EXPECT_EQ(store().claim("w1", {"default"}, 1).size(), 1u);
	at(2);
	for (int i = 0; i < 3; i++) start("build", json::object(), {{"partition_key", "b"}});
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 3u);	// a's second, b's two
	// a full since 2s (starts 0s, 2s), b full (2s, 2s): a's start at 0s leaves first
	EXPECT_EQ(store().claim_wake({"default"}), 8000);
	EXPECT_EQ(store().claim_wake({"other"}), std::nullopt);	// not a queue it asked about
	at(9);
	EXPECT_EQ(store().claim_wake({"default"}), 1000);
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(10);
	// a has room (one start in its window); b is full until 12s
	EXPECT_EQ(store().claim_wake({"default"}), 2000);
	EXPECT_EQ(by_partition(store(), store().claim("w1", {"default"}, 10)), (std::map<std::string, int>{{"a", 1}}));
	// a has nothing ready any more: only b's window counts
	EXPECT_EQ(store().claim_wake({"default"}), 2000);
	at(12);
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);
	EXPECT_EQ(by_partition(store(), store().claim("w1", {"default"}, 10)), (std::map<std::string, int>{{"b", 1}}));
	EXPECT_EQ(store().claim_wake({"default"}), std::nullopt);	// nothing ready: nothing to wake for
	// with a queue rate window as well, the earlier of the two
	store().queue_set("default", {{"partition_concurrency", 10},
								  {"rate_limit", {{"count", 3}, {"period", "5s"}}},
								  {"partition_rate_limit", {{"count", 1}, {"period", "20s"}}}});
	at(30);
	for (int i = 0; i < 2; i++) start("build", json::object(), {{"partition_key", "c"}});
	start("build");
	EXPECT_EQ(by_partition(store(), store().claim("w1", {"default"}, 10)), (std::map<std::string, int>{{"-", 1}, {"c", 1}}));
	EXPECT_EQ(store().claim_wake({"default"}), 20000);	// c's window; the queue's has room
	for (int i = 0; i < 2; i++) start("build");
	EXPECT_EQ(store().claim("w1", {"default"}, 10).size(), 1u);	// the queue's third start
	EXPECT_EQ(store().claim_wake({"default"}), 5000);	// the queue's window opens first
}

TEST_P(StoreTest, PartitionRateLimitMakesOnlyThatPartitionWait) {
	define("build", handler_def("build"));
	store().queue_set("default",
					  {{"partition_concurrency", 10}, {"partition_rate_limit", {{"count", 2}, {"period", "10s"}}}});
	worker("w1");
	std::vector<int64_t> a;
	for (int i = 0; i < 4; i++) a.push_back(start("build", json::object(), {{"partition_key", "a"}}));
	start("build", json::object(), {{"partition_key", "b"}});
	start("build");
	start("build");
	// a batch takes 2 of a (its room), b's and the keyless ones
	auto first = store().claim("w1", {"default"}, 10);
	EXPECT_EQ(by_partition(store(), first), (std::map<std::string, int>{{"-", 2}, {"a", 2}, {"b", 1}}));
	// a's window is full: its tasks wait, ready, nothing fails
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	EXPECT_EQ(status(a[2]), "ready");
	EXPECT_EQ(status(a[3]), "ready");
	// meanwhile another partition and keyless tasks are still claimed
	at(5);
	start("build", json::object(), {{"partition_key", "b"}});
	start("build");
	auto second = store().claim("w1", {"default"}, 10);
	EXPECT_EQ(by_partition(store(), second), (std::map<std::string, int>{{"-", 1}, {"b", 1}}));
	at(9.999);	// the window is (now - 10s, now]: the first starts are still in it
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	// the window slides past the first two starts of a; a batch of one
	// takes one, the next the other
	at(10);
	auto third = store().claim("w1", {"default"}, 1);
	ASSERT_EQ(third.size(), 1u);
	EXPECT_EQ(third[0].instance_id, a[2]);
	EXPECT_EQ(store().claim("w1", {"default"}, 1).at(0).instance_id, a[3]);
	for (int64_t id : a) EXPECT_EQ(status(id), "running");
	// b's start at 0s is out of the window, the one at 5s in: room for one
	start("build", json::object(), {{"partition_key", "b"}});
	start("build", json::object(), {{"partition_key", "b"}});
	EXPECT_EQ(by_partition(store(), store().claim("w1", {"default"}, 10)), (std::map<std::string, int>{{"b", 1}}));
}

// A Map's items run as children: they carry their parent's partition key,
// so the partition's rate limit counts their tasks, but they take no slot
// (the parent holds the partition's only one, and they still run).
TEST_P(StoreTest, ChildrenCountInTheirPartitionsRateButHoldNoSlot) {
	define("fan", json::parse(R"({"StartAt":"M","States":{"M":{"Type":"Map","End":true,
	  "ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:t","End":true}}}}}})"));
	store().queue_set("default",
					  {{"partition_concurrency", 1}, {"partition_rate_limit", {{"count", 2}, {"period", "10s"}}}});
	worker("w1");
	const int64_t id = start("fan", json::array({1, 2, 3}), {{"partition_key", "acct"}});
	const int64_t other = start("fan", json::array({4}), {{"partition_key", "acct"}});
	EXPECT_EQ(status(id), "waiting");
	EXPECT_EQ(status(other), "queued");	 // the slot is id's, for its whole tree
	for (const auto &c : children_of(id)) EXPECT_EQ(c.at("partition_key"), "acct");
	auto first = store().claim("w1", {"default"}, 10);
	EXPECT_EQ(first.size(), 2u);  // the partition's rate: 2 per 10 s, children included
	for (const auto &t : first) store().complete(t.instance_id, t.epoch, t.instance_id);
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());
	at(10);
	auto second = store().claim("w1", {"default"}, 10);
	ASSERT_EQ(second.size(), 1u);
	store().complete(second[0].instance_id, second[0].epoch, 0);
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(status(other), "waiting");  // the slot went on to the next instance
}

TEST_P(StoreTest, PartitionRateLimitIsPerQueueAndInheritedFromTheDefaultQueue) {
	define("build", handler_def("build"));
	define("train", handler_def("train"));
	store().queue_set("default",
					  {{"partition_concurrency", 10}, {"partition_rate_limit", {{"count", 1}, {"period", "1m"}}}});
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}});
	store().queue_set("fast", {{"kind", "routed"},
							   {"match", {{"labels", {{"speed", "fast"}}}}},
							   {"partition_rate_limit", {{"count", 3}, {"period", "1s"}}}});
	// a queue leaving it out shows (and has) the default queue's
	json gpu = queue_named(store(), "gpu");
	EXPECT_EQ(gpu.at("partition_rate_limit"), 1);
	EXPECT_EQ(gpu.at("partition_rate_period_ms"), 60000);
	EXPECT_EQ(queue_named(store(), "fast").at("partition_rate_limit"), 3);
	EXPECT_EQ(queue_named(store(), "fast").at("partition_rate_period_ms"), 1000);
	EXPECT_EQ(queue_named(store(), "default").at("rate_limit"), nullptr);
	worker("w1", {{"queues", {"default", "gpu", "fast"}}});
	// the same key in two queues is two partitions, each with its queue's limit
	for (int i = 0; i < 3; i++) {
		start("train", json::object(), {{"partition_key", "k"}});
		start("build", json::object(), {{"partition_key", "k"}});
		start("build", json::object(), {{"partition_key", "k"}, {"labels", {{"speed", "fast"}}}});
	}
	std::map<std::string, int> per_queue;
	for (auto &t : store().claim("w1", {"default", "gpu", "fast"}, 20))
		per_queue[store().get_instance(t.instance_id).at("queue").get<std::string>()]++;
	EXPECT_EQ(per_queue, (std::map<std::string, int>{{"default", 1}, {"fast", 3}, {"gpu", 1}}));
	// a later change of the default queue applies to gpu too
	store().queue_set("default",
					  {{"partition_concurrency", 10}, {"partition_rate_limit", {{"count", 2}, {"period", "1m"}}}});
	EXPECT_EQ(store().claim("w1", {"gpu"}, 20).size(), 1u);
	EXPECT_EQ(store().claim("w1", {"default"}, 20).size(), 1u);
	// removed: no limit
	store().queue_set("default", {{"partition_concurrency", 10}});
	EXPECT_EQ(queue_named(store(), "gpu").at("partition_rate_limit"), nullptr);
	EXPECT_EQ(store().claim("w1", {"default", "gpu"}, 20).size(), 2u);
}

// Several connections claim from one partition-rate-limited queue at once:
// together they never take more than a partition's rate, and they do take
// up to it, and the tasks without a key.
TEST_P(StoreTest, ConcurrentClaimersNeverExceedAPartitionRate) {
	define("build", handler_def("build"));
	store().queue_set("default",
					  {{"partition_concurrency", 50}, {"partition_rate_limit", {{"count", 3}, {"period", "1h"}}}});
	for (int i = 0; i < 10; i++) {
		start("build", json::object(), {{"partition_key", "p"}});
		start("build", json::object(), {{"partition_key", "q"}});
		start("build");
	}
	constexpr int kClaimers = 4;
	std::vector<std::unique_ptr<Store>> conns;
	for (int i = 0; i < kClaimers; i++) {
		conns.push_back(open_another());
		conns.back()->worker_register("c" + std::to_string(i), json::object());
	}
	std::atomic<bool> go{false};
	std::vector<std::vector<Task>> got(kClaimers);
	std::vector<std::thread> threads;
	for (int i = 0; i < kClaimers; i++)
		threads.emplace_back([&, i] {
			while (!go) std::this_thread::yield();
			for (int k = 0; k < 8; k++) {
				auto ts = conns[i]->claim("c" + std::to_string(i), {"default"}, 2);
				got[i].insert(got[i].end(), ts.begin(), ts.end());
			}
		});
	go = true;
	for (auto &t : threads) t.join();
	std::vector<Task> all;
	for (auto &ts : got) all.insert(all.end(), ts.begin(), ts.end());
	// a claimer may skip a partition another one is counting (it does not
	// wait), so the last claims are made here, alone
	for (;;) {
		auto ts = store().claim("c0", {"default"}, 10);
		if (ts.empty()) break;
		all.insert(all.end(), ts.begin(), ts.end());
	}
	EXPECT_EQ(by_partition(store(), all), (std::map<std::string, int>{{"-", 10}, {"p", 3}, {"q", 3}}));
}

// Several connections claim from one limited queue at once: together they
// never take more than the limit, and they do take up to it.
TEST_P(StoreTest, ConcurrentClaimersNeverExceedTheGlobalLimit) {
	define("train", handler_def("train"));
	store().queue_set("gpu", {{"kind", "routed"}, {"match", {{"definitions", {"train"}}}}, {"global_concurrency", 3}});
	for (int i = 0; i < 20; i++) start("train");
	constexpr int kClaimers = 4;
	std::vector<std::unique_ptr<Store>> conns;
	for (int i = 0; i < kClaimers; i++) {
		conns.push_back(open_another());
		conns.back()->worker_register("c" + std::to_string(i), {{"queues", {"gpu"}}});
	}
	for (int round = 0; round < 3; round++) {
		std::atomic<int> claimed{0};
		std::atomic<bool> go{false};
		std::vector<std::vector<Task>> got(kClaimers);
		std::vector<std::thread> threads;
		for (int i = 0; i < kClaimers; i++)
			threads.emplace_back([&, i] {
				while (!go) std::this_thread::yield();
				for (int k = 0; k < 3; k++) {
					auto ts = conns[i]->claim("c" + std::to_string(i), {"gpu"}, 2);
					claimed += static_cast<int>(ts.size());
					got[i].insert(got[i].end(), ts.begin(), ts.end());
				}
			});
		go = true;
		for (auto &t : threads) t.join();
		EXPECT_EQ(claimed.load(), 3) << "round " << round;
		EXPECT_EQ(queue_named(store(), "gpu").at("running"), 3);
		// end them all for the next round
		for (auto &ts : got)
			for (auto &t : ts) store().complete(t.instance_id, t.epoch, json::object());
	}
}

// Several connections start instances of one partition at once while others
// end: never more holders than partition_concurrency, and a free slot never
// stays free while an instance waits.
TEST_P(StoreTest, ConcurrentStartsAndEndsKeepPartitionSlotsExact) {
	define("build", handler_def("build"));
	store().queue_set("default", {{"partition_concurrency", 2}});
	worker("w1");
	constexpr int kStarters = 4, kEach = 5;
	std::vector<std::unique_ptr<Store>> conns;
	for (int i = 0; i < kStarters; i++) conns.push_back(open_another());
	std::atomic<bool> go{false};
	std::vector<std::thread> threads;
	for (int i = 0; i < kStarters; i++)
		threads.emplace_back([&, i] {
			while (!go) std::this_thread::yield();
			for (int k = 0; k < kEach; k++) conns[i]->start("build", json::object(), {{"partition_key", "p"}});
		});
	go = true;
	int done = 0;
	// Meanwhile this connection runs what holds a slot, to the end.  Only it
	// frees slots, so ready (read first) + running (read second) never
	// counts more than the holders of one moment.  A starved instance would
	// keep `done` short: the loop is bounded and the test fails then.
	for (int spin = 0; done < kStarters * kEach && spin < 200000; spin++) {
		size_t ready = store().list_instances({{"status", "ready"}}).size();
		size_t running = store().list_instances({{"status", "running"}}).size();
		EXPECT_LE(ready + running, 2u);
		auto ts = store().claim("w1", {"default"}, 10);
		for (auto &t : ts) {
			store().complete(t.instance_id, t.epoch, json::object());
			done++;
		}
		if (ts.empty()) std::this_thread::yield();
	}
	for (auto &t : threads) t.join();
	EXPECT_EQ(done, kStarters * kEach);
	EXPECT_EQ(store().list_instances({{"status", "succeeded"}, {"limit", 1000}}).size(),
			  static_cast<size_t>(kStarters * kEach));
	EXPECT_TRUE(store().list_instances({{"status", "queued"}}).empty());
}

}  // namespace genroc::conformance
