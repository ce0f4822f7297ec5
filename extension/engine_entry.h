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

#include "engine_calls.h"

/* Refuses a security-restricted operation, opens SPI; *depth for _end. */
extern void genroc_engine_begin(int *depth);
/* Closes SPI; then raises *err (its SQLSTATE, message, detail, hint) unless ok. */
extern void genroc_engine_end(int depth, int ok, GenrocEngineError *err);
extern void genroc_raise_engine_error(GenrocEngineError *err);
/* Argument k as a palloc'd C string, or NULL for SQL NULL. */
extern char *genroc_text_arg_or_null(FunctionCallInfo fcinfo, int k);

#endif							/* GENROC_ENGINE_ENTRY_H */
