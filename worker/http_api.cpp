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
//   Conn      one client connection, served by a thread of its own: its socket,
//             read buffer and the deadlines of the request being read
//
// Hostile and slow clients.  cpp-httplib 0.11 (Debian 12) serves each
// connection on one thread of a fixed pool of 8, with a read timeout per
// recv() only: a client sending a header line a second holds a thread for
// ever, and 8 of them stop the server (/healthz included).  So this file
// replaces the two pieces httplib lets a program replace: the task queue
// (a thread per connection, up to max_connections; beyond it a 503 and the
// socket closed at once) and process_and_close_socket, which reads through
// ConnStream: a deadline for the whole request (headers and body), a cap on
// header bytes, read/write/keep-alive timeouts, and an end on stop().  Parsing
// and routing stay httplib's (Server::process_request).
#include "http_api.hpp"

#include <httplib.h>
#include <openssl/rand.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <map>
#include <mutex>
#include <regex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "instance_actions.hpp"
#include "json_guard.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "queue_health.hpp"
#include "sigv4.hpp"
#include "ui_assets.hpp"

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
	Call(const httplib::Request &r, StorePool &p) : req(r), pool(p) {}

	const httplib::Request &req;
	StorePool &pool;
	std::string raw;  // the request body, read by HttpServer::read_body
	std::unique_ptr<Store> store_;
	int status = 200;
	std::optional<int64_t> instance;  // for the log line of an error
	bool auth = false;				  // the server runs with --auth
	size_t max_response = SIZE_MAX;	  // a list answer's bytes (ApiOptions::max_response)
	std::optional<std::string> text;  // a list answer's JSON text, built row by row (list_row)
	size_t rows = 0;				  // rows in text so far
	std::optional<auth::Principal> who;	 // the caller, once authenticated
	const std::string *sigv4_key = nullptr;	 // --sigv4-key-file's key (POST /api/tokens with sigv4)

	Store &store() {
		if (!store_) store_ = pool.take();
		return *store_;
	}

	// The body as a JSON object; an empty body is {}
	// when allowed.  Its depth and numbers are checked on the text first
	// (json_guard.hpp): no deeper value is ever built.
	json body(bool empty_ok = false) const {
		if (raw.empty()) {
			if (empty_ok) return json::object();
			throw ApiError(400, "22P02", "request body is empty: send a JSON object");
		}
		try {
			check_json_text(raw, "request body");
		} catch (const Error &e) {
			throw ApiError(400, e.sqlstate, e.what());
		}
		json j;
		try {
			j = json::parse(raw);
		} catch (const json::exception &e) {
			std::string what = e.what();
			// Drop nlohmann's "[json.exception.parse_error.101] " prefix.
			auto close = what.find("] ");
			if (close != std::string::npos) what = what.substr(close + 2);
			throw ApiError(400, "22P02", "request body is not valid JSON: " + shown(what));
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
		if (!ok) throw invalid("unknown field \"" + shown(key) + "\"");
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
	if (!id) throw invalid("instance id \"" + shown(text) + "\" is not a positive integer");
	call.instance = *id;
	return *id;
}

// ---- list answers ---------------------------------------------------------
//
// A list answer is made as text, row by row, and refused (400 / 54000) once
// it would pass ApiOptions::max_response: a client cannot make the server
// hold an answer of any size.  GET /api/instances reads its rows in chunks,
// so neither the store's rows nor their JSON are ever all in memory at once.

constexpr int64_t kMaxListLimit = 10000;  // list_instances' own bound on limit
constexpr int64_t kChunkRows = 100;		  // rows read from the store at a time

// Opens c.text with `head` (e.g. {"instances":[).
void list_begin(Call &c, const std::string &head) {
	c.text = head;
	c.rows = 0;
}

std::string over_response(const Call &c, const std::string &what) {
	return "the answer is over the limit of " + std::to_string(c.max_response) +
		   " bytes (--http-max-response) after " + std::to_string(c.rows) + " " + what;
}

// Appends one row; `what` names the rows, `fix` says what to ask instead.
void list_row(Call &c, const json &row, const std::string &what, const std::string &fix) {
	std::string t = row.dump(-1, ' ', false, json::error_handler_t::replace);
	if (c.text->size() + t.size() + 64 > c.max_response) throw ApiError(400, "54000", over_response(c, what) + fix);
	if (c.rows++ > 0) c.text->push_back(',');
	c.text->append(t);
}

// Closes the answer with `tail` (e.g. ]}) and says so to serve().
json list_end(Call &c, const std::string &tail) {
	c.text->append(tail);
	return nullptr;
}

// The rows of a store call that returns them all (no paging in the store).
json list_all(Call &c, const char *key, const json &rows, const std::string &what, const std::string &fix = {}) {
	list_begin(c, std::string("{\"") + key + "\":[");
	for (const auto &r : rows) list_row(c, r, what, fix);
	return list_end(c, "]}");
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
	only_fields(body, {"name", "definition", "source"});
	std::string name = string_field(body, "name", true);
	// the definition as an object, or as the text it was written as (kept
	// with a new version: GET /api/definitions/{name} answers it as source)
	std::optional<std::string> source;
	json definition;
	if (body.contains("source")) {
		if (body.contains("definition")) throw invalid("give \"definition\" or \"source\", not both");
		source = string_field(body, "source", true);
		definition = parse_json_text(*source, "field \"source\"");
		if (!definition.is_object()) throw invalid("field \"source\" must be the text of a JSON object");
	} else {
		definition = object_field(body, "definition", true);
	}
	DefineResult r = c.store().define(name, definition, source);
	c.status = r.is_new ? 201 : 200;
	return {{"name", r.name}, {"version", r.version}, {"is_new", r.is_new}};
}

json get_definitions(Call &c) { return list_all(c, "definitions", c.store().list_definitions(), "definitions"); }

// One definition's stored text; ?version=N for an older one.
json get_definition(Call &c) {
	const std::string name = c.req.matches[1];
	std::optional<int> version;
	for (const auto &[key, value] : c.req.params) {
		if (key != "version") throw invalid("unknown query parameter \"" + shown(key) + "\"");
		auto n = parse_int(value, 1, INT32_MAX);
		if (!n) throw invalid("query parameter \"version\" must be a positive integer, got \"" + shown(value) + "\"");
		version = static_cast<int>(*n);
	}
	return c.store().get_definition(name, version);
}

// Who the caller is and what they may do: the console shows only the
// actions the API would accept.  Without --auth everyone may do everything
// (permissions null).
json get_whoami(Call &c) {
	if (!c.auth || !c.who) return {{"auth", false}, {"name", nullptr}, {"permissions", nullptr}};
	json perms = json::array();
	for (const auto &p : c.who->permissions) perms.push_back(p);
	return {{"auth", true}, {"name", c.who->name}, {"permissions", perms}};
}

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

// genroc.start_many: one instance per input, one transaction.
json post_instances_batch(Call &c) {
	json body = c.body();
	only_fields(body, {"definition", "inputs", "options"});
	std::string definition = string_field(body, "definition", true);
	const json *inputs = field(body, "inputs");
	if (!inputs) throw ApiError(400, "22004", "missing required field \"inputs\"");
	if (!inputs->is_array()) throw invalid(std::string("field \"inputs\" must be an array, not ") + type_name(*inputs));
	json options = object_field(body, "options", false);
	json out = json::array();
	for (const StartResult &r : c.store().start_many(definition, *inputs, options))
		out.push_back({{"instance_id", r.instance_id}, {"status", r.status}});
	c.status = 201;
	return {{"instances", out}};
}

json get_instances(Call &c) {
	json filter = json::object();
	for (const auto &[key, value] : c.req.params) {
		if (key == "status" || key == "definition" || key == "name") {
			if (value.empty()) throw invalid("query parameter \"" + key + "\" must not be empty");
			filter[key] = value;
		} else if (key == "label") {
			auto colon = value.find(':');
			if (colon == std::string::npos || colon == 0)
				throw invalid("query parameter \"label\" must be key:value, got \"" + shown(value) + "\"");
			if (!filter.contains("label")) filter["label"] = json::object();
			filter["label"][value.substr(0, colon)] = value.substr(colon + 1);
		} else if (key == "limit") {
			auto n = parse_int(value, 1, kMaxListLimit);
			if (!n)
				throw invalid("query parameter \"limit\" must be a whole number from 1 to " +
							  std::to_string(kMaxListLimit) + ", got \"" + shown(value) + "\"");
			filter["limit"] = *n;
		} else if (key == "root" || key == "before") {
			auto n = parse_int(value, 1, INT64_MAX);
			if (!n) throw invalid("query parameter \"" + key + "\" must be an instance id, got \"" + shown(value) + "\"");
			filter[key] = *n;
		} else if (key == "parent") {
			auto n = parse_int(value, 1, INT64_MAX);
			if (!n) throw invalid("query parameter \"parent\" must be an instance id, got \"" + shown(value) + "\"");
			filter["parent"] = *n;
		} else if (key == "offset") {
			auto n = parse_int(value, 0, INT32_MAX);
			if (!n) throw invalid("query parameter \"offset\" must be 0 or a positive integer, got \"" + shown(value) + "\"");
			filter["offset"] = *n;
		} else if (key == "top") {
			if (value != "true" && value != "false")
				throw invalid("query parameter \"top\" must be true or false, got \"" + shown(value) + "\"");
			filter["top"] = value == "true";
		} else if (key == "created_after" || key == "created_before") {
			if (value.empty()) throw invalid("query parameter \"" + key + "\" must not be empty");
			filter[key] = value;  // the store parses and checks the time (22007)
		} else if (key == "values") {
			filter["values"] = value;  // the store checks it (22023)
		} else {
			throw invalid("unknown query parameter \"" + shown(key) + "\"");
		}
	}
	// In chunks: the next one continues the keyset (before = the last id),
	// or, for a parent's children (in their order), the offset.
	const int64_t limit = filter.value("limit", int64_t{100});
	const int64_t offset = filter.value("offset", int64_t{0});
	const bool children = filter.contains("parent");
	const bool refs = filter.value("values", "") == "ref";
	const std::string fix = refs ? "; ask for fewer (query parameter \"limit\")"
								 : "; ask for fewer (query parameter \"limit\"), or with values=ref";
	list_begin(c, "{\"instances\":[");
	int64_t got = 0;
	json last_id;
	while (got < limit) {
		// No more rows than the bytes left would hold at the size seen so far.
		int64_t n = std::min(limit - got, kChunkRows);
		if (got > 0) {
			const int64_t per_row = std::max<int64_t>(1, static_cast<int64_t>(c.text->size()) / got);
			const int64_t room = static_cast<int64_t>(c.max_response > c.text->size() ? c.max_response - c.text->size() : 0);
			n = std::clamp<int64_t>(room / per_row + 1, 1, n);
		}
		json f = filter;
		f["limit"] = n;
		if (got > 0) {
			if (children) {
				f["offset"] = offset + got;
			} else {
				f["before"] = last_id;
				f.erase("offset");
			}
		}
		json rows = c.store().list_instances(f);
		for (const auto &r : rows) {
			list_row(c, r, "instances", fix);
			last_id = r.value("id", json());
		}
		got += static_cast<int64_t>(rows.size());
		if (static_cast<int64_t>(rows.size()) < n || (!children && !last_id.is_number_integer())) break;
	}
	return list_end(c, "]}");
}

// ?values=ref: large values as references (docs/operations.md "Large values"); the
// only query parameter of an instance's and its history's routes.
bool values_ref(const Call &c) {
	for (const auto &[key, value] : c.req.params) {
		if (key != "values") throw invalid("unknown query parameter \"" + shown(key) + "\"");
		if (value != "value" && value != "ref")
			throw invalid("query parameter \"values\" must be value or ref, got \"" + shown(value) + "\"");
	}
	return c.req.get_param_value("values") == "ref";
}

// The ASL Type of the state a failed top-level instance stopped in (resume
// needs a Task); "" for any other instance, or when the definition does not
// say.
std::string failed_state_type(Store &store, const json &inst) {
	if (inst.value("status", "") != "failed" || !inst.value("parent_id", json()).is_null()) return "";
	const json def = store.get_definition(inst.value("definition", ""), inst.value("version", 1));
	const json &states = def.value("definition", json::object()).value("States", json::object());
	const std::string state = inst.value("state", json()).is_string() ? inst["state"].get<std::string>() : "";
	if (!states.is_object() || !states.contains(state) || !states[state].is_object()) return "";
	const json &type = states[state].value("Type", json());
	return type.is_string() ? type.get<std::string>() : "";
}

// One instance, and the actions the API would take for it now
// (instance_actions.hpp: the console shows these and no other).
json get_instance(Call &c) {
	int64_t id = instance_id(c);  // validated before the store is borrowed
	const bool refs = values_ref(c);
	json inst = c.store().get_instance(id, refs);
	json actions = json::array();
	for (const auto &a : instance_actions(inst, failed_state_type(c.store(), inst))) actions.push_back(a);
	inst["actions"] = std::move(actions);
	return inst;
}

// GET /api/objects/{ref}: one stored value, as the store's get_object
// (RC011, 404, when there is none or the caller's role may not read it).
json get_object(Call &c) {
	const std::string ref = c.req.matches[1];
	const bool hex = ref.size() == 64 && std::all_of(ref.begin(), ref.end(), [](char ch) {
		return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
	});
	if (!hex) throw invalid("reference \"" + shown(ref) + "\" is not 64 lowercase hex digits");
	return c.store().get_object(ref);
}

json get_history(Call &c) {
	int64_t id = instance_id(c);
	const bool refs = values_ref(c);
	json h = c.store().history(id, refs);
	// An instance always has at least its start in its log, so an empty log
	// may mean an unknown id: let get_instance say so (RC003, 404).
	if (h.empty()) c.store().get_instance(id);
	list_begin(c, "{\"instance_id\":" + std::to_string(id) + ",\"history\":[");
	for (const auto &row : h) list_row(c, row, "history entries", refs ? "" : "; ask with values=ref");
	return list_end(c, "]}");
}

// POST /api/instances/bulk: one action (cancel, retry or redrive) on many instances,
// named by "ids" or by a list "filter" (list_instances' keys status,
// definition, label, name, top, created_after, created_before), at most
// kMaxBulk of them ("more": true when the filter matches more: act, then ask
// again).  Each instance is judged by the rule the console's buttons follow
// (instance_actions.hpp: what does not apply is skipped, with the reason the
// store would give) and acted on by the same store call as its single route,
// in its own transaction, so the store checks each one as it checks a single
// call; one failure does not stop the others.  "dry_run": true answers the
// count and the instances it would act on, acting on none (the console's
// confirmation shows that count).
constexpr int64_t kMaxBulk = 1000;

json post_bulk(Call &c) {
	json body = c.body();
	only_fields(body, {"action", "ids", "filter", "dry_run"});
	const std::string action = string_field(body, "action", true);
	if (action != "cancel" && action != "retry" && action != "redrive")
		throw invalid("field \"action\" must be cancel, retry or redrive, got \"" + shown(action) + "\"");
	const json *ids = field(body, "ids");
	const json *filter = field(body, "filter");
	if ((ids == nullptr) == (filter == nullptr)) throw invalid("give exactly one of the fields \"ids\" and \"filter\"");
	bool dry_run = false;
	if (const json *d = field(body, "dry_run")) {
		if (!d->is_boolean()) throw invalid(std::string("field \"dry_run\" must be true or false, not ") + type_name(*d));
		dry_run = d->get<bool>();
	}
	// instances as get_instance / list_instances show them; an id the store
	// refused to show comes with its error instead
	struct Row {
		json inst;
		json error;
	};
	std::vector<Row> rows;
	bool more = false;
	if (ids) {
		if (!ids->is_array()) throw invalid(std::string("field \"ids\" must be an array, not ") + type_name(*ids));
		if (ids->empty() || static_cast<int64_t>(ids->size()) > kMaxBulk)
			throw invalid("field \"ids\" must hold from 1 to " + std::to_string(kMaxBulk) + " instance ids, got " +
						  std::to_string(ids->size()));
		std::set<int64_t> seen;
		for (const auto &v : *ids) {
			if (!v.is_number_integer() || v.get<int64_t>() < 1)
				throw invalid("field \"ids\" must be an array of instance ids (positive integers), found " +
							  shown(v.dump()));
			if (!seen.insert(v.get<int64_t>()).second) continue;
			try {
				rows.push_back({c.store().get_instance(v.get<int64_t>(), true), nullptr});
			} catch (const Error &e) {
				if (transient_sqlstate(e.sqlstate)) throw;
				rows.push_back({{{"id", v}}, error_body(e)["error"]});
			}
		}
	} else {
		if (!filter->is_object()) throw invalid(std::string("field \"filter\" must be an object, not ") + type_name(*filter));
		only_fields(*filter, {"status", "definition", "label", "name", "top", "created_after", "created_before"});
		json f = *filter;
		f["limit"] = kMaxBulk + 1;
		f["values"] = "ref";
		for (auto &inst : c.store().list_instances(f)) {
			if (static_cast<int64_t>(rows.size()) == kMaxBulk) {
				more = true;
				break;
			}
			rows.push_back({std::move(inst), nullptr});
		}
	}
	json results = json::array();
	int64_t acted = 0, skipped = 0, failed = 0;
	for (const auto &[inst, error] : rows) {
		const json id = inst.value("id", json());
		if (!error.is_null()) {
			results.push_back({{"instance_id", id}, {"outcome", "failed"}, {"error", error}});
			failed++;
			continue;
		}
		const std::string why = action_refusal(action, inst, "");
		if (!why.empty()) {
			results.push_back({{"instance_id", id}, {"outcome", "skipped"}, {"status", inst.value("status", json())},
							   {"reason", why}});
			skipped++;
			continue;
		}
		if (dry_run) {
			results.push_back({{"instance_id", id}, {"outcome", "would"}, {"status", inst.value("status", json())}});
			acted++;
			continue;
		}
		try {
			const int64_t n = id.get<int64_t>();
			const std::string status = action == "cancel"	 ? c.store().cancel(n)
									   : action == "retry" ? c.store().retry(n)
														   : c.store().redrive(n);
			results.push_back({{"instance_id", id}, {"outcome", "done"}, {"status", status}});
			acted++;
		} catch (const Error &e) {
			if (transient_sqlstate(e.sqlstate)) throw;
			results.push_back({{"instance_id", id}, {"outcome", "failed"}, {"error", error_body(e)["error"]}});
			failed++;
		}
	}
	return {{"action", action},		{"dry_run", dry_run}, {"matched", rows.size()}, {"more", more},
			{dry_run ? "would" : "done", acted}, {"skipped", skipped}, {"failed", failed}, {"results", results}};
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

json post_redrive(Call &c) {
	int64_t id = instance_id(c);
	only_fields(c.body(true), {});
	return {{"instance_id", id}, {"status", c.store().redrive(id)}};
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
	json payload = c.raw.empty() ? json(nullptr) : c.body();
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

json get_workers(Call &c) { return list_all(c, "workers", c.store().list_workers(), "workers"); }

// genroc.worker_drain: the worker claims nothing more and stops once its
// running tasks end (docs/cli.md "Draining a worker").
json post_drain(Call &c) {
	const std::string id = c.req.matches[1];
	only_fields(c.body(true), {});
	return c.store().worker_drain(id);
}

// The queues as list_queues shows them, and the ones holding ready tasks
// that no live worker serves (they would wait forever), with who would.
json get_queues(Call &c) {
	json list = c.store().list_queues();
	json unserved = json::array();
	for (const auto &q : unserved_queues(list))
		unserved.push_back({{"queue", q.value("name", json())}, {"depth", q.value("depth", json())},
							{"hint", unserved_hint(q)}});
	list_begin(c, "{\"queues\":[");
	for (const auto &q : list) list_row(c, q, "queues", "");
	c.text->append("],\"unserved\":");
	c.text->append(unserved.dump(-1, ' ', false, json::error_handler_t::replace));
	return list_end(c, "}");
}

// The token routes: with --auth only (without it anyone could mint tokens
// that would hold once --auth is turned on).
void tokens_need_auth(const Call &c) {
	if (!c.auth || !c.who)
		throw ApiError(403, "42501", "the token routes are served only with --auth");
}

json post_token(Call &c) {
	tokens_need_auth(c);
	json body = c.body();
	only_fields(body, {"name", "permissions", "sigv4"});
	std::string name = string_field(body, "name", true);
	const json *sigv4 = field(body, "sigv4");
	if (sigv4 && !sigv4->is_boolean()) throw invalid(std::string("field \"sigv4\" must be a boolean, not ") + type_name(*sigv4));
	const json *perms = field(body, "permissions");
	if (!perms) throw ApiError(400, "22004", "missing required field \"permissions\"");
	if (!perms->is_array()) throw invalid(std::string("field \"permissions\" must be an array, not ") + type_name(*perms));
	std::vector<std::string> list;
	for (const auto &p : *perms) {
		if (!p.is_string()) throw invalid("field \"permissions\" must be an array of strings");
		list.push_back(p.get<std::string>());
	}
	if (sigv4 && sigv4->get<bool>()) {
		// A key pair for the Step Functions endpoint: its token's text is
		// derived from the server key, so the server can check it later.
		if (!c.sigv4_key || c.sigv4_key->empty())
			throw ApiError(400, "22023", "a SigV4 key pair needs the server's --sigv4-key-file");
		const std::string id = sigv4::new_token_id();
		json t = c.store().token_create(name, list, c.who->name, sigv4::token_text(*c.sigv4_key, id));
		t.erase("is_new");
		t.erase("token");
		t["access_key_id"] = sigv4::access_key_id(id);
		t["secret_access_key"] = sigv4::secret_access_key(*c.sigv4_key, id);
		c.status = 201;
		return t;
	}
	json t = c.store().token_create(name, list, c.who->name, std::nullopt);
	t.erase("is_new");
	c.status = 201;
	return t;
}

json get_tokens(Call &c) {
	tokens_need_auth(c);
	return list_all(c, "tokens", c.store().token_list(), "tokens");
}

json revoke_token(Call &c) {
	tokens_need_auth(c);
	const std::string id = c.req.matches[1];
	if (c.req.method == "POST") only_fields(c.body(true), {});
	c.store().token_revoke(id);
	return {{"id", id}, {"status", "revoked"}};
}

// ---- connections ----------------------------------------------------------

using Clock = std::chrono::steady_clock;

// The limits a connection is served under (from ApiOptions).
struct ConnLimits {
	Clock::duration request_timeout, read_timeout, write_timeout, keep_alive_timeout;
	size_t max_header_bytes = 0;
	int max_connections = 256;			 // at once, all clients
	int max_per_client = 32;			 // at once, one client address
	int healthz_reserve = 8;			 // over max_connections: may still ask GET /healthz
};

// How long a connection in the /healthz reserve has for its one request
// (a probe sends it at once; its own timeout is a few seconds).
constexpr auto kReserveRequestTime = std::chrono::seconds(2);

// One client connection; the thread that serves it finds it in t_conn (the
// routes use it to end the connection after a refusal that left a body
// unread, the error handler to say which limit a request hit).
struct Conn {
	int fd = -1;
	Clock::time_point read_deadline = Clock::time_point::max();	 // end of this request's reading
	Clock::time_point write_deadline = Clock::time_point::max();  // set by the answer's first byte
	bool in_head = true;	  // still reading the request line and headers
	size_t head_bytes = 0;
	size_t line_len = 0;
	bool close_after = false;  // close once this answer is written
	bool healthz_only = false;  // a connection over the cap, in the /healthz reserve
	std::string limit_hit;	   // why the last read failed on a limit; empty if it did not
	int limit_status = 0;	   // its HTTP status: 408 (time) or 431 (head size)
	char buf[8192];
	size_t pos = 0, len = 0;
	// Bytes in-process (ApiHandler::serve_bytes): no socket, no timeouts.
	const std::string *in = nullptr;
	size_t in_pos = 0;
	std::string *out = nullptr;
};

thread_local Conn *t_conn = nullptr;

void close_after_answer() {
	if (t_conn) t_conn->close_after = true;
}

// httplib's view of a Conn: reads and writes under the deadlines.
class ConnStream final : public httplib::Stream {
  public:
	ConnStream(Conn &c, const ConnLimits &limits, const std::atomic<bool> &stopping)
		: c_(c), limits_(limits), stopping_(stopping) {}

	bool is_readable() const override { return c_.pos < c_.len || c_.in || wait(POLLIN); }
	bool is_writable() const override { return c_.out || wait(POLLOUT); }

	ssize_t read(char *ptr, size_t size) override {
		if (c_.pos >= c_.len) {
			ssize_t got = 0;
			if (c_.in) {
				got = static_cast<ssize_t>(std::min(sizeof c_.buf, c_.in->size() - c_.in_pos));
				std::memcpy(c_.buf, c_.in->data() + c_.in_pos, static_cast<size_t>(got));
				c_.in_pos += static_cast<size_t>(got);
			} else {
				if (!wait(POLLIN)) return -1;
				do got = ::recv(c_.fd, c_.buf, sizeof c_.buf, 0);
				while (got < 0 && errno == EINTR);
			}
			if (got <= 0) return got;
			c_.pos = 0;
			c_.len = static_cast<size_t>(got);
		}
		size_t n = std::min(size, c_.len - c_.pos);
		if (c_.in_head) {
			// Count the head up to its blank line ("\r\n\r\n" or "\n\n").
			for (size_t i = 0; i < n; ++i) {
				char b = c_.buf[c_.pos + i];
				++c_.head_bytes;
				if (b == '\n') {
					if (c_.line_len == 0) {
						c_.in_head = false;
						n = i + 1;
						break;
					}
					c_.line_len = 0;
				} else if (b != '\r') {
					++c_.line_len;
				}
			}
			if (c_.head_bytes > limits_.max_header_bytes) {
				c_.limit_hit = "the request line and headers are over the limit of " +
							   std::to_string(limits_.max_header_bytes) + " bytes";
				c_.limit_status = 431;
				return -1;
			}
		}
		std::memcpy(ptr, c_.buf + c_.pos, n);
		c_.pos += n;
		return static_cast<ssize_t>(n);
	}

	ssize_t write(const char *ptr, size_t size) override {
		if (c_.out) {
			c_.out->append(ptr, size);
			return static_cast<ssize_t>(size);
		}
		if (c_.write_deadline == Clock::time_point::max())
			c_.write_deadline = Clock::now() + limits_.request_timeout;
		if (!wait(POLLOUT)) return -1;
		ssize_t n = 0;
		do n = ::send(c_.fd, ptr, size, MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		return n;
	}

	void get_remote_ip_and_port(std::string &ip, int &port) const override { address(true, ip, port); }
	void get_local_ip_and_port(std::string &ip, int &port) const override { address(false, ip, port); }
	socket_t socket() const override { return c_.fd; }

  private:
	// Waits for the socket within the read (or write) timeout and the
	// request's deadline, in short slices so that stop() ends it.
	bool wait(short events) const {
		const auto now = Clock::now();
		const bool reading = events == POLLIN;
		const auto deadline = reading ? std::min(now + limits_.read_timeout, c_.read_deadline)
									  : std::min(now + limits_.write_timeout, c_.write_deadline);
		const bool request_bound = reading && c_.read_deadline <= now + limits_.read_timeout;
		for (;;) {
			if (stopping_) return false;
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
			if (left <= 0) {
				if (reading) {
					auto ms = [](Clock::duration d) {
						return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
					};
					c_.limit_status = 408;
					c_.limit_hit = request_bound
									   ? "the request did not arrive within the request timeout of " +
											 ms(limits_.request_timeout) + " ms"
									   : "the client sent nothing for " + ms(limits_.read_timeout) +
											 " ms in the middle of a request";
				}
				return false;
			}
			pollfd p{c_.fd, events, 0};
			int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
			if (r > 0) return true;
			if (r < 0 && errno != EINTR) return false;
		}
	}

	void address(bool peer, std::string &ip, int &port) const {
		ip.clear();
		port = 0;
		if (c_.fd < 0) return;
		sockaddr_storage a{};
		socklen_t len = sizeof a;
		int r = peer ? ::getpeername(c_.fd, reinterpret_cast<sockaddr *>(&a), &len)
					 : ::getsockname(c_.fd, reinterpret_cast<sockaddr *>(&a), &len);
		if (r != 0) return;
		char text[INET6_ADDRSTRLEN] = {0};
		if (a.ss_family == AF_INET) {
			auto *v4 = reinterpret_cast<sockaddr_in *>(&a);
			::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
			port = ntohs(v4->sin_port);
		} else if (a.ss_family == AF_INET6) {
			auto *v6 = reinterpret_cast<sockaddr_in6 *>(&a);
			::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
			port = ntohs(v6->sin6_port);
		}
		ip = text;
	}

	Conn &c_;
	const ConnLimits &limits_;
	const std::atomic<bool> &stopping_;
};

// httplib's task queue, replaced: a thread per connection (httplib's pool of
// 8 lets 8 slow clients stop the server).  The cap is enforced by the
// server, which answers 503 at once beyond it; a thread that cannot be
// created serves its connection the same way, on the accepting thread.
thread_local bool t_refuse = false;

// The order connections are admitted in (a slot, the /healthz reserve, or a
// 503): the order they were accepted.  The accepting thread hands each
// connection a ticket; its own thread waits for the tickets before it to be
// decided, then decides.  Without it a connection accepted later could take
// the last slot from one accepted earlier whose thread started later, and
// that one, put in the reserve, was dropped after 2 s.
class Admission {
  public:
	uint64_t ticket() {
		std::lock_guard<std::mutex> g(mu_);
		return issued_++;
	}

	// Runs decide() once every earlier ticket is decided.
	template <class F> void in_turn(uint64_t ticket, F &&decide) {
		std::unique_lock<std::mutex> l(mu_);
		turn_.wait(l, [&] { return decided_ == ticket; });
		decide();
		++decided_;
		l.unlock();
		turn_.notify_all();
	}

  private:
	std::mutex mu_;
	std::condition_variable turn_;
	uint64_t issued_ = 0, decided_ = 0;
};
thread_local uint64_t t_ticket = 0;

class ThreadPerConnection final : public httplib::TaskQueue {
  public:
	explicit ThreadPerConnection(Admission &admission) : admission_(admission) {}

	void enqueue(std::function<void()> fn) override {
		auto job = std::make_shared<std::function<void()>>(std::move(fn));
		const uint64_t ticket = admission_.ticket();
		{
			std::lock_guard<std::mutex> g(st_->mu);
			++st_->running;
		}
		try {
			std::thread([st = st_, job, ticket] {
				t_ticket = ticket;
				(*job)();
				std::lock_guard<std::mutex> g(st->mu);
				if (--st->running == 0) st->done.notify_all();
			}).detach();
		} catch (const std::system_error &) {
			{
				std::lock_guard<std::mutex> g(st_->mu);
				--st_->running;
			}
			t_refuse = true;
			t_ticket = ticket;
			(*job)();
			t_refuse = false;
		}
	}

	// Called when the listener stops: the connections end within a poll
	// slice (ConnStream checks stopping), their requests within the store call.
	void shutdown() override {
		std::unique_lock<std::mutex> l(st_->mu);
		st_->done.wait(l, [&] { return st_->running == 0; });
	}

  private:
	struct State {
		std::mutex mu;
		std::condition_variable done;
		size_t running = 0;
	};
	std::shared_ptr<State> st_ = std::make_shared<State>();
	Admission &admission_;
};

constexpr size_t kKeepAliveMaxRequests = 100;
// The longest path served (screen): ten times what the longest route with
// the longest identifiers needs, a tenth of what std::regex's recursion
// could take on a connection thread's stack.
constexpr size_t kMaxPath = 4096;

// httplib::Server with its connection loop replaced (see the file comment).
// process_and_close_socket is private in httplib but virtual; the request
// itself goes through httplib's own process_request.
class GuardedServer final : public httplib::Server {
  public:
	explicit GuardedServer(const ConnLimits &limits) : limits_(limits) {
		new_task_queue = [this] { return new ThreadPerConnection(admission_); };
	}

	void stopping() { stopping_ = true; }

	// httplib listens with a backlog of 5: a burst of connections would
	// wait for SYN retries.  listen() again on the bound socket widens it.
	void widen_backlog() {
		socket_t fd = svr_sock_;
		if (fd != INVALID_SOCKET) ::listen(fd, SOMAXCONN);
	}

	// The whole of `request` through the request path; the server's bytes.
	std::string serve_bytes(const std::string &request) {
		Conn conn;
		std::string out;
		conn.in = &request;
		conn.out = &out;
		Conn *outer = t_conn;
		t_conn = &conn;
		ConnStream strm(conn, limits_, stopping_);
		for (size_t count = 0; count < kKeepAliveMaxRequests; ++count) {
			if (conn.pos >= conn.len && conn.in_pos >= request.size()) break;
			begin_request(conn);
			bool closed = false;
			if (!process_request(strm, count + 1 == kKeepAliveMaxRequests, closed, nullptr) || closed ||
				conn.close_after || conn.limit_status != 0)
				break;
		}
		t_conn = outer;
		return out;
	}

  private:
	bool process_and_close_socket(socket_t sock) override {
		Conn conn;
		conn.fd = sock;
		t_conn = &conn;
		// One client address holds at most max_per_client connections: over
		// it, a 503 at once, and no slot taken (a flood from one address
		// leaves the others served).
		const std::string peer = peer_address(sock);
		enum class Slot { general, reserve, none, client_over } slot = Slot::general;
		// Decided in the order the connections were accepted (Admission).
		admission_.in_turn(t_ticket, [&] {
			if (t_refuse) {
				slot = Slot::none;
			} else if (!enter_client(peer)) {
				slot = Slot::client_over;
			} else if (++active_ > limits_.max_connections) {
				--active_;
				// Over the cap: a few more connections are read, briefly, for
				// GET /healthz alone (the readiness probe must not fail because
				// slow clients hold every slot); anything else gets the 503.
				if (++reserve_active_ <= limits_.healthz_reserve) {
					slot = Slot::reserve;
					conn.healthz_only = true;
					note_refusing();
				} else {
					--reserve_active_;
					slot = Slot::none;
				}
			} else if (refusing_.exchange(false)) {
				log::info("HTTP connections below the limit again");
			}
		});
		if (t_refuse || slot == Slot::client_over) {
			if (!t_refuse) refuse_client(sock, peer);
			else refuse(sock);
			t_conn = nullptr;
			linger_close(sock, std::chrono::milliseconds(100));
			return true;
		}
		if (slot == Slot::none) refuse(sock);
		if (slot != Slot::none) serve_connection(conn, sock);
		if (slot == Slot::general) --active_;
		if (slot == Slot::reserve) --reserve_active_;
		leave_client(peer);
		t_conn = nullptr;
		linger_close(sock);
		return true;
	}

	// The requests of one connection (one only in the /healthz reserve).
	void serve_connection(Conn &conn, int sock) {
		ConnStream strm(conn, limits_, stopping_);
		const size_t most = conn.healthz_only ? 1 : kKeepAliveMaxRequests;
		for (size_t count = 0; count < most && !stopping_; ++count) {
			// The first request may take the read timeout to start; an
			// idle connection between requests, the keep-alive timeout.
			Clock::duration wait = count == 0 ? limits_.read_timeout : limits_.keep_alive_timeout;
			if (conn.healthz_only) wait = std::min<Clock::duration>(wait, kReserveRequestTime);
			if (conn.pos >= conn.len && !wait_readable(sock, wait)) break;
			begin_request(conn);
			bool closed = false;
			if (!process_request(strm, count + 1 == most, closed, nullptr) || closed || conn.close_after ||
				conn.limit_status != 0)
				break;
		}
	}

	// The client's address (no port), or "" when the socket has none.
	static std::string peer_address(int fd) {
		sockaddr_storage a{};
		socklen_t len = sizeof a;
		if (::getpeername(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) return {};
		char text[INET6_ADDRSTRLEN] = {0};
		if (a.ss_family == AF_INET)
			::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&a)->sin_addr, text, sizeof text);
		else if (a.ss_family == AF_INET6)
			::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&a)->sin6_addr, text, sizeof text);
		return text;
	}

	bool enter_client(const std::string &peer) {
		std::lock_guard<std::mutex> g(clients_mu_);
		int &n = clients_[peer];
		if (n >= limits_.max_per_client) {
			if (n == 0) clients_.erase(peer);
			return false;
		}
		++n;
		return true;
	}

	void leave_client(const std::string &peer) {
		std::lock_guard<std::mutex> g(clients_mu_);
		auto it = clients_.find(peer);
		if (it != clients_.end() && --it->second <= 0) clients_.erase(it);
	}

	void note_refusing() {
		if (!refusing_.exchange(true))
			log::warn("HTTP connections at the limit; refusing new ones with 503 (GET /healthz still answers)",
					  {{"max_connections", limits_.max_connections}});
	}

	// Over the per-client cap: a 503 without reading the request, and close.
	void refuse_client(int fd, const std::string &peer) {
		{
			std::lock_guard<std::mutex> g(clients_mu_);
			if (refused_clients_.insert(peer).second)
				log::warn("HTTP connections of one client at the limit; refusing its new ones with 503",
						  {{"client", peer}, {"max_connections_per_client", limits_.max_per_client}});
			if (refused_clients_.size() > 1024) refused_clients_.clear();  // log again, never grow
		}
		send_503(fd, "too many connections from this client: the server serves at most " +
						 std::to_string(limits_.max_per_client) + " at once from one address");
	}

	// Closing a socket with unread bytes (a body a refusal left, a head over
	// the cap) sends a reset, which can destroy the answer before the client
	// reads it: say FIN first, then drop what the client still sends, briefly.
	void linger_close(int fd, Clock::duration linger = std::chrono::milliseconds(500)) const {
		::shutdown(fd, SHUT_WR);
		const auto until = Clock::now() + linger;
		char scratch[16384];
		size_t dropped = 0;
		while (!stopping_ && dropped < (1u << 20) && Clock::now() < until) {
			pollfd p{fd, POLLIN, 0};
			if (::poll(&p, 1, 50) <= 0) continue;
			ssize_t n = ::recv(fd, scratch, sizeof scratch, 0);
			if (n <= 0) break;
			dropped += static_cast<size_t>(n);
		}
		::close(fd);
	}

	void begin_request(Conn &conn) const {
		conn.read_deadline = conn.in ? Clock::time_point::max()
									 : Clock::now() + (conn.healthz_only ? std::min<Clock::duration>(
																			   limits_.request_timeout, kReserveRequestTime)
																		 : limits_.request_timeout);
		conn.write_deadline = Clock::time_point::max();
		conn.in_head = true;
		conn.head_bytes = 0;
		conn.line_len = 0;
		conn.close_after = false;
		conn.limit_hit.clear();
		conn.limit_status = 0;
	}

	bool wait_readable(int fd, Clock::duration timeout) const {
		const auto deadline = Clock::now() + timeout;
		while (!stopping_) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
			if (left <= 0) return false;
			pollfd p{fd, POLLIN, 0};
			int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
			if (r > 0) return true;
			if (r < 0 && errno != EINTR) return false;
		}
		return false;
	}

	// Over the connection cap and the /healthz reserve: a 503 without
	// reading the request, and close.
	void refuse(int fd) {
		note_refusing();
		send_503(fd, "too many connections: the server serves at most " + std::to_string(limits_.max_connections) +
						 " at once");
	}

	static void send_503(int fd, const std::string &message) {
		const std::string body = json{{"error", {{"sqlstate", "53300"}, {"message", message}}}}.dump() + "\n";
		const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
								   "Connection: close\r\nRetry-After: 1\r\nContent-Length: " +
								   std::to_string(body.size()) + "\r\n\r\n" + body;
		(void)::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
	}

	ConnLimits limits_;
	Admission admission_;
	std::atomic<int> active_{0};
	std::atomic<int> reserve_active_{0};
	std::atomic<bool> stopping_{false};
	std::atomic<bool> refusing_{false};
	std::mutex clients_mu_;
	std::map<std::string, int> clients_;		// connections held per client address
	std::set<std::string> refused_clients_;	// logged once each
};

ConnLimits conn_limits(const ApiOptions &o) {
	using std::chrono::milliseconds;
	ConnLimits l;
	l.request_timeout = milliseconds(o.request_timeout_ms);
	l.read_timeout = milliseconds(o.read_timeout_ms);
	l.write_timeout = milliseconds(o.write_timeout_ms);
	l.keep_alive_timeout = milliseconds(o.keep_alive_timeout_ms);
	l.max_header_bytes = o.max_header_bytes;
	l.max_connections = o.max_connections;
	l.max_per_client = o.max_connections_per_client;
	l.healthz_reserve = o.healthz_reserve;
	return l;
}

// ---- the server -----------------------------------------------------------

bool is_loopback(const std::string &host) {
	return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string lower(std::string s) {
	for (char &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
	return s;
}

bool all_digits(std::string_view s) {
	return !s.empty() && s.size() <= 5 && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// The name in a Host header (or an Origin's authority): lowercased, without
// its port, brackets and a trailing dot; port the port given ("" if none);
// nullopt when the text is not host[:port].
std::optional<std::string> host_part(std::string_view h, std::string *port = nullptr) {
	std::string name;
	std::string_view rest;
	if (!h.empty() && h.front() == '[') {
		auto close = h.find(']');
		if (close == std::string_view::npos) return std::nullopt;
		name = std::string(h.substr(1, close - 1));
		rest = h.substr(close + 1);
	} else {
		auto colon = h.find(':');
		if (colon != std::string_view::npos && h.find(':', colon + 1) != std::string_view::npos)
			return std::nullopt;  // an IPv6 address needs brackets
		name = std::string(h.substr(0, colon));
		if (colon != std::string_view::npos) rest = h.substr(colon);
	}
	if (!rest.empty() && (rest.front() != ':' || !all_digits(rest.substr(1)))) return std::nullopt;
	if (port) *port = rest.empty() ? std::string() : std::string(rest.substr(1));
	name = lower(name);
	if (!name.empty() && name.back() == '.') name.pop_back();
	if (name.empty()) return std::nullopt;
	for (char ch : name)
		if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_' || ch == ':'))
			return std::nullopt;
	return name;
}

// application/json, with parameters (charset: utf-8 only), any case.
bool json_type(const std::string &type) {
	auto semi = type.find(';');
	std::string media = lower(type.substr(0, semi));
	while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.pop_back();
	while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.erase(0, 1);
	if (media != "application/json") return false;
	std::string params = semi == std::string::npos ? std::string() : lower(type.substr(semi + 1));
	params.erase(std::remove_if(params.begin(), params.end(), [](char ch) { return ch == ' ' || ch == '\t' || ch == '"'; }),
				 params.end());
	for (size_t at = 0; at <= params.size();) {
		size_t end = params.find(';', at);
		if (end == std::string::npos) end = params.size();
		const std::string p = params.substr(at, end - at);
		if (p.rfind("charset=", 0) == 0 && p != "charset=utf-8" && p != "charset=utf8") return false;
		at = end + 1;
	}
	return true;
}

bool ip_literal(const std::string &name) {
	unsigned char buf[sizeof(in6_addr)];
	return ::inet_pton(AF_INET, name.c_str(), buf) == 1 || ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// A name against one --allowed-hosts entry: the name, "*.domain" (a name
// under it) or "*" (any).
bool host_matches(const std::string &name, const std::string &entry) {
	if (entry == "*") return true;
	if (entry.rfind("*.", 0) == 0) {
		const std::string suffix = entry.substr(1);  // ".domain"
		return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
	}
	return name == entry;
}

// At most ApiOptions::max_list_answers GET /api answers are made at once
// (each may hold up to max_response bytes, and the store's rows besides);
// the others wait their turn, up to the request timeout, then get 503.
class AnswerGate {
  public:
	explicit AnswerGate(int most) : most_(std::max(1, most)) {}

	class Turn {
	  public:
		Turn(AnswerGate &g, int64_t wait_ms) : g_(g) {
			std::unique_lock<std::mutex> l(g_.mu_);
			if (!g_.free_.wait_for(l, std::chrono::milliseconds(wait_ms), [&] { return g_.busy_ < g_.most_; }))
				throw ApiError(503, "53300", "too many answers being made at once; try again");
			++g_.busy_;
		}
		~Turn() {
			std::lock_guard<std::mutex> l(g_.mu_);
			--g_.busy_;
			g_.free_.notify_one();
		}
		Turn(const Turn &) = delete;
		Turn &operator=(const Turn &) = delete;

	  private:
		AnswerGate &g_;
	};

  private:
	std::mutex mu_;
	std::condition_variable free_;
	int busy_ = 0;
	const int most_;
};

class HttpServer final : public ApiServer, public ApiHandler {
  public:
	HttpServer(const ApiOptions &options, std::function<std::unique_ptr<Store>()> open_store,
			   HealthInfo health)
		: options_(options),
		  pool_(std::move(open_store)),
		  health_(std::move(health)),
		  svr_(conn_limits(options)) {
		std::string host;
		int port = 0;
		try {
			parse_listen(options_.listen, host, port);
		} catch (const std::exception &) {
			// start() says so; a handler without a socket has no listen address
		}
		listen_host_ = lower(host);
		listen_any_ = host == "0.0.0.0" || host == "::";
		char name[256] = {0};
		if (::gethostname(name, sizeof name - 1) == 0) machine_host_ = lower(name);
		routes();
	}

	~HttpServer() override { stop(); }

	void start() {
		std::string host;
		int port = 0;
		parse_listen(options_.listen, host, port);

		errno = 0;
		int bound = port == 0 ? svr_.bind_to_any_port(host) : (svr_.bind_to_port(host, port) ? port : -1);
		if (bound <= 0) {
			// httplib reports only failure; errno is what the failed
			// getaddrinfo/bind/listen left behind.
			std::string why = errno ? std::strerror(errno) : "the address is not available";
			throw std::runtime_error("cannot listen on " + options_.listen + ": " + why);
		}
		port_ = bound;
		svr_.widen_backlog();
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

		if (options_.metrics_only) {
			log::info("metrics listening", {{"listen", host + ":" + std::to_string(port_)}});
			return;
		}
		log::info("HTTP API listening", {{"listen", host + ":" + std::to_string(port_)},
										 {"auth", options_.auth},
										 {"max_connections", options_.max_connections},
										 {"request_timeout_ms", options_.request_timeout_ms}});
		if (!is_loopback(host) && !options_.auth)
			log::warn("the HTTP API is reachable from other machines and has no authentication (see --auth)",
					  {{"listen", options_.listen}});
	}

	void stop() override {
		if (stopped_.exchange(true)) return;
		svr_.stopping();
		svr_.stop();
		if (thread_.joinable()) thread_.join();
	}

	int port() const override { return port_; }

	std::string serve_bytes(const std::string &request) override { return svr_.serve_bytes(request); }

  private:
	ApiOptions options_;
	StorePool pool_;
	HealthInfo health_;
	GuardedServer svr_;
	std::thread thread_;
	int port_ = 0;
	std::atomic<bool> stopped_{false};
	std::atomic<bool> listen_failed_{false};
	std::atomic<int> db_up_{-1};  // last /healthz verdict: -1 none yet, 0 down, 1 up
	std::atomic<bool> metrics_db_ok_{true};	 // the last scrape read the database (log changes only)
	AnswerGate answers_{options_.max_list_answers};
	sigv4::ReplayCache replays_;  // SigV4 signatures accepted lately (serve_sfn)
	// The Host header names served (screen): the --listen host, and this
	// machine's name when --listen is every interface.
	std::string listen_host_, machine_host_;
	bool listen_any_ = false;
	// Every route's method and pattern: a request for none is answered
	// before its body is read.
	std::vector<std::pair<std::string, std::regex>> known_;

	using Route = json (*)(Call &);

	void get(const char *pattern, Route fn, const auth::Need &need) {
		known_.emplace_back("GET", std::regex(pattern));
		svr_.Get(pattern, [this, fn, &need](const httplib::Request &req, httplib::Response &res) {
			serve(fn, need, req, res, nullptr);
		});
	}

	// A route that takes a body: httplib calls it before reading the body,
	// so auth, the length and the type are checked first (read_body).
	void with_body(const char *method, const char *pattern, Route fn, const auth::Need &need) {
		known_.emplace_back(method, std::regex(pattern));
		httplib::Server::HandlerWithContentReader h =
			[this, fn, &need](const httplib::Request &req, httplib::Response &res,
							  const httplib::ContentReader &reader) { serve(fn, need, req, res, &reader); };
		if (std::string(method) == "POST")
			svr_.Post(pattern, h);
		else
			svr_.Delete(pattern, h);
	}

	bool known_route(const httplib::Request &req) const {
		const std::string method = req.method == "HEAD" ? "GET" : req.method;
		for (const auto &[m, re] : known_)
			if (m == method && std::regex_match(req.path, re)) return true;
		return false;
	}

	// Is `name` (host_part of a Host header) a name this server answers to?
	// An IP address always is: DNS rebinding needs a name the attacker
	// owns, and a browser sends that name.  Then localhost, the --listen
	// host (this machine's name when it is every interface) and
	// --http-allowed-hosts.
	bool host_allowed(const std::string &name) const {
		if (ip_literal(name) || name == "localhost" || name == listen_host_) return true;
		if (listen_any_ && !machine_host_.empty() && name == machine_host_) return true;
		for (const auto &e : options_.allowed_hosts)
			if (host_matches(name, lower(e))) return true;
		return false;
	}

	// Before any route and any body: the request's framing, its Host and
	// Origin, and the /healthz reserve.  A refusal closes the connection
	// (a body may follow, unread).
	void screen(const httplib::Request &req) const {
		// The routes are std::regex patterns (httplib's and known_route's),
		// and std::regex recurses once per character it matches: a path of
		// tens of thousands of bytes would overflow a connection thread's
		// stack.  No route needs more than kMaxPath bytes (identifiers are
		// at most 200 characters).
		if (req.path.size() > kMaxPath)
			throw ApiError(414, "54000", "the request's path is " + std::to_string(req.path.size()) +
											 " bytes, over the limit of " + std::to_string(kMaxPath));
		// One length, said once: two Content-Length headers (or one with
		// Transfer-Encoding) let a proxy and this server read different
		// bodies (request smuggling).
		if (req.get_header_value_count("Content-Length") > 1)
			throw ApiError(400, "08P01", "header Content-Length is given more than once");
		const size_t te = req.get_header_value_count("Transfer-Encoding");
		if (te > 1) throw ApiError(400, "08P01", "header Transfer-Encoding is given more than once");
		if (te == 1) {
			if (strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0)
				throw ApiError(400, "08P01", "header Transfer-Encoding must be chunked, not \"" +
												 shown(req.get_header_value("Transfer-Encoding"), 40) + "\"");
			if (req.has_header("Content-Length"))
				throw ApiError(400, "08P01", "headers Content-Length and Transfer-Encoding are given together");
		}
		if (t_conn && t_conn->healthz_only && !(req.path == "/healthz" && (req.method == "GET" || req.method == "HEAD")))
			throw ApiError(503, "53300", "too many connections: the server serves at most " +
											 std::to_string(options_.max_connections) +
											 " at once (GET /healthz still answers)");
		// The Host a browser sent names this server (DNS rebinding).
		const size_t hosts = req.get_header_value_count("Host");
		if (hosts > 1) throw ApiError(400, "08P01", "header Host is given more than once");
		std::optional<std::string> host;
		if (hosts == 1) {
			const std::string h = req.get_header_value("Host");
			host = host_part(h);
			if (!host) throw ApiError(400, "08P01", "header Host \"" + shown(h, 80) + "\" is not host[:port]");
			if (!options_.allowed_hosts_any() && !host_allowed(*host))
				throw ApiError(421, "42501",
							   "header Host \"" + shown(h, 80) +
								   "\" is not a name this server answers to: use its address, or list the name in "
								   "--http-allowed-hosts");
		}
		// A browser's request from a page of another origin (a form, a
		// fetch without a preflight) changes nothing.
		if (req.method != "GET" && req.method != "HEAD" && req.has_header("Origin")) {
			const std::string origin = req.get_header_value("Origin");
			if (!same_origin(origin, hosts == 1 ? req.get_header_value("Host") : std::string()))
				throw ApiError(403, "42501", "cross-origin request refused: Origin \"" + shown(origin, 80) +
												 "\" is not this server");
		}
	}

	// Does an Origin header name the server the request's Host names (or a
	// name --http-allowed-hosts lists by name, e.g. behind a proxy)?
	bool same_origin(const std::string &origin, const std::string &host_header) const {
		auto scheme = origin.find("://");
		if (scheme == std::string::npos) return false;	// "null", or not an origin
		std::string authority = origin.substr(scheme + 3);
		if (authority.find('/') != std::string::npos) return false;
		std::string oport, hport;
		auto oname = host_part(authority, &oport);
		if (!oname) return false;
		if (!host_header.empty()) {
			auto hname = host_part(host_header, &hport);
			if (hname && *hname == *oname && oport == hport) return true;
		}
		for (const auto &e : options_.allowed_hosts)
			if (e != "*" && host_matches(*oname, lower(e))) return true;
		return false;
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
			throw ApiError(403, "42501", "permission denied: " + c.req.method + " " + shown(c.req.path) +
											 " needs " + auth::describe(need));
	}

	// A query parameter given twice is ambiguous (which limit?); only label
	// may repeat.
	static void check_query(const Call &c) {
		const auto &params = c.req.params;
		for (auto it = params.begin(); it != params.end(); it = params.upper_bound(it->first))
			if (it->first != "label" && params.count(it->first) > 1)
				throw invalid("query parameter \"" + shown(it->first) + "\" is given more than once");
	}

	// The body into call.raw, at most --http-max-body bytes (both routes,
	// /api and the Step Functions one, which say the outcome each their way).
	enum class BodyRead { whole, over, cut };
	BodyRead read_bounded(Call &call, const httplib::ContentReader &reader) const {
		bool over = false;
		const bool ok = reader([&](const char *data, size_t n) {
			if (call.raw.size() + n > options_.max_body) {
				over = true;
				return false;
			}
			call.raw.append(data, n);
			return true;
		});
		return ok ? BodyRead::whole : over ? BodyRead::over : BodyRead::cut;
	}

	// Reads the body into call.raw.  No Content-Length and no chunked
	// encoding: no body (HTTP/1.1), answered at once.  Every refusal here
	// leaves body bytes unread, so the connection closes after the answer.
	void read_body(Call &call, const httplib::ContentReader &reader, httplib::Response &res) {
		const auto &req = call.req;
		const bool chunked = req.has_header("Transfer-Encoding");  // screen: then it is chunked
		const bool has_length = req.has_header("Content-Length");
		// A body is JSON only when it says so: a page of another origin can
		// POST text/plain, a form or multipart without a preflight, never
		// application/json.  Any other type is refused, with or without a body.
		const std::string type = req.get_header_value("Content-Type");
		if (!type.empty() && !json_type(type)) {
			close_after_answer();
			throw ApiError(415, "22023", "Content-Type \"" + shown(type, 80) +
											 "\" is not accepted: send the body as JSON with Content-Type: "
											 "application/json");
		}
		if (!chunked && !has_length) return;
		const std::string too_big = "request body is over the limit of " + std::to_string(options_.max_body) + " bytes";
		if (has_length && !chunked) {
			auto n = parse_int(req.get_header_value("Content-Length"), 0, INT64_MAX);
			if (!n) {
				close_after_answer();
				throw ApiError(400, "22023", "header Content-Length is not a byte count");
			}
			if (static_cast<uint64_t>(*n) > options_.max_body) {
				close_after_answer();
				throw ApiError(413, "54000", too_big);
			}
			if (*n == 0) return;
		}
		if (type.empty()) {
			close_after_answer();
			throw ApiError(415, "22023", "a request body needs Content-Type: application/json");
		}
		const BodyRead got = read_bounded(call, reader);
		if (got == BodyRead::whole) return;
		close_after_answer();
		if (got == BodyRead::over || res.status == 413) throw ApiError(413, "54000", too_big);
		if (t_conn && t_conn->limit_status == 408) throw ApiError(408, "57014", t_conn->limit_hit);
		throw ApiError(400, "08P01", "the request body could not be read (cut short, or its chunked encoding is invalid)");
	}

	void serve(Route fn, const auth::Need &need, const httplib::Request &req, httplib::Response &res,
			   const httplib::ContentReader *reader) {
		Call call{req, pool_};
		call.auth = options_.auth;
		call.max_response = options_.max_response;
		call.sigv4_key = &options_.sigv4_key;
		try {
			if (options_.auth) authenticate(call, need);
			check_query(call);
			if (reader) read_body(call, *reader, res);
			// The answers that read stored data take turns (AnswerGate).
			std::optional<AnswerGate::Turn> turn;
			if (!reader) turn.emplace(answers_, options_.request_timeout_ms);
			json out = fn(call);
			if (call.text) {
				res.status = call.status;
				call.text->push_back('\n');
				res.set_content(std::move(*call.text), "application/json");
			} else {
				send_json(res, call.status, out);
			}
		} catch (const ApiError &e) {
			fail(call, res, e.status, e);
		} catch (const Error &e) {
			metrics::database_error(e.sqlstate);
			// The connection may be gone: do not give this store back.
			if (transient_sqlstate(e.sqlstate)) call.store_.reset();
			fail(call, res, http_status_for(e.sqlstate), e);
		} catch (const std::exception &e) {
			call.store_.reset();
			fail(call, res, 500, Error("XX000", std::string("internal error: ") + e.what()));
		}
		// A refusal before a body was read (auth, a bad query) leaves it
		// on the connection: close it rather than read it as a request.
		if (reader && call.raw.empty() && res.status >= 400) close_after_answer();
		if (t_conn && t_conn->close_after) res.set_header("Connection", "close");
		if (call.store_) pool_.give_back(std::move(call.store_));
	}

	// The one place an API error is logged, with everything known.  The
	// client gets the SQLSTATE and, for 4xx, the message; a 500 or 503 says
	// no more than its kind (server internals and libpq's text stay here).
	void fail(const Call &call, httplib::Response &res, int status, const Error &e) {
		json fields = {{"method", call.req.method}, {"path", shown(call.req.path)}, {"status", status},
					   {"sqlstate", e.sqlstate}};
		if (call.instance) fields["instance"] = *call.instance;
		if (call.who) fields["caller"] = call.who->name;
		if (!e.detail.empty()) fields["detail"] = e.detail;
		if (!e.hint.empty()) fields["hint"] = e.hint;
		log::write(status >= 500 ? log::Level::error : log::Level::info, std::string("api: ") + e.what(), fields);
		// RFC 6750: a 401 names the scheme it wants.
		if (status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"genroc\"");
		if (status == 503 && e.sqlstate == "53300" && dynamic_cast<const ApiError *>(&e))
			send_json(res, status, error_body(e));	// the server's own capacity, said by itself
		else if (status == 503)
			send_json(res, status, error_body(Error(e.sqlstate, "the database is not available; try again")));
		else if (status >= 500)
			send_json(res, status,
					  error_body(Error(e.sqlstate, "internal error (SQLSTATE " + e.sqlstate +
													   "); the server's log has the detail")));
		else if (e.sqlstate == "54001")	 // PostgreSQL's stack check: its hint is about the server
			send_json(res, status, error_body(Error(e.sqlstate, e.what(), e.detail)));
		else
			send_json(res, status, error_body(e));
	}

	// GET /ui/NAME: a file of the console; /ui/ is its page.  The page's
	// links are #fragments, so no other path needs to answer with it.
	void serve_ui(const httplib::Request &req, httplib::Response &res) {
		std::string name = req.matches[1];
		if (name.empty()) name = "index.html";
		for (const auto &a : ui_assets()) {
			if (name != a.name) continue;
			res.status = 200;
			res.set_content(reinterpret_cast<const char *>(a.data), a.size, a.type);
			// Only the binary's own files run: no inline script or style, no
			// other origin, no framing.
			res.set_header("Content-Security-Policy",
						   "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
						   "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
			res.set_header("X-Content-Type-Options", "nosniff");
			res.set_header("Referrer-Policy", "no-referrer");
			res.set_header("Cache-Control", "no-cache");
			return;
		}
		Call call{req, pool_};
		fail(call, res, 404, Error("42883", "no console file /ui/" + shown(name)));
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
		body["ticking"] = up ? ticking() : nlohmann::ordered_json(nullptr);
		send_json(res, up ? 200 : 503, body);
	}

	// Who called genroc.tick() within the last minute (genroc.tickers):
	// [{kind, ticked_by, ago_ms}], newest first; with --auth, /healthz being
	// open, without ticked_by (worker ids and role names stay behind the
	// token).  null when the store cannot tell (its role may not read it).
	nlohmann::ordered_json ticking() {
		try {
			auto s = pool_.take();
			const json rows = s->tickers();
			pool_.give_back(std::move(s));
			nlohmann::ordered_json out = nlohmann::ordered_json::array();
			for (const auto &r : rows) {
				if (r.value("ago_ms", int64_t{0}) > 60'000) continue;
				nlohmann::ordered_json t;
				t["kind"] = r.value("kind", "");
				if (!options_.auth) t["ticked_by"] = r.value("ticked_by", "");
				t["ago_ms"] = r.value("ago_ms", int64_t{0});
				out.push_back(std::move(t));
			}
			return out;
		} catch (const std::exception &e) {
			log::debug("healthz: who ticks is not known", {{"error", e.what()}});
			return nullptr;
		}
	}

	// The database part of GET /metrics, kept for --metrics-cache: one
	// answer of genroc.metrics() and genroc.tickers() serves every scrape
	// within that time, from every listener of this process (the figures
	// depend on the process's database role only, never on the HTTP
	// caller).  Several Prometheus servers scraping every 15 s thus cost the
	// database one call per interval, not one per scrape.  A scrape that
	// finds the answer too old reads the database while holding `mu`: the
	// scrapes arriving meanwhile wait for that answer instead of each
	// asking.  A failed read is not kept (genroc_database_up says so at once).
	struct MetricsCache {
		std::mutex mu;
		std::chrono::steady_clock::time_point at;
		bool valid = false;
		json snapshot, tickers;
	};
	static MetricsCache &metrics_cache() {
		static MetricsCache c;
		return c;
	}

	// GET /metrics (metrics.hpp).  With --auth: a credential with reader,
	// operator or admin, as the GET routes.  The database part is one
	// genroc.metrics() and one genroc.tickers() call (or their answer kept
	// for --metrics-cache); when they fail the process's own series still
	// answer, with genroc_database_up 0.
	void serve_metrics(const httplib::Request &req, httplib::Response &res) {
		Call call{req, pool_};
		call.auth = options_.auth;
		try {
			if (options_.auth && !options_.metrics_only) authenticate(call, auth::need_read());
			json snapshot, tickers;
			MetricsCache &cache = metrics_cache();
			std::unique_lock<std::mutex> held(cache.mu);
			const auto now = std::chrono::steady_clock::now();
			if (cache.valid && options_.metrics_cache_ms > 0 &&
				now - cache.at < std::chrono::milliseconds(options_.metrics_cache_ms)) {
				snapshot = cache.snapshot;
				tickers = cache.tickers;
			} else {
				cache.valid = false;
				try {
					snapshot = call.store().metrics(metrics::kMaxDefinitions);
					tickers = call.store().tickers();
					cache.snapshot = snapshot;
					cache.tickers = tickers;
					cache.at = std::chrono::steady_clock::now();
					cache.valid = true;
				} catch (const Error &e) {
					metrics::database_error(e.sqlstate);
					if (transient_sqlstate(e.sqlstate)) call.store_.reset();
					if (metrics_db_ok_.exchange(false))
						log::warn("metrics: the database figures are not available",
								  {{"sqlstate", e.sqlstate}, {"error", e.what()}});
					snapshot = nullptr;
				}
			}
			held.unlock();
			if (snapshot.is_object()) metrics_db_ok_ = true;
			res.status = 200;
			res.set_content(metrics::render(snapshot, tickers, !options_.metrics_only), metrics::kContentType);
		} catch (const ApiError &e) {
			fail(call, res, e.status, e);
		} catch (const Error &e) {
			if (transient_sqlstate(e.sqlstate)) call.store_.reset();
			fail(call, res, http_status_for(e.sqlstate), e);
		} catch (const std::exception &e) {
			call.store_.reset();
			fail(call, res, 500, Error("XX000", std::string("internal error: ") + e.what()));
		}
		if (t_conn && t_conn->close_after) res.set_header("Connection", "close");
		if (call.store_) pool_.give_back(std::move(call.store_));
	}


	// POST /: the Step Functions API (sfn_api.hpp).  AWS's framing: the
	// action in X-Amz-Target, the body application/x-amz-json-1.0, errors
	// {"__type", "message"}.  With --auth the SigV4 signature is checked
	// (sigv4.hpp) over the whole body, so the body is read first (bounded
	// by --http-max-body); the key pair's token must be live, and its
	// permissions are the HTTP API's.
	void serve_sfn(const httplib::Request &req, httplib::Response &res, const httplib::ContentReader &reader) {
		Call call{req, pool_};
		call.auth = options_.auth;
		std::string action;
		auto answer = [&](int status, const json &body) {
			res.status = status;
			res.set_content(body.dump(), "application/x-amz-json-1.0");
			unsigned char r[16];
			if (RAND_bytes(r, sizeof r) == 1) res.set_header("x-amzn-RequestId", sigv4::hex(std::string(reinterpret_cast<char *>(r), sizeof r)));
		};
		auto refuse = [&](const sfn::Failure &f) {
			json fields = {{"action", shown(action, 80)}, {"type", f.type}, {"status", f.status}};
			if (call.who) fields["caller"] = call.who->name;
			log::write(log::Level::info, "sfn: " + f.message, fields);
			answer(f.status, json{{"__type", f.type}, {"message", f.message}});
		};
		try {
			const std::string target = req.get_header_value("X-Amz-Target");
			const std::string prefix = "AWSStepFunctions.";
			if (target.compare(0, prefix.size(), prefix) != 0 || target.size() == prefix.size())
				throw sfn::Failure{"UnknownOperationException", "X-Amz-Target must be AWSStepFunctions.<Action>", 400};
			action = target.substr(prefix.size());
			std::string media = lower(req.get_header_value("Content-Type"));
			media = media.substr(0, media.find(';'));
			while (!media.empty() && media.back() == ' ') media.pop_back();
			if (media != "application/x-amz-json-1.0" && media != "application/x-amz-json-1.1" && media != "application/json") {
				close_after_answer();
				throw sfn::Failure{"SerializationException",
								   "Content-Type must be application/x-amz-json-1.0 (AWS JSON 1.0)", 400};
			}
			const BodyRead got = read_bounded(call, reader);
			if (got != BodyRead::whole) {
				close_after_answer();
				if (got == BodyRead::over) throw sfn::Failure{"ValidationException", "the request body is over the limit of " +
																		 std::to_string(options_.max_body) + " bytes", 413};
				throw sfn::Failure{"SerializationException", "the request body could not be read", 400};
			}
			if (options_.auth) sigv4_authenticate(call);
			json body = json::object();
			if (!call.raw.empty()) {
				try {
					body = parse_json_text(call.raw, "request body");
				} catch (const Error &e) {
					throw sfn::Failure{"SerializationException", e.what(), 400};
				}
				if (!body.is_object()) throw sfn::Failure{"SerializationException", "the request body must be a JSON object", 400};
			}
			std::optional<auth::Principal> who = call.who;
			json out = sfn::call(
				options_.sfn, action, body, [&call]() -> Store & { return call.store(); }, who,
				[this] { return stopped_.load(); });
			answer(200, out);
		} catch (const sfn::Failure &f) {
			refuse(f);
		} catch (const Error &e) {
			metrics::database_error(e.sqlstate);
			if (transient_sqlstate(e.sqlstate)) call.store_.reset();
			const int status = http_status_for(e.sqlstate);
			log::write(status >= 500 ? log::Level::error : log::Level::info, std::string("sfn: ") + e.what(),
					   {{"action", shown(action, 80)}, {"sqlstate", e.sqlstate}});
			if (status == 503)
				answer(503, json{{"__type", "ServiceUnavailable"}, {"message", "the database is not available; try again"}});
			else
				answer(500, json{{"__type", "InternalFailure"},
								 {"message", "internal error (SQLSTATE " + e.sqlstate + "); the server's log has the detail"}});
		} catch (const std::exception &e) {
			call.store_.reset();
			log::write(log::Level::error, std::string("sfn: internal error: ") + e.what(), {{"action", shown(action, 80)}});
			answer(500, json{{"__type", "InternalFailure"}, {"message", "internal error; the server's log has the detail"}});
		}
		if (t_conn && t_conn->close_after) res.set_header("Connection", "close");
		if (call.store_) pool_.give_back(std::move(call.store_));
	}

	// The SigV4 check: the key pair's token id, the signature with the
	// secret derived from it, a replay, then the token itself (live, its
	// permissions).  Never logs a secret or a signature.
	void sigv4_authenticate(Call &call) {
		const auto &req = call.req;
		sigv4::Request r;
		r.method = req.method;
		r.path = req.path;
		for (const auto &[k, v] : req.params) r.query.emplace(k, v);
		for (const auto &[k, v] : req.headers) r.headers.emplace_back(k, v);
		r.body = call.raw;
		const int64_t now_s =
			std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
		try {
			sigv4::Credential c = sigv4::parse(r, options_.sfn.region, now_s);
			auto id = sigv4::token_id_of(c.access_key_id);
			if (!id || options_.sigv4_key.empty())
				throw sigv4::Refused{"UnrecognizedClientException", "The security token included in the request is invalid."};
			// The key first, as AWS answers: an unknown or revoked one is
			// UnrecognizedClientException whatever its signature.
			json v = call.store().token_verify(sigv4::token_text(options_.sigv4_key, *id));
			if (v.is_null())
				throw sigv4::Refused{"UnrecognizedClientException",
									 "The security token included in the request is invalid (revoked or unknown)."};
			sigv4::verify(r, c, sigv4::secret_access_key(options_.sigv4_key, *id));
			if (!replays_.first_use(c.signature, c.time_s, now_s))
				throw sigv4::Refused{"InvalidSignatureException",
									 "The request signature has been used before: each request is signed anew"};
			auth::Principal who{v.at("name").get<std::string>(), {}};
			for (const auto &p : v.at("permissions")) who.permissions.insert(p.get<std::string>());
			call.who = std::move(who);
		} catch (const sigv4::Refused &e) {
			throw sfn::Failure{e.type, e.message, e.type == "MissingAuthenticationTokenException" ? 403 : 400};
		}
	}

	void routes() {
		svr_.set_payload_max_length(options_.max_body);
		// What httplib writes in Keep-Alive headers; GuardedServer enforces both.
		svr_.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(options_.keep_alive_timeout_ms / 1000)));
		svr_.set_keep_alive_max_count(kKeepAliveMaxRequests);
		// httplib's default also sets SO_REUSEPORT, which would let a second
		// genroc bind the same port silently; SO_REUSEADDR alone still allows
		// a restart while old connections sit in TIME_WAIT.
		svr_.set_socket_options([](socket_t sock) {
			int yes = 1;
			setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
		});
		// A backlog burst of connections is accepted at once (each gets a
		// thread, or a 503 over the cap), so no poll interval is needed.

		known_.emplace_back("GET", std::regex("/healthz"));
		svr_.Get("/healthz", [this](const httplib::Request &, httplib::Response &res) { healthz(res); });
		known_.emplace_back("GET", std::regex("/metrics"));
		svr_.Get("/metrics", [this](const httplib::Request &req, httplib::Response &res) { serve_metrics(req, res); });
		// --metrics-listen serves /healthz and /metrics alone.
		if (!options_.metrics_only) {
			// Each route with the permission it needs under --auth (docs/http-api.md "HTTP API").
			using namespace auth;
			with_body("POST", "/api/definitions", post_definition, need_operate());
			get("/api/definitions", get_definitions, need_read());
			with_body("POST", "/api/instances", post_instance, need_operate());
			with_body("POST", "/api/instances/batch", post_instances_batch, need_operate());
			with_body("POST", "/api/instances/bulk", post_bulk, need_operate());
			get("/api/instances", get_instances, need_read_instances());
			get(R"(/api/instances/([^/]+))", get_instance, need_read_instances());
			get(R"(/api/instances/([^/]+)/history)", get_history, need_read_instances());
			get(R"(/api/objects/([^/]+))", get_object, need_read_instances());
			with_body("POST", R"(/api/instances/([^/]+)/cancel)", post_cancel, need_operate());
			with_body("POST", R"(/api/instances/([^/]+)/retry)", post_retry, need_operate());
			with_body("POST", R"(/api/instances/([^/]+)/redrive)", post_redrive, need_operate());
			with_body("POST", R"(/api/instances/([^/]+)/resume)", post_resume, need_operate());
			with_body("POST", R"(/api/instances/([^/]+)/events/([^/]+))", post_event, need_operate());
			with_body("POST", "/api/activities/succeed", post_succeed, need_work());
			with_body("POST", "/api/activities/fail", post_fail, need_work());
			with_body("POST", "/api/activities/heartbeat", post_heartbeat, need_work());
			with_body("POST", R"(/api/activities/([^/]+)/claim)", post_claim, need_work());
			get("/api/workers", get_workers, need_read());
			with_body("POST", R"(/api/workers/([^/]+)/drain)", post_drain, need_operate());
			get(R"(/api/definitions/([^/]+))", get_definition, need_read());
			get("/api/queues", get_queues, need_read());
			get("/api/whoami", get_whoami, need_any());
			// The Step Functions API (sfn_api.hpp), its own framing and auth.
			known_.emplace_back("POST", std::regex("/"));
			svr_.Post("/", [this](const httplib::Request &req, httplib::Response &res,
								  const httplib::ContentReader &reader) { serve_sfn(req, res, reader); });

			// The web console: static files compiled into the binary, no
			// credential needed (they hold no data; every /api call they make
			// carries the user's).
			known_.emplace_back("GET", std::regex("/ui(/.*)?"));
			svr_.Get("/ui", [](const httplib::Request &, httplib::Response &res) { res.set_redirect("/ui/"); });
			svr_.Get(R"(/ui/(.*))", [this](const httplib::Request &req, httplib::Response &res) { serve_ui(req, res); });
			with_body("POST", "/api/tokens", post_token, need_admin());
			get("/api/tokens", get_tokens, need_admin());
			with_body("DELETE", R"(/api/tokens/([^/]+))", revoke_token, need_admin());
			with_body("POST", R"(/api/tokens/([^/]+)/revoke)", revoke_token, need_admin());
		}

		// No route: 404 before httplib reads a body for it (it would wait for
		// the connection to close when there is no Content-Length).
		svr_.set_pre_routing_handler([this](const httplib::Request &req, httplib::Response &res) {
			try {
				screen(req);
			} catch (const ApiError &e) {
				close_after_answer();
				res.set_header("Connection", "close");
				Call call{req, pool_};
				fail(call, res, e.status, e);
				return httplib::Server::HandlerResponse::Handled;
			}
			if (known_route(req)) return httplib::Server::HandlerResponse::Unhandled;
			// A body it may carry stays unread: close rather than read it
			// as the next request.
			const std::string length = req.get_header_value("Content-Length");
			if (req.has_header("Transfer-Encoding") || (!length.empty() && length != "0")) {
				close_after_answer();
				res.set_header("Connection", "close");
			}
			Call call{req, pool_};
			fail(call, res, 404, Error("42883", "no route for " + shown(req.method, 20) + " " + shown(req.path)));
			return httplib::Server::HandlerResponse::Handled;
		});

		// Errors httplib answers itself (a request it cannot parse, a head
		// over a limit or late) get the same JSON shape as ours.
		svr_.set_error_handler(httplib::Server::HandlerWithResponse(
			[this](const httplib::Request &req, httplib::Response &res) {
			if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
			// What follows a request httplib could not read is no request.
			close_after_answer();
			res.set_header("Connection", "close");
			Call call{req, pool_};
			const std::string limit = t_conn ? t_conn->limit_hit : std::string();
			const int limit_status = t_conn ? t_conn->limit_status : 0;
			if (res.status == 404)
				fail(call, res, 404, Error("42883", "no route for " + shown(req.method, 20) + " " + shown(req.path)));
			else if (res.status == 413)
				fail(call, res, 413, Error("54000", "request body is over the limit of " +
														 std::to_string(options_.max_body) + " bytes"));
			else if (limit_status == 408)
				fail(call, res, 408, Error("57014", limit));
			else if (limit_status == 431)
				fail(call, res, 431, Error("54000", limit));
			else
				fail(call, res, res.status, Error(res.status >= 500 ? "XX000" : "08P01",
												  "the request is not valid HTTP/1.1 (HTTP " +
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
				Call call{req, pool_};
				fail(call, res, 500, Error("XX000", "internal error: " + what));
			});
	}
};

}  // namespace

int http_status_for(const std::string &s) {
	if (s == sqlstate::INVALID_DEFINITION || s.rfind("22", 0) == 0) return 400;
	if (s == "28000") return 401;
	if (s == "42501") return 403;
	if (s == sqlstate::DEFINITION_NOT_FOUND || s == sqlstate::INSTANCE_NOT_FOUND || s == sqlstate::OBJECT_NOT_FOUND ||
		s == "42704")
		return 404;
	if (s == sqlstate::LEASE_LOST || s == sqlstate::WORKER_ID_IN_USE ||
		s == sqlstate::WORKER_NOT_REGISTERED || s == sqlstate::TASK_TOKEN_INVALID ||
		s == sqlstate::INSTANCE_ENDED || s == sqlstate::INSTANCE_NOT_FAILED || s == "23505")
		return 409;
	if (s == "40P01" || s == "40001") return 409;  // lost a race (deadlock, serialization): send again
	// A limit the request went over (nesting, sizes; PostgreSQL's stack
	// check): the client's input, not a server fault.
	if (s.rfind("54", 0) == 0) return 400;
	if (transient_sqlstate(s) || s.rfind("53", 0) == 0) return 503;
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

std::unique_ptr<ApiHandler> make_api_handler(const ApiOptions &options,
											 std::function<std::unique_ptr<Store>()> open_store,
											 HealthInfo health) {
	if (!open_store) throw std::runtime_error("make_api_handler: no store factory");
	return std::make_unique<HttpServer>(options, std::move(open_store), std::move(health));
}

}  // namespace genroc
