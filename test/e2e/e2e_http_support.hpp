// e2e_http_support.hpp — what the HTTP API and genctl tests share: a fresh
// database per test on either store, and running a program as a subprocess
// with bounded time.
//
//   sqlite    a fresh temporary file per test
//   postgres  GENROC_TEST_PG_URL (its database part is replaced) and
//             GENROC_TEST_TEMPLATE (a database with the extension):
//             CREATE DATABASE ... TEMPLATE per test, DROP ... WITH (FORCE)
//             after it.  Without GENROC_TEST_PG_URL the postgres half is
//             skipped, unless GENROC_TEST_REQUIRE_PG=1.
#pragma once

#include <gtest/gtest.h>

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pg_test.hpp"
#include "store.hpp"

namespace genroc::e2e {

using json = nlohmann::json;

std::string env(const char *name);

// A database for one test: "sqlite" or "postgres".
class TestDatabase {
  public:
	// Skips the test (GTEST_SKIP from the caller's SetUp) when `skip` is set.
	void create(const std::string &kind, std::string &skip);
	void drop();
	~TestDatabase() { drop(); }
	const std::string &url() const { return url_; }	// what --database takes

  private:
	std::string url_;
	std::string sqlite_path_;
	std::string pg_admin_url_;
	std::string pg_db_;
};

using genroc::test::pg_exec;
using genroc::test::with_database;
using genroc::test::binary_url;

struct Output {
	int exit_code = -1;	 // -1: killed by a signal or timed out
	std::string out, err;
};
// Runs argv[0] with argv, extra environment `env_add` (NAME -> value), stdin
// from /dev/null; kills it after timeout_s.
Output run(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env_add = {},
		   int timeout_s = 60);

// Starts argv[0] with argv in the background, extra environment `env_add`,
// stdin from /dev/null, stdout into out_path and stderr into err_path (made
// 0600; one file when they are the same); returns its pid.
pid_t spawn(const std::vector<std::string> &argv, const std::string &out_path, const std::string &err_path,
			const std::map<std::string, std::string> &env_add = {});
// spawn() with stdout and stderr into one log.
pid_t spawn_logged(const std::vector<std::string> &argv, const std::string &log_path);

// A new folder for the running test: <tmp>/<prefix>-<pid>-<test name>, the
// '/' of a parameterized name made '-' so one remove_all takes all of it.
std::filesystem::path test_dir(const std::string &prefix);

}  // namespace genroc::e2e
