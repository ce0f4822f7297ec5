/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  genroc.claim in C: the claim a worker makes in a loop, through
 *	  statements prepared once per backend; and genroc.claim_wait, the
 *	  same claim tried again on the backend's latch while nothing is ready.
 *
 * genroc.claim is the hottest entry point after the reports: every worker
 * calls it whenever it has room, and on a quiet queue its time is most of
 * the latency from a start to its handler.  As PL/pgSQL it spent as much
 * of that time between its statements (the interpreter, the cursor, one
 * RETURN NEXT per task) as in them.  Here it is the same statements with
 * the same parameters, each planned once per backend (generic plans: the
 * claim statement planned per call took longer than it ran).
 *
 * What it does itself is the common claim: the caller's own worker, no
 * queue limit anywhere.  It hands everything else to
 * genroc._claim_general (50_workers.sql, the full semantics) without
 * having changed anything that call would not change again: a null or
 * out-of-range argument, an unknown, stopped or foreign worker (its
 * errors, in their order), and any queue with global_concurrency,
 * rate_limit or partition_rate_limit.  So the errors, the limits and
 * their bookkeeping live in one place, and this file is only the fast
 * path through them.
 *
 * Glossary
 *	  heartbeat		the worker row's heartbeat_at (and its session, when it
 *					registered one), which every claim renews
 *	  general claim	genroc._claim_general, the PL/pgSQL claim
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "genroc.h"

PG_FUNCTION_INFO_V1(genroc_claim);
PG_FUNCTION_INFO_V1(genroc_claim_wait);

/*
 * The heartbeat, on the live worker's row; its settings back, and whether
 * any queue has a limit (then the general claim decides).  Not found: the
 * general claim says why (RC006, or 22004 for a null id).
 */
static const char *const heartbeat_sql =
"UPDATE genroc._workers w SET heartbeat_at = $2,"
"  session_pid = CASE WHEN w.session_pid IS NOT NULL THEN pg_catalog.pg_backend_pid() END,"
"  session_start = CASE WHEN w.session_pid IS NOT NULL THEN genroc._session_start() END"
" WHERE w.id = $1 AND w.stopped_at IS NULL"
" RETURNING w.owner::oid, w.drain_requested_at IS NOT NULL, w.concurrency, w.lease_duration,"
"  EXISTS (SELECT 1 FROM genroc._queues q"
"          WHERE q.global_concurrency > 0 OR q.rate_limit IS NOT NULL"
"             OR q.partition_rate_limit IS NOT NULL)";

/* The tasks a worker with a concurrency holds. */
static const char *const held_sql =
"SELECT pg_catalog.count(*)::int FROM genroc._instances i"
" WHERE i.status = 'running' AND i.lease_owner = $1";

/*
 * The claim itself, the general claim's statement for queues without
 * limits (its comments say why each part is written so): each queue's
 * heads through its claim index, merged; leased with a new epoch (each
 * row found by the version the candidate scan locked, its ctid, no second
 * key lookup; the id checked as well); their start logged (task_started
 * has no payload key).  $1 worker, $2 queues,
 * $3 how many, $4 now, $5 the worker's lease_duration.
 */
static const char *const claim_sql =
"WITH candidates AS ("
"  SELECT h.id, h.tid FROM pg_catalog.unnest(ARRAY(SELECT DISTINCT u FROM pg_catalog.unnest($2) AS u ORDER BY 1)) AS q (name)"
"  CROSS JOIN LATERAL ("
"    SELECT i.id, i.ctid AS tid, i.priority, i.eligible_at FROM genroc._instances i"
"    WHERE i.status = 'ready' AND i.queue = q.name AND i.eligible_at <= $4"
"    ORDER BY i.priority, i.eligible_at, i.id"
"    LIMIT $3"
"    FOR UPDATE SKIP LOCKED) h"
"  ORDER BY h.priority, h.eligible_at, h.id"
"  LIMIT $3),"
" claimed AS ("
"  UPDATE genroc._instances i SET"
"    status = 'running',"
"    lease_owner = $1,"
"    lease_epoch = genroc._fencing_epoch(i.lease_epoch),"
"    lease_expires = $4 + $5,"
"    timeout_at = CASE WHEN i.timeout_s IS NOT NULL THEN $4 + i.timeout_s * interval '1 second' END,"
"    updated_at = $4"
"  WHERE i.ctid = ANY (ARRAY(SELECT c.tid FROM candidates c)) AND i.id = ANY (ARRAY(SELECT c.id FROM candidates c))"
"  RETURNING i.id, i.lease_epoch, i.state, i.resource, i.task_input, i.only_once,"
"            i.timeout_s, i.attempt, i.lease_expires, i.priority, i.eligible_at, i.queue),"
" logged AS ("
"  INSERT INTO genroc._log (instance_id, at, event, state, detail)"
"  SELECT c.id, $4, 'task_started', c.state,"
"         genroc._detail('worker', $1, 'epoch', c.lease_epoch, 'attempt', c.attempt)"
"  FROM claimed c ORDER BY c.priority, c.eligible_at, c.id)"
" SELECT c.id, c.lease_epoch, c.state, c.resource, genroc._load_value(c.task_input), c.only_once,"
"        c.timeout_s, c.attempt, c.lease_expires, c.queue"
" FROM claimed c ORDER BY c.priority, c.eligible_at, c.id";

/* Everything else: the general claim, its rows passed on as they come. */
static const char *const general_sql =
"SELECT * FROM genroc._claim_general($1, $2, $3)";

/* The result's columns (genroc.claim's RETURNS TABLE), in order. */
#define CLAIM_COLUMNS 10
#define CLAIM_ONLY_ONCE 5		/* 0-based: the only_once column */

static SPIPlanPtr heartbeat_plan = NULL;
static SPIPlanPtr held_plan = NULL;
static SPIPlanPtr claim_plan = NULL;
static SPIPlanPtr general_plan = NULL;

#define prepared(plan, sql, nargs, types) genroc_prepared(plan, sql, nargs, types, "genroc.claim")
#define run(plan, values, nulls, expected) genroc_run(plan, values, nulls, expected, "genroc.claim")

/* Every row of the last statement into the function's result. */
static bool
pass_rows(ReturnSetInfo *rsinfo)
{
	bool		only_once = false;
	uint64		k;

	/* the rows go into the result as they are: their types must be its own */
	if (SPI_tuptable == NULL || SPI_tuptable->tupdesc->natts != CLAIM_COLUMNS ||
		rsinfo->setDesc->natts != CLAIM_COLUMNS)
		elog(ERROR, "genroc.claim: a claim statement answered an unexpected row type");
	for (k = 0; k < CLAIM_COLUMNS; k++)
		if (TupleDescAttr(SPI_tuptable->tupdesc, k)->atttypid !=
			TupleDescAttr(rsinfo->setDesc, k)->atttypid)
			elog(ERROR, "genroc.claim: column %d of a claim statement has an unexpected type",
				 (int) k + 1);
	for (k = 0; k < SPI_processed; k++)
	{
		Datum		values[CLAIM_COLUMNS];
		bool		isnull[CLAIM_COLUMNS];

		heap_deform_tuple(SPI_tuptable->vals[k], SPI_tuptable->tupdesc, values, isnull);
		if (!isnull[CLAIM_ONLY_ONCE] && DatumGetBool(values[CLAIM_ONLY_ONCE]))
			only_once = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	return only_once;
}

/* What one claim came to (claim_once). */
typedef enum ClaimEnd
{
	CLAIM_TOOK,					/* the fast path leased tasks */
	CLAIM_NONE_READY,			/* the fast path found no ready task */
	CLAIM_OTHER					/* the general claim ran, or the worker may take nothing now */
} ClaimEnd;

/*
 * One claim with the arguments of genroc.claim (the first three of fcinfo)
 * at `now`, its rows added to the function's result: the semantics of
 * genroc._claim_general (50_workers.sql).  *only_once: an OnlyOnce task was
 * leased (its claim must be flushed).
 */
static ClaimEnd
claim_once(FunctionCallInfo fcinfo, ReturnSetInfo *rsinfo, TimestampTz at, bool *only_once)
{
	Oid			hb_types[2] = {TEXTOID, TIMESTAMPTZOID};
	Oid			held_types[1] = {TEXTOID};
	Oid			claim_types[5] = {TEXTOID, TEXTARRAYOID, INT4OID, TIMESTAMPTZOID, INTERVALOID};
	Oid			general_types[3] = {TEXTOID, TEXTARRAYOID, INT4OID};
	Datum		now = TimestampTzGetDatum(at);
	Datum		lease_duration = (Datum) 0;
	bool		general;
	int32		n;
	ClaimEnd	end;

	*only_once = false;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "genroc.claim: SPI_connect failed");

	/* a null or out-of-range argument: the general claim's errors */
	general = PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_GETARG_INT32(2) < 1;
	n = general ? 0 : PG_GETARG_INT32(2);

	if (!general)
	{
		Datum		hb_args[2] = {PG_GETARG_DATUM(0), now};
		bool		isnull;
		Datum		owner;
		bool		draining;
		Datum		concurrency;
		bool		no_concurrency;
		bool		limited;

		(void) DirectFunctionCall1(genroc_flush_commit, CStringGetTextDatum("progress"));
		run(prepared(&heartbeat_plan, heartbeat_sql, 2, hb_types), hb_args, NULL,
			SPI_OK_UPDATE_RETURNING);
		if (SPI_processed != 1)
			general = true;		/* unknown or stopped: RC006, 22004 */
		else
		{
			HeapTuple	w = SPI_tuptable->vals[0];
			TupleDesc	wd = SPI_tuptable->tupdesc;

			owner = SPI_getbinval(w, wd, 1, &isnull);
			/* another role's worker: _check_worker decides (42501 or an admin) */
			if (!isnull && DatumGetObjectId(owner) != genroc_caller_id())
				general = true;
			draining = DatumGetBool(SPI_getbinval(w, wd, 2, &isnull));
			concurrency = SPI_getbinval(w, wd, 3, &no_concurrency);
			lease_duration = SPI_datumTransfer(SPI_getbinval(w, wd, 4, &isnull), false,
											   sizeof(Interval));
			limited = DatumGetBool(SPI_getbinval(w, wd, 5, &isnull));
			if (!general && draining)
			{
				/* a draining worker takes nothing more (worker_drain) */
				SPI_finish();
				return CLAIM_OTHER;
			}
			if (!general && !no_concurrency)
			{
				Datum		held_args[1] = {PG_GETARG_DATUM(0)};

				run(prepared(&held_plan, held_sql, 1, held_types), held_args, NULL, SPI_OK_SELECT);
				n = Min(n, DatumGetInt32(concurrency) -
						DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 1, &isnull)));
				if (n <= 0)
				{
					SPI_finish();
					return CLAIM_OTHER;
				}
			}
			/* a queue with a limit: the general claim applies it */
			general = general || limited;
		}
	}

	if (general)
	{
		Datum		args[3];
		char		nulls[3];
		int			k;

		for (k = 0; k < 3; k++)
		{
			args[k] = PG_ARGISNULL(k) ? (Datum) 0 : PG_GETARG_DATUM(k);
			nulls[k] = PG_ARGISNULL(k) ? 'n' : ' ';
		}
		run(prepared(&general_plan, general_sql, 3, general_types), args, nulls, SPI_OK_SELECT);
		/* the general claim makes its own only_once flush */
		(void) pass_rows(rsinfo);
		end = CLAIM_OTHER;
	}
	else
	{
		Datum		args[5] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), Int32GetDatum(n), now,
		lease_duration};

		run(prepared(&claim_plan, claim_sql, 5, claim_types), args, NULL, SPI_OK_SELECT);
		end = SPI_processed > 0 ? CLAIM_TOOK : CLAIM_NONE_READY;
		*only_once = pass_rows(rsinfo);
	}
	SPI_finish();
	return end;
}

/* The claim of an OnlyOnce task must be on disk before its handler runs. */
static void
flush_only_once(bool only_once)
{
	if (only_once)
		(void) DirectFunctionCall1(genroc_flush_commit, CStringGetTextDatum("only_once_claim"));
}

/*
 * genroc.claim(p_worker text, p_queues text[], p_n int) → the leased tasks.
 * The semantics are genroc._claim_general's (50_workers.sql).
 */
Datum
genroc_claim(PG_FUNCTION_ARGS)
{
	bool		only_once;

	genroc_refuse_restricted();
	InitMaterializedSRF(fcinfo, 0);
	(void) claim_once(fcinfo, (ReturnSetInfo *) fcinfo->resultinfo, genroc_clock(), &only_once);
	flush_only_once(only_once);
	return (Datum) 0;
}

/*
 * genroc.claim_wait(p_worker text, p_queues text[], p_n int, p_wait
 * interval) → the leased tasks: genroc.claim, and while the fast path
 * finds no ready task, a wait of up to p_wait for one (see 50_workers.sql).
 * The waits are on this backend's latch, which a NOTIFY on a channel the
 * session listens on sets (async.c signals every listening backend of the
 * database, inside a transaction or not); a claim is tried again when it
 * is set and at least every kRecheckMs.  Each try reads the clock (the
 * transaction's start time would leave out every task that became ready
 * after it) and takes a new snapshot (SPI, read committed).
 */
#define kRecheckMs 250
#define kMaxWaitMs (60 * 1000)

Datum
genroc_claim_wait(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	Interval   *wait;
	int64		wait_ms;
	TimestampTz deadline;
	bool		only_once;

	genroc_refuse_restricted();
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("p_wait must not be null")));
	wait = PG_GETARG_INTERVAL_P(3);
	if (wait->month != 0 || wait->day != 0 || wait->time < 0 ||
		wait->time > (int64) kMaxWaitMs * 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("p_wait must be between 0 and %d seconds", kMaxWaitMs / 1000)));
	wait_ms = wait->time / 1000;
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);
	for (;;)
	{
		ClaimEnd	end = claim_once(fcinfo, rsinfo, genroc_clock_now(), &only_once);
		long		left;

		/* a snapshot for the whole transaction would never see a new task */
		if (end != CLAIM_NONE_READY || IsolationUsesXactSnapshot())
			break;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(left, kRecheckMs), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	flush_only_once(only_once);
	return (Datum) 0;
}
