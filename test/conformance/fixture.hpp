// fixture.hpp — the conformance fixture: one fresh store per test, on
// PostgreSQL or on SQLite, and the helpers every test file shares.
//
// The tests use only the Store interface (never SQL) and the test clock
// (never sleep).  Each test runs once per store; when the stores disagree,
// the store is wrong, not the test.
//
//   sqlite    a fresh temporary file per test
//   postgres  GENROC_TEST_PG_URL (a postgresql:// URL; its database part is
//             replaced) and GENROC_TEST_TEMPLATE (a database with the
//             extension installed): CREATE DATABASE ... TEMPLATE per test,
//             DROP ... WITH (FORCE) after it.  Without GENROC_TEST_PG_URL the
//             postgres half is skipped, unless GENROC_TEST_REQUIRE_PG=1.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "asl.hpp"
#include "store.hpp"

namespace genroc::conformance {

using json = nlohmann::json;

// The test clock starts here in every test.
inline constexpr const char *T0 = "2030-01-01T00:00:00.000Z";

class StoreTest : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override;
	void TearDown() override;

	Store &store() { return *store_; }
	// A second connection to the same database (another process, in effect),
	// its test clock set to the current one.
	std::unique_ptr<Store> open_another();

	// The test clock: seconds after T0 (fractions allowed).
	void at(double seconds);
	double clock() const { return clock_s_; }
	std::string time_at(double seconds) const;	// ISO text of T0 + seconds

	// define() that must succeed; returns the version.
	int define(const std::string &name, const json &definition);
	// start() with the default options; returns the instance id.
	int64_t start(const std::string &definition, const json &input = json::object(),
				  const json &options = json::object());
	std::string status(int64_t id);
	json instance(int64_t id) { return store().get_instance(id); }
	// Registers a worker with a 10s lease and 30s stale-after unless told.
	void worker(const std::string &id, json options = json::object());
	// Claims exactly one task for the worker (fails the test otherwise).
	Task claim_one(const std::string &worker, const std::vector<std::string> &queues = {"default"});
	// The events of the instance log, in order.
	std::vector<std::string> events(int64_t id);
	// The instances whose parent is `parent` (every fan-out and call), by id.
	std::vector<json> children_of(int64_t parent);

  private:
	std::unique_ptr<Store> store_;
	std::string sqlite_path_;
	std::string pg_admin_url_;
	std::string pg_db_;
	std::string pg_url_;
	double clock_s_ = 0;
};

// The SQLSTATE (and message) of what fn throws; "" when it throws nothing.
struct Raised {
	std::string sqlstate;
	std::string message;
};
Raised raised(const std::function<void()> &fn);

// Asserts that `expr` raises genroc::Error with SQLSTATE `code`; the message
// must contain `part` (when not empty).
#define EXPECT_RAISES(code, part, expr)                                                        \
	do {                                                                                       \
		auto r_ = ::genroc::conformance::raised([&] { (void)(expr); });                        \
		EXPECT_EQ(r_.sqlstate, code) << #expr << " raised: " << r_.message;                    \
		if (std::string(part).size()) {                                                        \
			EXPECT_NE(r_.message.find(part), std::string::npos)                                \
				<< #expr << ": message \"" << r_.message << "\" does not contain \"" << part << "\""; \
		}                                                                                      \
	} while (0)

}  // namespace genroc::conformance
