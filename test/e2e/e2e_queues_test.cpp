// e2e_queues_test.cpp — real genroc workers and queues (docs/sql-api.md "Queues and
// routing"): two workers in different regions and a handler pool, each task
// run by the worker its queue belongs to; and a queue config that reuses a
// tenant's queue name stops the worker at start.
#include <sys/wait.h>

#include <fstream>

#include "e2e_worker_support.hpp"
#include "handlers.hpp"

namespace genroc::e2e_worker {
namespace {

class Queues : public WorkerTest {
  protected:
	void SetUp() override {
		WorkerTest::SetUp();
		use_postgres();
		if (IsSkipped() || HasFatalFailure()) return;
		standard_handlers();
		standard_ = handlers_;
	}
	// A handlers file with step, and train in a queue of its own (the pool's).
	std::string pool_handlers() {
		auto train = script("train.sh", R"SH(cat >/dev/null
printf '{"who":"%s","trained":true}\n' "$E2E_WHO")SH");
		std::string step = dir_ + "/step.sh";
		json h = {{"step", {{"command", {step}}, {"sha256", sha256_file(step)}}},
				  {"train", {{"command", {train}}, {"sha256", sha256_file(train)}, {"queue", "trainers"}}}};
		std::string path = dir_ + "/pool-handlers.json";
		std::ofstream(path) << json{{"handlers", h}}.dump(2);
		return path;
	}
	// The queue as list_queues shows it; an empty object when there is none.
	json queue(const std::string &name) {
		for (auto &q : store()->list_queues())
			if (q.at("name") == name) return q;
		return json::object();
	}
	std::string standard_;
};

json one_task(const std::string &handler) {
	return {{"StartAt", "T"}, {"States", {{"T", {{"Type", "Task"}, {"Resource", "handler:" + handler}, {"End", true}}}}}};
}

TEST_F(Queues, RegionsAndAHandlerPoolEachRunTheirOwnTasks) {
	auto eu = worker("w-eu", {"--region", "eu"});
	auto us = worker("w-us", {"--region", "us"});
	handlers_ = pool_handlers();
	auto pool = worker("w-pool", {"--exclusive", "--queue", "gpu"});
	handlers_ = standard_;
	// The pool wrote its handler queue at start; routing needs it first.
	ASSERT_TRUE(eventually(
		[&] {
			json q = queue("trainers");
			return q.value("kind", "") == "handler" && q.value("workers", json()) == json::array({"w-pool"});
		},
		20s))
		<< pool->log();
	ASSERT_TRUE(eventually([&] { return queue("default.eu").value("workers", json()) == json::array({"w-eu"}); }, 20s))
		<< eu->log();
	ASSERT_TRUE(eventually([&] { return queue("default.us").value("workers", json()) == json::array({"w-us"}); }, 20s))
		<< us->log();
	EXPECT_EQ(queue("gpu").at("workers"), json::array({"w-pool"}));

	auto s = store();
	s->define("build", one_task("step"));
	s->define("train", one_task("train"));
	std::vector<std::pair<int64_t, std::string>> expect;
	for (int i = 0; i < 3; i++) {
		expect.emplace_back(s->start("build", json::object(), {{"labels", {{"region", "eu"}}}}).instance_id, "w-eu");
		expect.emplace_back(s->start("build", json::object(), {{"labels", {{"region", "us"}}}}).instance_id, "w-us");
		expect.emplace_back(s->start("train", json::object(), json::object()).instance_id, "w-pool");
	}
	for (auto &[id, who] : expect) {
		json inst = wait_status(id, {"succeeded", "failed"}, 30s);
		ASSERT_EQ(inst.at("status"), "succeeded") << inst.dump() << "\n" << eu->log() << us->log() << pool->log();
		EXPECT_EQ(inst.at("output").at("who"), who) << inst.dump();
	}
	EXPECT_EQ(s->get_instance(expect[0].first).at("queue"), "default.eu");
	EXPECT_EQ(s->get_instance(expect[2].first).at("queue"), "trainers");
	// default has no worker now: a start without a region waits there
	int64_t stray = s->start("build", json::object(), json::object()).instance_id;
	EXPECT_EQ(s->get_instance(stray).at("status"), "ready");
	EXPECT_EQ(queue("default").at("workers"), json::array());
}

TEST_F(Queues, AQueueConfigReusingATenantsNameStopsTheWorker) {
	store()->queue_set("acme", {{"kind", "tenant"}});
	std::string path = dir_ + "/queues.json";
	std::ofstream(path) << R"({"queues": {"acme": {"kind": "routed", "match": {"definitions": ["*"]}}}})";
	auto w = worker("w-bad", {"--queues-config", path});
	auto st = w->wait(20s);
	ASSERT_TRUE(st.has_value()) << w->log();
	EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 1) << w->log();
	EXPECT_NE(w->log().find("used by a tenant"), std::string::npos) << w->log();
	EXPECT_EQ(queue("acme").at("kind"), "tenant");

	// a good config is written at start; the worker serves the tenant queue
	std::ofstream(path) << R"({"queues": {"gpu": {"kind": "routed", "match": {"definitions": ["ml-*"]},
		"global_concurrency": 2}}})";
	auto ok = worker("w-ok", {"--queues-config", path});
	ASSERT_TRUE(eventually([&] { return queue("gpu").value("kind", "") == "routed"; }, 20s)) << ok->log();
	EXPECT_EQ(queue("gpu").at("global_concurrency"), 2);
	ASSERT_TRUE(eventually([&] { return queue("acme").value("workers", json()) == json::array({"w-ok"}); }, 20s))
		<< ok->log();
	EXPECT_EQ(queue("gpu").at("workers"), json::array());	// not listed with --queue
}

// Issue 19: a worker with a handler serves the handler's queue configured
// in the database (and <queue>.<region> with --region), although its
// handlers file names no queue.
TEST_F(Queues, AWorkerServesItsHandlersQueueWithoutTheHandlersFileNamingIt) {
	auto s = store();
	s->queue_set("builders", {{"kind", "handler"}, {"handler", "step"}});
	s->define("build", one_task("step"));
	int64_t plain = s->start("build", json::object(), json::object()).instance_id;
	int64_t eu = s->start("build", json::object(), {{"labels", {{"region", "eu"}}}}).instance_id;
	EXPECT_EQ(s->get_instance(plain).at("queue"), "builders");
	EXPECT_EQ(s->get_instance(eu).at("queue"), "builders.eu");
	auto w = worker("w-home");
	auto w_eu = worker("w-eu", {"--region", "eu"});
	json a = wait_status(plain, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(a.at("status"), "succeeded") << a.dump() << w->log();
	EXPECT_EQ(a.at("output").at("who"), "w-home");
	json b = wait_status(eu, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(b.at("status"), "succeeded") << b.dump() << w_eu->log();
	EXPECT_EQ(b.at("output").at("who"), "w-eu");
	EXPECT_EQ(queue("builders").at("workers"), json::array({"w-home"}));
}

// Issue 19: a task whose handler has no queue yet, claimed by a worker
// without that handler, is not failed: genroc makes the queue named after
// the handler and the task waits there.  A worker with the handler that was
// already running (--exclusive: serving gpu and its handlers' queues, by
// name, since no file names a queue) runs it there without a restart, and later starts are
// routed there at once.
TEST_F(Queues, AMissingHandlerMovesTheTaskToItsHandlersQueueForAWorkerThatHasIt) {
	auto train = script("train.sh", R"SH(cat >/dev/null
printf '{"who":"%s","trained":true}\n' "$E2E_WHO")SH");
	std::string path = dir_ + "/train-handlers.json";
	std::ofstream(path) << json{{"handlers", {{"train", {{"command", {train}}, {"sha256", sha256_file(train)}}}}}}
							   .dump(2);
	handlers_ = path;
	auto pool = worker("w-pool", {"--exclusive", "--queue", "gpu"});
	handlers_ = standard_;
	auto other = worker("w-other");
	ASSERT_TRUE(eventually([&] { return queue("train").value("workers", json()) == json::array({"w-pool"}); }, 20s))
		<< pool->log();
	ASSERT_TRUE(eventually([&] { return queue("default").value("workers", json()) == json::array({"w-other"}); }, 20s))
		<< other->log();
	EXPECT_EQ(queue("train").at("kind"), "unconfigured");	// served, not made yet

	auto s = store();
	s->define("train", one_task("train"));
	int64_t first = s->start("train", json::object(), json::object()).instance_id;
	json a = wait_status(first, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(a.at("status"), "succeeded") << a.dump() << other->log() << pool->log();
	EXPECT_EQ(a.at("output").at("who"), "w-pool");
	EXPECT_EQ(a.at("queue"), "train");
	EXPECT_EQ(queue("train").at("kind"), "handler");
	EXPECT_EQ(queue("train").at("handler"), "train");
	EXPECT_NE(other->log().find("no handler here"), std::string::npos) << other->log();
	int64_t second = s->start("train", json::object(), json::object()).instance_id;
	EXPECT_EQ(s->get_instance(second).at("queue"), "train");
	json b = wait_status(second, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(b.at("status"), "succeeded") << b.dump() << pool->log();
	EXPECT_EQ(b.at("output").at("who"), "w-pool");
}

// A ready task in a queue that no live worker serves is warned about in the
// worker's log, with who would serve it.
TEST_F(Queues, ReadyTasksNoWorkerServesAreWarnedAboutInTheLog) {
	auto s = store();
	s->queue_set("trainers", {{"kind", "handler"}, {"handler", "train"}});
	s->define("train", one_task("train"));
	s->start("train", json::object(), json::object());
	auto w = worker("w-other");
	ASSERT_TRUE(eventually([&] { return w->log().find("ready tasks that no live worker serves") != std::string::npos; },
						   20s))
		<< w->log();
	EXPECT_NE(w->log().find("trainers"), std::string::npos) << w->log();
	EXPECT_NE(w->log().find("the handler \"train\""), std::string::npos) << w->log();
}

// GENROC_QUEUES_CONFIG is --queues-config from the environment.
TEST_F(Queues, TheQueuesConfigComesFromTheEnvironmentToo) {
	std::string path = dir_ + "/queues.json";
	std::ofstream(path) << R"({"queues": {"gpu": {"kind": "routed", "match": {"definitions": ["ml-*"]}}}})";
	auto w = worker("w-env", {}, {{"GENROC_QUEUES_CONFIG", path}});
	ASSERT_TRUE(eventually([&] { return queue("gpu").value("kind", "") == "routed"; }, 20s)) << w->log();
}

// A database without the extension: the binary says what to run.
TEST_F(Queues, ADatabaseWithoutTheExtensionSaysWhatToRun) {
	const std::string db = db_name_ + "_bare";
	pg_exec(PgServer::get().admin_url(), "DROP DATABASE IF EXISTS " + db);
	pg_exec(PgServer::get().admin_url(), "CREATE DATABASE " + db);
	Proc p({genroc_bin(), "worker", "--database", with_database(db_url_, db), "--worker-id", "w-bare"}, {},
		   dir_ + "/bare.log");
	auto st = p.wait(30s);
	ASSERT_TRUE(st.has_value()) << p.log();
	EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 1) << p.log();
	EXPECT_NE(p.log().find("the genroc extension is not installed in database"), std::string::npos) << p.log();
	EXPECT_NE(p.log().find("CREATE EXTENSION genroc"), std::string::npos) << p.log();
	pg_exec(PgServer::get().admin_url(), "DROP DATABASE IF EXISTS " + db);
}

}  // namespace
}  // namespace genroc::e2e_worker
