// config.hpp — the genroc binary's settings, from flags and GENROC_* variables.
//
// Every flag has an environment variable named after it (--lease-duration ->
// GENROC_LEASE_DURATION); a flag on the command line beats the variable.  The
// one exception is the worker id: GENROC_WORKER_ID wins over --worker-id and
// over the default (host name and a suffix per store and queues, DESIGN §3), so an orchestrator that sets it per
// pod (a StatefulSet's pod name) cannot be overridden by a baked-in flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "duration.hpp"
#include "log.hpp"

namespace genroc {

struct Config {
	std::string command;					// serve | worker | api | run | token create
	std::string database = "./genroc.db";	// PostgreSQL URL / conninfo, or a SQLite path
	std::string worker_id;					// resolved: GENROC_WORKER_ID, flag, default_worker_id
	std::string host;						// this machine's host name
	Millis lease_duration{10'000};
	Millis stale_after{30'000};
	Millis shutdown_grace{15'000};
	Millis tick_interval{1'000};
	Millis poll_interval{1'000};
	Millis log_summary_interval{60'000};	// --log-summary-interval (0: at stop only)
	int concurrency = 16;
	int prefetch = 0;
	std::vector<std::string> queues;		// as given by --queue
	bool exclusive = false;					// serve only --queue (and handler queues)
	std::string region;						// serve <queue>.<region> only
	std::string handlers_file;
	std::string queues_config;				// --queues-config: queues to queue_set at start
	std::string listen = "127.0.0.1:8448";
	std::string metrics_listen;				// --metrics-listen: /healthz and /metrics alone (docs/operations.md "Metrics")
	Millis metrics_cache{5'000};			// --metrics-cache: /metrics reads the database at most once in this
	log::Mode log_mode = log::Mode::text;
	log::Level log_level = log::Level::info;
	bool manual_tick = false;
	bool pooled = false;					// --pooled: the PostgreSQL session is not this process's own
	std::string durability = "essential";	// none | essential | terminal | strict
	int pg_commit_delay = -1;				// microseconds; -1: leave the server's setting
	// the instance log and retention (docs/operations.md "Logs and retention")
	bool log_payloads = true;				// false: the log records no payloads
	int64_t log_payload_max = 1 << 20;		// bytes; a longer payload is logged as a marker; 0 = no limit
	Millis log_retention{7LL * 86'400'000};	// tick deletes older log rows; 0 = keep
	int64_t object_threshold = 8192;		// bytes; a larger value is stored once and referenced
	Millis object_grace{3600 * 1000};		// an unused stored value is collected this long after
	Millis instance_retention{0};			// tick deletes concluded trees ended longer ago; 0 = keep

	// --auth and its companions (serve, api; docs/security.md "Authentication")
	bool auth = false;
	std::string seed_tokens;				// --seed-tokens FILE
	std::string jwt_secret;					// --jwt-secret: never logged
	std::string jwt_groups;					// --jwt-groups: JSON group -> [permissions]
	// The Step Functions endpoint (serve, api; sfn_api.hpp, sigv4.hpp)
	std::string sigv4_key_file;				// --sigv4-key-file: the server key of SigV4 key pairs
	std::string sfn_region = "us-east-1";	// --sfn-region: ARNs and the SigV4 scope
	std::string sfn_account = "000000000000";	// --sfn-account: ARNs
	int sfn_sync_timeout_s = 60;			// --sfn-sync-timeout: StartSyncExecution's bound
	// the HTTP server's limits (serve, api; docs/http-api.md "HTTP server limits")
	int http_max_connections = 256;			// connections at once; more get 503
	Millis http_request_timeout{30'000};	// a request's headers and body arrive within this
	int http_max_connections_per_client = 32;	 // from one client address at once; more get 503
	int64_t http_max_response = 32 << 20;	// a list answer's bytes; more: 400 / 54000
	int http_healthz_reserve = 8;			// connections over the cap read for GET /healthz alone
	int http_max_answers = 4;				// GET /api answers made at once; more wait
	std::vector<std::string> http_allowed_hosts;	// Host names served besides addresses and localhost

	// genroc token create
	std::string token_name;
	std::vector<std::string> token_permissions;
	bool token_json = false;
	bool token_sigv4 = false;				// token create --sigv4: a key pair for the Step Functions API

	// genroc run
	std::string run_file;
	std::string run_input = "{}";
	std::string run_name;
	bool run_json = false;
};

// The queues the worker claims from: "default" (unless --exclusive), then the
// --queue ones, then the handlers' own queues; with a region each becomes
// <queue>.<region>.  Sorted, unique.
std::vector<std::string> worker_queues(const Config &config,
									   const std::vector<std::string> &handler_queues);

// The machine's host name ("localhost" if it has none).
std::string host_name();

// The worker id when neither GENROC_WORKER_ID nor --worker-id gives one:
// the host name, "-", and 8 hex digits of the sha256 of what makes this
// worker a service of its own on the host: the store (`store`, as
// store_identity() names it), the command (worker, serve), --region,
// --exclusive and the --queue set (sorted, unique).  The same command line
// gives the same id at every restart, so a restart takes its work back at
// once; two workers of one host on different stores, or serving different
// queues, get different ids.  What the database decides (tenant queues,
// handler queues, the handlers file) is left out: it changes without the
// worker becoming another one.
std::string default_worker_id(const Config &config, const std::string &store);

}  // namespace genroc
