/*-------------------------------------------------------------------------
 *
 * instances.c
 *	  genroc.get_instance, list_instances, history and capabilities: the
 *	  engine's reads (engine/instances.cpp) in the frame of definitions.c
 *	  (genroc_engine_begin / genroc_engine_end).  The SQL declarations,
 *	  STABLE SECURITY DEFINER with a pinned search_path, are in
 *	  extension/sql/40_instances.sql and 12_roles.sql.
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

PG_FUNCTION_INFO_V1(genroc_get_instance);
PG_FUNCTION_INFO_V1(genroc_list_instances);
PG_FUNCTION_INFO_V1(genroc_history);
PG_FUNCTION_INFO_V1(genroc_capabilities);

/* genroc.get_instance(p_instance bigint[, p_options jsonb]): jsonb */
Datum
genroc_get_instance(PG_FUNCTION_ARGS)
{
	char	   *options = PG_NARGS() > 1 ? genroc_jsonb_arg_or_null(fcinfo, 1) : NULL;
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_get_instance(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0),
												  options, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.list_instances(p_filter jsonb): SETOF jsonb */
Datum
genroc_list_instances(PG_FUNCTION_ARGS)
{
	char	   *filter = genroc_jsonb_arg_or_null(fcinfo, 0);
	char	  **rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_list_instances(filter, &rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (k = 0; k < n; k++)
	{
		Datum		value = genroc_jsonb_answer(rows[k]);
		bool		null = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &null);
	}
	genroc_engine_free(rows);
	return (Datum) 0;
}

/*
 * genroc.history(p_instance bigint[, p_options jsonb]):
 * TABLE (seq bigint, at timestamptz, event text, state text, detail jsonb)
 */
Datum
genroc_history(PG_FUNCTION_ARGS)
{
	char	   *options = PG_NARGS() > 1 ? genroc_jsonb_arg_or_null(fcinfo, 1) : NULL;
	GenrocLogRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_history(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0),
											 options, &rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = Int64GetDatum(rows[k].seq);
		values[1] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(rows[k].at_us));
		values[2] = CStringGetTextDatum(rows[k].event);
		if (rows[k].state != NULL)
			values[3] = CStringGetTextDatum(rows[k].state);
		else
			nulls[3] = true;
		if (rows[k].detail != NULL)
			values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(rows[k].detail));
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_log(rows, n);
	return (Datum) 0;
}

/* genroc.capabilities(): jsonb */
Datum
genroc_capabilities(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_capabilities(&json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
