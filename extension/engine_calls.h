/*
 * engine_calls.h — the engine's operations for the PostgreSQL module's entry
 * points (definitions.c), as C functions that never throw (engine_port.cpp):
 * each returns 1, or 0 with *err filled.  Strings returned are malloc'd;
 * the caller copies them and frees them with genroc_engine_free().  Called
 * between SPI_connect and SPI_finish.
 */
#ifndef GENROC_ENGINE_CALLS_H
#define GENROC_ENGINE_CALLS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* A failure: SQLSTATE, message, detail and hint (NULL when none). */
typedef struct GenrocEngineError
{
	char		sqlstate[6];
	char	   *message;
	char	   *detail;
	char	   *hint;
} GenrocEngineError;

typedef struct GenrocDefined
{
	char	   *name;
	int			version;
	int			is_new;
} GenrocDefined;

typedef struct GenrocDefinitionRow
{
	char	   *name;
	int			version;
	int64_t		created_us;		/* since the Unix epoch */
} GenrocDefinitionRow;

/* genroc.define: name and definition NULL for SQL NULL. */
extern int	genroc_engine_define(const char *name, const char *definition, int as_written,
								 GenrocDefined *out, GenrocEngineError *err);
/* genroc.list_definitions: *rows (malloc'd, each name too), *n of them. */
extern int	genroc_engine_list_definitions(GenrocDefinitionRow **rows, int *n, GenrocEngineError *err);
/* genroc.get_definition: the answer as JSON text. */
extern int	genroc_engine_get_definition(const char *name, int has_version, int64_t version,
										 char **json, GenrocEngineError *err);

/* genroc.redrive: the instance's new status (malloc'd). */
extern int	genroc_engine_redrive(int has_instance, int64_t instance, char **status, GenrocEngineError *err);

extern void genroc_engine_free(void *p);
extern void genroc_engine_error_free(GenrocEngineError *err);

/*
 * An entry point's frame around the engine call (definitions.c): begin
 * refuses a security-restricted operation and opens SPI; end closes it and
 * only then raises the engine's error, if any (ok 0), with its SQLSTATE,
 * message, detail and hint.  C only (end may ereport).
 */
extern void genroc_engine_begin(int *depth);
extern void genroc_engine_end(int depth, int ok, GenrocEngineError *err);

#ifdef __cplusplus
}
#endif

#endif							/* GENROC_ENGINE_CALLS_H */
