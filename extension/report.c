/*-------------------------------------------------------------------------
 *
 * report.c
 *	  A worker's report of a task (genroc.complete, fail,
 *	  complete_and_claim, fail_and_claim): the engine's operations
 *	  (engine/report.cpp) between SPI_connect and SPI_finish, their error
 *	  raised after C++ returned (definitions.c's frame, genroc_engine_begin
 *	  / _end).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_complete);
PG_FUNCTION_INFO_V1(genroc_fail);
PG_FUNCTION_INFO_V1(genroc_complete_and_claim);
PG_FUNCTION_INFO_V1(genroc_fail_and_claim);

#define ARG_ID(k) (PG_ARGISNULL(k) ? 0 : PG_GETARG_INT64(k))

/* genroc.complete(p_instance bigint, p_epoch bigint, p_output jsonb) RETURNS text */
Datum
genroc_complete(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *output = genroc_jsonb_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_complete(!PG_ARGISNULL(0), ARG_ID(0), !PG_ARGISNULL(1), ARG_ID(1),
											  output, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc.fail(p_instance bigint, p_epoch bigint, p_error text, p_cause text) RETURNS text */
Datum
genroc_fail(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *error = genroc_text_arg_or_null(fcinfo, 2);
	char	   *cause = genroc_text_arg_or_null(fcinfo, 3);

	GENROC_ENGINE_CALL(genroc_engine_fail(!PG_ARGISNULL(0), ARG_ID(0), !PG_ARGISNULL(1), ARG_ID(1), error,
										  cause, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* The one row of complete_and_claim / fail_and_claim; frees *r. */
static Datum
report_row(FunctionCallInfo fcinfo, GenrocReportResult *r)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[11] = {0};
	bool		nulls[11];
	int			k;

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < 11; k++)
		nulls[k] = true;
	values[0] = CStringGetTextDatum(r->status);
	nulls[0] = false;
	if (r->has_next)
	{
		values[1] = Int64GetDatum(r->next.instance_id);
		nulls[1] = false;
		genroc_task_datums(&r->next, values + 2, nulls + 2);
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	genroc_engine_free_report(r);
	return (Datum) 0;
}

/* genroc.complete_and_claim(p_instance bigint, p_epoch bigint, p_output jsonb,
 * p_worker text, p_queues text[]) RETURNS TABLE (status text, instance_id
 * bigint, epoch bigint, state text, resource text, input jsonb, only_once
 * boolean, timeout_s int, attempt int, lease_expires timestamptz, queue text) */
Datum
genroc_complete_and_claim(PG_FUNCTION_ARGS)
{
	GenrocReportResult r;
	int			has_queues;
	int			n;
	char	   *output = genroc_jsonb_arg_or_null(fcinfo, 2);
	char	   *worker = genroc_text_arg_or_null(fcinfo, 3);
	const char **queues = genroc_text_array_arg(fcinfo, 4, &has_queues, &n);

	GENROC_ENGINE_CALL(genroc_engine_complete_and_claim(!PG_ARGISNULL(0), ARG_ID(0), !PG_ARGISNULL(1),
														ARG_ID(1), output, worker, has_queues, queues, n, &r,
														&engine_err));
	return report_row(fcinfo, &r);
}

/* genroc.fail_and_claim(p_instance bigint, p_epoch bigint, p_error text,
 * p_cause text, p_worker text, p_queues text[]) RETURNS TABLE (as
 * complete_and_claim) */
Datum
genroc_fail_and_claim(PG_FUNCTION_ARGS)
{
	GenrocReportResult r;
	int			has_queues;
	int			n;
	char	   *error = genroc_text_arg_or_null(fcinfo, 2);
	char	   *cause = genroc_text_arg_or_null(fcinfo, 3);
	char	   *worker = genroc_text_arg_or_null(fcinfo, 4);
	const char **queues = genroc_text_array_arg(fcinfo, 5, &has_queues, &n);

	GENROC_ENGINE_CALL(genroc_engine_fail_and_claim(!PG_ARGISNULL(0), ARG_ID(0), !PG_ARGISNULL(1), ARG_ID(1),
													error, cause, worker, has_queues, queues, n, &r,
													&engine_err));
	return report_row(fcinfo, &r);
}
