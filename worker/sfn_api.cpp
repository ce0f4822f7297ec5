// sfn_api.cpp — the Step Functions actions mapped onto the Store; see sfn_api.hpp.
#include "sfn_api.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "json_guard.hpp"
#include "sigv4.hpp"

namespace genroc::sfn {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &type, const std::string &message) { throw Failure{type, message, 400}; }

// ---- fields of a request --------------------------------------------------

const json *field(const json &body, const char *name) {
	auto it = body.find(name);
	if (it == body.end() || it->is_null()) return nullptr;
	return &*it;
}

std::string str(const json &body, const char *name, bool required) {
	const json *v = field(body, name);
	if (!v) {
		if (required)
			fail("ValidationException", std::string("1 validation error detected: Value null at '") + name +
											"' failed to satisfy constraint: Member must not be null");
		return {};
	}
	if (!v->is_string()) fail("ValidationException", std::string("'") + name + "' must be a string");
	return v->get<std::string>();
}

bool boolean(const json &body, const char *name) {
	const json *v = field(body, name);
	if (!v) return false;
	if (!v->is_boolean()) fail("ValidationException", std::string("'") + name + "' must be a boolean");
	return v->get<bool>();
}

int max_results(const json &body, int fallback) {
	const json *v = field(body, "maxResults");
	if (!v) return fallback;
	if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1000)
		fail("ValidationException", "'maxResults' must be an integer from 0 to 1000");
	const int n = v->get<int>();
	return n == 0 ? fallback : n;
}

// Refuses members the action does not know: a typo must not be ignored.
void only(const json &body, std::initializer_list<const char *> known) {
	for (auto &[k, v] : body.items()) {
		bool ok = false;
		for (const char *n : known) ok = ok || k == n;
		if (!ok) fail("ValidationException", "unknown member \"" + shown(k) + "\"");
	}
}

// ---- names, ARNs, times ---------------------------------------------------

// AWS's rule for names: 1 to 80 characters, none of whitespace, brackets,
// wildcards, special characters or control characters.
void check_name(const std::string &name, const char *what) {
	if (name.empty() || name.size() > 80) fail("InvalidName", std::string(what) + " must be 1 to 80 characters");
	for (unsigned char c : name)
		if (c <= 0x20 || c == 0x7f || std::string("<>{}[]?*\"#%\\^|~`$&,;:/").find(static_cast<char>(c)) != std::string::npos)
			fail("InvalidName", std::string("Invalid Name: '") + shown(name) + "'");
}

struct Arns {
	const Options &o;
	std::string prefix() const { return "arn:aws:states:" + o.region + ":" + o.account + ":"; }
	std::string machine(const std::string &name) const { return prefix() + "stateMachine:" + name; }
	std::string version(const std::string &name, int v) const { return machine(name) + ":" + std::to_string(v); }
	std::string alias(const std::string &name, const std::string &a) const { return machine(name) + ":" + a; }
	std::string execution(const std::string &machine, const std::string &name) const {
		return prefix() + "execution:" + machine + ":" + name;
	}
	std::string activity(const std::string &name) const { return prefix() + "activity:" + name; }
	std::string role() const { return "arn:aws:iam::" + o.account + ":role/genroc"; }

	// The parts after "arn:aws:states:REGION:ACCOUNT:KIND:"; InvalidArn when
	// the ARN is not of this kind, region and account.
	std::vector<std::string> parse(const std::string &arn, const std::string &kind, size_t min_parts,
								   size_t max_parts) const {
		const std::string head = prefix() + kind + ":";
		if (arn.compare(0, head.size(), head) != 0)
			fail("InvalidArn", "Invalid Arn: '" + shown(arn) + "' (want " + head + "...)");
		std::vector<std::string> parts;
		size_t at = head.size();
		for (;;) {
			size_t next = arn.find(':', at);
			parts.push_back(arn.substr(at, next == std::string::npos ? std::string::npos : next - at));
			if (next == std::string::npos) break;
			at = next + 1;
		}
		if (parts.size() < min_parts || parts.size() > max_parts)
			fail("InvalidArn", "Invalid Arn: '" + shown(arn) + "'");
		for (const auto &p : parts)
			if (p.empty()) fail("InvalidArn", "Invalid Arn: '" + shown(arn) + "'");
		return parts;
	}
};

// A machine ARN, a version ARN (machine:N) or an alias ARN (machine:ALIAS).
struct MachineRef {
	std::string name;
	std::optional<int> version;
	std::optional<std::string> alias;
};

// AWS's rule for an alias name: 1 to 80 of [A-Za-z0-9_.-], not all digits.
bool alias_name_ok(const std::string &a) {
	if (a.empty() || a.size() > 80 || std::all_of(a.begin(), a.end(), ::isdigit)) return false;
	return std::all_of(a.begin(), a.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
}

enum Qualifier { kMachine = 0, kVersion = 1, kAlias = 2 };

// `allowed`: the qualifiers the action takes (kVersion | kAlias).
MachineRef machine_ref(const Arns &arns, const std::string &arn, int allowed) {
	auto parts = arns.parse(arn, "stateMachine", 1, allowed ? 2 : 1);
	MachineRef r{parts[0], std::nullopt, std::nullopt};
	if (parts.size() == 2) {
		const std::string &v = parts[1];
		if (std::all_of(v.begin(), v.end(), ::isdigit)) {
			if (!(allowed & kVersion) || v.size() > 9 || std::stoi(v) < 1)
				fail("InvalidArn", "Invalid Arn: '" + shown(arn) + "' (a version ARN is not taken here)");
			r.version = std::stoi(v);
		} else {
			if (!(allowed & kAlias) || !alias_name_ok(v))
				fail("InvalidArn", "Invalid Arn: '" + shown(arn) + "' (an alias ARN is not taken here)");
			r.alias = v;
		}
	}
	return r;
}

// RFC 3339 text (genroc's) as AWS JSON's timestamp: seconds since the epoch.
json when(const json &iso) {
	if (!iso.is_string()) return nullptr;
	int64_t ms = 0;
	if (!asl::parse_time(iso.get<std::string>(), ms)) return nullptr;
	return static_cast<double>(ms) / 1000.0;
}

double now_seconds() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
			   .count() /
		   1000.0;
}

// ---- definitions: activity ARNs in, out -----------------------------------

// Every "Resource" naming an activity of this region and account by its ARN
// becomes activity:NAME (to_genroc), or back (to_aws).  The definition's
// nesting is bounded by check_json_text (512).
void map_resources(json &j, const Arns &arns, bool to_genroc) {
	if (j.is_array()) {
		for (auto &v : j) map_resources(v, arns, to_genroc);
		return;
	}
	if (!j.is_object()) return;
	for (auto &[k, v] : j.items()) {
		if (k == "Resource" && v.is_string()) {
			const std::string r = v.get<std::string>();
			const std::string head = arns.prefix() + "activity:";
			if (to_genroc && r.compare(0, head.size(), head) == 0 && r.size() > head.size())
				v = "activity:" + r.substr(head.size());
			else if (!to_genroc && r.compare(0, 9, "activity:") == 0)
				v = head + r.substr(9);
		} else {
			map_resources(v, arns, to_genroc);
		}
	}
}

json parse_definition(const std::string &text, const Arns &arns) {
	json d;
	try {
		d = parse_json_text(text, "the definition");
	} catch (const Error &e) {
		fail("InvalidDefinition", std::string("Invalid State Machine Definition: '") + e.what() + "'");
	}
	if (!d.is_object()) fail("InvalidDefinition", "Invalid State Machine Definition: it must be a JSON object");
	map_resources(d, arns, true);
	return d;
}

std::string definition_text(json d, const Arns &arns) {
	map_resources(d, arns, false);
	return d.dump();
}

// ---- paging tokens --------------------------------------------------------

std::string make_token(const Options &o, const std::string &what, const json &where) {
	const std::string payload = json{{"w", what}, {"p", where}}.dump();
	return auth::base64url_encode(payload) + "." +
		   auth::base64url_encode(sigv4::hmac_sha256(o.paging_key, payload));
}

// The position a token names; InvalidToken when it was changed or made for
// another listing.
json read_token(const Options &o, const std::string &what, const std::string &token) {
	const auto dot = token.find('.');
	auto bad = [] { fail("InvalidToken", "Invalid Token: the nextToken was not given by this listing"); };
	if (dot == std::string::npos || token.size() > 4096) bad();
	auto payload = auth::base64url_decode(token.substr(0, dot));
	auto mac = auth::base64url_decode(token.substr(dot + 1));
	if (!payload || !mac) bad();
	const std::string want = sigv4::hmac_sha256(o.paging_key, *payload);
	if (mac->size() != want.size() || CRYPTO_memcmp(mac->data(), want.data(), want.size()) != 0) bad();
	json j = json::parse(*payload, nullptr, false);
	if (j.is_discarded() || !j.is_object() || j.value("w", "") != what) bad();
	return j["p"];
}

// ---- executions -----------------------------------------------------------

const char *kNameLabel = "sfn_execution";
const char *kVersionLabel = "sfn_version";	// started by a version ARN
const char *kAliasLabel = "genroc:alias";	// started by an alias (genroc.start's option)

std::string execution_name(const json &inst) {
	const json &labels = inst.contains("labels") ? inst["labels"] : json();
	if (labels.is_object() && labels.contains(kNameLabel) && labels[kNameLabel].is_string())
		return labels[kNameLabel].get<std::string>();
	return "genroc-" + std::to_string(inst.at("id").get<int64_t>());
}

std::string aws_status(const json &inst) {
	const std::string s = inst.value("status", "");
	if (s == "succeeded") return "SUCCEEDED";
	if (s == "cancelled") return "ABORTED";
	if (s == "failed") return inst.value("error", json()) == "States.Timeout" ? "TIMED_OUT" : "FAILED";
	return "RUNNING";
}

bool ended(const json &inst) {
	const std::string s = inst.value("status", "");
	return s == "succeeded" || s == "failed" || s == "cancelled";
}

// The top-level instance an execution ARN names.
json find_execution(Store &store, const Arns &arns, const std::string &arn) {
	auto parts = arns.parse(arn, "execution", 2, 2);
	const std::string &machine = parts[0], &name = parts[1];
	json rows = store.list_instances({{"definition", machine}, {"top", true}, {"label", {{kNameLabel, name}}}, {"limit", 1}});
	if (rows.is_array() && !rows.empty()) return rows[0];
	if (name.rfind("genroc-", 0) == 0 && name.size() > 7 && name.size() < 27 &&
		std::all_of(name.begin() + 7, name.end(), ::isdigit)) {
		try {
			json inst = store.get_instance(std::stoll(name.substr(7)));
			if (inst.value("definition", "") == machine && inst["parent_id"].is_null() &&
				execution_name(inst) == name)
				return inst;
		} catch (const Error &e) {
			if (e.sqlstate != sqlstate::INSTANCE_NOT_FOUND) throw;
		}
	}
	fail("ExecutionDoesNotExist", "Execution Does Not Exist: '" + shown(arn) + "'");
}


json execution_item(const Arns &arns, const json &inst) {
	const std::string machine = inst.at("definition");
	json out = {{"executionArn", arns.execution(machine, execution_name(inst))},
				{"stateMachineArn", arns.machine(machine)},
				{"name", execution_name(inst)},
				{"status", aws_status(inst)},
				{"startDate", when(inst["created_at"])}};
	if (ended(inst)) out["stopDate"] = when(inst["ended_at"]);
	return out;
}

json describe_execution(const Arns &arns, const json &inst) {
	json out = execution_item(arns, inst);
	const json &labels = inst.contains("labels") ? inst["labels"] : json();
	const std::string machine = inst.at("definition");
	if (labels.is_object() && labels.contains(kAliasLabel) && labels[kAliasLabel].is_string()) {
		out["stateMachineAliasArn"] = arns.alias(machine, labels[kAliasLabel]);
		out["stateMachineVersionArn"] = arns.version(machine, inst.value("version", 0));
	} else if (labels.is_object() && labels.contains(kVersionLabel)) {
		out["stateMachineVersionArn"] = arns.version(machine, inst.value("version", 0));
	}
	out["input"] = inst["input"].dump();
	out["inputDetails"] = {{"included", true}};
	if (inst.value("status", "") == "succeeded") {
		out["output"] = inst["output"].dump();
		out["outputDetails"] = {{"included", true}};
	}
	if (inst.value("status", "") == "failed" || inst.value("status", "") == "cancelled") {
		if (inst["error"].is_string()) out["error"] = inst["error"];
		if (inst["cause"].is_string()) out["cause"] = inst["cause"];
	}
	return out;
}

// The redrives of an execution, read from its log ('redriven' rows): how
// many, and when the last one was.
struct Redrives {
	int count = 0;
	json last_at;
};

Redrives redrives_of(Store &store, int64_t id) {
	json log = store.history(id, true);
	const json &rows = log.contains("history") ? log["history"] : log;
	Redrives r;
	for (const json &row : rows)
		if (row.value("event", "") == "redriven") {
			r.count++;
			r.last_at = row["at"];
		}
	return r;
}

// AWS's redrive members of DescribeExecution: a failed, timed-out or
// aborted top-level execution may be redriven.
void add_redrive(json &out, Store &store, const json &inst) {
	const Redrives r = redrives_of(store, inst.at("id").get<int64_t>());
	out["redriveCount"] = r.count;
	if (r.count > 0) out["redriveDate"] = when(r.last_at);
	const std::string s = inst.value("status", "");
	if (s == "failed" || s == "cancelled") {
		out["redriveStatus"] = "REDRIVABLE";
	} else {
		out["redriveStatus"] = "NOT_REDRIVABLE";
		out["redriveStatusReason"] = "Execution is " + aws_status(inst) + " and cannot be redriven";
	}
}

// ---- permissions ----------------------------------------------------------

void need(const std::optional<auth::Principal> &who, const auth::Need &n, const std::string &action) {
	if (!who || auth::allows(*who, n)) return;
	fail("AccessDeniedException", "User: " + who->name + " is not authorized to perform: states:" + action +
									  " (it needs " + auth::describe(n) + ")");
}

// ---- errors from the store ------------------------------------------------

// What a store error means for the action at hand.
[[noreturn]] void rethrow(const Error &e, const std::string &action) {
	const std::string &s = e.sqlstate;
	const bool alias_action = action.find("StateMachineAlias") != std::string::npos;
	if (s == sqlstate::DEFINITION_NOT_FOUND) fail(alias_action ? "ResourceNotFound" : "StateMachineDoesNotExist", e.what());
	if (s == sqlstate::ALIAS_NOT_FOUND) fail("ResourceNotFound", e.what());
	if (s == sqlstate::DEFINITION_DELETED) fail(alias_action ? "StateMachineDeleting" : "StateMachineDoesNotExist", e.what());
	if (s == "55006") fail("ConflictException", e.what());
	if (s == "54000" && alias_action) fail("ServiceQuotaExceededException", e.what());
	if (s == sqlstate::INSTANCE_NOT_FOUND) fail("ExecutionDoesNotExist", e.what());
	if (s == sqlstate::INVALID_DEFINITION) fail("InvalidDefinition", e.what());
	if (s == sqlstate::TASK_TOKEN_INVALID) fail("TaskDoesNotExist", e.what());
	if (s == sqlstate::INSTANCE_ENDED) fail("ValidationException", e.what());
	if (s == sqlstate::INSTANCE_NOT_FAILED && action == "RedriveExecution") fail("ExecutionNotRedrivable", e.what());
	if (s == "42501") fail("AccessDeniedException", e.what());
	if (s.rfind("22", 0) == 0 || s.rfind("54", 0) == 0) {
		if (action == "StartExecution" || action == "StartSyncExecution") fail("InvalidExecutionInput", e.what());
		if (action.rfind("SendTask", 0) == 0) fail("InvalidOutput", e.what());
		fail("ValidationException", e.what());
	}
	throw e;	// the server's own (class 08, 53, …): http_api.cpp answers 5xx
}

// ---- state machines -------------------------------------------------------

// A definition that was deleted (genroc.undefine), or whose version was, is
// gone for the actions that name it.
json live_definition(Store &store, const std::string &name, std::optional<int> version) {
	json d = store.get_definition(name, version);
	if (d.contains("deleted_at"))
		fail("StateMachineDoesNotExist", "State Machine Does Not Exist: '" + shown(name) +
											 (version ? ":" + std::to_string(*version) : std::string()) + "' was deleted");
	return d;
}

// created_at of version 1: the state machine's creation.
json creation_date(Store &store, const std::string &name) { return when(store.get_definition(name, 1)["created_at"]); }

json create_state_machine(const Arns &arns, Store &store, const json &b) {
	only(b, {"name", "definition", "roleArn", "type", "loggingConfiguration", "tags", "tracingConfiguration", "publish",
			 "versionDescription"});
	const std::string name = str(b, "name", true);
	check_name(name, "name");
	const std::string type = str(b, "type", false);
	if (!type.empty() && type != "STANDARD" && type != "EXPRESS")
		fail("ValidationException", "'type' must be STANDARD or EXPRESS");
	json def = parse_definition(str(b, "definition", true), arns);
	std::optional<json> existing;
	try {
		existing = store.get_definition(name, std::nullopt);
	} catch (const Error &e) {
		if (e.sqlstate != sqlstate::DEFINITION_NOT_FOUND) throw;
	}
	// a deleted name may be made again (define makes it live, versions numbered on)
	if (existing && !existing->contains("deleted_at") && existing->at("definition") != def)
		fail("StateMachineAlreadyExists", "State Machine Already Exists: '" + arns.machine(name) + "'");
	DefineResult r = store.define(name, def);
	json out = {{"stateMachineArn", arns.machine(name)}, {"creationDate", creation_date(store, name)}};
	if (boolean(b, "publish")) out["stateMachineVersionArn"] = arns.version(name, r.version);
	return out;
}

json update_state_machine(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "definition", "roleArn", "loggingConfiguration", "tracingConfiguration", "publish",
			 "versionDescription"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kMachine);
	if (str(b, "versionDescription", false).size() > 256)
		fail("ValidationException", "'versionDescription' must be at most 256 characters");
	json current = live_definition(store, m.name, std::nullopt);
	int version = current.at("version");
	if (field(b, "definition")) {
		DefineResult r = store.define(m.name, parse_definition(str(b, "definition", true), arns));
		version = r.version;
		if (!r.is_new) current = store.get_definition(m.name, r.version);
		else current = store.get_definition(m.name, std::nullopt);
	}
	json out = {{"updateDate", when(current["created_at"])}};
	if (boolean(b, "publish")) out["stateMachineVersionArn"] = arns.version(m.name, version);
	return out;
}

json describe_definition(const Arns &arns, Store &store, const json &d, bool version_arn) {
	const std::string name = d.at("name");
	json out = {{"stateMachineArn", version_arn ? arns.version(name, d.at("version")) : arns.machine(name)},
				{"name", name},
				{"status", "ACTIVE"},
				{"definition", definition_text(d.at("definition"), arns)},
				{"roleArn", arns.role()},
				{"type", "STANDARD"},
				{"creationDate", version_arn ? when(d["created_at"]) : creation_date(store, name)},
				{"revisionId", std::to_string(d.at("version").get<int>())}};
	return out;
}

json describe_state_machine(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "includedData"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kVersion);
	return describe_definition(arns, store, live_definition(store, m.name, m.version), m.version.has_value());
}

json list_state_machines(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"maxResults", "nextToken"});
	const int n = max_results(b, 100);
	std::string after;
	if (field(b, "nextToken")) after = read_token(o, "ListStateMachines", str(b, "nextToken", true)).get<std::string>();
	json defs = store.list_definitions();
	std::vector<json> rows(defs.begin(), defs.end());
	std::sort(rows.begin(), rows.end(), [](const json &a, const json &c) { return a.at("name") < c.at("name"); });
	json items = json::array();
	std::string last;
	bool more = false;
	for (const auto &d : rows) {
		const std::string name = d.at("name");
		if (!after.empty() && name <= after) continue;
		if (static_cast<int>(items.size()) == n) {
			more = true;
			break;
		}
		items.push_back({{"stateMachineArn", arns.machine(name)},
						 {"name", name},
						 {"type", "STANDARD"},
						 {"creationDate", creation_date(store, name)}});
		last = name;
	}
	json out = {{"stateMachines", items}};
	if (more) out["nextToken"] = make_token(o, "ListStateMachines", last);
	return out;
}

json publish_version(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "revisionId", "description"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kMachine);
	json d = live_definition(store, m.name, std::nullopt);
	if (field(b, "revisionId") && str(b, "revisionId", true) != std::to_string(d.at("version").get<int>()))
		fail("ConflictException", "the state machine's revision is " + std::to_string(d.at("version").get<int>()) +
									  ", not " + shown(str(b, "revisionId", true)));
	return {{"creationDate", when(d["created_at"])}, {"stateMachineVersionArn", arns.version(m.name, d.at("version"))}};
}

json list_versions(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "maxResults", "nextToken"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kMachine);
	const int n = max_results(b, 100);
	int from = live_definition(store, m.name, std::nullopt).at("version");
	if (field(b, "nextToken")) {
		json p = read_token(o, "ListStateMachineVersions", str(b, "nextToken", true));
		if (!p.is_object() || p.value("m", "") != m.name || !p["v"].is_number_integer())
			fail("InvalidToken", "Invalid Token: the nextToken was made for another state machine");
		from = p["v"];
	}
	json items = json::array();
	int v = from;
	for (; v >= 1 && static_cast<int>(items.size()) < n; v--) {
		json d = store.get_definition(m.name, v);
		if (d.contains("deleted_at")) continue;	// DeleteStateMachineVersion
		items.push_back({{"stateMachineVersionArn", arns.version(m.name, v)}, {"creationDate", when(d["created_at"])}});
	}
	json out = {{"stateMachineVersions", items}};
	if (v >= 1) out["nextToken"] = make_token(o, "ListStateMachineVersions", {{"m", m.name}, {"v", v}});
	return out;
}

// ---- aliases and deletions ------------------------------------------------

// routingConfiguration [{stateMachineVersionArn, weight}] as genroc's
// routing [{version, weight}]: every version of `name` (ValidationException
// for another machine's); the engine checks the weights and the versions.
json routing_of(const Arns &arns, const json &b, const std::string &name) {
	const json *r = field(b, "routingConfiguration");
	if (!r || !r->is_array()) fail("ValidationException", "'routingConfiguration' must be an array of one or two RoutingConfig");
	json out = json::array();
	for (const json &e : *r) {
		if (!e.is_object()) fail("ValidationException", "'routingConfiguration' must be an array of one or two RoutingConfig");
		only(e, {"stateMachineVersionArn", "weight"});
		const MachineRef v = machine_ref(arns, str(e, "stateMachineVersionArn", true), kVersion);
		if (!v.version || v.name != name)
			fail("ValidationException", "'stateMachineVersionArn' must be a version ARN of state machine '" + shown(name) + "'");
		const json *w = field(e, "weight");
		if (!w || !w->is_number_integer()) fail("ValidationException", "'weight' must be an integer from 0 to 100");
		out.push_back({{"version", *v.version}, {"weight", *w}});
	}
	return out;
}

json routing_config(const Arns &arns, const json &alias) {
	json out = json::array();
	for (const json &r : alias.at("routing"))
		out.push_back({{"stateMachineVersionArn", arns.version(alias.at("name"), r.at("version").get<int>())},
					   {"weight", r.at("weight")}});
	return out;
}

MachineRef alias_ref(const Arns &arns, const json &b) {
	const MachineRef m = machine_ref(arns, str(b, "stateMachineAliasArn", true), kAlias);
	if (!m.alias) fail("InvalidArn", "Invalid Arn: '" + shown(str(b, "stateMachineAliasArn", true)) + "' (want an alias ARN)");
	return m;
}

std::optional<std::string> description_of(const json &b) {
	if (!field(b, "description")) return std::nullopt;
	const std::string d = str(b, "description", true);
	if (d.size() > 256) fail("ValidationException", "'description' must be at most 256 characters");
	return d;
}

json create_alias(const Arns &arns, Store &store, const json &b) {
	only(b, {"name", "description", "routingConfiguration"});
	const std::string alias = str(b, "name", true);
	if (!alias_name_ok(alias))
		fail("ValidationException", "'name' must be 1 to 80 letters, digits, '_', '-' or '.', not all digits: '" +
										shown(alias) + "'");
	const json *r = field(b, "routingConfiguration");
	if (!r || !r->is_array() || r->empty()) fail("ValidationException", "'routingConfiguration' must not be empty");
	const MachineRef first = machine_ref(arns, str((*r)[0].is_object() ? (*r)[0] : json::object(), "stateMachineVersionArn", true), kVersion);
	const json routing = routing_of(arns, b, first.name);
	const auto description = description_of(b);
	try {
		json existing = store.get_alias(first.name, alias);
		// AWS: the same name, routing and description answer the alias; else a conflict
		if (existing.at("routing") != routing || existing.at("description") != (description ? json(*description) : json()))
			fail("ConflictException", "the alias '" + arns.alias(first.name, alias) + "' exists with another configuration");
		return {{"stateMachineAliasArn", arns.alias(first.name, alias)}, {"creationDate", when(existing["created_at"])}};
	} catch (const Error &e) {
		if (e.sqlstate != sqlstate::ALIAS_NOT_FOUND) throw;
	}
	json a = store.alias_set(first.name, alias, routing, description);
	return {{"stateMachineAliasArn", arns.alias(first.name, alias)}, {"creationDate", when(a["created_at"])}};
}

json update_alias(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineAliasArn", "description", "routingConfiguration"});
	const MachineRef m = alias_ref(arns, b);
	if (!field(b, "description") && !field(b, "routingConfiguration"))
		fail("ValidationException", "give 'description' or 'routingConfiguration' (or both)");
	json a = store.get_alias(m.name, *m.alias);
	const json routing = field(b, "routingConfiguration") ? routing_of(arns, b, m.name) : a.at("routing");
	std::optional<std::string> description = description_of(b);
	if (!field(b, "description") && a["description"].is_string()) description = a["description"].get<std::string>();
	a = store.alias_set(m.name, *m.alias, routing, description);
	return {{"updateDate", when(a["updated_at"])}};
}

json describe_alias(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineAliasArn"});
	const MachineRef m = alias_ref(arns, b);
	json a = store.get_alias(m.name, *m.alias);
	json out = {{"stateMachineAliasArn", arns.alias(m.name, *m.alias)},
				{"name", *m.alias},
				{"routingConfiguration", routing_config(arns, a)},
				{"creationDate", when(a["created_at"])},
				{"updateDate", when(a["updated_at"])}};
	if (a["description"].is_string()) out["description"] = a["description"];
	return out;
}

json list_aliases(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "nextToken", "maxResults"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kMachine);
	live_definition(store, m.name, std::nullopt);
	const int n = max_results(b, 100);
	std::string after;
	if (field(b, "nextToken")) {
		json p = read_token(o, "ListStateMachineAliases", str(b, "nextToken", true));
		if (!p.is_object() || p.value("m", "") != m.name || !p["a"].is_string())
			fail("InvalidToken", "Invalid Token: the nextToken was made for another state machine");
		after = p["a"];
	}
	json items = json::array();
	bool more = false;
	for (const json &a : store.list_aliases(m.name)) {
		const std::string name = a.at("alias");
		if (!after.empty() && name <= after) continue;
		if (static_cast<int>(items.size()) == n) {
			more = true;
			break;
		}
		items.push_back({{"stateMachineAliasArn", arns.alias(m.name, name)}, {"creationDate", when(a["created_at"])}});
		after = name;
	}
	json out = {{"stateMachineAliases", items}};
	if (more) out["nextToken"] = make_token(o, "ListStateMachineAliases", {{"m", m.name}, {"a", after}});
	return out;
}

json delete_alias(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineAliasArn"});
	const MachineRef m = alias_ref(arns, b);
	store.alias_drop(m.name, *m.alias);
	return json::object();
}

// AWS: DeleteStateMachine and DeleteStateMachineVersion of what is not
// there succeed (their errors are InvalidArn and ValidationException).
json delete_state_machine(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn"});
	const std::string arn = str(b, "stateMachineArn", true);
	const MachineRef m = machine_ref(arns, arn, kVersion | kAlias);
	if (m.version || m.alias)
		fail("ValidationException", "DeleteStateMachine takes a state machine ARN; DeleteStateMachineVersion and "
									"DeleteStateMachineAlias delete a version or an alias");
	try {
		store.undefine(m.name, std::nullopt);
	} catch (const Error &e) {
		if (e.sqlstate != sqlstate::DEFINITION_NOT_FOUND) throw;
	}
	return json::object();
}

json delete_version(const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineVersionArn"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineVersionArn", true), kVersion);
	if (!m.version) fail("ValidationException", "'stateMachineVersionArn' must be a version ARN");
	try {
		store.undefine(m.name, m.version);
	} catch (const Error &e) {
		if (e.sqlstate != sqlstate::DEFINITION_NOT_FOUND) throw;
	}
	return json::object();
}

json validate_definition(const Arns &arns, const json &b) {
	only(b, {"definition", "type", "severity", "maxResults"});
	const std::string text = str(b, "definition", true);
	json diagnostics = json::array();
	try {
		json d = parse_definition(text, arns);
		asl::compile(d);
	} catch (const Failure &f) {
		diagnostics.push_back({{"severity", "ERROR"}, {"code", "INVALID_JSON_DESCRIPTION"}, {"message", f.message}});
	} catch (const Error &e) {
		// "invalid definition at $.States.X.Next: ..." : the location is the path
		std::string msg = e.what(), location;
		const std::string at = "invalid definition at ";
		if (msg.rfind(at, 0) == 0) {
			const auto colon = msg.find(": ", at.size());
			if (colon != std::string::npos) location = msg.substr(at.size(), colon - at.size());
		}
		json d = {{"severity", "ERROR"}, {"code", "SCHEMA_VALIDATION_FAILED"}, {"message", msg}};
		if (!location.empty()) d["location"] = "/" + location.substr(location.rfind("$.", 0) == 0 ? 2 : 0);
		diagnostics.push_back(d);
	}
	return {{"result", diagnostics.empty() ? "OK" : "FAIL"}, {"diagnostics", diagnostics}, {"truncated", false}};
}

// ---- executions -----------------------------------------------------------

json start_execution(const Arns &arns, Store &store, const json &b, bool sync, std::string *machine_out,
					 int64_t *id_out) {
	if (sync)
		only(b, {"stateMachineArn", "name", "input", "traceHeader", "includedData"});
	else
		only(b, {"stateMachineArn", "name", "input", "traceHeader"});
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kVersion | kAlias);
	std::string name = str(b, "name", false);
	const bool named = field(b, "name") != nullptr;
	if (named) check_name(name, "name");
	json input = json::object();
	if (field(b, "input")) {
		try {
			input = parse_json_text(str(b, "input", true), "the input");
		} catch (const Error &e) {
			fail("InvalidExecutionInput", std::string("Invalid Execution Input: ") + e.what());
		}
	}
	if (!named) {
		unsigned char r[16];
		if (RAND_bytes(r, sizeof r) != 1) throw Error("XX000", "no random bytes from OpenSSL");
		std::string h = sigv4::hex(std::string(reinterpret_cast<char *>(r), sizeof r));
		name = h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
	}
	json options = {{"labels", {{kNameLabel, name}}}, {"name", name}, {"idempotency_key", "sfn:" + m.name + ":" + name}};
	// by a version ARN: kept as a label (DescribeExecution's
	// stateMachineVersionArn); by an alias: the engine draws the version and
	// keeps the alias as the label genroc:alias
	if (m.version) {
		options["version"] = *m.version;
		options["labels"][kVersionLabel] = std::to_string(*m.version);
	}
	if (m.alias) options["alias"] = *m.alias;
	StartResult r = store.start(m.name, input, options);
	json inst = store.get_instance(r.instance_id);
	if (!r.is_new) {
		// AWS: the same name with the same input while it runs answers the
		// first start; otherwise the name is taken.
		if (inst.value("definition", "") != m.name || inst["input"] != input || ended(inst))
			fail("ExecutionAlreadyExists", "Execution Already Exists: '" + arns.execution(m.name, name) + "'");
	}
	if (machine_out) *machine_out = m.name;
	if (id_out) *id_out = r.instance_id;
	return {{"executionArn", arns.execution(m.name, name)}, {"startDate", when(inst["created_at"])}};
}

json start_sync(const Options &o, const Arns &arns, const std::function<Store &()> &store, const json &b,
				const std::function<bool()> &stopping) {
	int64_t id = 0;
	std::string machine;
	start_execution(arns, store(), b, true, &machine, &id);
	const auto deadline = Clock::now() + std::chrono::milliseconds(o.sync_timeout_ms);
	auto pause = std::chrono::milliseconds(5);
	json inst = store().get_instance(id);
	while (!ended(inst) && Clock::now() < deadline && !stopping()) {
		std::this_thread::sleep_for(pause);
		pause = std::min(pause * 2, std::chrono::milliseconds(250));
		inst = store().get_instance(id);
	}
	json out;
	if (!ended(inst)) {
		// Over the bound: the execution is stopped, as an Express one would be.
		try {
			store().cancel(id);
		} catch (const Error &e) {
			if (e.sqlstate != sqlstate::INSTANCE_ENDED) throw;
		}
		inst = store().get_instance(id);
		if (!ended(inst) || inst.value("status", "") == "cancelled") {
			out = describe_execution(arns, inst);
			out["status"] = "TIMED_OUT";
			out["error"] = "States.Timeout";
			out["cause"] = "StartSyncExecution waited " + std::to_string(o.sync_timeout_ms) +
						   " ms (--sfn-sync-timeout); the execution was stopped";
			if (!out.contains("stopDate")) out["stopDate"] = now_seconds();
		}
	}
	if (out.is_null()) out = describe_execution(arns, inst);
	if (out["status"] == "ABORTED") out["status"] = "FAILED";
	out["billingDetails"] = {{"billedMemoryUsedInMB", 0}, {"billedDurationInMilliseconds", 0}};
	return out;
}

json describe_execution_action(const Arns &arns, Store &store, const json &b) {
	only(b, {"executionArn", "includedData"});
	const json inst = find_execution(store, arns, str(b, "executionArn", true));
	json out = describe_execution(arns, inst);
	add_redrive(out, store, inst);
	return out;
}

// RedriveExecution: genroc.redrive of the execution's instance.  The same
// clientToken as one of its last 10 redrives answers without redriving again
// (a client's retry of the same request).
json redrive_execution(const Arns &arns, Store &store, const json &b) {
	only(b, {"executionArn", "clientToken"});
	const std::string token = str(b, "clientToken", false);
	if (field(b, "clientToken") && (token.empty() || token.size() > 64))
		fail("ValidationException", "'clientToken' must be 1 to 64 characters");
	const json inst = find_execution(store, arns, str(b, "executionArn", true));
	const int64_t id = inst.at("id");
	store.redrive(id, field(b, "clientToken") ? std::optional<std::string>(token) : std::nullopt);
	return {{"redriveDate", when(redrives_of(store, id).last_at)}};
}

json describe_for_execution(const Arns &arns, Store &store, const json &b) {
	only(b, {"executionArn", "includedData"});
	json inst = find_execution(store, arns, str(b, "executionArn", true));
	json d = store.get_definition(inst.at("definition"), inst.at("version").get<int>());
	json out = describe_definition(arns, store, d, false);
	json r = {{"stateMachineArn", out["stateMachineArn"]}, {"name", out["name"]}, {"definition", out["definition"]},
			  {"roleArn", out["roleArn"]}, {"updateDate", when(d["created_at"])}, {"revisionId", out["revisionId"]}};
	return r;
}

json list_executions(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"stateMachineArn", "statusFilter", "maxResults", "nextToken", "mapRunArn", "redriveFilter"});
	if (field(b, "mapRunArn")) fail("ValidationException", "mapRunArn is not supported: genroc has no map runs");
	const MachineRef m = machine_ref(arns, str(b, "stateMachineArn", true), kVersion | kAlias);
	if (m.alias) store.get_alias(m.name, *m.alias);	// ResourceNotFound
	else store.get_definition(m.name, m.version);	// StateMachineDoesNotExist
	const std::string status = str(b, "statusFilter", false);
	std::vector<std::string> statuses;
	if (status.empty()) statuses = {""};
	else if (status == "RUNNING") statuses = {"ready", "running", "waiting"};
	else if (status == "SUCCEEDED") statuses = {"succeeded"};
	else if (status == "FAILED" || status == "TIMED_OUT") statuses = {"failed"};
	else if (status == "ABORTED") statuses = {"cancelled"};
	else if (status == "PENDING_REDRIVE") statuses = {};
	else fail("ValidationException", "statusFilter must be RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED or PENDING_REDRIVE");
	const int n = max_results(b, 100);
	std::optional<int64_t> before;
	const json where = {{"m", m.name}, {"v", m.version ? json(*m.version) : json()}, {"a", m.alias.value_or("")},
						{"s", status}};
	if (field(b, "nextToken")) {
		json p = read_token(o, "ListExecutions", str(b, "nextToken", true));
		if (!p.is_object() || p["w"] != where || !p["b"].is_number_integer())
			fail("InvalidToken", "Invalid Token: the nextToken was made for another listing");
		before = p["b"].get<int64_t>();
	}
	// Each genroc status newest first, merged; rows that do not match the
	// AWS status (FAILED against TIMED_OUT) or the version are passed over.
	std::vector<json> rows;
	for (const auto &s : statuses) {
		std::optional<int64_t> at = before;
		for (int round = 0; round < 50; round++) {
			json filter = {{"definition", m.name}, {"top", true}, {"limit", n + 1}};
			if (!s.empty()) filter["status"] = s;
			if (m.alias) filter["label"] = {{kAliasLabel, *m.alias}};	// the executions started through it
			if (at) filter["before"] = *at;
			json page = store.list_instances(filter);
			size_t kept = 0;
			for (const auto &inst : page) {
				if ((!status.empty() && aws_status(inst) != status) ||
					(m.version && inst.value("version", 0) != *m.version))
					continue;
				rows.push_back(inst);
				kept++;
			}
			if (page.size() < static_cast<size_t>(n + 1) || kept > 0) break;
			at = page.back().at("id").get<int64_t>();
		}
	}
	std::sort(rows.begin(), rows.end(),
			  [](const json &a, const json &c) { return a.at("id").get<int64_t>() > c.at("id").get<int64_t>(); });
	json items = json::array();
	for (size_t i = 0; i < rows.size() && static_cast<int>(i) < n; i++) items.push_back(execution_item(arns, rows[i]));
	json out = {{"executions", items}};
	if (rows.size() > static_cast<size_t>(n))
		out["nextToken"] = make_token(o, "ListExecutions", {{"w", where}, {"b", rows[n - 1].at("id")}});
	return out;
}

json stop_execution(const Arns &arns, Store &store, const json &b) {
	only(b, {"executionArn", "error", "cause"});
	json inst = find_execution(store, arns, str(b, "executionArn", true));
	// AWS's bounds: the engine checks them again (22023)
	std::optional<std::string> error, cause;
	if (field(b, "error")) error = str(b, "error", true);
	if (field(b, "cause")) cause = str(b, "cause", true);
	const int64_t id = inst.at("id");
	if (!ended(inst)) {
		try {
			store.cancel(id, error, cause);
		} catch (const Error &e) {
			if (e.sqlstate != sqlstate::INSTANCE_ENDED) throw;
		}
		inst = store.get_instance(id);
	}
	return {{"stopDate", when(inst["ended_at"])}};
}

// ---- the history (sfn_history.cpp) --------------------------------------

json get_history(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"executionArn", "maxResults", "reverseOrder", "nextToken", "includeExecutionData"});
	const std::string arn = str(b, "executionArn", true);
	json inst = find_execution(store, arns, arn);
	const bool reverse = boolean(b, "reverseOrder");
	const bool data = !field(b, "includeExecutionData") || boolean(b, "includeExecutionData");
	const int n = max_results(b, 100);
	size_t from = 0;
	const json where = {{"e", arn}, {"r", reverse}, {"d", data}};
	if (field(b, "nextToken")) {
		json p = read_token(o, "GetExecutionHistory", str(b, "nextToken", true));
		if (!p.is_object() || p["w"] != where || !p["i"].is_number_unsigned())
			fail("InvalidToken", "Invalid Token: the nextToken was made for another listing");
		from = p["i"];
	}
	json all = history_events(o, store, inst, data);
	if (reverse) std::reverse(all.begin(), all.end());
	json events = json::array();
	size_t i = from;
	for (; i < all.size() && static_cast<int>(events.size()) < n; i++) events.push_back(all[i]);
	json out = {{"events", events}};
	if (i < all.size()) out["nextToken"] = make_token(o, "GetExecutionHistory", {{"w", where}, {"i", i}});
	return out;
}

// ---- activities -----------------------------------------------------------

// genroc needs no activity made before use: CreateActivity answers its ARN.
// Describe and List know the activities this process created and those the
// stored definitions' newest versions name.
struct Registry {
	std::mutex mu;
	std::map<std::string, double> created;	// name -> creation time (this process)
};
Registry &registry() {
	static Registry r;
	return r;
}

void collect_activities(const json &j, std::set<std::string> &out) {
	if (j.is_array()) {
		for (const auto &v : j) collect_activities(v, out);
		return;
	}
	if (!j.is_object()) return;
	for (const auto &[k, v] : j.items()) {
		if (k == "Resource" && v.is_string() && v.get<std::string>().rfind("activity:", 0) == 0)
			out.insert(v.get<std::string>().substr(9));
		else
			collect_activities(v, out);
	}
}

std::map<std::string, double> known_activities(Store &store) {
	std::map<std::string, double> out;
	for (const auto &d : store.list_definitions()) {
		std::set<std::string> names;
		json def = store.get_definition(d.at("name"), d.at("version").get<int>());
		collect_activities(def["definition"], names);
		const json t = when(def["created_at"]);
		for (const auto &n : names)
			if (!out.count(n) || (t.is_number() && t.get<double>() < out[n])) out[n] = t.is_number() ? t.get<double>() : 0;
	}
	std::lock_guard<std::mutex> g(registry().mu);
	for (const auto &[n, t] : registry().created)
		if (!out.count(n) || t < out[n]) out[n] = t;
	return out;
}

std::string activity_name(const Arns &arns, const std::string &arn) { return arns.parse(arn, "activity", 1, 1)[0]; }

json create_activity(const Arns &arns, const json &b) {
	only(b, {"name", "tags"});
	const std::string name = str(b, "name", true);
	check_name(name, "name");
	std::lock_guard<std::mutex> g(registry().mu);
	auto [it, fresh] = registry().created.emplace(name, now_seconds());
	(void)fresh;
	return {{"activityArn", arns.activity(name)}, {"creationDate", it->second}};
}

json describe_activity(const Arns &arns, Store &store, const json &b) {
	only(b, {"activityArn"});
	const std::string arn = str(b, "activityArn", true);
	const std::string name = activity_name(arns, arn);
	auto known = known_activities(store);
	if (!known.count(name)) fail("ActivityDoesNotExist", "Activity Does Not Exist: '" + shown(arn) + "'");
	return {{"activityArn", arn}, {"name", name}, {"creationDate", known[name]}};
}

json list_activities(const Options &o, const Arns &arns, Store &store, const json &b) {
	only(b, {"maxResults", "nextToken"});
	const int n = max_results(b, 100);
	std::string after;
	if (field(b, "nextToken")) after = read_token(o, "ListActivities", str(b, "nextToken", true)).get<std::string>();
	json items = json::array();
	bool more = false;
	std::string last;
	for (const auto &[name, t] : known_activities(store)) {
		if (!after.empty() && name <= after) continue;
		if (static_cast<int>(items.size()) == n) {
			more = true;
			break;
		}
		items.push_back({{"activityArn", arns.activity(name)}, {"name", name}, {"creationDate", t}});
		last = name;
	}
	json out = {{"activities", items}};
	if (more) out["nextToken"] = make_token(o, "ListActivities", last);
	return out;
}

json delete_activity(const Arns &arns, const json &b) {
	only(b, {"activityArn"});
	const std::string name = activity_name(arns, str(b, "activityArn", true));
	std::lock_guard<std::mutex> g(registry().mu);
	registry().created.erase(name);
	return json::object();
}

json get_activity_task(const Options &o, const Arns &arns, const std::function<Store &()> &store, const json &b,
					   const std::optional<auth::Principal> &who, const std::function<bool()> &stopping) {
	only(b, {"activityArn", "workerName"});
	const std::string name = activity_name(arns, str(b, "activityArn", true));
	std::string worker = str(b, "workerName", false);
	if (worker.empty()) worker = "sfn:" + (who ? who->name : std::string("anonymous"));
	if (worker.size() > 80) fail("ValidationException", "'workerName' must be at most 80 characters");
	const auto deadline = Clock::now() + std::chrono::milliseconds(o.activity_poll_ms);
	auto pause = std::chrono::milliseconds(20);
	for (;;) {
		auto tasks = store().claim_activity(name, worker, 1);
		if (!tasks.empty()) return {{"taskToken", tasks[0].token}, {"input", tasks[0].input.dump()}};
		if (Clock::now() >= deadline || stopping()) return json::object();
		std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
		pause = std::min(pause * 2, std::chrono::milliseconds(500));
	}
}

// A task token genroc could have issued: 32 hex digits (SQLite) or a UUID
// (PostgreSQL's gen_random_uuid).
bool token_shaped(const std::string &t) {
	auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
	if (t.size() == 32) return std::all_of(t.begin(), t.end(), hex);
	if (t.size() != 36) return false;
	for (size_t k = 0; k < t.size(); k++)
		if ((k == 8 || k == 13 || k == 18 || k == 23) ? t[k] != '-' : !hex(t[k])) return false;
	return true;
}

// A report by task token.  The engine's RC007 (no task holds the token)
// read as AWS does: a token of genroc's shape belonged to a task that has
// closed (reported, timed out, cancelled, retried): TaskTimedOut; anything
// else was never a token: InvalidToken.
template <typename F>
void by_token(const std::string &token, F report) {
	try {
		report();
	} catch (const Error &e) {
		if (e.sqlstate != sqlstate::TASK_TOKEN_INVALID) throw;
		if (token_shaped(token))
			fail("TaskTimedOut", "Task Timed Out: the task of that token has closed (it was reported, timed out, "
								 "cancelled, or retried with a new token)");
		fail("InvalidToken", "Invalid Token: not a task token");
	}
}

json send_task_success(Store &store, const json &b) {
	only(b, {"taskToken", "output"});
	const std::string token = str(b, "taskToken", true);
	json output;
	try {
		output = parse_json_text(str(b, "output", true), "the output");
	} catch (const Error &e) {
		fail("InvalidOutput", std::string("Invalid Output: ") + e.what());
	}
	by_token(token, [&] { store.activity_succeed(token, output); });
	return json::object();
}

json send_task_failure(Store &store, const json &b) {
	only(b, {"taskToken", "error", "cause"});
	const std::string token = str(b, "taskToken", true), error = str(b, "error", false);
	by_token(token, [&] { store.activity_fail(token, error, str(b, "cause", false)); });
	return json::object();
}

json send_task_heartbeat(Store &store, const json &b) {
	only(b, {"taskToken"});
	const std::string token = str(b, "taskToken", true);
	by_token(token, [&] { store.activity_heartbeat(token); });
	return json::object();
}

}  // namespace

const std::vector<std::string> &actions() {
	static const std::vector<std::string> a = {
		"CreateStateMachine", "UpdateStateMachine", "DescribeStateMachine", "DescribeStateMachineForExecution",
		"ListStateMachines", "DeleteStateMachine", "ValidateStateMachineDefinition", "PublishStateMachineVersion",
		"ListStateMachineVersions", "DeleteStateMachineVersion", "CreateStateMachineAlias", "UpdateStateMachineAlias",
		"DescribeStateMachineAlias", "ListStateMachineAliases", "DeleteStateMachineAlias", "StartExecution", "StartSyncExecution", "DescribeExecution", "ListExecutions",
		"StopExecution", "GetExecutionHistory", "CreateActivity", "DescribeActivity", "ListActivities",
		"DeleteActivity", "GetActivityTask", "SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat",
		"RedriveExecution", "TestState"};
	return a;
}

json call(const Options &o, const std::string &action, const json &b, const std::function<Store &()> &store,
		  const std::optional<auth::Principal> &who, const std::function<bool()> &stopping) {
	const Arns arns{o};
	using namespace auth;
	try {
		if (action == "CreateStateMachine") return need(who, need_operate(), action), create_state_machine(arns, store(), b);
		if (action == "UpdateStateMachine") return need(who, need_operate(), action), update_state_machine(arns, store(), b);
		if (action == "DescribeStateMachine") return need(who, need_read(), action), describe_state_machine(arns, store(), b);
		if (action == "DescribeStateMachineForExecution")
			return need(who, need_read_instances(), action), describe_for_execution(arns, store(), b);
		if (action == "ListStateMachines") return need(who, need_read(), action), list_state_machines(o, arns, store(), b);
		if (action == "ValidateStateMachineDefinition") return need(who, need_any(), action), validate_definition(arns, b);
		if (action == "PublishStateMachineVersion") return need(who, need_operate(), action), publish_version(arns, store(), b);
		if (action == "ListStateMachineVersions") return need(who, need_read(), action), list_versions(o, arns, store(), b);
		if (action == "DeleteStateMachine") return need(who, need_operate(), action), delete_state_machine(arns, store(), b);
		if (action == "DeleteStateMachineVersion") return need(who, need_operate(), action), delete_version(arns, store(), b);
		if (action == "CreateStateMachineAlias") return need(who, need_operate(), action), create_alias(arns, store(), b);
		if (action == "UpdateStateMachineAlias") return need(who, need_operate(), action), update_alias(arns, store(), b);
		if (action == "DescribeStateMachineAlias") return need(who, need_read(), action), describe_alias(arns, store(), b);
		if (action == "ListStateMachineAliases") return need(who, need_read(), action), list_aliases(o, arns, store(), b);
		if (action == "DeleteStateMachineAlias") return need(who, need_operate(), action), delete_alias(arns, store(), b);
		if (action == "StartExecution")
			return need(who, need_operate(), action), start_execution(arns, store(), b, false, nullptr, nullptr);
		if (action == "StartSyncExecution") return need(who, need_operate(), action), start_sync(o, arns, store, b, stopping);
		if (action == "DescribeExecution")
			return need(who, need_read_instances(), action), describe_execution_action(arns, store(), b);
		if (action == "ListExecutions") return need(who, need_read_instances(), action), list_executions(o, arns, store(), b);
		if (action == "StopExecution") return need(who, need_operate(), action), stop_execution(arns, store(), b);
		if (action == "RedriveExecution") return need(who, need_operate(), action), redrive_execution(arns, store(), b);
		if (action == "GetExecutionHistory") return need(who, need_read_instances(), action), get_history(o, arns, store(), b);
		if (action == "TestState") return need(who, need_any(), action), test_state(o, b);
		if (action == "CreateActivity") return need(who, need_operate(), action), create_activity(arns, b);
		if (action == "DescribeActivity") return need(who, need_read(), action), describe_activity(arns, store(), b);
		if (action == "ListActivities") return need(who, need_read(), action), list_activities(o, arns, store(), b);
		if (action == "DeleteActivity") return need(who, need_operate(), action), delete_activity(arns, b);
		if (action == "GetActivityTask") return need(who, need_work(), action), get_activity_task(o, arns, store, b, who, stopping);
		if (action == "SendTaskSuccess") return need(who, need_work(), action), send_task_success(store(), b);
		if (action == "SendTaskFailure") return need(who, need_work(), action), send_task_failure(store(), b);
		if (action == "SendTaskHeartbeat") return need(who, need_work(), action), send_task_heartbeat(store(), b);
	} catch (const Failure &) {
		throw;
	} catch (const Error &e) {
		rethrow(e, action);
	}
	fail("UnknownOperationException", "genroc does not serve the action " + shown(action));
}

}  // namespace genroc::sfn
