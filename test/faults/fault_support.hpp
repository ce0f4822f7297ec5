// fault_support.hpp — what the fault tests share: a database on
// either store for real genroc processes (the e2e worker fixture), handlers
// that record their effects, a load driver that remembers only what was
// acknowledged, the invariants asserted after every test, and FAULTS=long.
//
// Bounded: the default run keeps the whole fault suite within a few minutes
// on two cores; FAULTS=long runs more rounds and more load.  Every wait is a
// poll with a generous deadline, never a timing assertion.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../e2e/e2e_worker_support.hpp"
#include "invariants.hpp"

namespace genroc::faults {

using e2e_worker::eventually;
using e2e_worker::Proc;
using e2e_worker::read_lines;
using namespace std::chrono_literals;

// FAULTS=long in the environment.
bool long_run();
// `quick` in the default run, `lots` with FAULTS=long.
int scaled(int quick, int lots);

// A two-task job: "Step" (a command that may run again after a crash) then
// "Once" (OnlyOnce: its command appends "INSTANCE Once" to effects.log).
extern const char *const kJob;
// The same with a Parallel between them (a child task and a 1s Wait), so
// faults also hit parents waiting on children and timers.
extern const char *const kFanJob;

// The e2e worker fixture (a folder, real processes) with the fault tests'
// handlers and checks.
class FaultBase : public e2e_worker::WorkerTest {
  protected:
	// A folder of the fault tests' own name (/tmp/genroc-faults.XXXXXX).
	void SetUp() override;
	// step.sh (sleeps input.sleep seconds, default none) and record.sh
	// (appends "$GENROC_INSTANCE_ID $GENROC_STATE" to effects.log).
	void fault_handlers();
	std::string effects() const { return dir_ + "/effects.log"; }
	// Waits (bounded) until no instance is live; then asserts the invariants.
	void settle_and_check(const InvariantInput &in, std::chrono::milliseconds bound = 90s);
	void expect_invariants(const InvariantInput &in);
};

// A PostgreSQL database (the e2e worker fixture's) or a SQLite file, chosen
// by the test's parameter ("postgres" | "sqlite").
class FaultTest : public FaultBase, public ::testing::WithParamInterface<std::string> {
  protected:
	void SetUp() override;
};

// Threads that start instances of one definition as outside clients would,
// each with its own store connection; a start counts only once it returned.
// Errors (the database down, the file busy) are retried after a pause.
class Load {
  public:
	Load(std::string database, std::string definition, nlohmann::json input, int threads,
		 std::chrono::milliseconds pause = 20ms, DurabilityLevel level = DurabilityLevel::essential);
	~Load();
	void stop();
	int acks() const { return acks_; }
	int errors() const { return errors_; }
	std::set<int64_t> acknowledged();

  private:
	void run();
	std::string database_, definition_;
	nlohmann::json input_;
	std::chrono::milliseconds pause_;
	DurabilityLevel level_;
	std::atomic<bool> stop_{false};
	std::atomic<int> acks_{0}, errors_{0};
	std::mutex mu_;
	std::set<int64_t> ids_;
	std::vector<std::thread> threads_;
};

// Log lines at level warn or error (text or JSON log mode), for "no error
// leaks": the caller filters the expected ones.
std::vector<std::string> warnings_in(const std::string &log);

}  // namespace genroc::faults
