/*-------------------------------------------------------------------------
 *
 * start.c
 *	  genroc.start and genroc.start_many's entry points: the engine's
 *	  operations (engine/start.cpp) between SPI_connect and SPI_finish, their
 *	  error raised after C++ returned (definitions.c's frame,
 *	  genroc_engine_begin / _end).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_start);
PG_FUNCTION_INFO_V1(genroc_start_many);

/* The rows as the function's result set: (instance_id, is_new, status) or,
 * without is_new, (instance_id, status). */
static Datum
started_rows(FunctionCallInfo fcinfo, GenrocStarted *rows, int n, bool with_is_new)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		Datum		values[3];
		bool		nulls[3] = {false};
		int			c = 0;

		values[c++] = Int64GetDatum(rows[k].instance_id);
		if (with_is_new)
			values[c++] = BoolGetDatum(rows[k].is_new != 0);
		values[c++] = CStringGetTextDatum(rows[k].status);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_started(rows, n);
	return (Datum) 0;
}

/* genroc.start(p_definition text, p_input jsonb, p_options jsonb) RETURNS
 * TABLE (instance_id bigint, is_new boolean, status text) */
Datum
genroc_start(PG_FUNCTION_ARGS)
{
	GenrocStarted *rows = NULL;
	int			n = 0;
	char	   *definition = genroc_text_arg_or_null(fcinfo, 0);
	char	   *input = genroc_jsonb_arg_or_null(fcinfo, 1);
	char	   *options = genroc_jsonb_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_start(definition, input, options, &rows, &n, &engine_err));
	return started_rows(fcinfo, rows, n, true);
}

/* genroc.start_many(p_definition text, p_inputs jsonb, p_options jsonb)
 * RETURNS TABLE (instance_id bigint, status text) */
Datum
genroc_start_many(PG_FUNCTION_ARGS)
{
	GenrocStarted *rows = NULL;
	int			n = 0;
	char	   *definition = genroc_text_arg_or_null(fcinfo, 0);
	char	   *inputs = genroc_jsonb_arg_or_null(fcinfo, 1);
	char	   *options = genroc_jsonb_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_start_many(definition, inputs, options, &rows, &n, &engine_err));
	return started_rows(fcinfo, rows, n, false);
}
