// e2e_http_pgdown_test.cpp — /healthz against a PostgreSQL that dies and
// comes back: 200, then 503 while the server is stopped (pg_ctl stop -m
// immediate, as a crash), then 200 again once it restarts, with no restart of
// the API.  The test starts its own cluster (test/pgcluster.sh) so that
// stopping it disturbs no other suite.
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

#include "e2e_http_support.hpp"
#include "http_api.hpp"

namespace genroc::e2e::pgdown_test {
namespace {

const std::string kSource = GENROC_SOURCE_DIR;

// Runs a shell command line; returns its exit status and stdout.
Output shell(const std::string &line, int timeout_s = 120) { return run({"/bin/bash", "-c", line}, {}, timeout_s); }

// The value of `export NAME='value'` in pgcluster.sh's output.
std::string exported(const std::string &text, const std::string &name) {
	std::istringstream in(text);
	std::string line, prefix = "export " + name + "='";
	while (std::getline(in, line))
		if (line.rfind(prefix, 0) == 0 && line.size() > prefix.size())
			return line.substr(prefix.size(), line.size() - prefix.size() - 1);
	return "";
}

class PgDown : public ::testing::Test {
  protected:
	void SetUp() override {
		if (shell("command -v pg_config >/dev/null").exit_code != 0) {
			if (env("GENROC_TEST_REQUIRE_PG") == "1") FAIL() << "pg_config not found";
			GTEST_SKIP() << "no PostgreSQL installation (pg_config)";
		}
		auto o = shell("bash '" + kSource + "/test/pgcluster.sh' start");
		ASSERT_EQ(o.exit_code, 0) << o.err;
		dir_ = exported(o.out, "GENROC_PGDIR");
		pgdata_ = exported(o.out, "GENROC_PGDATA");
		port_ = exported(o.out, "PGPORT");
		ASSERT_FALSE(dir_.empty() || pgdata_.empty() || port_.empty()) << o.out;
	}

	void TearDown() override {
		if (!dir_.empty()) shell("bash '" + kSource + "/test/pgcluster.sh' stop '" + dir_ + "'");
	}

	// pg_ctl as the cluster's owner (pgcluster.sh runs it as postgres under root).
	Output pg_ctl(const std::string &args) {
		std::string as = getuid() == 0 ? "runuser -u postgres -- " : "";
		return shell(as + "\"${PGBIN:-$(pg_config --bindir)}/pg_ctl\" -D '" + pgdata_ + "' " + args);
	}

	std::string dir_, pgdata_, port_;
};

TEST_F(PgDown, HealthzIs503WhileTheDatabaseIsDownAnd200AfterItRestarts) {
	const std::string url = "postgresql://postgres@127.0.0.1:" + port_ + "/postgres?connect_timeout=5";
	ApiOptions opts;
	opts.listen = "127.0.0.1:0";
	HealthInfo h;
	h.worker_id = "w-pgdown";
	auto server = start_api(opts, [url] { return open_store(url); }, h);
	httplib::Client client("127.0.0.1", server->port());
	client.set_read_timeout(30, 0);

	auto health = [&](int &status) {
		auto r = client.Get("/healthz");
		status = r ? r->status : 0;
		return r ? json::parse(r->body, nullptr, false) : json();
	};

	int status = 0;
	json b = health(status);
	EXPECT_EQ(status, 200) << b;
	EXPECT_EQ(b["status"], "ok");
	EXPECT_EQ(b["database"], "postgres");

	auto o = pg_ctl("-m immediate -w stop");
	ASSERT_EQ(o.exit_code, 0) << o.err;

	b = health(status);
	EXPECT_EQ(status, 503) << b;
	EXPECT_EQ(b["status"], "unavailable");
	EXPECT_EQ(b["database"], "postgres");
	EXPECT_EQ(b["worker_id"], "w-pgdown");
	// A second probe (the pooled connection is gone now) answers the same.
	health(status);
	EXPECT_EQ(status, 503);
	// An API call meanwhile is a 503 with a connection SQLSTATE, not a 500.
	auto r = client.Get("/api/definitions");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 503) << r->body;
	EXPECT_EQ(json::parse(r->body)["error"]["sqlstate"].get<std::string>().substr(0, 2), "08") << r->body;
	// ... whose body says no more than that: libpq's text (the server's
	// address, socket path, errno) stays in the server's log.
	EXPECT_EQ(json::parse(r->body)["error"]["message"], "the database is not available; try again") << r->body;
	EXPECT_EQ(r->body.find("server"), std::string::npos) << r->body;

	o = pg_ctl("-l '" + dir_ + "/server.log' -w -t 60 start");
	ASSERT_EQ(o.exit_code, 0) << o.err;

	// pg_ctl -w returned once the server accepts connections; allow a bounded
	// number of probes for the API to notice.
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
	do {
		b = health(status);
		if (status == 200) break;
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	} while (std::chrono::steady_clock::now() < deadline);
	EXPECT_EQ(status, 200) << b;
	EXPECT_EQ(b["status"], "ok");
	server->stop();
}

// A crash restart (a server process killed: the postmaster ends every
// session) leaves the API's pooled connections stale.  Their next calls are
// a lost connection, 503 with a class 08 or 57P0x SQLSTATE, never a 500
// XX000 with an empty message; then the API serves again.
TEST_F(PgDown, StalePooledConnectionsAfterACrashRestartAre503) {
	const std::string url = "postgresql://postgres@127.0.0.1:" + port_ + "/postgres?connect_timeout=5";
	ApiOptions opts;
	opts.listen = "127.0.0.1:0";
	auto server = start_api(opts, [url] { return open_store(url); }, HealthInfo{});
	httplib::Client client("127.0.0.1", server->port());
	client.set_read_timeout(30, 0);
	auto r = client.Get("/healthz");
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 200) << r->body;

	// SIGKILL to the checkpointer: the postmaster restarts every process.
	auto o = shell("kill -9 $(ps -o pid= -o args= --ppid \"$(head -1 '" + pgdata_ +
				   "/postmaster.pid')\" | awk '/checkpointer/ {print $1}')");
	ASSERT_EQ(o.exit_code, 0) << o.err;

	// Every answer until /healthz is 200 again: no 500 without a SQLSTATE.
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
	int healthy = 0;
	std::vector<std::string> answers;
	do {
		r = client.Get("/api/definitions");
		ASSERT_TRUE(r);
		json b = json::parse(r->body, nullptr, false);
		const std::string state = b.is_object() && b.contains("error") ? b["error"].value("sqlstate", "") : "";
		answers.push_back(std::to_string(r->status) + " " + state);
		EXPECT_NE(state, "XX000") << r->body;
		if (r->status == 503) {
			EXPECT_TRUE(state.rfind("08", 0) == 0 || state.rfind("57P0", 0) == 0) << r->body;
		}
		auto h = client.Get("/healthz");
		healthy = h ? h->status : 0;
		if (healthy != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
	} while (healthy != 200 && std::chrono::steady_clock::now() < deadline);
	EXPECT_EQ(healthy, 200);
	std::string seen;
	for (const auto &a : answers) seen += a + "; ";
	EXPECT_EQ(answers.front().substr(0, 3), "503") << seen;
	server->stop();
}

}  // namespace
}  // namespace genroc::e2e::pgdown_test
