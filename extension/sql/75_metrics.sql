/*
 * Figures for operators: the queues (genroc.queue_stats, also a view for
 * psql), the snapshot the binary's GET /metrics turns into gauges
 * (genroc.metrics), and who ticks (genroc.tickers, written by every
 * genroc.tick: engine/tick.cpp).  docs/operations.md "Metrics" and
 * "In-database ticker".
 *
 * What a caller sees (12_roles.sql): queue figures count every instance for
 * a role with the worker or operator capability, else only the caller's own
 * instances (and name only the configured queues and those of its own
 * instances); metrics() counts instances by definition by the operator rule
 * of the instances view (a worker-only role: its own).
 */

-- Who ticks is recorded by genroc.tick itself (engine/tick.cpp, TICK_WHO).

/*
 * tickers, queue_stats and metrics are the engine's (engine/metrics.cpp,
 * entry points in extension/metrics.c), the same code the SQLite store
 * runs.
 */
CREATE FUNCTION genroc.tickers()
	RETURNS TABLE (ticked_by text, kind text, role text, first_tick_at timestamptz,
				   last_tick_at timestamptz, ago_ms bigint, ticks bigint)
	AS 'MODULE_PATHNAME', 'genroc_tickers'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.tickers() IS
	'Who called genroc.tick() in the last 7 days, newest first: the in-database ticker (kind ticker), genroc binaries (kind binary, by worker id) and other sessions (kind session), with the first and last tick, milliseconds since the last, and the count.';

-- Each status is read through its partial index (engine/statements.def,
-- QUEUE_STATS).
CREATE FUNCTION genroc.queue_stats()
	RETURNS TABLE (queue text, ready bigint, oldest_ready_s double precision, queued bigint,
				   running bigint, workers int)
	AS 'MODULE_PATHNAME', 'genroc_queue_stats'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.queue_stats() IS
	'Per queue: tasks ready to claim now, seconds since the oldest of them became ready (0 when none), queued (waiting for a slot), running, and live workers serving it; workers and operators count every instance, other roles their own.';

CREATE VIEW genroc.queue_stats AS
	SELECT * FROM genroc.queue_stats();
COMMENT ON VIEW genroc.queue_stats IS 'Per queue: ready depth, age of the oldest ready task in seconds, queued, running, live workers; for psql (the figures of GET /metrics).';
REVOKE ALL ON genroc.queue_stats FROM PUBLIC;

/*
 * The database's part of GET /metrics, one call per scrape (the binary
 * keeps the answer for --metrics-cache, so scrapers share it):
 *   instances         [{status, count}] every instance for a worker or
 *                     operator, else the caller's own; every status of the
 *                     fixed seven, 0 when none has it, by name
 *   by_definition     [{definition, status, count}] the p_max_definitions
 *                     definitions with the most instances (then by name):
 *                     the label's cardinality is bounded by that times the
 *                     seven statuses; the rest are in "instances" only
 *   definitions_omitted  how many definitions were left out of by_definition
 *   queues            genroc.queue_stats(), as objects
 *   workers_alive     live registered workers (not stopped, heartbeat
 *                     within their stale_after)
 *
 * The work (engine/statements.def, METRICS_COUNTS), for a role that sees
 * every instance and names every definition (an operator): the instances
 * are counted
 * by definition id and status: ready and running rows (few: the work in
 * flight) through _instances_claim and _instances_lease, every other row
 * by a scan the planner picks (on a few thousand rows, a sequential scan:
 * the time still grows with the rows kept), then grouped by name (a row
 * per definition version and status).  Other roles (their
 * own instances, or, a worker, every one counted but only its own named)
 * read the rows to see their owner, grouped by owner first: the caller's
 * rights on an owner (genroc._may: role membership, the extension's owner)
 * are asked once per owner, not once per row (6.5 µs a row before: 130 ms
 * of server CPU per call at 20,000 instances, for a worker's
 * --metrics-listen).
 */
CREATE FUNCTION genroc.metrics(p_max_definitions int DEFAULT 50) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_metrics'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.metrics(int) IS
	'The database figures of GET /metrics as one JSON object: instances by status (every status, 0 when none), by definition and status for the p_max_definitions definitions with the most instances (how many were left out), genroc.queue_stats() per queue, live workers, and the stored large values (count, bytes, unused).';
