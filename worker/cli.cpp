// cli.cpp — flags, environment variables and the commands (see cli.hpp).
#include "cli.hpp"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>
#include <tuple>

#include "auth.hpp"
#include "handlers.hpp"
#include "queues_config.hpp"
#include "http_api.hpp"
#include "log.hpp"
#include "run_cmd.hpp"
#include "runner.hpp"
#include "sigv4.hpp"
#include "size.hpp"
#include "stop.hpp"
#include "store.hpp"

namespace genroc {

namespace {

// Duration flags are read as text, then parsed, so that the error names the
// flag and shows the accepted forms.
struct DurationFlag {
	const char *flag;
	const char *env;
	std::string text;
	Millis *target;
	bool allow_zero;
	const char *help;
};

int usage_error(const std::string &message) {
	std::fprintf(stderr, "genroc: %s\n", message.c_str());
	return kExitUsage;
}

}  // namespace

int parse_command_line(int argc, const char *const *argv, Config &cfg) {
	CLI::App app{"genroc — a durable process engine in PostgreSQL (or SQLite)", "genroc"};
	app.require_subcommand(1);
	app.set_help_all_flag("--help-all", "help for every command");

	std::vector<DurationFlag> durations = {
		{"--lease-duration", "GENROC_LEASE_DURATION", "10s", &cfg.lease_duration, false,
		 "lease of each running task (renewed every third of it)"},
		{"--stale-after", "GENROC_STALE_AFTER", "30s", &cfg.stale_after, true,
		 "a holder of this worker id silent for longer is dead; wait this long for it"},
		{"--shutdown-grace", "GENROC_SHUTDOWN_GRACE", "15s", &cfg.shutdown_grace, true,
		 "on SIGTERM/SIGINT, time for running tasks to finish before their leases are released"},
		{"--tick-interval", "GENROC_TICK_INTERVAL", "1s", &cfg.tick_interval, false,
		 "how often to run genroc.tick() (timers, lapsed leases, timeouts)"},
		{"--poll-interval", "GENROC_POLL_INTERVAL", "1s", &cfg.poll_interval, false,
		 "claim at least this often even without a notification"},
		{"--log-summary-interval", "GENROC_LOG_SUMMARY_INTERVAL", "1m", &cfg.log_summary_interval, true,
		 "how often the tasks done are summed up in one info line (each task's line is at debug); 0 = only at stop"},
	};
	std::string worker_id_flag, log_mode = "text", log_level;
	std::string log_payload_max = "1MB", log_retention = "7d", instance_retention = "0";
	std::string object_threshold = "8KB", object_grace = "1h";
	std::string http_max_connections = "256", http_request_timeout = "30s";
	std::string metrics_cache = "5s";
	std::string http_max_per_client = "32", http_max_response = "32MB", http_allowed_hosts;
	std::string http_healthz_reserve = "8", http_max_answers = "4";

	auto common = [&](CLI::App *sub) {
		sub->add_option("--database", cfg.database,
						"PostgreSQL URL (postgresql://...) or conninfo, or a SQLite file path")
			->envname("GENROC_DATABASE")
			->capture_default_str();
		sub->add_option("--handlers", cfg.handlers_file,
						"handlers file (JSON): handler name -> command, sha256, timeout, queue")
			->envname("GENROC_HANDLERS");
		sub->add_option("--log-mode", log_mode, "text, or json: one JSON object per line (UTC)")
			->envname("GENROC_LOG_MODE")
			->check(CLI::IsMember({"text", "json"}))
			->capture_default_str();
		sub->add_option("--log-level", log_level, "debug, info, warn or error")
			->envname("GENROC_LOG_LEVEL")
			->check(CLI::IsMember({"debug", "info", "warn", "error"}));
		sub->add_option("--durability", cfg.durability,
						"commits flushed to disk before they are confirmed: none, essential (work from "
						"outside and OnlyOnce claims), terminal (also instance ends), strict (every commit)")
			->envname("GENROC_DURABILITY")
			->check(CLI::IsMember({"none", "essential", "terminal", "strict"}))
			->capture_default_str();
		sub->add_option("--pg-commit-delay", cfg.pg_commit_delay,
						"PostgreSQL commit_delay in microseconds (0-100000) for genroc's sessions; needs a "
						"superuser or GRANT SET ON PARAMETER commit_delay, else genroc refuses to start")
			->envname("GENROC_PG_COMMIT_DELAY")
			->check(CLI::Range(0, 100000));
		sub->add_flag("--log-payloads", cfg.log_payloads,
					  "record task inputs and outputs, results and event payloads in the instance log "
					  "(--log-payloads=false leaves them out)")
			->envname("GENROC_LOG_PAYLOADS")
			->capture_default_str();
		sub->add_option("--log-payload-max", log_payload_max,
						"longest payload (its JSON text) the instance log records whole; a longer one is "
						"logged as a marker with its size and first characters (size: 1MB, 64KB, 512; 0 = no limit)")
			->envname("GENROC_LOG_PAYLOAD_MAX")
			->capture_default_str();
		sub->add_option("--log-retention", log_retention,
						"tick deletes instance log entries older than this (duration; 0 = keep forever)")
			->envname("GENROC_LOG_RETENTION")
			->capture_default_str();
		sub->add_option("--instance-retention", instance_retention,
						"tick deletes concluded instances, with their children and logs, this long after "
						"they ended (duration, e.g. 720h; 0 = keep forever)")
			->envname("GENROC_INSTANCE_RETENTION")
			->capture_default_str();
		sub->add_option("--object-threshold", object_threshold,
						"a value larger than this (an input, a state's or task's input, an output, a logged "
						"payload) is stored once and referenced (size, at least 64; docs/operations.md \"Large values\")")
			->envname("GENROC_OBJECT_THRESHOLD")
			->capture_default_str();
		sub->add_option("--object-grace", object_grace,
						"a stored value no instance or log entry uses any more stays readable this long "
						"(GET /api/objects/{ref}) before tick collects it (duration, 0 = at once)")
			->envname("GENROC_OBJECT_GRACE")
			->capture_default_str();
		sub->add_flag("--pooled", cfg.pooled,
					  "PostgreSQL is reached through a transaction pooler (pgbouncer pool_mode=transaction): "
					  "no prepared statement is kept, work is polled instead of LISTEN, and a worker's "
					  "restart by id waits --stale-after (its session cannot prove the old process dead); "
					  "without it a pooler is detected at start (settings go with each transaction either way)")
			->envname("GENROC_POOLED");
	};
	auto worker_flags = [&](CLI::App *sub) {
		sub->add_option("--worker-id", worker_id_flag,
						"this worker's stable, unique id (default: the host name and a suffix per store and --queue/--region/--exclusive; GENROC_WORKER_ID wins)");
		for (auto &d : durations)
			sub->add_option(d.flag, d.text, std::string(d.help) + " (duration: 10s, 500ms, 1h30m)")
				->envname(d.env)
				->capture_default_str();
		sub->add_option("--concurrency", cfg.concurrency, "tasks this worker runs at once")
			->envname("GENROC_CONCURRENCY")
			->check(CLI::Range(1, 100000))
			->capture_default_str();
		sub->add_option("--prefetch", cfg.prefetch,
						"tasks claimed beyond the free slots, held leased until a slot frees (0: none)")
			->envname("GENROC_PREFETCH")
			->check(CLI::Range(0, 10000))
			->capture_default_str();
		sub->add_option("--queue", cfg.queues, "a queue to serve besides default (repeatable)")
			->envname("GENROC_QUEUE")
			->delimiter(',');
		sub->add_flag("--exclusive", cfg.exclusive, "serve only the --queue queues (and the handlers')")
			->envname("GENROC_EXCLUSIVE");
		sub->add_option("--queues-config", cfg.queues_config,
						"queues file (JSON) written with queue_set at start (docs/sql-api.md \"Queues and routing\")")
			->envname("GENROC_QUEUES_CONFIG");
		sub->add_option("--region", cfg.region, "serve <queue>.<region> instead of each queue")
			->envname("GENROC_REGION");
		sub->add_flag("--manual-tick", cfg.manual_tick,
					  "never call genroc.tick() (tests and operators drive time-driven work)")
			->envname("GENROC_MANUAL_TICK");
	};
	auto listen_flag = [&](CLI::App *sub) {
		sub->add_option("--listen", cfg.listen, "HTTP address host:port")
			->envname("GENROC_LISTEN")
			->capture_default_str();
		sub->add_flag("--auth", cfg.auth, "every /api route needs Authorization: Bearer <token or JWT>")
			->envname("GENROC_AUTH");
		sub->add_option("--seed-tokens", cfg.seed_tokens,
						"tokens file (JSON) created at start when absent: {\"tokens\":[{name, token, permissions}]}")
			->envname("GENROC_SEED_TOKENS");
		sub->add_option("--jwt-secret", cfg.jwt_secret, "shared HS256 secret of the UI's JWTs (32 bytes or more)")
			->envname("GENROC_JWT_SECRET");
		sub->add_option("--jwt-groups", cfg.jwt_groups,
						"JWT groups -> permissions (JSON), e.g. {\"ops\":[\"admin\"],\"dev\":[\"operator\"]}")
			->envname("GENROC_JWT_GROUPS");
		sub->add_option("--sigv4-key-file", cfg.sigv4_key_file,
						"server key (a file of 32 bytes or more, e.g. openssl rand -hex 32) of the SigV4 key pairs the "
						"Step Functions endpoint (POST /) accepts with --auth")
			->envname("GENROC_SIGV4_KEY_FILE");
		sub->add_option("--sfn-region", cfg.sfn_region, "region of the Step Functions endpoint's ARNs and SigV4 scope")
			->envname("GENROC_SFN_REGION")
			->capture_default_str();
		sub->add_option("--sfn-account", cfg.sfn_account, "account id in the Step Functions endpoint's ARNs (12 digits)")
			->envname("GENROC_SFN_ACCOUNT")
			->capture_default_str();
		sub->add_option("--sfn-sync-timeout", cfg.sfn_sync_timeout_s,
						"seconds StartSyncExecution waits for the execution's end; then it is stopped (TIMED_OUT)")
			->envname("GENROC_SFN_SYNC_TIMEOUT")
			->check(CLI::Range(1, 300))
			->capture_default_str();
		sub->add_option("--http-max-connections", http_max_connections,
						"HTTP connections served at once (a thread each); more get 503 at once")
			->envname("GENROC_HTTP_MAX_CONNECTIONS")
			->capture_default_str();
		sub->add_option("--http-request-timeout", http_request_timeout,
						"a request's headers and body must arrive within this, else 408 and the connection "
						"closes (duration)")
			->envname("GENROC_HTTP_REQUEST_TIMEOUT")
			->capture_default_str();
		sub->add_option("--http-max-connections-per-client", http_max_per_client,
						"HTTP connections from one client address at once; more get 503 at once (a proxy in "
						"front counts as one client)")
			->envname("GENROC_HTTP_MAX_CONNECTIONS_PER_CLIENT")
			->capture_default_str();
		sub->add_option("--http-max-response", http_max_response,
						"bytes of one list answer (instances, history, definitions, ...); a longer one is refused "
						"with 400 / 54000 (size, e.g. 32MB)")
			->envname("GENROC_HTTP_MAX_RESPONSE")
			->capture_default_str();
		sub->add_option("--http-healthz-reserve", http_healthz_reserve,
						"connections over --http-max-connections still read (2 s) for GET /healthz alone; "
						"0 = none")
			->envname("GENROC_HTTP_HEALTHZ_RESERVE")
			->capture_default_str();
		sub->add_option("--http-max-answers", http_max_answers,
						"GET /api answers made at once (each up to --http-max-response); more wait their turn, "
						"then 503")
			->envname("GENROC_HTTP_MAX_ANSWERS")
			->capture_default_str();
		sub->add_option("--http-allowed-hosts", http_allowed_hosts,
						"Host header names served besides IP addresses, localhost and the --listen host: "
						"name,*.domain,... or * for any (behind a proxy)")
			->envname("GENROC_HTTP_ALLOWED_HOSTS");
	};

	auto metrics_flag = [&](CLI::App *sub) {
		sub->add_option("--metrics-listen", cfg.metrics_listen,
						"host:port serving GET /metrics and /healthz only, without auth and without the "
						"per-definition series (docs/operations.md \"Metrics\")")
			->envname("GENROC_METRICS_LISTEN");
		sub->add_option("--metrics-cache", metrics_cache,
						"GET /metrics reads the database's figures at most once in this time and serves that "
						"answer to every scrape meanwhile; 0: at every scrape (duration, up to 1m)")
			->envname("GENROC_METRICS_CACHE")
			->capture_default_str();
	};
	auto *serve = app.add_subcommand("serve", "HTTP API and worker in one process");
	common(serve);
	worker_flags(serve);
	listen_flag(serve);
	metrics_flag(serve);
	auto *worker = app.add_subcommand("worker", "run tasks (no HTTP but --metrics-listen)");
	common(worker);
	worker_flags(worker);
	metrics_flag(worker);
	auto *api = app.add_subcommand("api", "HTTP API only (no tasks)");
	common(api);
	listen_flag(api);
	metrics_flag(api);
	auto *run = app.add_subcommand("run", "start one instance of a definition file and run it to its end here");
	common(run);
	run->add_option("file", cfg.run_file, "definition file (ASL JSON)")->required();
	run->add_option("--input", cfg.run_input, "the instance input: JSON, @FILE (its content) or - (standard input)")->capture_default_str();
	run->add_option("--name", cfg.run_name, "definition name (default: the file name without extension)");
	run->add_flag("--json", cfg.run_json, "last stdout line: {\"status\",\"output\",\"error\",\"cause\"}");
	auto *token = app.add_subcommand("token", "API tokens (genctl token list / revoke for the rest)");
	token->require_subcommand(1, 1);
	auto *token_create = token->add_subcommand("create", "mint a token on --database; its text is printed once");
	token_create->add_option("--database", cfg.database, "PostgreSQL URL or conninfo, or a SQLite file path")
		->envname("GENROC_DATABASE")
		->capture_default_str();
	token_create->add_option("--name", cfg.token_name, "who or what the token is for")->required();
	token_create->add_option("--permissions", cfg.token_permissions, "admin, operator, worker, reader (comma-separated)")
		->required()
		->delimiter(',');
	token_create->add_flag("--json", cfg.token_json, "print the created token as JSON");
	token_create->add_flag("--sigv4", cfg.token_sigv4,
						   "make an AWS key pair (access key id and secret) for the Step Functions endpoint instead "
						   "of a Bearer text; needs --sigv4-key-file, the server's");
	token_create->add_option("--sigv4-key-file", cfg.sigv4_key_file, "the server key file genroc serve/api use")
		->envname("GENROC_SIGV4_KEY_FILE");

	// A repeated single-value flag takes its last value, so a wrapper script
	// can append an override to a fixed command line.
	for (auto *sub : {serve, worker, api, run, token_create})
		for (auto *opt : sub->get_options())
			if (opt->get_type_size() == 1 && opt->get_name() != "--queue" && opt->get_name() != "--permissions")
				opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForAllHelp &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		app.exit(e);
		return kExitUsage;
	}
	for (auto *sub : {serve, worker, api, run})
		if (sub->parsed()) cfg.command = sub->get_name();
	if (token_create->parsed()) cfg.command = "token create";

	cfg.log_mode = log_mode == "json" ? log::Mode::json : log::Mode::text;
	// `run` talks to a person: worker chatter only when something is wrong.
	cfg.log_level = cfg.command == "run" ? log::Level::warn : log::Level::info;
	if (log_level == "debug") cfg.log_level = log::Level::debug;
	else if (log_level == "info") cfg.log_level = log::Level::info;
	else if (log_level == "warn") cfg.log_level = log::Level::warn;
	else if (log_level == "error") cfg.log_level = log::Level::error;

	if (cfg.command == "serve" || cfg.command == "worker") {
		for (auto &d : durations) {
			auto v = parse_duration(d.text);
			if (!v)
				return usage_error(std::string(d.flag) + ": invalid duration \"" + d.text +
								   "\" (use e.g. 10s, 500ms, 720h, 1h30m)");
			if (v->count() == 0 && !d.allow_zero)
				return usage_error(std::string(d.flag) + ": must be more than 0");
			*d.target = *v;
		}
		cfg.host = host_name();
		const char *env_id = std::getenv("GENROC_WORKER_ID");
		if (env_id && *env_id) cfg.worker_id = env_id;
		else if (!worker_id_flag.empty()) cfg.worker_id = worker_id_flag;
		else cfg.worker_id = default_worker_id(cfg, store_identity(cfg.database));
		if (cfg.exclusive && cfg.queues.empty())
			return usage_error("--exclusive: give at least one --queue to serve");
		for (auto &q : cfg.queues)
			if (q.empty()) return usage_error("--queue: a queue name must not be empty");
	}
	{
		auto size = parse_size(log_payload_max);
		if (!size)
			return usage_error("--log-payload-max: invalid size \"" + log_payload_max +
							   "\" (use e.g. 1MB, 64KB, 512 for bytes; 0 = no limit)");
		if (*size > INT_MAX)
			return usage_error("--log-payload-max: must be at most " + std::to_string(INT_MAX) + " bytes, not " +
							   log_payload_max);
		cfg.log_payload_max = *size;
		// PostgreSQL keeps the retentions in whole seconds (genroc.log_retention).
		for (auto [flag, text, target] : {std::tuple{"--log-retention", &log_retention, &cfg.log_retention},
										  std::tuple{"--instance-retention", &instance_retention,
													 &cfg.instance_retention}}) {
			auto v = parse_duration(*text);
			if (!v)
				return usage_error(std::string(flag) + ": invalid duration \"" + *text +
								   "\" (use e.g. 7d, 720h, 90m; 0 = keep forever)");
			if (v->count() != 0 && v->count() < 1000)
				return usage_error(std::string(flag) + ": must be 0 (keep forever) or at least 1s, not " + *text);
			if (v->count() / 1000 > INT_MAX)
				return usage_error(std::string(flag) + ": must be at most " + std::to_string(INT_MAX) +
								   " seconds, not " + *text);
			*target = *v;
		}
		auto threshold = parse_size(object_threshold);
		if (!threshold || *threshold < 64 || *threshold > INT_MAX)
			return usage_error("--object-threshold: invalid size \"" + object_threshold +
							   "\" (use e.g. 8KB, 64KB, 1MB; at least 64 bytes)");
		cfg.object_threshold = *threshold;
		auto grace = parse_duration(object_grace);
		if (!grace || grace->count() / 1000 > INT_MAX)
			return usage_error("--object-grace: invalid duration \"" + object_grace + "\" (use e.g. 1h, 30m, 0)");
		cfg.object_grace = *grace;
	}
	if (cfg.command == "serve" || cfg.command == "api") {
		try {
			std::string h;
			int p = 0;
			parse_listen(cfg.listen, h, p);
		} catch (const std::exception &e) {
			return usage_error(std::string("--listen: ") + e.what());
		}
	}
	if (!cfg.metrics_listen.empty()) {
		try {
			std::string h;
			int p = 0;
			parse_listen(cfg.metrics_listen, h, p);
		} catch (const std::exception &e) {
			return usage_error(std::string("--metrics-listen: ") + e.what());
		}
	}
	if (cfg.command == "serve" || cfg.command == "api" || cfg.command == "worker") {
		auto t = parse_duration(metrics_cache);
		if (!t || t->count() < 0 || t->count() > 60'000)
			return usage_error("--metrics-cache: must be a duration from 0 to 1m (e.g. 5s), not \"" + metrics_cache +
							   "\"");
		cfg.metrics_cache = *t;
	}
	if (cfg.command == "serve" || cfg.command == "api") {
		char *end = nullptr;
		errno = 0;
		long n = std::strtol(http_max_connections.c_str(), &end, 10);
		if (http_max_connections.empty() || *end != '\0' || errno != 0 || n < 1 || n > 100000)
			return usage_error("--http-max-connections: must be a whole number from 1 to 100000, not \"" +
							   http_max_connections + "\"");
		cfg.http_max_connections = static_cast<int>(n);
		auto t = parse_duration(http_request_timeout);
		if (!t || t->count() < 100 || t->count() > 3'600'000)
			return usage_error("--http-request-timeout: must be a duration from 100ms to 1h (e.g. 30s), not \"" +
							   http_request_timeout + "\"");
		cfg.http_request_timeout = *t;
		errno = 0;
		n = std::strtol(http_max_per_client.c_str(), &end, 10);
		if (http_max_per_client.empty() || *end != '\0' || errno != 0 || n < 1 || n > 100000)
			return usage_error("--http-max-connections-per-client: must be a whole number from 1 to 100000, not \"" +
							   http_max_per_client + "\"");
		cfg.http_max_connections_per_client = static_cast<int>(n);
		auto whole = [](const std::string &text, long lo, long hi) -> std::optional<int> {
			char *e = nullptr;
			errno = 0;
			long v = std::strtol(text.c_str(), &e, 10);
			if (text.empty() || *e != '\0' || errno != 0 || v < lo || v > hi) return std::nullopt;
			return static_cast<int>(v);
		};
		auto reserve = whole(http_healthz_reserve, 0, 1000);
		if (!reserve)
			return usage_error("--http-healthz-reserve: must be a whole number from 0 to 1000, not \"" +
							   http_healthz_reserve + "\"");
		cfg.http_healthz_reserve = *reserve;
		auto answers = whole(http_max_answers, 1, 1000);
		if (!answers)
			return usage_error("--http-max-answers: must be a whole number from 1 to 1000, not \"" + http_max_answers +
							   "\"");
		cfg.http_max_answers = *answers;
		auto size = parse_size(http_max_response);
		if (!size || *size < (64 << 10) || *size > (int64_t{1} << 32))
			return usage_error("--http-max-response: must be a size from 64KB to 4GB (e.g. 32MB), not \"" +
							   http_max_response + "\"");
		cfg.http_max_response = *size;
		cfg.http_allowed_hosts.clear();
		for (size_t at = 0; at < http_allowed_hosts.size();) {
			size_t comma = http_allowed_hosts.find(',', at);
			if (comma == std::string::npos) comma = http_allowed_hosts.size();
			std::string h = http_allowed_hosts.substr(at, comma - at);
			at = comma + 1;
			while (!h.empty() && h.front() == ' ') h.erase(0, 1);
			while (!h.empty() && h.back() == ' ') h.pop_back();
			const std::string name = h.rfind("*.", 0) == 0 ? h.substr(2) : h;
			const bool ok = h == "*" || (!name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
				return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_' || ch == ':';
			}));
			if (!ok)
				return usage_error("--http-allowed-hosts: \"" + h +
								   "\" is not a host name, *.domain or * (a comma-separated list)");
			cfg.http_allowed_hosts.push_back(h);
		}
	}
	if (cfg.command == "serve" || cfg.command == "api") {
		if (!cfg.jwt_secret.empty() && !cfg.auth) return usage_error("--jwt-secret: needs --auth");
		if (!cfg.sigv4_key_file.empty()) {
			try {
				sigv4::load_server_key(cfg.sigv4_key_file);
			} catch (const std::exception &e) {
				return usage_error(e.what());
			}
		}
		if (cfg.sfn_account.size() != 12 || !std::all_of(cfg.sfn_account.begin(), cfg.sfn_account.end(), ::isdigit))
			return usage_error("--sfn-account: must be 12 digits");
		if (cfg.sfn_region.empty() || cfg.sfn_region.size() > 40 ||
			!std::all_of(cfg.sfn_region.begin(), cfg.sfn_region.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'; }))
			return usage_error("--sfn-region: must be a region name such as us-east-1");
		if (!cfg.jwt_secret.empty() && cfg.jwt_secret.size() < 32)
			return usage_error("--jwt-secret: must be at least 32 bytes (HS256 wants a key as long as its hash)");
		if (!cfg.jwt_groups.empty()) {
			if (cfg.jwt_secret.empty()) return usage_error("--jwt-groups: needs --jwt-secret");
			try {
				auth::parse_groups(cfg.jwt_groups);
			} catch (const std::exception &e) {
				return usage_error(e.what());
			}
		}
	}
	if (cfg.command == "token create") {
		for (auto &p : cfg.token_permissions)
			if (!auth::known_permission(p))
				return usage_error("--permissions: unknown permission \"" + p + "\" (admin, operator, worker, reader)");
		if (cfg.token_name.empty()) return usage_error("--name: must not be empty");
		if (cfg.token_sigv4) {
			if (cfg.sigv4_key_file.empty()) return usage_error("--sigv4: needs --sigv4-key-file");
			try {
				sigv4::load_server_key(cfg.sigv4_key_file);
			} catch (const std::exception &e) {
				return usage_error(e.what());
			}
		}
	}
	if (cfg.database.empty()) return usage_error("--database: must not be empty");
	return -1;
}

namespace {

StopFlag g_stop;	// the signal thread outlives main's locals
// A second stop signal this soon after the first is the same request (a
// supervisor signalling the process and its group), not "exit now".
constexpr int64_t kSameSignalMs = 1000;

}  // namespace

namespace {

// The log fields of an error that stops genroc: its hint says what to do
// (RC020's: which side to upgrade).
json refusal_fields(const Error &e) {
	json f = {{"sqlstate", e.sqlstate}, {"error", e.what()}};
	if (!e.detail.empty()) f["detail"] = e.detail;
	if (!e.hint.empty()) f["hint"] = e.hint;
	return f;
}

// A worker (`worker`, `serve`) started while its database does not answer
// (connection refused, the server starting or shutting down: is_transient)
// waits for it: `attempt` runs again after the runner's back-off (capped at
// 5 s, jittered, so workers that lost one database do not come back in
// step), the wait logged once, until it gets past the unreachable database
// (true; any other error is thrown to the caller) or a stop signal comes
// (false: the worker exits 0, having started nothing).
template <class F>
bool until_reachable(const char *waiting_for, F &&attempt) {
	Backoff backoff(Millis(5'000));
	for (bool waited = false;;) {
		try {
			attempt();
			if (waited) log::info("database reachable; starting");
			return true;
		} catch (const Error &e) {
			if (!is_transient(e)) throw;
			if (!waited)
				log::warn("waiting for the database",
						  {{"for", waiting_for}, {"sqlstate", e.sqlstate}, {"error", e.what()}});
			waited = true;
			if (g_stop.wait_for(backoff.next())) return false;
		}
	}
}

// Whether the command waits for its database at start (until_reachable):
// a worker does; `api` starts at once and answers 503 until the database
// is back, `run` and the other commands report the error.
bool waits_for_database(const Config &cfg) { return cfg.command == "worker" || cfg.command == "serve"; }

// Opens one store before anything starts, so a setting the database refuses
// (--pg-commit-delay without the privilege, on SQLite at all) stops genroc
// at once with the reason.  An unreachable database is not a refusal: a
// worker has waited for it (capabilities_accepted), the rest do not wait.
bool settings_accepted(const Config &cfg) {
	try {
		store_factory(cfg)();
		return true;
	} catch (const Error &e) {
		if (is_transient(e)) return true;
		log::error("refusing to start", refusal_fields(e));
		return false;
	} catch (const std::exception &e) {
		log::error("refusing to start", {{"error", e.what()}});
		return false;
	}
}

// The database role's capabilities against what the command needs (docs/security.md
// "Roles and ownership"): worker genroc_worker; api genroc_user and
// genroc_operator; serve all three; --auth EXECUTE on genroc.token_verify,
// --seed-tokens on token_create.  (`genroc run`, mostly on SQLite, is not
// checked: a missing grant fails its first call with 42501.)
// Anything missing stops genroc here, naming the grant.  Retention flags
// without genroc_admin only warn: tick then prunes nothing (12_roles.sql).
// An unreachable database is not a refusal: a worker waits for it here, the
// other commands skip the check.
bool capabilities_accepted(const Config &cfg) {
	const bool works = waits_for_database(cfg);	// the commands that run a worker
	const bool serves = cfg.command == "api" || cfg.command == "serve";
	if (!works && !serves) return true;
	json caps = json::object();
	try {
		// the plain store: the session settings are settings_accepted's.  A
		// worker waits here for a database that does not answer
		// (until_reachable; a stop signal leaves g_stop requested).
		const auto ask = [&] { caps = open_store(cfg.database, false, WriteLane::general, cfg.pooled)->capabilities(); };
		if (!works) ask();
		else if (!until_reachable("the start checks", ask)) return true;	// stopped: the caller exits 0
	} catch (const Error &e) {
		if (is_transient(e)) return true;
		if (e.sqlstate == "42883") {	// an extension from before roles: nothing to ask
			log::warn("cannot check the database role's capabilities", {{"sqlstate", e.sqlstate}, {"error", e.what()}});
			return true;
		}
		if (e.sqlstate != "42501") {	// 42501: the role may not even use the schema
			log::error("refusing to start", refusal_fields(e));
			return false;
		}
	} catch (const std::exception &e) {
		log::error("refusing to start", {{"error", e.what()}});
		return false;
	}
	auto has = [&](const char *k) { return caps.value(k, false); };
	std::vector<std::string> missing;
	if (works && !has("worker")) missing.push_back("genroc_worker");
	if (serves && !has("user")) missing.push_back("genroc_user");
	if (serves && !has("operator")) missing.push_back("genroc_operator");
	if (serves && cfg.auth && !has("token_verify")) missing.push_back("EXECUTE ON FUNCTION genroc.token_verify(text)");
	if (serves && !cfg.seed_tokens.empty() && !has("token_create"))
		missing.push_back("EXECUTE ON FUNCTION genroc.token_create(text, text[], text, text)");
	const std::string role = caps.value("role", std::string("(the --database role)"));
	if (!missing.empty()) {
		log::error("refusing to start: the database role lacks what `genroc " + cfg.command + "` needs",
				   {{"role", role},
					{"missing", missing},
					{"hint", "Grant them (e.g. GRANT " + missing.front() + " TO " + role +
								 "); docs/security.md \"Roles and ownership\" lists what each command needs."}});
		return false;
	}
	if (works && !has("admin") && (cfg.log_retention.count() > 0 || cfg.instance_retention.count() > 0))
		log::warn("tick will prune nothing: retention deletes every role's rows, so only a genroc_admin "
				  "role's settings count",
				  {{"role", role},
				   {"hint", "Grant genroc_admin to this role, or run genroc.prune from an administering role; "
							"docs/security.md \"Roles and ownership\"."}});
	return true;
}

// The HTTP server's options.  (start_api warns when the port is reachable
// from other machines without --auth.)
ApiOptions api_options(const Config &cfg) {
	ApiOptions o;
	o.listen = cfg.listen;
	o.auth = cfg.auth;
	o.jwt_secret = cfg.jwt_secret;
	if (!cfg.jwt_groups.empty()) o.jwt_groups = auth::parse_groups(cfg.jwt_groups);
	o.max_connections = cfg.http_max_connections;
	o.request_timeout_ms = cfg.http_request_timeout.count();
	o.metrics_cache_ms = cfg.metrics_cache.count();
	o.max_connections_per_client = cfg.http_max_connections_per_client;
	o.max_response = static_cast<size_t>(cfg.http_max_response);
	o.allowed_hosts = cfg.http_allowed_hosts;
	o.healthz_reserve = cfg.http_healthz_reserve;
	o.max_list_answers = cfg.http_max_answers;
	o.sfn.region = cfg.sfn_region;
	o.sfn.account = cfg.sfn_account;
	o.sfn.sync_timeout_ms = int64_t{cfg.sfn_sync_timeout_s} * 1000;
	if (!cfg.sigv4_key_file.empty()) o.sigv4_key = sigv4::load_server_key(cfg.sigv4_key_file);
	// Paging tokens are checked with a key every server of the same key
	// shares (so a listing pages across them); without one, a random key
	// of this process.
	if (!o.sigv4_key.empty()) {
		o.sfn.paging_key = sigv4::hmac_sha256(o.sigv4_key, "genroc sfn paging");
	} else {
		o.sfn.paging_key = sigv4::new_token_id() + sigv4::new_token_id() + sigv4::new_token_id();
	}
	return o;
}

// With --auth: the store must answer token_verify (the extension has the
// token functions, and genroc's role may run them), else every request
// would fail.  Then the seed tokens file: each token is created unless its
// id exists with the same secret, name and permissions (23505 otherwise,
// naming the id: genroc refuses to start).  Never logs a token's text.
bool prepare_auth(const Config &cfg) {
	try {
		auto store = store_factory(cfg)();
		if (cfg.auth) store->token_verify("");
		if (cfg.seed_tokens.empty()) return true;
		for (const auto &t : auth::load_seed_tokens(cfg.seed_tokens)) {
			json r = store->token_create(t.name, t.permissions, "seed", t.token);
			json f = {{"id", r.at("id")}, {"name", t.name}, {"permissions", r.at("permissions")}};
			if (!r.at("revoked_at").is_null())
				log::warn("seed token is revoked; it stays revoked", f);
			else
				log::info(r.at("is_new") == true ? "seed token created" : "seed token present", f);
		}
		return true;
	} catch (const Error &e) {
		// A database that is down now: requests will fail with 503 until it
		// is back, as without --auth; but seed tokens must exist before start.
		if (is_transient(e) && cfg.seed_tokens.empty()) return true;
		json f = {{"sqlstate", e.sqlstate}, {"error", e.what()}};
		if (e.sqlstate == "42501" || e.sqlstate == "42883")
			f["hint"] = "With --auth, genroc's database role needs EXECUTE on genroc.token_verify (and on "
						"genroc.token_create for --seed-tokens); docs/security.md \"Authentication\".";
		log::error("refusing to start: authentication", f);
		return false;
	} catch (const std::exception &e) {
		log::error("refusing to start: authentication", {{"error", e.what()}});
		return false;
	}
}

// `genroc token create`: the text on stdout (alone on its line, for
// scripts), what was made on stderr; --json prints the whole answer.
int run_token_create(const Config &cfg) {
	try {
		auto store = open_store(cfg.database);
		if (cfg.token_sigv4) {
			// The pair's secret and its token's text both come from the
			// server key (sigv4.hpp); the store keeps the token's hash only.
			const std::string key = sigv4::load_server_key(cfg.sigv4_key_file);
			const std::string id = sigv4::new_token_id();
			json t = store->token_create(cfg.token_name, cfg.token_permissions, "cli", sigv4::token_text(key, id));
			t.erase("is_new");
			t.erase("token");
			t["access_key_id"] = sigv4::access_key_id(id);
			t["secret_access_key"] = sigv4::secret_access_key(key, id);
			if (cfg.token_json) {
				std::cout << t.dump() << std::endl;
			} else {
				std::fprintf(stderr, "created key pair %s for token %s (%s); its secret is shown this once:\n",
							 t.at("access_key_id").get<std::string>().c_str(), id.c_str(), cfg.token_name.c_str());
				std::cout << "AWS_ACCESS_KEY_ID=" << t.at("access_key_id").get<std::string>() << "\n"
						  << "AWS_SECRET_ACCESS_KEY=" << t.at("secret_access_key").get<std::string>() << std::endl;
			}
			return kExitOk;
		}
		json t = store->token_create(cfg.token_name, cfg.token_permissions, "cli", std::nullopt);
		t.erase("is_new");
		if (cfg.token_json) {
			std::cout << t.dump() << std::endl;
		} else {
			std::string perms;
			for (const auto &p : t.at("permissions")) perms += (perms.empty() ? "" : ",") + p.get<std::string>();
			std::fprintf(stderr, "created token %s (%s: %s); its text is shown this once:\n",
						 t.at("id").get<std::string>().c_str(), cfg.token_name.c_str(), perms.c_str());
			std::cout << t.at("token").get<std::string>() << std::endl;
		}
		return kExitOk;
	} catch (const Error &e) {
		std::fprintf(stderr, "genroc: ERROR %s: %s\n", e.sqlstate.c_str(), e.what());
		return kExitFailed;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "genroc: %s\n", e.what());
		return kExitFailed;
	}
}

// --metrics-listen: a second listener with /healthz and /metrics alone
// (nullptr without the flag).  Throws when it cannot listen.
std::unique_ptr<ApiServer> start_metrics(const Config &cfg, const HealthInfo &health) {
	if (cfg.metrics_listen.empty()) return nullptr;
	ApiOptions o;
	o.listen = cfg.metrics_listen;
	o.metrics_only = true;
	o.max_connections = 16;
	o.metrics_cache_ms = cfg.metrics_cache.count();
	o.max_connections_per_client = std::min(16, cfg.http_max_connections_per_client);
	o.allowed_hosts = cfg.http_allowed_hosts;
	try {
		return start_api(o, store_factory(cfg), health);
	} catch (const std::exception &e) {
		throw std::runtime_error(std::string("--metrics-listen: ") + e.what());
	}
}

int run_api_command(const Config &cfg) {
	std::unique_ptr<ApiServer> server, metrics_server;
	try {
		const HealthInfo health{"", false, [] { return int64_t{-1}; }};
		server = start_api(api_options(cfg), store_factory(cfg), health);
		metrics_server = start_metrics(cfg, health);
	} catch (const std::exception &e) {
		log::error("cannot serve HTTP", {{"listen", cfg.listen}, {"error", e.what()}});
		return kExitFailed;
	}
	while (!g_stop.wait_for(Millis(60'000))) {
	}
	if (metrics_server) metrics_server->stop();
	server->stop();
	log::info("API stopped");
	return kExitOk;
}

int run_worker_command(const Config &cfg, const HandlerRegistry &handlers) {
	WorkerOptions o;
	o.worker_id = cfg.worker_id;
	o.host = cfg.host;
	o.lease_duration = cfg.lease_duration;
	o.stale_after = cfg.stale_after;
	o.shutdown_grace = cfg.shutdown_grace;
	o.concurrency = cfg.concurrency;
	o.prefetch = cfg.prefetch;
	// Queue config goes to the database before the first claim; a conflict
	// (a tenant's queue name used for another kind) stops the worker here.
	// The database answered the start checks; should it be gone again, the
	// worker waits for it as it did for them (until_reachable).
	auto refuse = [](const std::exception &e) {
		json f = {{"error", e.what()}};
		if (std::string(e.what()).find("permission denied") != std::string::npos)
			f["hint"] = "Writing queues (--queues-config, a handler's queue) takes genroc_admin; "
						"docs/security.md \"Roles and ownership\".";
		log::error("refusing to start: queue configuration", f);
		return kExitFailed;
	};
	try {
		std::vector<QueueEntry> entries;
		if (!cfg.queues_config.empty()) entries = load_queues_config(cfg.queues_config);
		const bool synced = until_reachable("the queue configuration", [&] {
			auto store = store_factory(cfg)();
			o.queues = sync_queues(*store, cfg, entries, handlers.handler_queues(), handlers.names());
		});
		if (!synced) return kExitOk;
	} catch (const std::exception &e) {
		return refuse(e);
	}
	o.manual_tick = cfg.manual_tick;
	o.pooled = cfg.pooled;
	o.tick_interval = cfg.tick_interval;
	o.poll_interval = cfg.poll_interval;
	o.summary_interval = cfg.log_summary_interval;
	Runner runner(o, handlers, store_factory(cfg, WriteLane::worker));

	std::unique_ptr<ApiServer> server, metrics_server;
	const HealthInfo health{cfg.worker_id, cfg.manual_tick, [&runner] { return runner.lease_age_ms(); }};
	try {
		if (cfg.command == "serve") server = start_api(api_options(cfg), store_factory(cfg), health);
		metrics_server = start_metrics(cfg, health);
	} catch (const std::exception &e) {
		log::error("cannot serve HTTP", {{"listen", cfg.listen}, {"error", e.what()}});
		return kExitFailed;
	}
	int rc = runner.run(g_stop);
	// The API stays up while the worker drains, so health checks see it.
	if (metrics_server) metrics_server->stop();
	if (server) server->stop();
	return rc;
}

}  // namespace

int genroc_main(int argc, const char *const *argv) {
	sqlite_process_setup();	 // before any SQLite call of this process
	Config cfg;
	int rc = parse_command_line(argc, argv, cfg);
	if (rc >= 0) return rc;
	log::set_mode(cfg.log_mode);
	log::set_level(cfg.log_level);

	install_signal_thread([](int sig) {
		static std::atomic<int64_t> first_ms{-1};
		const int64_t now = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now().time_since_epoch()).count();
		int64_t none = -1;
		if (!first_ms.compare_exchange_strong(none, now)) {
			// A supervisor that signals the process and its group (coreutils
			// `timeout`, a shell's job control) sends the same stop twice at
			// once: that is still the first request, and the drain goes on.
			if (now - first_ms.load() < kSameSignalMs) {
				log::info("signal received again at once; still draining", {{"signal", ::strsignal(sig)}});
				return;
			}
			// A later second signal: the operator does not want to wait for
			// the grace.  Leases lapse and other workers continue, as after a crash.
			log::warn("second signal; exiting without draining", {{"signal", ::strsignal(sig)}});
			::_exit(kExitFailed);
		}
		log::info("signal received; stopping", {{"signal", ::strsignal(sig)}});
		g_stop.request();
	});

	if (cfg.command == "token create") return run_token_create(cfg);

	HandlerRegistry handlers = HandlerRegistry::with_builtins();
	if (!cfg.handlers_file.empty()) {
		try {
			handlers.load_file(cfg.handlers_file);
		} catch (const std::exception &e) {
			log::error("refusing to start", {{"error", e.what()}});
			return kExitUsage;
		}
	}
	// The role first: a worker waits there for its database (a stop signal
	// meanwhile exits 0), so its checks have an answer, as when the
	// database was up all along.
	if (!capabilities_accepted(cfg)) return kExitFailed;
	if (g_stop.requested()) return kExitOk;
	if (!settings_accepted(cfg)) return kExitFailed;
	if ((cfg.command == "serve" || cfg.command == "api") && (cfg.auth || !cfg.seed_tokens.empty()) &&
		!prepare_auth(cfg))
		return kExitFailed;
	if (cfg.command == "run") return run_file(cfg, handlers, g_stop);
	if (cfg.command == "api") return run_api_command(cfg);
	return run_worker_command(cfg, handlers);
}

}  // namespace genroc
