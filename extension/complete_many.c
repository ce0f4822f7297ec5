/*-------------------------------------------------------------------------
 *
 * complete_many.c
 *	  genroc.complete_many in C: a batch of task reports, its common ones
 *	  written set-wise by one statement prepared once per backend.
 *
 * A worker that batches its reports calls complete_many once per batch,
 * and the batches are small when the worker keeps up: a handful to a few
 * dozen reports.  As PL/pgSQL each call cost about twice as much again as
 * its set-wise statement: the interpreter's statements around it (the
 * argument checks, the limited-queue and duplicate checks, ten ordered
 * array_agg to carry the answers to one RETURN NEXT per report).  Here
 * the same statements run with the same parameters, and the answers go
 * into the result straight from the statement's rows.
 *
 * What it does itself is the common batch: valid arguments, more than one
 * report, no instance twice, no queue at global_concurrency (each report
 * frees room there: genroc._room_freed).  Everything else goes to the
 * engine's general path (engine/many.cpp, called in-process), the reports
 * one by one as complete_and_claim makes each, with the errors of a
 * misused call:
 * a whole call this file does not take, and within a batch it takes, the
 * reports the set-wise statement leaves (a lost lease, a child, an OnlyOnce
 * task, a step that waits, fans out, fails or retries later), in their
 * order, after the set-wise ones, as the PL/pgSQL did.
 *
 * Within the batch, the reports that end their instance with the result as
 * its output (a one-task job's, the most common report of all) are written
 * first, by two plain statements (the rows, their log) with no step and no
 * outcome read back from one: in the set-wise statement they cost half
 * again as much, in its CTEs and the outcome's fields.
 *
 * Glossary
 *	  ends			the reports find_ends marks: the success ends a
 *					top-level instance with the result as its output, at
 *					a state of a definition this backend has compiled
 *	  set-wise		the reports of top-level instances whose step ends the
 *					instance or stops at a handler task ready at once,
 *					written by one statement for the whole batch
 *	  general		engine::complete_many (engine/many.cpp): the reports one
 *					by one, as complete / complete_and_claim make each
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/async.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "genroc.h"
#include "engine_entry.h"
#include "stop_writer.h"

PG_FUNCTION_INFO_V1(genroc_complete_many);

/* complete_many's RETURNS TABLE, in order (0-based) */
enum
{
	COL_INSTANCE,
	COL_STATUS,
	COL_SQLSTATE,
	COL_EPOCH,
	COL_STATE,
	COL_RESOURCE,
	COL_INPUT,
	COL_ONLY_ONCE,
	COL_TIMEOUT_S,
	COL_ATTEMPT,
	COL_LEASE_EXPIRES,
	COL_QUEUE,
	RESULT_COLUMNS
};

/* the most reports one call takes (54000 beyond, from the general path) */
#define MAX_REPORTS 10000

/* Whether any queue has a global_concurrency (the general path's reports). */
static const char *const limited_sql =
"SELECT EXISTS (SELECT 1 FROM genroc._queues q WHERE q.global_concurrency > 0)";

/*
 * The rows locked in id order before anything reads them: two batches
 * never wait on each other in a cycle, and the statements after this one
 * see each row as its last writer committed it.  Each row comes with what
 * the owner check reads (whether it is leased, its epoch, its worker), and
 * what says whether its report is one that ends it (find_ends): the
 * version locked (its ctid), its state, whether it is a top-level instance
 * of the kind the set-wise statement takes (no partition key, no OnlyOnce
 * task) and its definition's hash (the interpreter's cache key).
 */
static const char *const lock_sql =
"SELECT i.id, i.status = 'running' AND i.lease_owner IS NOT NULL, i.lease_epoch, i.lease_owner,"
"       i.ctid, i.state, i.parent_id IS NULL AND i.partition_key IS NULL AND NOT i.only_once, d.hash"
" FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id"
" WHERE i.id = ANY ($1) ORDER BY i.id FOR UPDATE OF i";

/* Its columns, 1-based as SPI_getbinval numbers them. */
enum
{
	LK_ID = 1,
	LK_LEASED,
	LK_EPOCH,
	LK_OWNER,
	LK_TID,
	LK_STATE,
	LK_TOP,
	LK_HASH
};

/*
 * The reports that end their instance with the result as its output (a
 * one-task job's, find_ends) need no step and no outcome read back from
 * one: two statements write them for the whole batch.  The rows, through
 * the one SET list of a stop (engine/stop_writer.h), each a succeeded end
 * as engine/steps.cpp's end_stop makes it (the state stays: the success
 * ends where the task was), found by the version lock_sql locked (its
 * ctid; the id checked as well): $1 versions, $2 instances, $3 outputs,
 * $4 states.  The source's constants fold away when the statement is
 * planned ...
 */
static const char *const ends_update_sql =
"UPDATE genroc._instances i SET " GENROC_PG_STOP_SET
" FROM (SELECT r.tid, r.id, 'succeeded'::text AS status, r.state, NULL::jsonb AS state_input,"
"     NULL::jsonb AS task_input, NULL::text AS resource, NULL::int8 AS eligible_in,"
"     NULL::text AS lease_owner, false AS new_epoch, NULL::int8 AS lease_in, NULL::jsonb AS retry_counts,"
"     NULL::int AS attempt, NULL::int AS interruptions, false AS only_once, NULL::int AS timeout_s,"
"     NULL::int8 AS timeout_in, NULL::int AS heartbeat_s, NULL::text AS wait_kind, NULL::int8 AS wait_until,"
"     NULL::text AS activity, NULL::text AS activity_token, true AS ended, r.out AS output,"
"     NULL::text AS error, NULL::text AS cause, NULL::jsonb AS fanout, NULL::jsonb AS variables"
"   FROM unnest($1, $2, $3, $4) AS r (tid, id, out, state)) s"
" WHERE i.ctid = s.tid AND i.id = s.id";

/*
 * ... and their log, per report complete's task_succeeded and the
 * instance's succeeded, in the reports' order: $1 instances, $2 states,
 * $3 outputs, $4 workers, $5 epochs, $6 now.
 */
static const char *const ends_log_sql =
"INSERT INTO genroc._log (instance_id, at, event, state, detail)"
" SELECT r.id, $6, e.event, r.state, genroc._log_payloads(CASE e.n"
"   WHEN 0 THEN genroc._detail('output', r.out, 'worker', r.owner, 'epoch', r.ep)"
"   ELSE genroc._detail('output', r.out) END)"
" FROM unnest($1, $2, $3, $4, $5) WITH ORDINALITY AS r (id, state, out, owner, ep, k)"
" CROSS JOIN (VALUES (0, 'task_succeeded'), (1, 'succeeded')) AS e (n, event)"
" ORDER BY r.k, e.n";

/*
 * Another role's lease is refused as genroc._leased refuses it, before
 * anything is written: of the workers whose leases the reports quote (one,
 * as a rule), those another role owns (none, with one role's workers) ...
 */
static const char *const others_sql =
"SELECT w.id FROM genroc._workers w WHERE w.id = ANY ($1) AND w.owner <> $2";

/* ... and for each report on such a lease, in order, the check. */
static const char *const check_sql =
"SELECT genroc._check_owner(w.owner, 'admin', pg_catalog.format('the lease on instance %s', $1))"
" FROM genroc._workers w WHERE w.id = $2";

/*
 * The set-wise reports, in one statement: $1 instances, $2 epochs, $3
 * outputs, $4 worker (the hand-back; NULL for none), $5 the queues the
 * engine's hand-back check left open for it and $7 its lease in ms (NULL:
 * it may take nothing back; see handback_room below), $6 now.
 * Each report's row is looked up by its key alone (LATERAL ... LIMIT 1,
 * the conditions outside it): joined plainly, the generic plan walked the
 * partial lease_owner index (estimated at one row) against every report.
 * rep also answers the step, its request written in C from the row (a
 * top-level instance is its own execution), for the rows its conditions
 * keep.  stepped: for the outcomes written here, the stop each leaves in
 * the columns of engine/stop_writer.h's source, as engine/steps.cpp's
 * task_stop and end_stop make them (a handler task ready at once, or
 * leased back to $4 when the step writer's check, engine::handback_lease,
 * would: the row before the step leased to $4 in one of the open queues
 * $5; a succeeded end), each outcome field read once.  No CTE keeps a
 * whole row: _step_succeeded takes the instance's and the definition's
 * columns (made into composite values and copied from CTE to CTE, the
 * rows cost more than the step they fed).  upd: the row, found by the
 * version rep read (its ctid: the row is locked since lock_sql, so no one
 * moves it; the id is checked too), written through the one SET list of a
 * stop, returning the report's position and what the answer needs.  logged:
 * complete's task_succeeded, the entered rows, then the outcome's rows,
 * in that order per report (one insert, as the step writer's); it runs to the
 * end whether its rows are read or not.  One row per report written.
 */
static const char *const setwise_sql =
"WITH rep AS MATERIALIZED ( "
"  SELECT r.k, r.id, r.ep, r.out, l.tid, l.state AS old_state, l.lease_owner AS old_owner, l.queue, "
"       genroc._step_succeeded(l.id, l.name, l.created_at, l.input, l.state, l.retry_counts, "
"         l.state_input, l.scope, l.variables, l.parent_id, d.hash, d.definition, d.name, d.version, "
"         r.out, genroc._ms($6)) AS answer "
"  FROM unnest($1, $2, $3) WITH ORDINALITY AS r (id, ep, out, k) "
"     CROSS JOIN LATERAL (SELECT i.ctid AS tid, i.id, i.name, i.created_at, i.input, i.state, "
"         i.retry_counts, i.state_input, i.scope, i.variables, i.parent_id, i.definition_id, "
"         i.status, i.lease_epoch, i.lease_owner, i.partition_key, i.only_once, i.queue "
"       FROM genroc._instances i WHERE i.id = r.id LIMIT 1) l "
"     JOIN genroc._definitions d ON d.id = l.definition_id "
"  WHERE l.status = 'running' AND l.lease_epoch = r.ep AND l.parent_id IS NULL "
"    AND l.partition_key IS NULL AND NOT l.only_once "
"), stepped AS MATERIALIZED ( "
"  SELECT a.k, a.id, a.tid, a.ep, a.out AS reported, a.old_state, a.old_owner, o.kind, "
"       coalesce(a.answer -> 'entered', '[]') AS entered, a.answer -> 'variables' AS variables, "
"       CASE WHEN o.kind = 'succeeded' THEN 'succeeded' "
"            WHEN h.lease_ms IS NOT NULL THEN 'running' ELSE 'ready' END AS status, "
"       CASE WHEN o.kind = 'task' THEN o.out ->> 'state' "
"            ELSE coalesce(o.out ->> 'state', a.answer -> 'entered' -> -1 ->> 'state', a.old_state) END AS state, "
"       CASE WHEN o.kind = 'task' THEN o.out -> 'state_input' END AS state_input, "
"       CASE WHEN o.kind = 'task' THEN o.out -> 'task_input' END AS task_input, "
"       CASE WHEN o.kind = 'task' THEN o.out ->> 'resource' END AS resource, "
"       CASE WHEN o.kind = 'task' THEN 0::int8 END AS eligible_in, "
"       CASE WHEN h.lease_ms IS NOT NULL THEN $4 END AS lease_owner, "
"       h.lease_ms IS NOT NULL AS new_epoch, h.lease_ms AS lease_in, "
"       CASE WHEN o.kind = 'task' THEN coalesce(o.out -> 'retry_counts', '[]') END AS retry_counts, "
"       CASE WHEN o.kind <> 'task' THEN NULL WHEN o.out ? 'retry_counts' "
"           THEN (SELECT coalesce(sum(c::int), 0) FROM jsonb_array_elements_text(o.out -> 'retry_counts') AS c) "
"           ELSE 0 END::int AS attempt, "
"       CASE WHEN o.kind = 'task' THEN 0 END AS interruptions, "
"       o.kind = 'task' AND coalesce((o.out ->> 'only_once')::boolean, false) AS only_once, "
"       CASE WHEN o.kind = 'task' THEN (o.out ->> 'timeout_s')::int END AS timeout_s, "
"       CASE WHEN h.lease_ms IS NOT NULL THEN (o.out ->> 'timeout_s')::int8 * 1000 END AS timeout_in, "
"       CASE WHEN o.kind = 'task' THEN (o.out ->> 'heartbeat_s')::int END AS heartbeat_s, "
"       NULL::text AS wait_kind, NULL::int8 AS wait_until, NULL::text AS activity, "
"       NULL::text AS activity_token, o.kind = 'succeeded' AS ended, "
"       CASE WHEN o.kind = 'succeeded' THEN o.out -> 'output' END AS output, "
"       NULL::text AS error, NULL::text AS cause, NULL::jsonb AS fanout "
"  FROM rep a, LATERAL (SELECT a.answer -> 'outcome' AS out, a.answer -> 'outcome' ->> 'kind' AS kind) o, "
"     LATERAL (SELECT CASE WHEN o.kind = 'task' AND a.old_owner = $4 AND a.queue = ANY ($5) "
"         THEN $7 END AS lease_ms) h "
"  WHERE o.kind = 'succeeded' "
"     OR (o.kind = 'task' AND o.out ->> 'resource' NOT LIKE 'activity:%' AND NOT o.out ? 'token' "
"       AND coalesce((o.out ->> 'delay_ms')::bigint, 0) = 0) "
"), upd AS ( "
"  UPDATE genroc._instances i SET " GENROC_PG_STOP_SET " "
"  FROM stepped s "
"  WHERE i.ctid = s.tid AND i.id = s.id "
"  RETURNING s.k, i.id, i.status, i.lease_epoch, i.lease_expires, i.queue, s.state, s.resource, "
"        s.task_input, s.only_once, s.timeout_s, s.attempt "
"), logged AS ( "
"  INSERT INTO genroc._log (instance_id, at, event, state, detail) "
"  SELECT l.id, $6, l.event, l.state, l.detail "
"  FROM (SELECT s.k, 0::bigint AS n, s.id, 'task_succeeded' AS event, s.old_state AS state, "
"         genroc._log_payloads(genroc._detail('output', s.reported, "
"          'worker', s.old_owner, 'epoch', s.ep)) AS detail "
"      FROM stepped s "
"      UNION ALL "
"      SELECT s.k, t.n, s.id, 'entered', t.e ->> 'state', genroc._detail('type', t.e -> 'type') "
"      FROM stepped s, jsonb_array_elements(s.entered) WITH ORDINALITY AS t (e, n) "
"      WHERE s.entered <> '[]' "
"      UNION ALL "
"      SELECT s.k, 1000000, s.id, "
"         CASE s.kind WHEN 'task' THEN 'task_scheduled' ELSE 'succeeded' END, s.state, "
"         genroc._log_payloads(CASE s.kind "
"          WHEN 'task' THEN genroc._detail('resource', s.resource, 'input', s.task_input, "
"                             'attempt', s.attempt, 'delay_ms', 0) "
"          ELSE genroc._detail('output', s.output) END) "
"      FROM stepped s "
"      UNION ALL "
"      SELECT u.k, 1000001, u.id, 'task_started', u.state, "
"         genroc._log_payloads(genroc._detail('worker', $4, 'epoch', u.lease_epoch, "
"                            'attempt', u.attempt)) "
"      FROM upd u WHERE u.status = 'running') l "
"  ORDER BY l.k, l.n "
"  RETURNING 1 "
") "
"SELECT u.k, u.status, u.lease_epoch, u.state, u.resource, u.task_input, u.only_once, "
"       u.timeout_s, u.attempt::int, u.lease_expires, u.queue "
"FROM upd u";

/* Its columns (0-based). */
enum
{
	SW_K,
	SW_STATUS,
	SW_EPOCH,
	SW_STATE,
	SW_RESOURCE,
	SW_INPUT,
	SW_ONLY_ONCE,
	SW_TIMEOUT_S,
	SW_ATTEMPT,
	SW_LEASE_EXPIRES,
	SW_QUEUE,
	SETWISE_COLUMNS
};

/* A handed-back task's columns in the result, as claim returns it. */
static const int handed_back_from[] = {SW_EPOCH, SW_STATE, SW_RESOURCE, SW_INPUT, SW_ONLY_ONCE,
SW_TIMEOUT_S, SW_ATTEMPT, SW_LEASE_EXPIRES, SW_QUEUE};
static const int handed_back_to[] = {COL_EPOCH, COL_STATE, COL_RESOURCE, COL_INPUT, COL_ONLY_ONCE,
COL_TIMEOUT_S, COL_ATTEMPT, COL_LEASE_EXPIRES, COL_QUEUE};

static SPIPlanPtr limited_plan = NULL;
static SPIPlanPtr lock_plan = NULL;
static SPIPlanPtr others_plan = NULL;
static SPIPlanPtr check_plan = NULL;
static SPIPlanPtr ends_update_plan = NULL;
static SPIPlanPtr ends_log_plan = NULL;
static SPIPlanPtr setwise_plan = NULL;

#define prepared(plan, sql, nargs, types) genroc_prepared(plan, sql, nargs, types, "genroc.complete_many")
#define run(plan, values, nulls, expected) genroc_run(plan, values, nulls, expected, "genroc.complete_many")

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * The row lock_sql locked for instance `id`, or -1: the rows are in id
 * order.
 */
static int64
locked_row(SPITupleTable *locked, uint64 rows, int64 id)
{
	uint64		lo = 0;
	uint64		hi = rows;
	bool		isnull;

	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;
		int64		at = DatumGetInt64(SPI_getbinval(locked->vals[mid], locked->tupdesc, LK_ID, &isnull));

		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == rows ||
		DatumGetInt64(SPI_getbinval(locked->vals[lo], locked->tupdesc, LK_ID, &isnull)) != id)
		return -1;
	return (int64) lo;
}

/* Whether the locked row is leased under the report's epoch. */
static bool
leased_at(HeapTuple row, TupleDesc desc, Datum epoch)
{
	bool		isnull;
	bool		leased = DatumGetBool(SPI_getbinval(row, desc, LK_LEASED, &isnull));

	if (isnull || !leased)
		return false;
	return DatumGetInt64(SPI_getbinval(row, desc, LK_EPOCH, &isnull)) == DatumGetInt64(epoch) &&
		!isnull;
}

/*
 * After lock_sql: refuses a report whose lease (its row running under the
 * epoch the report quotes) is held by a worker of another role the caller
 * may not act for (genroc._check_owner raises 42501), the reports in their
 * order.  The workers are looked up once each, not once per report.
 */
static void
refuse_other_roles(SPITupleTable *locked, uint64 rows, Datum *ids, Datum *eps, int n)
{
	char	  **owner_of = palloc0(sizeof(char *) * n);
	char	  **distinct = palloc(sizeof(char *) * n);
	int			n_names = 0;
	char	  **others;
	uint64		n_others;

	for (int k = 0; k < n; k++)
	{
		int64		lo = locked_row(locked, rows, DatumGetInt64(ids[k]));

		if (lo < 0 || !leased_at(locked->vals[lo], locked->tupdesc, eps[k]))
			continue;
		owner_of[k] = SPI_getvalue(locked->vals[lo], locked->tupdesc, LK_OWNER);
		if (owner_of[k] == NULL)
			continue;
		{
			int			j = 0;

			while (j < n_names && strcmp(distinct[j], owner_of[k]) != 0)
				j++;
			if (j == n_names)
				distinct[n_names++] = owner_of[k];
		}
	}
	if (n_names == 0)
		return;
	{
		Oid			types[2] = {TEXTARRAYOID, OIDOID};
		Datum	   *names = palloc(sizeof(Datum) * n_names);
		Datum		args[2];

		for (int j = 0; j < n_names; j++)
			names[j] = CStringGetTextDatum(distinct[j]);
		args[0] = PointerGetDatum(construct_array(names, n_names, TEXTOID, -1, false, TYPALIGN_INT));
		args[1] = ObjectIdGetDatum(genroc_caller_id());
		run(prepared(&others_plan, others_sql, 2, types), args, NULL, SPI_OK_SELECT);
	}
	n_others = SPI_processed;
	if (n_others == 0)
		return;
	others = palloc(sizeof(char *) * n_others);
	for (uint64 j = 0; j < n_others; j++)
		others[j] = SPI_getvalue(SPI_tuptable->vals[j], SPI_tuptable->tupdesc, 1);
	for (int k = 0; k < n; k++)
	{
		if (owner_of[k] == NULL)
			continue;
		for (uint64 j = 0; j < n_others; j++)
			if (others[j] != NULL && strcmp(others[j], owner_of[k]) == 0)
			{
				Oid			types[2] = {INT8OID, TEXTOID};
				Datum		args[2] = {ids[k], CStringGetTextDatum(owner_of[k])};

				run(prepared(&check_plan, check_sql, 2, types), args, NULL, SPI_OK_SELECT);
				break;
			}
	}
}

/*
 * Marks the reports whose success ends their instance with the result as
 * its output, which the set-wise statement would write without a step
 * (genroc_success_ends): the row locked is running under the report's
 * epoch, a top-level instance of the kind that statement takes, at a state
 * whose success ends it, of a definition this backend has cached.  Returns
 * how many.
 */
static int
find_ends(SPITupleTable *locked, uint64 rows, Datum *ids, Datum *eps, Datum *outs, int n,
		  bool *ends)
{
	int			count = 0;

	for (int k = 0; k < n; k++)
	{
		int64		lo = locked_row(locked, rows, DatumGetInt64(ids[k]));
		HeapTuple	row;
		bool		top_null;
		bool		state_null;
		bool		hash_null;
		Datum		top;
		Datum		state;
		Datum		hash;

		ends[k] = false;
		if (lo < 0 || !leased_at(locked->vals[lo], locked->tupdesc, eps[k]))
			continue;
		row = locked->vals[lo];
		top = SPI_getbinval(row, locked->tupdesc, LK_TOP, &top_null);
		state = SPI_getbinval(row, locked->tupdesc, LK_STATE, &state_null);
		hash = SPI_getbinval(row, locked->tupdesc, LK_HASH, &hash_null);
		if (top_null || !DatumGetBool(top) || state_null || hash_null)
			continue;
		if (genroc_success_ends(TextDatumGetCString(hash), TextDatumGetCString(state),
								DatumGetJsonbP(outs[k])))
		{
			ends[k] = true;
			count++;
		}
	}
	return count;
}

/* An array of the n datums of `type` (varlena or by reference). */
static Datum
array_of(Datum *elems, int n, Oid type)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_array(elems, n, type, typlen, typbyval, typalign));
}

/*
 * Writes the reports find_ends marked (ends_update_sql, ends_log_sql), at
 * `now`: each row by the version lock_sql locked, which no one else can
 * have changed since.
 */
static void
write_ends(SPITupleTable *locked, uint64 rows, Datum *ids, Datum *eps, Datum *outs, int n,
		   const bool *ends, int n_ends, Datum now)
{
	Datum	   *tids = palloc(sizeof(Datum) * n_ends);
	Datum	   *e_ids = palloc(sizeof(Datum) * n_ends);
	Datum	   *e_eps = palloc(sizeof(Datum) * n_ends);
	Datum	   *e_outs = palloc(sizeof(Datum) * n_ends);
	Datum	   *e_states = palloc(sizeof(Datum) * n_ends);
	Datum	   *e_owners = palloc(sizeof(Datum) * n_ends);
	int			j = 0;
	bool		isnull;

	for (int k = 0; k < n; k++)
	{
		HeapTuple	row;

		if (!ends[k])
			continue;
		row = locked->vals[locked_row(locked, rows, DatumGetInt64(ids[k]))];
		tids[j] = SPI_getbinval(row, locked->tupdesc, LK_TID, &isnull);
		e_states[j] = SPI_getbinval(row, locked->tupdesc, LK_STATE, &isnull);
		e_owners[j] = SPI_getbinval(row, locked->tupdesc, LK_OWNER, &isnull);
		e_ids[j] = ids[k];
		e_eps[j] = eps[k];
		e_outs[j] = outs[k];
		j++;
	}
	{
		Oid			types[4] = {TIDARRAYOID, INT8ARRAYOID, JSONBARRAYOID, TEXTARRAYOID};
		Datum		args[4] = {array_of(tids, n_ends, TIDOID), array_of(e_ids, n_ends, INT8OID),
		array_of(e_outs, n_ends, JSONBOID), array_of(e_states, n_ends, TEXTOID)};

		run(prepared(&ends_update_plan, ends_update_sql, 4, types), args, NULL, SPI_OK_UPDATE);
		if (SPI_processed != (uint64) n_ends)
			elog(ERROR, "genroc.complete_many: %llu of %d locked rows written",
				 (unsigned long long) SPI_processed, n_ends);
	}
	{
		Oid			types[6] = {INT8ARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
		TIMESTAMPTZOID};
		Datum		args[6] = {array_of(e_ids, n_ends, INT8OID), array_of(e_states, n_ends, TEXTOID),
			array_of(e_outs, n_ends, JSONBOID), array_of(e_owners, n_ends, TEXTOID),
		array_of(e_eps, n_ends, INT8OID), now};

		run(prepared(&ends_log_plan, ends_log_sql, 6, types), args, NULL, SPI_OK_INSERT);
		if (SPI_processed != 2 * (uint64) n_ends)
			elog(ERROR, "genroc.complete_many: %llu log rows for %d reports",
				 (unsigned long long) SPI_processed, n_ends);
	}
}

/*
 * A batch this file takes: the three arrays one-dimensional (or empty),
 * as long as each other, more than one report and at most MAX_REPORTS,
 * no NULL element, no instance twice; the worker and its queues both given
 * or both NULL.  Anything else is the general path's (its errors, or its
 * reports one by one).  The instances and epochs come out deconstructed.
 */
static bool
batch_taken(FunctionCallInfo fcinfo, Datum **ids, Datum **eps, int *n)
{
	ArrayType  *a[3];
	int			k;
	int			n_out;
	bool	   *nulls;
	int64	   *sorted;

	for (k = 0; k < 3; k++)
	{
		if (PG_ARGISNULL(k))
			return false;
		a[k] = PG_GETARG_ARRAYTYPE_P(k);
		if (ARR_NDIM(a[k]) > 1)
			return false;
	}
	if (PG_ARGISNULL(3) != PG_ARGISNULL(4))
		return false;
	*n = ArrayGetNItems(ARR_NDIM(a[0]), ARR_DIMS(a[0]));
	if (*n < 2 || *n > MAX_REPORTS ||
		ArrayGetNItems(ARR_NDIM(a[1]), ARR_DIMS(a[1])) != *n ||
		ArrayGetNItems(ARR_NDIM(a[2]), ARR_DIMS(a[2])) != *n)
		return false;
	if (array_contains_nulls(a[0]) || array_contains_nulls(a[1]) || array_contains_nulls(a[2]))
		return false;
	deconstruct_array(a[0], INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, ids, &nulls, n);
	deconstruct_array(a[1], INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, eps, &nulls, &n_out);
	sorted = palloc(sizeof(int64) * *n);
	for (k = 0; k < *n; k++)
		sorted[k] = DatumGetInt64((*ids)[k]);
	qsort(sorted, *n, sizeof(int64), cmp_int64);
	for (k = 1; k < *n; k++)
		if (sorted[k] == sorted[k - 1])
			return false;
	pfree(sorted);
	return true;
}

/*
 * The set-wise statement's rows go into the result column by column: their
 * types must be the result's own (and the position a bigint, the status
 * text).
 */
static void
check_setwise_type(TupleDesc sw, TupleDesc result)
{
	int			c;

	if (sw->natts != SETWISE_COLUMNS || result->natts != RESULT_COLUMNS ||
		TupleDescAttr(sw, SW_K)->atttypid != INT8OID ||
		genroc_base_type(TupleDescAttr(sw, SW_STATUS)->atttypid) != TupleDescAttr(result, COL_STATUS)->atttypid)
		elog(ERROR, "genroc.complete_many: the set-wise statement answered an unexpected row type");
	for (c = 0; c < (int) lengthof(handed_back_from); c++)
		if (TupleDescAttr(sw, handed_back_from[c])->atttypid !=
			TupleDescAttr(result, handed_back_to[c])->atttypid)
			elog(ERROR, "genroc.complete_many: column %d of the set-wise statement has an unexpected type",
				 handed_back_from[c] + 1);
}

/* An array argument (k) as the engine's general path takes it. */
static void
many_array(int k, Datum arg, bool is_null, GenrocManyArray *out, bool *multi_dim)
{
	ArrayType  *a;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	memset(out, 0, sizeof *out);
	out->lower = 1;
	if (is_null)
		return;
	a = DatumGetArrayTypeP(arg);
	out->has = 1;
	if (ARR_NDIM(a) > 1)
		*multi_dim = true;
	if (ARR_NDIM(a) == 1)
		out->lower = ARR_LBOUND(a)[0];
	if (k < 2)
	{
		int64_t    *ids;

		deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
		ids = palloc(sizeof(int64_t) * (n > 0 ? n : 1));
		for (int j = 0; j < n; j++)
			ids[j] = nulls[j] ? 0 : DatumGetInt64(elems[j]);
		out->ids = ids;
		out->nulls = nulls;
	}
	else
	{
		const char **texts;

		deconstruct_array(a, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
		texts = palloc(sizeof(char *) * (n > 0 ? n : 1));
		for (int j = 0; j < n; j++)
		{
			Jsonb	   *jb;

			if (nulls[j])
			{
				texts[j] = NULL;
				continue;
			}
			jb = DatumGetJsonbP(elems[j]);
			texts[j] = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
		}
		out->texts = texts;
	}
	out->n = n;
}

/*
 * The general path (engine/many.cpp: the arguments' checks, each report as
 * complete_and_claim makes it) for the given arguments, its rows in *rows
 * (free with genroc_engine_free_many).
 */
static void
run_general(FunctionCallInfo fcinfo, Datum *args, const char *nulls, GenrocManyRow **rows, int *n)
{
	GenrocManyArray arrays[3];
	bool		multi_dim = false;
	char	   *worker = nulls[3] == 'n' ? NULL : TextDatumGetCString(args[3]);
	const char **queues = NULL;
	int			nqueues = 0;

	for (int k = 0; k < 3; k++)
		many_array(k, args[k], nulls[k] == 'n', &arrays[k], &multi_dim);
	if (nulls[4] != 'n')
	{
		Datum	   *elems;
		bool	   *qnulls;
		int			count;

		deconstruct_array(DatumGetArrayTypeP(args[4]), TEXTOID, -1, false, TYPALIGN_INT, &elems, &qnulls,
						  &count);
		queues = palloc(sizeof(char *) * (count + 1));
		for (int j = 0; j < count; j++)
			queues[nqueues++] = qnulls[j] ? NULL : TextDatumGetCString(elems[j]);
	}
	GENROC_ENGINE_CALL(genroc_engine_complete_many(&arrays[0], &arrays[1], &arrays[2], multi_dim, worker,
												   nulls[4] != 'n', queues, nqueues, rows, n, &engine_err));
}

/*
 * The hand-back's check for the set-wise statement (engine/steps.hpp,
 * handback_room, once for every report path): of the worker's queues
 * (`queues`, a text[]), those where only the row decides a hand-back, as a
 * text[] in *open, and the worker's lease in ms in *lease (NULL: it may
 * take nothing back: not registered, stopped or draining).  A queue with
 * a rate limit is never open; one with a global_concurrency is not either
 * (the check counts its running tasks per row), and no batch this file
 * takes has one (limited_sql).
 */
static void
handback_room(Datum worker, Datum queues, Datum *open, Datum *lease, bool *lease_null)
{
	Datum	   *elems;
	bool	   *qnulls;
	int			count;
	const char **names;
	int		   *flags;
	Datum	   *kept;
	int			n_kept = 0;
	int64_t		lease_ms;
	char	   *w = TextDatumGetCString(worker);

	deconstruct_array(DatumGetArrayTypeP(queues), TEXTOID, -1, false, TYPALIGN_INT, &elems, &qnulls, &count);
	names = palloc(sizeof(char *) * (count + 1));
	flags = palloc0(sizeof(int) * (count + 1));
	kept = palloc(sizeof(Datum) * (count + 1));
	for (int j = 0; j < count; j++)
		names[j] = qnulls[j] ? NULL : TextDatumGetCString(elems[j]);
	GENROC_ENGINE_CALL(genroc_engine_handback_room(w, names, count, &lease_ms, flags, &engine_err));
	for (int j = 0; j < count; j++)
		if (flags[j] && lease_ms >= 0)
			kept[n_kept++] = elems[j];
	*open = array_of(kept, n_kept, TEXTOID);
	*lease = Int64GetDatum(lease_ms);
	*lease_null = lease_ms < 0;
}

/* One of the general path's rows into the result. */
static void
put_general(ReturnSetInfo *rsinfo, const GenrocManyRow *r)
{
	Datum		values[RESULT_COLUMNS] = {0};
	bool		isnull[RESULT_COLUMNS];
	const GenrocReportResult *t = &r->next;

	for (int c = 0; c < RESULT_COLUMNS; c++)
		isnull[c] = true;
	values[COL_INSTANCE] = Int64GetDatum(r->instance_id);
	isnull[COL_INSTANCE] = false;
	if (t->status)
	{
		values[COL_STATUS] = CStringGetTextDatum(t->status);
		isnull[COL_STATUS] = false;
	}
	if (r->sqlstate)
	{
		values[COL_SQLSTATE] = CStringGetTextDatum(r->sqlstate);
		isnull[COL_SQLSTATE] = false;
	}
	if (t->has_next)
		genroc_task_datums(&t->next, values + COL_EPOCH, isnull + COL_EPOCH);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
}

/*
 * genroc.complete_many(p_instances bigint[], p_epochs bigint[], p_outputs
 * jsonb[], p_worker text, p_queues text[]) → a row per report, in order.
 * The semantics are in 50_workers.sql.
 */
Datum
genroc_complete_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	Datum		args[6];
	char		nulls[6];
	Datum	   *ids = NULL;
	Datum	   *eps = NULL;
	Datum	   *outs;
	bool	   *out_nulls;
	int			n = 0;
	int			n_out;
	int			k;
	bool		isnull;
	SPITupleTable *locked;
	uint64		n_locked;
	bool	   *ends;
	int			n_ends;
	Datum		now;
	SPITupleTable *setwise = NULL;
	HeapTuple  *by_k;
	int			rest;
	bool		taken;
	bool		ended = false;
	bool		only_once = false;
	GenrocManyRow *rest_rows = NULL;
	int			n_rest_rows = 0;

	genroc_refuse_restricted();
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	for (k = 0; k < 5; k++)
	{
		args[k] = PG_ARGISNULL(k) ? (Datum) 0 : PG_GETARG_DATUM(k);
		nulls[k] = PG_ARGISNULL(k) ? 'n' : ' ';
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "genroc.complete_many: SPI_connect failed");

	taken = batch_taken(fcinfo, &ids, &eps, &n);
	if (taken)
	{
		/* a queue with a limit: the general path frees its room per report */
		(void) DirectFunctionCall1(genroc_flush_commit, CStringGetTextDatum("progress"));
		run(prepared(&limited_plan, limited_sql, 0, NULL), NULL, NULL, SPI_OK_SELECT);
		taken = !DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	if (!taken)
	{
		GenrocManyRow *rows;
		int			n_rows;

		run_general(fcinfo, args, nulls, &rows, &n_rows);
		for (k = 0; k < n_rows; k++)
			put_general(rsinfo, &rows[k]);
		genroc_engine_free_many(rows, n_rows);
		SPI_finish();
		return (Datum) 0;
	}

	{
		Oid			lock_types[1] = {INT8ARRAYOID};

		run(prepared(&lock_plan, lock_sql, 1, lock_types), args, NULL, SPI_OK_SELECT);
		locked = SPI_tuptable;
		n_locked = SPI_processed;
		refuse_other_roles(locked, n_locked, ids, eps, n);
	}
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), JSONBOID, -1, false, TYPALIGN_INT,
					  &outs, &out_nulls, &n_out);
	now = TimestampTzGetDatum(genroc_clock());

	/* the reports that end their instance, without a step */
	ends = palloc(sizeof(bool) * n);
	n_ends = find_ends(locked, n_locked, ids, eps, outs, n, ends);
	if (n_ends > 0)
	{
		write_ends(locked, n_locked, ids, eps, outs, n, ends, n_ends, now);
		ended = true;
	}

	/* the set-wise statement, for the others: each written report by its position */
	by_k = palloc0(sizeof(HeapTuple) * n);
	if (n_ends < n)
	{
		int			n_sw = n - n_ends;
		Datum	   *sw_ids = palloc(sizeof(Datum) * n_sw);
		Datum	   *sw_eps = palloc(sizeof(Datum) * n_sw);
		Datum	   *sw_outs = palloc(sizeof(Datum) * n_sw);
		int		   *sw_pos = palloc(sizeof(int) * n_sw);
		Oid			types[7] = {INT8ARRAYOID, INT8ARRAYOID, JSONBARRAYOID, TEXTOID, TEXTARRAYOID,
		TIMESTAMPTZOID, INT8OID};
		Datum		sw_args[7];
		char		sw_nulls[7];
		int			j = 0;

		for (k = 0; k < n; k++)
			if (!ends[k])
			{
				sw_ids[j] = ids[k];
				sw_eps[j] = eps[k];
				sw_outs[j] = outs[k];
				sw_pos[j] = k;
				j++;
			}
		sw_args[0] = n_ends == 0 ? args[0] : array_of(sw_ids, n_sw, INT8OID);
		sw_args[1] = n_ends == 0 ? args[1] : array_of(sw_eps, n_sw, INT8OID);
		sw_args[2] = n_ends == 0 ? args[2] : array_of(sw_outs, n_sw, JSONBOID);
		sw_args[3] = args[3];
		sw_args[5] = now;
		memcpy(sw_nulls, nulls, 5);
		sw_nulls[5] = ' ';
		sw_nulls[4] = sw_nulls[6] = 'n';
		if (nulls[3] != 'n')
		{
			bool		lease_null;

			handback_room(args[3], args[4], &sw_args[4], &sw_args[6], &lease_null);
			sw_nulls[4] = ' ';
			sw_nulls[6] = lease_null ? 'n' : ' ';
		}
		run(prepared(&setwise_plan, setwise_sql, 7, types), sw_args, sw_nulls, SPI_OK_SELECT);
		setwise = SPI_tuptable;
		check_setwise_type(setwise->tupdesc, rsinfo->setDesc);

		/* what became ready is announced */
		for (uint64 row = 0; row < SPI_processed; row++)
		{
			HeapTuple	t = setwise->vals[row];
			int64		pos = DatumGetInt64(SPI_getbinval(t, setwise->tupdesc, SW_K + 1, &isnull));
			char	   *status;

			if (isnull || pos < 1 || pos > n_sw || by_k[sw_pos[pos - 1]] != NULL)
				elog(ERROR, "genroc.complete_many: the set-wise statement answered a report twice");
			by_k[sw_pos[pos - 1]] = t;
			status = SPI_getvalue(t, setwise->tupdesc, SW_STATUS + 1);
			if (status == NULL)
				elog(ERROR, "genroc.complete_many: the set-wise statement answered a report without a status");
			if (strcmp(status, "succeeded") == 0)
				ended = true;
			else if (strcmp(status, "ready") == 0)
			{
				/*
				 * a wake-up for the listening workers, without the queue's
				 * name (anyone connected may LISTEN; docs/security.md "Guards");
				 * NOTIFY drops a repeat within a transaction
				 */
				Async_Notify("genroc", "");
			}
			else if (strcmp(status, "running") == 0)
			{
				Datum		oo = SPI_getbinval(t, setwise->tupdesc, SW_ONLY_ONCE + 1, &isnull);

				if (!isnull && DatumGetBool(oo))
					only_once = true;
			}
		}
	}
	if (ended)
		(void) DirectFunctionCall1(genroc_flush_commit, CStringGetTextDatum("terminal"));
	if (only_once)
		(void) DirectFunctionCall1(genroc_flush_commit, CStringGetTextDatum("only_once_claim"));

	/* the reports left, in their order, one by one */
	rest = 0;
	for (k = 0; k < n; k++)
		if (!ends[k] && by_k[k] == NULL)
			rest++;
	if (rest > 0)
	{
		Datum	   *r_ids = palloc(sizeof(Datum) * rest);
		Datum	   *r_eps = palloc(sizeof(Datum) * rest);
		Datum	   *r_outs = palloc(sizeof(Datum) * rest);
		int			j = 0;
		Datum		r_args[5];

		for (k = 0; k < n; k++)
			if (!ends[k] && by_k[k] == NULL)
			{
				r_ids[j] = ids[k];
				r_eps[j] = eps[k];
				r_outs[j] = outs[k];
				j++;
			}
		r_args[0] = array_of(r_ids, rest, INT8OID);
		r_args[1] = array_of(r_eps, rest, INT8OID);
		r_args[2] = array_of(r_outs, rest, JSONBOID);
		r_args[3] = args[3];
		r_args[4] = args[4];
		run_general(fcinfo, r_args, nulls, &rest_rows, &n_rest_rows);
		if (n_rest_rows != rest)
		{
			genroc_engine_free_many(rest_rows, n_rest_rows);
			elog(ERROR, "genroc.complete_many: the general path answered %d rows for %d reports",
				 n_rest_rows, rest);
		}
	}

	/* the result, in the order given */
	{
		int			next_rest = 0;
		Datum		succeeded = CStringGetTextDatum("succeeded");

		for (k = 0; k < n; k++)
		{
			Datum		values[RESULT_COLUMNS];
			bool		isnull_out[RESULT_COLUMNS];
			Datum		sw[SETWISE_COLUMNS];
			bool		sw_null[SETWISE_COLUMNS];
			bool		running;
			int			c;

			if (!ends[k] && by_k[k] == NULL)
			{
				put_general(rsinfo, &rest_rows[next_rest++]);
				continue;
			}
			for (c = 0; c < RESULT_COLUMNS; c++)
			{
				values[c] = (Datum) 0;
				isnull_out[c] = true;
			}
			values[COL_INSTANCE] = ids[k];
			isnull_out[COL_INSTANCE] = false;
			if (ends[k])
			{
				values[COL_STATUS] = succeeded;
				isnull_out[COL_STATUS] = false;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull_out);
				continue;
			}
			heap_deform_tuple(by_k[k], setwise->tupdesc, sw, sw_null);
			values[COL_STATUS] = sw[SW_STATUS];
			isnull_out[COL_STATUS] = sw_null[SW_STATUS];
			running = !sw_null[SW_STATUS] &&
				strcmp(TextDatumGetCString(sw[SW_STATUS]), "running") == 0;
			if (running)
			{
				/* the handed-back task, as claim returns it */
				for (c = 0; c < (int) lengthof(handed_back_from); c++)
				{
					values[handed_back_to[c]] = sw[handed_back_from[c]];
					isnull_out[handed_back_to[c]] = sw_null[handed_back_from[c]];
				}
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull_out);
		}
	}
	genroc_engine_free_many(rest_rows, n_rest_rows);
	SPI_finish();
	return (Datum) 0;
}
