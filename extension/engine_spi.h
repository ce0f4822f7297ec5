/*
 * engine_spi.h — the PostgreSQL adapter's C boundary (engine_spi.c): every call
 * into PostgreSQL the engine makes, each inside PG_TRY, so that an error
 * comes back as a GenrocPgError and never longjmps across C++ frames
 * (engine_port.cpp turns it into a C++ exception).  Plain C types only: C++
 * includes this without postgres.h.
 */
#ifndef GENROC_ENGINE_SPI_H
#define GENROC_ENGINE_SPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* An error PostgreSQL raised, copied (palloc'd in the caller's context). */
typedef struct GenrocPgError
{
	char		sqlstate[6];
	char	   *message;
	char	   *detail;			/* NULL when none */
	char	   *hint;			/* NULL when none */
} GenrocPgError;

/* Parameter kinds, as engine::Param::Kind. */
enum
{
	GENROC_PG_INT8 = 0,
	GENROC_PG_FLOAT8 = 1,
	GENROC_PG_TEXT = 2,
	GENROC_PG_BOOL = 3,
	GENROC_PG_JSONB = 4,
	GENROC_PG_INT8_ARRAY = 5,	/* n ints */
	GENROC_PG_TEXT_ARRAY = 6,	/* n texts (NUL-terminated) */
	GENROC_PG_JSONB_ARRAY = 7,	/* n: natives[k] (a jsonb Datum) or else texts[k] */
	GENROC_PG_TID_ARRAY = 8		/* n natives (ItemPointers) */
};

typedef struct GenrocPgParam
{
	int			kind;
	int			is_null;
	int64_t		i;				/* INT8, BOOL */
	double		d;				/* FLOAT8 */
	const char *text;			/* TEXT, JSONB: NUL-terminated */
	size_t		len;
	/* the arrays' elements */
	int			n;
	const int64_t *ints;
	const char *const *texts;
	const void *const *natives;
} GenrocPgParam;

/* How a result cell came back (GenrocPgCell.kind). */
enum
{
	GENROC_PG_CELL_NULL = 0,
	GENROC_PG_CELL_TEXT = 1,	/* text, len: its text as the type writes it */
	GENROC_PG_CELL_INT = 2,		/* i: an int2, int4 or int8 */
	GENROC_PG_CELL_BOOL = 3		/* i: a bool, 0 or 1 */
};

typedef struct GenrocPgCell
{
	int			kind;
	int64_t		i;				/* INT, BOOL */
	const char *text;			/* TEXT: len bytes, not NUL-terminated */
	size_t		len;
	/*
	 * A jsonb or tid column of a statement that keeps its values
	 * (GENROC_PG_KEEP_VALUES): the Datum (a pointer), copied into the memory
	 * context that was current at SPI_connect, so it outlives SPI_finish;
	 * else NULL.
	 */
	const void *native;
	void	   *owned;			/* what genroc_pg_rows_free pfrees, or NULL */
} GenrocPgCell;

/*
 * A statement's rows, cells[row * ncols + col]; a cell's text may point
 * into the statement's tuples, which stay until genroc_pg_rows_free.
 */
typedef struct GenrocPgRows
{
	int64_t		processed;
	int			nrows;
	int			ncols;
	GenrocPgCell *cells;
	void	   *tuptable;		/* the SPI tuple table the cells point into */
} GenrocPgRows;

/*
 * A statement's settings in PostgreSQL (GENROC_PG_SETTINGS rows of
 * engine/statements.def): GENROC_PG_GENERIC_PLAN, prepared with a generic
 * plan (CURSOR_OPT_GENERIC_PLAN: one whose plan per call costs more than it
 * runs); GENROC_PG_KEEP_VALUES, its jsonb columns come back as Datums as
 * well, and its tid columns (cell.native: a result the entry point passes on
 * as it is, without parsing its text again; a row version the next
 * statement finds the row by).
 */
#define GENROC_PG_GENERIC_PLAN 1
#define GENROC_PG_KEEP_VALUES 2

/*
 * Runs statement `id` (its text `sql`, prepared and kept on the first call
 * of this backend with the parameter types of that call's kinds), its rows
 * handed back when want_rows: integers and booleans as values, text
 * columns as they are, every other type through its output function.
 * read_only: for a STABLE function (SPI's read_only: the caller's snapshot,
 * no command counter increment).  settings: the statement's
 * GENROC_PG_SETTINGS (engine/statements.def), fixed for it.  1 on success,
 * 0 with *err filled.
 */
extern int	genroc_pg_run(int id, int nstatements, const char *sql, int settings, int nparams,
						  const GenrocPgParam *params, int read_only, int want_rows,
						  GenrocPgRows *out, GenrocPgError *err);
/* Frees what genroc_pg_run materialized. */
extern void genroc_pg_rows_free(GenrocPgRows *rows);

/* genroc.now() in milliseconds since the Unix epoch. */
extern int	genroc_pg_now_ms(int64_t *out, GenrocPgError *err);

/* genroc._caller(): the role the call acts for, an oid. */
extern int	genroc_pg_caller(int64_t *out, GenrocPgError *err);

/* The text of a jsonb Datum (*out palloc'd). */
extern int	genroc_pg_jsonb_text(const void *jsonb, char **out, GenrocPgError *err);

/* jsonb's canonical text of a JSON text (*out palloc'd). */
extern int	genroc_pg_canonical_json(const char *text, char **out, GenrocPgError *err);

/* A subtransaction, as a PL/pgSQL EXCEPTION block makes one. */
extern int	genroc_pg_savepoint_begin(GenrocPgError *err);
extern int	genroc_pg_savepoint_release(GenrocPgError *err);
extern int	genroc_pg_savepoint_rollback(GenrocPgError *err);
/* How many are open; an entry point puts the count back as it found it. */
extern int	genroc_pg_savepoint_depth(void);
extern void genroc_pg_savepoint_restore(int depth);

#ifdef __cplusplus
}
#endif

#endif							/* GENROC_ENGINE_SPI_H */
