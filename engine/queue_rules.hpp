// queue_rules.hpp — the pure parts of routing (engine/admission.cpp,
// genroc._route; the rule's steps are written above it in 55_queues.sql):
// globs, a routed queue's match and the handlers a definition uses.  No
// database here; `genroc run` (worker/run_cmd.cpp) reads a definition's
// handlers with it too.
#pragma once

#include <set>
#include <string>

#include "asl.hpp"

namespace genroc::engine {

// A glob matches the whole text: * is any run of characters, ? one
// character, everything else is itself (LIKE with % _ \ escaped, as the
// extension translates it).  ? takes one UTF-8 character, as LIKE's _ does
// in a UTF8 database.
inline bool glob_match(const std::string &text, const std::string &glob) {
	auto continuation = [&](size_t i) { return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
	size_t t = 0, g = 0, star = std::string::npos, mark = 0;
	while (t < text.size()) {
		if (g < glob.size() && glob[g] == '?') {
			t++;
			while (continuation(t)) t++;
			g++;
		} else if (g < glob.size() && glob[g] != '*' && glob[g] == text[t]) {
			t++;
			g++;
		} else if (g < glob.size() && glob[g] == '*') {
			star = g++;
			mark = t;
		} else if (star != std::string::npos) {
			g = star + 1;
			t = ++mark;
		} else {
			return false;
		}
	}
	while (g < glob.size() && glob[g] == '*') g++;
	return g == glob.size();
}

// A routed queue's match against an instance: every list it has must match
// (an empty list matches everything); definitions: one glob matches the
// definition name; tenants: one glob matches the label "tenant" (absent: no
// match); labels: every key is among the labels with a value its glob
// matches.  The match was checked by queue_set.
inline bool match_applies(const json &match, const std::string &definition, const json &labels) {
	auto any = [](const json &globs, const std::optional<std::string> &text) {
		if (globs.empty()) return true;
		if (!text) return false;
		for (auto &g : globs)
			if (glob_match(*text, g.get<std::string>())) return true;
		return false;
	};
	auto label = [&](const std::string &key) -> std::optional<std::string> {
		if (labels.is_object() && labels.contains(key) && labels[key].is_string()) return labels[key].get<std::string>();
		return std::nullopt;
	};
	if (match.contains("definitions") && !any(match["definitions"], definition)) return false;
	if (match.contains("tenants") && !any(match["tenants"], label("tenant"))) return false;
	if (match.contains("labels"))
		for (auto &[k, v] : match["labels"].items()) {
			auto value = label(k);
			if (!value || !glob_match(*value, v.get<std::string>())) return false;
		}
	return true;
}

// NAME of every "Resource": "handler:NAME" anywhere in a definition (the
// extension: jsonb_path_query(definition, 'lax $.**.Resource')).
inline void handler_names(const json &node, std::set<std::string> &out) {
	if (node.is_object()) {
		for (auto &[k, v] : node.items()) {
			if (k == "Resource" && v.is_string() && v.get<std::string>().rfind("handler:", 0) == 0)
				out.insert(v.get<std::string>().substr(8));
			handler_names(v, out);
		}
	} else if (node.is_array()) {
		for (auto &v : node) handler_names(v, out);
	}
}

}  // namespace genroc::engine
