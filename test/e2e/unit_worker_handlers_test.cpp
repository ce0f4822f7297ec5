// unit_worker_handlers_test.cpp — built-ins, the registry, command handlers
// (exit codes, JSON errors, timeouts killing the process group, cancel) and
// the handlers file (sha256 refusal).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "handlers.hpp"

namespace genroc {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Handlers : public ::testing::Test {
  protected:
	void SetUp() override {
		char tmpl[] = "/tmp/genroc-unit-handlers.XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
	}
	void TearDown() override { fs::remove_all(dir_); }

	// Writes an executable shell script and returns its path.
	std::string script(const std::string &name, const std::string &body) {
		std::string path = dir_ + "/" + name;
		std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
		::chmod(path.c_str(), 0755);
		return path;
	}
	CommandSpec spec(const std::string &path) {
		CommandSpec s;
		s.name = "t";
		s.argv = {path};
		return s;
	}
	std::string dir_;
	TaskContext ctx_;
};

TEST_F(Handlers, BuiltinsNoopFailSleep) {
	auto reg = HandlerRegistry::with_builtins();
	json in = {{"a", 1}};
	auto r = reg.run("genroc:noop", in, ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::succeeded);
	EXPECT_EQ(r.output, in);

	r = reg.run("genroc:fail", {{"Error", "my.Error"}, {"Cause", "because"}}, ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "my.Error");
	EXPECT_EQ(r.cause, "because");
	r = reg.run("genroc:fail", json::object(), ctx_);
	EXPECT_EQ(r.error, "States.TaskFailed");

	r = reg.run("genroc:sleep", {{"Seconds", 0.05}}, ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::succeeded);
	EXPECT_EQ(r.output["Seconds"], 0.05);
	r = reg.run("genroc:sleep", {{"Seconds", "soon"}}, ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_NE(r.cause.find("Seconds"), std::string::npos);
}

TEST_F(Handlers, SleepIsCancellableAndTimesOut) {
	auto reg = HandlerRegistry::with_builtins();
	CancelToken cancel;
	TaskContext ctx;
	ctx.cancel = &cancel;
	std::thread t([&] {
		std::this_thread::sleep_for(50ms);
		cancel.cancel();
	});
	// An hour-long sleep that returns at all has been cancelled.
	auto r = reg.run("genroc:sleep", {{"Seconds", 3600}}, ctx);
	t.join();
	EXPECT_EQ(r.kind, TaskResult::Kind::abandoned);

	TaskContext timed;
	timed.timeout = 50ms;
	r = reg.run("genroc:sleep", {{"Seconds", 3600}}, timed);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "States.Timeout");
}

TEST_F(Handlers, MissingHandlerAndInProcessHandlers) {
	auto reg = HandlerRegistry::with_builtins();
	auto r = reg.run("handler:nope", json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "genroc.HandlerMissing");
	EXPECT_NE(r.cause.find("handler:nope"), std::string::npos);

	reg.add("double", [](const json &in, const TaskContext &ctx) {
		return TaskResult::success({{"n", in["n"].get<int>() * 2}, {"instance", ctx.instance_id}});
	}, "math");
	reg.add("throws", [](const json &, const TaskContext &) -> TaskResult {
		throw std::runtime_error("boom");
	});
	TaskContext ctx;
	ctx.instance_id = 7;
	r = reg.run("handler:double", {{"n", 21}}, ctx);
	EXPECT_EQ(r.output, (json{{"n", 42}, {"instance", 7}}));
	r = reg.run("handler:throws", json::object(), ctx);
	EXPECT_EQ(r.error, "States.TaskFailed");
	EXPECT_NE(r.cause.find("boom"), std::string::npos);
	EXPECT_EQ(reg.queues(), std::vector<std::string>{"math"});
	EXPECT_EQ(reg.names(), (std::vector<std::string>{"double", "throws"}));
}

TEST_F(Handlers, CommandEchoesInputAndSeesTaskEnvironment) {
	auto path = script("echo.sh", "cat");
	json in = {{"items", {1, 2, 3}}, {"name", "x"}};
	auto r = run_command(spec(path), in, ctx_);
	ASSERT_EQ(r.kind, TaskResult::Kind::succeeded) << r.error << " " << r.cause;
	EXPECT_EQ(r.output, in);

	auto env = script("env.sh", "printf '{\"id\": %s, \"state\": \"%s\", \"attempt\": %s}' "
								"\"$GENROC_INSTANCE_ID\" \"$GENROC_STATE\" \"$GENROC_ATTEMPT\"");
	TaskContext ctx;
	ctx.instance_id = 42;
	ctx.state = "Ship";
	ctx.attempt = 2;
	r = run_command(spec(env), json::object(), ctx);
	EXPECT_EQ(r.output, (json{{"id", 42}, {"state", "Ship"}, {"attempt", 2}}));
}

TEST_F(Handlers, CommandExitCodesAndOutput) {
	auto r = run_command(spec(script("empty.sh", "exit 0")), json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::succeeded);
	EXPECT_TRUE(r.output.is_null());

	r = run_command(spec(script("notjson.sh", "echo hello")), json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "States.TaskFailed");
	EXPECT_NE(r.cause.find("not JSON"), std::string::npos) << r.cause;

	r = run_command(spec(script("jsonerr.sh",
								"echo '{\"Error\": \"stock.Empty\", \"Cause\": \"none left\"}'; exit 3")),
					json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "stock.Empty");
	EXPECT_EQ(r.cause, "none left");

	// No JSON error object: States.TaskFailed with the END of stderr.
	r = run_command(spec(script("stderr.sh",
								"i=0; while [ $i -lt 2000 ]; do echo \"line $i of the log\" >&2; i=$((i+1)); done; "
								"echo 'the last words' >&2; exit 1")),
					json::object(), ctx_);
	EXPECT_EQ(r.error, "States.TaskFailed");
	EXPECT_LE(r.cause.size(), 4096u);
	EXPECT_NE(r.cause.find("the last words"), std::string::npos);
	EXPECT_EQ(r.cause.find("line 0 of"), std::string::npos);

	r = run_command(spec(script("silent.sh", "exit 4")), json::object(), ctx_);
	EXPECT_EQ(r.error, "States.TaskFailed");
	EXPECT_NE(r.cause.find("exit status 4"), std::string::npos) << r.cause;

	r = run_command(spec(dir_ + "/does-not-exist"), json::object(), ctx_);
	EXPECT_EQ(r.error, "States.TaskFailed");
	EXPECT_NE(r.cause.find("cannot run"), std::string::npos) << r.cause;

	// A command that never reads its (large) input must not block or kill us.
	json big = json::array();
	for (int i = 0; i < 100000; ++i) big.push_back(i);
	r = run_command(spec(script("noread.sh", "echo '{\"ok\": true}'")), big, ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::succeeded) << r.cause;
}

// Output nested past the JSON depth limit fails the task (copying or dumping
// it would recurse once per level and could overflow the worker's stack).
TEST_F(Handlers, OutputNestedTooDeepFailsTheTask) {
	auto deep = [](int n) { return "printf '%0.s[' $(seq " + std::to_string(n) + "); printf 1; printf '%0.s]' $(seq " +
								  std::to_string(n) + ")"; };
	auto r = run_command(spec(script("deep.sh", deep(100000))), json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "States.DataLimitExceeded");
	EXPECT_NE(r.cause.find("json_depth"), std::string::npos) << r.cause;

	r = run_command(spec(script("deepfail.sh", deep(100000) + "; exit 3")), json::object(), ctx_);
	EXPECT_EQ(r.error, "States.TaskFailed");  // no Error/Cause read from it

	r = run_command(spec(script("shallow.sh", deep(500))), json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::succeeded) << r.cause;
}

bool gone(pid_t pid) {
	// Dead, or a zombie waiting for its new parent: not running either way.
	if (::kill(pid, 0) != 0) return true;
	std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
	std::string s;
	std::getline(st, s);
	auto close = s.rfind(')');
	return close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z';
}

bool wait_gone(pid_t pid) {
	for (auto deadline = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < deadline;
		 std::this_thread::sleep_for(20ms))
		if (gone(pid)) return true;
	return false;
}

TEST_F(Handlers, TimeoutKillsTheWholeProcessGroup) {
	const std::string pidfile = dir_ + "/child.pid";
	auto path = script("slow.sh", "sleep 300 & echo $! > " + pidfile + "; sleep 300");
	CommandSpec s = spec(path);
	TaskContext ctx;
	ctx.timeout = 300ms;
	auto r = run_command(s, json::object(), ctx);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_EQ(r.error, "States.Timeout");
	EXPECT_NE(r.cause.find("300ms"), std::string::npos) << r.cause;
	pid_t child = 0;
	std::ifstream(pidfile) >> child;
	ASSERT_GT(child, 0);
	EXPECT_TRUE(wait_gone(child)) << "background child " << child << " survived the timeout";
}

TEST_F(Handlers, CancelKillsTheCommandAndAbandonsTheTask) {
	const std::string pidfile = dir_ + "/child.pid";
	auto path = script("slow.sh", "sleep 300 & echo $! > " + pidfile + "; sleep 300");
	CancelToken cancel;
	TaskContext ctx;
	ctx.cancel = &cancel;
	std::thread t([&] {
		for (int i = 0; i < 250 && !fs::exists(pidfile); ++i) std::this_thread::sleep_for(20ms);
		cancel.cancel();
	});
	auto r = run_command(spec(path), json::object(), ctx);
	t.join();
	EXPECT_EQ(r.kind, TaskResult::Kind::abandoned);
	pid_t child = 0;
	std::ifstream(pidfile) >> child;
	ASSERT_GT(child, 0);
	EXPECT_TRUE(wait_gone(child));
}

TEST_F(Handlers, Sha256OfAFile) {
	std::ofstream(dir_ + "/abc") << "abc";
	EXPECT_EQ(sha256_file(dir_ + "/abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	EXPECT_THROW(sha256_file(dir_ + "/missing"), std::runtime_error);
}

TEST_F(Handlers, HandlersFileChecksTheExecutableHash) {
	auto path = script("reserve.sh", "echo '{\"reserved\": true}'");
	const std::string good = sha256_file(path);
	auto write = [&](const json &j) {
		std::ofstream(dir_ + "/handlers.json") << j.dump();
		return dir_ + "/handlers.json";
	};
	// Relative to the handlers file, not to the current directory.
	HandlerRegistry reg = HandlerRegistry::with_builtins();
	reg.load_file(write({{"handlers", {{"reserve", {{"command", {"./reserve.sh"}}, {"sha256", good},
											   {"timeout", "5s"}, {"queue", "stock"}}}}}}));
	auto r = reg.run("handler:reserve", json::object(), ctx_);
	EXPECT_EQ(r.output, (json{{"reserved", true}}));
	EXPECT_EQ(reg.queues(), std::vector<std::string>{"stock"});

	auto refused = [&](const json &j, const std::string &needle) {
		HandlerRegistry fresh = HandlerRegistry::with_builtins();
		try {
			fresh.load_file(write(j));
		} catch (const std::runtime_error &e) {
			EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
			return;
		}
		ADD_FAILURE() << "accepted " << j.dump();
	};
	std::string wrong(64, '0');
	refused({{"handlers", {{"reserve", {{"command", {path}}, {"sha256", wrong}}}}}}, "handler \"reserve\"");
	refused({{"handlers", {{"reserve", {{"command", {path}}, {"sha256", wrong}}}}}}, "sha256");
	refused({{"handlers", {{"reserve", {{"command", {path}}}}}}}, "sha256 is required");
	refused({{"handlers", {{"reserve", {{"command", {path}}, {"sha256", good}, {"retries", 3}}}}}},
			"unknown key \"retries\"");
	refused({{"handlers", {{"reserve", {{"command", {path}}, {"sha256", good}, {"timeout", "10"}}}}}}, "timeout");
	refused({{"handlers", {{"reserve", {{"command", {dir_ + "/nope"}}, {"sha256", good}}}}}}, "no executable");
	refused({{"handler", json::object()}}, "unknown key");

	// Swapped after start: refused at run time too.
	std::ofstream(path) << "#!/bin/sh\necho '{\"reserved\": \"twice\"}'\n";
	r = reg.run("handler:reserve", json::object(), ctx_);
	EXPECT_EQ(r.kind, TaskResult::Kind::failed);
	EXPECT_NE(r.cause.find("sha256"), std::string::npos) << r.cause;
}

TEST_F(Handlers, HandlerTimeoutCapsTheTaskTimeout) {
	auto path = script("slow.sh", "sleep 300");
	std::ofstream(dir_ + "/h.json") << json{{"handlers", {{"slow", {{"command", {path}}, {"sha256", sha256_file(path)},
																	{"timeout", "200ms"}}}}}}
											.dump();
	HandlerRegistry reg;
	reg.load_file(dir_ + "/h.json");
	TaskContext ctx;
	ctx.timeout = std::chrono::seconds(60);	 // TimeoutSeconds longer than the handler's
	auto t0 = std::chrono::steady_clock::now();
	auto r = reg.run("handler:slow", json::object(), ctx);
	EXPECT_EQ(r.error, "States.Timeout");
	EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
}

}  // namespace
}  // namespace genroc
