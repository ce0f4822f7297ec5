// start.cpp — starting instances (genroc.start, genroc.start_many) and the
// start options, once for both stores.  A start writes the instance row
// (START_INSERT), then runs its first step in-process (engine::apply_step)
// with the 'started' log row handed to the step's one log insert; a run_at
// later than now leaves it waiting for the tick, and a partition_key hands
// it to admission (engine/admission.cpp: a place behind its partition).  start_many on
// PostgreSQL writes the instances whose first step stops at a handler task
// in one statement (START_MANY_BULK); elsewhere, and for the rest, each
// input takes start's path.
#include "start.hpp"

#include <algorithm>

#include "admin.hpp"
#include "admission.hpp"
#include "aliases.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "limits.hpp"
#include "steps.hpp"

namespace genroc::engine {

int64_t time_option(Port &port, const json &v, const std::string &option) {
	if (!v.is_string()) raise(Msg::START_TIME_NOT_TEXT, {option, shown(port, v)});
	const std::string &text = v.get<std::string>();
	Rows rows;
	{
		// what the store's timestamp input refuses (22007, 22008) is this
		// option's invalid timestamp; its other errors are its own
		Port::Savepoint sp(port);
		try {
			rows = port.query(Stmt::START_PARSE_TIME, {text});
			sp.release();
		} catch (const Error &e) {
			if (e.sqlstate != "22007" && e.sqlstate != "22008") throw;
			sp.rollback();
			raise(Msg::START_TIME_INVALID, {option, shown(port, v)});
		}
	}
	if (rows.empty() || rows[0].is_null(0)) raise(Msg::START_TIME_INVALID, {option, shown(port, v)});
	if (!rows[0].boolean(1)) raise(Msg::START_TIME_RANGE, {option, shown(port, v)});
	return rows[0].i64(0);
}

const json &labels_option(Port &port, const json &v, const std::string &option) {
	bool ok = v.is_object();
	if (ok)
		for (const auto &[k, x] : v.items())
			if (!x.is_string()) ok = false;
	if (!ok) raise(Msg::LIST_LABEL_NOT_STRINGS, {option, shown(port, v)});
	return v;
}

namespace {

// An object's keys in jsonb's order: shorter first, then by their bytes.
std::vector<std::string> jsonb_keys(const json &object) {
	std::vector<std::string> keys;
	for (const auto &[k, x] : object.items()) keys.push_back(k);
	std::stable_sort(keys.begin(), keys.end(),
					 [](const std::string &a, const std::string &b) { return a.size() < b.size(); });
	return keys;
}

}  // namespace

StartOptions start_options(Port &port, const json &options, const std::vector<std::string> &allowed,
						   const std::string &what) {
	StartOptions o;
	check_options(port, options, allowed, what);
	if (options.contains("version")) o.version = int_option(port, options["version"], "version");
	if (options.contains("priority")) o.priority = int_option(port, options["priority"], "priority");
	if (options.contains("run_at")) o.run_at_us = time_option(port, options["run_at"], "run_at");
	if (options.contains("labels")) {
		o.labels = labels_option(port, options["labels"], "labels");
		for (const std::string &k : jsonb_keys(o.labels)) {
			check_name(k, "a label key");
			check_name(o.labels[k].get<std::string>(), "label \"" + k.substr(0, 200) + "\"", 1000);
		}
		// the region label picks <queue>.<region> (genroc._route)
		if (auto r = o.labels.find("region"); r != o.labels.end()) {
			const std::string &region = r->get<std::string>();
			if (region.empty() || region.find('.') != std::string::npos) raise(Msg::START_REGION_LABEL, {region});
		}
	}
	if (options.contains("idempotency_key")) {
		o.key = text_option(port, options["idempotency_key"], "idempotency_key");
		check_name(*o.key, "option \"idempotency_key\"");
	}
	if (options.contains("partition_key")) {
		o.partition = text_option(port, options["partition_key"], "partition_key");
		check_name(*o.partition, "option \"partition_key\"");
	}
	if (options.contains("name")) {
		o.name = text_option(port, options["name"], "name");
		check_name(*o.name, "option \"name\"");
	}
	return o;
}

namespace {

constexpr size_t kMaxStartMany = 10000;

// The definition version a start runs, and its queue.
struct Target {
	std::string name;
	int version = 0;
	int64_t id = 0;
	std::string queue;
};

Target target(Port &port, const std::string &name, const StartOptions &o) {
	Target t;
	t.name = name;
	t.version = start_version(port, name, o.version, o.alias);
	Rows rows = port.query(Stmt::START_DEFINITION, {name, t.version});
	if (rows.empty()) raise(Msg::DEFINITION_NOT_FOUND, {name, " version " + std::to_string(t.version)});
	t.id = rows[0].i64(0);
	t.queue = route(port, t.id, name, o.labels);
	return t;
}

std::vector<Started> by_key(Port &port, const std::string &key) {
	std::vector<Started> out;
	for (const Row &r : port.query(Stmt::START_BY_KEY, {key})) out.push_back({r.i64(0), false, r.text(1)});
	return out;
}

// One start inside the caller's transaction (start, start_many).
std::vector<Started> start_one(Port &port, const Target &t, const json &input, const std::string &input_text,
							   const StartOptions &o) {
	if (o.key) {
		auto found = by_key(port, *o.key);
		if (!found.empty()) return found;
	}
	const auto text = [](const std::optional<std::string> &v) { return v ? Param(*v) : Param::null(Param::Kind::text); };
	Rows ins = port.query(Stmt::START_INSERT,
						  {t.id, JsonText{input_text}, text(o.key), JsonText{o.labels.dump()}, text(o.partition),
						   text(o.name), static_cast<int64_t>(o.priority),
						   o.run_at_us ? Param(*o.run_at_us) : Param::null(Param::Kind::i64), t.queue, port.now_ms()});
	// a concurrent start with the same key committed first
	if (ins.empty()) return by_key(port, *o.key);
	const int64_t id = ins[0].i64(0);
	const bool waiting = ins[0].boolean(1);
	// the 'started' row, its input as the caller wrote it
	std::string started = R"({"event": "started", "state": null, "detail": {"definition": )" + json(t.name).dump() +
						  ", \"version\": " + std::to_string(t.version) + ", \"input\": " + input_text;
	if (waiting) started += ", \"run_at\": " + json(iso_us(*o.run_at_us)).dump();
	started += "}}";
	std::string status;
	if (!waiting && !o.partition) {
		status = apply_step(port, id, {{"op", "start"}, {"input", input}}, json(), nullptr, &started);
	} else {
		port.exec(Stmt::STEP_LOG_ROWS, {id, JsonText{"[" + started + "]"}, port.now_ms()});
		status = waiting ? "waiting" : admit(port, id);
	}
	return {{id, true, status}};
}

}  // namespace

std::vector<Started> start(Port &port, const std::optional<std::string> &definition,
						   const std::optional<std::string> &input_text, const json &options_in) {
	port.exec(Stmt::CHECK_DEFINITION, {definition, "admin"});
	if (!definition) raise(Msg::ARG_NULL, {"p_definition"});
	if (!input_text) raise(Msg::START_INPUT_NULL);
	const json input = parse_json(*input_text, "the input");
	limits::check_json_depth(input, "the input");
	const json &options = options_in.is_null() ? json::object() : options_in;
	StartOptions o;
	if (!options.empty() || !options.is_object()) {
		o = start_options(port, options,
						  {"alias", "idempotency_key", "labels", "name", "partition_key", "priority", "run_at", "version"},
						  "start options");
		// a start by an alias keeps it as a label (lists filter by it)
		if (options.contains("alias")) {
			o.alias = text_option(port, options["alias"], "alias");
			o.labels["genroc:alias"] = *o.alias;
		}
	}
	const Target t = target(port, *definition, o);
	std::vector<Started> out = start_one(port, t, input, *input_text, o);
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	return out;
}

std::vector<Started> start_many(Port &port, const std::optional<std::string> &definition,
								const std::optional<json> &inputs, const json &options_in) {
	port.exec(Stmt::CHECK_DEFINITION, {definition, "admin"});
	if (!definition) raise(Msg::ARG_NULL, {"p_definition"});
	if (!inputs) raise(Msg::ARG_NULL, {"p_inputs"});
	if (!inputs->is_array()) raise(Msg::START_INPUTS_NOT_ARRAY, {inputs->type_name()});
	if (inputs->size() > kMaxStartMany)
		raise(Msg::START_INPUTS_TOO_MANY, {std::to_string(inputs->size()), std::to_string(kMaxStartMany)});
	for (size_t k = 0; k < inputs->size(); ++k)
		limits::check_json_depth((*inputs)[k], "the input at index " + std::to_string(k));
	const json &options = options_in.is_null() ? json::object() : options_in;
	StartOptions o;
	if (!options.empty() || !options.is_object())
		o = start_options(port, options, {"labels", "partition_key", "priority", "run_at", "version"},
						  "start_many options");
	const Target t = target(port, *definition, o);
	std::vector<Started> out;
	if (inputs->empty()) return out;
	out.reserve(inputs->size());
	const bool delayed = o.run_at_us && *o.run_at_us > port.now_ms() * 1000;
	if (port.dialect() == Dialect::postgres && !delayed && !o.partition) {
		// one statement: the instances whose first step stops at a handler
		// task are written as that step leaves them ("fast"); the others are
		// written as start writes them, and their step runs here
		Rows rows = port.query(Stmt::START_MANY_BULK, {t.id, JsonText{inputs->dump()}, JsonText{o.labels.dump()},
														static_cast<int64_t>(o.priority), t.queue,
														iso_us(port.now_ms() * 1000)});
		bool any_fast = false;
		for (const Row &r : rows) any_fast = any_fast || r.boolean(1);
		if (any_fast) port.exec(Stmt::STEP_NOTIFY, {});
		for (size_t k = 0; k < rows.size(); ++k) {
			const int64_t id = rows[k].i64(0);
			out.push_back({id, true,
						   rows[k].boolean(1) ? std::string("ready")
											  : apply_step(port, id, {{"op", "start"}, {"input", (*inputs)[k]}})});
		}
	} else {
		for (const json &input : *inputs)
			for (Started &s : start_one(port, t, input, input.dump(), o)) out.push_back(std::move(s));
	}
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	return out;
}

}  // namespace genroc::engine
