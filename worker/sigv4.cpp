// sigv4.cpp — AWS Signature Version 4 checks and genroc's key pairs; see sigv4.hpp.
#include "sigv4.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace genroc::sigv4 {

std::string hex(const std::string &bytes) {
	static const char *digits = "0123456789abcdef";
	std::string out;
	out.reserve(bytes.size() * 2);
	for (unsigned char c : bytes) {
		out += digits[c >> 4];
		out += digits[c & 15];
	}
	return out;
}

std::string sha256_hex(const std::string &data) {
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	if (!EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr))
		throw std::runtime_error("SHA-256 failed");
	return hex(std::string(reinterpret_cast<char *>(md), len));
}

// ---- genroc's key pairs ---------------------------------------------------

std::string access_key_id(const std::string &token_id) {
	std::string out = "GRK";
	for (char c : token_id) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	return out;
}

std::optional<std::string> token_id_of(const std::string &key) {
	if (key.size() < 3 + 8 || key.size() > 3 + 32 || key.compare(0, 3, "GRK") != 0) return std::nullopt;
	std::string id;
	for (size_t i = 3; i < key.size(); i++) {
		const char c = key[i];
		if (c >= 'A' && c <= 'Z')
			id += static_cast<char>(c - 'A' + 'a');
		else if (c >= '0' && c <= '9')
			id += c;
		else
			return std::nullopt;
	}
	return id;
}

// Each derivation has a label of its own, so the secret and the token text
// of one id are unrelated to each other.
std::string secret_access_key(const std::string &server_key, const std::string &token_id) {
	const std::string mac = hmac_sha256(server_key, std::string("genroc sigv4 secret") + '\0' + token_id);
	unsigned char b64[64];
	const int n = EVP_EncodeBlock(b64, reinterpret_cast<const unsigned char *>(mac.data()), static_cast<int>(mac.size()));
	return std::string(reinterpret_cast<char *>(b64), static_cast<size_t>(std::min(n, 40)));	// 240 bits
}

std::string token_text(const std::string &server_key, const std::string &token_id) {
	return "grt_" + token_id + "_" + hex(hmac_sha256(server_key, std::string("genroc sigv4 token") + '\0' + token_id));
}

std::string new_token_id() {
	static const char *abc = "abcdefghijklmnopqrstuvwxyz0123456789";
	std::string out;
	while (out.size() < 12) {
		unsigned char b[16];
		if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("no random bytes from OpenSSL");
		for (unsigned char c : b)
			if (c < 252 && out.size() < 12) out += abc[c % 36];	 // 252 = 7 * 36: no bias
	}
	return out;
}

std::string load_server_key(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	if (!in) throw std::runtime_error("--sigv4-key-file: cannot read " + path);
	std::stringstream buf;
	buf << in.rdbuf();
	std::string key = buf.str();
	while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
	if (key.size() < kMinServerKeyBytes)
		throw std::runtime_error("--sigv4-key-file " + path + ": the key must be at least " +
								 std::to_string(kMinServerKeyBytes) +
								 " bytes (e.g. openssl rand -hex 32 > FILE)");
	return key;
}

// ---- the canonical request ------------------------------------------------

namespace {

std::string lower(std::string s) {
	for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	return s;
}

// RFC 3986 percent-encoding of everything but the unreserved characters
// (and '/' when keep_slash), as AWS's canonical forms want.
std::string uri_encode(const std::string &s, bool keep_slash) {
	static const char *digits = "0123456789ABCDEF";
	std::string out;
	for (unsigned char c : s) {
		if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
			out += static_cast<char>(c);
		} else {
			out += '%';
			out += digits[c >> 4];
			out += digits[c & 15];
		}
	}
	return out;
}

// A header's value as signed: trimmed, inner runs of spaces one space.
std::string trimmed(const std::string &v) {
	std::string out;
	bool space = false;
	for (char c : v) {
		if (c == ' ' || c == '\t') {
			space = !out.empty();
			continue;
		}
		if (space) out += ' ';
		space = false;
		out += c;
	}
	return out;
}

std::optional<std::string> header(const Request &r, const std::string &name) {
	std::optional<std::string> out;
	for (const auto &[k, v] : r.headers)
		if (lower(k) == name) out = out ? *out + "," + trimmed(v) : trimmed(v);
	return out;
}

// YYYYMMDDTHHMMSSZ as seconds since the epoch.
std::optional<int64_t> parse_amz_date(const std::string &t) {
	if (t.size() != 16 || t[8] != 'T' || t[15] != 'Z') return std::nullopt;
	for (size_t i = 0; i < 15; i++)
		if (i != 8 && !std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
	std::tm tm{};
	tm.tm_year = std::stoi(t.substr(0, 4)) - 1900;
	tm.tm_mon = std::stoi(t.substr(4, 2)) - 1;
	tm.tm_mday = std::stoi(t.substr(6, 2));
	tm.tm_hour = std::stoi(t.substr(9, 2));
	tm.tm_min = std::stoi(t.substr(11, 2));
	tm.tm_sec = std::stoi(t.substr(13, 2));
	if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return std::nullopt;
	return static_cast<int64_t>(timegm(&tm));
}

std::string format_amz_date(int64_t s) {
	const std::time_t t = static_cast<std::time_t>(s);
	std::tm tm{};
	gmtime_r(&t, &tm);
	char buf[32];
	std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
	return buf;
}

std::vector<std::string> split(const std::string &s, char sep) {
	std::vector<std::string> out;
	size_t at = 0;
	for (;;) {
		size_t next = s.find(sep, at);
		out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
		if (next == std::string::npos) return out;
		at = next + 1;
	}
}

}  // namespace

std::string canonical_request(const Request &r, const std::vector<std::string> &signed_headers) {
	std::vector<std::pair<std::string, std::string>> q;
	for (const auto &[k, v] : r.query) q.emplace_back(uri_encode(k, false), uri_encode(v, false));
	std::sort(q.begin(), q.end());
	std::string query;
	for (const auto &[k, v] : q) query += (query.empty() ? "" : "&") + k + "=" + v;
	std::string headers;
	for (const auto &h : signed_headers) headers += h + ":" + header(r, h).value_or("") + "\n";
	std::string names;
	for (const auto &h : signed_headers) names += (names.empty() ? "" : ";") + h;
	const std::string path = r.path.empty() ? "/" : r.path;
	return r.method + "\n" + uri_encode(path, true) + "\n" + query + "\n" + headers + "\n" + names + "\n" +
		   sha256_hex(r.body);
}

std::string string_to_sign(const Credential &c, const std::string &canonical) {
	return "AWS4-HMAC-SHA256\n" + c.amz_date + "\n" + c.date + "/" + c.region + "/" + c.service +
		   "/aws4_request\n" + sha256_hex(canonical);
}

std::string signature(const std::string &secret, const Credential &c, const std::string &canonical) {
	std::string k = hmac_sha256("AWS4" + secret, c.date);
	k = hmac_sha256(k, c.region);
	k = hmac_sha256(k, c.service);
	k = hmac_sha256(k, "aws4_request");
	return hex(hmac_sha256(k, string_to_sign(c, canonical)));
}

Credential parse(const Request &r, const std::string &region, int64_t now_s) {
	auto auth = header(r, "authorization");
	if (!auth || auth->empty())
		throw Refused{"MissingAuthenticationTokenException",
					  "Missing Authentication Token: sign the request with AWS Signature Version 4 and a key pair "
					  "genroc issued"};
	const std::string algo = "AWS4-HMAC-SHA256 ";
	if (auth->compare(0, algo.size(), algo) != 0)
		throw Refused{"IncompleteSignatureException",
					  "Authorization must be AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=..."};
	Credential c;
	std::string credential, signed_headers;
	for (auto part : split(auth->substr(algo.size()), ',')) {
		part = trimmed(part);
		const auto eq = part.find('=');
		if (eq == std::string::npos) continue;
		const std::string k = part.substr(0, eq), v = part.substr(eq + 1);
		if (k == "Credential") credential = v;
		else if (k == "SignedHeaders") signed_headers = v;
		else if (k == "Signature") c.signature = v;
	}
	if (credential.empty() || signed_headers.empty() || c.signature.empty())
		throw Refused{"IncompleteSignatureException",
					  "Authorization needs Credential, SignedHeaders and Signature"};
	auto scope = split(credential, '/');
	if (scope.size() != 5 || scope[4] != "aws4_request")
		throw Refused{"IncompleteSignatureException",
					  "the Credential must be ACCESS_KEY/DATE/REGION/SERVICE/aws4_request"};
	c.access_key_id = scope[0];
	c.date = scope[1];
	c.region = scope[2];
	c.service = scope[3];
	c.signed_headers = split(signed_headers, ';');
	for (auto &h : c.signed_headers) h = lower(h);
	if (!std::is_sorted(c.signed_headers.begin(), c.signed_headers.end()))
		throw Refused{"IncompleteSignatureException", "SignedHeaders must be sorted"};
	for (const char *need : {"host", "x-amz-date", "x-amz-target"})
		if (std::find(c.signed_headers.begin(), c.signed_headers.end(), need) == c.signed_headers.end())
			throw Refused{"IncompleteSignatureException", std::string("the header ") + need + " must be signed"};
	c.amz_date = header(r, "x-amz-date").value_or("");
	auto t = parse_amz_date(c.amz_date);
	if (!t)
		throw Refused{"IncompleteSignatureException", "X-Amz-Date must be YYYYMMDDTHHMMSSZ"};
	c.time_s = *t;
	if (c.date != c.amz_date.substr(0, 8))
		throw Refused{"InvalidSignatureException", "the Credential's date is not the date of X-Amz-Date"};
	if (c.service != "states")
		throw Refused{"InvalidSignatureException",
					  "Credential should be scoped to correct service: 'states', not '" + c.service.substr(0, 40) + "'"};
	if (c.region != region)
		throw Refused{"InvalidSignatureException", "Credential should be scoped to a valid region, '" + region +
													   "', not '" + c.region.substr(0, 40) + "'"};
	if (c.time_s < now_s - kMaxSkewSeconds)
		throw Refused{"InvalidSignatureException", "Signature expired: " + c.amz_date + " is now earlier than " +
													   format_amz_date(now_s - kMaxSkewSeconds) + " (" +
													   format_amz_date(now_s) + " - 15 min.)"};
	if (c.time_s > now_s + kMaxSkewSeconds)
		throw Refused{"InvalidSignatureException", "Signature not yet current: " + c.amz_date +
													   " is still later than " +
													   format_amz_date(now_s + kMaxSkewSeconds) + " (" +
													   format_amz_date(now_s) + " + 15 min.)"};
	return c;
}

void verify(const Request &r, const Credential &c, const std::string &secret) {
	const std::string expected = signature(secret, c, canonical_request(r, c.signed_headers));
	if (c.signature.size() != expected.size() ||
		CRYPTO_memcmp(c.signature.data(), expected.data(), expected.size()) != 0)
		throw Refused{"InvalidSignatureException",
					  "The request signature we calculated does not match the signature you provided. Check your "
					  "AWS Secret Access Key and signing method."};
}

bool ReplayCache::first_use(const std::string &sig, int64_t request_time_s, int64_t now_s) {
	std::lock_guard<std::mutex> g(mu_);
	while (!order_.empty() && (order_.front().first < now_s || order_.size() >= kReplayCacheEntries)) {
		seen_.erase(order_.front().second);
		order_.pop_front();
	}
	if (!seen_.insert(sig).second) return false;
	// A signature is good until its time + the skew; keep it that long.
	order_.emplace_back(request_time_s + kMaxSkewSeconds, sig);
	// Kept in order of insertion, not of expiry: a request signed late is
	// forgotten no earlier than the ones before it, which only keeps it longer.
	return true;
}

void sign(Request &r, const std::string &access_key, const std::string &secret, const std::string &region,
		  const std::string &service, int64_t now_s) {
	Credential c;
	c.access_key_id = access_key;
	c.amz_date = format_amz_date(now_s);
	c.date = c.amz_date.substr(0, 8);
	c.region = region;
	c.service = service;
	r.headers.emplace_back("X-Amz-Date", c.amz_date);
	for (const auto &[k, v] : r.headers) c.signed_headers.push_back(lower(k));
	std::sort(c.signed_headers.begin(), c.signed_headers.end());
	c.signed_headers.erase(std::unique(c.signed_headers.begin(), c.signed_headers.end()), c.signed_headers.end());
	std::string names;
	for (const auto &h : c.signed_headers) names += (names.empty() ? "" : ";") + h;
	const std::string sig = signature(secret, c, canonical_request(r, c.signed_headers));
	r.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=" + access_key + "/" + c.date + "/" + region +
												"/" + service + "/aws4_request, SignedHeaders=" + names +
												", Signature=" + sig);
}

}  // namespace genroc::sigv4
