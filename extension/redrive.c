/*-------------------------------------------------------------------------
 *
 * redrive.c
 *	  genroc.redrive's entry point: the engine's operation (engine/redrive.cpp)
 *	  between SPI_connect and SPI_finish, its error raised after C++ returned
 *	  (definitions.c's frame, genroc_engine_begin / _end).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_redrive);

/* genroc.redrive(p_instance bigint, p_client_token text) RETURNS text */
Datum
genroc_redrive(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *client_token = genroc_text_arg_or_null(fcinfo, 1);

	GENROC_ENGINE_CALL(genroc_engine_redrive(!PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0),
											 client_token, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}
