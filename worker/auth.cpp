// auth.cpp — permissions of the routes, JWT (HS256) verification, the seed
// tokens file; see auth.hpp.
#include "auth.hpp"

#include "digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace genroc::auth {

const std::vector<std::string> &permission_names() {
	static const std::vector<std::string> names = {"admin", "operator", "worker", "reader"};
	return names;
}

bool known_permission(const std::string &name) {
	const auto &n = permission_names();
	return std::find(n.begin(), n.end(), name) != n.end();
}

const Need &need_read() {
	static const Need n{"reader", {"reader", "operator", "admin"}};
	return n;
}
const Need &need_any() {
	static const Need n{"reader", {"reader", "worker", "operator", "admin"}};
	return n;
}
const Need &need_read_instances() {
	static const Need n{"reader", {"reader", "worker", "operator", "admin"}};
	return n;
}
const Need &need_operate() {
	static const Need n{"operator", {"operator", "admin"}};
	return n;
}
const Need &need_work() {
	static const Need n{"worker", {"worker", "admin"}};
	return n;
}
const Need &need_admin() {
	static const Need n{"admin", {"admin"}};
	return n;
}

bool allows(const Principal &who, const Need &need) {
	for (const auto &p : need.accepted)
		if (who.permissions.count(p)) return true;
	return false;
}

std::string describe(const Need &need) {
	std::string s = "the \"" + need.name + "\" permission";
	std::string others;
	for (const auto &p : need.accepted)
		if (p != need.name) others += (others.empty() ? "" : ", ") + p;
	if (!others.empty()) s += " (or " + others + ")";
	return s;
}

GroupMap parse_groups(const std::string &text) {
	json j;
	try {
		j = json::parse(text);
	} catch (const json::parse_error &) {
		throw std::runtime_error("--jwt-groups is not valid JSON");
	}
	if (!j.is_object())
		throw std::runtime_error("--jwt-groups must be a JSON object of group -> [permissions]");
	GroupMap out;
	for (auto &[group, perms] : j.items()) {
		if (!perms.is_array())
			throw std::runtime_error("--jwt-groups: group \"" + group + "\" must map to an array of permissions");
		for (const auto &p : perms) {
			if (!p.is_string() || !known_permission(p.get<std::string>()))
				throw std::runtime_error("--jwt-groups: group \"" + group + "\": unknown permission " + p.dump() +
										 " (admin, operator, worker, reader)");
			out[group].push_back(p.get<std::string>());
		}
	}
	return out;
}

// ---- base64url ------------------------------------------------------------

std::string base64url_encode(const std::string &bytes) {
	static const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	std::string out;
	size_t i = 0;
	for (; i + 2 < bytes.size(); i += 3) {
		uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
		for (int k = 18; k >= 0; k -= 6) out += abc[(v >> k) & 63];
	}
	if (i + 1 == bytes.size()) {
		uint32_t v = uint8_t(bytes[i]) << 16;
		out += abc[(v >> 18) & 63];
		out += abc[(v >> 12) & 63];
	} else if (i + 2 == bytes.size()) {
		uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
		out += abc[(v >> 18) & 63];
		out += abc[(v >> 12) & 63];
		out += abc[(v >> 6) & 63];
	}
	return out;
}

std::optional<std::string> base64url_decode(const std::string &text) {
	auto value = [](char c) -> int {
		if (c >= 'A' && c <= 'Z') return c - 'A';
		if (c >= 'a' && c <= 'z') return c - 'a' + 26;
		if (c >= '0' && c <= '9') return c - '0' + 52;
		if (c == '-') return 62;
		if (c == '_') return 63;
		return -1;
	};
	if (text.size() % 4 == 1) return std::nullopt;
	std::string out;
	uint32_t acc = 0;
	int bits = 0;
	for (char c : text) {
		int v = value(c);
		if (v < 0) return std::nullopt;
		acc = (acc << 6) | static_cast<uint32_t>(v);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out += static_cast<char>((acc >> bits) & 0xff);
		}
	}
	return out;
}

// ---- JWT ------------------------------------------------------------------

namespace {

json decode_part(const std::string &part, const char *what) {
	auto bytes = base64url_decode(part);
	if (!bytes) throw Refused(std::string("invalid JWT: the ") + what + " is not base64url");
	json j = json::parse(*bytes, nullptr, false);
	if (j.is_discarded() || !j.is_object()) throw Refused(std::string("invalid JWT: the ") + what + " is not a JSON object");
	return j;
}

}  // namespace

bool looks_like_jwt(const std::string &credential) {
	return std::count(credential.begin(), credential.end(), '.') == 2;
}

std::string sign_jwt(const json &header, const json &payload, const std::string &secret) {
	std::string signing = base64url_encode(header.dump()) + "." + base64url_encode(payload.dump());
	return signing + "." + base64url_encode(hmac_sha256(secret, signing));
}

Principal verify_jwt(const std::string &jwt, const std::string &secret, const GroupMap &groups, int64_t now_s) {
	if (secret.empty()) throw Refused("a JWT is not accepted here: genroc has no --jwt-secret");
	const size_t d1 = jwt.find('.'), d2 = jwt.find('.', d1 + 1);
	if (d1 == std::string::npos || d2 == std::string::npos || jwt.find('.', d2 + 1) != std::string::npos)
		throw Refused("invalid JWT: it must have three parts");
	const std::string head = jwt.substr(0, d1), body = jwt.substr(d1 + 1, d2 - d1 - 1), sig = jwt.substr(d2 + 1);

	// The algorithm is fixed here, not taken from the token: a header asking
	// for "none" or another algorithm is refused before anything else.
	json header = decode_part(head, "header");
	if (!header.contains("alg") || header["alg"] != "HS256")
		throw Refused("invalid JWT: alg " + (header.contains("alg") ? header["alg"].dump() : std::string("(none given)")) +
					  " is not accepted (only HS256)");
	if (header.contains("crit")) throw Refused("invalid JWT: critical header extensions are not supported");

	auto given = base64url_decode(sig);
	const std::string expected = hmac_sha256(secret, head + "." + body);
	if (!given || given->size() != expected.size() ||
		CRYPTO_memcmp(given->data(), expected.data(), expected.size()) != 0)
		throw Refused("invalid JWT: bad signature");

	json claims = decode_part(body, "payload");
	auto number = [&](const char *name) -> std::optional<int64_t> {
		if (!claims.contains(name)) return std::nullopt;
		if (!claims[name].is_number()) throw Refused(std::string("invalid JWT: \"") + name + "\" must be a number");
		const double v = claims[name].get<double>();
		if (!(v > -1e15 && v < 1e15)) throw Refused(std::string("invalid JWT: \"") + name + "\" is out of range");
		return static_cast<int64_t>(v);
	};
	auto exp = number("exp");
	if (!exp) throw Refused("invalid JWT: \"exp\" is required");
	if (now_s >= *exp + kJwtLeewaySeconds) throw Refused("invalid JWT: expired");
	auto nbf = number("nbf");
	if (nbf && now_s + kJwtLeewaySeconds < *nbf) throw Refused("invalid JWT: not valid yet (nbf)");
	if (!claims.contains("sub") || !claims["sub"].is_string() || claims["sub"].get<std::string>().empty())
		throw Refused("invalid JWT: \"sub\" must be a non-empty string");

	Principal who{claims["sub"].get<std::string>(), {}};
	if (claims.contains("groups")) {
		if (!claims["groups"].is_array()) throw Refused("invalid JWT: \"groups\" must be an array of strings");
		for (const auto &g : claims["groups"]) {
			if (!g.is_string()) throw Refused("invalid JWT: \"groups\" must be an array of strings");
			auto it = groups.find(g.get<std::string>());
			if (it != groups.end()) who.permissions.insert(it->second.begin(), it->second.end());
		}
	}
	return who;
}

// ---- the seed tokens file -------------------------------------------------

std::vector<SeedToken> load_seed_tokens(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	if (!in) throw std::runtime_error("--seed-tokens: cannot read " + path);
	std::stringstream buf;
	buf << in.rdbuf();
	json j = json::parse(buf.str(), nullptr, false);
	auto bad = [&](const std::string &what) { return std::runtime_error("--seed-tokens " + path + ": " + what); };
	if (j.is_discarded()) throw bad("not valid JSON");
	if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array() || j.size() != 1)
		throw bad("must be {\"tokens\": [{\"name\", \"token\", \"permissions\"}, ...]}");
	std::vector<SeedToken> out;
	for (size_t i = 0; i < j["tokens"].size(); i++) {
		const json &e = j["tokens"][i];
		const std::string where = "tokens[" + std::to_string(i) + "]";
		if (!e.is_object()) throw bad(where + " must be an object");
		for (auto &[k, v] : e.items())
			if (k != "name" && k != "token" && k != "permissions") throw bad(where + ": unknown field \"" + k + "\"");
		SeedToken t;
		if (!e.contains("name") || !e["name"].is_string() || e["name"].get<std::string>().empty())
			throw bad(where + ": \"name\" must be a non-empty string");
		t.name = e["name"];
		if (!e.contains("token") || !e["token"].is_string()) throw bad(where + " (" + t.name + "): \"token\" must be a string");
		t.token = e["token"];
		if (!e.contains("permissions") || !e["permissions"].is_array() || e["permissions"].empty())
			throw bad(where + " (" + t.name + "): \"permissions\" must be a non-empty array");
		for (const auto &p : e["permissions"]) {
			if (!p.is_string()) throw bad(where + " (" + t.name + "): a permission must be a string");
			t.permissions.push_back(p);
		}
		out.push_back(std::move(t));
	}
	return out;
}

}  // namespace genroc::auth
