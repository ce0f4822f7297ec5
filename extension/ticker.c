/*-------------------------------------------------------------------------
 *
 * ticker.c
 *	  The in-database ticker: background workers that call genroc.tick().
 *
 * Timers, delayed starts, lapsed leases, timeouts, heartbeats and retention
 * all need genroc.tick(), which the genroc binary calls; a site that runs
 * only SQL (its own code claims and completes tasks) has no binary.  With
 * shared_preload_libraries = 'genroc' and genroc.ticker_databases naming
 * databases, the postmaster starts one background worker per database that
 * calls genroc.tick() every genroc.ticker_interval, in a transaction of its
 * own.  Without those settings nothing starts, and the binary ticks as it
 * always did.  Both at once is safe: tick takes its rows FOR UPDATE SKIP
 * LOCKED, so concurrent calls share the work (several workers' ticks already
 * run at once).
 *
 * Settings
 *	  genroc.ticker_databases	comma-separated database names; '' (the
 *								default) starts no ticker.  Server start.
 *	  genroc.ticker_interval	time between two ticks (default 1s).  Reload.
 *	  genroc.ticker_role		role the tickers connect as; '' = the
 *								bootstrap superuser.  Server start.
 *
 * A database without the extension is skipped (checked on every tick, so
 * CREATE EXTENSION there starts the ticking).  An error in a tick ends the
 * worker; the postmaster starts it again after 5 seconds.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "ticker.h"

static char *ticker_databases = NULL;
static int	ticker_interval = 1000;	/* ms */
static char *ticker_role = NULL;

PGDLLEXPORT void genroc_ticker_main(Datum arg);

/* One tick in a transaction of its own; false when the extension is absent. */
static bool
tick_once(void)
{
	bool		installed;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "genroc ticker: SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "SELECT genroc.tick()");

	if (SPI_execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'genroc'",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "genroc ticker: could not read pg_extension");
	installed = SPI_processed == 1;
	if (installed && SPI_execute("SELECT genroc.tick()", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "genroc ticker: genroc.tick() failed");

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
	return installed;
}

/* The ticker of one database (its name in bgw_extra). */
void
genroc_ticker_main(Datum arg)
{
	char		database[BGW_EXTRALEN];
	bool		said_absent = false;

	memcpy(database, MyBgworkerEntry->bgw_extra, BGW_EXTRALEN);
	database[BGW_EXTRALEN - 1] = '\0';

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(database,
										 ticker_role != NULL && ticker_role[0] != '\0' ?
										 ticker_role : NULL,
										 0);
	pgstat_report_appname("genroc ticker");
	ereport(LOG,
			(errmsg("genroc ticker started for database \"%s\", every %d ms",
					database, ticker_interval)));

	for (;;)
	{
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ticker_interval,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (!tick_once())
		{
			if (!said_absent)
				ereport(LOG,
						(errmsg("genroc ticker: the genroc extension is not installed in database \"%s\"; waiting for it",
								database)));
			said_absent = true;
		}
		else
			said_absent = false;
	}
}

/*
 * While shared_preload_libraries loads the module: defines the ticker's
 * settings and registers one background worker per database.  Loaded
 * otherwise (the first call of a genroc function), it does nothing.
 */
void
genroc_ticker_init(void)
{
	char	   *names;
	List	   *databases = NIL;
	ListCell   *lc;

	/* server-start settings can only be defined while the server starts */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomStringVariable("genroc.ticker_databases",
							   "Databases in which a background worker calls genroc.tick().",
							   "Comma-separated names; empty starts none. Needs shared_preload_libraries = 'genroc'.",
							   &ticker_databases,
							   "",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("genroc.ticker_interval",
							"Time between two ticks of the in-database ticker.",
							NULL,
							&ticker_interval,
							1000,
							10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomStringVariable("genroc.ticker_role",
							   "Role the in-database ticker connects as.",
							   "Empty means the bootstrap superuser.",
							   &ticker_role,
							   "",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	if (ticker_databases == NULL || ticker_databases[0] == '\0')
		return;

	names = pstrdup(ticker_databases);
	if (!SplitIdentifierString(names, ',', &databases))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("genroc.ticker_databases is not a list of database names: \"%s\"",
						ticker_databases)));
	foreach(lc, databases)
	{
		const char *database = (const char *) lfirst(lc);
		BackgroundWorker worker;

		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = 5;
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "genroc");
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "genroc_ticker_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "genroc ticker for database %s", database);
		snprintf(worker.bgw_type, BGW_MAXLEN, "genroc ticker");
		strlcpy(worker.bgw_extra, database, BGW_EXTRALEN);
		RegisterBackgroundWorker(&worker);
	}
}
