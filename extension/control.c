/*-------------------------------------------------------------------------
 *
 * control.c
 *	  The entry points of an instance's control (genroc.cancel, retry,
 *	  resume, genroc._cancel_tree), its events (genroc.emit,
 *	  genroc._deliver_event), a worker's leases (genroc.renew, release) and
 *	  claims (genroc.claim_activity, claim_wake):
 *	  the engine's operations (engine/control.cpp) between SPI_connect and
 *	  SPI_finish, their error raised after C++ returned (definitions.c's
 *	  frame, genroc_engine_begin / _end).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_cancel);
PG_FUNCTION_INFO_V1(genroc_cancel_tree);
PG_FUNCTION_INFO_V1(genroc_retry);
PG_FUNCTION_INFO_V1(genroc_resume);
PG_FUNCTION_INFO_V1(genroc_emit);
PG_FUNCTION_INFO_V1(genroc_deliver_event);
PG_FUNCTION_INFO_V1(genroc_renew);
PG_FUNCTION_INFO_V1(genroc_release);
PG_FUNCTION_INFO_V1(genroc_claim_activity);
PG_FUNCTION_INFO_V1(genroc_claim_wake);

/* A bigint[] argument's elements (NULL elements are no id); *has 0 for SQL NULL. */
static int64_t *
ids_arg(FunctionCallInfo fcinfo, int k, int *has, int *n)
{
	ArrayType  *a;
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	int64_t    *ids;
	int			i;

	*n = 0;
	*has = !PG_ARGISNULL(k);
	if (!*has)
		return NULL;
	a = PG_GETARG_ARRAYTYPE_P(k);
	deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &count);
	ids = palloc((count + 1) * sizeof(int64_t));
	for (i = 0; i < count; i++)
		if (!nulls[i])
			ids[(*n)++] = DatumGetInt64(elems[i]);
	return ids;
}

/* genroc.cancel(p_instance bigint, p_error text, p_cause text) RETURNS text */
Datum
genroc_cancel(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *error = genroc_text_arg_or_null(fcinfo, 1);
	char	   *cause = genroc_text_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_cancel(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0),
											error, cause, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc._cancel_tree(p_instance bigint, p_cause text, p_children_cause text,
 * p_error text) RETURNS void; a NULL instance is none */
Datum
genroc_cancel_tree(PG_FUNCTION_ARGS)
{
	char	   *cause = genroc_text_arg_or_null(fcinfo, 1);
	char	   *children_cause = genroc_text_arg_or_null(fcinfo, 2);
	char	   *error = genroc_text_arg_or_null(fcinfo, 3);

	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	GENROC_ENGINE_CALL(genroc_engine_cancel_tree(PG_GETARG_INT64(0), cause, children_cause, error,
												 &engine_err));
	PG_RETURN_VOID();
}

static Datum
run_again(FunctionCallInfo fcinfo, char *output)
{
	char	   *status = NULL;

	GENROC_ENGINE_CALL(genroc_engine_run_again(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0),
											   output, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc.retry(p_instance bigint) RETURNS text */
Datum
genroc_retry(PG_FUNCTION_ARGS)
{
	return run_again(fcinfo, NULL);
}

/* genroc.resume(p_instance bigint, p_output jsonb) RETURNS text; a NULL
 * output is JSON null */
Datum
genroc_resume(PG_FUNCTION_ARGS)
{
	char	   *output = genroc_jsonb_arg_or_null(fcinfo, 1);

	return run_again(fcinfo, output ? output : pstrdup("null"));
}

/* genroc.emit(p_instance bigint, p_name text, p_payload jsonb) RETURNS text */
Datum
genroc_emit(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *name = genroc_text_arg_or_null(fcinfo, 1);
	char	   *payload = genroc_jsonb_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_emit(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0), name,
										  payload, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc._deliver_event(p_instance bigint, p_name text, p_payload jsonb)
 * RETURNS text (STRICT) */
Datum
genroc_deliver_event(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *name = genroc_text_arg_or_null(fcinfo, 1);
	char	   *payload = genroc_jsonb_arg_or_null(fcinfo, 2);

	GENROC_ENGINE_CALL(genroc_engine_deliver_event(PG_GETARG_INT64(0), name, payload, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc.renew(p_worker text, p_instances bigint[]) RETURNS SETOF bigint */
Datum
genroc_renew(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64_t    *kept = NULL;
	int			nkept = 0;
	int			has;
	int			n;
	int			k;
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);
	int64_t    *ids = ids_arg(fcinfo, 1, &has, &n);

	GENROC_ENGINE_CALL(genroc_engine_renew(worker, has, ids, n, &kept, &nkept, &engine_err));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (k = 0; k < nkept; k++)
	{
		Datum		value = Int64GetDatum(kept[k]);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	genroc_engine_free(kept);
	return (Datum) 0;
}

/* genroc.release(p_worker text, p_instances bigint[]) RETURNS int */
Datum
genroc_release(PG_FUNCTION_ARGS)
{
	int64_t		released = 0;
	int			has;
	int			n;
	char	   *worker = genroc_text_arg_or_null(fcinfo, 0);
	int64_t    *ids = ids_arg(fcinfo, 1, &has, &n);

	GENROC_ENGINE_CALL(genroc_engine_release(worker, has, ids, n, &released, &engine_err));
	PG_RETURN_INT32((int32) released);
}

/* genroc.claim_activity(p_activity text, p_worker text, p_n int) RETURNS
 * TABLE (token text, instance_id bigint, activity text, input jsonb,
 * heartbeat_s int, timeout_s int) */
Datum
genroc_claim_activity(PG_FUNCTION_ARGS)
{
	GenrocActivityClaim *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;
	char	   *activity = genroc_text_arg_or_null(fcinfo, 0);
	char	   *worker = genroc_text_arg_or_null(fcinfo, 1);

	GENROC_ENGINE_CALL(genroc_engine_claim_activity(activity, worker, !PG_ARGISNULL(2),
													PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2), &rows, &n,
													&engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		GenrocActivityClaim *c = &rows[k];
		Datum		values[6];
		bool		nulls[6] = {false};

		values[0] = CStringGetTextDatum(c->token);
		values[1] = Int64GetDatum(c->instance_id);
		values[2] = CStringGetTextDatum(c->activity);
		values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum(c->input));
		values[4] = Int32GetDatum((int32) c->heartbeat_s);
		nulls[4] = !c->has_heartbeat_s;
		values[5] = Int32GetDatum((int32) c->timeout_s);
		nulls[5] = !c->has_timeout_s;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	genroc_engine_free_activity_claims(rows, n);
	return (Datum) 0;
}

/* genroc.claim_wake(p_queues text[]) RETURNS bigint */
Datum
genroc_claim_wake(PG_FUNCTION_ARGS)
{
	const char **queues = NULL;
	int			n = 0;
	int			has_wake = 0;
	int64_t		wake = 0;

	if (!PG_ARGISNULL(0))
	{
		Datum	   *elems;
		bool	   *nulls;
		int			count;
		int			i;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(0), TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
		queues = palloc((count + 1) * sizeof(char *));
		for (i = 0; i < count; i++)
			queues[n++] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
	}
	GENROC_ENGINE_CALL(genroc_engine_claim_wake(!PG_ARGISNULL(0), queues, n, &has_wake, &wake, &engine_err));
	if (!has_wake)
		PG_RETURN_NULL();
	PG_RETURN_INT64(wake);
}
