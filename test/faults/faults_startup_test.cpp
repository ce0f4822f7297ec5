// faults_startup_test.cpp — ten `genroc worker` and ten `genroc api`
// processes started at once against a database nobody used yet: on
// PostgreSQL a fresh database with the extension created, on SQLite a file
// that does not exist (every process races to create the schema).  Every
// process comes up (/healthz 200, the worker registered), races on the schema
// and on the handlers' queues are retried inside genroc, and no warning or
// error reaches any log.  Then the processes work together: a definition
// posted to one API, an instance started on another, run by a worker.
#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <fstream>

#include "fault_support.hpp"

namespace genroc::faults {
namespace {

using json = nlohmann::json;

class Startup : public FaultTest {};

TEST_P(Startup, TenWorkersAndTenApisAtOnceOnAFreshDatabaseAllComeUp) {
	fault_handlers();
	// Half the workers also serve a handler's own queue: each writes it with
	// queue_set at start, all at once.
	std::string plain_handlers = handlers_;
	auto stock = script("stock.sh", "cat\n");
	handlers_ = handlers_file({{"step", dir_ + "/step.sh"}, {"record", dir_ + "/record.sh"}, {"stock", stock}});
	{
		json h = json::parse(std::ifstream(handlers_));
		h["handlers"]["stock"]["queue"] = "stock";
		std::ofstream(handlers_) << h.dump(2);
	}
	const std::string queued_handlers = handlers_;

	// Each process waits at a gate (a file) so that all twenty open the
	// database within a few milliseconds of each other.
	const std::string gate = dir_ + "/go";
	auto gated = [&](std::vector<std::string> argv, std::map<std::string, std::string> env,
					 const std::string &log) {
		argv.insert(argv.begin(), {"/bin/sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.005; done; exec \"$@\"", gate});
		return std::make_unique<Proc>(argv, env, log);
	};
	const int n = 10;
	std::vector<int> ports;
	std::vector<std::unique_ptr<Proc>> apis;
	for (int i = 0; i < n; i++) {
		const std::string id = "boot-w" + std::to_string(i);
		procs_.push_back(gated({e2e_worker::genroc_bin(), "worker", "--database", db_url_, "--worker-id", id,
								"--lease-duration", "2s", "--stale-after", "3s", "--tick-interval", "200ms",
								"--poll-interval", "200ms", "--handlers", i % 2 ? queued_handlers : plain_handlers},
							   {{"E2E_WHO", id}, {"E2E_DIR", dir_}, {"GENROC_WORKER_ID", id}},
							   dir_ + "/" + id + ".log"));
		// port 0: each picks its own (a port found free and closed again
		// was taken by another test's server in between)
		apis.push_back(gated({e2e_worker::genroc_bin(), "api", "--database", db_url_, "--listen", "127.0.0.1:0"},
							 {}, dir_ + "/api" + std::to_string(i) + ".log"));
	}
	std::this_thread::sleep_for(200ms);	// every shell at the gate
	::close(::open(gate.c_str(), O_CREAT | O_WRONLY, 0644));

	for (int i = 0; i < n; i++) {
		int status = 0, port = 0;
		bool up = eventually(
			[&] {
				if (!apis[i]->running()) return true;
				if (port == 0) port = e2e_worker::port_in_log(*apis[i], "HTTP API listening");
				if (port == 0) return false;
				httplib::Client c("127.0.0.1", port);
				c.set_connection_timeout(2);
				auto r = c.Get("/healthz");
				status = r ? r->status : 0;
				return status == 200;
			},
			60s);
		ports.push_back(port);
		EXPECT_TRUE(up && status == 200) << "api " << i << " /healthz " << status << ":\n" << apis[i]->log();
	}
	json workers;
	bool registered = eventually(
		[&] {
			try {
				workers = store()->list_workers();
			} catch (const Error &) {
				return false;
			}
			int live = 0;
			for (auto &w : workers)
				if (w.value("worker", "").rfind("boot-w", 0) == 0 && w["stopped_at"].is_null()) live++;
			return live == n;
		},
		60s);
	EXPECT_TRUE(registered) << workers.dump();
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a worker exited:\n" << p->log();
	for (auto &a : apis) EXPECT_TRUE(a->running()) << "an api exited:\n" << a->log();

	// They work together.
	{
		httplib::Client c0("127.0.0.1", ports[0]), c9("127.0.0.1", ports[n - 1]);
		json def = {{"name", "job"}, {"definition", json::parse(kJob)}};
		auto r = c0.Post("/api/definitions", def.dump(), "application/json");
		ASSERT_TRUE(r && r->status / 100 == 2) << (r ? r->body : "no answer");
		r = c9.Post("/api/instances", json{{"definition", "job"}, {"input", json::object()}}.dump(),
					"application/json");
		ASSERT_TRUE(r && r->status / 100 == 2) << (r ? r->body : "no answer");
		int64_t id = json::parse(r->body).at("instance_id").get<int64_t>();
		EXPECT_EQ(wait_status(id, {"succeeded", "failed"}, 60s).value("status", ""), "succeeded");
	}

	// Nothing was retried out loud: no warning or error in any log.
	std::vector<Proc *> all;
	for (auto &p : procs_) all.push_back(p.get());
	for (auto &a : apis) all.push_back(a.get());
	for (auto *p : all)
		for (auto &l : warnings_in(p->log())) ADD_FAILURE() << p->log_path() << ": " << l;
	expect_invariants({{}, true, effects(), true});
}

INSTANTIATE_TEST_SUITE_P(Stores, Startup, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &p) { return p.param; });

}  // namespace
}  // namespace genroc::faults
