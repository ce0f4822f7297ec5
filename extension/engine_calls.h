/*
 * engine_calls.h — the engine's operations for the PostgreSQL module's entry
 * points (definitions.c, tokens.c, ...), as C functions that never throw (engine_port.cpp):
 * each returns 1, or 0 with *err filled.  Strings returned are malloc'd;
 * the caller copies them and frees them with genroc_engine_free().  A call
 * that fails has freed what it made: its rows are NULL, its count 0.  Called
 * between SPI_connect and SPI_finish.
 */
#ifndef GENROC_ENGINE_CALLS_H
#define GENROC_ENGINE_CALLS_H

#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* A failure: SQLSTATE, message, detail and hint (NULL when none). */
typedef struct GenrocEngineError
{
	char		sqlstate[6];
	char	   *message;
	char	   *detail;
	char	   *hint;
} GenrocEngineError;

typedef struct GenrocDefined
{
	char	   *name;
	int			version;
	int			is_new;
} GenrocDefined;

typedef struct GenrocDefinitionRow
{
	char	   *name;
	int			version;
	int64_t		created_us;		/* since the Unix epoch */
} GenrocDefinitionRow;

/* The frame every entry point shares is in engine_entry.h. */

/* genroc.define: name and definition NULL for SQL NULL. */
extern int	genroc_engine_define(const char *name, const char *definition, int as_written,
								 GenrocDefined *out, GenrocEngineError *err);
/* genroc.list_definitions: *rows (malloc'd, each name too), *n of them. */
extern int	genroc_engine_list_definitions(GenrocDefinitionRow **rows, int *n, GenrocEngineError *err);
/* genroc.get_definition: the answer as JSON text. */
extern int	genroc_engine_get_definition(const char *name, int has_version, int64_t version,
										 char **json, GenrocEngineError *err);

/*
 * API tokens (engine/tokens.hpp).  token_create: permissions NULL for SQL
 * NULL, an element NULL for a NULL element; the answer as JSON text.
 */
extern int	genroc_engine_token_create(const char *name, const char *const *permissions, int npermissions,
									   const char *created_by, const char *secret, char **json,
									   GenrocEngineError *err);
/* token_verify: *json NULL when the text is not a live token. */
extern int	genroc_engine_token_verify(const char *token, char **json, GenrocEngineError *err);
/* token_list: *rows (malloc'd, each too), *n of them, JSON texts. */
extern int	genroc_engine_token_list(char ***rows, int *n, GenrocEngineError *err);
extern int	genroc_engine_token_revoke(const char *id, GenrocEngineError *err);

/* Metrics (engine/metrics.hpp).  Rows malloc'd, their strings too: freed
 * with genroc_engine_free_queue_stats / _tickers. */
typedef struct GenrocQueueStatRow
{
	char	   *queue;
	int64_t		ready;
	double		oldest_ready_s;
	int64_t		queued;
	int64_t		running;
	int64_t		workers;
} GenrocQueueStatRow;

typedef struct GenrocTickerRow
{
	char	   *ticked_by;
	char	   *kind;
	char	   *role;
	int64_t		first_tick_us;	/* since the Unix epoch */
	int64_t		last_tick_us;
	int64_t		ago_ms;
	int64_t		ticks;
} GenrocTickerRow;

extern int	genroc_engine_queue_stats(GenrocQueueStatRow **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_queue_stats(GenrocQueueStatRow *rows, int n);
/* metrics: the answer as JSON text. */
extern int	genroc_engine_metrics(int has_max, int64_t max_definitions, char **json, GenrocEngineError *err);
extern int	genroc_engine_tickers(GenrocTickerRow **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_tickers(GenrocTickerRow *rows, int n);

/* get_object (engine/objects.hpp): the stored value as JSON text. */
extern int	genroc_engine_get_object(const char *ref, char **json, GenrocEngineError *err);

/* ---- workers (admin.c) ---- */

typedef struct GenrocWorkerRow
{
	char	   *worker;
	char	   *host;
	char	  **queues;			/* nqueues of them, each malloc'd */
	int			nqueues;
	int			has_concurrency;
	int64_t		concurrency;
	int64_t		lease_duration_ms;
	int64_t		stale_after_ms;
	int64_t		started_us;		/* since the Unix epoch */
	int64_t		heartbeat_us;
	int			has_stopped;
	int64_t		stopped_us;
	int			live;
	int64_t		running;
	char	   *durability;
	int			draining;
} GenrocWorkerRow;

/* genroc.worker_register, worker_heartbeat, worker_drain: *json the answer. */
extern int	genroc_engine_worker_register(const char *worker, const char *options, char **json,
										  GenrocEngineError *err);
extern int	genroc_engine_worker_heartbeat(const char *worker, char **json, GenrocEngineError *err);
extern int	genroc_engine_worker_drain(const char *worker, char **json, GenrocEngineError *err);
extern int	genroc_engine_worker_stop(const char *worker, GenrocEngineError *err);
/* genroc.list_workers: *rows (malloc'd), *n of them; free with
 * genroc_engine_free_workers. */
extern int	genroc_engine_list_workers(GenrocWorkerRow **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_workers(GenrocWorkerRow *rows, int n);

/* ---- queues (admin.c) ---- */

/* A queue's own settings (malloc'd strings, NULL for none; periods in ms). */
typedef struct GenrocQueueSettings
{
	char	   *kind;
	char	   *handler;
	char	   *match;			/* JSON text */
	int64_t		global_concurrency;
	int64_t		partition_concurrency;
	int			has_rate;
	int64_t		rate_limit;
	int64_t		rate_period_ms;
	int			has_partition_rate;
	int64_t		partition_rate_limit;
	int64_t		partition_rate_period_ms;
} GenrocQueueSettings;

typedef struct GenrocQueueRow
{
	char	   *name;
	GenrocQueueSettings settings;	/* kind "unconfigured" when none */
	int64_t		depth;
	int64_t		queued;
	int64_t		running;
	char	  **workers;		/* nworkers of them */
	int			nworkers;
	int			has_oldest_ready;
	int64_t		oldest_ready_us;	/* since the Unix epoch */
} GenrocQueueRow;

extern int	genroc_engine_queue_set(const char *name, const char *options, char **json, GenrocEngineError *err);
extern int	genroc_engine_queue_drop(const char *name, GenrocEngineError *err);
extern int	genroc_engine_list_queues(GenrocQueueRow **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_queues(GenrocQueueRow *rows, int n);

/* ---- task tokens (callbacks.c) ---- */

/* genroc.activity_succeed / activity_fail: the new status (*status); NULL
 * arguments for SQL NULL. */
extern int	genroc_engine_task_token_succeed(const char *token, const char *output, char **status,
											 GenrocEngineError *err);
extern int	genroc_engine_task_token_fail(const char *token, const char *error, const char *cause, char **status,
										  GenrocEngineError *err);
/* genroc.activity_heartbeat */
extern int	genroc_engine_task_token_heartbeat(const char *token, GenrocEngineError *err);

/* ---- redrive (redrive.c) ---- */
/* genroc.redrive: the instance's new status (malloc'd); client_token NULL for none. */
extern int	genroc_engine_redrive(int has_instance, int64_t instance, const char *client_token, char **status,
								  GenrocEngineError *err);

/* ---- aliases (aliases.c) ---- */
/* genroc.alias_set, get_alias, list_aliases: the answer as JSON text. */
extern int	genroc_engine_alias_set(const char *name, const char *alias, const char *routing,
									const char *description, char **json, GenrocEngineError *err);
extern int	genroc_engine_alias_drop(const char *name, const char *alias, GenrocEngineError *err);
extern int	genroc_engine_get_alias(const char *name, const char *alias, char **json, GenrocEngineError *err);
extern int	genroc_engine_list_aliases(const char *name, char **json, GenrocEngineError *err);
/* genroc.undefine: the name, or one version of it. */
extern int	genroc_engine_undefine(const char *name, int has_version, int64_t version, GenrocEngineError *err);

extern void genroc_engine_free(void *p);
extern void genroc_engine_error_free(GenrocEngineError *err);

/* ---- retention and the tick (retention.c, retention_calls.cpp) ---- */
/* An interval's parts (PostgreSQL's Interval), or absent (SQL NULL). */
typedef struct GenrocRetention
{
	int			present;
	int64_t		months;
	int64_t		days;
	int64_t		us;
} GenrocRetention;
/* genroc.prune: {"log_rows", "instances", "objects"} as JSON text (malloc'd). */
extern int	genroc_engine_prune(GenrocRetention log_retention, GenrocRetention instance_retention, int has_limit,
								int64_t limit, char **json, GenrocEngineError *err);
/* genroc.tick: its counts as JSON text (malloc'd). */
extern int	genroc_engine_tick(int has_limit, int64_t limit, char **json, GenrocEngineError *err);
/* ---- reads of instances (instances.c; engine/instances.hpp) ---- */

/* One entry of an instance's log (genroc.history); strings malloc'd, state
 * and detail NULL for SQL NULL. */
typedef struct GenrocLogRow
{
	int64_t		seq;
	int64_t		at_us;			/* since the Unix epoch */
	char	   *event;
	char	   *state;
	char	   *detail;			/* JSON text */
} GenrocLogRow;

/* genroc.get_instance: options NULL for SQL NULL; the answer as JSON text. */
extern int	genroc_engine_get_instance(int has_instance, int64_t instance, const char *options, char **json,
									   GenrocEngineError *err);
/* genroc.list_instances: *rows (malloc'd, each too), *n of them, JSON texts. */
extern int	genroc_engine_list_instances(const char *filter, char ***rows, int *n, GenrocEngineError *err);
/* genroc.history: *rows, *n of them; free with genroc_engine_free_log. */
extern int	genroc_engine_history(int has_instance, int64_t instance, const char *options, GenrocLogRow **rows,
								  int *n, GenrocEngineError *err);
extern void genroc_engine_free_log(GenrocLogRow *rows, int n);
/* genroc.capabilities: the answer as JSON text. */
extern int	genroc_engine_capabilities(char **json, GenrocEngineError *err);
/* ---- instance control, events and leases (control.c; engine/control.hpp) ---- */
/* genroc.cancel: "cancelled" in *status; NULL error / cause for SQL NULL. */
extern int	genroc_engine_cancel(int has_instance, int64_t instance, const char *error, const char *cause,
								 char **status, GenrocEngineError *err);
/* genroc._cancel_tree */
extern int	genroc_engine_cancel_tree(int64_t instance, const char *cause, const char *children_cause,
									  const char *error, GenrocEngineError *err);
/* genroc.retry (output NULL) and genroc.resume (output JSON text): the new status. */
extern int	genroc_engine_run_again(int has_instance, int64_t instance, const char *output, char **status,
									GenrocEngineError *err);
/* genroc.emit: "delivered" or "kept"; payload NULL for JSON null. */
extern int	genroc_engine_emit(int has_instance, int64_t instance, const char *name, const char *payload,
							   char **status, GenrocEngineError *err);
/* genroc._deliver_event: the new status. */
extern int	genroc_engine_deliver_event(int64_t instance, const char *name, const char *payload, char **status,
										GenrocEngineError *err);
/* genroc.renew: the ids kept (*kept malloc'd, *nkept of them). */
extern int	genroc_engine_renew(const char *worker, int has_instances, const int64_t *instances, int n,
								int64_t **kept, int *nkept, GenrocEngineError *err);
/* genroc.release: how many leases it gave back. */
extern int	genroc_engine_release(const char *worker, int has_instances, const int64_t *instances, int n,
								  int64_t *released, GenrocEngineError *err);
/* A task genroc.claim_activity hands out (malloc'd strings). */
typedef struct GenrocActivityClaim
{
	char	   *token;
	int64_t		instance_id;
	char	   *activity;
	char	   *input;			/* JSON text */
	int			has_heartbeat_s;
	int64_t		heartbeat_s;
	int			has_timeout_s;
	int64_t		timeout_s;
} GenrocActivityClaim;
/* genroc.claim_activity: *n tasks in *rows (free with genroc_engine_free_activity_claims). */
extern int	genroc_engine_claim_activity(const char *activity, const char *worker, int has_n, int64_t n,
										 GenrocActivityClaim **rows, int *nrows, GenrocEngineError *err);
extern void genroc_engine_free_activity_claims(GenrocActivityClaim *rows, int n);
/* genroc.claim_wake: *has_wake 0 for NULL; queues NULL for SQL NULL (NULL elements left out). */
extern int	genroc_engine_claim_wake(int has_queues, const char *const *queues, int n, int *has_wake, int64_t *wake,
									 GenrocEngineError *err);

/* ---- a worker's report of a task (report.c, report_calls.cpp) ---- */
/* A task handed to a worker: leased by genroc.claim, or handed back by a
 * report (strings malloc'd, NULL for SQL NULL). */
typedef struct GenrocClaimTask
{
	int64_t		instance_id;
	int64_t		epoch;
	char	   *state;
	char	   *resource;
	char	   *input;			/* JSON text */
	const void *input_native;	/* its jsonb Datum, or NULL (HandedBack) */
	int			only_once;
	int			has_timeout_s;
	int64_t		timeout_s;
	int64_t		attempt;
	int64_t		lease_expires_us;	/* since the Unix epoch */
	char	   *queue;
} GenrocClaimTask;
/* What complete_and_claim / fail_and_claim return (malloc'd strings): the
 * new status, and when has_next the task handed back as claim returns it. */
typedef struct GenrocReportResult
{
	char	   *status;
	int			has_next;
	GenrocClaimTask next;		/* when has_next */
} GenrocReportResult;
/* genroc.complete / fail: the new status (malloc'd); output is JSON text; NULL strings for SQL NULL. */
extern int	genroc_engine_complete(int has_instance, int64_t instance, int has_epoch, int64_t epoch, const char *output,
								   char **status, GenrocEngineError *err);
extern int	genroc_engine_fail(int has_instance, int64_t instance, int has_epoch, int64_t epoch, const char *error,
							   const char *cause, char **status, GenrocEngineError *err);
/* genroc.complete_and_claim / fail_and_claim: queues NULL for SQL NULL (NULL elements left out); free *out's
 * strings with genroc_engine_free_report. */
extern int	genroc_engine_complete_and_claim(int has_instance, int64_t instance, int has_epoch, int64_t epoch,
											 const char *output, const char *worker, int has_queues,
											 const char *const *queues, int nqueues, GenrocReportResult *out,
											 GenrocEngineError *err);
extern int	genroc_engine_fail_and_claim(int has_instance, int64_t instance, int has_epoch, int64_t epoch,
										 const char *error, const char *cause, const char *worker, int has_queues,
										 const char *const *queues, int nqueues, GenrocReportResult *out,
										 GenrocEngineError *err);
extern void genroc_engine_free_report(GenrocReportResult *r);

/* ---- admission: routing, partition slots (engine/admission.cpp;
 * extension/admission.c) ---- */
/* genroc._route: *queue malloc'd. */
extern int	genroc_engine_route(int64_t definition_id, const char *definition_name, const char *labels, char **queue,
								GenrocEngineError *err);
/* genroc._admit: request NULL for its start; *status malloc'd. */
extern int	genroc_engine_admit(int64_t instance, const char *request, char **status, GenrocEngineError *err);
extern int	genroc_engine_fill_slots(const char *queue, const char *partition, GenrocEngineError *err);
extern int	genroc_engine_slot_holders(const char *queue, const char *partition, int64_t *holders,
									   GenrocEngineError *err);
extern int	genroc_engine_ended(int64_t instance, GenrocEngineError *err);
extern int	genroc_engine_room_freed(const char *queue, GenrocEngineError *err);
/* genroc._queue_settings: free with genroc_engine_free_queue_settings. */
extern int	genroc_engine_queue_settings(const char *queue, GenrocQueueSettings *out, GenrocEngineError *err);
extern void genroc_engine_free_queue_settings(GenrocQueueSettings *s);
/* genroc._reroute_handler */
extern int	genroc_engine_reroute_handler(const char *handler, int skip_locked, GenrocEngineError *err);
/* genroc._handler_missing: the columns of p_inst it reads; *status NULL or "ready" (malloc'd). */
typedef struct GenrocMissingHandler
{
	int64_t		id;
	const char *resource;
	const char *queue;
	const char *lease_owner;
	const char *state;
	int			has_lease_epoch;
	int64_t		lease_epoch;
	int			has_interruptions;
	int64_t		interruptions;
} GenrocMissingHandler;
extern int	genroc_engine_handler_missing(const GenrocMissingHandler *inst, char **status, GenrocEngineError *err);

/* ---- starting instances (start.c, start_calls.cpp; engine/start.hpp) ---- */
/* A row genroc.start or genroc.start_many returns (status malloc'd). */
typedef struct GenrocStarted
{
	int64_t		instance_id;
	int			is_new;
	char	   *status;
} GenrocStarted;
/* genroc.start, genroc.start_many: NULL for SQL NULL, JSON text; *n rows in
 * *rows (free with genroc_engine_free_started). */
extern int	genroc_engine_start(const char *definition, const char *input, const char *options,
								GenrocStarted **rows, int *n, GenrocEngineError *err);
extern int	genroc_engine_start_many(const char *definition, const char *inputs, const char *options,
									 GenrocStarted **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_started(GenrocStarted *rows, int n);

/* ---- many reports in one call: genroc.complete_many (engine/many.cpp;
 * its entry extension/complete_many.c, many_calls.cpp) ---- */
/* An array argument as C values: has 0 for SQL NULL; elements n, a NULL
 * element's nulls[k] 1; lower its first subscript. */
typedef struct GenrocManyArray
{
	int			has;
	int			n;
	int			lower;
	const int64_t *ids;			/* instances, epochs */
	const bool *nulls;			/* NULL elements */
	const void *const *jsonbs;	/* outputs: jsonb Datums (NULL for a NULL) */
	const bool *shallow;		/* outputs: within json_depth */
} GenrocManyArray;
/* A report's row (malloc'd strings): sqlstate NULL unless not taken,
 * next.status NULL when not taken, next.has_next with a hand-back. */
typedef struct GenrocManyRow
{
	int64_t		instance_id;
	char	   *sqlstate;
	GenrocReportResult next;
} GenrocManyRow;
/* genroc.complete_many: multi_dim 1 when an array has more than one
 * dimension; queues NULL for SQL NULL (NULL elements left out); *n rows in
 * *rows (free with genroc_engine_free_many). */
extern int	genroc_engine_complete_many(const GenrocManyArray *instances, const GenrocManyArray *epochs,
										const GenrocManyArray *outputs, int multi_dim, const char *worker,
										int has_queues, const char *const *queues, int nqueues,
										GenrocManyRow **rows, int *n, GenrocEngineError *err);
extern void genroc_engine_free_many(GenrocManyRow *rows, int n);
/* ---- stored values and the log (values.c, values_calls.cpp; engine/values.hpp) ---- */
/* genroc._is_ref of JSON text (no SPI). */
extern int	genroc_engine_is_ref(const char *json, int *is_ref, GenrocEngineError *err);
/* genroc._object(hash): the object's JSON text in *json. */
extern int	genroc_engine_object(const char *hash, char **json, GenrocEngineError *err);
/* genroc._load_value of JSON text: the value's JSON text in *json. */
extern int	genroc_engine_load_value(const char *value, char **json, GenrocEngineError *err);
/* genroc._store_value of JSON text (large: over genroc.object_threshold):
 * what the column keeps, JSON text in *json. */
extern int	genroc_engine_store_value(const char *value, const char *field, int large, char **json,
									  GenrocEngineError *err);
/* genroc._log_payloads of a detail's JSON text under the log settings
 * (engine/log_payloads.hpp): what the log keeps, JSON text in *json. */
extern int	genroc_engine_log_payloads(const char *detail, int payloads, int64_t payload_max,
									   int64_t object_threshold, char **json, GenrocEngineError *err);

/* ---- claim (claim.c, claim_calls.cpp; engine/claim.hpp) ---- */
/* What a claim came to (claim_wait waits again only on NONE_READY). */
#define GENROC_CLAIM_TOOK 0
#define GENROC_CLAIM_NONE_READY 1
#define GENROC_CLAIM_OTHER 2
/* genroc.claim at now_us (since the Unix epoch): worker NULL and queues NULL
 * for SQL NULL (NULL elements left out); *n tasks in *tasks, in claim order
 * (free with genroc_engine_free_claim); *end one of GENROC_CLAIM_*. */
extern int	genroc_engine_claim(const char *worker, int has_queues, const char *const *queues, int nqueues,
								int has_n, int64_t n, int64_t now_us, GenrocClaimTask **tasks, int *ntasks,
								int *end, GenrocEngineError *err);
extern void genroc_engine_free_claim(GenrocClaimTask *tasks, int n);
/* A new lease epoch, not `previous` (engine::new_epoch; no SPI). */
extern int	genroc_engine_new_epoch(int64_t previous, int64_t *epoch, GenrocEngineError *err);

#ifdef __cplusplus
}
#endif

#endif							/* GENROC_ENGINE_CALLS_H */
