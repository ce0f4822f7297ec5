/*-------------------------------------------------------------------------
 *
 * complete_many.c
 *	  genroc.complete_many's entry: its arguments as the engine takes them,
 *	  the engine's rows (engine/many.cpp) as the function's result.
 *
 * The outputs go to the engine as the jsonb Datums the caller passed, with
 * whether each is within json_depth: the engine's set-wise statements hand
 * them back to PostgreSQL as they are, and only a report written one by
 * one has its text made (PgPort::native_json_text).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "genroc.h"
#include "engine_entry.h"

PG_FUNCTION_INFO_V1(genroc_complete_many);

/* complete_many's RETURNS TABLE, in order (0-based) */
enum
{
	COL_INSTANCE,
	COL_STATUS,
	COL_SQLSTATE,
	COL_TASK,					/* epoch and the rest of the handed-back task */
	RESULT_COLUMNS = COL_TASK + 9
};

/*
 * Argument k (0, 1: bigint[]; 2: jsonb[]) as the engine takes it; sets
 * *multi_dim for an array of more than one dimension (its elements
 * flattened).
 */
static void
many_array(int k, Datum arg, bool is_null, GenrocManyArray *out, bool *multi_dim)
{
	ArrayType  *a;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	memset(out, 0, sizeof *out);
	out->lower = 1;
	if (is_null)
		return;
	a = DatumGetArrayTypeP(arg);
	out->has = 1;
	if (ARR_NDIM(a) > 1)
		*multi_dim = true;
	if (ARR_NDIM(a) == 1)
		out->lower = ARR_LBOUND(a)[0];
	if (k < 2)
	{
		int64_t    *ids;

		deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
		ids = palloc(sizeof(int64_t) * (n > 0 ? n : 1));
		for (int j = 0; j < n; j++)
			ids[j] = nulls[j] ? 0 : DatumGetInt64(elems[j]);
		out->ids = ids;
	}
	else
	{
		const void **jsonbs;
		bool	   *shallow;

		deconstruct_array(a, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
		jsonbs = palloc(sizeof(void *) * (n > 0 ? n : 1));
		shallow = palloc(sizeof(bool) * (n > 0 ? n : 1));
		for (int j = 0; j < n; j++)
		{
			jsonbs[j] = nulls[j] ? NULL : DatumGetPointer(elems[j]);
			shallow[j] = !nulls[j] && genroc_jsonb_shallow(DatumGetJsonbP(elems[j]));
		}
		out->jsonbs = jsonbs;
		out->shallow = shallow;
	}
	out->nulls = nulls;
	out->n = n;
}

/* One of the engine's rows into the result. */
static void
put_row(ReturnSetInfo *rsinfo, const GenrocManyRow *r)
{
	Datum		values[RESULT_COLUMNS] = {0};
	bool		isnull[RESULT_COLUMNS];
	const GenrocReportResult *t = &r->next;

	for (int c = 0; c < RESULT_COLUMNS; c++)
		isnull[c] = true;
	values[COL_INSTANCE] = Int64GetDatum(r->instance_id);
	isnull[COL_INSTANCE] = false;
	if (t->status)
	{
		values[COL_STATUS] = CStringGetTextDatum(t->status);
		isnull[COL_STATUS] = false;
	}
	if (r->sqlstate)
	{
		values[COL_SQLSTATE] = CStringGetTextDatum(r->sqlstate);
		isnull[COL_SQLSTATE] = false;
	}
	if (t->has_next)
		genroc_task_datums(&t->next, values + COL_TASK, isnull + COL_TASK);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
}

/*
 * genroc.complete_many(p_instances bigint[], p_epochs bigint[], p_outputs
 * jsonb[], p_worker text, p_queues text[]) → a row per report, in order.
 * The semantics are in 50_workers.sql.
 */
Datum
genroc_complete_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	GenrocManyArray arrays[3];
	bool		multi_dim = false;
	char	   *worker;
	const char **queues = NULL;
	int			nqueues = 0;
	GenrocManyRow *rows;
	int			n_rows;

	genroc_refuse_restricted();
	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	if (rsinfo->setDesc->natts != RESULT_COLUMNS)
		elog(ERROR, "genroc.complete_many: the function returns %d columns, not %d",
			 rsinfo->setDesc->natts, RESULT_COLUMNS);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "genroc.complete_many: SPI_connect failed");
	for (int k = 0; k < 3; k++)
		many_array(k, PG_ARGISNULL(k) ? (Datum) 0 : PG_GETARG_DATUM(k), PG_ARGISNULL(k), &arrays[k], &multi_dim);
	worker = PG_ARGISNULL(3) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(3));
	if (!PG_ARGISNULL(4))
	{
		Datum	   *elems;
		bool	   *qnulls;
		int			count;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(4), TEXTOID, -1, false, TYPALIGN_INT, &elems, &qnulls, &count);
		queues = palloc(sizeof(char *) * (count + 1));
		for (int j = 0; j < count; j++)
			queues[nqueues++] = qnulls[j] ? NULL : TextDatumGetCString(elems[j]);
	}
	GENROC_ENGINE_CALL(genroc_engine_complete_many(&arrays[0], &arrays[1], &arrays[2], multi_dim, worker,
												   !PG_ARGISNULL(4), queues, nqueues, &rows, &n_rows, &engine_err));
	for (int k = 0; k < n_rows; k++)
		put_row(rsinfo, &rows[k]);
	genroc_engine_free_many(rows, n_rows);
	SPI_finish();
	return (Datum) 0;
}
