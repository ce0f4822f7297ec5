/*-------------------------------------------------------------------------
 *
 * values.c
 *	  Stored values (large-value references, extension/sql/15_objects.sql):
 *	  genroc._is_ref, _object, _load_value and _store_value, the engine's
 *	  (engine/values.cpp) in the frame of definitions.c
 *	  (genroc_engine_begin / genroc_engine_end).  The common case — a value
 *	  that is not a reference, or one within genroc.object_threshold — is
 *	  answered here without SPI or a copy as text.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "engine_entry.h"
#include "genroc.h"

PG_FUNCTION_INFO_V1(genroc_is_ref_fn);
PG_FUNCTION_INFO_V1(genroc_object_fn);
PG_FUNCTION_INFO_V1(genroc_load_value_fn);
PG_FUNCTION_INFO_V1(genroc_store_value_fn);

/* Whether jb may be a reference: an object with the top-level key genroc:object. */
static bool
may_be_ref(Jsonb *jb)
{
	JsonbValue	k;

	if (!JB_ROOT_IS_OBJECT(jb))
		return false;
	k.type = jbvString;
	k.val.string.val = "genroc:object";
	k.val.string.len = strlen("genroc:object");
	return findJsonbValueFromContainer(&jb->root, JB_FOBJECT, &k) != NULL;
}

static char *
jsonb_cstring(Jsonb *jb)
{
	return JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

/* genroc._is_ref(p_value jsonb) → boolean (STRICT) */
Datum
genroc_is_ref_fn(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	GenrocEngineError err = {0};
	int			is_ref = 0;

	if (!may_be_ref(jb))
		PG_RETURN_BOOL(false);
	if (!genroc_engine_is_ref(jsonb_cstring(jb), &is_ref, &err))
		genroc_raise_engine_error(&err);
	PG_RETURN_BOOL(is_ref != 0);
}

/* genroc._object(p_hash text) → jsonb (STRICT) */
Datum
genroc_object_fn(PG_FUNCTION_ARGS)
{
	char	   *hash = genroc_text_arg_or_null(fcinfo, 0);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_object(hash, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc._load_value(p_value jsonb) → jsonb (STRICT) */
Datum
genroc_load_value_fn(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	char	   *value;
	char	   *json = NULL;

	if (!may_be_ref(jb))
		PG_RETURN_JSONB_P(jb);
	value = jsonb_cstring(jb);
	GENROC_ENGINE_CALL(genroc_engine_load_value(value, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/*
 * genroc._store_value(p_value jsonb, p_field text) → jsonb: NULL for NULL;
 * the value itself when its datum is within genroc.object_threshold (as
 * pg_column_size measures it) and it does not look like a reference — no
 * SPI, no text — else the engine's store_value.
 */
Datum
genroc_store_value_fn(PG_FUNCTION_ARGS)
{
	Datum		datum;
	Jsonb	   *jb;
	bool		large;
	char	   *value;
	char	   *field;
	char	   *json = NULL;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	datum = PG_GETARG_DATUM(0);
	large = toast_datum_size(datum) > (Size) genroc_object_threshold_bytes();
	jb = DatumGetJsonbP(datum);
	if (!large && !may_be_ref(jb))
		PG_RETURN_JSONB_P(jb);
	value = jsonb_cstring(jb);
	field = genroc_text_arg_or_null(fcinfo, 1);
	GENROC_ENGINE_CALL(genroc_engine_store_value(value, field, large, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
