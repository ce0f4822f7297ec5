/*-------------------------------------------------------------------------
 *
 * aliases.c
 *	  The entry points of alias_set, alias_drop, get_alias, list_aliases,
 *	  undefine (engine/aliases.hpp), as definitions.c's:
 *	  SPI opened, the engine called, SPI closed, then its error raised.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "engine_calls.h"
#include "engine_entry.h"
#include "engine_spi.h"

PG_FUNCTION_INFO_V1(genroc_alias_set);
PG_FUNCTION_INFO_V1(genroc_alias_drop);
PG_FUNCTION_INFO_V1(genroc_get_alias);
PG_FUNCTION_INFO_V1(genroc_list_aliases);
PG_FUNCTION_INFO_V1(genroc_undefine);

/* genroc.alias_set(p_name text, p_alias text, p_routing jsonb, p_description text) */
Datum
genroc_alias_set(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_alias_set(genroc_text_arg_or_null(fcinfo, 0),
											   genroc_text_arg_or_null(fcinfo, 1),
											   genroc_jsonb_arg_or_null(fcinfo, 2),
											   genroc_text_arg_or_null(fcinfo, 3), &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.alias_drop(p_name text, p_alias text) */
Datum
genroc_alias_drop(PG_FUNCTION_ARGS)
{

	GENROC_ENGINE_CALL(genroc_engine_alias_drop(genroc_text_arg_or_null(fcinfo, 0),
												genroc_text_arg_or_null(fcinfo, 1), &engine_err));
	PG_RETURN_VOID();
}

/* genroc.get_alias(p_name text, p_alias text) */
Datum
genroc_get_alias(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_get_alias(genroc_text_arg_or_null(fcinfo, 0),
											   genroc_text_arg_or_null(fcinfo, 1), &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.list_aliases(p_name text) */
Datum
genroc_list_aliases(PG_FUNCTION_ARGS)
{
	char	   *json = NULL;

	GENROC_ENGINE_CALL(genroc_engine_list_aliases(genroc_text_arg_or_null(fcinfo, 0), &json, &engine_err));
	PG_RETURN_DATUM(genroc_jsonb_answer(json));
}

/* genroc.undefine(p_name text, p_version int) */
Datum
genroc_undefine(PG_FUNCTION_ARGS)
{

	GENROC_ENGINE_CALL(genroc_engine_undefine(genroc_text_arg_or_null(fcinfo, 0), !PG_ARGISNULL(1),
											  PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1), &engine_err));
	PG_RETURN_VOID();
}
