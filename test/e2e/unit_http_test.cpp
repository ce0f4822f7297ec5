// unit_http_test.cpp — the HTTP layer without a database: SQLSTATE -> status,
// --listen parsing, and requests refused before any Store is opened.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <stdexcept>

#include "http_api.hpp"

namespace genroc {
namespace {

using json = nlohmann::json;

TEST(HttpStatus, FollowsTheSqlstate) {
	EXPECT_EQ(http_status_for("RC001"), 400);
	EXPECT_EQ(http_status_for("22023"), 400);
	EXPECT_EQ(http_status_for("22004"), 400);
	EXPECT_EQ(http_status_for("22P02"), 400);
	EXPECT_EQ(http_status_for("RC002"), 404);
	EXPECT_EQ(http_status_for("RC003"), 404);
	for (const char *s : {"RC004", "RC005", "RC006", "RC007", "RC008"}) EXPECT_EQ(http_status_for(s), 409) << s;
	EXPECT_EQ(http_status_for("08006"), 503);
	EXPECT_EQ(http_status_for("08001"), 503);
	EXPECT_EQ(http_status_for("57P01"), 503);
	EXPECT_EQ(http_status_for("28000"), 401);  // --auth: no valid token or JWT
	EXPECT_EQ(http_status_for("42501"), 403);  // --auth: a permission the route needs
	EXPECT_EQ(http_status_for("42704"), 404);  // an unknown token id
	EXPECT_EQ(http_status_for("23505"), 409);  // a seeded token id taken by another secret
	EXPECT_EQ(http_status_for("42883"), 500);  // e.g. the extension is not installed
	EXPECT_EQ(http_status_for("XX000"), 500);
	EXPECT_EQ(http_status_for("P0001"), 500);
}

TEST(ParseListen, AcceptsHostPortForms) {
	std::string host;
	int port = -1;
	parse_listen("127.0.0.1:8448", host, port);
	EXPECT_EQ(host, "127.0.0.1");
	EXPECT_EQ(port, 8448);
	parse_listen(":9000", host, port);
	EXPECT_EQ(host, "0.0.0.0");
	EXPECT_EQ(port, 9000);
	parse_listen("[::1]:0", host, port);
	EXPECT_EQ(host, "::1");
	EXPECT_EQ(port, 0);
	parse_listen("localhost:1", host, port);
	EXPECT_EQ(host, "localhost");
	EXPECT_EQ(port, 1);
}

TEST(ParseListen, RefusesOtherText) {
	std::string host;
	int port = 0;
	for (const char *bad : {"", "8448", "host:", "host:http", "host:65536", "host:-1", "::1:80", "[::1]80", "[::1"}) {
		try {
			parse_listen(bad, host, port);
			ADD_FAILURE() << "accepted \"" << bad << "\"";
		} catch (const std::runtime_error &e) {
			EXPECT_NE(std::string(e.what()).find("--listen"), std::string::npos) << e.what();
		}
	}
}

// A server whose database is never reachable: every store open fails with a
// connection error and is counted, so a test sees whether a request got as
// far as the database.
class NoDatabase : public ::testing::Test {
  protected:
	void SetUp() override {
		ApiOptions o;
		o.listen = "127.0.0.1:0";
		o.max_body = 1024;
		HealthInfo h;
		h.worker_id = "w-unit";
		server_ = start_api(
			o,
			[this]() -> std::unique_ptr<Store> {
				opens_++;
				throw Error("08006", "cannot connect to PostgreSQL: connection refused");
			},
			h);
		client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
		opens_after_start_ = opens_.load();
	}

	json body(const httplib::Result &r) {
		EXPECT_TRUE(r) << "no answer";
		return r ? json::parse(r->body, nullptr, false) : json();
	}

	std::atomic<int> opens_{0};
	int opens_after_start_ = 0;
	std::unique_ptr<ApiServer> server_;
	std::unique_ptr<httplib::Client> client_;
};

TEST_F(NoDatabase, MalformedAndOversizedBodiesNeverTouchTheDatabase) {
	auto r = client_->Post("/api/definitions", "{not json", "application/json");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400);
	EXPECT_EQ(body(r)["error"]["sqlstate"], "22P02");

	r = client_->Post("/api/instances", R"({"definition": 42})", "application/json");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400);
	EXPECT_EQ(body(r)["error"]["sqlstate"], "22023");

	r = client_->Post("/api/instances", std::string(4096, ' ') + "{}", "application/json");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 413);
	EXPECT_EQ(body(r)["error"]["sqlstate"], "54000");

	// A chunked body carries no Content-Length: the limit applies all the same.
	int chunks = 0;
	r = client_->Post(
		"/api/instances",
		[&](size_t, httplib::DataSink &sink) {
			if (chunks++ < 8) {
				std::string piece(512, ' ');
				sink.write(piece.data(), piece.size());
			} else {
				sink.done();
			}
			return true;
		},
		"application/json");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 413);
	EXPECT_EQ(body(r)["error"]["sqlstate"], "54000");

	r = client_->Get("/api/instances/zero");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400);

	EXPECT_EQ(opens_.load(), opens_after_start_);

	// A well-formed request does reach for the database, and answers 503.
	r = client_->Post("/api/instances", R"({"definition": "hello"})", "application/json");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 503);
	EXPECT_EQ(body(r)["error"]["sqlstate"], "08006");
	EXPECT_GT(opens_.load(), opens_after_start_);
}

TEST_F(NoDatabase, HealthzIs503Unavailable) {
	auto r = client_->Get("/healthz");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 503);
	json b = body(r);
	EXPECT_EQ(b["status"], "unavailable");
	EXPECT_EQ(b["worker_id"], "w-unit");
	EXPECT_TRUE(b["lease_age_ms"].is_null());
	EXPECT_EQ(b["manual_tick"], false);
}

TEST_F(NoDatabase, StopIsIdempotentAndFreesThePort) {
	int port = server_->port();
	client_.reset();
	server_->stop();
	server_->stop();
	// The port can be bound again at once.
	ApiOptions o;
	o.listen = "127.0.0.1:" + std::to_string(port);
	auto again = start_api(o, [] { return std::unique_ptr<Store>(); }, HealthInfo{});
	EXPECT_EQ(again->port(), port);
}

TEST(StartApi, RefusesAnAddressInUseOrMalformed) {
	ApiOptions o;
	o.listen = "127.0.0.1:0";
	auto factory = []() -> std::unique_ptr<Store> { throw Error("08006", "down"); };
	auto first = start_api(o, factory, HealthInfo{});
	o.listen = "127.0.0.1:" + std::to_string(first->port());
	try {
		start_api(o, factory, HealthInfo{});
		ADD_FAILURE() << "a second server bound " << o.listen;
	} catch (const std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find("cannot listen on " + o.listen), std::string::npos) << e.what();
		EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
	}
	o.listen = "nonsense";
	EXPECT_THROW(start_api(o, factory, HealthInfo{}), std::runtime_error);
}

}  // namespace
}  // namespace genroc
