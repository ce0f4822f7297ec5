// sigv4.hpp — AWS Signature Version 4, as the Step Functions endpoint
// (sfn_api.hpp) checks it, and the key pairs genroc issues for it.
//
// A key pair is tied to a genroc API token (extension/sql/80_tokens.sql):
// the access key id names the token ("GRK" and its id in capitals), and
// both the secret access key and the token's own text are derived from the
// token id with the server's SigV4 key (--sigv4-key-file, HMAC-SHA256 with
// a label per use).  Nothing secret is stored: the database keeps the
// token's hash as for every token, so a dump of it gives no key; the server
// recomputes the secret to check a signature, and the token's text to ask
// the store whether the token is live (token_verify: a revoke holds at
// once) and what it may do.  A token made any other way has a random
// secret, so no SigV4 key exists for it.  Changing the server key ends
// every key pair issued with it.
//
// Glossary
//   server key   --sigv4-key-file's bytes (at least 32), shared by every
//                genroc serve/api that answers the same clients
//   scope        DATE/REGION/states/aws4_request of the Credential
//   skew         how far X-Amz-Date may be from this machine's clock: 15
//                minutes either way, as AWS allows
//   replay       a signature already accepted within its window is refused
//                a second time (per process; AWS's SDKs sign every attempt
//                anew, with its attempt number, so their retries differ)
#pragma once

#include "digest.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace genroc::sigv4 {

inline constexpr int64_t kMaxSkewSeconds = 15 * 60;
inline constexpr size_t kMinServerKeyBytes = 32;
inline constexpr size_t kReplayCacheEntries = 200'000;

// A refusal: `type` is AWS's error name (InvalidSignatureException,
// UnrecognizedClientException, MissingAuthenticationTokenException,
// IncompleteSignatureException), `message` says why (never a secret).
struct Refused {
	std::string type;
	std::string message;
};

std::string sha256_hex(const std::string &data);
using ::genroc::hmac_sha256;  // core/digest.hpp
std::string hex(const std::string &bytes);

// The key pair of a token id under a server key.
std::string access_key_id(const std::string &token_id);
// The token id an access key id names; nullopt when it is not one of ours.
std::optional<std::string> token_id_of(const std::string &access_key_id);
std::string secret_access_key(const std::string &server_key, const std::string &token_id);
// The text of the genroc token behind the key pair (grt_<id>_<64 hex>).
std::string token_text(const std::string &server_key, const std::string &token_id);
// A fresh token id: 12 of a-z and 0-9 from OpenSSL's random source.
std::string new_token_id();

// Reads the server key file: its bytes, a trailing newline dropped; throws
// std::runtime_error naming the path (never the content) when it cannot be
// read or is shorter than kMinServerKeyBytes.
std::string load_server_key(const std::string &path);

// The parts of a request the signature covers.
struct Request {
	std::string method;
	std::string path;							// as sent, percent-encoded
	std::multimap<std::string, std::string> query;	// decoded
	std::vector<std::pair<std::string, std::string>> headers;	// names in any case, in order
	std::string body;
};

// The parsed Authorization header.
struct Credential {
	std::string access_key_id, date, region, service;
	std::vector<std::string> signed_headers;
	std::string signature;	// lowercase hex
	std::string amz_date;	// X-Amz-Date: YYYYMMDDTHHMMSSZ
	int64_t time_s = 0;		// amz_date as seconds since the epoch
};

// AWS's canonical request for the signed headers, and the string to sign.
std::string canonical_request(const Request &r, const std::vector<std::string> &signed_headers);
std::string string_to_sign(const Credential &c, const std::string &canonical);
std::string signature(const std::string &secret, const Credential &c, const std::string &canonical);

// Reads Authorization and X-Amz-Date and checks what needs no secret: the
// algorithm, the scope (its date the request's, `region`, service "states"),
// host, x-amz-date and x-amz-target signed, the skew against now_s.
// Throws Refused.
Credential parse(const Request &r, const std::string &region, int64_t now_s);

// Checks the signature with `secret` (constant-time compare).  Throws Refused.
void verify(const Request &r, const Credential &c, const std::string &secret);

// Signatures seen in the last 2 * skew, refused a second time.  Bounded:
// beyond kReplayCacheEntries the oldest are forgotten early.
class ReplayCache {
  public:
	// True when `signature` was not seen (and now is); false for a replay.
	bool first_use(const std::string &signature, int64_t request_time_s, int64_t now_s);

  private:
	std::mutex mu_;
	std::unordered_set<std::string> seen_;
	std::deque<std::pair<int64_t, std::string>> order_;	 // (forget after, signature)
};

// Signs a request as a client would (tests, and `genctl`-style tools):
// sets X-Amz-Date and Authorization over every header given.
void sign(Request &r, const std::string &access_key, const std::string &secret, const std::string &region,
		  const std::string &service, int64_t now_s);

}  // namespace genroc::sigv4
