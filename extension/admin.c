/*-------------------------------------------------------------------------
 *
 * admin.c
 *	  The SQL functions of the queues and workers administration that the
 *	  engine implements (engine/admin.hpp): worker_register,
 *	  worker_heartbeat, worker_drain, worker_stop, list_workers, queue_set,
 *	  queue_drop, list_queues.  Each
 *	  opens SPI, calls the engine through engine_calls.h and raises its
 *	  error, if any, once SPI is closed (engine_entry.h, as definitions.c).
 *
 * SECURITY DEFINER with a pinned search_path in their CREATE FUNCTION
 * (extension/sql/50_workers.sql, 55_queues.sql).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "engine_calls.h"
#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_worker_register);
PG_FUNCTION_INFO_V1(genroc_worker_heartbeat);
PG_FUNCTION_INFO_V1(genroc_worker_drain);
PG_FUNCTION_INFO_V1(genroc_worker_stop);
PG_FUNCTION_INFO_V1(genroc_list_workers);
PG_FUNCTION_INFO_V1(genroc_queue_set);
PG_FUNCTION_INFO_V1(genroc_queue_drop);
PG_FUNCTION_INFO_V1(genroc_list_queues);

/* text[] of n C strings */
static Datum
text_array(char **items, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(1, n));
	int			k;

	for (k = 0; k < n; k++)
		d[k] = CStringGetTextDatum(items[k]);
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* genroc.worker_register(p_worker text, p_options jsonb) */
Datum
genroc_worker_register(PG_FUNCTION_ARGS)
{
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);
	char	   *options = genroc_jsonb_arg_or_null(fcinfo, 1);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_worker_register(worker, options, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.worker_heartbeat(p_worker text) */
Datum
genroc_worker_heartbeat(PG_FUNCTION_ARGS)
{
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_worker_heartbeat(worker, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.worker_drain(p_worker text) */
Datum
genroc_worker_drain(PG_FUNCTION_ARGS)
{
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_worker_drain(worker, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.worker_stop(p_worker text) */
Datum
genroc_worker_stop(PG_FUNCTION_ARGS)
{
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);

	GENROC_ENGINE_CALL(genroc_engine_worker_stop(worker, &engine_err));
	PG_RETURN_VOID();
}

/* genroc.list_workers() */
Datum
genroc_list_workers(PG_FUNCTION_ARGS)
{
	GenrocWorkerRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_list_workers(&rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		GenrocWorkerRow *w = &rows[k];
		Datum		values[13];
		bool		nulls[13] = {false};
		values[0] = CStringGetTextDatum(w->worker);
		values[1] = CStringGetTextDatum(w->host);
		values[2] = text_array(w->queues, w->nqueues);
		values[3] = Int32GetDatum((int32) w->concurrency);
		nulls[3] = !w->has_concurrency;
		values[4] = Int64GetDatum(w->lease_duration_ms);
		values[5] = Int64GetDatum(w->stale_after_ms);
		values[6] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(w->started_us));
		values[7] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(w->heartbeat_us));
		values[8] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(w->stopped_us));
		nulls[8] = !w->has_stopped;
		values[9] = BoolGetDatum(w->live != 0);
		values[10] = Int64GetDatum(w->running);
		values[11] = CStringGetTextDatum(w->durability);
		values[12] = BoolGetDatum(w->draining != 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_workers(rows, n);
	return (Datum) 0;
}

/* genroc.queue_set(p_name text, p_options jsonb) */
Datum
genroc_queue_set(PG_FUNCTION_ARGS)
{
	char	   *name = genroc_text_arg_or_null(fcinfo, 0);
	char	   *options = genroc_jsonb_arg_or_null(fcinfo, 1);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_queue_set(name, options, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.queue_drop(p_name text) */
Datum
genroc_queue_drop(PG_FUNCTION_ARGS)
{
	char	   *name = genroc_text_arg_or_null(fcinfo, 0);

	GENROC_ENGINE_CALL(genroc_engine_queue_drop(name, &engine_err));
	PG_RETURN_VOID();
}

/* genroc.list_queues() */
Datum
genroc_list_queues(PG_FUNCTION_ARGS)
{
	GenrocQueueRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_list_queues(&rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		GenrocQueueRow *q = &rows[k];
		Datum		values[15];
		bool		nulls[15] = {false};

		values[0] = CStringGetTextDatum(q->name);
		values[1] = CStringGetTextDatum(q->settings.kind);
		nulls[2] = q->settings.handler == NULL;
		values[2] = q->settings.handler != NULL ? CStringGetTextDatum(q->settings.handler) : (Datum) 0;
		nulls[3] = q->settings.match == NULL;
		values[3] = q->settings.match != NULL ? DirectFunctionCall1(jsonb_in, CStringGetDatum(q->settings.match))
			: (Datum) 0;
		values[4] = Int32GetDatum((int32) q->settings.global_concurrency);
		values[5] = Int32GetDatum((int32) q->settings.partition_concurrency);
		nulls[6] = nulls[7] = !q->settings.has_rate;
		values[6] = Int32GetDatum((int32) q->settings.rate_limit);
		values[7] = Int64GetDatum(q->settings.rate_period_ms);
		nulls[8] = nulls[9] = !q->settings.has_partition_rate;
		values[8] = Int32GetDatum((int32) q->settings.partition_rate_limit);
		values[9] = Int64GetDatum(q->settings.partition_rate_period_ms);
		values[10] = Int64GetDatum(q->depth);
		values[11] = Int64GetDatum(q->queued);
		values[12] = Int64GetDatum(q->running);
		values[13] = text_array(q->workers, q->nworkers);
		nulls[14] = !q->has_oldest_ready;
		values[14] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(q->oldest_ready_us));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_queues(rows, n);
	return (Datum) 0;
}
