// instances.cpp — genroc.get_instance, list_instances, history and
// capabilities (engine/instances.hpp), once for both stores.
//
// The answers are built as JSON text around the stored values' own texts
// (as get_definition splices its definition): a value goes out as the
// store keeps it, a large one's reference resolved through OBJECT_VALUE
// (genroc._load_value, _log_load).
#include "instances.hpp"

#include <algorithm>
#include <climits>

#include "admin.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "start.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

constexpr const char *kRefKey = "genroc:object";

std::string instance_json_string(const std::string &s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

std::string text_or_null(const Row &r, int col) { return r.is_null(col) ? "null" : instance_json_string(r.text(col)); }
std::string number_or_null(const Row &r, int col) { return r.is_null(col) ? "null" : r.text(col); }
std::string iso_or_null(const Row &r, int col) { return r.is_null(col) ? "null" : instance_json_string(iso_us(r.i64(col))); }

// A member of a JSON object text at its top level: its key and where its
// value's text begins and ends.
struct Member {
	std::string key;
	size_t begin = 0, end = 0;
};

// The top-level members of a JSON object text; false when it is not one.
bool top_members(const std::string &t, std::vector<Member> &out) {
	const size_t n = t.size();
	size_t i = 0;
	const auto space = [&](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
	const auto skip_space = [&] {
		while (i < n && space(t[i])) i++;
	};
	// at a '"': past the string's closing quote
	const auto skip_string = [&] {
		for (i++; i < n; i++) {
			if (t[i] == '\\') {
				i++;
			} else if (t[i] == '"') {
				i++;
				return true;
			}
		}
		return false;
	};
	skip_space();
	if (i >= n || t[i] != '{') return false;
	i++;
	skip_space();
	if (i < n && t[i] == '}') return true;
	while (i < n) {
		skip_space();
		if (i >= n || t[i] != '"') return false;
		const size_t key_at = i;
		if (!skip_string()) return false;
		Member m;
		m.key = t.substr(key_at + 1, i - key_at - 2);
		if (m.key.find('\\') != std::string::npos) {
			const json k = json::parse(t.substr(key_at, i - key_at), nullptr, false);
			if (!k.is_string()) return false;
			m.key = k.get<std::string>();
		}
		skip_space();
		if (i >= n || t[i] != ':') return false;
		i++;
		skip_space();
		m.begin = i;
		int depth = 0;
		while (i < n) {
			const char c = t[i];
			if (c == '"') {
				if (!skip_string()) return false;
				continue;
			}
			if (c == '{' || c == '[') {
				depth++;
			} else if (c == '}' || c == ']') {
				if (depth == 0) break;
				depth--;
			} else if (c == ',' && depth == 0) {
				break;
			}
			i++;
		}
		if (i >= n) return false;
		m.end = i;
		while (m.end > m.begin && space(t[m.end - 1])) m.end--;
		out.push_back(std::move(m));
		if (t[i++] == '}') return true;
	}
	return false;
}

// genroc._log_load: a log entry's detail with the references of its
// payloads (input, output, payload) resolved.
std::string log_load(Port &port, const std::string &detail) {
	if (detail.find(kRefKey) == std::string::npos) return detail;
	std::vector<Member> members;
	if (!top_members(detail, members)) return detail;
	std::string out = detail;
	// from the last, so the earlier members' places hold
	for (auto m = members.rbegin(); m != members.rend(); ++m) {
		if (m->key != "input" && m->key != "output" && m->key != "payload") continue;
		const std::string value = detail.substr(m->begin, m->end - m->begin);
		std::string loaded = load_value(port, value);
		if (loaded != value) out.replace(m->begin, m->end - m->begin, loaded);
	}
	return out;
}

// genroc._instance_json: the columns of GENROC_INSTANCE_COLUMNS (its
// first 33) as the API shows an instance.
std::string instance_json(Port &port, const Row &r, bool refs) {
	const auto value = [&](int col) -> std::string {
		if (r.is_null(col)) return "null";
		return refs ? r.text(col) : load_value(port, r.text(col));
	};
	std::string s;
	s.reserve(1024);
	s += "{\"id\": " + r.text(0);
	s += ", \"definition\": " + text_or_null(r, 1);
	s += ", \"version\": " + number_or_null(r, 2);
	s += ", \"status\": " + text_or_null(r, 3);
	s += ", \"state\": " + text_or_null(r, 4);
	s += ", \"resource\": " + text_or_null(r, 5);
	s += ", \"queue\": " + text_or_null(r, 6);
	s += ", \"priority\": " + number_or_null(r, 7);
	s += ", \"input\": " + value(8);
	s += ", \"task_input\": " + value(9);
	s += ", \"output\": " + value(10);
	s += ", \"error\": " + text_or_null(r, 11);
	s += ", \"cause\": " + text_or_null(r, 12);
	s += ", \"attempt\": " + number_or_null(r, 13);
	s += ", \"interruptions\": " + number_or_null(r, 14);
	s += ", \"lease_owner\": " + text_or_null(r, 15);
	s += ", \"lease_epoch\": " + number_or_null(r, 16);
	s += ", \"lease_expires\": " + iso_or_null(r, 17);
	s += ", \"eligible_at\": " + iso_or_null(r, 18);
	s += ", \"wait_kind\": " + text_or_null(r, 19);
	s += ", \"wait_until\": " + iso_or_null(r, 20);
	s += ", \"activity\": " + text_or_null(r, 21);
	s += ", \"idempotency_key\": " + text_or_null(r, 22);
	s += ", \"labels\": " + (r.is_null(23) ? std::string("null") : r.text(23));
	s += ", \"partition_key\": " + text_or_null(r, 24);
	s += ", \"name\": " + text_or_null(r, 25);
	s += ", \"created_at\": " + iso_or_null(r, 26);
	s += ", \"updated_at\": " + iso_or_null(r, 27);
	s += ", \"ended_at\": " + iso_or_null(r, 28);
	s += ", \"parent_id\": " + number_or_null(r, 29);
	s += ", \"root_id\": " + number_or_null(r, 30);
	s += ", \"child_index\": " + number_or_null(r, 31);
	s += ", \"scope\": " + text_or_null(r, 32);
	return s + "}";
}

// genroc._children_summary: the children of an instance's last fan-out
// (Parallel, Map, call), from its counts, so it costs the same for a
// hundred thousand items as for three; a fan-out without a counts row
// (begun before the table existed) is counted over its children.
std::string children_summary(Port &port, int64_t parent, const json &fanout) {
	std::string kind = "null";
	if (fanout.contains("kind") && !fanout.at("kind").is_null()) {
		const json &k = fanout.at("kind");
		kind = instance_json_string(k.is_string() ? k.get<std::string>() : k.dump());	 // ->> 'kind'
	}
	std::optional<int64_t> gen;
	if (fanout.contains("gen") && fanout.at("gen").is_number_integer()) gen = fanout.at("gen").get<int64_t>();
	Rows counts;
	if (port.query(Stmt::FANOUTS_PRESENT, {}).at(0).boolean(0)) counts = port.query(Stmt::FANOUT_SUMMARY, {parent, gen});
	if (counts.empty()) counts = port.query(Stmt::FANOUT_SUMMARY_COUNTED, {parent, gen});
	const Row &c = counts.at(0);
	return "{\"kind\": " + kind + ", \"total\": " + c.text(0) + ", \"succeeded\": " + c.text(1) +
		   ", \"failed\": " + c.text(2) + ", \"running\": " + c.text(3) + ", \"waiting\": " + c.text(4) + "}";
}

// genroc._values_refs over an option bag: {"values": "value" | "ref"};
// whether references are asked for.
bool values_refs(Port &port, const json &options) {
	check_options(port, options, {"values"}, "options");
	if (!options.contains("values")) return false;
	const json &v = options.at("values");
	if (v != "value" && v != "ref") raise(Msg::READ_VALUES_OPTION);
	return v == "ref";
}

bool values_refs(Port &port, const std::optional<std::string> &options) {
	if (!options) return false;
	return values_refs(port, parse_options(port, options, "options"));
}

bool is_string_object(const json &v) {
	if (!v.is_object()) return false;
	for (auto &[k, x] : v.items())
		if (!x.is_string()) return false;
	return true;
}

// A filter's instance id: a JSON integer of 0 .. max, else 22023.
int64_t instance_id_option(Port &port, const json &v, const char *option, uint64_t max = INT64_MAX) {
	if (v.is_number_unsigned() && v.get<uint64_t>() <= max) return static_cast<int64_t>(v.get<uint64_t>());
	if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= 0 &&
		static_cast<uint64_t>(v.get<int64_t>()) <= max)
		return v.get<int64_t>();
	raise(Msg::LIST_NOT_INSTANCE_ID, {option, shown(port, v)});
}

}  // namespace

std::string get_instance(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &options) {
	const bool refs = values_refs(port, options);
	port.exec(Stmt::CHECK_INSTANCE, {instance, "operator"});
	if (!instance) raise(Msg::ARG_NULL, {"p_instance"});
	Rows rows = port.query(Stmt::INSTANCE_READ, {*instance});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(*instance)});
	const Row &r = rows[0];
	std::string out = instance_json(port, r, refs);
	out.pop_back();
	// its ASL variables ({} before any Assign): get_instance only, not lists
	const bool no_variables = r.is_null(33) || r.text(33) == "null";
	out += ", \"variables\": " + (no_variables ? std::string("{}") : r.text(33));
	if (!r.is_null(34)) {
		const json fanout = json::parse(r.text(34), nullptr, false);
		if (fanout.is_object()) out += ", \"children\": " + children_summary(port, *instance, fanout);
	}
	return out + "}";
}

std::vector<std::string> list_instances(Port &port, const std::optional<std::string> &filter_text) {
	const json f = parse_options(port, filter_text, "the filter");
	check_options(port, f,
				  {"before", "created_after", "created_before", "definition", "label", "limit", "name", "offset",
				   "parent", "root", "status", "top", "values"},
				  "list_instances filter");
	const bool refs = f.contains("values") && values_refs(port, json{{"values", f.at("values")}});
	std::optional<std::string> status, definition, name;
	std::optional<JsonText> label;
	std::optional<int64_t> root, parent, before, after_us, before_us;
	bool top = false;
	int64_t limit = 100, offset = 0;
	if (f.contains("status")) {
		status = text_option(port, f.at("status"), "status");
		static const char *const known[] = {"queued", "ready", "running", "waiting", "succeeded", "failed", "cancelled"};
		if (std::find(std::begin(known), std::end(known), *status) == std::end(known))
			raise(Msg::LIST_STATUS_UNKNOWN, {*status});
	}
	if (f.contains("definition")) definition = text_option(port, f.at("definition"), "definition");
	if (f.contains("name")) name = text_option(port, f.at("name"), "name");
	if (f.contains("label")) {
		if (!is_string_object(f.at("label"))) raise(Msg::LIST_LABEL_NOT_STRINGS, {"label", shown(port, f.at("label"))});
		label = JsonText{f.at("label").dump(-1, ' ', false, json::error_handler_t::replace)};
	}
	if (f.contains("root")) root = instance_id_option(port, f.at("root"), "root");
	if (f.contains("parent")) parent = instance_id_option(port, f.at("parent"), "parent");
	if (f.contains("top")) {
		if (!f.at("top").is_boolean()) raise(Msg::LIST_TOP_NOT_BOOLEAN, {shown(port, f.at("top"))});
		top = f.at("top").get<bool>();
	}
	if (f.contains("offset")) {
		offset = int_option(port, f.at("offset"), "offset");
		if (offset < 0) raise(Msg::LIST_OFFSET_NEGATIVE, {std::to_string(offset)});
	}
	// up to 18 digits
	if (f.contains("before")) before = instance_id_option(port, f.at("before"), "before", 999'999'999'999'999'999ULL);
	const auto time = [&](const char *option) { return time_option(port, f.at(option), option); };
	if (f.contains("created_after")) after_us = time("created_after");
	if (f.contains("created_before")) before_us = time("created_before");
	if (f.contains("limit")) {
		limit = int_option(port, f.at("limit"), "limit");
		if (limit < 1 || limit > 10000) raise(Msg::LIST_LIMIT_RANGE, {std::to_string(limit)});
	}
	std::vector<std::string> out;
	if (parent && top) return out;	// children are not top-level
	Rows rows = port.query(parent ? Stmt::INSTANCES_CHILDREN : Stmt::INSTANCES_LIST,
						   {status, definition, label, limit, root, parent, top, offset, before, after_us, before_us,
							name});
	out.reserve(rows.size());
	for (const Row &r : rows) out.push_back(instance_json(port, r, refs));
	return out;
}

std::vector<LogEntry> history(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &options) {
	const bool refs = values_refs(port, options);
	port.exec(Stmt::CHECK_INSTANCE, {instance, "operator"});
	if (!instance) raise(Msg::ARG_NULL, {"p_instance"});
	if (!port.query(Stmt::INSTANCE_EXISTS, {*instance}).at(0).boolean(0))
		raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(*instance)});
	std::vector<LogEntry> out;
	for (const Row &r : port.query(Stmt::HISTORY, {*instance})) {
		LogEntry e;
		e.seq = r.i64(0);
		e.at_us = r.i64(1);
		e.event = r.text(2);
		e.state = r.otext(3);
		if (!r.is_null(4)) e.detail = refs ? r.text(4) : log_load(port, r.text(4));
		out.push_back(std::move(e));
	}
	return out;
}

std::string capabilities(Port &port) {
	const Row r = port.query(Stmt::CAPABILITIES, {}).at(0);
	const auto flag = [&](int col) { return std::string(r.boolean(col) ? "true" : "false"); };
	return "{\"role\": " + text_or_null(r, 0) + ", \"admin\": " + flag(1) + ", \"operator\": " + flag(2) +
		   ", \"worker\": " + flag(3) + ", \"user\": " + flag(4) + ", \"token_verify\": " + flag(5) +
		   ", \"token_create\": " + flag(6) + "}";
}

}  // namespace genroc::engine
