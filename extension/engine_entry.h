/*
 * engine_entry.h — what every C entry point of an engine operation does
 * around its call (definitions.c): genroc_engine_begin refuses a
 * security-restricted operation and opens SPI; genroc_engine_end puts the
 * savepoints back, closes SPI and, when the call failed, raises the
 * engine's error with its SQLSTATE, message, detail and hint (every C++
 * frame is gone by then).
 */
#ifndef GENROC_ENGINE_ENTRY_H
#define GENROC_ENGINE_ENTRY_H

#include "fmgr.h"
#include "datatype/timestamp.h"

#include "engine_calls.h"

/* Refuses a security-restricted operation, opens SPI; *depth for _end. */
extern void genroc_engine_begin(int *depth);
/* Closes SPI; then raises *err (its SQLSTATE, message, detail, hint) unless ok. */
extern void genroc_engine_end(int depth, int ok, GenrocEngineError *err);
extern void genroc_raise_engine_error(GenrocEngineError *err);
/*
 * GENROC_ENGINE_CALL(call): an entry point's frame around one engine call —
 * genroc_engine_begin, the call, genroc_engine_end with what it returned.
 * The call reports a failure into engine_err, which the macro declares:
 *     GENROC_ENGINE_CALL(genroc_engine_queue_drop(name, &engine_err));
 */
#define GENROC_ENGINE_CALL(call) \
	do { \
		GenrocEngineError engine_err = {0}; \
		int			engine_depth; \
		genroc_engine_begin(&engine_depth); \
		genroc_engine_end(engine_depth, (call), &engine_err); \
	} while (0)

/* Argument k as a palloc'd C string, or NULL for SQL NULL. */
extern char *genroc_text_arg_or_null(FunctionCallInfo fcinfo, int k);
/* A jsonb argument k as JSON text (palloc'd), or NULL for SQL NULL. */
extern char *genroc_jsonb_arg_or_null(FunctionCallInfo fcinfo, int k);
/* The engine's malloc'd JSON text as jsonb, or its text as text; freed. */
extern Datum genroc_jsonb_answer(char *json);
extern Datum genroc_text_answer(char *text);
/* Microseconds since the Unix epoch as a timestamptz. */
extern TimestampTz genroc_timestamp_of_unix_us(int64_t us);
/* A text[] argument k as palloc'd C strings (NULL for a NULL element), *n
 * of them; NULL and *has 0 for SQL NULL. */
extern const char **genroc_text_array_arg(FunctionCallInfo fcinfo, int k, int *has, int *n);
/* A task handed to a worker as the nine columns claim, complete_and_claim
 * and complete_many return after its instance: epoch, state, resource,
 * input, only_once, timeout_s, attempt, lease_expires, queue. */
extern void genroc_task_datums(const GenrocClaimTask *t, Datum *values, bool *nulls);

#endif							/* GENROC_ENGINE_ENTRY_H */
