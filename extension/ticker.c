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
 * One launcher (a background worker of its own, connected to no database:
 * it reads only pg_database and pg_authid) starts a ticker per database as
 * a dynamic background worker, once the database exists and takes
 * connections (and genroc.ticker_role exists); until then it says so once
 * and checks again every genroc.ticker_interval, rather than a worker
 * failing to connect (FATAL) and restarting every 5 seconds.  A database
 * without the extension is skipped by its ticker (checked on every tick, so
 * CREATE EXTENSION there starts the ticking).  An error in a tick ends that
 * ticker; the launcher starts it again 5 seconds later.  So a list of N
 * databases takes N + 1 background worker slots (max_worker_processes).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
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
#include "utils/timestamp.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "ticker.h"

static char *ticker_databases = NULL;
static int	ticker_interval = 1000;	/* ms */
static char *ticker_role = NULL;

PGDLLEXPORT void genroc_ticker_main(Datum arg);
PGDLLEXPORT void genroc_ticker_launcher_main(Datum arg);

/* after a ticker ends (an error in a tick), the launcher waits this long */
#define kRestartMs 5000

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
/*
 * Sleeps one ticker_interval (or until the latch is set), then takes a
 * pending interrupt and a pending reload: the loop of the ticker and of the
 * launcher alike.
 */
static void
wait_interval(void)
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
}

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
		wait_interval();
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
 * Why `database` cannot have a ticker now (NULL: it can): it does not
 * exist, takes no connections, or the ticker's role does not exist.  Read
 * from the shared catalogs by heap scans, in a transaction of its own, as
 * the autovacuum launcher reads pg_database: a backend connected to no
 * database cannot rebuild an index's cache entry (that reads pg_class)
 * after an invalidation, so no index and no syscache lookup.
 */
static const char *
not_connectable(const char *database)
{
	const char *why = "it does not exist";
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (strcmp(NameStr(db->datname), database) == 0)
		{
			why = db->datallowconn ? NULL : "it does not allow connections";
			break;
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	if (why == NULL && ticker_role != NULL && ticker_role[0] != '\0')
	{
		why = "genroc.ticker_role names no role";
		rel = table_open(AuthIdRelationId, AccessShareLock);
		scan = table_beginscan_catalog(rel, 0, NULL);
		while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
		{
			if (strcmp(NameStr(((Form_pg_authid) GETSTRUCT(tup))->rolname), ticker_role) == 0)
			{
				why = NULL;
				break;
			}
		}
		table_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	CommitTransactionCommand();
	return why;
}

/* One database of the launcher's list: its ticker, and what was said. */
typedef struct TickerSlot
{
	char		name[BGW_EXTRALEN];
	BackgroundWorkerHandle *handle; /* the running ticker, or NULL */
	TimestampTz ended_at;		/* when the last one ended (0: none did) */
	const char *said;			/* the reason last logged, or NULL */
	bool		said_no_slot;
} TickerSlot;

static bool
start_ticker(TickerSlot *slot)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "genroc");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "genroc_ticker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "genroc ticker for database %s", slot->name);
	snprintf(worker.bgw_type, BGW_MAXLEN, "genroc ticker");
	strlcpy(worker.bgw_extra, slot->name, BGW_EXTRALEN);
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, &slot->handle);
}

/*
 * The launcher: every genroc.ticker_interval, each database of
 * genroc.ticker_databases without a running ticker gets one when it can be
 * connected to; one that cannot is named in the log once (and again when
 * the reason changes), and once more when it can.
 */
void
genroc_ticker_launcher_main(Datum arg)
{
	char	   *names;
	List	   *databases = NIL;
	ListCell   *lc;
	TickerSlot *slots;
	int			n = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("genroc ticker launcher");

	names = pstrdup(ticker_databases);
	if (!SplitIdentifierString(names, ',', &databases))
		elog(ERROR, "genroc.ticker_databases is not a list of database names");
	slots = palloc0(sizeof(TickerSlot) * Max(list_length(databases), 1));
	foreach(lc, databases)
		strlcpy(slots[n++].name, (const char *) lfirst(lc), BGW_EXTRALEN);

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();

		for (int i = 0; i < n; i++)
		{
			TickerSlot *slot = &slots[i];
			pid_t		pid;
			const char *why;

			if (slot->handle != NULL)
			{
				if (GetBackgroundWorkerPid(slot->handle, &pid) != BGWH_STOPPED)
					continue;
				pfree(slot->handle);
				slot->handle = NULL;
				slot->ended_at = now;
			}
			if (slot->ended_at != 0 &&
				!TimestampDifferenceExceeds(slot->ended_at, now, kRestartMs))
				continue;
			why = not_connectable(slot->name);
			if (why != NULL)
			{
				if (slot->said == NULL || strcmp(slot->said, why) != 0)
					ereport(WARNING,
							(errmsg("genroc ticker: no ticker for database \"%s\": %s; checking again every %d ms",
									slot->name, why, ticker_interval)));
				slot->said = why;
				continue;
			}
			if (!start_ticker(slot))
			{
				if (!slot->said_no_slot)
					ereport(WARNING,
							(errmsg("genroc ticker: no background worker slot for the ticker of database \"%s\"; trying again every %d ms",
									slot->name, ticker_interval),
							 errhint("Raise max_worker_processes: the ticker takes one per database and one more.")));
				slot->said_no_slot = true;
				slot->handle = NULL;
				continue;
			}
			if (slot->said != NULL)
				ereport(LOG,
						(errmsg("genroc ticker: database \"%s\" can be ticked now", slot->name)));
			slot->said = NULL;
			slot->said_no_slot = false;
		}

		wait_interval();
	}
}

/*
 * While shared_preload_libraries loads the module: defines the ticker's
 * settings and registers the launcher, which starts one ticker per
 * database.  Loaded otherwise (the first call of a genroc function), it
 * does nothing.
 */
void
genroc_ticker_init(void)
{
	char	   *names;
	List	   *databases = NIL;
	BackgroundWorker worker;

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

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "genroc");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "genroc_ticker_launcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "genroc ticker launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "genroc ticker launcher");
	RegisterBackgroundWorker(&worker);
}
