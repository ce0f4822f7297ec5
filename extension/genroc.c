/*-------------------------------------------------------------------------
 *
 * genroc.c
 *	  The C side of the genroc extension: the test clock and the bridge to
 *	  the ASL interpreter.
 *
 * The state machine's transitions are PL/pgSQL (extension/sql/); what is
 * clearly better in C lives here: evaluating ASL (paths, Choice rules,
 * Retry/Catch) through the interpreter in core/, which the SQLite shim
 * shares, so both stores run the very same ASL semantics, and the step
 * requests of the hot path written as text.  The common claim is C too, in
 * claim.c.
 *
 * Glossary
 *	  cache key	the sha256 of a definition's canonical text; the interpreter
 *				keeps compiled definitions per backend under that key, so a
 *				step only ships the definition's text on a cache miss
 *	  step		one call into the interpreter (core/asl.hpp, "The step
 *				protocol"): from an event to where the instance stops
 *	  test clock	the setting genroc.test_clock: when it holds a timestamp,
 *				genroc.now() returns it, so tests control time
 *	  durability	the setting genroc.durability (none, essential, terminal,
 *				strict): which commits must reach the disk before they are
 *				confirmed; genroc._flush_commit applies it
 *	  commit class	why one transaction's commit may have to be flushed:
 *				outside, only_once_claim, only_once_report (the complete or
 *				fail of an OnlyOnce task), terminal, or progress (anything
 *				else that writes)
 *	  fencing epoch	the token a claim hands out with a lease; random, so a
 *				claim that a crash rolled back can never hand the same one
 *				out again (genroc._fencing_epoch in claim.c, the engine's
 *				new_epoch)
 *	  session		a backend, named by its pid and start time; a worker's
 *				registration records its session, and while that session
 *				exists the worker is alive (genroc._session_alive)
 *	  interrupt check	genroc_interrupt_pending(), handed to the interpreter
 *				(genroc_asl_set_interrupt_check): it only reads whether a
 *				cancel or a termination is pending; the interpreter asks
 *				it every few thousand units of work, stops with 57014, and
 *				raise_failure() then calls CHECK_FOR_INTERRUPTS()
 *	  stack check	PostgreSQL's stack_is_too_deep(), handed to the interpreter
 *				(genroc_asl_set_stack_check), which asks it once per level of
 *				recursion and fails with 54001 as a C++ error of its own: the
 *				backend's max_stack_depth bounds the C++ too, and no
 *				ereport longjmps across C++ frames
 *	  log settings	genroc.log_payloads, genroc.log_payload_max: what the
 *				instance log keeps of payloads (genroc._log_payloads);
 *				genroc.log_retention, genroc.instance_retention: what
 *				genroc.tick prunes
 *
 * The interpreter is C++; core/asl_c.h promises that no exception crosses
 * its calls.  This file makes sure no longjmp (ereport) crosses them either:
 * every result is copied into palloc'd memory and freed before any error is
 * raised.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "storage/proc.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "executor/executor.h"
#include "utils/fmgroids.h"
#include "utils/uuid.h"

#include "asl_c.h"
#include "engine_entry.h"
#include "genroc.h"
#include "ticker.h"

/* The interpreter's limits, json_depth among them (core/limits.def, the one table of limits). */
#define GENROC_LIMIT(sym, name, value, what) enum { limit_##sym = (value) };
#include "limits.def"
#undef GENROC_LIMIT

static bool jsonb_depth_within(Jsonb *jb, int limit);

/*
 * PostgreSQL versions: 15 and later.  Every difference between the versions'
 * C APIs is guarded here with PG_VERSION_NUM (docs/operations.md "PostgreSQL versions"
 * says which are built and tested).
 */
#if PG_VERSION_NUM < 150000
#error "genroc needs PostgreSQL 15 or later"
#endif

/* 17 moved the local transaction id into the virtual transaction id */
#if PG_VERSION_NUM >= 170000
#define GENROC_MY_LXID() (MyProc->vxid.lxid)
#else
#define GENROC_MY_LXID() (MyProc->lxid)
#endif

/* The extension version this module was built for (the Makefile sets it). */
#ifndef GENROC_VERSION
#error "GENROC_VERSION is not defined: build with the Makefile"
#endif
#ifndef GENROC_PREV_VERSION
#error "GENROC_PREV_VERSION is not defined: build with the Makefile"
#endif

/* 18 lets a module name itself and its version (pg_get_loaded_modules) */
#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "genroc",.version = GENROC_VERSION);
#else
PG_MODULE_MAGIC;
#endif

/* genroc.test_clock: '' means real time */
static char *genroc_test_clock = NULL;

/* genroc.durability: which commits are flushed before they are confirmed */
typedef enum GenrocDurability
{
	GENROC_DURABILITY_NONE,
	GENROC_DURABILITY_ESSENTIAL,
	GENROC_DURABILITY_TERMINAL,
	GENROC_DURABILITY_STRICT
} GenrocDurability;

static const struct config_enum_entry durability_options[] = {
	{"none", GENROC_DURABILITY_NONE, false},
	{"essential", GENROC_DURABILITY_ESSENTIAL, false},
	{"terminal", GENROC_DURABILITY_TERMINAL, false},
	{"strict", GENROC_DURABILITY_STRICT, false},
	{NULL, 0, false}
};

static int	genroc_durability = GENROC_DURABILITY_ESSENTIAL;

/* The instance log and retention (docs/operations.md "Logs and retention") */
static bool genroc_log_payloads = true;
static int	genroc_log_payload_max = 1024 * 1024;	/* bytes; 0 = no limit */
static int	genroc_log_retention = 0;	/* seconds; 0 = tick prunes no log */
static int	genroc_instance_retention = 0;	/* seconds; 0 = keep forever */

/* Large values stored once (extension/sql/15_objects.sql; docs/operations.md "Large values") */
static int	genroc_object_threshold = 8192;	/* bytes of a jsonb datum */
static int	genroc_object_grace = 3600;	/* seconds */

/*
 * The local transaction in which a flush was requested, so a later statement
 * of the same transaction never turns it off again.  InvalidLocalTransactionId
 * when none was.
 */
static LocalTransactionId flush_requested_in = InvalidLocalTransactionId;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(genroc_now);
PG_FUNCTION_INFO_V1(genroc_validate);
PG_FUNCTION_INFO_V1(genroc_step);
PG_FUNCTION_INFO_V1(genroc_step_start);
PG_FUNCTION_INFO_V1(genroc_start_task);
PG_FUNCTION_INFO_V1(genroc_step_succeeded);
PG_FUNCTION_INFO_V1(genroc_flush_commit);
PG_FUNCTION_INFO_V1(genroc_durability_level);
PG_FUNCTION_INFO_V1(genroc_log_settings);
PG_FUNCTION_INFO_V1(genroc_object_threshold_fn);
PG_FUNCTION_INFO_V1(genroc_caller);
PG_FUNCTION_INFO_V1(genroc_entry);
PG_FUNCTION_INFO_V1(genroc_session_start);
PG_FUNCTION_INFO_V1(genroc_session_alive);
PG_FUNCTION_INFO_V1(genroc_check_depth);
PG_FUNCTION_INFO_V1(genroc_version);

/*
 * The interpreter's stack check: asks PostgreSQL without raising anything
 * (check_stack_depth() would ereport across the interpreter's C++ frames).
 */
static int
genroc_stack_too_deep(void)
{
	return stack_is_too_deep() ? 1 : 0;
}

/*
 * The check of the settings that act on every role's rows when an
 * administering role's tick reads them (genroc.log_retention,
 * genroc.instance_retention, genroc.object_grace): a database-wide default
 * (ALTER DATABASE ... SET, ALTER ROLE ALL IN DATABASE ... SET) is not
 * taken.  A database's owner may write those without administering genroc,
 * and every session of the database would start with them, the
 * in-database ticker's (a superuser by default) included.  Every other
 * source is a role deciding for itself or an administrator's: the server's
 * files (postgresql.conf, ALTER SYSTEM), ALTER ROLE (the role itself, or a
 * role allowed to change it), the connection's options, the session's SET.
 * The refusal is a WARNING when a session starts (or when the module loads
 * in it), and the setting keeps its default.
 */
static bool
check_not_database_default(int *newval, void **extra, GucSource source)
{
	if (source != PGC_S_DATABASE)
		return true;
	GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
	GUC_check_errmsg("genroc's retention settings are not taken from a database's defaults");
	GUC_check_errdetail("ALTER DATABASE ... SET is open to the database's owner, and the setting would delete "
						"every role's rows; the default stays.");
	GUC_check_errhint("Set it in postgresql.conf or with ALTER SYSTEM, for a role with ALTER ROLE, "
					  "or in the administering session; docs/security.md \"Roles and ownership\".");
	return false;
}

/*
 * The interpreter's interrupt check: whether a query cancel (a statement
 * timeout, pg_cancel_backend) or the end of the backend (pg_terminate_backend)
 * is pending and may be processed now.  Only reads PostgreSQL's flags;
 * CHECK_FOR_INTERRUPTS() would longjmp across the interpreter's C++ frames.
 * raise_failure() lets PostgreSQL raise its own error once the interpreter
 * has returned.
 */
static int
genroc_interrupt_pending(void)
{
	return INTERRUPTS_PENDING_CONDITION() && (QueryCancelPending || ProcDiePending) &&
		INTERRUPTS_CAN_BE_PROCESSED() ? 1 : 0;
}

/*
 * Registers the settings genroc reads and the interpreter's stack and
 * interrupt checks.
 */
void
_PG_init(void)
{
	genroc_asl_set_stack_check(genroc_stack_too_deep);
	genroc_asl_set_interrupt_check(genroc_interrupt_pending);
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
	DefineCustomEnumVariable("genroc.durability",
							 "Which genroc commits are flushed to disk before they are confirmed.",
							 "none, essential (work from outside and OnlyOnce claims), "
							 "terminal (also instance ends) or strict (every commit).",
							 &genroc_durability,
							 GENROC_DURABILITY_ESSENTIAL,
							 durability_options,
							 /*
							  * Any role: a session can only make its own
							  * commits more or less durable, which
							  * synchronous_commit already lets it do.
							  */
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * The log settings are USERSET: they shape only the log rows this
	 * session writes, or what this session's tick prunes; tick prunes only
	 * for a role that administers genroc, which may call genroc.prune with
	 * any retention anyway (extension/sql/12_roles.sql).  The retentions
	 * and the object grace are not taken from a database's defaults
	 * (check_not_database_default): those a database owner writes.
	 */
	DefineCustomBoolVariable("genroc.log_payloads",
							 "Whether the instance log records payloads.",
							 "Off: task inputs and outputs, results, event payloads and "
							 "instance input and output are left out of the log.",
							 &genroc_log_payloads,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("genroc.log_payload_max",
							"Longest payload the instance log records whole.",
							"A payload whose JSON text is longer is logged as a marker "
							"with its size and its first characters; 0 means no limit.",
							&genroc_log_payload_max,
							1024 * 1024,
							0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("genroc.log_retention",
							"Age after which genroc.tick deletes instance log rows.",
							"0 (the default) means tick prunes no log rows.",
							&genroc_log_retention,
							0,
							0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_S,
							check_not_database_default, NULL, NULL);
	DefineCustomIntVariable("genroc.instance_retention",
							"Time after its end at which genroc.tick deletes a concluded top-level instance and its tree.",
							"0 (the default) keeps concluded instances forever.",
							&genroc_instance_retention,
							0,
							0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_S,
							check_not_database_default, NULL, NULL);
	/*
	 * USERSET like the log settings: the threshold decides only how this
	 * session's writes store a value (reading is the same either way), the
	 * grace only what this session's tick or prune collects (and, as the
	 * retentions, not from a database's defaults).
	 */
	DefineCustomIntVariable("genroc.object_threshold",
							"Size above which a value is stored once in genroc._objects and referenced.",
							"Measured as the value's jsonb size (pg_column_size).",
							&genroc_object_threshold,
							8192,
							64, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("genroc.object_grace",
							"How long a stored value no instance or log row uses stays readable before tick or prune deletes it.",
							NULL,
							&genroc_object_grace,
							3600,
							0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_S,
							check_not_database_default, NULL, NULL);
	/* the in-database ticker's settings, and its workers when preloaded */
	genroc_ticker_init();
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
	PG_RETURN_TIMESTAMPTZ(genroc_clock());
}

/* genroc.now() for the module's own C (genroc.h). */
TimestampTz
genroc_clock(void)
{
	if (genroc_test_clock != NULL && genroc_test_clock[0] != '\0')
	{
		/* timestamptz_in raises 22007 itself when the text is not a time */
		return DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													   CStringGetDatum(genroc_test_clock),
													   ObjectIdGetDatum(InvalidOid),
													   Int32GetDatum(-1)));
	}
	return GetCurrentTransactionStartTimestamp();
}

/* The test clock when set, else the time now (not the transaction's start). */
TimestampTz
genroc_clock_now(void)
{
	if (genroc_test_clock != NULL && genroc_test_clock[0] != '\0')
		return genroc_clock();
	return GetCurrentTimestamp();
}

/*
 * genroc._flush_commit(class): decides, for the transaction it runs in,
 * whether its commit is flushed, by setting synchronous_commit for this
 * transaction only (what set_config(..., true) does; a SET clause on the
 * calling function would be undone before the commit).
 *
 * Every engine function that writes calls it: 'progress' for ordinary work,
 * the named classes where the level may demand a flush.  A transaction that
 * has asked for a flush keeps it, whatever later statements say.  Commits
 * that need no flush are set to 'off' explicitly, since the server's own
 * default is 'on'.  WAL is written in order, so one flushed commit also makes
 * every earlier commit durable; the levels rely on that.
 *
 * Written in C because it runs in every writing transaction.
 */
Datum
genroc_flush_commit(PG_FUNCTION_ARGS)
{
	char	   *class_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		flush;
	LocalTransactionId lxid = GENROC_MY_LXID();

	if (strcmp(class_name, "outside") == 0 ||
		strcmp(class_name, "only_once_claim") == 0 ||
		strcmp(class_name, "only_once_report") == 0)
		flush = genroc_durability >= GENROC_DURABILITY_ESSENTIAL;
	else if (strcmp(class_name, "terminal") == 0)
		flush = genroc_durability >= GENROC_DURABILITY_TERMINAL;
	else if (strcmp(class_name, "progress") == 0)
		flush = genroc_durability >= GENROC_DURABILITY_STRICT;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown commit class \"%s\"", class_name),
				 errhint("Known classes: outside, only_once_claim, only_once_report, terminal, progress.")));

	if (flush)
	{
		flush_requested_in = lxid;
		(void) set_config_option("synchronous_commit", "on",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
	}
	else if (flush_requested_in != lxid)
		(void) set_config_option("synchronous_commit", "off",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
	PG_RETURN_VOID();
}

/* genroc.durability(): the level in force for this session. */
Datum
genroc_durability_level(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(durability_options[genroc_durability].name));
}

/*
 * genroc._log_settings(): the four log settings in force for this session,
 * as {"payloads": bool, "payload_max": bytes, "log_retention_s": int,
 * "instance_retention_s": int}.  Read through the module, not with
 * current_setting, so a value set before the module loaded has been checked.
 */
Datum
genroc_log_settings(PG_FUNCTION_ARGS)
{
	char	   *text = psprintf("{\"payloads\": %s, \"payload_max\": %d, "
								"\"log_retention_s\": %d, \"instance_retention_s\": %d, "
								"\"object_grace_s\": %d}",
								genroc_log_payloads ? "true" : "false",
								genroc_log_payload_max,
								genroc_log_retention,
								genroc_instance_retention,
								genroc_object_grace);

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/*
 * genroc._object_threshold() → int: this session's genroc.object_threshold in
 * bytes (current_setting would answer it with a unit, "8kB").
 */
Datum
genroc_object_threshold_fn(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(genroc_object_threshold);
}

/* This session's genroc.object_threshold in bytes, for C (values.c). */
int
genroc_object_threshold_bytes(void)
{
	return genroc_object_threshold;
}

/* This session's genroc.log_payloads and genroc.log_payload_max, for C (values.c). */
void
genroc_log_payload_settings(bool *payloads, int *payload_max)
{
	*payloads = genroc_log_payloads;
	*payload_max = genroc_log_payload_max;
}

Oid
genroc_base_type(Oid type)
{
	return type >= FirstNormalObjectId ? getBaseType(type) : type;
}

/* findJsonbValueFromContainer for a string key, `flags` as it takes them. */
JsonbValue *
genroc_jsonb_find_key(JsonbContainer *container, uint32 flags, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	return findJsonbValueFromContainer(container, flags, &k);
}

/* Whether `jsonb ? key` is true: a top-level object key, or a string element of an array. */
static bool
has_key(Jsonb *jb, const char *key)
{
	return genroc_jsonb_find_key(&jb->root, JB_FOBJECT | JB_FARRAY, key) != NULL;
}

/*
 * genroc.<name>(value jsonb), a SQL function the C here hands its rare cases
 * to, looked up by name on each such call so that a dropped and remade
 * extension is found again.
 */
static Datum
call_sql_jsonb(const char *name, Datum value)
{
	Oid			argtypes[1] = {JSONBOID};
	Oid			fn = LookupFuncName(list_make2(makeString("genroc"), makeString(pstrdup(name))),
									1, argtypes, false);

	return OidFunctionCall1(fn, value);
}

/* A jsonb string value of a C string. */
static JsonbValue
jsonb_string(const char *text)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) text;
	v.val.string.len = (int) strlen(text);
	return v;
}

/* A jsonb as a value to push into another: its scalar, or its container. */
static JsonbValue
jsonb_value_of(Jsonb *jb)
{
	JsonbValue	v;

	if (JB_ROOT_IS_SCALAR(jb))
	{
		if (!JsonbExtractScalar(&jb->root, &v))
			elog(ERROR, "genroc: a scalar jsonb without its scalar");
	}
	else
	{
		v.type = jbvBinary;
		v.val.binary.data = &jb->root;
		v.val.binary.len = VARSIZE(jb) - VARHDRSZ;
	}
	return v;
}

/*
 * genroc._detail(VARIADIC "any") → jsonb: the object of key/value pairs, as
 * jsonb_build_object builds it, for the types genroc's log details hold:
 * keys text, values text, integers, boolean or jsonb (NULL: JSON null).
 * jsonb_build_object looks each argument's type up in the catalog on every
 * call, which made it a sixth of the cost of a log row on the hot path
 * (claim's task_started, complete_many's task_succeeded and succeeded);
 * here the types are read from the call's expression.  Another type, a
 * null key, an odd count or a VARIADIC array is 22023.
 */
PG_FUNCTION_INFO_V1(genroc_detail);

Datum
genroc_detail(PG_FUNCTION_ARGS)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;
	JsonbValue *object;
	int			nargs = PG_NARGS();

	if (fcinfo->flinfo == NULL || get_fn_expr_variadic(fcinfo->flinfo) || nargs % 2 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("genroc._detail takes keys and values in pairs, as separate arguments")));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int k = 0; k < nargs; k++)
	{
		Oid			type = genroc_base_type(get_fn_expr_argtype(fcinfo->flinfo, k));
		bool		key = k % 2 == 0;

		if (PG_ARGISNULL(k))
		{
			if (key)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("genroc._detail: key %d must not be null", k / 2 + 1)));
			v.type = jbvNull;
		}
		else if (type == TEXTOID || type == VARCHAROID)
		{
			text	   *t = PG_GETARG_TEXT_PP(k);

			v.type = jbvString;
			v.val.string.val = VARDATA_ANY(t);
			v.val.string.len = (int) VARSIZE_ANY_EXHDR(t);
		}
		else if (type == UNKNOWNOID)
			v = jsonb_string(DatumGetCString(PG_GETARG_DATUM(k)));
		else if (key)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("genroc._detail: key %d must be text, not %s", k / 2 + 1,
							format_type_be(type))));
		else if (type == INT2OID || type == INT4OID || type == INT8OID)
		{
			int64		n = type == INT8OID ? PG_GETARG_INT64(k)
				: type == INT4OID ? (int64) PG_GETARG_INT32(k) : (int64) PG_GETARG_INT16(k);

			v.type = jbvNumeric;
			v.val.numeric = int64_to_numeric(n);
		}
		else if (type == BOOLOID)
		{
			v.type = jbvBool;
			v.val.boolean = PG_GETARG_BOOL(k);
		}
		else if (type == JSONBOID)
			v = jsonb_value_of(PG_GETARG_JSONB_P(k));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("genroc._detail: value %d must be text, an integer, boolean or jsonb, not %s",
							k / 2 + 1, type == InvalidOid ? "unknown" : format_type_be(type))));
		pushJsonbValue(&state, key ? WJB_KEY : WJB_VALUE, &v);
	}
	object = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(object));
}

/*
 * genroc._session_start() → timestamptz: when this backend started (the
 * backend_start pg_stat_activity shows for it).  With pg_backend_pid() it
 * names this session; a pid alone may be reused by a later backend.
 */
Datum
genroc_session_start(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(MyStartTimestamp);
}

/*
 * genroc._session_alive(pid int, started timestamptz) → boolean: whether the
 * backend with that pid and start time still exists.  Read from the backend
 * status array directly rather than through pg_stat_activity, which hides
 * other roles' start times from a role without pg_read_all_stats.  The
 * array is read once per transaction (as pg_stat_activity is).
 */
Datum
genroc_session_alive(PG_FUNCTION_ARGS)
{
	int32		pid;
	TimestampTz started;
	int			n;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	pid = PG_GETARG_INT32(0);
	started = PG_GETARG_TIMESTAMPTZ(1);
	n = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *local = pgstat_fetch_stat_local_beentry(i);

		if (local != NULL &&
			local->backendStatus.st_procpid == pid &&
			local->backendStatus.st_proc_start_timestamp == started)
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
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

	/*
	 * The interpreter stopped for a pending interrupt: PostgreSQL raises its
	 * own error (the cancel's or the timeout's 57014, FATAL for a
	 * termination); if it does not, the cancel is ours to report.
	 */
	if (strcmp(s, GENROC_ASL_INTERRUPTED) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling statement due to user request"),
				 errdetail("The ASL interpreter stopped for a pending interrupt.")));
	}
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
		genroc_refuse_null("definition");
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
 * The interpreter's answer to a step request (JSON text) as jsonb.  The
 * definition is detoasted and serialized only when the interpreter's cache
 * misses, which is once per definition per backend.
 */
static Datum
step_answer(const char *cache_key, Datum definition, const char *request)
{
	GenrocAslResult result;
	GenrocFailure failure;
	bool		ok;
	char	   *answer;

	result = genroc_asl_step(cache_key, NULL, request);
	answer = take_result(&result, &ok, &failure);
	if (!ok && is_cache_miss(&failure))
	{
		result = genroc_asl_step(cache_key, jsonb_text(definition), request);
		answer = take_result(&result, &ok, &failure);
	}
	if (!ok)
		raise_failure(&failure);
	if (answer == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("ASL interpreter returned no answer")));
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(answer));
}

/*
 * genroc._start_task(cache_key text, definition jsonb) → jsonb: what every
 * start of the definition answers apart from its input (core/asl.hpp
 * start_task), NULL when each start must be stepped.  genroc.start_many
 * writes a batch of such starts from it, with no step per input.
 */
Datum
genroc_start_task(PG_FUNCTION_ARGS)
{
	char	   *cache_key = text_to_cstring(PG_GETARG_TEXT_PP(0));
	GenrocAslResult result;
	GenrocFailure failure;
	bool		ok;
	char	   *task;

	result = genroc_asl_start_task(cache_key, NULL);
	task = take_result(&result, &ok, &failure);
	if (!ok && is_cache_miss(&failure))
	{
		result = genroc_asl_start_task(cache_key, jsonb_text(PG_GETARG_DATUM(1)));
		task = take_result(&result, &ok, &failure);
	}
	if (!ok)
		raise_failure(&failure);
	if (task == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(task)));
}

/* genroc._step(cache_key text, definition jsonb, request jsonb) → jsonb. */
Datum
genroc_step(PG_FUNCTION_ARGS)
{
	char	   *cache_key;
	char	   *request;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		genroc_refuse_null("cache_key, definition and request");
	cache_key = text_to_cstring(PG_GETARG_TEXT_PP(0));
	request = jsonb_text(PG_GETARG_DATUM(2));
	PG_RETURN_DATUM(step_answer(cache_key, PG_GETARG_DATUM(1), request));
}

/* Raises 22004 naming the first of args[0 .. n) that is null, but those optional. */
static void
require_args(FunctionCallInfo fcinfo, const char *const *args, int n, uint32 optional)
{
	for (int k = 0; k < n; k++)
		if (!(optional & (1u << k)) && PG_ARGISNULL(k))
			genroc_refuse_null(args[k]);
}

/* What a step request's now_ms and context are written from (JSON text for input). */
typedef struct StepContext
{
	int64		now_ms;
	int64		id;
	const char *name;			/* NULL: the id */
	const char *start_time;		/* the start, ISO-8601 (engine::iso_us) */
	const char *input;			/* NULL: no Execution.Input */
	const char *def_name;
	int32		def_version;
	const char *token;
} StepContext;

/*
 * Whether a step of the definition cached under cache_key needs the
 * context object in its request: unless the interpreter knows the
 * definition cannot read it (core/asl.hpp reads_context), which it does
 * from the first step of the definition in this backend on.  Without it
 * the request is a fraction of the text, and no token is drawn for it.
 */
static bool
needs_context(const char *cache_key)
{
	return genroc_asl_reads_context(cache_key) != 0;
}

/* A fresh step token: gen_random_uuid's text. */
static char *
new_token(void)
{
	return DatumGetCString(DirectFunctionCall1(uuid_out, OidFunctionCall0(F_GEN_RANDOM_UUID)));
}

/* Appends `"now_ms": N` to a step request being written. */
static void
append_now(StringInfo buf, int64 now_ms)
{
	appendStringInfo(buf, "\"now_ms\": " INT64_FORMAT, now_ms);
}

/*
 * Appends `"now_ms": N, "context": {...}` to a step request being written:
 * the context object from its parts (extension/sql/20_core.sql says what
 * it holds).  A NULL token is drawn here (gen_random_uuid).
 */
static void
append_now_and_context(StringInfo buf, const StepContext *c)
{
	char	   *id = psprintf(INT64_FORMAT, c->id);

	append_now(buf, c->now_ms);
	appendStringInfo(buf, ", \"context\": {\"Execution\": {\"Id\": \"%s\", \"Name\": ", id);
	escape_json(buf, c->name != NULL ? c->name : id);
	appendStringInfoString(buf, ", \"StartTime\": ");
	escape_json(buf, c->start_time);
	if (c->input != NULL)
	{
		appendStringInfoString(buf, ", \"Input\": ");
		appendStringInfoString(buf, c->input);
	}
	appendStringInfoString(buf, "}, \"StateMachine\": {\"Id\": ");
	escape_json(buf, psprintf("%s:%d", c->def_name, c->def_version));
	appendStringInfoString(buf, ", \"Name\": ");
	escape_json(buf, c->def_name);
	appendStringInfoString(buf, "}, \"Task\": {\"Token\": ");
	escape_json(buf, c->token != NULL ? c->token : new_token());
	appendStringInfoString(buf, "}}");
}

/* text_to_cstring of a text argument, NULL when it is null. */
static char *
text_arg(FunctionCallInfo fcinfo, int k)
{
	return PG_ARGISNULL(k) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(k));
}

/* Ends a step request being written: its scope and variables (JSON text) when not NULL. */
static void
end_request(StringInfo buf, const char *scope, const char *variables)
{
	if (scope != NULL)
	{
		appendStringInfoString(buf, ", \"scope\": ");
		escape_json(buf, scope);
	}
	if (variables != NULL)
	{
		appendStringInfoString(buf, ", \"variables\": ");
		appendStringInfoString(buf, variables);
	}
	appendStringInfoChar(buf, '}');
}

/*
 * genroc._step_start(cache_key text, definition jsonb, input jsonb,
 *     now_ms bigint, id bigint, name text, start_time text, def_name text,
 *     def_version int, token text) → jsonb.
 * genroc._step of the start request {op: start, input, now_ms, context}
 * with the same input in the context (genroc.start_many's items): the input is
 * serialized once here, where building the request as jsonb copied it into
 * five nested objects (about a sixth of start_many's server time).  A null
 * token is drawn here, and only for a definition that can read the
 * context (needs_context: without it the request has no context).
 */
Datum
genroc_step_start(PG_FUNCTION_ARGS)
{
	static const char *const args[] = {"p_cache_key", "p_definition", "p_input", "p_now_ms",
		"p_id", "p_name", "p_start_time", "p_def_name", "p_def_version", "p_token"};
	char	   *input;
	char	   *cache_key;
	StringInfoData request;

	require_args(fcinfo, args, lengthof(args), (1u << 5) | (1u << 9));
	cache_key = text_to_cstring(PG_GETARG_TEXT_PP(0));
	input = jsonb_text(PG_GETARG_DATUM(2));
	initStringInfo(&request);
	appendStringInfoString(&request, "{\"op\": \"start\", \"input\": ");
	appendStringInfoString(&request, input);
	appendStringInfoString(&request, ", ");
	if (needs_context(cache_key))
	{
		StepContext c = {PG_GETARG_INT64(3), PG_GETARG_INT64(4), text_arg(fcinfo, 5),
			text_arg(fcinfo, 6), input, text_arg(fcinfo, 7), PG_GETARG_INT32(8), text_arg(fcinfo, 9)};

		append_now_and_context(&request, &c);
	}
	else
		append_now(&request, PG_GETARG_INT64(3));
	appendStringInfoChar(&request, '}');
	PG_RETURN_DATUM(step_answer(cache_key, PG_GETARG_DATUM(1), request.data));
}

/*
 * A column's value as JSON text, as genroc._load_value gives it: a stored
 * object's reference ({"genroc:object": hash}, genroc._is_ref) is read
 * through genroc._load_value (rare: values over genroc.object_threshold);
 * NULL stays NULL.
 */
static char *
loaded_json(Datum value, bool isnull)
{
	Jsonb	   *jb;

	if (isnull)
		return NULL;
	jb = DatumGetJsonbP(value);
	if (JB_ROOT_IS_OBJECT(jb) && has_key(jb, "genroc:object"))
		return jsonb_text(call_sql_jsonb("_load_value", PointerGetDatum(jb)));
	return jsonb_text(PointerGetDatum(jb));
}

/* engine::iso_us in C: ISO-8601 UTC with milliseconds (floored to the millisecond). */
static char *
iso_text(TimestampTz at)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (TIMESTAMP_NOT_FINITE(at) || timestamp2tm(at, NULL, &tm, &fsec, NULL, NULL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	return psprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
}

/*
 * What the interpreter answers to a task's success at a state whose
 * success ends the instance with the result as its output (core/asl.hpp
 * success_ends; the result within json_depth):
 * {"entered": [], "outcome": {"kind": "succeeded", "output": result}},
 * built here with no request written, parsed, stepped and answered as
 * text (the unit test asl_success_ends_test holds the two equal).
 */
static Datum
success_answer(Jsonb *result)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;
	JsonbValue *answer;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	v = jsonb_string("entered");
	pushJsonbValue(&state, WJB_KEY, &v);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	v = jsonb_string("outcome");
	pushJsonbValue(&state, WJB_KEY, &v);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	v = jsonb_string("kind");
	pushJsonbValue(&state, WJB_KEY, &v);
	v = jsonb_string("succeeded");
	pushJsonbValue(&state, WJB_VALUE, &v);
	v = jsonb_string("output");
	pushJsonbValue(&state, WJB_KEY, &v);
	v = jsonb_value_of(result);
	pushJsonbValue(&state, WJB_VALUE, &v);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	answer = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbPGetDatum(JsonbValueToJsonb(answer));
}

/*
 * Whether a task's success at `state`, for a definition in this backend's
 * cache under `cache_key`, ends the instance with `result` as its output
 * (core/asl.hpp success_ends, the result within json_depth): what
 * success_answer answers, without a step.  False for a definition not
 * cached yet (a step compiles and caches it).
 */
static bool
success_ends(const char *cache_key, const char *state, Jsonb *result)
{
	return genroc_asl_success_ends(cache_key, state) == 1 && genroc_jsonb_shallow(result);
}

/*
 * Whether a result is within json_depth as a step's answer carries it (one
 * level down): what a store may write without a step.
 */
bool
genroc_jsonb_shallow(Jsonb *result)
{
	return jsonb_depth_within(result, limit_JSON_DEPTH - 1);
}

/*
 * genroc._step_succeeded(id, name, created_at, input, state, retry_counts,
 *     state_input, scope, variables, parent_id (the instance's columns),
 *     hash, definition, def_name, def_version (its definition's),
 *     result jsonb, now_ms bigint) → jsonb.
 * The step of a task's success for a top-level instance, read from its row:
 * what the engine's ask (engine/ask.cpp) answers to the task request
 * {op: 'task_succeeded', result} in the instance's own context (a
 * top-level instance is its own execution) with a fresh token, but with the request written here from the
 * row's columns (the columns, not the rows: a whole row made into a
 * composite value, and kept in a CTE, cost more than the step it fed).
 * genroc.complete_many's set-wise reports are its callers:
 * building that request as jsonb (its jsonb_strip_nulls, the
 * concatenations, the values loaded and copied into it) cost as much as
 * the interpreter's step.  An instance with a parent and a scope (a branch
 * or an item: its execution is an ancestor's) is refused.  Like the others,
 * it writes the context (and draws its token) only for a definition that
 * can read it.  A success that ends the instance with the result as its
 * output (core/asl.hpp success_ends: a one-task job's) is answered without
 * a step (success_answer); a definition not yet in this backend's cache,
 * or a result near json_depth, is stepped.
 */
Datum
genroc_step_succeeded(PG_FUNCTION_ARGS)
{
	enum
	{
		INST_COLUMNS = 10,		/* id .. parent_id */
		DEF_COLUMNS = 4,		/* hash .. version */
		ARG_RESULT = INST_COLUMNS + DEF_COLUMNS,
		ARG_NOW_MS
	};
	Datum		iv[INST_COLUMNS];
	bool		in[INST_COLUMNS];
	Datum		dv[DEF_COLUMNS];
	bool		dn[DEF_COLUMNS];
	char	   *state_input;
	char	   *cache_key;
	StringInfoData request;

	for (int k = 0; k < INST_COLUMNS; k++)
	{
		in[k] = PG_ARGISNULL(k);
		iv[k] = in[k] ? (Datum) 0 : PG_GETARG_DATUM(k);
	}
	for (int k = 0; k < DEF_COLUMNS; k++)
	{
		dn[k] = PG_ARGISNULL(INST_COLUMNS + k);
		dv[k] = dn[k] ? (Datum) 0 : PG_GETARG_DATUM(INST_COLUMNS + k);
	}
	if (PG_ARGISNULL(ARG_NOW_MS))
		genroc_refuse_null("p_now_ms");
	if (!in[7] && !in[9])
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("p_scope and p_parent_id: a top-level instance's step (a branch's or an item's execution is an ancestor's)")));
	if (in[0] || in[2] || dn[0] || dn[1] || dn[2] || dn[3])
		genroc_refuse_null("p_id, p_created_at, p_hash, p_definition, p_def_name and p_def_version");

	cache_key = TextDatumGetCString(dv[0]);
	if (!in[4] && !PG_ARGISNULL(ARG_RESULT) &&
		success_ends(cache_key, TextDatumGetCString(iv[4]), PG_GETARG_JSONB_P(ARG_RESULT)))
		PG_RETURN_DATUM(success_answer(PG_GETARG_JSONB_P(ARG_RESULT)));

	/* genroc._task_request: op, state and retry_counts when not null, state_input, result */
	initStringInfo(&request);
	appendStringInfoString(&request, "{\"op\": \"task_succeeded\"");
	if (!in[4])
	{
		appendStringInfoString(&request, ", \"state\": ");
		escape_json(&request, TextDatumGetCString(iv[4]));
	}
	if (!in[5])
	{
		Jsonb	   *counts = DatumGetJsonbP(iv[5]);

		JsonbValue	scalar;

		/* jsonb_strip_nulls drops a JSON null too (an array of counts holds none) */
		if (!(JB_ROOT_IS_SCALAR(counts) && JsonbExtractScalar(&counts->root, &scalar) &&
			  scalar.type == jbvNull))
		{
			appendStringInfoString(&request, ", \"retry_counts\": ");
			appendStringInfoString(&request, JsonbToCString(NULL, &counts->root, VARSIZE(counts)));
		}
	}
	state_input = loaded_json(iv[6], in[6]);
	appendStringInfoString(&request, ", \"state_input\": ");
	appendStringInfoString(&request, state_input != NULL ? state_input : "null");
	appendStringInfoString(&request, ", \"result\": ");
	appendStringInfoString(&request, PG_ARGISNULL(ARG_RESULT) ? "null" : jsonb_text(PG_GETARG_DATUM(ARG_RESULT)));
	appendStringInfoString(&request, ", ");
	if (needs_context(cache_key))
	{
		StepContext c = {PG_GETARG_INT64(ARG_NOW_MS), DatumGetInt64(iv[0]),
			in[1] ? NULL : TextDatumGetCString(iv[1]), iso_text(DatumGetTimestampTz(iv[2])),
		loaded_json(iv[3], in[3]), TextDatumGetCString(dv[2]), DatumGetInt32(dv[3]), NULL};

		append_now_and_context(&request, &c);
	}
	else
		append_now(&request, PG_GETARG_INT64(ARG_NOW_MS));
	end_request(&request, in[7] ? NULL : TextDatumGetCString(iv[7]), in[8] ? NULL : jsonb_text(iv[8]));
	PG_RETURN_DATUM(step_answer(cache_key, dv[1], request.data));
}

/*
 * The refusal every genroc entry point makes first (docs/security.md "Roles and
 * ownership").  ANALYZE, VACUUM, CLUSTER, REINDEX, CREATE INDEX and REFRESH
 * MATERIALIZED VIEW run a table owner's code (an index expression, a
 * view's query) with the current user set to the owner but the outer user
 * left as whoever ran the command: autovacuum's bootstrap superuser, or an
 * administrator's manual ANALYZE.  genroc acts for the outer user, so a
 * call from there would act for that role on code the table owner wrote;
 * it is refused instead.  PostgreSQL marks exactly those operations
 * (SECURITY_RESTRICTED_OPERATION), and keeps the mark through nested
 * SECURITY DEFINER calls, genroc's own included.
 */
/* The engine's messages (engine/messages.def), by id: GENROC_MSG_<ID>. */
enum
{
#define GENROC_MESSAGE(id, sqlstate, text) GENROC_MSG_##id,
#include "messages.def"
#undef GENROC_MESSAGE
};
static const struct
{
	const char *sqlstate;
	const char *text;
}			engine_messages[] = {
#define GENROC_MESSAGE(id, sqlstate, text) {sqlstate, text},
#include "messages.def"
#undef GENROC_MESSAGE
};

/*
 * Raises engine message `id` with one argument in place of its "{}", as the
 * engine raises it (engine/engine.cpp, message_text): for the checks a C
 * entry point makes before it calls the engine.
 */
static void
raise_engine_message(int id, const char *arg)
{
	const char *s = engine_messages[id].sqlstate;
	const char *t = engine_messages[id].text;
	const char *hole = strstr(t, "{}");
	StringInfoData message;

	initStringInfo(&message);
	if (hole == NULL)
		appendStringInfoString(&message, t);
	else
	{
		appendBinaryStringInfo(&message, t, (int) (hole - t));
		appendStringInfoString(&message, arg);
		appendStringInfoString(&message, hole + 2);
	}
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg("%s", message.data)));
}

void
genroc_refuse_null(const char *what)
{
	raise_engine_message(GENROC_MSG_ARG_NULL, what);
	pg_unreachable();
}

void
genroc_refuse_restricted(void)
{
	if (InSecurityRestrictedOperation())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("genroc cannot be called inside a security-restricted operation"),
				 errdetail("ANALYZE, VACUUM, CLUSTER, REINDEX, CREATE INDEX and REFRESH MATERIALIZED VIEW "
						   "run a table owner's code while the role that started them stays the session's; "
						   "genroc would act for that role."),
				 errhint("Call genroc from a statement, not from an index expression, a materialized "
						 "view's query or anything else those commands run; docs/security.md \"Roles and ownership\".")));
}

/*
 * The role genroc acts for: the outer user id, which is the session's
 * current role (SET ROLE changes it) and which a SECURITY DEFINER function,
 * genroc's own or another role's, does not change (inside genroc's
 * functions current_user is the extension's owner).  Refused first inside
 * a security-restricted operation, where the outer user is not the role
 * whose code is running.
 */
Oid
genroc_caller_id(void)
{
	genroc_refuse_restricted();
	return GetOuterUserId();
}

/* genroc._caller(): genroc_caller_id() for SQL (12_roles.sql). */
Datum
genroc_caller(PG_FUNCTION_ARGS)
{
	PG_RETURN_OID(genroc_caller_id());
}

/*
 * genroc._entry(): the refusal alone, the first statement of every genroc
 * function a role may call that does not take its caller at once (the
 * pgTAP test test/pgtap/restricted.sql holds every such function to it).
 */
Datum
genroc_entry(PG_FUNCTION_ARGS)
{
	genroc_refuse_restricted();
	PG_RETURN_VOID();
}


/*
 * Whether a jsonb nests at most `limit` arrays and objects, counted from its
 * own tokens (a scalar at the root counts as one: jsonb keeps it in an
 * array), stopping as soon as it is over.
 */
static bool
jsonb_depth_within(Jsonb *jb, int limit)
{
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbValue	v;
	JsonbIteratorToken token;
	int			depth = 0;

	while ((token = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (token == WJB_BEGIN_ARRAY || token == WJB_BEGIN_OBJECT)
		{
			if (++depth > limit)
				return false;
		}
		else if (token == WJB_END_ARRAY || token == WJB_END_OBJECT)
			depth--;
	}
	return true;
}

/*
 * genroc._check_depth(value jsonb, what text): raises 54000 when the value
 * nests deeper than the interpreter's json_depth, in the interpreter's words.
 * A value one level or more inside the limit is passed here without the
 * interpreter (which would parse all of its text to count); the interpreter
 * judges the others, and words the error.
 */
Datum
genroc_check_depth(PG_FUNCTION_ARGS)
{
	char	   *value;
	char	   *what;
	GenrocAslResult result;
	GenrocFailure failure;
	bool		ok;

	if (jsonb_depth_within(PG_GETARG_JSONB_P(0), limit_JSON_DEPTH - 1))
		PG_RETURN_VOID();
	value = jsonb_text(PG_GETARG_DATUM(0));
	what = text_to_cstring(PG_GETARG_TEXT_PP(1));
	result = genroc_asl_check_depth(value, what);
	(void) take_result(&result, &ok, &failure);
	if (!ok)
		raise_failure(&failure);
	PG_RETURN_VOID();
}

/* "major.minor" compared as numbers: <0, 0 or >0 like strcmp. */
static int
compare_versions(const char *a, const char *b)
{
	int			a_major = 0,
				a_minor = 0,
				b_major = 0,
				b_minor = 0;

	(void) sscanf(a, "%d.%d", &a_major, &a_minor);
	(void) sscanf(b, "%d.%d", &b_major, &b_minor);
	if (a_major != b_major)
		return a_major < b_major ? -1 : 1;
	if (a_minor != b_minor)
		return a_minor < b_minor ? -1 : 1;
	return 0;
}

/*
 * genroc.version(): the version of the extension's SQL objects in this
 * database (pg_extension.extversion).  One module file serves every
 * database of the server, so after the files of another version are
 * installed a database can hold SQL objects older than the module: this
 * module serves GENROC_PREV_VERSION's objects too (its C functions are a
 * superset), until ALTER EXTENSION genroc UPDATE; version() says so with
 * RC020, as it does for any version it does not know.
 */
Datum
genroc_version(PG_FUNCTION_ARGS)
{
	char	   *installed = NULL;
	MemoryContext caller = CurrentMemoryContext;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("genroc.version(): SPI_connect failed")));
	rc = SPI_execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'genroc'",
					 true, 1);
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v != NULL)
			installed = MemoryContextStrdup(caller, v);
	}
	SPI_finish();

	if (installed == NULL)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('R', 'C', '0', '2', '0')),
				 errmsg("the genroc extension is not installed in this database"),
				 errhint("Run CREATE EXTENSION genroc.")));
	if (strcmp(installed, GENROC_VERSION) != 0)
	{
		bool		older = compare_versions(installed, GENROC_VERSION) < 0;

		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('R', 'C', '0', '2', '0')),
				 errmsg("the genroc extension in this database is version %s, the installed genroc module is %s",
						installed, GENROC_VERSION),
				 older ?
				 errhint("Upgrade the database's extension: ALTER EXTENSION genroc UPDATE TO '%s'.",
						 GENROC_VERSION) :
				 errhint("Install the genroc %s extension files (make install) on this server.",
						 installed)));
	}
	PG_RETURN_TEXT_P(cstring_to_text(installed));
}

SPIPlanPtr
genroc_prepared(SPIPlanPtr *plan, const char *sql, int nargs, Oid *argtypes, const char *who)
{
	if (*plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare_cursor(sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);

		if (p == NULL)
			elog(ERROR, "%s: could not prepare a statement: %s", who,
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "%s: could not keep a prepared statement", who);
		*plan = p;
	}
	return *plan;
}

void
genroc_run(SPIPlanPtr plan, Datum *values, const char *nulls, int expected, const char *who)
{
	int			rc = SPI_execute_plan(plan, values, nulls, false, 0);

	if (rc != expected)
		elog(ERROR, "%s: a statement ended with %s", who, SPI_result_code_string(rc));
}
