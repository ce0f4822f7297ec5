/*-------------------------------------------------------------------------
 *
 * callbacks.c
 *	  genroc.activity_succeed, activity_fail and activity_heartbeat: the
 *	  results sent by a task token, an activity's or a .waitForTaskToken
 *	  task's (engine/callbacks.hpp), as definitions.c calls the engine.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_activity_succeed);
PG_FUNCTION_INFO_V1(genroc_activity_fail);
PG_FUNCTION_INFO_V1(genroc_activity_heartbeat);

/* genroc.activity_succeed(p_token text, p_output jsonb) RETURNS text */
Datum
genroc_activity_succeed(PG_FUNCTION_ARGS)
{
	char	   *token = genroc_text_arg_or_null(fcinfo, 0);
	char	   *output = NULL;
	char	   *status = NULL;

	if (!PG_ARGISNULL(1))
	{
		Jsonb	   *jb = PG_GETARG_JSONB_P(1);

		output = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
	}
	GENROC_ENGINE_CALL(genroc_engine_task_token_succeed(token, output, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc.activity_fail(p_token text, p_error text, p_cause text) RETURNS text */
Datum
genroc_activity_fail(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;

	GENROC_ENGINE_CALL(genroc_engine_task_token_fail(genroc_text_arg_or_null(fcinfo, 0),
													 genroc_text_arg_or_null(fcinfo, 1),
													 genroc_text_arg_or_null(fcinfo, 2), &status,
													 &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc.activity_heartbeat(p_token text) RETURNS void */
Datum
genroc_activity_heartbeat(PG_FUNCTION_ARGS)
{

	GENROC_ENGINE_CALL(genroc_engine_task_token_heartbeat(genroc_text_arg_or_null(fcinfo, 0), &engine_err));
	PG_RETURN_VOID();
}
