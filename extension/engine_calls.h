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

/* genroc.alias_set, get_alias, list_aliases: the answer as JSON text. */
extern int	genroc_engine_alias_set(const char *name, const char *alias, const char *routing,
									const char *description, char **json, GenrocEngineError *err);
extern int	genroc_engine_alias_drop(const char *name, const char *alias, GenrocEngineError *err);
extern int	genroc_engine_get_alias(const char *name, const char *alias, char **json, GenrocEngineError *err);
extern int	genroc_engine_list_aliases(const char *name, char **json, GenrocEngineError *err);
/* genroc.undefine: the name, or one version of it. */
extern int	genroc_engine_undefine(const char *name, int has_version, int64_t version, GenrocEngineError *err);
/* genroc._start_version: the version a start runs, in *version. */
extern int	genroc_engine_start_version(const char *name, int has_version, int64_t version, const char *alias,
										int *out, GenrocEngineError *err);

extern void genroc_engine_free(void *p);
extern void genroc_engine_error_free(GenrocEngineError *err);

#ifdef __cplusplus
}
#endif

#endif							/* GENROC_ENGINE_CALLS_H */
