// log_payloads.cpp — what the instance log keeps of a detail's payloads
// (engine/log_payloads.hpp), once for both stores.
#include "log_payloads.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "values.hpp"

namespace genroc::engine {

namespace {

constexpr std::array<const char *, 3> kPayloadKeys = {"input", "output", "payload"};

// An object's members in jsonb's order: shorter keys first, then by bytes.
std::vector<json::const_iterator> jsonb_order(const json &object) {
	std::vector<json::const_iterator> members;
	members.reserve(object.size());
	for (auto it = object.begin(); it != object.end(); ++it) members.push_back(it);
	std::stable_sort(members.begin(), members.end(), [](const auto &a, const auto &b) {
		return a.key().size() != b.key().size() ? a.key().size() < b.key().size() : a.key() < b.key();
	});
	return members;
}

// Appends v's log text.  Values reach the log within json_depth
// (core/limits.def), as nlohmann's own dump recurses.
void write(const json &v, std::string &out) {
	if (v.is_object()) {
		out += '{';
		bool first = true;
		for (const auto &it : jsonb_order(v)) {
			if (!first) out += ", ";
			first = false;
			out += json(it.key()).dump();
			out += ": ";
			write(it.value(), out);
		}
		out += '}';
	} else if (v.is_array()) {
		out += '[';
		bool first = true;
		for (const auto &e : v) {
			if (!first) out += ", ";
			first = false;
			write(e, out);
		}
		out += ']';
	} else {
		out += v.dump();  // a string's escapes are jsonb's: \" \\ \b \f \n \r \t, \u00XX
	}
}

// The length of v's log text, without writing it.
size_t text_size(const json &v) {
	if (v.is_object()) {
		size_t n = 2 + (v.empty() ? 0 : 2 * (v.size() - 1));
		for (auto it = v.begin(); it != v.end(); ++it) n += json(it.key()).dump().size() + 2 + text_size(it.value());
		return n;
	}
	if (v.is_array()) {
		size_t n = 2 + (v.empty() ? 0 : 2 * (v.size() - 1));
		for (const auto &e : v) n += text_size(e);
		return n;
	}
	if (v.is_string() || v.is_number_float()) return v.dump().size();
	if (v.is_boolean()) return v.get<bool>() ? 4 : 5;
	if (v.is_null()) return 4;
	return v.dump().size();	 // an integer
}

// The first n characters (code points) of UTF-8 text, as left() in SQL.
std::string utf8_head(const std::string &text, size_t n) {
	size_t chars = 0, i = 0;
	for (; i < text.size(); i++) {
		if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {	 // a character starts here
			if (chars == n) break;
			chars++;
		}
	}
	return text.substr(0, i);
}

}  // namespace

std::string log_text(const json &v) {
	std::string out;
	write(v, out);
	return out;
}

std::string log_payloads(Port &port, const std::string &text, const LogSettings &settings) {
	// most details have no payload key, and say so before any parse
	if (std::none_of(kPayloadKeys.begin(), kPayloadKeys.end(),
					 [&](const char *k) { return text.find(std::string("\"") + k + "\"") != std::string::npos; }))
		return text;
	json detail = parse_json(text, "a log detail");
	if (!detail.is_object() ||
		std::none_of(kPayloadKeys.begin(), kPayloadKeys.end(), [&](const char *k) { return detail.contains(k); }))
		return text;
	if (!settings.payloads) {
		for (const char *k : kPayloadKeys) detail.erase(k);
		return detail.dump();
	}
	bool changed = false;
	size_t size = text_size(detail);
	const auto max = static_cast<size_t>(std::max<int64_t>(settings.payload_max, 0));
	// the whole detail within the limit: so is every payload in it
	if (max != 0 && size > max) {
		for (const char *k : kPayloadKeys) {
			if (!detail.contains(k)) continue;
			json &payload = detail[k];
			if (text_size(payload) <= max) continue;
			const std::string t = log_text(payload);
			payload = json{{"truncated", true}, {"bytes", t.size()}, {"head", utf8_head(t, std::min<size_t>(max, 256))}};
			changed = true;
		}
		if (changed) size = text_size(detail);
	}
	const auto threshold = static_cast<size_t>(std::max<int64_t>(settings.object_threshold, 0));
	const bool any_ref = std::any_of(kPayloadKeys.begin(), kPayloadKeys.end(),
									 [&](const char *k) { return detail.contains(k) && is_ref(detail.at(k)); });
	if (size > threshold || any_ref) {
		for (const char *k : kPayloadKeys) {
			if (!detail.contains(k)) continue;
			json &payload = detail[k];
			const bool large = text_size(payload) > threshold;
			if (!large && !is_ref(payload)) continue;
			payload = parse_json(store_value(port, port.canonical_json(payload.dump()), k, large), k);
			changed = true;
		}
	}
	return changed ? detail.dump() : text;
}

}  // namespace genroc::engine
