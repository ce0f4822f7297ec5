/*-------------------------------------------------------------------------
 *
 * genroc.h
 *	  What genroc.c offers the module's other C files: its clock, the
 *	  SQL-callable functions they call directly (DirectFunctionCall),
 *	  without a round trip through SQL, and statements kept per backend.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GENROC_H
#define GENROC_H

#include "fmgr.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "utils/jsonb.h"

/* genroc.now() in C: the test clock when set, else the transaction start */
extern TimestampTz genroc_clock(void);
/* the test clock when set, else the time now (not the transaction start) */
extern TimestampTz genroc_clock_now(void);

/*
 * The role genroc acts for (genroc._caller()), after refusing (42501) inside
 * a security-restricted operation; every entry point calls it first.
 */
extern Oid	genroc_caller_id(void);
/* The refusal alone: 42501 inside a security-restricted operation. */
extern void genroc_refuse_restricted(void);
/* Raises the engine's error for a null argument (22004, "<what> must not be null"). */
extern void genroc_refuse_null(const char *what) pg_attribute_noreturn();
/* This session's genroc.object_threshold in bytes (values.c). */
extern int	genroc_object_threshold_bytes(void);
/* This session's genroc.log_payloads and genroc.log_payload_max (values.c). */
extern void genroc_log_payload_settings(bool *payloads, int *payload_max);
/* A column's or argument's type as its values are read: a domain's
 * (genroc._status, genroc._wait_kind) is its base type's, a built-in type
 * its own (asked of the catalog only for types made after initdb). */
extern Oid	genroc_base_type(Oid type);
/* findJsonbValueFromContainer for a string key, `flags` as it takes them. */
extern JsonbValue *genroc_jsonb_find_key(JsonbContainer *container, uint32 flags, const char *key);

/* genroc._flush_commit(class text): this transaction's commit flushed or not */
extern PGDLLEXPORT Datum genroc_flush_commit(PG_FUNCTION_ARGS);

/*
 * A statement prepared once for this backend with a generic plan, kept
 * across calls (PostgreSQL revalidates a kept plan itself when a table or
 * function under it changes); `who` names the caller in its errors.
 */
extern SPIPlanPtr genroc_prepared(SPIPlanPtr *plan, const char *sql, int nargs, Oid *argtypes,
								  const char *who);
/* Runs a kept plan; an error on any result but `expected` (SPI_OK_...). */
extern void genroc_run(SPIPlanPtr plan, Datum *values, const char *nulls, int expected,
					   const char *who);

/*
 * Whether a task's result is within json_depth as a step's answer carries
 * it (one level down): a store may then write it without a step.
 */
extern bool genroc_jsonb_shallow(Jsonb *result);

#endif							/* GENROC_H */
