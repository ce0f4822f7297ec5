/*-------------------------------------------------------------------------
 *
 * values.c
 *	  Stored values (large-value references, extension/sql/15_objects.sql):
 *	  genroc._is_ref, _object, _load_value and _store_value, the engine's
 *	  (engine/values.cpp), and genroc._log_payloads, the log's payload
 *	  rule (engine/log_payloads.cpp), in the frame of definitions.c
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
PG_FUNCTION_INFO_V1(genroc_log_payloads_fn);

/* Whether jb may be a reference: an object with the top-level key genroc:object. */
static bool
may_be_ref(Jsonb *jb)
{
	return JB_ROOT_IS_OBJECT(jb) && genroc_jsonb_find_key(&jb->root, JB_FOBJECT, "genroc:object") != NULL;
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

/* genroc._is_ref of `jb -> key`: an object under that top-level key with the key genroc:object. */
static bool
is_reference_at(Jsonb *jb, const char *key)
{
	JsonbValue *value;

	if (!JB_ROOT_IS_OBJECT(jb))
		return false;
	value = genroc_jsonb_find_key(&jb->root, JB_FOBJECT, key);
	return value != NULL && value->type == jbvBinary
		&& JsonContainerIsObject(value->val.binary.data)
		&& genroc_jsonb_find_key(value->val.binary.data, JB_FOBJECT, "genroc:object") != NULL;
}

/*
 * genroc._log_payloads(detail jsonb) → jsonb: a log entry's detail as the log
 * keeps it, the engine's rule (engine/log_payloads.hpp says what it keeps).
 * Answered here, without SPI or a SQL call, in the common case, the detail
 * kept as it is: it has no payload key (input, output, payload); or
 * payloads are logged, no payload in it is already a reference and its
 * JSON text as jsonb writes it (the rule's log text) is within
 * genroc.log_payload_max (or that is 0) and genroc.object_threshold.  Every
 * other detail goes to the engine's log_payloads.
 */
Datum
genroc_log_payloads_fn(PG_FUNCTION_ARGS)
{
	static const char *const payload_keys[] = {"input", "output", "payload"};
	Jsonb	   *detail = PG_GETARG_JSONB_P(0);
	bool		any = false;
	bool		payloads;
	int			payload_max;
	int			threshold = genroc_object_threshold_bytes();
	bool		kept;
	char	   *text;
	size_t		len;
	char	   *json = NULL;

	for (int k = 0; k < (int) lengthof(payload_keys); k++)
		any = any || genroc_jsonb_find_key(&detail->root, JB_FOBJECT | JB_FARRAY, payload_keys[k]) != NULL;
	if (!any)
		PG_RETURN_JSONB_P(detail);

	genroc_log_payload_settings(&payloads, &payload_max);
	kept = payloads;
	for (int k = 0; kept && k < (int) lengthof(payload_keys); k++)
		kept = !is_reference_at(detail, payload_keys[k]);
	/* the text jsonb_out writes, as octet_length(detail::text) measures it */
	text = JsonbToCString(NULL, &detail->root, VARSIZE(detail));
	len = strlen(text);
	if (kept && (payload_max == 0 || len <= (size_t) payload_max)
		&& len <= (size_t) threshold)
	{
		pfree(text);
		PG_RETURN_JSONB_P(detail);
	}
	GENROC_ENGINE_CALL(genroc_engine_log_payloads(text, payloads, payload_max, threshold, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
