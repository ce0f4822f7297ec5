/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  genroc.prune's and genroc.tick's entry points: the engine's operations
 *	  (engine/retention.cpp, engine/tick.cpp) between SPI_connect and
 *	  SPI_finish, their error raised after C++ returned (definitions.c's
 *	  frame, genroc_engine_begin / _end).  The in-database ticker
 *	  (ticker.c) calls genroc.tick() through SPI like any session.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/timestamp.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_prune);
PG_FUNCTION_INFO_V1(genroc_tick);

static GenrocRetention
retention_arg(FunctionCallInfo fcinfo, int k)
{
	GenrocRetention r = {0};

	if (!PG_ARGISNULL(k))
	{
		Interval   *span = PG_GETARG_INTERVAL_P(k);

		r.present = 1;
		r.months = span->month;
		r.days = span->day;
		r.us = span->time;
	}
	return r;
}

/* genroc.prune(p_log_retention interval, p_instance_retention interval, p_limit int) RETURNS jsonb */
Datum
genroc_prune(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;
	GenrocRetention log_retention = retention_arg(fcinfo, 0);
	GenrocRetention instance_retention = retention_arg(fcinfo, 1);

	GENROC_ENGINE_CALL(genroc_engine_prune(log_retention, instance_retention, !PG_ARGISNULL(2),
										   PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2), &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.tick(p_limit int) RETURNS jsonb */
Datum
genroc_tick(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_tick(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT32(0), &json,
										  &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
