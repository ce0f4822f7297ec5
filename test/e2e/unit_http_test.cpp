// unit_http_test.cpp — the HTTP layer without a database: SQLSTATE -> status,
// --listen parsing, requests refused before any Store is opened, and hostile
// requests (deep or huge bodies, odd types, NULs, duplicate parameters).
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "http_api.hpp"
#include "instance_actions.hpp"
#include "json_guard.hpp"

namespace genroc {
namespace {

using json = nlohmann::json;

// The rule the console's buttons and the bulk route share: what the store
// would accept, with the store's reason when it would not.
TEST(InstanceActions, FollowTheStoresChecks) {
	const json live = {{"id", 5}, {"status", "waiting"}, {"wait_kind", "children"}, {"parent_id", nullptr}};
	EXPECT_EQ(instance_actions(live, ""), (std::vector<std::string>{"cancel"}));  // no event awaited
	json waits = live;
	waits["wait_kind"] = "event";
	EXPECT_EQ(instance_actions(waits, ""), (std::vector<std::string>{"cancel", "emit"}));
	const json failed = {{"id", 5}, {"status", "failed"}, {"state", "Each"}, {"parent_id", nullptr}};
	EXPECT_EQ(instance_actions(failed, "Map"), (std::vector<std::string>{"retry", "redrive"}));
	EXPECT_EQ(instance_actions(failed, "Task"), (std::vector<std::string>{"retry", "resume", "redrive"}));
	json cancelled = failed;
	cancelled["status"] = "cancelled";
	EXPECT_EQ(instance_actions(cancelled, "Map"), (std::vector<std::string>{"redrive"}));  // not retried: redriven
	EXPECT_NE(action_refusal("resume", failed, "Map").find("resume goes on after a Task only"), std::string::npos);
	json child = failed;
	child["parent_id"] = 4;
	child["root_id"] = 4;
	EXPECT_TRUE(instance_actions(child, "Task").empty());
	EXPECT_EQ(action_refusal("retry", child, "Task"), "instance 5 is part of instance 4: retry or resume that one");
	EXPECT_EQ(action_refusal("redrive", child, "Task"), "instance 5 is part of instance 4: redrive that one");
	EXPECT_EQ(action_refusal("redrive", live, ""),
			  "instance 5 is waiting: only an instance that failed, timed out or was cancelled can be redriven");
	EXPECT_EQ(action_refusal("cancel", failed, ""), "instance 5 has already ended (failed)");
	EXPECT_EQ(action_refusal("retry", live, ""),
			  "instance 5 is waiting, not failed: only a failed instance can be retried or resumed");
	EXPECT_EQ(action_refusal("pause", live, ""), "unknown action \"pause\"");
}

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


// ---- hostile requests: each refused with a clean 4xx, never a
// crash, never the database; 5xx bodies carry no internals -----------------

// Sends `bytes` on a fresh connection and returns all the server writes
// until it closes or `wait_s` pass (the client side of a raw request).
std::string raw_exchange(int port, const std::string &bytes, int wait_s = 10) {
	int fd = ::socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<uint16_t>(port));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
		::close(fd);
		return "";
	}
	timeval tv{wait_s, 0};
	::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	size_t sent = 0;
	while (sent < bytes.size()) {
		ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
		if (n <= 0) break;	// the server may answer and close before all of it
		sent += static_cast<size_t>(n);
	}
	std::string out;
	char buf[4096];
	for (;;) {
		ssize_t n = ::recv(fd, buf, sizeof buf, 0);
		if (n <= 0) break;
		out.append(buf, static_cast<size_t>(n));
	}
	::close(fd);
	return out;
}

int status_of(const std::string &answer) {
	return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}

json body_of(const std::string &answer) {
	auto at = answer.find("\r\n\r\n");
	return at == std::string::npos ? json() : json::parse(answer.substr(at + 4), nullptr, false);
}

std::string nested(size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

// The default body limit (1 MiB), and a database that never answers with
// libpq-like text: a request that reaches for it answers 503.
class Hostile : public ::testing::Test {
  protected:
	void SetUp() override {
		ApiOptions o;
		o.listen = "127.0.0.1:0";
		server_ = start_api(
			o,
			[this]() -> std::unique_ptr<Store> {
				opens_++;
				throw Error("08006", "connection to server at \"10.0.0.7\", port 5432 failed: Connection refused");
			},
			HealthInfo{});
		client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
		client_->set_read_timeout(30, 0);
		opens_after_start_ = opens_.load();
	}

	json post(const std::string &path, const std::string &body, int &status,
			  const char *type = "application/json") {
		auto r = client_->Post(path.c_str(), body, type);
		EXPECT_TRUE(r) << "no answer";
		status = r ? r->status : 0;
		return r ? json::parse(r->body, nullptr, false) : json();
	}

	std::atomic<int> opens_{0};
	int opens_after_start_ = 0;
	std::unique_ptr<ApiServer> server_;
	std::unique_ptr<httplib::Client> client_;
};

TEST_F(Hostile, DeeplyNestedBodiesAre400NamingTheLimitAndTheField) {
	// 100,000 levels crashed the server (the first copy of the value); 20k to
	// 60k reached PostgreSQL and came back 500 with its max_stack_depth hint.
	for (size_t levels : {size_t{100'000}, size_t{30'000}, kMaxJsonDepth + 1}) {
		int status = 0;
		json b = post("/api/instances", R"({"definition":"h","input":)" + nested(levels) + "}", status);
		EXPECT_EQ(status, 400) << levels;
		EXPECT_EQ(b["error"]["sqlstate"], "54000") << b;
		const std::string m = b["error"].value("message", "");
		EXPECT_NE(m.find("limit of 512 levels"), std::string::npos) << m;
		EXPECT_NE(m.find("\"input\""), std::string::npos) << m;
		EXPECT_FALSE(b["error"].contains("hint")) << b;
	}
	// A worker's output too (POST /api/activities/succeed).
	int status = 0;
	json b = post("/api/activities/succeed", R"({"token":"t","output":)" + nested(100'000) + "}", status);
	EXPECT_EQ(status, 400);
	EXPECT_NE(b["error"].value("message", "").find("\"output\""), std::string::npos) << b;
	// At the limit it is accepted as far as the database.
	post("/api/instances", R"({"definition":"h","input":)" + nested(kMaxJsonDepth - 1) + "}", status);
	EXPECT_EQ(status, 503);
	EXPECT_EQ(opens_.load(), opens_after_start_ + 1);
}

TEST_F(Hostile, NumbersBeyondADoubleAre400NamingTheField) {
	int status = 0;
	json b = post("/api/instances", R"({"definition":"h","input":{"a":[1,{"x":1e999999}]}})", status);
	EXPECT_EQ(status, 400);
	EXPECT_EQ(b["error"]["sqlstate"], "22003") << b;
	EXPECT_NE(b["error"].value("message", "").find("\"input.a[1].x\""), std::string::npos) << b;
	EXPECT_EQ(b["error"].value("message", "").find("json.exception"), std::string::npos) << b;

	b = post("/api/instances", R"({"definition":"h","input":{"big":)" + std::string(5000, '9') + "}}", status);
	EXPECT_EQ(status, 400);
	EXPECT_EQ(b["error"]["sqlstate"], "22003") << b;
	EXPECT_NE(b["error"].value("message", "").find("\"input.big\""), std::string::npos) << b;
	EXPECT_LT(b["error"].value("message", "").size(), 300u) << "the number is cut in the message";

	// Tiny numbers underflow to 0, as the JSON parser has them: accepted.
	post("/api/instances", R"({"definition":"h","input":{"x":1e-999999}})", status);
	EXPECT_EQ(status, 503);
}

// A body is JSON only with Content-Type: application/json.  Without --auth
// any type was read as JSON, so a page of another origin could define and
// start with a form or a fetch that needs no preflight (text/plain).
TEST_F(Hostile, ABodyIsReadOnlyAsApplicationJsonElse415) {
	int status = 0;
	const std::string body = R"({"definition":"h"})";
	for (const char *type : {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
							 "multipart/form-data; boundary=x", "application/json-patch+json",
							 "application/json; charset=latin1"}) {
		json b = post("/api/instances", body, status, type);
		EXPECT_EQ(status, 415) << type << ": " << b;
		EXPECT_EQ(b["error"]["sqlstate"], "22023") << b;
		EXPECT_NE(b["error"].value("message", "").find("Content-Type: application/json"), std::string::npos) << b;
	}
	// None reached the database; application/json (any case, utf-8) does.
	EXPECT_EQ(opens_.load(), opens_after_start_);
	for (const char *type : {"application/json", "Application/JSON; charset=utf-8", "application/json;charset=\"UTF-8\""}) {
		post("/api/instances", body, status, type);
		EXPECT_EQ(status, 503) << type;
	}
	// A body without any Content-Type is refused too; a POST without a body
	// and without a type (cancel) goes on.
	std::string a = raw_exchange(server_->port(),
								 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 18\r\n\r\n" + body, 3);
	EXPECT_EQ(status_of(a), 415) << a;
	EXPECT_NE(body_of(a)["error"].value("message", "").find("needs Content-Type: application/json"), std::string::npos) << a;
	a = raw_exchange(server_->port(),
					 "POST /api/instances/7/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 0\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 415) << a;
}

// DNS rebinding: a page at evil.example whose name now resolves to
// 127.0.0.1 sends Host: evil.example.  Only names this server answers to
// pass; an IP address always does (a rebinding page cannot send one).
TEST_F(Hostile, AHostHeaderNotNamingTheServerIs421) {
	for (const char *host : {"evil.example", "evil.example:8448", "127.0.0.1.evil.example", "localhost.evil.example"}) {
		std::string a = raw_exchange(server_->port(),
									 std::string("GET /api/definitions HTTP/1.1\r\nHost: ") + host + "\r\nConnection: close\r\n\r\n", 3);
		EXPECT_EQ(status_of(a), 421) << host << ": " << a;
		EXPECT_EQ(body_of(a)["error"]["sqlstate"], "42501") << a;
		EXPECT_NE(body_of(a)["error"].value("message", "").find("--http-allowed-hosts"), std::string::npos) << a;
		a = raw_exchange(server_->port(), std::string("GET /healthz HTTP/1.1\r\nHost: ") + host + "\r\nConnection: close\r\n\r\n", 3);
		EXPECT_EQ(status_of(a), 421) << host << ": " << a;
	}
	EXPECT_EQ(opens_.load(), opens_after_start_);
	for (const char *host : {"127.0.0.1", "127.0.0.1:8448", "localhost", "LOCALHOST:1", "localhost.", "[::1]:8448",
							 "10.1.2.3:8448"}) {
		std::string a = raw_exchange(server_->port(),
									 std::string("GET /api/definitions HTTP/1.1\r\nHost: ") + host + "\r\nConnection: close\r\n\r\n", 3);
		EXPECT_EQ(status_of(a), 503) << host << ": " << a;  // as far as the database
	}
	std::string a = raw_exchange(server_->port(), "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
	a = raw_exchange(server_->port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
}

TEST(HostCheck, AllowedHostsAddNamesDomainsOrAny) {
	auto open = []() -> std::unique_ptr<Store> { throw Error("08006", "down"); };
	ApiOptions o;
	o.listen = "127.0.0.1:0";
	o.allowed_hosts = {"genroc", "*.svc.cluster.local"};
	auto server = start_api(o, open, HealthInfo{});
	auto status = [&](const std::string &host) {
		return status_of(raw_exchange(server->port(),
									 "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n", 3));
	};
	EXPECT_EQ(status("genroc:8448"), 503);
	EXPECT_EQ(status("GENROC"), 503);
	EXPECT_EQ(status("genroc.ns.svc.cluster.local"), 503);
	EXPECT_EQ(status("svc.cluster.local"), 421);
	EXPECT_EQ(status("genroc.evil.example"), 421);
	server.reset();
	o.allowed_hosts = {"*"};
	server = start_api(o, open, HealthInfo{});
	EXPECT_EQ(status("anything.example"), 503);
}

// A browser's POST from a page of another origin (no preflight: a form, or a
// fetch without a body) changes nothing; the console's own (same origin) does.
TEST_F(Hostile, ACrossOriginPostIs403) {
	const std::string port = std::to_string(server_->port());
	std::string a = raw_exchange(server_->port(),
								 "POST /api/instances/7/cancel HTTP/1.1\r\nHost: 127.0.0.1:" + port +
									 "\r\nOrigin: http://evil.example\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 403) << a;
	EXPECT_NE(body_of(a)["error"].value("message", "").find("cross-origin"), std::string::npos) << a;
	a = raw_exchange(server_->port(), "POST /api/instances/7/cancel HTTP/1.1\r\nHost: localhost:" + port +
										  "\r\nOrigin: http://localhost:3000\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 403) << a;	// another port, another origin
	a = raw_exchange(server_->port(), "POST /api/instances/7/cancel HTTP/1.1\r\nHost: 127.0.0.1:" + port +
										  "\r\nOrigin: null\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 403) << a;
	EXPECT_EQ(opens_.load(), opens_after_start_);
	a = raw_exchange(server_->port(), "POST /api/instances/7/cancel HTTP/1.1\r\nHost: 127.0.0.1:" + port +
										  "\r\nOrigin: http://127.0.0.1:" + port + "\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 503) << a;
	// A GET is not refused for its Origin (reading needs CORS, which the server never grants).
	a = raw_exchange(server_->port(), "GET /api/definitions HTTP/1.1\r\nHost: 127.0.0.1:" + port +
										  "\r\nOrigin: http://evil.example\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 503) << a;
}

// Two lengths (or a length and chunked) let a proxy in front and this server
// read different bodies: request smuggling.  httplib took the first.
TEST_F(Hostile, TwoContentLengthsOrALengthWithChunkedAre400) {
	const std::string body = R"({"definition":"h"})";
	std::string a = raw_exchange(server_->port(),
								 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
								 "Content-Length: 18\r\nContent-Length: 5\r\n\r\n" + body, 3);
	EXPECT_EQ(status_of(a), 400) << a;
	EXPECT_EQ(body_of(a)["error"]["sqlstate"], "08P01") << a;
	EXPECT_NE(body_of(a)["error"].value("message", "").find("Content-Length is given more than once"), std::string::npos) << a;
	a = raw_exchange(server_->port(),
					 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					 "Content-Length: 18\r\nTransfer-Encoding: chunked\r\n\r\n12\r\n" + body + "\r\n0\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
	EXPECT_NE(body_of(a)["error"].value("message", "").find("given together"), std::string::npos) << a;
	a = raw_exchange(server_->port(),
					 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					 "Transfer-Encoding: gzip, chunked\r\n\r\n12\r\n" + body + "\r\n0\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
	// On a GET too: the next request on the connection would be read from the body.
	a = raw_exchange(server_->port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
									  "Content-Length: 40\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
	EXPECT_EQ(opens_.load(), opens_after_start_);
	// One length: served (as far as the database).
	a = raw_exchange(server_->port(),
					 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					 "Content-Length: 18\r\n\r\n" + body, 3);
	EXPECT_EQ(status_of(a), 503) << a;
}

// A limit beyond what list_instances takes is refused here (the answer is
// read in chunks, so the store no longer sees it).
TEST_F(Hostile, AListLimitOverTenThousandIs400) {
	auto r = client_->Get("/api/instances?limit=10001");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400);
	EXPECT_NE(r->body.find("\\\"limit\\\" must be a whole number from 1 to 10000"), std::string::npos) << r->body;
	EXPECT_EQ(opens_.load(), opens_after_start_);
}

TEST_F(Hostile, APathOverFourKilobytesIs414BeforeAnyRouteIsMatched) {
	// The routes are std::regex patterns, which recurse per character of the
	// path: a path over kMaxPath is refused before any is tried.
	auto r = client_->Get("/api/tokens/" + std::string(5000, 'x'));
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 414);
	json b = json::parse(r->body, nullptr, false);
	EXPECT_EQ(b["error"]["sqlstate"], "54000") << r->body;
	EXPECT_EQ(opens_.load(), opens_after_start_);
	// one at the bound is routed as usual
	r = client_->Get("/api/objects/" + std::string(4096 - 13, 'a'));
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400) << r->body;
}

TEST_F(Hostile, APostWithoutABodyIsAnsweredAtOnce) {
	// No Content-Length, no chunked encoding: no body (the server used to wait
	// 5 s for one, then answer 400 / 08P01).  The client gives up after 3 s.
	std::string a = raw_exchange(server_->port(), "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 400) << a;
	EXPECT_EQ(body_of(a)["error"]["sqlstate"], "22P02") << a;
	EXPECT_NE(body_of(a)["error"].value("message", "").find("empty"), std::string::npos) << a;
	// A POST that takes no body (cancel) goes on, as far as the database.
	a = raw_exchange(server_->port(), "POST /api/instances/7/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 503) << a;
	// And an unknown route is a 404 at once, body or not.
	a = raw_exchange(server_->port(), "POST /api/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 404) << a;
}

TEST_F(Hostile, FiveHundredsAndFiveOThreesCarryNoInternals) {
	int status = 0;
	json b = post("/api/instances", R"({"definition":"h"})", status);
	EXPECT_EQ(status, 503);
	EXPECT_EQ(b["error"]["sqlstate"], "08006");
	const std::string text = b.dump();
	EXPECT_EQ(text.find("10.0.0.7"), std::string::npos) << text;
	EXPECT_EQ(text.find("Connection refused"), std::string::npos) << text;
	EXPECT_NE(b["error"].value("message", "").find("not available"), std::string::npos) << text;
}

TEST_F(Hostile, ANulInThePathIsShownWhole) {
	auto r = client_->Get("/api/inst%00ances/x");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 404);
	json b = json::parse(r->body, nullptr, false);
	EXPECT_EQ(b["error"]["message"], "no route for GET /api/inst%00ances/x") << r->body;
	r = client_->Get("/api/instances/1%002");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400);
	b = json::parse(r->body, nullptr, false);
	EXPECT_EQ(b["error"]["message"], "instance id \"1%002\" is not a positive integer") << r->body;
}

TEST_F(Hostile, DuplicateQueryParametersAre400NamingTheParameter) {
	for (const char *path : {"/api/instances?limit=1&limit=2", "/api/instances?status=ready&status=failed",
							 "/api/definitions?x=1&x=2"}) {
		auto r = client_->Get(path);
		ASSERT_TRUE(r);
		EXPECT_EQ(r->status, 400) << path;
		json b = json::parse(r->body, nullptr, false);
		EXPECT_EQ(b["error"]["sqlstate"], "22023") << r->body;
		EXPECT_NE(b["error"].value("message", "").find("is given more than once"), std::string::npos) << r->body;
	}
	auto r = client_->Get("/api/instances?limit=1&limit=2");
	ASSERT_TRUE(r);
	EXPECT_EQ(json::parse(r->body, nullptr, false)["error"]["message"],
			  "query parameter \"limit\" is given more than once")
		<< r->body;
	// label may repeat (one per key): that request reaches the database.
	r = client_->Get("/api/instances?label=a:1&label=b:2");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 503) << r->body;
	EXPECT_EQ(opens_.load(), opens_after_start_ + 1);
}

TEST_F(Hostile, HeadersOverTheCapAre431) {
	std::string req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
	for (int i = 0; i < 64; i++) req += "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'p') + "\r\n";
	req += "\r\n";
	std::string a = raw_exchange(server_->port(), req, 5);
	EXPECT_EQ(status_of(a), 431) << a.substr(0, 300);
	EXPECT_NE(body_of(a)["error"].value("message", "").find("over the limit of 32768 bytes"), std::string::npos) << a;
}

TEST_F(Hostile, ABodyOverTheLimitIsRefusedBeforeItIsSent) {
	// Content-Length says 2 MiB; nothing of it is sent: the answer comes anyway.
	std::string a = raw_exchange(server_->port(),
								 "POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2097152\r\n\r\n", 3);
	EXPECT_EQ(status_of(a), 413) << a;
	EXPECT_EQ(body_of(a)["error"]["sqlstate"], "54000") << a;
}

// The in-process request path (the fuzz target's entry) answers like the socket.
TEST(ApiHandler, ServesBytesWithoutASocket) {
	auto h = make_api_handler(
		ApiOptions{}, []() -> std::unique_ptr<Store> { throw Error("08006", "down"); }, HealthInfo{});
	std::string a = h->serve_bytes("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	EXPECT_EQ(status_of(a), 503) << a;
	a = h->serve_bytes("POST /api/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					   "Content-Length: 200010\r\n\r\n" +
					   std::string(R"({"input":)") + nested(100'000) + "}");
	EXPECT_EQ(status_of(a), 400) << a.substr(0, 300);
	// Two requests on one connection: two answers.
	a = h->serve_bytes("GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	EXPECT_NE(a.find("HTTP/1.1 404"), std::string::npos) << a;
	EXPECT_NE(a.find("HTTP/1.1 503"), std::string::npos) << a;
}

}  // namespace
}  // namespace genroc

namespace genroc {
namespace {

// The text check alone: brackets inside strings are text, keys with escapes
// and arrays name the field, and the cut-off is exactly the limit.
TEST(JsonGuard, CountsOnlyRealNestingAndNamesTheField) {
	EXPECT_NO_THROW(check_json_text(R"({"s":")" + std::string(10'000, '[') + R"("})", "body"));
	EXPECT_NO_THROW(check_json_text(R"({"a\"b":[1,2,{"x":-1.5e300}]})", "body"));
	EXPECT_NO_THROW(check_json_text(std::string(512, '[') + std::string(512, ']'), "body"));
	try {
		check_json_text(std::string(513, '[') + std::string(513, ']'), "body");
		ADD_FAILURE() << "513 levels passed";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "54000");
		EXPECT_STREQ(e.what(), "body: field \"[0]\" nests deeper than the limit of 512 levels");
	}
	try {
		check_json_text(R"({"a\"b":[1,2,{"x":-1e400}]})", "body");
		ADD_FAILURE() << "-1e400 passed";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "22003");
		EXPECT_STREQ(e.what(),
					 "body: field \"a\\\"b[2].x\" holds the number -1e400, beyond the range of a double (about 1.8e308)");
	}
	EXPECT_EQ(shown(std::string("a\0b\x7f\n", 5)), "a%00b%7F%0A");
	EXPECT_EQ(shown(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
}

}  // namespace
}  // namespace genroc
