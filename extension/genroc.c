/*-------------------------------------------------------------------------
 *
 * genroc.c
 *	  The C side of the genroc extension: the test clock and the bridge to
 *	  the ASL interpreter.
 *
 * The state machine's transitions are PL/pgSQL (extension/sql/); what is
 * clearly better in C lives here: evaluating ASL (paths, Choice rules,
 * Retry/Catch) through the interpreter in core/, which the SQLite shim
 * shares, so both stores run the very same ASL semantics.
 *
 * Glossary
 *	  cache key	the sha256 of a definition's canonical text; the interpreter
 *				keeps compiled definitions per backend under that key, so a
 *				step only ships the definition's text on a cache miss
 *	  step		one call into the interpreter (core/asl.hpp, "The step
 *				protocol"): from an event to where the instance stops
 *	  test clock	the setting genroc.test_clock: when it holds a timestamp,
 *				genroc.now() returns it, so tests control time
 *
 * The interpreter is C++; core/asl_c.h promises that no exception crosses
 * its calls.  This file makes sure no longjmp (ereport) crosses them either:
 * every result is copied into palloc'd memory and freed before any error is
 * raised.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "asl_c.h"

PG_MODULE_MAGIC;

/* genroc.test_clock: '' means real time */
static char *genroc_test_clock = NULL;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(genroc_now);
PG_FUNCTION_INFO_V1(genroc_validate);
PG_FUNCTION_INFO_V1(genroc_step);

/* Registers the settings genroc reads. */
void
_PG_init(void)
{
	DefineCustomStringVariable("genroc.test_clock",
							   "Time genroc.now() returns, for tests.",
							   "Empty means real time (the transaction's start).",
							   &genroc_test_clock,
							   "",
							   /*
								* Superuser only: whoever sets it moves time for
								* every instance a tick touches.  Test roles get
								* GRANT SET ON PARAMETER genroc.test_clock.
								*/
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("genroc");
#endif
}

/*
 * genroc.now(): the test clock when set, else the transaction's start time.
 *
 * The setting is parsed here, on use, not by a check hook: a value set
 * before the module is loaded would reach a hook only at load time, where a
 * bad one is dropped with a warning and the test would quietly run on real
 * time; parsing on use makes it fail loudly (22007) instead.
 */
Datum
genroc_now(PG_FUNCTION_ARGS)
{
	if (genroc_test_clock != NULL && genroc_test_clock[0] != '\0')
	{
		/* timestamptz_in raises 22007 itself when the text is not a time */
		return DirectFunctionCall3(timestamptz_in,
								   CStringGetDatum(genroc_test_clock),
								   ObjectIdGetDatum(InvalidOid),
								   Int32GetDatum(-1));
	}
	PG_RETURN_TIMESTAMPTZ(GetCurrentTransactionStartTimestamp());
}

/* The parts of a failed interpreter call, copied out of malloc'd memory. */
typedef struct GenrocFailure
{
	char		sqlstate[6];
	char	   *message;
	char	   *detail;
} GenrocFailure;

/*
 * Copies what a result holds into palloc'd memory and frees the result, so
 * an error can be raised afterwards without leaking the interpreter's memory.
 * Returns the JSON text on success (possibly NULL), else fills *failure.
 */
static char *
take_result(GenrocAslResult *result, bool *ok, GenrocFailure *failure)
{
	char	   *json = NULL;

	*ok = result->ok != 0;
	if (*ok)
	{
		if (result->json != NULL)
			json = pstrdup(result->json);
	}
	else
	{
		memcpy(failure->sqlstate, result->sqlstate, 6);
		failure->sqlstate[5] = '\0';
		failure->message = pstrdup(result->message != NULL ? result->message :
								   "ASL interpreter failed");
		failure->detail = result->detail != NULL ? pstrdup(result->detail) : NULL;
	}
	genroc_asl_free(result);
	return json;
}

/* Raises the interpreter's failure with its own SQLSTATE. */
static void
raise_failure(const GenrocFailure *failure)
{
	const char *s = failure->sqlstate;
	int			code;

	if (strlen(s) != 5)
		code = ERRCODE_INTERNAL_ERROR;
	else
		code = MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4]);
	ereport(ERROR,
			(errcode(code),
			 errmsg("%s", failure->message),
			 failure->detail != NULL ? errdetail("%s", failure->detail) : 0));
}

/* True when the failure is the interpreter's "definition not in cache". */
static bool
is_cache_miss(const GenrocFailure *failure)
{
	return strcmp(failure->sqlstate, "55000") == 0;
}

/* The text of a jsonb argument. */
static char *
jsonb_text(Datum value)
{
	Jsonb	   *jb = DatumGetJsonbP(value);

	return JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

/* genroc._validate(definition jsonb, cache_key text): raises RC001 on a fault. */
Datum
genroc_validate(PG_FUNCTION_ARGS)
{
	char	   *definition;
	char	   *cache_key = NULL;
	GenrocAslResult result;
	GenrocFailure failure;
	bool		ok;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("definition must not be null")));
	definition = jsonb_text(PG_GETARG_DATUM(0));
	if (!PG_ARGISNULL(1))
		cache_key = text_to_cstring(PG_GETARG_TEXT_PP(1));

	result = genroc_asl_validate(definition, cache_key);
	(void) take_result(&result, &ok, &failure);
	if (!ok)
		raise_failure(&failure);
	PG_RETURN_VOID();
}

/*
 * genroc._step(cache_key text, definition jsonb, request jsonb) → jsonb.
 * The definition is detoasted and serialized only when the interpreter's
 * cache misses, which is once per definition per backend.
 */
Datum
genroc_step(PG_FUNCTION_ARGS)
{
	char	   *cache_key;
	char	   *request;
	char	   *answer;
	GenrocAslResult result;
	GenrocFailure failure;
	bool		ok;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("cache_key, definition and request must not be null")));
	cache_key = text_to_cstring(PG_GETARG_TEXT_PP(0));
	request = jsonb_text(PG_GETARG_DATUM(2));

	result = genroc_asl_step(cache_key, NULL, request);
	answer = take_result(&result, &ok, &failure);
	if (!ok && is_cache_miss(&failure))
	{
		char	   *definition = jsonb_text(PG_GETARG_DATUM(1));

		result = genroc_asl_step(cache_key, definition, request);
		answer = take_result(&result, &ok, &failure);
	}
	if (!ok)
		raise_failure(&failure);
	if (answer == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("ASL interpreter returned no answer")));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(answer)));
}
