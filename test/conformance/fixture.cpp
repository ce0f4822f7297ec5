// fixture.cpp — opens a fresh store per test (see fixture.hpp) and the
// instantiation over both stores.
#include "fixture.hpp"
#include "pg_test.hpp"

#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "sqlite_store.hpp"

namespace genroc::conformance {
namespace {

std::string env(const char *name) {
	const char *v = std::getenv(name);
	return v ? v : "";
}

using genroc::test::with_database;

// Runs one statement on the server's "postgres" database.
void admin(const std::string &url, const std::string &sql) {
	PGconn *c = PQconnectdb(url.c_str());
	// "database ... does not exist, skipping" is expected noise.
	PQsetNoticeProcessor(c, [](void *, const char *) {}, nullptr);
	std::string err;
	if (PQstatus(c) != CONNECTION_OK) {
		err = PQerrorMessage(c);
	} else {
		PGresult *r = PQexec(c, sql.c_str());
		if (PQresultStatus(r) != PGRES_COMMAND_OK) err = PQresultErrorMessage(r);
		PQclear(r);
	}
	PQfinish(c);
	if (!err.empty()) throw std::runtime_error(sql + ": " + err);
}

std::string quote_ident(const std::string &s) {
	std::string q = "\"";
	for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
	return q + "\"";
}

std::atomic<int> g_counter{0};

int64_t t0_ms() {
	int64_t t;
	if (!asl::parse_time(T0, t)) throw std::runtime_error("T0 does not parse");
	return t;
}

}  // namespace

Raised raised(const std::function<void()> &fn) {
	try {
		fn();
	} catch (const Error &e) {
		return {e.sqlstate, e.what()};
	} catch (const std::exception &e) {
		return {"(not a genroc::Error)", e.what()};
	}
	return {"", "(nothing raised)"};
}

void StoreTest::SetUp() {
	const int n = g_counter++;
	if (GetParam() == "sqlite") {
		auto dir = std::filesystem::temp_directory_path();
		sqlite_path_ = (dir / ("genroc-conformance-" + std::to_string(getpid()) + "-" + std::to_string(n) + ".db")).string();
		std::filesystem::remove(sqlite_path_);
		store_ = open_sqlite_store(sqlite_path_);
	} else {
		const std::string url = env("GENROC_TEST_PG_URL");
		if (url.empty()) {
			if (env("GENROC_TEST_REQUIRE_PG") == "1") FAIL() << "GENROC_TEST_PG_URL is not set but GENROC_TEST_REQUIRE_PG=1";
			GTEST_SKIP() << "GENROC_TEST_PG_URL is not set";
		}
		std::string tmpl = env("GENROC_TEST_TEMPLATE");
		if (tmpl.empty()) tmpl = "genroc_template";
		pg_admin_url_ = with_database(url, "postgres");
		pg_db_ = "genroc_conf_" + std::to_string(getpid()) + "_" + std::to_string(n);
		admin(pg_admin_url_, "DROP DATABASE IF EXISTS " + quote_ident(pg_db_) + " WITH (FORCE)");
		admin(pg_admin_url_, "CREATE DATABASE " + quote_ident(pg_db_) + " TEMPLATE " + quote_ident(tmpl));
		pg_url_ = with_database(url, pg_db_);
		store_ = open_store(pg_url_);
	}
	ASSERT_EQ(store_->kind(), GetParam());
	at(0);
}

void StoreTest::TearDown() {
	store_.reset();
	if (!sqlite_path_.empty()) {
		for (const char *suffix : {"", "-wal", "-shm"}) std::filesystem::remove(sqlite_path_ + suffix);
		// the workers' lock files beside it ("<file>-worker-<hash>.lock")
		const std::filesystem::path p(sqlite_path_);
		const std::string prefix = p.filename().string() + "-worker-";
		std::error_code ec;
		for (auto &e : std::filesystem::directory_iterator(p.parent_path(), ec))
			if (e.path().filename().string().rfind(prefix, 0) == 0) std::filesystem::remove(e.path(), ec);
	}
	if (!pg_db_.empty()) {
		try {
			admin(pg_admin_url_, "DROP DATABASE IF EXISTS " + quote_ident(pg_db_) + " WITH (FORCE)");
		} catch (const std::exception &e) {
			ADD_FAILURE() << e.what();
		}
	}
}

std::unique_ptr<Store> StoreTest::open_another() {
	auto s = GetParam() == "sqlite" ? open_sqlite_store(sqlite_path_) : open_store(pg_url_);
	s->set_test_clock(time_at(clock_s_));
	return s;
}

std::string StoreTest::time_at(double seconds) const {
	return asl::format_time(t0_ms() + static_cast<int64_t>(std::llround(seconds * 1000)));
}

void StoreTest::at(double seconds) {
	clock_s_ = seconds;
	store_->set_test_clock(time_at(seconds));
}

int StoreTest::define(const std::string &name, const json &definition) {
	return store().define(name, definition).version;
}

int64_t StoreTest::start(const std::string &definition, const json &input, const json &options) {
	return store().start(definition, input, options).instance_id;
}

std::string StoreTest::status(int64_t id) { return store().get_instance(id).at("status").get<std::string>(); }

void StoreTest::worker(const std::string &id, json options) {
	if (!options.contains("lease_duration")) options["lease_duration"] = "10s";
	if (!options.contains("stale_after")) options["stale_after"] = "30s";
	store().worker_register(id, options);
}

Task StoreTest::claim_one(const std::string &w, const std::vector<std::string> &queues) {
	auto tasks = store().claim(w, queues, 1);
	EXPECT_EQ(tasks.size(), 1u) << "expected one task to claim at T0+" << clock_s_ << "s";
	if (tasks.empty()) throw std::runtime_error("nothing to claim");
	return tasks[0];
}

std::vector<std::string> StoreTest::events(int64_t id) {
	std::vector<std::string> out;
	for (auto &e : store().history(id)) out.push_back(e.at("event").get<std::string>());
	return out;
}

std::vector<json> StoreTest::children_of(int64_t parent) {
	std::vector<json> out;
	for (const auto &i : store().list_instances({{"limit", 10000}}))
		if (i.at("parent_id") == parent) out.push_back(i);
	std::sort(out.begin(), out.end(),
			  [](const json &a, const json &b) { return a.at("id").get<int64_t>() < b.at("id").get<int64_t>(); });
	return out;
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

}  // namespace genroc::conformance
