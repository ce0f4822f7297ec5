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
		default:
			return TEXTOID;
	}
}

/* The kept plan of statement id, prepared on first use. */
/*
 * Statements prepared with a generic plan (CURSOR_OPT_GENERIC_PLAN): a
 * statement whose plan per call costs more than it runs (the claim's:
 * claim_calls.cpp marks them before its first run).
 */
static bool generic_plans[GENROC_MAX_STATEMENTS];

extern void genroc_pg_generic_plan(int id);

void
genroc_pg_generic_plan(int id)
{
	if (id >= 0 && id < GENROC_MAX_STATEMENTS)
		generic_plans[id] = true;
}

static SPIPlanPtr
plan_of(int id, const char *sql, int nparams, const GenrocPgParam *params)
{
	KeptPlan   *kept = &plans[id];
	int			k;

	if (kept->plan == NULL)
	{
		Oid			types[GENROC_MAX_PARAMS];
		SPIPlanPtr	p;

		for (k = 0; k < nparams; k++)
			types[k] = type_of(params[k].kind);
		p = generic_plans[id] ? SPI_prepare_cursor(sql, nparams, types, CURSOR_OPT_GENERIC_PLAN)
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
genroc_pg_run(int id, int nstatements, const char *sql, int nparams, const GenrocPgParam *params,
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
		plan = plan_of(id, sql, nparams, params);
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
			SPITupleTable *t = SPI_tuptable;
			int			ncols = t->tupdesc->natts;
			int			nrows = (int) SPI_processed;
			int			r;

			FmgrInfo   *outs = palloc(sizeof(FmgrInfo) * Max(1, ncols));

			/* each column's output function looked up once, not per cell */
			for (k = 0; k < ncols; k++)
			{
				Oid			foutoid;
				bool		isvarlena;

				getTypeOutputInfo(TupleDescAttr(t->tupdesc, k)->atttypid, &foutoid, &isvarlena);
				fmgr_info(foutoid, &outs[k]);
			}
			out->cells = palloc0(sizeof(char *) * Max(1, nrows * ncols));
			for (r = 0; r < nrows; r++)
				for (k = 0; k < ncols; k++)
				{
					bool		isnull;
					Datum		v = heap_getattr(t->vals[r], k + 1, t->tupdesc, &isnull);

					out->cells[r * ncols + k] = isnull ? NULL : OutputFunctionCall(&outs[k], v);
				}
			out->nrows = nrows;
			out->ncols = ncols;
		}
		if (SPI_tuptable != NULL)
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

	if (rows->cells == NULL)
		return;
	for (k = 0; k < rows->nrows * rows->ncols; k++)
		if (rows->cells[k] != NULL)
			pfree(rows->cells[k]);
	pfree(rows->cells);
	rows->cells = NULL;
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
