/*
 * asl_c.h — the C ABI of the ASL interpreter, for the PostgreSQL module.
 *
 * The module must not let a C++ exception or a longjmp cross these calls:
 * every function catches everything and reports through its result, and the
 * interpreter never calls into PostgreSQL.  Strings returned are malloc'd;
 * the caller copies them (into palloc'd memory) and frees them with
 * genroc_asl_free().
 */
#ifndef GENROC_ASL_C_H
#define GENROC_ASL_C_H

#ifdef __cplusplus
extern "C"
{
#endif

/* The outcome of a call: ok, or an error with its SQLSTATE. */
typedef struct GenrocAslResult
{
	int			ok;				/* 1 on success */
	char	   *json;			/* on success: the answer as JSON text, or NULL */
	char		sqlstate[6];	/* on failure: five characters and NUL */
	char	   *message;		/* on failure */
	char	   *detail;			/* on failure, may be NULL */
} GenrocAslResult;

/*
 * Validates a definition (JSON text); on success json is NULL.  `cache_key`
 * (e.g. the content hash) lets later steps skip parsing; NULL to not cache.
 */
extern GenrocAslResult genroc_asl_validate(const char *definition_json, const char *cache_key);

/*
 * Runs one step (see the protocol in asl.hpp).  The definition is looked up
 * in a per-process cache by cache_key and compiled from definition_json on a
 * miss.  definition_json may be NULL when the caller expects a hit; a miss
 * then fails with SQLSTATE 55000 and the caller calls again with the text.
 */
extern GenrocAslResult genroc_asl_step(const char *cache_key, const char *definition_json,
									   const char *request_json);

/*
 * What every start of the definition answers apart from its input
 * (asl.hpp start_task), as JSON text; json NULL when a start must be
 * stepped.  The definition is found or compiled as for a step (a miss
 * without definition_json fails with 55000).
 */
extern GenrocAslResult genroc_asl_start_task(const char *cache_key, const char *definition_json);

/*
 * Whether steps of the definition cached under cache_key may read the
 * context object (asl.hpp reads_context): 1 they may, 0 they cannot (a
 * step request may then leave "context" out), -1 it is not in this
 * process's cache (the caller writes the whole request; the step that
 * compiles it fills the cache).  Never fails.
 */
extern int	genroc_asl_reads_context(const char *cache_key);

/*
 * Whether a task's success at `state` of the definition cached under
 * cache_key ends the instance with the result as its output (asl.hpp
 * success_ends): 1 it does, 0 it does not (step it), -1 the definition is
 * not in this process's cache (step it: that fills the cache).  Never
 * fails.
 */
extern int	genroc_asl_success_ends(const char *cache_key, const char *state);

/*
 * Checks that a payload (JSON text) nests at most json_depth levels of
 * arrays and objects (core/limits.def).  Fails with SQLSTATE 54000 and the
 * message a step gives for the same payload, e.g. "the input nests deeper
 * than 512 levels of arrays and objects at $[0][0]... (limit json_depth)".
 */
extern GenrocAslResult genroc_asl_check_depth(const char *json_text, const char *what);

/*
 * Sets the host's stack check: a function that returns nonzero when the
 * stack is nearly out (the module passes one that asks PostgreSQL's
 * stack_is_too_deep()).  It must not raise an error or longjmp.  The
 * interpreter calls it once per level of recursion and, when it says so,
 * fails the call with SQLSTATE 54001.  NULL: no check but the interpreter's
 * own recursion_depth limit.
 */
extern void genroc_asl_set_stack_check(int (*too_deep) (void));

/*
 * Sets the host's interrupt check: a function that returns nonzero when the
 * host wants the interpreter to stop (the module passes one that reads
 * PostgreSQL's InterruptPending with QueryCancelPending or ProcDiePending;
 * it must not raise an error, longjmp or call CHECK_FOR_INTERRUPTS).  Every
 * loop of the interpreter over data asks it every few thousand units of
 * work (a few milliseconds at most); when it says so, the call fails with
 * GENROC_ASL_INTERRUPTED as its SQLSTATE, and the caller lets the host raise
 * its own error (CHECK_FOR_INTERRUPTS), else raises 57014.  NULL: never
 * asked (the binary, the SQLite store).
 */
extern void genroc_asl_set_interrupt_check(int (*pending) (void));

/* The SQLSTATE of a call the interrupt check stopped (query_canceled). */
#define GENROC_ASL_INTERRUPTED "57014"

/* Frees what a GenrocAslResult holds. */
extern void genroc_asl_free(GenrocAslResult *result);

#ifdef __cplusplus
}
#endif

#endif							/* GENROC_ASL_C_H */
