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
	char	   *ref = genroc_text_arg_or_null(fcinfo, 0);
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_get_object(ref, &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}
