// e2e_worker_support.hpp — what the genroc-binary end-to-end tests share:
// a throwaway PostgreSQL (reused from GENROC_TEST_PG_URL + GENROC_TEST_TEMPLATE,
// or started here with test/pgcluster.sh), a fresh database per test, real
// genroc processes with their logs, and bounded waits on real events.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pg_test.hpp"
#include "store.hpp"

namespace genroc::e2e_worker {

using namespace std::chrono_literals;

// The server for the whole test binary.  Empty url() when there is none
// (the reason is in skip_reason()).
class PgServer {
  public:
	static PgServer &get();
	const std::string &admin_url() const { return admin_url_; }	// .../postgres
	const std::string &template_db() const { return template_; }
	const std::string &skip_reason() const { return skip_; }
	void stop();	// the cluster this binary started, if any

  private:
	void start();
	std::string admin_url_, template_, skip_, cluster_dir_;
	bool started_ = false;
};

using genroc::test::pg_exec;
using genroc::test::with_database;
using genroc::test::binary_url;

// A genroc child process; stdout and stderr go to a log file.  Killed with
// SIGKILL if still running when destroyed.
class Proc {
  public:
	Proc(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env,
		 const std::string &log_path);
	~Proc();
	pid_t pid() const { return pid_; }
	void signal(int sig);
	// The wait status once it ended within `timeout`, else nullopt.
	std::optional<int> wait(std::chrono::milliseconds timeout);
	bool running();
	std::string log() const;
	const std::string &log_path() const { return log_path_; }

  private:
	pid_t pid_ = -1;
	std::optional<int> status_;
	std::string log_path_;
};

// The exit code of a wait status from Proc::wait, or -1 (no status, or ended
// by a signal).
int exit_code(std::optional<int> status);

// Polls `pred` every 50ms until it holds or `timeout` passes.
bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds timeout);

std::vector<std::string> read_lines(const std::string &path);

// The port a process listening on 127.0.0.1:0 logged with `message` (e.g.
// "HTTP API listening"), or 0 while it has not.
int port_in_log(const Proc &p, const std::string &message);
std::string genroc_bin();
std::string source_dir();

// Base fixture: a temporary folder, and on PostgreSQL a fresh database.
class WorkerTest : public ::testing::Test {
  protected:
	void SetUp() override;
	void TearDown() override;

	// Needs PostgreSQL: skips (or fails with GENROC_TEST_REQUIRE_PG=1) without it.
	void use_postgres();
	// "postgres": use_postgres(); otherwise a SQLite file in dir_.
	void use_store(const std::string &store);
	// Writes an executable script into dir_ and returns its path.
	std::string script(const std::string &name, const std::string &body);
	// A handlers file for the scripts name -> path (sha256 computed here).
	std::string handlers_file(const std::map<std::string, std::string> &scripts);
	// `genroc worker` on this test's database with 2s leases; extra flags last.
	std::unique_ptr<Proc> worker(const std::string &id, const std::vector<std::string> &extra = {},
								 std::map<std::string, std::string> env = {});
	// The same, connecting with `url` as it is (binary_url's role made
	// before: worker() makes it, which needs the database up).
	std::unique_ptr<Proc> worker_at(const std::string &url, const std::string &id,
									const std::vector<std::string> &extra = {},
									std::map<std::string, std::string> env = {});
	std::unique_ptr<Store> store();
	// Waits until the instance has one of `statuses`; returns the instance.
	json wait_status(int64_t id, const std::vector<std::string> &statuses, std::chrono::milliseconds timeout);
	// The step handler: appends "WHO INSTANCE STATE PID" to runs.log, sleeps
	// input.sleep seconds (only on the first run when input.sleep_once),
	// prints {"who","state"}.  The record handler appends to effects.log.
	void standard_handlers();

	std::string dir_;
	std::string db_url_;
	std::string db_name_;
	std::string handlers_;
	std::vector<std::unique_ptr<Proc>> procs_;
};

// A test run on each store (its parameter: "postgres" or "sqlite"), with the
// standard handlers.
class EachStoreWorkerTest : public WorkerTest, public ::testing::WithParamInterface<std::string> {
  protected:
	void SetUp() override {
		WorkerTest::SetUp();
		use_store(GetParam());
		if (IsSkipped() || HasFatalFailure()) return;
		standard_handlers();
	}
};

}  // namespace genroc::e2e_worker
