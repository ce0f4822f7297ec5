// e2e_worker_test.cpp — real genroc worker processes against PostgreSQL:
// a multi-step process, kill -9 mid-task, OnlyOnce interrupted, SIGSTOP past
// the lease, SIGTERM drain and release, a duplicate worker id; and
// `genroc run` of the README example on SQLite.
//
// Leases are 2s so lapses come quickly (yet a loaded machine does not miss
// a renewal every 667ms); every wait is a poll of the store or
// of a file with a deadline, never a sleep standing in for an assertion.
#include <signal.h>
#include <sys/wait.h>

#include <httplib.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "config.hpp"
#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

// Lines of runs.log for one state: "WHO INSTANCE STATE PID".
std::vector<std::string> runs_of(const std::string &dir, const std::string &state) {
	std::vector<std::string> out;
	for (auto &l : read_lines(dir + "/runs.log"))
		if (l.find(" " + state + " ") != std::string::npos) out.push_back(l);
	return out;
}

int count_events(const json &history, const std::string &event, const std::string &state) {
	int n = 0;
	for (auto &e : history)
		if (e.value("event", "") == event && e["state"].is_string() && e["state"] == state) ++n;
	return n;
}

class Worker : public WorkerTest {
  protected:
	void SetUp() override {
		WorkerTest::SetUp();
		use_postgres();
		if (IsSkipped() || HasFatalFailure()) return;
		standard_handlers();
	}
	int64_t start(const std::string &name, const json &definition, const json &input = json::object()) {
		auto s = store();
		s->define(name, definition);
		return s->start(name, input, json::object()).instance_id;
	}
	// A one-task process: Step (handler:step with `params`) then Done.
	json one_step(const json &params, bool only_once = false) {
		json step = {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", params}, {"Next", "Done"}};
		if (only_once) step["OnlyOnce"] = true;
		return {{"StartAt", "Step"}, {"States", {{"Step", step}, {"Done", {{"Type", "Succeed"}}}}}};
	}
};

TEST_F(Worker, MultiStepProcessCompletesThroughCommandHandlerAndBuiltins) {
	json def = {
		{"StartAt", "Prepare"},
		{"States",
		 {{"Prepare", {{"Type", "Pass"}, {"Result", {{"n", 2}}}, {"ResultPath", "$.prep"}, {"Next", "Step"}}},
		  {"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"ResultPath", "$.step"}, {"Next", "Echo"}}},
		  {"Echo", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"Parameters", {{"echo.$", "$.prep.n"}}},
					{"ResultPath", "$.echo"}, {"Next", "Boom"}}},
		  {"Boom", {{"Type", "Task"}, {"Resource", "genroc:fail"},
					{"Parameters", {{"Error", "order.Broken"}, {"Cause", "on purpose"}}},
					{"Catch", {{{"ErrorEquals", {"order.Broken"}}, {"ResultPath", "$.caught"}, {"Next", "Nap"}}}},
					{"Next", "Nap"}}},
		  {"Nap", {{"Type", "Task"}, {"Resource", "genroc:sleep"}, {"Parameters", {{"Seconds", 0.2}}},
				   {"ResultPath", "$.nap"}, {"Next", "Record"}}},
		  {"Record", {{"Type", "Task"}, {"Resource", "handler:record"}, {"ResultPath", "$.record"}, {"Next", "Done"}}},
		  {"Done", {{"Type", "Succeed"}}}}}};
	auto a = worker("wa");
	int64_t id = start("multi", def, {{"order", 7}});
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << a->log();
	const json &out = inst["output"];
	EXPECT_EQ(out["order"], 7);
	EXPECT_EQ(out["step"], (json{{"who", "wa"}, {"state", "Step"}}));
	EXPECT_EQ(out["echo"], (json{{"echo", 2}}));
	EXPECT_EQ(out["caught"]["Error"], "order.Broken");
	EXPECT_EQ(out["caught"]["Cause"], "on purpose");
	EXPECT_EQ(out["nap"]["Seconds"], 0.2);
	EXPECT_EQ(out["record"], (json{{"recorded", true}}));
	EXPECT_EQ(runs_of(dir_, "Step").size(), 1u);
	EXPECT_EQ(read_lines(dir_ + "/effects.log").size(), 1u);

	a->signal(SIGTERM);
	auto st = a->wait(10s);
	EXPECT_EQ(exit_code(st), 0) << a->log();
	EXPECT_NE(a->log().find("worker stopped"), std::string::npos) << a->log();
}

TEST_F(Worker, Kill9MidTaskAnotherWorkerFinishesAndTheTaskRanAgain) {
	auto a = worker("wa");
	int64_t id = start("kill9", one_step({{"sleep", 60}, {"sleep_once", true}}));
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGKILL);
	a->wait(5s);
	auto b = worker("wb");
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << b->log();
	auto runs = runs_of(dir_, "Step");
	ASSERT_EQ(runs.size(), 2u);
	EXPECT_EQ(runs[0].rfind("wa ", 0), 0u) << runs[0];
	EXPECT_EQ(runs[1].rfind("wb ", 0), 0u) << runs[1];
	EXPECT_EQ(inst["output"], (json{{"who", "wb"}, {"state", "Step"}}));
}

TEST_F(Worker, OnlyOnceInterruptedByKill9EndsInOnlyOnceInterruptedAndRanOnce) {
	auto a = worker("wa");
	int64_t id = start("once", one_step({{"sleep", 60}}, true));
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGKILL);
	a->wait(5s);
	auto b = worker("wb");
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "failed") << inst.dump() << "\n" << b->log();
	EXPECT_EQ(inst["error"], "only_once.interrupted");
	EXPECT_EQ(runs_of(dir_, "Step").size(), 1u);
}

TEST_F(Worker, StoppedPastItsLeaseTheFirstWorkersCompletionIsRefused) {
	json def = {{"StartAt", "Step"},
				{"States",
				 {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", {{"sleep", 2}}},
							{"Next", "Effect"}}},
				  {"Effect", {{"Type", "Task"}, {"Resource", "handler:record"}, {"Next", "Done"}}},
				  {"Done", {{"Type", "Succeed"}}}}}};
	auto a = worker("wa");
	int64_t id = start("stopped", def);
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGSTOP);
	auto b = worker("wb");
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << b->log();
	ASSERT_EQ(runs_of(dir_, "Step").size(), 2u);	// wa's run, then wb's after the lapse
	a->signal(SIGCONT);
	// wa's handler has long finished; once it runs again it reports, and is refused.
	ASSERT_TRUE(eventually([&] { return a->log().find("lease lost") != std::string::npos; }, 20s)) << a->log();
	std::string lost_line;
	std::istringstream is(a->log());
	for (std::string l; std::getline(is, l);)
		if (l.find("lease lost") != std::string::npos) lost_line = l;
	EXPECT_NE(lost_line.find("instance=" + std::to_string(id)), std::string::npos) << lost_line;
	EXPECT_EQ(read_lines(dir_ + "/effects.log").size(), 1u);
	json h = store()->history(id);
	EXPECT_EQ(count_events(h, "task_succeeded", "Step"), 1) << h.dump();
	EXPECT_EQ(store()->get_instance(id)["output"], (json{{"recorded", true}}));
}

TEST_F(Worker, SigtermDrainsARunningTaskWithinTheGrace) {
	json def = {{"StartAt", "Step"},
				{"States",
				 {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", {{"sleep", 1.5}}},
							{"Next", "After"}}},
				  {"After", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"Next", "Done"}}},
				  {"Done", {{"Type", "Succeed"}}}}}};
	auto a = worker("wa", {"--shutdown-grace", "20s"});
	int64_t id = start("drain", def);
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGTERM);
	auto st = a->wait(15s);
	ASSERT_EQ(exit_code(st), 0) << a->log();
	// The task finished and was reported; nothing had to be released.
	EXPECT_EQ(a->log().find("released leases"), std::string::npos) << a->log();
	json h = store()->history(id);
	EXPECT_EQ(count_events(h, "task_succeeded", "Step"), 1) << h.dump();
	// The worker stopped claiming: the next task waits for another worker.
	auto b = worker("wb");
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump();
	EXPECT_EQ(runs_of(dir_, "Step").size(), 1u);
}

// A supervisor that signals the process and its group (coreutils
// `timeout`) sends SIGTERM twice at once; that is one stop, and the worker
// drains as for one.
TEST_F(Worker, TwoSigtermsAtOnceStillDrain) {
	json def = {{"StartAt", "Step"},
				{"States", {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", {{"sleep", 1.5}}},
									  {"End", true}}}}}};
	auto a = worker("wa", {"--shutdown-grace", "20s"});
	int64_t id = start("drain2", def);
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGTERM);
	// a moment apart, so the kernel does not fold the two into one pending signal
	std::this_thread::sleep_for(200ms);
	a->signal(SIGTERM);
	auto st = a->wait(15s);
	ASSERT_EQ(exit_code(st), 0) << a->log();
	EXPECT_EQ(a->log().find("exiting without draining"), std::string::npos) << a->log();
	EXPECT_EQ(count_events(store()->history(id), "task_succeeded", "Step"), 1);
	EXPECT_EQ(store()->get_instance(id).at("status"), "succeeded");
	// stopped, not left "live"
	bool stopped = false;
	for (auto &w : store()->list_workers())
		if (w.at("worker") == "wa") stopped = !w.value("stopped_at", json()).is_null();
	EXPECT_TRUE(stopped) << store()->list_workers().dump();
}

// At info, no line per task; a `tasks done` summary instead.
TEST_F(Worker, TaskLinesAreDebugAndASummaryIsInfo) {
	json def = {{"StartAt", "A"},
				{"States", {{"A", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"Next", "B"}}},
							{"B", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"End", true}}}}}};
	auto a = worker("wa", {"--log-level", "info", "--log-summary-interval", "500ms"});
	std::vector<int64_t> ids;
	for (int i = 0; i < 3; i++) ids.push_back(start("quiet", def));
	for (int64_t id : ids) ASSERT_EQ(wait_status(id, {"succeeded", "failed"}, 30s).at("status"), "succeeded");
	ASSERT_TRUE(eventually([&] { return a->log().find("total_succeeded=6") != std::string::npos; }, 20s))
		<< a->log();
	EXPECT_NE(a->log().find("tasks done"), std::string::npos) << a->log();
	EXPECT_EQ(a->log().find("task succeeded"), std::string::npos) << a->log();
}

TEST_F(Worker, SigtermPastTheGraceReleasesAndAnotherWorkerContinuesAtOnce) {
	// A 60s lease: if the release did not happen, the other worker could
	// only take the task after a minute, long past this test's deadline.
	auto a = worker("wa", {"--shutdown-grace", "500ms", "--lease-duration", "60s"});
	int64_t id = start("release", one_step({{"sleep", 120}, {"sleep_once", true}}));
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	pid_t handler_pid = 0;
	{
		std::istringstream is(runs_of(dir_, "Step")[0]);
		std::string who, inst, state;
		is >> who >> inst >> state >> handler_pid;
	}
	a->signal(SIGTERM);
	auto st = a->wait(15s);
	ASSERT_EQ(exit_code(st), 0) << a->log();
	EXPECT_NE(a->log().find("released leases"), std::string::npos) << a->log();
	EXPECT_NE(::kill(handler_pid, 0), 0) << "the handler outlived the worker's shutdown";
	auto b = worker("wb", {"--lease-duration", "60s"});
	json inst = wait_status(id, {"succeeded", "failed"}, 20s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << b->log();
	auto runs = runs_of(dir_, "Step");
	ASSERT_EQ(runs.size(), 2u);
	EXPECT_EQ(runs[1].rfind("wb ", 0), 0u);
}

TEST_F(Worker, ASecondWorkerWithALiveWorkersIdIsRefusedNamingTheHost) {
	auto a = worker("same");
	ASSERT_TRUE(eventually([&] { return a->log().find("worker started") != std::string::npos; }, 20s)) << a->log();
	auto b = worker("same", {"--stale-after", "2s"});
	auto st = b->wait(20s);
	ASSERT_EQ(exit_code(st), 1) << b->log();
	const std::string log = b->log();
	EXPECT_NE(log.find("in use"), std::string::npos) << log;
	EXPECT_NE(log.find(host_name()), std::string::npos) << log;
	EXPECT_TRUE(a->running()) << a->log();
}

TEST_F(Worker, RestartedWithItsOwnIdAfterACrashTakesItsWorkBack) {
	auto a = worker("wa", {"--lease-duration", "60s"});
	int64_t id = start("restart", one_step({{"sleep", 120}, {"sleep_once", true}}));
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	a->signal(SIGKILL);
	a->wait(5s);
	// The crashed life's session is gone with it: the new one registers at
	// once and takes back its own lease (the 60s lease never lapses within
	// this test).  Timing across both stores: e2e_restart_test.cpp.
	auto again = worker("wa", {"--lease-duration", "60s"});
	json inst = wait_status(id, {"succeeded", "failed"}, 25s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << again->log();
	EXPECT_EQ(runs_of(dir_, "Step").size(), 2u);
	EXPECT_EQ(again->log().find("worker id in use; retrying"), std::string::npos) << again->log();
}

TEST_F(Worker, JsonLogModeWritesOneUtcJsonObjectPerLine) {
	auto a = worker("wa", {"--log-mode", "json"});
	int64_t id = start("jsonlog", one_step(json::object()));
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << a->log();
	a->signal(SIGTERM);
	ASSERT_EQ(exit_code(a->wait(15s)), 0) << a->log();
	std::istringstream is(a->log());
	int lines = 0;
	bool saw_success = false;
	for (std::string l; std::getline(is, l);) {
		if (l.empty()) continue;
		++lines;
		json j = json::parse(l, nullptr, false);
		ASSERT_TRUE(j.is_object()) << "not a JSON object: " << l;
		ASSERT_TRUE(j["ts"].is_string()) << l;
		EXPECT_EQ(j["ts"].get<std::string>().back(), 'Z') << l;
		EXPECT_TRUE(j["msg"].is_string()) << l;
		if (j["msg"] == "task succeeded" && j["instance"] == id) saw_success = true;
	}
	EXPECT_GE(lines, 3);
	EXPECT_TRUE(saw_success) << a->log();
}

TEST_F(Worker, ServeAnswersHealthzWithLeaseAgeAndRunsWhatTheApiStarts) {
	std::vector<std::string> argv = {genroc_bin(), "serve", "--database", binary_url(db_url_, "serve"), "--worker-id", "srv",
									 "--listen", "127.0.0.1:0", "--lease-duration", "2s", "--handlers", handlers_};
	auto srv = std::make_unique<Proc>(argv, std::map<std::string, std::string>{{"GENROC_WORKER_ID", "srv"},
																			 {"E2E_WHO", "srv"},
																			 {"E2E_DIR", dir_}},
									  dir_ + "/srv.log");
	int port = 0;
	ASSERT_TRUE(eventually(
		[&] {
			auto log = srv->log();
			auto at = log.find("listen=127.0.0.1:");
			if (at == std::string::npos) return false;
			port = std::atoi(log.c_str() + at + 17);
			return port > 0 && log.find("worker started") != std::string::npos;
		},
		20s))
		<< srv->log();
	httplib::Client http("127.0.0.1", port);
	auto health = http.Get("/healthz");
	ASSERT_TRUE(health) << "no answer on port " << port;
	EXPECT_EQ(health->status, 200);
	json h = json::parse(health->body);
	EXPECT_EQ(h["status"], "ok");
	EXPECT_EQ(h["worker_id"], "srv");
	EXPECT_EQ(h["manual_tick"], false);
	ASSERT_TRUE(h["lease_age_ms"].is_number_integer()) << h.dump();
	EXPECT_GE(h["lease_age_ms"].get<int64_t>(), 0);
	// Renewing, not stuck: the age drops again (a renewal seen between two
	// answers), within a generous wait; how fast is not asserted.
	{
		int64_t seen = h["lease_age_ms"].get<int64_t>();
		std::string last = h.dump();
		EXPECT_TRUE(eventually(
			[&] {
				auto r = http.Get("/healthz");
				if (!r || r->status != 200) return false;
				json now = json::parse(r->body, nullptr, false);
				if (!now.is_object() || !now["lease_age_ms"].is_number_integer()) return false;
				last = now.dump();
				const int64_t age = now["lease_age_ms"].get<int64_t>();
				if (age < seen) return true;
				seen = age;
				return false;
			},
			30s))
			<< "lease_age_ms never dropped (no renewal): " << last << "\n" << srv->log();
	}

	auto def = http.Post("/api/definitions", json{{"name", "viaapi"}, {"definition", one_step(json::object())}}.dump(),
						 "application/json");
	ASSERT_TRUE(def);
	ASSERT_EQ(def->status, 201) << def->body;
	auto started = http.Post("/api/instances", json{{"definition", "viaapi"}}.dump(), "application/json");
	ASSERT_TRUE(started);
	ASSERT_EQ(started->status, 201) << started->body;
	int64_t id = json::parse(started->body)["instance_id"];
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	EXPECT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << srv->log();
	EXPECT_EQ(inst["output"], (json{{"who", "srv"}, {"state", "Step"}}));

	srv->signal(SIGTERM);
	EXPECT_EQ(exit_code(srv->wait(15s)), 0) << srv->log();
}

TEST_F(Worker, PgCommitDelayIsSetOrGenrocRefusesToStart) {
	// The worker's role may set it (docs/design.md §4: a superuser, or GRANT SET ON
	// PARAMETER): the delay is accepted and the worker runs.
	binary_url(db_url_, "worker");	// makes the role
	pg_exec(PgServer::get().admin_url(), "GRANT SET ON PARAMETER commit_delay TO genroc_e2e_worker");
	auto a = worker("wa", {"--pg-commit-delay", "100", "--durability", "strict"});
	int64_t id = start("delay", one_step(json::object()));
	EXPECT_EQ(wait_status(id, {"succeeded", "failed"}, 30s)["status"], "succeeded") << a->log();

	// A worker role without the privilege: refused before anything runs, with
	// the reason.
	const std::string role = "e2e_plain_" + db_name_;
	pg_exec(PgServer::get().admin_url(), "CREATE ROLE " + role + " LOGIN IN ROLE genroc_worker");
	std::string url = db_url_;
	url.replace(url.find("://") + 3, url.find('@') - url.find("://") - 3, role);
	std::vector<std::string> argv = {genroc_bin(), "worker", "--database", url, "--worker-id", "plain",
									 "--pg-commit-delay", "100"};
	Proc plain(argv, {{"GENROC_WORKER_ID", "plain"}}, dir_ + "/plain.log");
	auto st = plain.wait(20s);
	std::string log = plain.log();
	try {
		pg_exec(PgServer::get().admin_url(), "DROP ROLE " + role);
	} catch (const std::exception &) {
	}
	ASSERT_EQ(exit_code(st), 1) << log;
	EXPECT_NE(log.find("commit_delay"), std::string::npos) << log;
	EXPECT_NE(log.find("refusing to start"), std::string::npos) << log;
}

// The binary checks its role at start (docs/security.md "Roles and ownership"): a role
// without genroc_worker is refused before it registers, naming the group;
// the role with exactly genroc_worker runs, and warns that its tick will not
// prune (retention is genroc_admin's) when a retention flag is on.
TEST_F(Worker, ARoleWithoutGenrocWorkerIsRefusedAtStart) {
	const std::string role = "e2e_user_" + db_name_;
	pg_exec(PgServer::get().admin_url(), "CREATE ROLE " + role + " LOGIN IN ROLE genroc_user");
	std::string url = db_url_;
	url.replace(url.find("://") + 3, url.find('@') - url.find("://") - 3, role);
	Proc user({genroc_bin(), "worker", "--database", url, "--worker-id", "u1"}, {{"GENROC_WORKER_ID", "u1"}},
			  dir_ + "/user.log");
	auto st = user.wait(20s);
	const std::string log = user.log();
	try {
		pg_exec(PgServer::get().admin_url(), "DROP ROLE " + role);
	} catch (const std::exception &) {
	}
	ASSERT_EQ(exit_code(st), 1) << log;
	EXPECT_NE(log.find("the database role lacks"), std::string::npos) << log;
	EXPECT_NE(log.find("genroc_worker"), std::string::npos) << log;
	EXPECT_TRUE(store()->list_workers().empty());

	auto w = worker("w-least", {"--instance-retention", "1h"});
	int64_t id = start("least", one_step(json::object()));
	EXPECT_EQ(wait_status(id, {"succeeded", "failed"}, 30s)["status"], "succeeded") << w->log();
	EXPECT_NE(w->log().find("tick will prune nothing"), std::string::npos) << w->log();
}

// --log-payloads=false: the worker's own log rows (task_started,
// task_succeeded) and the instance's carry no payload; `genctl logs` shows
// the events and states without them.
TEST_F(Worker, LogPayloadsFalseKeepsPayloadsOutOfTheInstanceLog) {
	auto a = worker("wa", {"--log-payloads=false", "--log-payload-max", "64KB", "--log-retention", "1h"});
	// the start too, as `genroc api --log-payloads=false` would log it
	auto s = store();
	LogOptions quiet;
	quiet.payloads = false;
	s->set_log_options(quiet);
	s->define("secret", one_step({{"pin", "4711-secret"}}));
	const int64_t id = s->start("secret", {{"card", "4711-secret"}}, json::object()).instance_id;
	json inst = wait_status(id, {"succeeded", "failed"}, 30s);
	ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << a->log();

	const std::string out_path = dir_ + "/logs.out";
	const std::string cmd = "'" + std::string(GENCTL_PATH) + "' --database '" + db_url_ + "' logs " +
							std::to_string(id) + " --json >'" + out_path + "' 2>&1";
	ASSERT_EQ(std::system(("timeout 60 " + cmd).c_str()), 0);
	std::ifstream in(out_path);
	std::stringstream ss;
	ss << in.rdbuf();
	const std::string text = ss.str();
	json logs = json::parse(text, nullptr, false);
	ASSERT_FALSE(logs.is_discarded()) << text;
	EXPECT_EQ(logs["instance_id"], id);
	EXPECT_EQ(text.find("4711-secret"), std::string::npos) << text;
	EXPECT_EQ(count_events(logs["history"], "task_started", "Step"), 1) << text;
	EXPECT_EQ(count_events(logs["history"], "task_succeeded", "Step"), 1) << text;
	for (const auto &e : logs["history"])
		if (e["event"] == "task_succeeded") {
			EXPECT_FALSE(e["detail"].contains("output")) << e.dump();
			EXPECT_EQ(e["detail"]["worker"], "wa") << e.dump();
		}
	// the instance keeps its result
	EXPECT_EQ(inst["output"]["who"], "wa");

	// the table form: one line per entry, with its event and state
	ASSERT_EQ(std::system(("'" + std::string(GENCTL_PATH) + "' --database '" + db_url_ + "' logs " +
						   std::to_string(id) + " >'" + out_path + "' 2>&1").c_str()),
			  0);
	std::ifstream in2(out_path);
	std::stringstream table;
	table << in2.rdbuf();
	EXPECT_NE(table.str().find("task_succeeded"), std::string::npos) << table.str();
	EXPECT_NE(table.str().find("EVENT"), std::string::npos) << table.str();
}

// ---------------------------------------------------------------- genroc run

class Run : public WorkerTest {
  protected:
	// Runs `genroc run ARGS` on a SQLite file; returns {exit code, stdout}.
	std::pair<int, std::string> run(std::vector<std::string> args, const std::string &stdin_path = "/dev/null") {
		std::vector<std::string> argv = {genroc_bin(), "run"};
		argv.insert(argv.end(), args.begin(), args.end());
		argv.insert(argv.end(), {"--database", dir_ + "/run.db"});
		// stdout and stderr apart: the last stdout line is the JSON result.
		std::string out_path = dir_ + "/run.out", err_path = dir_ + "/run.err";
		std::string cmd;
		for (auto &a : argv) cmd += "'" + a + "' ";
		cmd += "<'" + stdin_path + "' >'" + out_path + "' 2>'" + err_path + "'";
		int st = std::system(("cd '" + source_dir() + "' && timeout 60 " + cmd).c_str());
		std::ifstream in(out_path);
		std::stringstream ss;
		ss << in.rdbuf();
		std::ifstream ein(err_path);
		std::stringstream es;
		es << ein.rdbuf();
		err_ = es.str();
		return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ss.str()};
	}
	static json last_line(const std::string &out) {
		std::istringstream is(out);
		std::string last;
		for (std::string l; std::getline(is, l);)
			if (!l.empty()) last = l;
		return json::parse(last);
	}
	std::string err_;
};

TEST_F(Run, TheReadmeExampleSucceedsOnSqlite) {
	auto [rc, out] = run({"examples/order.json", "--input",
						  R"({"items":[{"sku":"a","qty":2},{"sku":"b","qty":1}]})", "--json"});
	ASSERT_EQ(rc, 0) << out << err_;
	EXPECT_EQ(last_line(out), (json{{"status", "succeeded"},
									{"output", {{"status", "shipped"}, {"items", 2}, {"carrier", "post"}}},
									{"error", nullptr},
									{"cause", nullptr}}));
	// Progress, state by state, including what it waited for.
	for (const char *s : {"Receive (Pass)", "HasItems (Choice)", "Reserve (Task)", "PaymentWindow: waiting until",
						  "timer fired", "Ship (Task)", "Done (Succeed)"})
		EXPECT_NE(err_.find(s), std::string::npos) << s << "\n" << err_;
}

// A folder, a nesting deeper than the limit, a number beyond a double: one
// line naming the file or flag, exit 2 (the folder aborted with 134, deep
// nesting crashed with 139).
TEST_F(Run, UnreadableOrHostileFilesAreRefusedWithExitTwo) {
	auto [rc, out] = run({dir_});
	EXPECT_EQ(rc, 2) << out << err_;
	EXPECT_NE(err_.find(dir_ + ": is a directory, not a file"), std::string::npos) << err_;

	std::ofstream(dir_ + "/deep.json") << R"({"StartAt":"P","States":{"P":{"Type":"Pass","Result":)" +
											  std::string(100'000, '[') + std::string(100'000, ']') +
											  R"(,"End":true}}})";
	std::tie(rc, out) = run({dir_ + "/deep.json"});
	EXPECT_EQ(rc, 2) << err_.substr(0, 300);
	EXPECT_NE(err_.find("limit of 512 levels"), std::string::npos) << err_.substr(0, 300);

	std::tie(rc, out) = run({"examples/order.json", "--input", R"({"n":1e999999})"});
	EXPECT_EQ(rc, 2);
	EXPECT_NE(err_.find("--input: field \"n\""), std::string::npos) << err_;
}

// A handler this process lacks: the task would wait in the handler's queue
// for a worker that has it, which a run of one process never gets; refused
// with exit 2 before anything is written.
TEST_F(Run, ADefinitionUsingAHandlerTheProcessLacksIsRefused) {
	std::ofstream(dir_ + "/needs.json")
		<< R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:ansible","End":true}}})";
	auto [rc, out] = run({dir_ + "/needs.json"});
	EXPECT_EQ(rc, 2) << out << err_;
	EXPECT_NE(err_.find("\"handler:ansible\", and this process has no such handler"), std::string::npos) << err_;
}

// --input @FILE and --input - (standard input); --log-mode json
// makes run's progress lines JSON objects like the log's.
TEST_F(Run, InputFromAFileOrStdinAndProgressAsJson) {
	const std::string input = dir_ + "/input.json";
	std::ofstream(input) << R"({"items":[{"sku":"a","qty":2},{"sku":"b","qty":1}]})";
	const json expected = {{"status", "shipped"}, {"items", 2}, {"carrier", "post"}};
	auto [rc, out] = run({"examples/order.json", "--input", "@" + input, "--json"});
	ASSERT_EQ(rc, 0) << out << err_;
	EXPECT_EQ(last_line(out)["output"], expected);
	std::tie(rc, out) = run({"examples/order.json", "--input", "-", "--json", "--log-mode", "json"}, input);
	ASSERT_EQ(rc, 0) << out << err_;
	EXPECT_EQ(last_line(out)["output"], expected);
	std::istringstream lines(err_);
	int n = 0;
	bool saw_ship = false;
	for (std::string l; std::getline(lines, l);) {
		if (l.empty()) continue;
		json j = json::parse(l, nullptr, false);
		ASSERT_TRUE(j.is_object() && j.contains("ts") && j.contains("level") && j.contains("msg")) << l;
		saw_ship = saw_ship || (j["msg"].get<std::string>().find("Ship (Task)") != std::string::npos &&
								j.value("state", json()) == "Ship");
		n++;
	}
	EXPECT_GT(n, 5) << err_;
	EXPECT_TRUE(saw_ship) << err_;
	std::tie(rc, out) = run({"examples/order.json", "--input", "@" + dir_ + "/missing.json"});
	EXPECT_EQ(rc, 2) << err_;
	EXPECT_NE(err_.find("--input " + dir_ + "/missing.json: cannot read it"), std::string::npos) << err_;
}

TEST_F(Run, FailedInstanceExitsOneAndRefusedDefinitionExitsTwo) {
	auto [rc, out] = run({"examples/order.json", "--input", R"({"items":[]})", "--json"});
	EXPECT_EQ(rc, 1) << out << err_;
	EXPECT_EQ(last_line(out), (json{{"status", "failed"}, {"output", nullptr}, {"error", "order.Empty"},
									{"cause", "the order has no items"}}));

	std::ofstream(dir_ + "/bad.json") << R"({"StartAt":"Nope","States":{"A":{"Type":"Pass","End":true}}})";
	std::tie(rc, out) = run({dir_ + "/bad.json"});
	EXPECT_EQ(rc, 2) << out << err_;
	EXPECT_NE(err_.find("StartAt"), std::string::npos) << err_;

	std::tie(rc, out) = run({"examples/order.json", "--input", "{not json"});
	EXPECT_EQ(rc, 2);
	EXPECT_NE(err_.find("--input"), std::string::npos) << err_;
}

TEST_F(Run, CommandHandlerExampleWithItsHandlersFile) {
	auto [rc, out] = run({"examples/order-handler.json", "--handlers", "examples/handlers.json", "--input",
						  R"({"items":[{"sku":"a","qty":1}]})", "--json"});
	ASSERT_EQ(rc, 0) << out << err_;
	json r = last_line(out);
	EXPECT_EQ(r["status"], "succeeded");
	EXPECT_EQ(r["output"]["status"], "shipped");
	EXPECT_EQ(r["output"]["reservation"].get<std::string>().rfind("R-", 0), 0u) << r.dump();
}


// Composition through the binary: a Map (two at a time) of Parallels, whose
// children the in-process worker claims like any task.
TEST_F(Run, ParallelInMapExampleSucceeds) {
	auto [rc, out] = run({"examples/fanout.json", "--input",
						  R"({"orders":[{"sku":"a","qty":2},{"sku":"b","qty":1},{"sku":"c","qty":5}]})", "--json"});
	ASSERT_EQ(rc, 0) << out << err_;
	EXPECT_EQ(last_line(out)["output"], json::parse(R"({"count":3,"lines":[
		{"position":0,"qty":2,"sku":"a"},{"position":1,"qty":1,"sku":"b"},{"position":2,"qty":5,"sku":"c"}]})"));
	for (const char *s : {"EachOrder (Map)", "children_started", "children_done", "Summary (Pass)"})
		EXPECT_NE(err_.find(s), std::string::npos) << s << "\n" << err_;
}

// Between children_started and children_done, `run` shows the fan-out's
// progress; not on a terminal (stderr is a file here): plain lines.  The
// first poll comes right after the start, while the first item sleeps.
TEST_F(Run, AMapShowsItsProgressAsPlainLines) {
	std::ofstream(dir_ + "/map.json") << R"({"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,
	  "ItemSelector":{"Seconds":1},
	  "ItemProcessor":{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"genroc:sleep","End":true}}},
	  "End":true}}})";
	auto [rc, out] = run({dir_ + "/map.json", "--input", "[1,2,3]", "--json"});
	ASSERT_EQ(rc, 0) << out << err_;
	EXPECT_EQ(last_line(out)["status"], "succeeded");
	const auto started = err_.find("children_started"), first = err_.find("M: 0/3 done, 1 running, 2 waiting\n"),
			   done = err_.find("children_done");
	ASSERT_NE(first, std::string::npos) << err_;
	EXPECT_LT(started, first) << err_;
	EXPECT_LT(first, done) << err_;
	EXPECT_EQ(err_.find('\r'), std::string::npos) << "no terminal, no carriage returns";
}

// On a terminal (a pty from script(1), util-linux) the progress is one line
// rewritten in place: a carriage return and erase-line before each, and the
// next log entry takes the line over.
TEST_F(Run, OnATerminalAMapsProgressIsOneLineRewrittenInPlace) {
	std::ofstream(dir_ + "/map.json") << R"({"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1,
	  "ItemSelector":{"Seconds":1},
	  "ItemProcessor":{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"genroc:sleep","End":true}}},
	  "End":true}}})";
	const std::string inner = "'" + genroc_bin() + "' run '" + dir_ + "/map.json' --input '[1,2]' --database '" +
							  dir_ + "/tty.db'";
	const std::string out_path = dir_ + "/tty.out";
	const int st = std::system(("timeout 60 script -qec \"" + inner + "\" /dev/null >'" + out_path + "' 2>&1 </dev/null").c_str());
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
	std::ifstream in(out_path);
	std::stringstream ss;
	ss << in.rdbuf();
	const std::string out = ss.str();
	const auto first = out.find("\r\033[K[");
	ASSERT_NE(first, std::string::npos) << out;
	EXPECT_NE(out.find("]    M: 0/2 done, 1 running, 1 waiting\r\033[K[", first), std::string::npos) << out;
	EXPECT_NE(out.find("M: children_done", first), std::string::npos) << out;
	EXPECT_EQ(out.find("waiting\r\n"), std::string::npos) << "a progress line never ends a line: " << out;
}

TEST_F(Run, CommitDelayOnSqliteIsRefused) {
	auto [rc, out] = run({"examples/order.json", "--pg-commit-delay", "100"});
	EXPECT_EQ(rc, 1) << out << err_;
	EXPECT_NE(err_.find("refusing to start"), std::string::npos) << err_;
	EXPECT_EQ(err_.find("instance 1"), std::string::npos) << "it started an instance: " << err_;
}

// ---------------------------------------------------------------- database outage

// A cluster of this test's own (stopping the shared one would break the
// other tests): the worker must ride out a PostgreSQL stop and start.
// Step (handler:step sleeping `sleep` seconds), then Effect (handler:record):
// a result the worker has to hold through trouble, and an effect counted.
int64_t start_held_result_process(Store &s, const std::string &name, int sleep) {
	json def = {{"StartAt", "Step"},
				{"States",
				 {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", {{"sleep", sleep}}},
							{"Next", "Effect"}}},
				  {"Effect", {{"Type", "Task"}, {"Resource", "handler:record"}, {"Next", "Done"}}},
				  {"Done", {{"Type", "Succeed"}}}}}};
	s.define(name, def);
	return s.start(name, json::object(), json::object()).instance_id;
}

// A worker that held a task's result through trouble: the instance ends
// succeeded, the task ran once and its effect happened once.
class HeldResult : public WorkerTest {
  protected:
	void expect_held_result_landed_once(int64_t id, Proc &a) {
		json inst = wait_status(id, {"succeeded", "failed"}, 40s);
		ASSERT_EQ(inst["status"], "succeeded") << inst.dump() << "\n" << a.log();
		EXPECT_EQ(runs_of(dir_, "Step").size(), 1u);
		EXPECT_EQ(read_lines(dir_ + "/effects.log").size(), 1u);
	}
};

class Outage : public HeldResult {
  protected:
	void SetUp() override {
		HeldResult::SetUp();
		auto &pg = PgServer::get();	 // also proves the extension is installed
		if (pg.admin_url().empty() || !pg.skip_reason().empty()) {
			if (std::getenv("GENROC_TEST_REQUIRE_PG") && std::string(std::getenv("GENROC_TEST_REQUIRE_PG")) == "1")
				FAIL() << pg.skip_reason();
			GTEST_SKIP() << pg.skip_reason();
		}
		cluster_ = dir_ + "/pg";
		FILE *p = ::popen(("bash '" + source_dir() + "/test/pgcluster.sh' start '" + cluster_ + "' 2>&1").c_str(), "r");
		ASSERT_NE(p, nullptr);
		std::string url;
		char line[4096];
		while (std::fgets(line, sizeof line, p)) {
			std::string l = line;
			const std::string key = "export GENROC_TEST_PG_URL='";
			if (l.rfind(key, 0) == 0) url = l.substr(key.size(), l.find('\'', key.size()) - key.size());
		}
		ASSERT_EQ(::pclose(p), 0);
		ASSERT_FALSE(url.empty());
		pg_exec(with_database(url, "postgres"), "CREATE DATABASE outage");
		db_url_ = with_database(url, "outage");
		pg_exec(db_url_, "CREATE EXTENSION genroc");
		standard_handlers();
	}
	void TearDown() override {
		procs_.clear();
		std::string cmd = "bash '" + source_dir() + "/test/pgcluster.sh' stop '" + cluster_ + "' >/dev/null 2>&1";
		int ignored = std::system(cmd.c_str());
		(void)ignored;
		HeldResult::TearDown();
	}
	// pg_ctl as the cluster's owner (pgcluster.sh runs it as "postgres" under root).
	int pg_ctl(const std::string &args) {
		std::string owner = ::getuid() == 0 ? "runuser -u postgres -- " : "";
		std::string cmd = owner + "\"${PGBIN:-$(pg_config --bindir)}/pg_ctl\" -D '" + cluster_ + "/data' -l '" + cluster_ +
						  "/server.log' -w -t 60 " + args + " >/dev/null 2>&1";
		return std::system(cmd.c_str());
	}
	std::string cluster_;
};

TEST_F(Outage, WorkerRidesOutADatabaseRestartAndReportsTheResultItHeld) {
	// A 60s lease: the task's lease cannot lapse during the outage, so the
	// result the worker holds must be accepted once the database is back.
	auto a = worker("wa", {"--lease-duration", "60s"});
	const int64_t id = start_held_result_process(*store(), "outage", 3);
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	ASSERT_EQ(pg_ctl("-m fast stop"), 0);
	ASSERT_TRUE(eventually([&] { return a->log().find("database unreachable") != std::string::npos; }, 20s))
		<< a->log();
	// Let the handler finish while the database is away: the worker holds its result.
	ASSERT_TRUE(eventually([&] { return a->log().find("holding the task result") != std::string::npos; }, 20s))
		<< a->log();
	EXPECT_TRUE(a->running());
	ASSERT_EQ(pg_ctl("start"), 0);
	expect_held_result_landed_once(id, *a);
	// The main loop says so at its next claim, after its back-off: the
	// report itself may have handed the next task back before that.
	EXPECT_TRUE(eventually([&] { return a->log().find("database reachable again") != std::string::npos; }, 20s))
		<< a->log();
	a->signal(SIGTERM);
	EXPECT_EQ(exit_code(a->wait(15s)), 0) << a->log();
}

// A worker started while its database is down waits for it (it does not
// refuse to start on the queue configuration it writes first), then runs
// what is there once the database is back; a stop signal while it waits
// ends it cleanly.
TEST_F(Outage, AWorkerStartedWhileTheDatabaseIsDownWaitsForIt) {
	const std::string url = binary_url(db_url_, "worker");  // the role, made while the database is up
	ASSERT_EQ(pg_ctl("-m fast stop"), 0);
	auto a = worker_at(url, "wa");
	ASSERT_TRUE(eventually([&] { return a->log().find("waiting for the database") != std::string::npos; }, 20s))
		<< a->log();
	EXPECT_TRUE(a->running()) << a->log();
	ASSERT_EQ(pg_ctl("start"), 0);
	const int64_t id = start_held_result_process(*store(), "late", 0);
	expect_held_result_landed_once(id, *a);
	a->signal(SIGTERM);
	EXPECT_EQ(exit_code(a->wait(15s)), 0) << a->log();

	ASSERT_EQ(pg_ctl("-m fast stop"), 0);
	auto b = worker_at(url, "wb");
	ASSERT_TRUE(eventually([&] { return b->log().find("waiting for the database") != std::string::npos; }, 20s))
		<< b->log();
	b->signal(SIGTERM);
	EXPECT_EQ(exit_code(b->wait(15s)), 0) << b->log();
}

// The start checks run once the database answers, not skipped because it
// did not: a worker whose role lacks genroc_worker, started while the
// database is down, waits, then refuses to start (exit 1, naming the grant)
// when the database is back, as it would have with the database up.
TEST_F(Outage, AWorkerThatWaitedForTheDatabaseStillChecksItsRole) {
	const std::string url = binary_url(db_url_, "none");
	ASSERT_EQ(pg_ctl("-m fast stop"), 0);
	auto a = worker_at(url, "wn");
	ASSERT_TRUE(eventually([&] { return a->log().find("waiting for the database") != std::string::npos; }, 20s))
		<< a->log();
	EXPECT_TRUE(a->running()) << a->log();
	ASSERT_EQ(pg_ctl("start"), 0);
	EXPECT_EQ(exit_code(a->wait(30s)), 1) << a->log();
	EXPECT_NE(a->log().find("lacks what `genroc worker` needs"), std::string::npos) << a->log();
}

// A SQLite file whose write lock another process holds past busy_timeout
// (10 s) when the worker reports: the worker holds the result and reports it
// again once the lock is free.  The task ran once and its result landed once
// (the report used to be dropped: the task ran again after its lease lapsed).
TEST_F(HeldResult, AReportThatFindsTheSqliteFileLockedIsHeldAndSentAgain) {
	db_url_ = dir_ + "/locked.db";
	standard_handlers();
	const int64_t id = start_held_result_process(*store(), "locked", 2);
	// A 60 s lease: it cannot lapse while the file is locked, so the held
	// result must be the one that lands.
	auto a = worker("wa", {"--lease-duration", "60s"});
	ASSERT_TRUE(eventually([&] { return runs_of(dir_, "Step").size() == 1; }, 20s)) << a->log();
	sqlite3 *db = nullptr;
	ASSERT_EQ(sqlite3_open(db_url_.c_str(), &db), SQLITE_OK);
	std::unique_ptr<sqlite3, int (*)(sqlite3 *)> hold(db, sqlite3_close);
	ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
	ASSERT_TRUE(eventually([&] { return a->log().find("database busy; holding the task result") != std::string::npos; },
						   40s))
		<< a->log();
	EXPECT_TRUE(a->running());
	ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
	hold.reset();
	expect_held_result_landed_once(id, *a);
	EXPECT_EQ(a->log().find("cannot report the task result"), std::string::npos) << a->log();
	a->signal(SIGTERM);
	EXPECT_EQ(exit_code(a->wait(15s)), 0) << a->log();
}

}  // namespace
}  // namespace genroc::e2e_worker
