/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  genroc.queue_stats, metrics and tickers: the engine's
 *	  (engine/metrics.cpp) in the frame of definitions.c
 *	  (genroc_engine_begin / genroc_engine_end).  The SQL declarations,
 *	  SECURITY DEFINER with a pinned search_path, are in
 *	  extension/sql/75_metrics.sql.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_queue_stats);
PG_FUNCTION_INFO_V1(genroc_metrics);
PG_FUNCTION_INFO_V1(genroc_tickers);

/* genroc.queue_stats(): (queue, ready, oldest_ready_s, queued, running, workers) */
Datum
genroc_queue_stats(PG_FUNCTION_ARGS)
{
	GenrocQueueStatRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_queue_stats(&rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		values[0] = CStringGetTextDatum(rows[k].queue);
		values[1] = Int64GetDatum(rows[k].ready);
		values[2] = Float8GetDatum(rows[k].oldest_ready_s);
		values[3] = Int64GetDatum(rows[k].queued);
		values[4] = Int64GetDatum(rows[k].running);
		values[5] = Int32GetDatum((int32) rows[k].workers);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_queue_stats(rows, n);
	return (Datum) 0;
}

/* genroc.metrics(p_max_definitions int): jsonb */
Datum
genroc_metrics(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_metrics(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT32(0),
											 &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.tickers(): (ticked_by, kind, role, first_tick_at, last_tick_at, ago_ms, ticks) */
Datum
genroc_tickers(PG_FUNCTION_ARGS)
{
	GenrocTickerRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_tickers(&rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		Datum		values[7];
		bool		nulls[7] = {false, false, false, false, false, false, false};

		values[0] = CStringGetTextDatum(rows[k].ticked_by);
		values[1] = CStringGetTextDatum(rows[k].kind);
		values[2] = CStringGetTextDatum(rows[k].role);
		values[3] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(rows[k].first_tick_us));
		values[4] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(rows[k].last_tick_us));
		values[5] = Int64GetDatum(rows[k].ago_ms);
		values[6] = Int64GetDatum(rows[k].ticks);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_tickers(rows, n);
	return (Datum) 0;
}
