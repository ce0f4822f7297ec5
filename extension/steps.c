/*-------------------------------------------------------------------------
 *
 * steps.c
 *	  The step writer's entry point: genroc._apply_step, the engine's
 *	  (engine/steps.cpp) between SPI_connect and SPI_finish, its error
 *	  raised after C++ returned (definitions.c's frame).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_apply_step);

/*
 * genroc._apply_step(p_instance bigint, p_request jsonb, p_first jsonb,
 *     p_handback_worker text, p_handback_queues text[], p_row
 *     genroc._instances) RETURNS text.  p_row is not read: the step reads
 * what it needs of the row itself.
 */
Datum
genroc_apply_step(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *request;
	char	   *first;
	char	   *worker;
	const char **queues = NULL;
	int			nqueues = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("p_instance and p_request must not be null")));
	request = genroc_jsonb_arg_or_null(fcinfo, 1);
	first = genroc_jsonb_arg_or_null(fcinfo, 2);
	worker = genroc_text_arg_or_null(fcinfo, 3);
	if (worker && !PG_ARGISNULL(4))
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(4);
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
		queues = palloc(sizeof(char *) * (n + 1));
		for (int i = 0; i < n; i++)
			queues[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		nqueues = n;
	}

	GENROC_ENGINE_CALL(genroc_engine_apply_step(PG_GETARG_INT64(0), request, first, worker, queues, nqueues,
												&status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

PG_FUNCTION_INFO_V1(genroc_interrupt);

/* genroc._interrupt(p_instance bigint, p_reason text) RETURNS text */
Datum
genroc_interrupt(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *reason = genroc_text_arg_or_null(fcinfo, 1);

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("p_instance must not be null")));
	GENROC_ENGINE_CALL(genroc_engine_interrupt(PG_GETARG_INT64(0), reason, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}
