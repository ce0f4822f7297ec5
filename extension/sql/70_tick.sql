/*
 * tick: everything time does.
 *
 * prune and tick are the engine's (engine/retention.cpp, engine/tick.cpp,
 * entry points in extension/retention.c), the same code the SQLite store
 * runs; engine/retention.hpp and engine/tick.hpp say what each does
 * (docs/operations.md "Logs and retention").  The collection of stored
 * values (15_objects.sql) is retention's too.
 */
CREATE FUNCTION genroc.prune(p_log_retention interval, p_instance_retention interval,
							 p_limit int DEFAULT 1000) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_prune'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.prune(interval, interval, int) IS
	'Deletes log rows older than p_log_retention and concluded top-level instances (with their children, logs and kept events) that ended longer than p_instance_retention ago, at most p_limit of each; 0 keeps that kind; collects stored values unused for genroc.object_grace; returns {"log_rows", "instances", "objects"}.';

/*
 * tick pauses nothing and waits for nobody: its rows are taken FOR UPDATE
 * SKIP LOCKED, so the in-database ticker (ticker.c) and any number of
 * workers may tick at once and share the work.  Pruning counts only the
 * settings of a role that administers genroc; another role's tick collects
 * unused stored values with a grace of at least one hour.
 */
CREATE FUNCTION genroc.tick(p_limit int DEFAULT 1000) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_tick'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.tick(int) IS
	'Does the time-driven work, at most p_limit items of each kind: task and activity timeouts, missed heartbeats, lapsed leases, fired timers, delayed starts, and pruning by the settings genroc.log_retention and genroc.instance_retention; returns the counts.';
