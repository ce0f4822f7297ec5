/*
 * engine_entry.h — what the C entry points of the engine's operations share
 * (definitions.c has them): SPI opened and closed around the engine's call,
 * its error raised once the C++ has returned, a text argument or NULL.
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
