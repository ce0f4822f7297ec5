// values.cpp — stored values (engine/values.hpp), once for both stores.
#include "values.hpp"

#include <openssl/evp.h>

#include "digest.hpp"
#include "errors.hpp"
#include "limits.hpp"

namespace genroc::engine {

bool is_ref(const json &v) { return v.is_object() && v.contains(kObjectKey); }

bool is_ref_text(const std::string &text) {
	// a reference names its key; most values are looked at without a parse
	size_t i = 0;
	while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) i++;
	if (i == text.size() || text[i] != '{' || text.find("\"genroc:object\"") == std::string::npos) return false;
	const json v = json::parse(text, nullptr, false);
	return !v.is_discarded() && is_ref(v);
}

std::string object_value(Port &port, const std::string &hash) {
	Rows rows = port.query(Stmt::OBJECT_VALUE, {hash});
	if (rows.empty()) raise(Msg::READ_OBJECT_MISSING, {hash});
	return rows[0].text(0);
}

std::string load_value(Port &port, const std::string &text) {
	if (!is_ref_text(text)) return text;
	const json v = json::parse(text);
	const json &h = v.at(kObjectKey);
	// as `value ->> 'genroc:object'`: a string's text, anything else's JSON
	return object_value(port, h.is_string() ? h.get<std::string>() : h.dump());
}

std::optional<std::string> load_value(Port &port, const std::optional<std::string> &text) {
	if (!text) return text;
	return load_value(port, *text);
}

json store_value(Port &port, const json &v, const std::string &field, int64_t threshold) {
	const bool lookalike = is_ref(v);
	if (!lookalike && !v.is_object() && !v.is_array() &&
		!(v.is_string() && static_cast<int64_t>(v.get_ref<const std::string &>().size()) + 2 > threshold))
		return v;
	const std::string text = v.dump();
	const bool large = static_cast<int64_t>(text.size()) > threshold;
	if (!lookalike && !large) return v;
	return json::parse(store_value(port, text, field, large));
}

std::pair<std::string, std::string> instance_inputs(Port &port, int64_t instance) {
	Rows rows = port.query(Stmt::INSTANCE_INPUTS, {instance});
	if (rows.empty()) raise(Msg::INSTANCE_NOT_FOUND, {std::to_string(instance)});
	return {load_value(port, rows[0].otext(0)).value_or("null"), load_value(port, rows[0].otext(1)).value_or("null")};
}

std::string store_value(Port &port, const std::string &text, const std::string &field, bool large) {
	if (!large && !is_ref_text(text)) return text;
	const auto bytes = static_cast<int64_t>(text.size());
	if (text.size() > limits::VALUE_BYTES) raise(Msg::VALUE_TOO_LARGE, {field, std::to_string(bytes), std::to_string(limits::VALUE_BYTES)});
	const std::optional<std::string> hash = digest_hex(EVP_sha256(), text);
	if (!hash) throw Error("XX000", "sha256: the digest failed");
	port.exec(Stmt::VALUE_PUT, {*hash, JsonText{text}, bytes, port.now_ms()});
	return json{{kObjectKey, *hash}}.dump();
}

}  // namespace genroc::engine
