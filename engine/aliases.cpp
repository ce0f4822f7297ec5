// aliases.cpp — genroc.alias_set, alias_drop, get_alias, list_aliases,
// undefine and the version a start runs (aliases.hpp), once for both stores.
#include "aliases.hpp"

#include <random>

#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

std::string alias_shown(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The characters of a text (code points), for the length limits.
size_t chars(const std::string &s) {
	size_t n = 0;
	for (unsigned char c : s) n += (c & 0xC0) != 0x80;
	return n;
}

void need_name(const std::optional<std::string> &name) {
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	if (name->empty()) raise(Msg::ARG_EMPTY, {"p_name"});
}

// AWS's rule for an alias name: 1 to 80 of [A-Za-z0-9_.-], not all digits
// (a version number is not an alias).
void check_alias_name(const std::optional<std::string> &alias) {
	if (!alias) raise(Msg::ARG_NULL, {"p_alias"});
	bool ok = !alias->empty() && alias->size() <= kMaxAliasName, digit_only = true;
	for (unsigned char c : *alias) {
		const bool digit = c >= '0' && c <= '9';
		digit_only = digit_only && digit;
		ok = ok && (digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.');
	}
	if (!ok || digit_only) raise(Msg::ALIAS_NAME, {alias->substr(0, 200)});
}

void check_deleted(Port &port, const std::string &name, std::optional<int64_t> version) {
	if (!port.query(Stmt::NAME_DELETED, {name}).empty()) raise(Msg::DEFINITION_DELETED, {name, ""});
	if (version && !port.query(Stmt::VERSION_DELETED, {name, *version}).empty())
		raise(Msg::DEFINITION_DELETED, {name, " version " + std::to_string(*version)});
}

// RC002 unless the name (and the version) exists.
void check_exists(Port &port, const std::string &name, std::optional<int64_t> version) {
	if (port.query(Stmt::DEFINITION_VERSION, {name, version}).empty())
		raise(Msg::DEFINITION_NOT_FOUND, {name, version ? " version " + std::to_string(*version) : std::string()});
}

struct Route {
	int64_t version;
	int64_t weight;
};

// The routing checked: one or two {"version", "weight"} objects, versions
// distinct, weights 0..100 summing to 100.
std::vector<Route> parse_routing(const json &r) {
	if (!r.is_array() || r.empty() || r.size() > 2) raise(Msg::ALIAS_ROUTING, {alias_shown(r).substr(0, 200)});
	std::vector<Route> out;
	int64_t sum = 0;
	for (size_t k = 0; k < r.size(); k++) {
		const json &e = r[k];
		if (!e.is_object()) raise(Msg::ALIAS_ROUTING, {alias_shown(r).substr(0, 200)});
		for (auto &[key, v] : e.items())
			if (key != "version" && key != "weight") raise(Msg::ALIAS_ROUTING, {alias_shown(r).substr(0, 200)});
		const json v = e.contains("version") ? e["version"] : json();
		const json w = e.contains("weight") ? e["weight"] : json();
		if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 2147483647)
			raise(Msg::ALIAS_ROUTE_FIELD, {std::to_string(k), "version", "a version number", alias_shown(v)});
		if (!w.is_number_integer() || w.get<int64_t>() < 0 || w.get<int64_t>() > 100)
			raise(Msg::ALIAS_ROUTE_FIELD, {std::to_string(k), "weight", "an integer from 0 to 100", alias_shown(w)});
		for (const Route &o : out)
			if (o.version == v.get<int64_t>()) raise(Msg::ALIAS_TWICE, {std::to_string(o.version)});
		out.push_back({v.get<int64_t>(), w.get<int64_t>()});
		sum += w.get<int64_t>();
	}
	if (sum != 100) raise(Msg::ALIAS_WEIGHTS, {std::to_string(sum)});
	return out;
}

std::string alias_json(const std::string &name, const std::string &alias, const std::string &routing,
					   const std::optional<std::string> &description, int64_t created_us, int64_t updated_us) {
	json out = {{"name", name},
				{"alias", alias},
				{"routing", parse_json(routing, "the routing")},
				{"description", description ? json(*description) : json()},
				{"created_at", iso_us(created_us)},
				{"updated_at", iso_us(updated_us)}};
	return alias_shown(out);
}

// A uniform draw in [0, 100): the process's own generator, seeded once.
int64_t draw_percent() {
	thread_local std::mt19937_64 gen{std::random_device{}()};
	return static_cast<int64_t>(std::uniform_int_distribution<int>(0, 99)(gen));
}

}  // namespace

std::string alias_set(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias,
					  const std::optional<std::string> &routing, const std::optional<std::string> &description) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	port.exec(Stmt::CHECK_DEFINITION, {name, "admin"});
	need_name(name);
	check_alias_name(alias);
	if (!routing) raise(Msg::ARG_NULL, {"p_routing"});
	if (description && chars(*description) > kMaxAliasDescription)
		raise(Msg::TEXT_TOO_LONG,
			  {"p_description", std::to_string(kMaxAliasDescription), std::to_string(chars(*description))});
	json r = parse_json(port.canonical_json(*routing), "p_routing");
	const std::vector<Route> routes = parse_routing(r);
	port.exec(Stmt::LOCK_DEFINE, {*name});
	check_deleted(port, *name, std::nullopt);
	check_exists(port, *name, std::nullopt);
	json stored = json::array();
	for (const Route &rt : routes) {
		check_deleted(port, *name, rt.version);
		check_exists(port, *name, rt.version);
		stored.push_back({{"version", rt.version}, {"weight", rt.weight}});
	}
	if (port.query(Stmt::ALIAS_GET, {*name, *alias}).empty()) {
		const int64_t n = port.query(Stmt::ALIAS_COUNT, {*name}).at(0).i64(0);
		if (n >= kMaxAliases) raise(Msg::ALIAS_LIMIT, {*name, std::to_string(n), std::to_string(kMaxAliases)});
	}
	port.exec(Stmt::ALIAS_UPSERT, {*name, *alias, JsonText{stored.dump()}, description, port.now_ms()});
	return get_alias(port, name, alias);
}

void alias_drop(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	port.exec(Stmt::CHECK_DEFINITION, {name, "admin"});
	need_name(name);
	if (!alias) raise(Msg::ARG_NULL, {"p_alias"});
	if (port.exec(Stmt::ALIAS_DELETE, {*name, *alias}) == 0) raise(Msg::ALIAS_NOT_FOUND, {*alias, *name});
}

std::string get_alias(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias) {
	port.exec(Stmt::CHECK_DEFINITION, {name, "operator"});
	need_name(name);
	if (!alias) raise(Msg::ARG_NULL, {"p_alias"});
	Rows rows = port.query(Stmt::ALIAS_GET, {*name, *alias});
	if (rows.empty()) raise(Msg::ALIAS_NOT_FOUND, {*alias, *name});
	const Row &r = rows[0];
	return alias_json(*name, *alias, r.text(0), r.otext(1), r.i64(2), r.i64(3));
}

std::string list_aliases(Port &port, const std::optional<std::string> &name) {
	port.exec(Stmt::CHECK_DEFINITION, {name, "operator"});
	need_name(name);
	std::string out = "[";
	for (const Row &r : port.query(Stmt::ALIASES_OF, {*name})) {
		if (out.size() > 1) out += ", ";
		out += alias_json(*name, r.text(0), r.text(1), r.otext(2), r.i64(3), r.i64(4));
	}
	return out + "]";
}

void undefine(Port &port, const std::optional<std::string> &name, std::optional<int64_t> version) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	port.exec(Stmt::CHECK_DEFINITION, {name, "admin"});
	need_name(name);
	port.exec(Stmt::LOCK_DEFINE, {*name});
	check_exists(port, *name, version);
	if (!version) {
		port.exec(Stmt::ALIASES_DELETE, {*name});
		port.exec(Stmt::DELETION_INSERT, {*name, int64_t{0}, port.now_ms()});
		return;
	}
	Rows routed = port.query(Stmt::ALIASES_ROUTING_TO, {*name, *version});
	if (!routed.empty())
		raise(Msg::VERSION_ROUTED, {std::to_string(*version), *name, routed[0].text(0)}, {},
			  "Route the alias elsewhere (genroc.alias_set) or drop it (genroc.alias_drop) first.");
	port.exec(Stmt::DELETION_INSERT, {*name, *version, port.now_ms()});
}

int start_version(Port &port, const std::string &name, std::optional<int64_t> version,
				  const std::optional<std::string> &alias) {
	if (alias && version) raise(Msg::ALIAS_AND_VERSION);
	check_deleted(port, name, version);
	if (alias) {
		Rows rows = port.query(Stmt::ALIAS_GET, {name, *alias});
		if (rows.empty()) raise(Msg::ALIAS_NOT_FOUND, {*alias, name});
		const json routing = parse_json(rows[0].text(0), "the routing");
		// the first route takes draws below its weight, the second the rest
		int64_t d = draw_percent();
		version = routing.back().at("version").get<int64_t>();
		for (const json &r : routing) {
			if (d < r.at("weight").get<int64_t>()) {
				version = r.at("version").get<int64_t>();
				break;
			}
			d -= r.at("weight").get<int64_t>();
		}
		check_deleted(port, name, version);
	}
	Rows rows = port.query(Stmt::DEFINITION_VERSION, {name, version});
	if (rows.empty())
		raise(Msg::DEFINITION_NOT_FOUND, {name, version ? " version " + std::to_string(*version) : std::string()});
	return static_cast<int>(rows[0].i64(1));
}

}  // namespace genroc::engine
