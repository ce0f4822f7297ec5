/*-------------------------------------------------------------------------
 *
 * objects.c
 *	  genroc.get_object: the engine's (engine/objects.cpp) in the frame of
 *	  definitions.c (genroc_engine_begin / genroc_engine_end).  The SQL
 *	  declaration, SECURITY DEFINER with a pinned search_path, is in
 *	  extension/sql/15_objects.sql.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_get_object);

/* genroc.get_object(p_ref text): jsonb */
Datum
genroc_get_object(PG_FUNCTION_ARGS)
{
	char	   *ref = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *json = NULL;
	char	   *copy;
	GenrocEngineError err = {0};
	int			depth;
	int			ok;

	genroc_engine_begin(&depth);
	ok = genroc_engine_get_object(ref, &json, &err);
	genroc_engine_end(depth, ok, &err);
	copy = pstrdup(json);
	genroc_engine_free(json);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(copy)));
}
