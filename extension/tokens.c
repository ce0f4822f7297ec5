/*-------------------------------------------------------------------------
 *
 * tokens.c
 *	  genroc.token_create, token_verify, token_list and token_revoke: the
 *	  engine's (engine/tokens.cpp) in the frame of definitions.c
 *	  (genroc_engine_begin / genroc_engine_end).  The SQL declarations,
 *	  SECURITY DEFINER with a pinned search_path and not for PUBLIC, are in
 *	  extension/sql/80_tokens.sql.
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

PG_FUNCTION_INFO_V1(genroc_token_create);
PG_FUNCTION_INFO_V1(genroc_token_verify);
PG_FUNCTION_INFO_V1(genroc_token_list);
PG_FUNCTION_INFO_V1(genroc_token_revoke);

/* genroc.token_create(p_name text, p_permissions text[], p_created_by text, p_secret text) */
Datum
genroc_token_create(PG_FUNCTION_ARGS)
{
	char	   *name = genroc_text_arg_or_null(fcinfo, 0);
	char	   *created_by = genroc_text_arg_or_null(fcinfo, 2);
	char	   *secret = genroc_text_arg_or_null(fcinfo, 3);
	const char **permissions = NULL;
	int			npermissions = 0;
	char	   *json = NULL;

	if (!PG_ARGISNULL(1))
	{
		ArrayType  *a = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *elems;
		bool	   *nulls;
		int			k;

		deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &npermissions);
		/* one more than asked: a non-NULL pointer for an empty array */
		permissions = palloc0(sizeof(char *) * (npermissions + 1));
		for (k = 0; k < npermissions; k++)
			permissions[k] = nulls[k] ? NULL : TextDatumGetCString(elems[k]);
	}
	GENROC_ENGINE_CALL(genroc_engine_token_create(name, permissions, npermissions, created_by, secret, &json,
												  &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.token_verify(p_token text): NULL unless a live token */
Datum
genroc_token_verify(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;
	GenrocEngineError err = {0};
	int			depth;
	int			ok;

	if (PG_ARGISNULL(0))
	{
		/* the refusal first, as every entry point */
		genroc_engine_begin(&depth);
		genroc_engine_end(depth, 1, &err);
		PG_RETURN_NULL();
	}
	genroc_engine_begin(&depth);
	ok = genroc_engine_token_verify(text_to_cstring(PG_GETARG_TEXT_PP(0)), &json, &err);
	genroc_engine_end(depth, ok, &err);
	if (json == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.token_list(): SETOF jsonb */
Datum
genroc_token_list(PG_FUNCTION_ARGS)
{
	char	  **rows = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	int			k;

	GENROC_ENGINE_CALL(genroc_engine_token_list(&rows, &n, &engine_err));

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

/* genroc.token_revoke(p_id text) */
Datum
genroc_token_revoke(PG_FUNCTION_ARGS)
{
	char	   *id = genroc_text_arg_or_null(fcinfo, 0);

	GENROC_ENGINE_CALL(genroc_engine_token_revoke(id, &engine_err));
	PG_RETURN_VOID();
}
