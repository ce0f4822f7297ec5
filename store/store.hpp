// store.hpp — the engine operations, one interface over both stores.
//
// Each method is one genroc.* SQL function (docs/sql-api.md "SQL API"), with the same
// arguments, the same results and the same errors (genroc::Error carrying the
// SQLSTATE).  PgStore (store/pg_store.cpp) calls the function over libpq;
// EngineStore (store/engine_store.hpp) runs the engine's operation in-process,
// on a SQLite file as SqliteStore (store/sqlite/).
// The conformance suite (test/conformance/) runs every behaviour on both.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asl.hpp"

namespace genroc {

struct DefineResult {
	std::string name;
	int version = 0;
	bool is_new = false;
};

// The most inputs one start_many takes (genroc.start_many's c_max_inputs).
inline constexpr size_t kMaxStartMany = 10000;

struct StartResult {
	int64_t instance_id = 0;
	bool is_new = false;
	std::string status;
};

// A task handed to a worker by claim().
struct Task {
	int64_t instance_id = 0;
	int64_t epoch = 0;			// lease epoch: pass it back to complete()/fail()
	std::string state;
	std::string resource;		// "handler:NAME" | "genroc:noop|fail|sleep"
	json input;
	bool only_once = false;
	std::optional<int> timeout_s;
	int attempt = 0;			// 0 for the first run of this task, +1 per retry
	std::string lease_expires;	// ISO-8601 UTC
	std::string queue;			// the queue it was claimed from (metrics per queue)
};

// An activity task handed to an outside program by claim_activity().
struct ActivityTask {
	std::string token;
	int64_t instance_id = 0;
	std::string activity;		// NAME of "activity:NAME"
	json input;
	std::optional<int> heartbeat_s;
	std::optional<int> timeout_s;
};

// Which commits are flushed to disk before they are confirmed
// (docs/design.md §4): none; essential = work from outside (start, activity
// results, cancel) and the claim and the report of an OnlyOnce task; terminal = essential
// and every instance end; strict = every commit.
enum class DurabilityLevel { none, essential, terminal, strict };

inline const char *durability_name(DurabilityLevel level) {
	switch (level) {
		case DurabilityLevel::none: return "none";
		case DurabilityLevel::essential: return "essential";
		case DurabilityLevel::terminal: return "terminal";
		case DurabilityLevel::strict: return "strict";
	}
	return "essential";
}

inline std::optional<DurabilityLevel> parse_durability(const std::string &text) {
	for (auto l : {DurabilityLevel::none, DurabilityLevel::essential, DurabilityLevel::terminal,
				   DurabilityLevel::strict})
		if (text == durability_name(l)) return l;
	return std::nullopt;
}

// The instance log and retention (docs/operations.md "Logs and retention"):
// what the log keeps of payloads, and what tick() prunes.  The defaults are
// what a plain SQL session has when it sets nothing.
struct LogOptions {
	bool payloads = true;					// false: no input/output/payload in log details
	int64_t payload_max = 1024 * 1024;		// bytes of a payload's JSON text; 0 = no limit
	int64_t log_retention_ms = 0;			// tick deletes older log rows; 0 = none
	int64_t instance_retention_ms = 0;		// tick deletes concluded trees ended longer ago; 0 = none
	// Large values (docs/operations.md "Large values"): a value larger than this is
	// stored once and referenced (PostgreSQL: its jsonb size; SQLite: its
	// JSON text); an unused one is collected this long after it was found unused
	int64_t object_threshold = 8192;
	int64_t object_grace_ms = 3600 * 1000;
};

class Store {
  public:
	virtual ~Store() = default;

	virtual std::string kind() const = 0;	// "postgres" | "sqlite"

	// Definitions
	// genroc.define.  source: the text `definition` was parsed from, as the
	// user wrote it; a new version keeps it (genroc.define(text, text)).
	virtual DefineResult define(const std::string &name, const json &definition,
								const std::optional<std::string> &source = std::nullopt) = 0;
	virtual json list_definitions() = 0;	// [{name, version, created_at}] newest version per name
	// genroc.get_definition: {name, version, definition, source, created_at}
	// (source: the text as written, or null), the newest version without
	// `version`; RC002 when there is none.
	virtual json get_definition(const std::string &name, std::optional<int> version) = 0;
	// genroc.undefine: the name (no version: no more starts, not listed, its
	// aliases dropped) or one version of it deleted.
	virtual void undefine(const std::string &name, std::optional<int> version) = 0;

	// Aliases (genroc.alias_set, alias_drop, get_alias, list_aliases):
	// routing [{"version", "weight"}, ...]; an alias is {name, alias,
	// routing, description, created_at, updated_at}; RC016 when there is none.
	virtual json alias_set(const std::string &name, const std::string &alias, const json &routing,
						   const std::optional<std::string> &description) = 0;
	virtual void alias_drop(const std::string &name, const std::string &alias) = 0;
	virtual json get_alias(const std::string &name, const std::string &alias) = 0;
	virtual json list_aliases(const std::string &name) = 0;	// by alias

	// Instances
	virtual StartResult start(const std::string &definition, const json &input,
							  const json &options) = 0;
	// genroc.start_many: start for each input of the JSON array `inputs`
	// (at most kMaxStartMany), one definition version and the same options
	// (start's but idempotency_key and name), one transaction; a result per
	// input, in their order (is_new always true).
	virtual std::vector<StartResult> start_many(const std::string &definition, const json &inputs,
												const json &options) = 0;
	// genroc.cancel: returns "cancelled"; error (default genroc.Cancelled)
	// and cause (default "cancelled by request") are the instance's.
	virtual std::string cancel(int64_t instance_id, const std::optional<std::string> &error = std::nullopt,
							   const std::optional<std::string> &cause = std::nullopt) = 0;
	// A failed top-level instance again (RC009 otherwise): retry enters the
	// failed state anew; resume goes on after that Task with `output`.
	// Both return the new status.
	virtual std::string retry(int64_t instance_id) = 0;
	virtual std::string resume(int64_t instance_id, const json &output) = 0;
	// genroc.redrive: a failed, timed-out or cancelled top-level instance
	// goes on from where it stopped, a Map or Parallel rerunning only its
	// unsuccessful children (RC009 otherwise).  Returns the new status.
	// client_token: the same as one of its last 10 redrives redrives nothing.
	virtual std::string redrive(int64_t instance_id, const std::optional<std::string> &client_token = std::nullopt) = 0;
	// refs: large values as references {"genroc:object": "<hash>"} (get_object
	// reads them); list_instances takes it as the filter key "values": "ref"
	virtual json get_instance(int64_t instance_id, bool refs = false) = 0;	// throws RC003
	virtual json list_instances(const json &filter) = 0;	// {status, definition, label, limit, values}
	virtual json history(int64_t instance_id, bool refs = false) = 0;		// the instance log, oldest first
	virtual json get_object(const std::string &ref) = 0;	// genroc.get_object; RC011 when there is none

	// Workers and leases
	virtual json worker_register(const std::string &worker, const json &options) = 0;
	// {"drain": bool}: true once worker_drain asked this worker to drain
	virtual json worker_heartbeat(const std::string &worker) = 0;
	// genroc.worker_drain: {worker, draining, running}
	virtual json worker_drain(const std::string &worker) = 0;
	virtual void worker_stop(const std::string &worker) = 0;
	virtual json list_workers() = 0;
	// genroc.claim_wake: milliseconds until a rate_limit or
	// partition_rate_limit window of these queues that holds back a ready
	// task has room again; nullopt when none does
	virtual std::optional<int64_t> claim_wake(const std::vector<std::string> &queues) = 0;
	virtual std::vector<Task> claim(const std::string &worker,
									const std::vector<std::string> &queues, int n) = 0;
	virtual std::vector<int64_t> renew(const std::string &worker,
									   const std::vector<int64_t> &instance_ids) = 0;
	virtual void release(const std::string &worker, const std::vector<int64_t> &instance_ids) = 0;
	virtual std::string complete(int64_t instance_id, int64_t epoch, const json &output) = 0;
	virtual std::string fail(int64_t instance_id, int64_t epoch, const std::string &error,
							 const std::string &cause) = 0;
	// The same report, and when the step leaves the instance with a handler
	// task ready at once that this worker may take (its lease, one of
	// `queues`, no queue limit in the way), that task leased to it in the
	// same transaction (genroc.complete_and_claim / fail_and_claim): no
	// second claim round trip.  status is the instance's status after the
	// call ("running" with `next` when handed back).
	struct Report {
		std::string status;
		std::optional<Task> next;
	};
	virtual Report complete_and_claim(int64_t instance_id, int64_t epoch, const json &output,
									  const std::string &worker, const std::vector<std::string> &queues) = 0;
	virtual Report fail_and_claim(int64_t instance_id, int64_t epoch, const std::string &error,
								  const std::string &cause, const std::string &worker,
								  const std::vector<std::string> &queues) = 0;
	// genroc.complete_many: many tasks' outputs in one transaction, each
	// reported as complete() reports it (as complete_and_claim() when
	// `worker` is not empty: `next` is the task handed back).  A report the
	// store does not take, its instance gone (RC003) or its lease lost
	// (RC004), comes back with that `sqlstate` and no status; the others go
	// on.  A misuse throws and takes none: more than 10,000 reports (54000),
	// an output over a limit, another role's lease (42501).  One Outcome per
	// Completion, in order.
	struct Completion {
		int64_t instance_id = 0;
		int64_t epoch = 0;
		json output;
	};
	struct Outcome {
		int64_t instance_id = 0;
		std::string status;	   // empty when not taken
		std::string sqlstate;  // RC003 / RC004 when not taken
		std::optional<Task> next;
	};
	virtual std::vector<Outcome> complete_many(const std::vector<Completion> &reports, const std::string &worker,
											   const std::vector<std::string> &queues) = 0;
	// One report answered as complete_many answers it, in its own call:
	// complete (complete_and_claim when `worker` is not empty); a missing
	// instance or a lost lease in the Outcome's sqlstate, any other error
	// thrown.
	Outcome complete_one(const Completion &c, const std::string &worker, const std::vector<std::string> &queues) {
		Outcome o;
		o.instance_id = c.instance_id;
		try {
			if (worker.empty()) {
				o.status = complete(c.instance_id, c.epoch, c.output);
			} else {
				Report r = complete_and_claim(c.instance_id, c.epoch, c.output, worker, queues);
				o.status = std::move(r.status);
				o.next = std::move(r.next);
			}
		} catch (const Error &e) {
			if (e.sqlstate != sqlstate::INSTANCE_NOT_FOUND && e.sqlstate != sqlstate::LEASE_LOST) throw;
			o.sqlstate = e.sqlstate;
		}
		return o;
	}

	// Activities (work from outside)
	virtual std::vector<ActivityTask> claim_activity(const std::string &activity,
													 const std::string &worker, int n) = 0;
	virtual std::string activity_succeed(const std::string &token, const json &output) = 0;
	virtual std::string activity_fail(const std::string &token, const std::string &error,
									  const std::string &cause) = 0;
	virtual void activity_heartbeat(const std::string &token) = 0;
	// genroc.emit: an event for an instance's genroc:event wait.  Returns
	// "delivered" (the instance waited for that name and went on) or "kept"
	// (held for its next wait of that name).  RC003, RC008 (ended), 22023.
	virtual std::string emit(int64_t instance_id, const std::string &name, const json &payload) = 0;

	// Queues (operator configuration; docs/sql-api.md "Queues and routing")
	// genroc.queue_set: creates or replaces a queue, returns it as
	// list_queues() shows it; genroc.queue_drop; genroc.list_queues: every
	// queue with kind, handler, match, effective limits, depth, queued,
	// running and the live workers serving it, by name.
	virtual json queue_set(const std::string &name, const json &options) = 0;
	virtual void queue_drop(const std::string &name) = 0;
	virtual json list_queues() = 0;

	// API tokens (docs/security.md "Authentication"; extension/sql/80_tokens.sql)
	// genroc.token_create: {id, name, permissions, created_by, created_at,
	// revoked_at, token, is_new}; `token` is the whole text, shown only here.
	// With `token_text` (a seed) that text is stored, idempotently.  22023
	// for an empty name or an unknown permission, 23505 for a seeded id that
	// exists with another secret, name or permissions.
	virtual json token_create(const std::string &name, const std::vector<std::string> &permissions,
							  const std::string &created_by, const std::optional<std::string> &token_text) = 0;
	// genroc.token_verify: {id, name, permissions, created_by} of a live
	// token, or null (malformed, unknown, wrong secret, revoked).
	virtual json token_verify(const std::string &token) = 0;
	virtual json token_list() = 0;							// never the text or its hash
	virtual void token_revoke(const std::string &id) = 0;	// 42704 for an unknown id

	// Roles (docs/security.md "Roles and ownership"): genroc.capabilities(), {role,
	// admin, operator, worker, user, token_verify, token_create} for the
	// store's role.  The SQLite store answers true for all (its file's owner
	// administers it).
	virtual json capabilities() = 0;

	// Figures for operators (docs/operations.md "Metrics", extension/sql/75_metrics.sql).
	// genroc.metrics: {instances: [{status, count}], by_definition:
	// [{definition, status, count}] (the max_definitions definitions with
	// the most instances), definitions_omitted, queues: [{queue, ready,
	// oldest_ready_s, queued, running, workers}], workers_alive}.
	virtual json metrics(int max_definitions) = 0;
	// genroc.tickers: who called tick() in the last 7 days, newest first:
	// [{ticked_by, kind (ticker|binary|session), role, first_tick_at,
	// last_tick_at, ago_ms, ticks}].
	virtual json tickers() = 0;
	// The name this store's tick() records (genroc.tickers): a worker sets
	// "genroc worker <id>"; empty (the default) names the session (its
	// application_name or role; SQLite: "pid <pid>").
	virtual void set_ticked_by(const std::string &name) = 0;

	// Time
	virtual json tick(int limit) = 0;		// counts of what it did, by kind (pruning included)
	virtual std::string now() = 0;			// genroc.now(), ISO-8601 UTC
	// Sets (or with nullopt clears) the test clock of this store's session.
	virtual void set_test_clock(const std::optional<std::string> &iso_time) = 0;

	// Durability: the level for this store's commits from now on (PostgreSQL:
	// the session setting genroc.durability, kept across reconnects; SQLite:
	// the level of this connection), and the level in force (SQL:
	// genroc.durability()).
	virtual void set_durability(DurabilityLevel level) = 0;
	virtual DurabilityLevel durability() = 0;
	// --pg-commit-delay: commit_delay (microseconds, 0..100000) for this
	// session and every reconnect.  Checks first that the role may set it
	// (superuser, or GRANT SET ON PARAMETER commit_delay) and raises 42501
	// if not.  SQLite has no such setting: 0A000.
	virtual void set_commit_delay(int microseconds) = 0;

	// The instance log and retention.  set_log_options: the options for this
	// store's writes and ticks from now on (PostgreSQL: the session settings
	// genroc.log_payloads, genroc.log_payload_max, genroc.log_retention and
	// genroc.instance_retention, kept across reconnects; SQLite: this store's).
	// prune: genroc.prune, at most `limit` log rows and `limit` instances;
	// a retention of 0 prunes nothing of that kind.  Returns {log_rows, instances}.
	virtual void set_log_options(const LogOptions &options) = 0;
	virtual json prune(int64_t log_retention_ms, int64_t instance_retention_ms, int limit) = 0;

	// Plumbing for the worker (not SQL functions)
	// Blocks up to timeout_ms for a sign that work may be ready (PostgreSQL:
	// LISTEN genroc; pooled: a sleep, as no notification can arrive; SQLite: a
	// short poll).  True when woken by a signal.
	virtual bool wait_for_work(int timeout_ms) = 0;
	// True (once) when a NOTIFY genroc_drain arrived while waiting
	// (PostgreSQL: worker_drain sends one).  Only a wake-up: anyone who can
	// connect may send it, with any payload, so its payload is not read; the
	// worker then asks the database (worker_heartbeat) whether it is to
	// drain.  False without notifications (pooled, SQLite): the heartbeat
	// tells.
	virtual bool drain_woken() { return false; }
	// True when the database answers (GET /healthz).
	virtual bool ping() = 0;
	// True when the connection goes through a transaction pooler (--pooled,
	// or detected: docs/operations.md "Behind a connection pooler"): the store then keeps
	// no session state (settings per transaction, no LISTEN), and a worker
	// registers "pooled".  SQLite: false.
	virtual bool pooled() const { return false; }
};

// A Store is one connection: not thread-safe.  Open one per thread, or lock.
// Connection failures raise Error with an SQLSTATE of class 08; the next call
// reconnects.  Callers treat class 08 (and 57P01 admin shutdown) as transient.

// Opens the store named by --database: a postgres:// or postgresql:// URL
// (or any libpq conninfo containing '='), else a SQLite file path.
// read_only: the caller only reads (genctl's listing commands); a SQLite
// file that exists is then opened read-only (PostgreSQL: no difference).
// lane: the kind of writer (SQLite: the turns of one file in one process go
// round the lanes, docs/design.md "Several writers on one SQLite file"; PostgreSQL:
// no difference).  pooled (--pooled): PostgreSQL is reached through a
// transaction pooler; without it, PgStore checks once per process and
// database whether one is there (SQLite: no difference).
enum class WriteLane : unsigned { general = 0, worker = 1 };
std::unique_ptr<Store> open_store(const std::string &database, bool read_only = false,
								  WriteLane lane = WriteLane::general, bool pooled = false);
std::unique_ptr<Store> open_pg_store(const std::string &conninfo, bool pooled = false);

// For a process whose SQLite use is genroc's alone (the genroc binary, the
// benchmark), called before its first open: turns off SQLite's memory
// statistics (SQLITE_CONFIG_MEMSTATUS), which take a process-wide mutex on
// every allocation SQLite makes.  A library embedding the SQLite store in
// another program does not call it (the setting is the whole process's).
// False when SQLite was already initialized (the setting then stays as it
// was).  Defined by the SQLite store (store/sqlite/sqlite_store.cpp).
bool sqlite_process_setup();

// What --database names, the same text however it is spelled: for
// PostgreSQL "postgresql USER@HOST:PORT/DBNAME" as the conninfo gives them
// (no password, no other option); for SQLite "sqlite " and the file's
// absolute path with symbolic links resolved.  The default worker id is
// made from it (docs/cli.md "Worker ids").
std::string store_identity(const std::string &database);

}  // namespace genroc
