/*
 * engine_entry.h — what every C entry point of an engine operation does
 * around its call (definitions.c): refuse a security-restricted operation
 * and open SPI (genroc_engine_begin), close SPI and raise the engine's
 * error with its SQLSTATE once every C++ frame is gone (genroc_engine_end).
 */
#ifndef GENROC_ENGINE_ENTRY_H
#define GENROC_ENGINE_ENTRY_H

#include "fmgr.h"

#include "engine_calls.h"

extern void genroc_engine_begin(int *depth);
extern void genroc_engine_end(int depth, int ok, GenrocEngineError *err);
/* The text argument k as a C string, NULL for SQL NULL. */
extern char *genroc_text_arg_or_null(FunctionCallInfo fcinfo, int k);

#endif							/* GENROC_ENGINE_ENTRY_H */
