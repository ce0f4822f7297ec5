/*-------------------------------------------------------------------------
 *
 * definitions.c
 *	  The SQL functions the engine implements (engine/engine.hpp): each
 *	  refuses a security-restricted operation, opens SPI, calls the engine
 *	  through engine_calls.h, closes SPI, and only then raises the engine's
 *	  error, if any, with its SQLSTATE, message, detail and hint: every C++
 *	  frame is gone by then.
 *
 * genroc_engine_begin and genroc_engine_end (engine_entry.h) are every
 * area's frame (tokens.c and the others), with the argument and answer
 * conversions they share.
 *
 * The functions are SECURITY DEFINER with a pinned search_path in their
 * CREATE FUNCTION (extension/sql/); the caller genroc acts for is the
 * session's role (genroc._caller(), GetOuterUserId), which the statements
 * ask for themselves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "genroc.h"
#include "engine_calls.h"
#include "engine_entry.h"
#include "engine_spi.h"

PG_FUNCTION_INFO_V1(genroc_define);
PG_FUNCTION_INFO_V1(genroc_define_text);
PG_FUNCTION_INFO_V1(genroc_list_definitions);
PG_FUNCTION_INFO_V1(genroc_get_definition);

/*
 * The engine's failure, raised.  A 57014 the interpreter stopped for lets
 * PostgreSQL raise its own error first (the cancel's, the timeout's, a
 * termination's FATAL), as genroc.c's raise_failure does.
 */
void
genroc_raise_engine_error(GenrocEngineError *err)
{
	char	   *message = pstrdup(err->message != NULL ? err->message : "the genroc engine failed");
	char	   *detail = err->detail != NULL ? pstrdup(err->detail) : NULL;
	char	   *hint = err->hint != NULL ? pstrdup(err->hint) : NULL;
	const char *s = err->sqlstate;
	int			code;

	genroc_engine_error_free(err);
	if (strcmp(s, "57014") == 0)
		CHECK_FOR_INTERRUPTS();
	code = strlen(s) == 5 ? MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4]) : ERRCODE_INTERNAL_ERROR;
	ereport(ERROR,
			(errcode(code),
			 errmsg("%s", message),
			 detail != NULL ? errdetail("%s", detail) : 0,
			 hint != NULL ? errhint("%s", hint) : 0));
}

void
genroc_engine_begin(int *depth)
{
	genroc_refuse_restricted();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "genroc: SPI_connect failed");
	*depth = genroc_pg_savepoint_depth();
}

void
genroc_engine_end(int depth, int ok, GenrocEngineError *err)
{
	genroc_pg_savepoint_restore(depth);
	SPI_finish();
	if (!ok)
		genroc_raise_engine_error(err);
}

char *
genroc_text_arg_or_null(FunctionCallInfo fcinfo, int k)
{
	return PG_ARGISNULL(k) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(k));
}

char *
genroc_jsonb_arg_or_null(FunctionCallInfo fcinfo, int k)
{
	Jsonb	   *jb;

	if (PG_ARGISNULL(k))
		return NULL;
	jb = PG_GETARG_JSONB_P(k);
	return JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

Datum
genroc_jsonb_answer(char *json)
{
	char	   *copy = pstrdup(json);

	genroc_engine_free(json);
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(copy));
}

Datum
genroc_text_answer(char *text)
{
	Datum		d = CStringGetTextDatum(text);

	genroc_engine_free(text);
	return d;
}

TimestampTz
genroc_timestamp_of_unix_us(int64_t us)
{
	return (TimestampTz) (us - (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC);
}

const char **
genroc_text_array_arg(FunctionCallInfo fcinfo, int k, int *has, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	const char **out;

	*n = 0;
	*has = !PG_ARGISNULL(k);
	if (!*has)
		return NULL;
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(k), TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
	out = palloc((count + 1) * sizeof(char *));
	for (int i = 0; i < count; i++)
		out[(*n)++] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
	return out;
}

void
genroc_task_datums(const GenrocClaimTask *t, Datum *values, bool *nulls)
{
	values[0] = Int64GetDatum(t->epoch);
	values[1] = t->state ? CStringGetTextDatum(t->state) : (Datum) 0;
	values[2] = t->resource ? CStringGetTextDatum(t->resource) : (Datum) 0;
	values[3] = t->input_native != NULL ? PointerGetDatum(t->input_native)
		: DirectFunctionCall1(jsonb_in, CStringGetDatum(t->input));
	values[4] = BoolGetDatum(t->only_once != 0);
	values[5] = Int32GetDatum((int32) t->timeout_s);
	values[6] = Int32GetDatum((int32) t->attempt);
	values[7] = TimestampTzGetDatum(genroc_timestamp_of_unix_us(t->lease_expires_us));
	values[8] = CStringGetTextDatum(t->queue);
	for (int c = 0; c < 9; c++)
		nulls[c] = false;
	nulls[1] = t->state == NULL;
	nulls[2] = t->resource == NULL;
	nulls[5] = !t->has_timeout_s;
}

/* define's one row (name, version, is_new). */
static Datum
define_common(FunctionCallInfo fcinfo, const char *name, const char *definition, int as_written)
{
	GenrocDefined out = {0};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	GENROC_ENGINE_CALL(genroc_engine_define(name, definition, as_written, &out, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	values[0] = CStringGetTextDatum(out.name);
	values[1] = Int32GetDatum(out.version);
	values[2] = BoolGetDatum(out.is_new != 0);
	genroc_engine_free(out.name);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* genroc.define(p_name text, p_definition jsonb) */
Datum
genroc_define(PG_FUNCTION_ARGS)
{
	char	   *definition = NULL;

	if (!PG_ARGISNULL(1))
	{
		Jsonb	   *jb = PG_GETARG_JSONB_P(1);

		definition = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
	}
	return define_common(fcinfo, genroc_text_arg_or_null(fcinfo, 0), definition, 0);
}

/* genroc.define(p_name text, p_definition text): the text as written kept */
Datum
genroc_define_text(PG_FUNCTION_ARGS)
{
	return define_common(fcinfo, genroc_text_arg_or_null(fcinfo, 0), genroc_text_arg_or_null(fcinfo, 1), 1);
}

/* genroc.list_definitions() */
Datum
genroc_list_definitions(PG_FUNCTION_ARGS)
{
	GenrocDefinitionRow *rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_list_definitions(&rows, &n, &engine_err));

	InitMaterializedSRF(fcinfo, 0);
	for (k = 0; k < n; k++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		int64		us = rows[k].created_us -
			(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC;

		values[0] = CStringGetTextDatum(rows[k].name);
		values[1] = Int32GetDatum(rows[k].version);
		values[2] = TimestampTzGetDatum((TimestampTz) us);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	for (k = 0; k < n; k++)
		genroc_engine_free(rows[k].name);
	genroc_engine_free(rows);
	return (Datum) 0;
}

/* genroc.get_definition(p_name text, p_version int) */
Datum
genroc_get_definition(PG_FUNCTION_ARGS)
{
	char	   *name = genroc_text_arg_or_null(fcinfo, 0);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_get_definition(name, !PG_ARGISNULL(1),
													PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1), &json,
													&engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
