// tokens.cpp — genroc.token_create, token_verify, token_list and
// token_revoke (engine/tokens.hpp), once for both stores.
#include "tokens.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>

#include "digest.hpp"
#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

const char *const kPermissions[] = {"admin", "operator", "reader", "worker"};  // sorted
const char *const kPermissionsHint = "Permissions: admin, operator, worker, reader.";

// Lowercase hex of n random bytes from OpenSSL's CSPRNG.
std::string random_hex(size_t n) {
	std::vector<unsigned char> b(n);
	if (RAND_bytes(b.data(), static_cast<int>(n)) != 1) raise(Msg::TOKEN_NO_RANDOMNESS);
	return hex_string(b.data(), n);
}

std::string sha256_hex(const std::string &text) {
	if (auto h = digest_hex(EVP_sha256(), text)) return *h;
	throw Error("XX000", "sha256: the digest failed");
}

bool same_secret_hash(const std::string &a, const std::string &b) {
	return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// genroc._check_permissions: sorted, without repeats; NULL is 22004, an
// empty list or an unknown name (named) 22023.
std::vector<std::string> check_permissions(const std::optional<std::vector<std::optional<std::string>>> &permissions) {
	if (!permissions) raise(Msg::ARG_NULL, {"p_permissions"});
	if (permissions->empty()) raise(Msg::TOKEN_NO_PERMISSION, {}, {}, kPermissionsHint);
	std::vector<std::string> out;
	for (const auto &p : *permissions) {
		const bool known = p && std::any_of(std::begin(kPermissions), std::end(kPermissions),
											[&](const char *k) { return *p == k; });
		if (!known) raise(Msg::TOKEN_UNKNOWN_PERMISSION, {p ? *p : "null"}, {}, kPermissionsHint);
		out.push_back(*p);
	}
	std::sort(out.begin(), out.end());
	out.erase(std::unique(out.begin(), out.end()), out.end());
	return out;
}

// The columns of TOKEN_ROW / TOKENS_ALL from `first` on (name, permissions,
// created_by, created_at, revoked_at) as genroc._token_json.
json token_json(const std::string &id, const Row &r, int first) {
	return {{"id", id},
			{"name", r.text(first)},
			{"permissions", parse_json(r.text(first + 1), "the permissions")},
			{"created_by", r.text(first + 2)},
			{"created_at", iso_us(r.i64(first + 3))},
			{"revoked_at", r.is_null(first + 4) ? json(nullptr) : json(iso_us(r.i64(first + 4)))}};
}

std::string dump(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::optional<std::string> token_id(const std::string &t) {
	if (t.rfind("grt_", 0) != 0) return std::nullopt;
	const size_t us = t.find('_', 4);
	if (us == std::string::npos) return std::nullopt;
	const std::string id = t.substr(4, us - 4), secret = t.substr(us + 1);
	if (id.size() < 8 || id.size() > 32 || secret.size() < 32 || secret.size() > 128) return std::nullopt;
	for (char c : id)
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return std::nullopt;
	for (char c : secret)
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return std::nullopt;
	return id;
}

std::string token_create(Port &port, const std::optional<std::string> &name,
						 const std::optional<std::vector<std::optional<std::string>>> &permissions,
						 const std::optional<std::string> &created_by, const std::optional<std::string> &secret) {
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	if (!created_by) raise(Msg::ARG_NULL, {"p_created_by"});
	if (name->empty()) raise(Msg::TOKEN_NAME_EMPTY);
	if (created_by->empty()) raise(Msg::ARG_EMPTY, {"p_created_by"});
	check_name(*name, "p_name");
	check_name(*created_by, "p_created_by");
	const std::vector<std::string> perms = check_permissions(permissions);
	std::string id, text;
	if (secret) {
		auto parsed = token_id(*secret);
		if (!parsed)
			raise(Msg::TOKEN_TEXT_MALFORMED, {},
				  "The id is 8 to 32 of a-z and 0-9, the secret 32 to 128 of A-Z, a-z and 0-9.");
		id = *parsed;
		text = *secret;
	} else {
		// 48 random bits of id, 256 of secret
		id = random_hex(6);
		text = "grt_" + id + "_" + random_hex(32);
	}
	const std::string hash = sha256_hex(text);
	bool is_new = port.exec(Stmt::TOKEN_INSERT, {id, *name, hash, JsonText{json(perms).dump()}, *created_by,
												 port.now_ms()}) > 0;
	Rows rows = port.query(Stmt::TOKEN_ROW, {id});
	if (rows.empty()) raise(Msg::TOKEN_NOT_FOUND, {id});
	const Row &r = rows[0];
	if (!is_new) {
		// Seeding again is idempotent: the same text, name and permissions.
		const json stored = parse_json(r.text(1), "the permissions");
		if (!secret || !same_secret_hash(r.text(5), hash) || r.text(0) != *name || stored != json(perms))
			raise(Msg::TOKEN_EXISTS, {id}, {}, "Revoke it if it must go, and give a new token another id.");
	}
	json out = token_json(id, r, 0);
	out["token"] = text;
	out["is_new"] = is_new;
	return dump(out);
}

std::optional<std::string> token_verify(Port &port, const std::optional<std::string> &token) {
	if (!token) return std::nullopt;
	const auto id = token_id(*token);
	if (!id) return std::nullopt;
	const std::string hash = sha256_hex(*token);
	Rows rows = port.query(Stmt::TOKEN_LIVE, {*id});
	if (rows.empty() || !same_secret_hash(rows[0].text(3), hash)) return std::nullopt;
	const Row &r = rows[0];
	return "{\"id\": " + dump(json(*id)) + ", \"name\": " + dump(json(r.text(0))) +
		   ", \"permissions\": " + r.text(1) + ", \"created_by\": " + dump(json(r.text(2))) + "}";
}

std::vector<std::string> token_list(Port &port) {
	std::vector<std::string> out;
	for (const Row &r : port.query(Stmt::TOKENS_ALL, {})) out.push_back(dump(token_json(r.text(0), r, 1)));
	return out;
}

void token_revoke(Port &port, const std::optional<std::string> &id) {
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (!id) raise(Msg::ARG_NULL, {"p_id"});
	if (port.exec(Stmt::TOKEN_REVOKE, {*id, port.now_ms()}) == 0) raise(Msg::TOKEN_NOT_FOUND, {*id});
}

}  // namespace genroc::engine
