// e2e_queues_test.cpp — real genroc workers and queues (README "Queues and
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

}  // namespace
}  // namespace genroc::e2e_worker
