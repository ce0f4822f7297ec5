/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  genroc.claim and genroc.claim_wait: the engine's claim
 *	  (engine/claim.cpp, through claim_calls.cpp) between SPI_connect and
 *	  SPI_finish, its rows put into the function's result; claim_wait's
 *	  wait on the backend's latch between its rounds; the lease epoch the
 *	  claim's statements draw (genroc._fencing_epoch).
 *
 * genroc.claim is the hottest entry point after the reports: every worker
 * calls it whenever it has room.  The engine's fast path is one statement
 * planned once per backend (engine/statements_claim.def, CLAIM_TAKE), the
 * heartbeat another; the errors, the limits and their bookkeeping are the
 * engine's too, written once for both stores.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "genroc.h"
#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_claim);
PG_FUNCTION_INFO_V1(genroc_claim_wait);
PG_FUNCTION_INFO_V1(genroc_fencing_epoch);

/* The result's columns (genroc.claim's RETURNS TABLE), in order. */
#define CLAIM_COLUMNS 10

/* genroc.claim's first three arguments as the engine takes them. */
typedef struct ClaimArgs
{
	char	   *worker;
	int			has_queues;
	const char **queues;
	int			nqueues;
	int			has_n;
	int64_t		n;
} ClaimArgs;

static void
claim_args(FunctionCallInfo fcinfo, ClaimArgs *a)
{
	a->worker = genroc_text_arg_or_null(fcinfo, 0);
	a->queues = genroc_text_array_arg(fcinfo, 1, &a->has_queues, &a->nqueues);
	a->has_n = !PG_ARGISNULL(2);
	a->n = a->has_n ? PG_GETARG_INT32(2) : 0;
}

/*
 * One claim at `at`, its tasks added to the function's result; what it
 * came to (GENROC_CLAIM_*).
 */
static int
claim_once(ReturnSetInfo *rsinfo, const ClaimArgs *a, TimestampTz at)
{
	GenrocClaimTask *tasks = NULL;
	int			ntasks = 0;
	int			end = GENROC_CLAIM_OTHER;
	int64_t		now_us = (int64_t) at + (int64_t) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_claim(a->worker, a->has_queues, a->queues, a->nqueues, a->has_n, a->n,
										   now_us, &tasks, &ntasks, &end, &engine_err));
	for (k = 0; k < ntasks; k++)
	{
		GenrocClaimTask *t = &tasks[k];
		Datum		values[CLAIM_COLUMNS];
		bool		nulls[CLAIM_COLUMNS] = {0};

		values[0] = Int64GetDatum(t->instance_id);
		genroc_task_datums(t, values + 1, nulls + 1);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_claim(tasks, ntasks);
	return end;
}

/*
 * genroc.claim(p_worker text, p_queues text[], p_n int) → the leased tasks.
 * The semantics are in 50_workers.sql's comments; the engine's claim.
 */
Datum
genroc_claim(PG_FUNCTION_ARGS)
{
	ClaimArgs	a;

	genroc_refuse_restricted();
	claim_args(fcinfo, &a);
	InitMaterializedSRF(fcinfo, 0);
	(void) claim_once((ReturnSetInfo *) fcinfo->resultinfo, &a, genroc_clock());
	return (Datum) 0;
}

/*
 * genroc.claim_wait(p_worker text, p_queues text[], p_n int, p_wait
 * interval) → the leased tasks: genroc.claim, and while the engine's fast
 * path finds no ready task, a wait of up to p_wait for one (see
 * 50_workers.sql).
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
	ClaimArgs	a;
	Interval   *wait;
	int64		wait_ms;
	TimestampTz deadline;

	genroc_refuse_restricted();
	if (PG_ARGISNULL(3))
		genroc_refuse_null("p_wait");
	wait = PG_GETARG_INTERVAL_P(3);
	if (wait->month != 0 || wait->day != 0 || wait->time < 0 ||
		wait->time > (int64) kMaxWaitMs * 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("p_wait must be between 0 and %d seconds", kMaxWaitMs / 1000)));
	wait_ms = wait->time / 1000;
	claim_args(fcinfo, &a);
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);
	for (;;)
	{
		int			end = claim_once(rsinfo, &a, genroc_clock_now());
		long		left;

		/* a snapshot for the whole transaction would never see a new task */
		if (end != GENROC_CLAIM_NONE_READY || IsolationUsesXactSnapshot())
			break;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(left, kRecheckMs), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return (Datum) 0;
}

/*
 * genroc._fencing_epoch(previous bigint) → bigint: a new lease epoch, the
 * engine's (engine/claim.hpp, new_epoch: why it is random, where its bytes
 * come from).
 */
Datum
genroc_fencing_epoch(PG_FUNCTION_ARGS)
{
	GenrocEngineError err = {0};
	int64_t		epoch = 0;

	if (!genroc_engine_new_epoch(PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0), &epoch, &err))
		genroc_raise_engine_error(&err);
	PG_RETURN_INT64(epoch);
}
