/*-------------------------------------------------------------------------
 *
 * engine_spi.c
 *	  The PostgreSQL adapter's C boundary (engine_spi.h): statements through
 *	  SPI with plans prepared once per backend, the clock, jsonb's
 *	  canonical text, subtransactions.
 *
 * Every function runs its PostgreSQL calls inside PG_TRY.  An error is
 * copied out (CopyErrorData in the caller's memory context), the error
 * state flushed, and the copy handed back; the C++ caller (engine_port.cpp)
 * throws it as genroc::Error, and the entry point (definitions.c) raises it
 * again with the same SQLSTATE once every C++ frame is gone.  So no
 * longjmp ever crosses a C++ frame.  Between the flush and that raise the
 * transaction is in an aborted state: the engine runs no statement there,
 * except under a savepoint, whose rollback (as PL/pgSQL's EXCEPTION block
 * does) makes the transaction usable again.
 *
 * Glossary
 *	  plan		a statement's SPI plan, prepared on the first call in this
 *				backend with its parameters' types (the kinds of that call)
 *				and kept (SPI_keepplan; PostgreSQL revalidates it when what
 *				it reads changes)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "genroc.h"
#include "engine_spi.h"

/* The statements' plans and their parameter kinds, by statement id. */
#define GENROC_MAX_STATEMENTS 512
#define GENROC_MAX_PARAMS 32
typedef struct KeptPlan
{
	SPIPlanPtr	plan;
	int			nparams;
	int			kinds[GENROC_MAX_PARAMS];
} KeptPlan;
static KeptPlan plans[GENROC_MAX_STATEMENTS];

/* Open subtransactions: what to restore when each ends. */
#define GENROC_MAX_SAVEPOINTS 64
static MemoryContext savepoint_cxt[GENROC_MAX_SAVEPOINTS];
static ResourceOwner savepoint_owner[GENROC_MAX_SAVEPOINTS];
static int	savepoint_depth = 0;

/* Copies the error being handled into *err and flushes it. */
static void
take_error(MemoryContext cxt, GenrocPgError *err)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	memcpy(err->sqlstate, unpack_sql_state(edata->sqlerrcode), 6);
	err->sqlstate[5] = '\0';
	err->message = edata->message;
	err->detail = edata->detail;
	err->hint = edata->hint;
}

static Oid
type_of(int kind)
{
	switch (kind)
	{
		case GENROC_PG_INT8:
			return INT8OID;
		case GENROC_PG_FLOAT8:
			return FLOAT8OID;
		case GENROC_PG_BOOL:
			return BOOLOID;
		case GENROC_PG_JSONB:
			return JSONBOID;
		case GENROC_PG_INT8_ARRAY:
			return INT8ARRAYOID;
		case GENROC_PG_TEXT_ARRAY:
			return TEXTARRAYOID;
		case GENROC_PG_JSONB_ARRAY:
			return JSONBARRAYOID;
		case GENROC_PG_TID_ARRAY:
			return TIDARRAYOID;
		default:
			return TEXTOID;
	}
}

/* An array parameter's value: its elements made into Datums (jsonb from a
 * native Datum as it is, else from its text). */
static Datum
array_param(const GenrocPgParam *p)
{
	int			n = p->n;
	Datum	   *elems = palloc(sizeof(Datum) * Max(1, n));
	int			k;

	for (k = 0; k < n; k++)
		switch (p->kind)
		{
			case GENROC_PG_INT8_ARRAY:
				elems[k] = Int64GetDatum(p->ints[k]);
				break;
			case GENROC_PG_TEXT_ARRAY:
				elems[k] = CStringGetTextDatum(p->texts[k]);
				break;
			case GENROC_PG_JSONB_ARRAY:
				elems[k] = p->natives != NULL && p->natives[k] != NULL ? PointerGetDatum(p->natives[k])
					: DirectFunctionCall1(jsonb_in, CStringGetDatum(p->texts[k]));
				break;
			default:			/* GENROC_PG_TID_ARRAY */
				elems[k] = PointerGetDatum(p->natives[k]);
				break;
		}
	switch (p->kind)
	{
		case GENROC_PG_INT8_ARRAY:
			return PointerGetDatum(construct_array(elems, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		case GENROC_PG_TID_ARRAY:
			return PointerGetDatum(construct_array(elems, n, TIDOID, sizeof(ItemPointerData), false,
												   TYPALIGN_SHORT));
		default:
			return PointerGetDatum(construct_array(elems, n, p->kind == GENROC_PG_TEXT_ARRAY ? TEXTOID : JSONBOID,
												   -1, false, TYPALIGN_INT));
	}
}

/*
 * How each column of a result comes back: GENROC_PG_CELL_INT or _BOOL, its
 * text as it is in the tuple (COLUMN_VARLENA_TEXT), or through its type's
 * output function (COLUMN_OUTPUT).
 */
#define COLUMN_OUTPUT (-1)
#define COLUMN_VARLENA_TEXT (-2)

static int
column_class(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return GENROC_PG_CELL_INT;
		case BOOLOID:
			return GENROC_PG_CELL_BOOL;
		case TEXTOID:
		case VARCHAROID:
			return COLUMN_VARLENA_TEXT;
		default:
			return COLUMN_OUTPUT;
	}
}

/*
 * The cells of an SPI result: each row deformed once; integers and
 * booleans as values, text as it is in the tuple (detoasted when it must
 * be), every other type through its output function, looked up once per
 * column.
 */
static void
result_cells(SPITupleTable *t, int nrows, bool keep, GenrocPgRows *out)
{
	TupleDesc	desc = t->tupdesc;
	int			ncols = desc->natts;
	int		   *classes = palloc(sizeof(int) * Max(1, ncols));
	Oid		   *types = palloc(sizeof(Oid) * Max(1, ncols));
	FmgrInfo   *outs = palloc0(sizeof(FmgrInfo) * Max(1, ncols));
	Datum	   *values = palloc(sizeof(Datum) * Max(1, ncols));
	bool	   *nulls = palloc(sizeof(bool) * Max(1, ncols));
	int			r;
	int			k;

	for (k = 0; k < ncols; k++)
	{
		Oid			type = genroc_base_type(TupleDescAttr(desc, k)->atttypid);
		types[k] = type;
		classes[k] = column_class(type);
		if (classes[k] == COLUMN_OUTPUT)
		{
			Oid			foutoid;
			bool		isvarlena;

			getTypeOutputInfo(type, &foutoid, &isvarlena);
			fmgr_info(foutoid, &outs[k]);
		}
	}
	out->cells = palloc0(sizeof(GenrocPgCell) * Max(1, nrows * ncols));
	for (r = 0; r < nrows; r++)
	{
		heap_deform_tuple(t->vals[r], desc, values, nulls);
		for (k = 0; k < ncols; k++)
		{
			GenrocPgCell *c = &out->cells[r * ncols + k];
			Datum		v = values[k];

			if (nulls[k])
				continue;		/* GENROC_PG_CELL_NULL */
			switch (classes[k])
			{
				case GENROC_PG_CELL_INT:
					c->kind = GENROC_PG_CELL_INT;
					c->i = types[k] == INT8OID ? DatumGetInt64(v)
						: types[k] == INT4OID ? DatumGetInt32(v)
						: DatumGetInt16(v);
					break;
				case GENROC_PG_CELL_BOOL:
					c->kind = GENROC_PG_CELL_BOOL;
					c->i = DatumGetBool(v) ? 1 : 0;
					break;
				case COLUMN_VARLENA_TEXT:
					{
						struct varlena *raw = (struct varlena *) DatumGetPointer(v);
						struct varlena *flat = pg_detoast_datum_packed(raw);

						c->kind = GENROC_PG_CELL_TEXT;
						c->text = VARDATA_ANY(flat);
						c->len = VARSIZE_ANY_EXHDR(flat);
						c->owned = flat != raw ? flat : NULL;
						break;
					}
				default:
					{
						char	   *text = OutputFunctionCall(&outs[k], v);

						c->kind = GENROC_PG_CELL_TEXT;
						c->text = text;
						c->len = strlen(text);
						c->owned = text;
						/* flat (not toasted) before it is copied out */
						if (keep && types[k] == JSONBOID)
							c->native = DatumGetPointer(SPI_datumTransfer(
								PointerGetDatum(pg_detoast_datum((struct varlena *) DatumGetPointer(v))), false, -1));
						if (keep && types[k] == TIDOID)
							c->native = DatumGetPointer(SPI_datumTransfer(v, false, sizeof(ItemPointerData)));
						break;
					}
			}
		}
	}
	out->nrows = nrows;
	out->ncols = ncols;
	pfree(classes);
	pfree(types);
	pfree(outs);
	pfree(values);
	pfree(nulls);
}

/* The kept plan of statement id, prepared on first use. */
static SPIPlanPtr
plan_of(int id, const char *sql, int settings, int nparams, const GenrocPgParam *params)
{
	KeptPlan   *kept = &plans[id];
	int			k;

	if (kept->plan == NULL)
	{
		Oid			types[GENROC_MAX_PARAMS];
		SPIPlanPtr	p;

		for (k = 0; k < nparams; k++)
			types[k] = type_of(params[k].kind);
		p = (settings & GENROC_PG_GENERIC_PLAN) ? SPI_prepare_cursor(sql, nparams, types, CURSOR_OPT_GENERIC_PLAN)
			: SPI_prepare(sql, nparams, types);
		if (p == NULL)
			elog(ERROR, "genroc engine: could not prepare statement %d: %s", id,
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "genroc engine: could not keep statement %d", id);
		for (k = 0; k < nparams; k++)
			kept->kinds[k] = params[k].kind;
		kept->nparams = nparams;
		kept->plan = p;
	}
	if (kept->nparams != nparams)
		elog(ERROR, "genroc engine: statement %d takes %d parameters, not %d", id,
			 kept->nparams, nparams);
	for (k = 0; k < nparams; k++)
		if (kept->kinds[k] != params[k].kind)
			elog(ERROR, "genroc engine: parameter %d of statement %d changed its type", k + 1, id);
	return kept->plan;
}

int
genroc_pg_run(int id, int nstatements, const char *sql, int settings, int nparams, const GenrocPgParam *params,
			  int read_only, int want_rows, GenrocPgRows *out, GenrocPgError *err)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile int ok = 1;

	memset(out, 0, sizeof *out);
	PG_TRY();
	{
		Datum		values[GENROC_MAX_PARAMS];
		char		nulls[GENROC_MAX_PARAMS];
		SPIPlanPtr	plan;
		int			rc;
		int			k;

		if (id < 0 || id >= GENROC_MAX_STATEMENTS || nstatements > GENROC_MAX_STATEMENTS ||
			nparams < 0 || nparams > GENROC_MAX_PARAMS)
			elog(ERROR, "genroc engine: statement %d with %d parameters is out of range", id, nparams);
		plan = plan_of(id, sql, settings, nparams, params);
		for (k = 0; k < nparams; k++)
		{
			const GenrocPgParam *p = &params[k];

			nulls[k] = p->is_null ? 'n' : ' ';
			values[k] = (Datum) 0;
			if (p->is_null)
				continue;
			switch (p->kind)
			{
				case GENROC_PG_INT8:
					values[k] = Int64GetDatum(p->i);
					break;
				case GENROC_PG_FLOAT8:
					values[k] = Float8GetDatum(p->d);
					break;
				case GENROC_PG_BOOL:
					values[k] = BoolGetDatum(p->i != 0);
					break;
				case GENROC_PG_JSONB:
					values[k] = DirectFunctionCall1(jsonb_in, CStringGetDatum(p->text));
					break;
				case GENROC_PG_INT8_ARRAY:
				case GENROC_PG_TEXT_ARRAY:
				case GENROC_PG_JSONB_ARRAY:
				case GENROC_PG_TID_ARRAY:
					values[k] = array_param(p);
					break;
				default:
					values[k] = PointerGetDatum(cstring_to_text_with_len(p->text, (int) p->len));
					break;
			}
		}
		rc = SPI_execute_plan(plan, values, nulls, read_only != 0, 0);
		if (rc < 0)
			elog(ERROR, "genroc engine: statement %d failed: %s", id, SPI_result_code_string(rc));
		out->processed = (int64_t) SPI_processed;
		if (want_rows && SPI_tuptable != NULL)
		{
			/* the cells may point into the tuples: freed with the rows */
			out->tuptable = SPI_tuptable;
			result_cells(SPI_tuptable, (int) SPI_processed, (settings & GENROC_PG_KEEP_VALUES) != 0, out);
		}
		else if (SPI_tuptable != NULL)
			SPI_freetuptable(SPI_tuptable);
	}
	PG_CATCH();
	{
		take_error(cxt, err);
		ok = 0;
	}
	PG_END_TRY();
	return ok;
}

void
genroc_pg_rows_free(GenrocPgRows *rows)
{
	int			k;

	if (rows->cells != NULL)
	{
		for (k = 0; k < rows->nrows * rows->ncols; k++)
			if (rows->cells[k].owned != NULL)
				pfree(rows->cells[k].owned);
		pfree(rows->cells);
		rows->cells = NULL;
	}
	if (rows->tuptable != NULL)
	{
		SPI_freetuptable((SPITupleTable *) rows->tuptable);
		rows->tuptable = NULL;
	}
}

/*
 * Runs body(arg) inside PG_TRY: 1, or 0 with the error copied into *err
 * (take_error) in the caller's memory context.
 */
static int
guarded(void (*body) (void *arg), void *arg, GenrocPgError *err)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile int ok = 1;

	PG_TRY();
	{
		body(arg);
	}
	PG_CATCH();
	{
		take_error(cxt, err);
		ok = 0;
	}
	PG_END_TRY();
	return ok;
}

static void
now_ms(void *arg)
{
	TimestampTz now = genroc_clock();
	int64		ms = now / 1000;

	if (now % 1000 < 0)
		ms--;
	*(int64_t *) arg = ms + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}

int
genroc_pg_now_ms(int64_t *out, GenrocPgError *err)
{
	return guarded(now_ms, out, err);
}

typedef struct CanonicalJson
{
	const char *text;
	char	  **out;
} CanonicalJson;

static void
canonical_json(void *arg)
{
	CanonicalJson *a = (CanonicalJson *) arg;
	Jsonb	   *jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(a->text)));

	*a->out = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

static void
caller(void *arg)
{
	*(int64_t *) arg = (int64_t) genroc_caller_id();
}

int
genroc_pg_caller(int64_t *out, GenrocPgError *err)
{
	return guarded(caller, out, err);
}

typedef struct JsonbText
{
	const void *jsonb;
	char	  **out;
} JsonbText;

static void
jsonb_text(void *arg)
{
	JsonbText  *a = (JsonbText *) arg;
	Jsonb	   *jb = DatumGetJsonbP(PointerGetDatum(a->jsonb));

	*a->out = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

int
genroc_pg_jsonb_text(const void *jsonb, char **out, GenrocPgError *err)
{
	JsonbText	a = {jsonb, out};

	return guarded(jsonb_text, &a, err);
}

int
genroc_pg_canonical_json(const char *text, char **out, GenrocPgError *err)
{
	CanonicalJson a = {text, out};

	return guarded(canonical_json, &a, err);
}

/*
 * Subtransactions as PL/pgSQL's EXCEPTION block makes them
 * (exec_stmt_block): begun in the caller's memory context, which each end
 * restores with the resource owner.
 */
static void
savepoint_begin(void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	if (savepoint_depth >= GENROC_MAX_SAVEPOINTS)
		elog(ERROR, "genroc engine: more than %d savepoints", GENROC_MAX_SAVEPOINTS);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	savepoint_cxt[savepoint_depth] = cxt;
	savepoint_owner[savepoint_depth] = owner;
	savepoint_depth++;
}

int
genroc_pg_savepoint_begin(GenrocPgError *err)
{
	return guarded(savepoint_begin, NULL, err);
}

static void
savepoint_end(void *arg)
{
	bool		commit = *(bool *) arg;

	if (savepoint_depth <= 0)
		elog(ERROR, "genroc engine: no savepoint to end");
	savepoint_depth--;
	if (commit)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(savepoint_cxt[savepoint_depth]);
	CurrentResourceOwner = savepoint_owner[savepoint_depth];
}

int
genroc_pg_savepoint_release(GenrocPgError *err)
{
	bool		commit = true;

	return guarded(savepoint_end, &commit, err);
}

int
genroc_pg_savepoint_rollback(GenrocPgError *err)
{
	bool		commit = false;

	return guarded(savepoint_end, &commit, err);
}

int
genroc_pg_savepoint_depth(void)
{
	return savepoint_depth;
}

void
genroc_pg_savepoint_restore(int depth)
{
	savepoint_depth = depth;
}
