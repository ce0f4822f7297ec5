// e2e_auth_test.cpp — --auth end to end, on both stores: the HTTP API served
// in-process with tokens and JWTs (401, 403, tokens minted and revoked over
// HTTP, /healthz open); `genroc token create` and `genctl token list/revoke`
// as processes; a `genroc api --auth --seed-tokens` process serving a seeded
// worker token, and refusing a seed that conflicts; the warning of an
// exposed port without --auth; the start check of genroc's database role.
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "auth.hpp"
#include "e2e_http_support.hpp"
#include "http_api.hpp"

namespace genroc::e2e::auth_test {
namespace {

const std::string kGenroc = GENROC_PATH;
const std::string kGenctl = GENCTL_PATH;
const std::string kJwtSecret = "e2e-jwt-secret-e2e-jwt-secret-e2e-jwt";
constexpr const char *kHello = R"({"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}})";

int64_t now_s() {
	return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
		.count();
}

struct Reply {
	int status = 0;
	json body;
	std::string www_authenticate;
};

Reply reply(const httplib::Result &r) {
	Reply out;
	if (!r) {
		ADD_FAILURE() << "no HTTP answer: " << httplib::to_string(r.error());
		return out;
	}
	out.status = r->status;
	out.body = json::parse(r->body, nullptr, false);
	out.www_authenticate = r->get_header_value("WWW-Authenticate");
	return out;
}

void expect_error(const Reply &r, int status, const std::string &sqlstate, const std::string &part = "") {
	EXPECT_EQ(r.status, status) << r.body.dump();
	ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << r.body.dump();
	EXPECT_EQ(r.body["error"].value("sqlstate", ""), sqlstate) << r.body.dump();
	EXPECT_NE(r.body["error"].value("message", "").find(part), std::string::npos) << r.body.dump();
	if (status == 401) {
		EXPECT_EQ(r.www_authenticate.rfind("Bearer", 0), 0u) << r.www_authenticate;
	}
}

// ---- the API in-process with --auth ------------------------------------------

class HttpAuthTest : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override {
		std::string skip;
		db_.create(GetParam(), skip);
		if (!skip.empty()) GTEST_SKIP() << skip;
		store_ = open_store(db_.url());
		admin_ = store_->token_create("root", {"admin"}, "cli", std::nullopt).at("token");
		// the token routes take genroc_admin (docs/security.md "Roles and ownership")
		const std::string url = binary_url(db_.url(), "admin");
		ApiOptions o;
		o.listen = "127.0.0.1:0";
		o.auth = true;
		o.jwt_secret = kJwtSecret;
		o.jwt_groups = auth::parse_groups(R"({"ops":["admin"],"dev":["operator"]})");
		server_ = start_api(o, [url] { return open_store(url); }, HealthInfo{});
		client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
		client_->set_read_timeout(30, 0);
	}

	void TearDown() override {
		client_.reset();
		if (server_) server_->stop();
		server_.reset();
		store_.reset();
		db_.drop();
	}

	static httplib::Headers bearer(const std::string &token) {
		return token.empty() ? httplib::Headers{} : httplib::Headers{{"Authorization", "Bearer " + token}};
	}
	Reply get(const std::string &path, const std::string &token) {
		return reply(client_->Get(path.c_str(), bearer(token)));
	}
	Reply post(const std::string &path, const std::string &token, const json &body = json::object()) {
		return reply(client_->Post(path.c_str(), bearer(token), body.dump(), "application/json"));
	}
	Reply del(const std::string &path, const std::string &token) {
		return reply(client_->Delete(path.c_str(), bearer(token)));
	}
	std::string jwt(const std::string &sub, const json &groups, int64_t exp_in = 600) {
		return auth::sign_jwt({{"alg", "HS256"}, {"typ", "JWT"}},
							  {{"sub", sub}, {"groups", groups}, {"exp", now_s() + exp_in}}, kJwtSecret);
	}

	TestDatabase db_;
	std::unique_ptr<Store> store_;
	std::string admin_;
	std::unique_ptr<ApiServer> server_;
	std::unique_ptr<httplib::Client> client_;
};

TEST_P(HttpAuthTest, MissingOrBadTokensAre401AndHealthzIsOpen) {
	auto h = client_->Get("/healthz");
	ASSERT_TRUE(h);
	EXPECT_EQ(h->status, 200);
	expect_error(get("/api/definitions", ""), 401, "28000", "authentication required");
	expect_error(post("/api/definitions", "", {{"name", "x"}}), 401, "28000");
	expect_error(get("/api/definitions", "nonsense"), 401, "28000", "unknown or revoked");
	expect_error(get("/api/definitions", "grt_aaaaaaaaaaaa_" + std::string(64, 'a')), 401, "28000", "unknown or revoked");
	std::string wrong = admin_;
	wrong.back() = wrong.back() == 'a' ? 'b' : 'a';
	expect_error(get("/api/definitions", wrong), 401, "28000");
	expect_error(reply(client_->Get("/api/definitions", {{"Authorization", "Basic " + admin_}})), 401, "28000",
				 "Bearer");
	// the admin token works; the scheme is case-insensitive
	EXPECT_EQ(get("/api/definitions", admin_).status, 200);
	EXPECT_EQ(reply(client_->Get("/api/definitions", {{"Authorization", "bearer " + admin_}})).status, 200);
}

TEST_P(HttpAuthTest, EachPermissionReachesItsRoutesOnly) {
	const std::string reader = store_->token_create("r", {"reader"}, "cli", std::nullopt).at("token");
	const std::string oper = store_->token_create("o", {"operator"}, "cli", std::nullopt).at("token");
	expect_error(post("/api/definitions", reader, {{"name", "hello"}, {"definition", json::parse(kHello)}}), 403,
				 "42501", "POST /api/definitions needs the \"operator\" permission");
	EXPECT_EQ(get("/api/definitions", reader).status, 200);
	EXPECT_EQ(get("/api/workers", reader).status, 200);
	EXPECT_EQ(post("/api/definitions", oper, {{"name", "hello"}, {"definition", json::parse(kHello)}}).status, 201);
	Reply started = post("/api/instances", oper, {{"definition", "hello"}});
	ASSERT_EQ(started.status, 201);
	const std::string id = std::to_string(started.body["instance_id"].get<int64_t>());
	EXPECT_EQ(get("/api/instances/" + id, reader).status, 200);
	expect_error(post("/api/instances/" + id + "/cancel", reader), 403, "42501", "operator");
	expect_error(post("/api/workers/w-none/drain", reader), 403, "42501", "\"operator\" permission");
	expect_error(post("/api/workers/w-none/drain", oper), 409, "RC006", "w-none");	// allowed: no such worker
	expect_error(post("/api/activities/x/claim", oper, {{"worker", "w"}}), 403, "42501", "\"worker\" permission");
	expect_error(get("/api/tokens", oper), 403, "42501", "\"admin\" permission");
	expect_error(post("/api/tokens", reader, {{"name", "z"}, {"permissions", {"admin"}}}), 403, "42501", "admin");
	// the console's routes: who the caller is (any permission), the queues
	// and one definition (readers), and the console's files (no token)
	Reply me = get("/api/whoami", reader);
	EXPECT_EQ(me.body, (json{{"auth", true}, {"name", "r"}, {"permissions", {"reader"}}})) << me.body.dump();
	expect_error(get("/api/whoami", ""), 401, "28000");
	EXPECT_EQ(get("/api/queues", reader).status, 200);
	EXPECT_EQ(get("/api/definitions/hello", reader).status, 200);
	const std::string worker = store_->token_create("w", {"worker"}, "cli", std::nullopt).at("token");
	EXPECT_EQ(get("/api/whoami", worker).body["permissions"], json::array({"worker"}));
	expect_error(get("/api/queues", worker), 403, "42501", "reader");
	httplib::Client c("127.0.0.1", server_->port());
	auto page = c.Get("/ui/");
	ASSERT_TRUE(page);
	EXPECT_EQ(page->status, 200);
}

// Auth comes before the body: a reader's POST without a body is a 403 at
// once (it used to wait 5 s for a body, then answer 400 / 08P01), and so is
// one whose body would be refused (too deep), which is never read.
TEST_P(HttpAuthTest, AuthIsCheckedBeforeTheBodyIsRead) {
	const std::string reader = store_->token_create("r", {"reader"}, "cli", std::nullopt).at("token");
	httplib::Client c("127.0.0.1", server_->port());
	c.set_read_timeout(3, 0);  // under the 5 s the server used to wait
	expect_error(reply(c.Post("/api/instances", bearer(reader), "", "")), 403, "42501", "operator");
	expect_error(reply(c.Post("/api/activities/succeed", bearer(""), std::string(300'000, '['), "application/json")),
				 401, "28000");
	expect_error(reply(c.Post("/api/activities/succeed", bearer(reader), std::string(300'000, '['),
							  "application/json")),
				 403, "42501", "worker");
}

TEST_P(HttpAuthTest, AnAdminMintsAWorkerTokenThatWorksUntilRevoked) {
	Reply made = post("/api/tokens", admin_, {{"name", "worker-eu-1"}, {"permissions", {"worker"}}});
	ASSERT_EQ(made.status, 201) << made.body.dump();
	EXPECT_EQ(made.body["created_by"], "root");
	EXPECT_EQ(made.body["permissions"], json::array({"worker"}));
	const std::string worker = made.body["token"];
	const std::string id = made.body["id"];

	Reply claimed = post("/api/activities/approve/claim", worker, {{"worker", "w1"}});
	EXPECT_EQ(claimed.status, 200) << claimed.body.dump();
	EXPECT_EQ(get("/api/instances", worker).status, 200);
	expect_error(get("/api/definitions", worker), 403, "42501", "reader");
	expect_error(post("/api/definitions", worker, {{"name", "h"}, {"definition", json::parse(kHello)}}), 403, "42501");

	Reply list = get("/api/tokens", admin_);
	ASSERT_EQ(list.status, 200);
	ASSERT_EQ(list.body["tokens"].size(), 2u);
	EXPECT_EQ(list.body.dump().find(worker.substr(worker.rfind('_') + 1)), std::string::npos) << "secret listed";
	expect_error(post("/api/tokens", admin_, {{"name", "x"}, {"permissions", {"root"}}}), 400, "22023",
				 "unknown permission \"root\"");
	expect_error(post("/api/tokens", admin_, {{"name", "x"}}), 400, "22004", "permissions");

	Reply revoked = del("/api/tokens/" + id, admin_);
	EXPECT_EQ(revoked.status, 200) << revoked.body.dump();
	EXPECT_EQ(revoked.body["status"], "revoked");
	// at once: the very next request
	expect_error(post("/api/activities/approve/claim", worker, {{"worker", "w1"}}), 401, "28000", "revoked");
	expect_error(post("/api/tokens/nosuchtoken/revoke", admin_), 404, "42704", "nosuchtoken");
	// an admin can revoke itself (POST form), and then it is out too
	const std::string admin_id = store_->token_verify(admin_).at("id");
	EXPECT_EQ(post("/api/tokens/" + admin_id + "/revoke", admin_).status, 200);
	expect_error(get("/api/tokens", admin_), 401, "28000");
}

TEST_P(HttpAuthTest, JwtUsersGetTheirGroupsPermissions) {
	const std::string dev = jwt("alice", {"dev"});
	EXPECT_EQ(post("/api/definitions", dev, {{"name", "hello"}, {"definition", json::parse(kHello)}}).status, 201);
	EXPECT_EQ(get("/api/instances", dev).status, 200);
	expect_error(post("/api/tokens", dev, {{"name", "x"}, {"permissions", {"reader"}}}), 403, "42501", "admin");
	// an ops user is an admin: the token records the subject
	Reply made = post("/api/tokens", jwt("bob", {"ops", "dev"}), {{"name", "ci"}, {"permissions", {"operator"}}});
	ASSERT_EQ(made.status, 201) << made.body.dump();
	EXPECT_EQ(made.body["created_by"], "bob");
	// no mapped group: authenticated, allowed nothing
	expect_error(get("/api/definitions", jwt("carol", {"sales"})), 403, "42501");
	expect_error(get("/api/definitions", jwt("alice", {"dev"}, -3600)), 401, "28000", "expired");
	expect_error(get("/api/definitions", auth::sign_jwt({{"alg", "HS256"}}, {{"sub", "eve"}, {"groups", {"ops"}},
												 {"exp", now_s() + 600}}, "another-secret-another-secret-another")),
				 401, "28000", "bad signature");
	std::string none = auth::base64url_encode(R"({"alg":"none"})") + "." +
					   auth::base64url_encode(json({{"sub", "eve"}, {"groups", {"ops"}}, {"exp", now_s() + 600}}).dump()) + ".";
	expect_error(get("/api/tokens", none), 401, "28000", "alg");
}

INSTANTIATE_TEST_SUITE_P(Stores, HttpAuthTest, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

// Without --auth the API is open, but nobody mints tokens over it.
TEST(HttpNoAuth, TheTokenRoutesNeedAuth) {
	TestDatabase db;
	std::string skip;
	db.create("sqlite", skip);
	const std::string url = db.url();
	ApiOptions o;
	o.listen = "127.0.0.1:0";
	auto server = start_api(o, [url] { return open_store(url); }, HealthInfo{});
	httplib::Client c("127.0.0.1", server->port());
	expect_error(reply(c.Post("/api/tokens", R"({"name":"x","permissions":["admin"]})", "application/json")), 403,
				 "42501", "--auth");
	expect_error(reply(c.Get("/api/tokens")), 403, "42501", "--auth");
	EXPECT_EQ(reply(c.Get("/api/definitions")).status, 200);
	server->stop();
	EXPECT_TRUE(open_store(url)->token_list().empty());
}

// ---- the binaries ---------------------------------------------------------------

class AuthProcessTest : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override {
		std::string skip;
		db_.create(GetParam(), skip);
		if (!skip.empty()) GTEST_SKIP() << skip;
		dir_ = test_dir("genroc-auth");
	}

	void TearDown() override {
		stop_api();
		db_.drop();
		if (!dir_.empty()) std::filesystem::remove_all(dir_);
	}

	Output genctl(std::vector<std::string> args) {
		args.insert(args.begin(), {kGenctl, "--database", db_.url()});
		return run(args);
	}

	std::string write_file(const std::string &name, const std::string &text) {
		auto p = dir_ / name;
		std::ofstream(p) << text;
		return p.string();
	}

	std::string log() const {
		std::ifstream in(log_path_);
		std::stringstream b;
		b << in.rdbuf();
		return b.str();
	}

	// `genroc api` in the background (JSON log lines in api-N.log); returns the
	// port once it listens, or 0 when it exited first.
	int start_api_process(const std::vector<std::string> &extra, const std::string &listen = "127.0.0.1:0",
						  const std::string &database = "") {
		// --auth with the token routes: genroc_admin (docs/security.md "Roles and ownership")
		std::vector<std::string> argv = {kGenroc, "api", "--database",
										 database.empty() ? binary_url(db_.url(), "admin") : database,
										 "--listen", listen,
										 "--log-mode", "json"};
		argv.insert(argv.end(), extra.begin(), extra.end());
		// A log of its own per start, so no line of an earlier run is read.
		log_path_ = (dir_ / ("api-" + std::to_string(++starts_) + ".log")).string();
		pid_ = spawn_logged(argv, log_path_);
		for (int i = 0; i < 600; i++) {	 // polls the log, up to 30s
			std::istringstream lines(log());
			for (std::string line; std::getline(lines, line);) {
				json j = json::parse(line, nullptr, false);
				if (!j.is_discarded() && j.value("msg", "") == "HTTP API listening") {
					std::string l = j.value("listen", "");
					return std::stoi(l.substr(l.rfind(':') + 1));
				}
			}
			int st = 0;
			if (waitpid(pid_, &st, WNOHANG) == pid_) {
				exit_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
				pid_ = -1;
				return 0;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
		ADD_FAILURE() << "genroc api did not start: " << log();
		return 0;
	}

	void stop_api() {
		if (pid_ <= 0) return;
		kill(pid_, SIGTERM);
		int st = 0;
		waitpid(pid_, &st, 0);
		pid_ = -1;
	}

	TestDatabase db_;
	std::filesystem::path dir_;
	pid_t pid_ = -1;
	int exit_status_ = -1;
	int starts_ = 0;
	std::string log_path_;
};

TEST_P(AuthProcessTest, TokenCreateThenGenctlListsAndRevokes) {
	Output o = run({kGenroc, "token", "create", "--database", db_.url(), "--name", "root", "--permissions", "admin"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const std::string token = o.out.substr(0, o.out.find('\n'));
	EXPECT_TRUE(std::regex_match(token, std::regex("grt_[a-z0-9]{12}_[A-Za-z0-9]{64}"))) << o.out;
	EXPECT_EQ(o.out, token + "\n");	 // the text alone on stdout
	EXPECT_NE(o.err.find("shown this once"), std::string::npos) << o.err;
	const std::string id = token.substr(4, 12);

	o = run({kGenroc, "token", "create", "--database", db_.url(), "--name", "ci", "--permissions", "operator,reader",
			 "--json"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json ci = json::parse(o.out);
	EXPECT_EQ(ci["permissions"], json::array({"operator", "reader"}));
	EXPECT_EQ(ci["created_by"], "cli");

	o = genctl({"token", "list"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("ID"), std::string::npos);
	EXPECT_NE(o.out.find(id), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("operator,reader"), std::string::npos) << o.out;
	EXPECT_EQ(o.out.find(token.substr(17)), std::string::npos) << "the secret is listed";
	o = genctl({"--json", "token", "list"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json list = json::parse(o.out);
	ASSERT_EQ(list.size(), 2u);
	EXPECT_EQ(list[0]["name"], "root");
	EXPECT_EQ(list[0]["created_by"], "cli");
	EXPECT_TRUE(list[0]["revoked_at"].is_null());

	EXPECT_FALSE(open_store(db_.url())->token_verify(token).is_null());
	o = genctl({"token", "revoke", id});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "token " + id + " revoked\n");
	EXPECT_TRUE(open_store(db_.url())->token_verify(token).is_null());
	EXPECT_FALSE(json::parse(genctl({"--json", "token", "list"}).out)[0]["revoked_at"].is_null());

	o = genctl({"token", "revoke", "nosuchtoken"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("42704"), std::string::npos) << o.err;
	o = run({kGenroc, "token", "create", "--database", db_.url(), "--name", "x", "--permissions", "root"});
	EXPECT_EQ(o.exit_code, 2);
	EXPECT_NE(o.err.find("unknown permission \"root\""), std::string::npos) << o.err;
}

TEST_P(AuthProcessTest, ASeededWorkerTokenServesAndAConflictingSeedStopsTheStart) {
	// a token text as docs/security.md "Authentication" tells operators to make one:
	// grt_ + 12 hex + _ + 64 hex (openssl rand -hex 6 / -hex 32)
	const std::string seed = "grt_0a1b2c3d4e5f_" + std::string(32, 'c') + std::string(32, '7');
	const std::string file = write_file(
		"seed.json", json({{"tokens", {{{"name", "worker-eu-1"}, {"token", seed}, {"permissions", {"worker"}}}}}}).dump());
	int port = start_api_process({"--auth", "--seed-tokens", file});
	ASSERT_GT(port, 0) << log();
	EXPECT_NE(log().find("seed token created"), std::string::npos) << log();
	EXPECT_EQ(log().find(seed.substr(17)), std::string::npos) << "the log shows a secret";
	httplib::Client c("127.0.0.1", port);
	httplib::Headers h = {{"Authorization", "Bearer " + seed}};
	EXPECT_EQ(reply(c.Get("/api/instances", h)).status, 200);
	expect_error(reply(c.Post("/api/definitions", h, R"({"name":"x","definition":{}})", "application/json")), 403,
				 "42501");
	expect_error(reply(c.Get("/api/instances")), 401, "28000");
	EXPECT_EQ(c.Get("/healthz")->status, 200);
	stop_api();

	// the same file again: the token is present, not made twice
	port = start_api_process({"--auth", "--seed-tokens", file});
	ASSERT_GT(port, 0) << log();
	EXPECT_NE(log().find("seed token present"), std::string::npos) << log();
	stop_api();
	EXPECT_EQ(open_store(db_.url())->token_list().size(), 1u);

	// the same id with another secret: genroc refuses to start, naming it
	std::string other = seed;
	other.back() = '8';
	const std::string bad = write_file(
		"bad.json", json({{"tokens", {{{"name", "worker-eu-1"}, {"token", other}, {"permissions", {"worker"}}}}}}).dump());
	EXPECT_EQ(start_api_process({"--auth", "--seed-tokens", bad}), 0);
	EXPECT_EQ(exit_status_, 1);
	EXPECT_NE(log().find("0a1b2c3d4e5f"), std::string::npos) << log();
	EXPECT_EQ(log().find(other.substr(17)), std::string::npos) << "the log shows a secret";
}

TEST_P(AuthProcessTest, AnExposedPortWarnsOnlyWithoutAuth) {
	ASSERT_GT(start_api_process({}, "0.0.0.0:0"), 0) << log();
	EXPECT_NE(log().find("no authentication"), std::string::npos) << log();
	stop_api();
	ASSERT_GT(start_api_process({"--auth"}, "0.0.0.0:0"), 0) << log();
	EXPECT_EQ(log().find("no authentication"), std::string::npos) << log();
	stop_api();
	// flags that make no sense alone are usage errors
	Output o = run({kGenroc, "api", "--database", db_.url(), "--jwt-secret", kJwtSecret});
	EXPECT_EQ(o.exit_code, 2);
	EXPECT_NE(o.err.find("--jwt-secret: needs --auth"), std::string::npos) << o.err;
	o = run({kGenroc, "api", "--database", db_.url(), "--auth", "--jwt-secret", "short"});
	EXPECT_EQ(o.exit_code, 2);
	o = run({kGenroc, "api", "--database", db_.url(), "--auth", "--jwt-secret", kJwtSecret, "--jwt-groups",
			 R"({"ops":["root"]})"});
	EXPECT_EQ(o.exit_code, 2);
	EXPECT_NE(o.err.find("unknown permission"), std::string::npos) << o.err;
}

// On PostgreSQL genroc checks its role at start: a role without the groups
// `genroc api` needs, then one that may not run token_verify with --auth,
// makes genroc refuse to start, saying what is missing.
TEST_P(AuthProcessTest, WithoutTheGrantAuthRefusesToStart) {
	if (GetParam() != "postgres") GTEST_SKIP() << "PostgreSQL privileges only";
	const std::string role = "genroc_auth_app_" + std::to_string(getpid());
	const std::string admin = db_.url();
	std::string url = admin;
	const size_t from = url.find("://") + 3, at = url.find('@');
	ASSERT_NE(at, std::string::npos) << url;
	url.replace(from, at - from, role);
	pg_exec(admin, "CREATE ROLE " + role + " LOGIN");
	EXPECT_EQ(start_api_process({}, "127.0.0.1:0", url), 0);
	EXPECT_EQ(exit_status_, 1);
	EXPECT_NE(log().find("the database role lacks"), std::string::npos) << log();
	EXPECT_NE(log().find("genroc_user"), std::string::npos) << log();
	EXPECT_NE(log().find("genroc_operator"), std::string::npos) << log();
	pg_exec(admin, "GRANT genroc_user, genroc_operator TO " + role);
	EXPECT_EQ(start_api_process({"--auth"}, "127.0.0.1:0", url), 0);
	EXPECT_EQ(exit_status_, 1);
	EXPECT_NE(log().find("EXECUTE ON FUNCTION genroc.token_verify(text)"), std::string::npos) << log();
	EXPECT_EQ(log().find("genroc_user"), std::string::npos) << log();
	pg_exec(admin, "GRANT EXECUTE ON FUNCTION genroc.token_verify(text) TO " + role);
	EXPECT_GT(start_api_process({"--auth"}, "127.0.0.1:0", url), 0) << log();
	stop_api();
	pg_exec(admin, "REVOKE EXECUTE ON FUNCTION genroc.token_verify(text) FROM " + role);
	pg_exec(admin, "REVOKE genroc_user, genroc_operator FROM " + role);
	pg_exec(admin, "DROP ROLE " + role);
}

INSTANTIATE_TEST_SUITE_P(Stores, AuthProcessTest, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e::auth_test
