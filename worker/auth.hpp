// auth.hpp — who may call which /api route (`--auth`, docs/security.md "Authentication").
//
// A request names its caller with "Authorization: Bearer <value>".  The value
// is either an API token (grt_<id>_<secret>, checked by the store's
// token_verify on every request: no cache, so a revoke holds at once) or,
// when it has two dots, a JWT signed with HS256 by the shared --jwt-secret
// (a UI user; their groups map to permissions through --jwt-groups).
//
// Glossary
//   principal   the caller once authenticated: a name (the token's name or
//               the JWT's sub) and a set of permissions
//   need        what a route asks for: any one of a set of permissions
//   permission  admin (everything), operator (define, start, cancel, emit and
//               every read), worker (activities and reads of instances),
//               reader (GET routes)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "asl.hpp"

namespace genroc::auth {

using json = nlohmann::json;

// The permission names, as genroc._check_permissions knows them.
const std::vector<std::string> &permission_names();
bool known_permission(const std::string &name);

struct Principal {
	std::string name;					// token name, or the JWT subject
	std::set<std::string> permissions;
};

// What a route needs: any one of `accepted`; `name` is the permission the
// 403 message names first.
struct Need {
	std::string name;
	std::vector<std::string> accepted;
};
// The needs of the routes (docs/http-api.md "HTTP API" has the table).
const Need &need_read();			// GET definitions, workers
const Need &need_read_instances();	// GET instances, one instance, its history
const Need &need_operate();			// define, start, cancel, emit
const Need &need_work();			// activity claim / succeed / fail / heartbeat
const Need &need_admin();			// the token routes
const Need &need_any();				// GET /api/whoami: any permission at all

bool allows(const Principal &who, const Need &need);
// "the \"reader\" permission (or worker, operator, admin)"
std::string describe(const Need &need);

// An authentication failure: the message says why (never the credential).
struct Refused : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// --jwt-groups: {"group": ["permission", ...]}; throws std::runtime_error
// naming the fault.
using GroupMap = std::map<std::string, std::vector<std::string>>;
GroupMap parse_groups(const std::string &json_text);

// Clock leeway for exp and nbf, in seconds (clocks of the UI and genroc differ).
inline constexpr int64_t kJwtLeewaySeconds = 30;

// A Bearer value with exactly two dots is a JWT; anything else is a token.
bool looks_like_jwt(const std::string &credential);

// Verifies an HS256 JWT against `secret` at `now_s` (seconds since the
// epoch): the header's alg must be HS256 (never "none"), the signature must
// match (constant-time compare), exp is required and must be in the future,
// nbf (when present) in the past, sub a non-empty string, groups (when
// present) an array of strings.  The principal is sub with the union of the
// groups' permissions.  Throws Refused.
Principal verify_jwt(const std::string &jwt, const std::string &secret, const GroupMap &groups, int64_t now_s);

// An HS256 JWT of header and payload (for tests and for operators trying it out).
std::string sign_jwt(const json &header, const json &payload, const std::string &secret);

std::string base64url_encode(const std::string &bytes);
// nullopt when the text is not unpadded base64url.
std::optional<std::string> base64url_decode(const std::string &text);

// One entry of a --seed-tokens file.
struct SeedToken {
	std::string name;
	std::string token;
	std::vector<std::string> permissions;
};
// {"tokens": [{"name", "token", "permissions": [...]}]}; throws
// std::runtime_error naming the file and the entry (never a token text).
std::vector<SeedToken> load_seed_tokens(const std::string &path);

}  // namespace genroc::auth
