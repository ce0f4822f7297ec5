// http_api.hpp — the genroc binary's HTTP server: GET /healthz and the /api routes.
//
// The server is a thin layer over Store: each /api route is one Store call
// (one genroc.* SQL function), with JSON in and JSON out.  It never writes
// anything the SQL API does not write.
//
// Routes (JSON bodies; lists come wrapped in an object so fields can be added):
//   GET  /healthz                          {"status","worker_id","database","lease_age_ms","manual_tick",
//                                          "ticking"}; 503 with status "unavailable" only when the
//                                          database does not answer; no token, outside /api
//   GET  /metrics                          Prometheus text format (metrics.hpp); with auth a
//                                          credential with reader, operator or admin
//   POST /api/definitions                  {name, definition} -> {name, version, is_new}
//                                          201 when a new version was stored, else 200
//   GET  /api/definitions                  -> {"definitions": [...]}
//   POST /api/instances                    {definition, input?, options?} -> {instance_id, is_new, status}
//                                          201 when new, 200 for an idempotent repeat
//   GET  /api/definitions/{name}?version=  -> {name, version, definition, created_at}
//   GET  /api/instances?status=&definition=&label=k:v&root=&before=&created_after=&created_before=&limit=
//                                          -> {"instances": [...]}, newest first; label may
//                                          repeat; before=ID: the next page (keyset)
//   GET  /api/instances/{id}               -> the instance (genroc.get_instance)
//   GET  /api/instances/{id}/history       -> {"instance_id", "history": [...]}
//   POST /api/instances/{id}/cancel        -> {instance_id, status}
//   POST /api/activities/{name}/claim      {worker, n?} -> {"tasks": [{token, instance_id, activity,
//                                          input, heartbeat_s, timeout_s}]}
//   POST /api/activities/succeed           {token, output?} -> {status}
//   POST /api/activities/fail              {token, error, cause?} -> {status}
//   POST /api/activities/heartbeat         {token} -> {"ok": true}
//   GET  /api/workers                      -> {"workers": [...]}
//   GET  /api/queues                       -> {"queues": [...]}
//   GET  /api/whoami                       -> {auth, name, permissions}: who the caller is
//   GET  /ui, /ui/NAME                     the web console's files (ui_assets.hpp), no token
//   POST /api/tokens                       {name, permissions} -> the token with its text (201)
//   GET  /api/tokens                       -> {"tokens": [...]}
//   DELETE /api/tokens/{id}, POST /api/tokens/{id}/revoke  -> {id, status: "revoked"}
//   POST /api/tokens {name, permissions, sigv4: true} -> also {access_key_id, secret_access_key}
//                                          (needs --sigv4-key-file; sigv4.hpp)
//   POST /                                 the Step Functions API (AWS JSON 1.0, SigV4 with --auth;
//                                          sfn_api.hpp): X-Amz-Target AWSStepFunctions.<Action>
//
// With ApiOptions::auth every /api route needs "Authorization: Bearer <token
// or JWT>" and the permission auth.hpp names for it (docs/http-api.md "HTTP API"):
// none or a bad one is 401 (28000, WWW-Authenticate: Bearer), too little is
// 403 (42501).  The token routes answer only with auth on.
//
// Errors: {"error": {"sqlstate", "message"[, "detail", "hint"]}}.  A 500 or 503
// carries the SQLSTATE and a fixed message only; the server logs the detail.  The HTTP status
// follows the SQLSTATE (http_status_for): RC001 and class 22 -> 400, 28000 ->
// 401, 42501 -> 403, RC002, RC003 and 42704 -> 404, RC004 to RC008 and 23505
// -> 409, class 08, 53 and 57P0x -> 503, class 54 (a limit) -> 400, anything
// else 500.  Problems the server sees before any Store call have SQLSTATEs of their
// own: 22P02 malformed JSON, 22023 a wrong or unknown field, 22004 a missing
// one, 54000 a body over max_body (413) or nested deeper than kMaxJsonDepth
// (400), 22003 a number beyond a double (400), 22023 a Content-Type other
// than application/json, or a body without one (415), 408 a request that did
// not arrive within request_timeout_ms, 42883 no such route (404), 53300 over
// max_connections or max_connections_per_client, or too many answers being
// made (503), 54000 a list answer over max_response (400), 08P01 two
// Content-Length or Transfer-Encoding headers, both, or a coding other than
// chunked (400), 42501 a Host this server does not answer to (421) or a POST
// whose Origin is another server's (403).  A POST without Content-Length or
// chunked encoding has no body; auth is checked before a body is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "auth.hpp"
#include "sfn_api.hpp"
#include "store.hpp"

namespace genroc {

struct ApiOptions {
	std::string listen = "127.0.0.1:8448";	// host:port; port 0 picks a free one
	size_t max_body = 1 << 20;				// request bodies over this answer 413
	// What a client may hold (docs/http-api.md "HTTP server limits").  Each connection
	// has a thread of its own, so slow clients never queue /healthz behind
	// them; the cap bounds those threads.
	int max_connections = 256;				// more at once: 503 / 53300 and closed (but GET /healthz)
	int max_connections_per_client = 32;	// from one client address at once; more: 503 / 53300 at once
	int healthz_reserve = 8;				// connections over max_connections read for GET /healthz alone
	size_t max_response = 32u << 20;		// a list answer's bytes; more: 400 / 54000 naming the cause
	int max_list_answers = 4;				// GET /api answers built at once; more wait their turn
	// --allowed-hosts: Host header names accepted besides an IP address,
	// localhost and the --listen host; "*.example.com" a domain, "*" any.
	std::vector<std::string> allowed_hosts;
	bool allowed_hosts_any() const {
		for (const auto &h : allowed_hosts)
			if (h == "*") return true;
		return false;
	}
	int64_t request_timeout_ms = 30'000;	// a request's headers and body must arrive within this
	int64_t read_timeout_ms = 5'000;		// silence within a request, or before the first one
	int64_t write_timeout_ms = 5'000;		// a client that does not read its answer
	int64_t keep_alive_timeout_ms = 2'000;	// an idle connection between requests
	size_t max_header_bytes = 32 * 1024;	// the request line and headers together
	bool auth = false;						// --auth: a Bearer token or JWT on every /api route
	std::string jwt_secret;					// --jwt-secret; empty: JWTs are refused
	auth::GroupMap jwt_groups;				// --jwt-groups: group -> permissions
	// --metrics-listen: only GET /healthz and GET /metrics, without auth,
	// and /metrics leaves out the series labelled with definition names.
	bool metrics_only = false;
	// --metrics-cache: GET /metrics reads the database at most once in this
	// time and serves the answer to every scrape meanwhile; 0: every scrape
	// reads it.
	int64_t metrics_cache_ms = 5'000;
	// The Step Functions endpoint (POST /, sfn_api.hpp): ARNs' region and
	// account, StartSyncExecution's bound.  With auth, a request is accepted
	// when its SigV4 signature verifies with a key pair made from
	// sigv4_key (--sigv4-key-file; empty: every signed request is refused).
	sfn::Options sfn;
	std::string sigv4_key;
};

struct HealthInfo {
	std::string worker_id;
	bool manual_tick = false;
	// Time since this process last renewed its leases; -1 (or no function)
	// when it runs no worker, which /healthz reports as null.
	std::function<int64_t()> lease_age_ms;
};

class ApiServer {
  public:
	virtual ~ApiServer() = default;
	// Stops accepting, waits for the listener thread; safe to call twice.
	virtual void stop() = 0;
	// The port actually bound (useful with port 0).
	virtual int port() const = 0;
};

// Binds ApiOptions::listen and serves on a background thread until stop() or
// destruction.  Each request borrows a Store from a small pool filled by
// open_store (a Store is one connection and not thread-safe).  Throws
// std::runtime_error when the address does not parse or cannot be bound.
std::unique_ptr<ApiServer> start_api(const ApiOptions &options,
									 std::function<std::unique_ptr<Store>()> open_store,
									 HealthInfo health);

// The request path without a socket: bytes in as a client sends them (one or
// more requests on one connection), the server's bytes out.  The same code
// as a connection (httplib's parser, auth, the routes) with no timeouts; for
// the fuzz target (test/fuzz/http_fuzz.cpp) and tests.
class ApiHandler {
  public:
	virtual ~ApiHandler() = default;
	virtual std::string serve_bytes(const std::string &request) = 0;
};
std::unique_ptr<ApiHandler> make_api_handler(const ApiOptions &options,
											 std::function<std::unique_ptr<Store>()> open_store,
											 HealthInfo health);

// The HTTP status for a SQLSTATE (see the table above).
int http_status_for(const std::string &sqlstate);

// Splits "host:port", "[v6]:port" or ":port" (all interfaces); throws
// std::runtime_error naming the text when it is not one of those.
void parse_listen(const std::string &listen, std::string &host, int &port);

}  // namespace genroc
