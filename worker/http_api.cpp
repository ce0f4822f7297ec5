// http_api.cpp — GET /healthz and the /api routes over cpp-httplib.
//
// Glossary
//   pool      the idle Store objects shared by the server's threads; a request
//             borrows one, and gives it back unless its connection failed
//   call      one request being served: its parsed input, the Store it
//             borrowed (opened lazily, so requests refused for bad input never
//             touch the database) and the instance id it concerns, for the log
//   ApiError  an error the server raises itself, with the HTTP status it wants
//             when the SQLSTATE alone does not say it (413, 404 for a route)
#include "http_api.hpp"

#include <httplib.h>

#include <strings.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <chrono>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "log.hpp"

namespace genroc {

namespace {

constexpr size_t kMaxIdleStores = 4;
constexpr int kMaxClaim = 1000;	 // a claim batch larger than this is a client bug

// An error raised by the server before (or instead of) a Store call.
struct ApiError : Error {
	ApiError(int status, std::string sqlstate, const std::string &message)
		: Error(std::move(sqlstate), message), status(status) {}
	int status;
};

ApiError invalid(const std::string &message) { return ApiError(400, "22023", message); }

bool transient_sqlstate(const std::string &s) {
	return s.rfind("08", 0) == 0 || s.rfind("57P0", 0) == 0;
}

// Idle stores shared by the request threads.  A request never holds the lock
// while it uses a store, so a slow statement blocks nobody else.
class StorePool {
  public:
	explicit StorePool(std::function<std::unique_ptr<Store>()> open) : open_(std::move(open)) {}

	std::unique_ptr<Store> take() {
		{
			std::lock_guard<std::mutex> g(mu_);
			if (!idle_.empty()) {
				auto s = std::move(idle_.back());
				idle_.pop_back();
				return s;
			}
		}
		// Opening may connect to a server: never under the lock.
		auto s = open_();
		if (!s) throw Error("XX000", "the store factory returned no store");
		std::lock_guard<std::mutex> g(mu_);
		kind_ = s->kind();
		return s;
	}

	void give_back(std::unique_ptr<Store> s) {
		std::lock_guard<std::mutex> g(mu_);
		if (idle_.size() < kMaxIdleStores) idle_.push_back(std::move(s));
	}

	// "postgres" or "sqlite" once a store has been opened, else empty.
	std::string kind() {
		std::lock_guard<std::mutex> g(mu_);
		return kind_;
	}

  private:
	std::function<std::unique_ptr<Store>()> open_;
	std::mutex mu_;
	std::vector<std::unique_ptr<Store>> idle_;
	std::string kind_;
};

// ---- request input --------------------------------------------------------

struct Call {
	Call(const httplib::Request &r, StorePool &p, size_t limit) : req(r), pool(p), max_body(limit) {}

	const httplib::Request &req;
	StorePool &pool;
	size_t max_body;
	std::unique_ptr<Store> store_;
	int status = 200;
	std::optional<int64_t> instance;  // for the log line of an error
	bool auth = false;				  // the server runs with --auth
	std::optional<auth::Principal> who;	 // the caller, once authenticated

	Store &store() {
		if (!store_) store_ = pool.take();
		return *store_;
	}

	// The body as a JSON object; an empty body is {} when allowed.
	json body(bool empty_ok = false) const {
		// httplib enforces the limit on bodies with a Content-Length; a
		// chunked body is checked here, once it has been read.
		if (req.body.size() > max_body)
			throw ApiError(413, "54000",
						   "request body is over the limit of " + std::to_string(max_body) + " bytes");
		if (req.body.empty() && empty_ok) return json::object();
		json j;
		try {
			j = json::parse(req.body);
		} catch (const json::parse_error &e) {
			std::string what = e.what();
			// Drop nlohmann's "[json.exception.parse_error.101] " prefix.
			auto close = what.find("] ");
			if (close != std::string::npos) what = what.substr(close + 2);
			throw ApiError(400, "22P02", "request body is not valid JSON: " + what);
		}
		if (!j.is_object()) throw invalid("request body must be a JSON object");
		return j;
	}
};

const char *type_name(const json &v) {
	switch (v.type()) {
		case json::value_t::null: return "null";
		case json::value_t::boolean: return "a boolean";
		case json::value_t::string: return "a string";
		case json::value_t::array: return "an array";
		case json::value_t::object: return "an object";
		default: return "a number";
	}
}

// Refuses fields the route does not know (a typo must not be ignored).
void only_fields(const json &body, std::initializer_list<std::string_view> known) {
	for (auto &[key, value] : body.items()) {
		bool ok = false;
		for (auto k : known) ok = ok || key == k;
		if (!ok) throw invalid("unknown field \"" + key + "\"");
	}
}

// A field, or nullptr when it is absent or null.
const json *field(const json &body, const char *name) {
	auto it = body.find(name);
	if (it == body.end() || it->is_null()) return nullptr;
	return &*it;
}

std::string string_field(const json &body, const char *name, bool required,
						 const std::string &fallback = {}) {
	const json *v = field(body, name);
	if (!v) {
		if (required)
			throw ApiError(400, "22004", std::string("missing required field \"") + name + "\"");
		return fallback;
	}
	if (!v->is_string())
		throw invalid(std::string("field \"") + name + "\" must be a string, not " + type_name(*v));
	if (required && v->get_ref<const std::string &>().empty())
		throw invalid(std::string("field \"") + name + "\" must not be empty");
	return v->get<std::string>();
}

json object_field(const json &body, const char *name, bool required) {
	const json *v = field(body, name);
	if (!v) {
		if (required)
			throw ApiError(400, "22004", std::string("missing required field \"") + name + "\"");
		return json::object();
	}
	if (!v->is_object())
		throw invalid(std::string("field \"") + name + "\" must be an object, not " + type_name(*v));
	return *v;
}

int int_field(const json &body, const char *name, int fallback, int lo, int hi) {
	const json *v = field(body, name);
	if (!v) return fallback;
	if (!v->is_number_integer())
		throw invalid(std::string("field \"") + name + "\" must be an integer, not " +
					  (v->is_number() ? "a fraction" : type_name(*v)));
	auto n = v->get<int64_t>();
	if (n < lo || n > hi)
		throw invalid(std::string("field \"") + name + "\" must be between " + std::to_string(lo) +
					  " and " + std::to_string(hi));
	return static_cast<int>(n);
}

// A whole decimal number in [lo, hi], or nullopt.
std::optional<int64_t> parse_int(std::string_view text, int64_t lo, int64_t hi) {
	int64_t v = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
		return std::nullopt;
	return v;
}

int64_t instance_id(Call &call) {
	const std::string text = call.req.matches[1];
	auto id = parse_int(text, 1, INT64_MAX);
	if (!id) throw invalid("instance id \"" + text + "\" is not a positive integer");
	call.instance = *id;
	return *id;
}

// ---- output ---------------------------------------------------------------

template <class J>
void send_json(httplib::Response &res, int status, const J &body) {
	res.status = status;
	// Replace invalid UTF-8 rather than throw halfway through a response.
	res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
					"application/json");
}

json error_body(const Error &e) {
	json err = {{"sqlstate", e.sqlstate}, {"message", e.what()}};
	if (!e.detail.empty()) err["detail"] = e.detail;
	if (!e.hint.empty()) err["hint"] = e.hint;
	return json{{"error", err}};
}

json task_json(const ActivityTask &t) {
	return {{"token", t.token},
			{"instance_id", t.instance_id},
			{"activity", t.activity},
			{"input", t.input},
			{"heartbeat_s", t.heartbeat_s ? json(*t.heartbeat_s) : json(nullptr)},
			{"timeout_s", t.timeout_s ? json(*t.timeout_s) : json(nullptr)}};
}

// ---- the routes -----------------------------------------------------------

json post_definition(Call &c) {
	json body = c.body();
	only_fields(body, {"name", "definition"});
	std::string name = string_field(body, "name", true);
	json definition = object_field(body, "definition", true);
	DefineResult r = c.store().define(name, definition);
	c.status = r.is_new ? 201 : 200;
	return {{"name", r.name}, {"version", r.version}, {"is_new", r.is_new}};
}

json get_definitions(Call &c) { return {{"definitions", c.store().list_definitions()}}; }

json post_instance(Call &c) {
	json body = c.body();
	only_fields(body, {"definition", "input", "options"});
	std::string definition = string_field(body, "definition", true);
	// The input of a state machine may be any JSON value; absent means {}.
	auto it = body.find("input");
	json input = it == body.end() ? json::object() : *it;
	json options = object_field(body, "options", false);
	StartResult r = c.store().start(definition, input, options);
	c.instance = r.instance_id;
	c.status = r.is_new ? 201 : 200;
	return {{"instance_id", r.instance_id}, {"is_new", r.is_new}, {"status", r.status}};
}

json get_instances(Call &c) {
	json filter = json::object();
	for (const auto &[key, value] : c.req.params) {
		if (key == "status" || key == "definition") {
			if (value.empty()) throw invalid("query parameter \"" + key + "\" must not be empty");
			filter[key] = value;
		} else if (key == "label") {
			auto colon = value.find(':');
			if (colon == std::string::npos || colon == 0)
				throw invalid("query parameter \"label\" must be key:value, got \"" + value + "\"");
			if (!filter.contains("label")) filter["label"] = json::object();
			filter["label"][value.substr(0, colon)] = value.substr(colon + 1);
		} else if (key == "limit") {
			auto n = parse_int(value, 1, INT32_MAX);
			if (!n) throw invalid("query parameter \"limit\" must be a positive integer, got \"" + value + "\"");
			filter["limit"] = *n;
		} else if (key == "root") {
			auto n = parse_int(value, 1, INT64_MAX);
			if (!n) throw invalid("query parameter \"root\" must be an instance id, got \"" + value + "\"");
			filter["root"] = *n;
		} else {
			throw invalid("unknown query parameter \"" + key + "\"");
		}
	}
	return {{"instances", c.store().list_instances(filter)}};
}

json get_instance(Call &c) {
	int64_t id = instance_id(c);  // validated before the store is borrowed
	return c.store().get_instance(id);
}

json get_history(Call &c) {
	int64_t id = instance_id(c);
	json h = c.store().history(id);
	// An instance always has at least its start in its log, so an empty log
	// may mean an unknown id: let get_instance say so (RC003, 404).
	if (h.empty()) c.store().get_instance(id);
	return {{"instance_id", id}, {"history", h}};
}

json post_cancel(Call &c) {
	int64_t id = instance_id(c);
	only_fields(c.body(true), {});
	std::string status = c.store().cancel(id);
	return {{"instance_id", id}, {"status", status}};
}

json post_retry(Call &c) {
	int64_t id = instance_id(c);
	only_fields(c.body(true), {});
	return {{"instance_id", id}, {"status", c.store().retry(id)}};
}

json post_resume(Call &c) {
	int64_t id = instance_id(c);
	json body = c.body(true);
	only_fields(body, {"output"});
	auto it = body.find("output");
	return {{"instance_id", id}, {"status", c.store().resume(id, it == body.end() ? json(nullptr) : *it)}};
}

// The body is the event's payload (any JSON; none is null).
json post_event(Call &c) {
	int64_t id = instance_id(c);
	const std::string name = c.req.matches[2];
	json payload = c.req.body.empty() ? json(nullptr) : c.body();
	std::string result = c.store().emit(id, name, payload);
	return {{"instance_id", id}, {"event", name}, {"result", result}};
}

json post_claim(Call &c) {
	const std::string activity = c.req.matches[1];
	json body = c.body();
	only_fields(body, {"worker", "n"});
	std::string worker = string_field(body, "worker", true);
	int n = int_field(body, "n", 1, 1, kMaxClaim);
	json tasks = json::array();
	for (const auto &t : c.store().claim_activity(activity, worker, n)) tasks.push_back(task_json(t));
	return {{"tasks", tasks}};
}

json post_succeed(Call &c) {
	json body = c.body();
	only_fields(body, {"token", "output"});
	std::string token = string_field(body, "token", true);
	auto it = body.find("output");
	json output = it == body.end() ? json::object() : *it;
	return {{"status", c.store().activity_succeed(token, output)}};
}

json post_fail(Call &c) {
	json body = c.body();
	only_fields(body, {"token", "error", "cause"});
	std::string token = string_field(body, "token", true);
	std::string error = string_field(body, "error", true);
	std::string cause = string_field(body, "cause", false);
	return {{"status", c.store().activity_fail(token, error, cause)}};
}

json post_heartbeat(Call &c) {
	json body = c.body();
	only_fields(body, {"token"});
	c.store().activity_heartbeat(string_field(body, "token", true));
	return {{"ok", true}};
}

json get_workers(Call &c) { return {{"workers", c.store().list_workers()}}; }

// The token routes: with --auth only (without it anyone could mint tokens
// that would hold once --auth is turned on).
void tokens_need_auth(const Call &c) {
	if (!c.auth || !c.who)
		throw ApiError(403, "42501", "the token routes are served only with --auth");
}

json post_token(Call &c) {
	tokens_need_auth(c);
	json body = c.body();
	only_fields(body, {"name", "permissions"});
	std::string name = string_field(body, "name", true);
	const json *perms = field(body, "permissions");
	if (!perms) throw ApiError(400, "22004", "missing required field \"permissions\"");
	if (!perms->is_array()) throw invalid(std::string("field \"permissions\" must be an array, not ") + type_name(*perms));
	std::vector<std::string> list;
	for (const auto &p : *perms) {
		if (!p.is_string()) throw invalid("field \"permissions\" must be an array of strings");
		list.push_back(p.get<std::string>());
	}
	json t = c.store().token_create(name, list, c.who->name, std::nullopt);
	t.erase("is_new");
	c.status = 201;
	return t;
}

json get_tokens(Call &c) {
	tokens_need_auth(c);
	return {{"tokens", c.store().token_list()}};
}

json revoke_token(Call &c) {
	tokens_need_auth(c);
	const std::string id = c.req.matches[1];
	if (c.req.method == "POST") only_fields(c.body(true), {});
	c.store().token_revoke(id);
	return {{"id", id}, {"status", "revoked"}};
}

// ---- the server -----------------------------------------------------------

bool is_loopback(const std::string &host) {
	return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

class HttpServer final : public ApiServer {
  public:
	HttpServer(const ApiOptions &options, std::function<std::unique_ptr<Store>()> open_store,
			   HealthInfo health)
		: options_(options), pool_(std::move(open_store)), health_(std::move(health)) {}

	~HttpServer() override { stop(); }

	void start() {
		std::string host;
		int port = 0;
		parse_listen(options_.listen, host, port);
		routes();

		errno = 0;
		int bound = port == 0 ? svr_.bind_to_any_port(host) : (svr_.bind_to_port(host, port) ? port : -1);
		if (bound <= 0) {
			// httplib reports only failure; errno is what the failed
			// getaddrinfo/bind/listen left behind.
			std::string why = errno ? std::strerror(errno) : "the address is not available";
			throw std::runtime_error("cannot listen on " + options_.listen + ": " + why);
		}
		port_ = bound;
		thread_ = std::thread([this] {
			if (!svr_.listen_after_bind()) listen_failed_ = true;
		});
		// stop() only works once the listener runs (httplib ignores it
		// before), so wait for the thread to get there: the first thing
		// listen_after_bind does is mark the server running.
		while (!svr_.is_running() && !listen_failed_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
		if (listen_failed_) {
			stop();
			throw std::runtime_error("cannot listen on " + options_.listen + ": the listener stopped at once");
		}

		// The kind of database, for /healthz even before its first request
		// and while the database is down.  A database that is down now is not
		// an error here: /healthz reports it.
		try {
			pool_.give_back(pool_.take());
		} catch (const std::exception &e) {
			log::warn("database not reachable yet", {{"error", e.what()}});
		}

		log::info("HTTP API listening", {{"listen", host + ":" + std::to_string(port_)}, {"auth", options_.auth}});
		if (!is_loopback(host) && !options_.auth)
			log::warn("the HTTP API is reachable from other machines and has no authentication (see --auth)",
					  {{"listen", options_.listen}});
	}

	void stop() override {
		if (stopped_.exchange(true)) return;
		svr_.stop();
		if (thread_.joinable()) thread_.join();
	}

	int port() const override { return port_; }

  private:
	ApiOptions options_;
	StorePool pool_;
	HealthInfo health_;
	httplib::Server svr_;
	std::thread thread_;
	int port_ = 0;
	std::atomic<bool> stopped_{false};
	std::atomic<bool> listen_failed_{false};
	std::atomic<int> db_up_{-1};  // last /healthz verdict: -1 none yet, 0 down, 1 up

	using Route = json (*)(Call &);

	httplib::Server::Handler wrap(Route fn, const auth::Need &need) {
		return [this, fn, &need](const httplib::Request &req, httplib::Response &res) { serve(fn, need, req, res); };
	}

	// With --auth: who is calling (a token, checked in the store on every
	// request, or a JWT), and may they call this route.
	void authenticate(Call &c, const auth::Need &need) {
		const std::string header = c.req.get_header_value("Authorization");
		if (header.empty())
			throw ApiError(401, "28000", "authentication required: send Authorization: Bearer <token>");
		if (header.size() < 7 || strncasecmp(header.c_str(), "Bearer ", 7) != 0)
			throw ApiError(401, "28000", "the Authorization header must read Bearer <token>");
		std::string credential = header.substr(7);
		while (!credential.empty() && credential.front() == ' ') credential.erase(0, 1);
		while (!credential.empty() && credential.back() == ' ') credential.pop_back();
		if (credential.empty()) throw ApiError(401, "28000", "the Bearer token is empty");
		if (auth::looks_like_jwt(credential)) {
			const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
									  std::chrono::system_clock::now().time_since_epoch())
									  .count();
			try {
				c.who = auth::verify_jwt(credential, options_.jwt_secret, options_.jwt_groups, now_s);
			} catch (const auth::Refused &e) {
				throw ApiError(401, "28000", e.what());
			}
		} else {
			json v = c.store().token_verify(credential);
			if (v.is_null()) throw ApiError(401, "28000", "the token is unknown or revoked");
			auth::Principal who{v.at("name").get<std::string>(), {}};
			for (const auto &p : v.at("permissions")) who.permissions.insert(p.get<std::string>());
			c.who = std::move(who);
		}
		if (!auth::allows(*c.who, need))
			throw ApiError(403, "42501",
						   "permission denied: " + c.req.method + " " + c.req.path + " needs " + auth::describe(need));
	}

	void serve(Route fn, const auth::Need &need, const httplib::Request &req, httplib::Response &res) {
		Call call{req, pool_, options_.max_body};
		call.auth = options_.auth;
		try {
			if (options_.auth) authenticate(call, need);
			json out = fn(call);
			send_json(res, call.status, out);
		} catch (const ApiError &e) {
			fail(call, res, e.status, e);
		} catch (const Error &e) {
			// The connection may be gone: do not give this store back.
			if (transient_sqlstate(e.sqlstate)) call.store_.reset();
			fail(call, res, http_status_for(e.sqlstate), e);
		} catch (const std::exception &e) {
			call.store_.reset();
			fail(call, res, 500, Error("XX000", std::string("internal error: ") + e.what()));
		}
		if (call.store_) pool_.give_back(std::move(call.store_));
	}

	// The one place an API error is logged.
	void fail(const Call &call, httplib::Response &res, int status, const Error &e) {
		json fields = {{"method", call.req.method}, {"path", call.req.path}, {"status", status},
					   {"sqlstate", e.sqlstate}};
		if (call.instance) fields["instance"] = *call.instance;
		if (call.who) fields["caller"] = call.who->name;
		log::write(status >= 500 ? log::Level::error : log::Level::info,
				   std::string("api: ") + e.what(), fields);
		// RFC 6750: a 401 names the scheme it wants.
		if (status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"genroc\"");
		send_json(res, status, error_body(e));
	}

	void healthz(httplib::Response &res) {
		bool up = false;
		std::string why;
		std::string kind;
		try {
			auto s = pool_.take();
			kind = s->kind();
			up = s->ping();
			if (up)
				pool_.give_back(std::move(s));
			else
				why = "the database did not answer";
		} catch (const std::exception &e) {
			why = e.what();
		}
		if (kind.empty()) kind = pool_.kind();

		// Log changes of state only: a probe every second must not flood the log.
		int was = db_up_.exchange(up ? 1 : 0);
		if (!up && was != 0) log::warn("healthz: database unreachable", {{"error", why}});
		if (up && was == 0) log::info("healthz: database reachable again");

		int64_t age = health_.lease_age_ms ? health_.lease_age_ms() : -1;
		nlohmann::ordered_json body;
		body["status"] = up ? "ok" : "unavailable";
		body["worker_id"] = health_.worker_id;
		body["database"] = kind.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(kind);
		body["lease_age_ms"] = age < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(age);
		body["manual_tick"] = health_.manual_tick;
		send_json(res, up ? 200 : 503, body);
	}

	void routes() {
		svr_.set_payload_max_length(options_.max_body);
		// httplib's default also sets SO_REUSEPORT, which would let a second
		// genroc bind the same port silently; SO_REUSEADDR alone still allows
		// a restart while old connections sit in TIME_WAIT.
		svr_.set_socket_options([](socket_t sock) {
			int yes = 1;
			setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
		});
		// A shutdown waits for idle keep-alive connections: keep that short.
		svr_.set_keep_alive_timeout(2);

		svr_.Get("/healthz", [this](const httplib::Request &, httplib::Response &res) { healthz(res); });

		// Each route with the permission it needs under --auth (README "HTTP API").
		using namespace auth;
		svr_.Post("/api/definitions", wrap(post_definition, need_operate()));
		svr_.Get("/api/definitions", wrap(get_definitions, need_read()));
		svr_.Post("/api/instances", wrap(post_instance, need_operate()));
		svr_.Get("/api/instances", wrap(get_instances, need_read_instances()));
		svr_.Get(R"(/api/instances/([^/]+))", wrap(get_instance, need_read_instances()));
		svr_.Get(R"(/api/instances/([^/]+)/history)", wrap(get_history, need_read_instances()));
		svr_.Post(R"(/api/instances/([^/]+)/cancel)", wrap(post_cancel, need_operate()));
		svr_.Post(R"(/api/instances/([^/]+)/retry)", wrap(post_retry, need_operate()));
		svr_.Post(R"(/api/instances/([^/]+)/resume)", wrap(post_resume, need_operate()));
		svr_.Post(R"(/api/instances/([^/]+)/events/([^/]+))", wrap(post_event, need_operate()));
		svr_.Post("/api/activities/succeed", wrap(post_succeed, need_work()));
		svr_.Post("/api/activities/fail", wrap(post_fail, need_work()));
		svr_.Post("/api/activities/heartbeat", wrap(post_heartbeat, need_work()));
		svr_.Post(R"(/api/activities/([^/]+)/claim)", wrap(post_claim, need_work()));
		svr_.Get("/api/workers", wrap(get_workers, need_read()));
		svr_.Post("/api/tokens", wrap(post_token, need_admin()));
		svr_.Get("/api/tokens", wrap(get_tokens, need_admin()));
		svr_.Delete(R"(/api/tokens/([^/]+))", wrap(revoke_token, need_admin()));
		svr_.Post(R"(/api/tokens/([^/]+)/revoke)", wrap(revoke_token, need_admin()));

		// Errors httplib answers itself (no route, body too large, a request
		// it cannot parse) get the same JSON shape as ours.
		svr_.set_error_handler(httplib::Server::HandlerWithResponse(
			[this](const httplib::Request &req, httplib::Response &res) {
			if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
			Call call{req, pool_, options_.max_body};
			if (res.status == 404)
				fail(call, res, 404, Error("42883", "no route for " + req.method + " " + req.path));
			else if (res.status == 413)
				fail(call, res, 413, Error("54000", "request body is over the limit of " +
														 std::to_string(options_.max_body) + " bytes"));
			else
				fail(call, res, res.status, Error(res.status >= 500 ? "XX000" : "08P01",
												  "the request was refused (HTTP " +
													  std::to_string(res.status) + ")"));
			return httplib::Server::HandlerResponse::Handled;
		}));
		svr_.set_exception_handler(
			[this](const httplib::Request &req, httplib::Response &res, std::exception_ptr ep) {
				std::string what = "unknown exception";
				try {
					std::rethrow_exception(ep);
				} catch (const std::exception &e) {
					what = e.what();
				} catch (...) {
				}
				Call call{req, pool_, options_.max_body};
				fail(call, res, 500, Error("XX000", "internal error: " + what));
			});
	}
};

}  // namespace

int http_status_for(const std::string &s) {
	if (s == sqlstate::INVALID_DEFINITION || s.rfind("22", 0) == 0) return 400;
	if (s == "28000") return 401;
	if (s == "42501") return 403;
	if (s == sqlstate::DEFINITION_NOT_FOUND || s == sqlstate::INSTANCE_NOT_FOUND || s == "42704") return 404;
	if (s == sqlstate::LEASE_LOST || s == sqlstate::WORKER_ID_IN_USE ||
		s == sqlstate::WORKER_NOT_REGISTERED || s == sqlstate::TASK_TOKEN_INVALID ||
		s == sqlstate::INSTANCE_ENDED || s == sqlstate::INSTANCE_NOT_FAILED || s == "23505")
		return 409;
	if (s == "40P01" || s == "40001") return 409;  // lost a race (deadlock, serialization): send again
	if (transient_sqlstate(s)) return 503;
	return 500;
}

void parse_listen(const std::string &listen, std::string &host, int &port) {
	auto bad = [&] {
		return std::runtime_error("--listen \"" + listen + "\" is not host:port (e.g. 127.0.0.1:8448)");
	};
	std::string h;
	std::string p;
	if (!listen.empty() && listen[0] == '[') {
		auto close = listen.find(']');
		if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
			throw bad();
		h = listen.substr(1, close - 1);
		p = listen.substr(close + 2);
	} else {
		auto colon = listen.rfind(':');
		if (colon == std::string::npos) throw bad();
		h = listen.substr(0, colon);
		p = listen.substr(colon + 1);
		if (h.find(':') != std::string::npos) throw bad();	// IPv6 needs brackets
	}
	auto n = parse_int(p, 0, 65535);
	if (!n) throw bad();
	host = h.empty() ? "0.0.0.0" : h;
	port = static_cast<int>(*n);
}

std::unique_ptr<ApiServer> start_api(const ApiOptions &options,
									 std::function<std::unique_ptr<Store>()> open_store,
									 HealthInfo health) {
	if (!open_store) throw std::runtime_error("start_api: no store factory");
	auto server = std::make_unique<HttpServer>(options, std::move(open_store), std::move(health));
	server->start();
	return server;
}

}  // namespace genroc
