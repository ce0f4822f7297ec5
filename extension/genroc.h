/*-------------------------------------------------------------------------
 *
 * genroc.h
 *	  What genroc.c offers the module's other C files: its clock and the
 *	  SQL-callable functions they call directly (DirectFunctionCall),
 *	  without a round trip through SQL.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GENROC_H
#define GENROC_H

#include "fmgr.h"
#include "datatype/timestamp.h"

/* genroc.now() in C: the test clock when set, else the transaction start */
extern TimestampTz genroc_clock(void);
/* the test clock when set, else the time now (not the transaction start) */
extern TimestampTz genroc_clock_now(void);

/* genroc._flush_commit(class text): this transaction's commit flushed or not */
extern PGDLLEXPORT Datum genroc_flush_commit(PG_FUNCTION_ARGS);

#endif							/* GENROC_H */
