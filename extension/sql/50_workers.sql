/*
 * Workers and leases: the registry, claim, renew, release, complete, fail.
 */

-- A drain request (worker_drain): when it was asked for; cleared when the
-- id registers again.  Added here rather than in 10_tables.sql so the
-- column follows owner (12_roles.sql), where ALTER TABLE puts it on an
-- upgrade (extension/upgrade/0.1--0.2.sql).
ALTER TABLE genroc._workers ADD COLUMN drain_requested_at timestamptz;

-- A registered, not stopped worker, locked; RC006 otherwise.
CREATE FUNCTION genroc._live_worker(p_worker text) RETURNS genroc._workers
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_worker genroc._workers;
BEGIN
	IF p_worker IS NULL THEN
		RAISE EXCEPTION 'p_worker must not be null' USING ERRCODE = '22004';
	END IF;
	SELECT * INTO v_worker FROM genroc._workers WHERE id = p_worker FOR UPDATE;
	IF NOT FOUND OR v_worker.stopped_at IS NOT NULL THEN
		RAISE EXCEPTION 'worker "%" is not registered', p_worker
			USING ERRCODE = 'RC006',
				  DETAIL = CASE WHEN FOUND THEN 'It was stopped.' ELSE 'No worker has that id.' END,
				  HINT = 'Call genroc.worker_register first.';
	END IF;
	RETURN v_worker;
END;
$$;

-- When this backend started: with pg_backend_pid() it names the session.
CREATE FUNCTION genroc._session_start() RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'genroc_session_start'
	LANGUAGE C STABLE PARALLEL RESTRICTED;

-- Whether the backend (pid, start) still exists; NULL when either is NULL
-- (no session recorded: the engine cannot tell).
CREATE FUNCTION genroc._session_alive(p_pid int, p_start timestamptz) RETURNS boolean
	AS 'MODULE_PATHNAME', 'genroc_session_alive'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

/*
 * Semantics of worker_register:
 *   options host (default ''), lease_duration (default 10s), stale_after
 *   (default 30s), queues (array of strings, default ["default"]),
 *   concurrency (positive int, default none = no limit), pooled (boolean,
 *   default false: this session is the worker's own; true: it comes through
 *   a transaction pooler, so the session says nothing about the worker)
 *   an existing row that is not stopped and whose heartbeat is newer than
 *   its own stale_after (heartbeat_at > now - stale_after) holds the id:
 *     its recorded session still exists → a live holder: RC005 naming its
 *     host, nothing changes
 *     no session recorded (it registered pooled) → the engine cannot tell:
 *     RC010 naming its host, nothing changes (the caller may wait until
 *     the heartbeat is stale)
 *     its session is gone (the process died with its connection) → dead:
 *     taken over at once, as a stale one
 *   otherwise the row is created or replaced (started_at = heartbeat_at =
 *   now, stopped_at cleared, the session recorded unless pooled) and every
 *   instance still leased to that id is taken back at once through the
 *   lapse path (engine::interrupt)
 *   claim, renew and worker_heartbeat record the calling session as the
 *   worker's (a worker with several connections, or one that reconnected,
 *   is named by the last one it used); a pooled registration keeps none
 */
CREATE FUNCTION genroc.worker_register(p_worker text, p_options jsonb DEFAULT '{}')
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_worker_register'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.worker_register(text, jsonb) IS
	'Registers a worker id (options host, lease_duration, stale_after, queues, concurrency, pooled); RC005 when a live worker holds it, RC010 when one may; takes back the instances still leased to that id.';

-- Returns {"drain": true} once a drain was requested (worker_drain): the
-- worker then stops claiming, lets its running tasks finish within its
-- grace, and stops.
CREATE FUNCTION genroc.worker_heartbeat(p_worker text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_worker_heartbeat'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.worker_heartbeat(text) IS
	'Records that the worker is alive and returns {"drain": true|false} (a drain was requested); RC006 when it is not registered or stopped.';

/*
 * Semantics of worker_drain:
 *   the worker's owner (or an operator or admin) asks a registered, not
 *   stopped worker to drain: from now on claim hands it nothing, its
 *   heartbeat answers {"drain": true}, and NOTIFY genroc_drain (no payload)
 *   wakes the workers to ask their heartbeat at once, so the binary stops
 *   claiming, lets its running tasks finish within its --shutdown-grace and
 *   stops (worker_stop), as at SIGTERM.  The notification is only a
 *   wake-up: anyone who can connect may NOTIFY genroc_drain, so the drain
 *   itself is the row's drain_requested_at, which only this function (the
 *   worker's owner, an operator or an admin) writes
 *   asking again changes nothing (the first request's time is kept);
 *   RC006 for an id that is not registered or already stopped
 *   returns {worker, draining: true, running: tasks it still holds}
 */
CREATE FUNCTION genroc.worker_drain(p_worker text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_worker_drain'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.worker_drain(text) IS
	'Asks a worker to drain: claim hands it nothing more, and it stops once its running tasks end (within its grace); its owner, an operator or an admin; RC006 when it is not registered or stopped.';

-- Semantics: the worker's leases are released (as genroc.release) and the
-- row is marked stopped, so its id can be registered again at once.
CREATE FUNCTION genroc.worker_stop(p_worker text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_worker_stop'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.worker_stop(text) IS
	'Releases the worker''s leases (the tasks run again elsewhere) and marks it stopped.';

CREATE FUNCTION genroc.list_workers()
	RETURNS TABLE (worker text, host text, queues text[], concurrency int,
				   lease_duration_ms bigint, stale_after_ms bigint,
				   started_at timestamptz, heartbeat_at timestamptz, stopped_at timestamptz,
				   live boolean, running bigint, durability text, draining boolean)
	AS 'MODULE_PATHNAME', 'genroc_list_workers'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.list_workers() IS
	'Every registered worker the caller may see (its own; operators every one): settings, timestamps, whether it is live or draining, and how many tasks it holds.';

-- A new lease epoch: random, never 0, never the previous one (the engine's
-- rule; engine/claim.hpp says why a counter is not enough).
CREATE FUNCTION genroc._fencing_epoch(p_previous bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'genroc_fencing_epoch'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;

/*
 * Semantics of claim (genroc.claim, below; the engine's, engine/claim.cpp,
 * for both stores):
 *   the worker must be registered and not stopped (RC006); a claim counts as
 *   its heartbeat
 *   candidates: status 'ready', queue in p_queues, eligible_at <= now, in
 *   the order priority asc, eligible_at asc, id asc; FOR UPDATE SKIP LOCKED
 *   (a row another transaction is claiming is skipped, not waited for)
 *   at most p_n, and with a worker concurrency c at most c minus the tasks
 *   it already holds
 *   queue limits (55_queues.sql, "the limits claim checks"): a queue at its
 *   global_concurrency or rate_limit is skipped; otherwise the batch is at most its room; with a
 *   partition_rate_limit, a partition whose window is full is skipped and
 *   the batch takes at most its room of each (55_queues.sql)
 *   each: status 'running', lease_owner = worker, a new random lease_epoch
 *   (genroc._fencing_epoch: a claim that a crash rolled back never hands out
 *   an epoch again),
 *   lease_expires = now + the worker's lease_duration, timeout_at = now +
 *   TimeoutSeconds (a handler task's timeout counts from its claim)
 *   attempt in the result: the retry number (0 for the first run)
 */
-- genroc.claim: the semantics above; the engine's claim (engine/claim.cpp)
-- through extension/claim.c.  Its common claim (no queue limit anywhere) is
-- one statement planned once per backend.
CREATE FUNCTION genroc.claim(p_worker text, p_queues text[], p_n int DEFAULT 1)
	RETURNS TABLE (instance_id bigint, epoch bigint, state text, resource text, input jsonb,
				   only_once boolean, timeout_s int, attempt int, lease_expires timestamptz,
				   queue text)
	AS 'MODULE_PATHNAME', 'genroc_claim'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.claim(text, text[], int) IS
	'Leases up to p_n ready tasks of the given queues to a registered worker (priority, then eligible time, then id), each with a new lease epoch.';

-- Semantics: genroc.claim, waiting in the server while there is nothing to
-- claim.  When the claim finds no ready task in the queues, it waits up to
-- p_wait (0 to 60 seconds) and claims again as soon as a task may be there:
-- when a NOTIFY reaches the session (LISTEN genroc on the same session
-- first: the engine notifies there when a task becomes ready) and at least
-- every 250 ms without one.  It returns what the first claim that leases
-- anything leases, or nothing when p_wait has passed.  Times (the leases,
-- the log) are the clock's at the claim that leased, not the transaction
-- start's; the test clock when it is set.  No wait, as claim: a worker
-- that may take nothing now (draining, at its concurrency), a queue with a
-- limit (global_concurrency, rate_limit, partition_rate_limit; claim_wake
-- says when to ask again), REPEATABLE READ or SERIALIZABLE (its snapshot
-- would never show a new task).  While it waits the worker's row stays
-- locked by its heartbeat (worker_drain and worker_heartbeat of that
-- worker wait for it) and its snapshot holds back vacuum: keep p_wait to
-- a few seconds.  In C (extension/claim.c).
CREATE FUNCTION genroc.claim_wait(p_worker text, p_queues text[], p_n int, p_wait interval)
	RETURNS TABLE (instance_id bigint, epoch bigint, state text, resource text, input jsonb,
				   only_once boolean, timeout_s int, attempt int, lease_expires timestamptz,
				   queue text)
	AS 'MODULE_PATHNAME', 'genroc_claim_wait'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.claim_wait(text, text[], int, interval) IS
	'genroc.claim that, when nothing is ready, waits up to p_wait (at most 60 s) for a task and claims it: woken by a NOTIFY on the session (LISTEN genroc) and every 250 ms.';

-- Semantics: only leases the worker holds on running instances are
-- extended (to now + its lease_duration); the others are absent from the
-- result.  Counts as a heartbeat.  Ids in ascending order.
CREATE FUNCTION genroc.renew(p_worker text, p_instances bigint[]) RETURNS SETOF bigint
	AS 'MODULE_PATHNAME', 'genroc_renew'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.renew(text, bigint[]) IS
	'Extends the leases the worker still holds among p_instances and returns their ids; counts as a heartbeat.';

-- Semantics: like a lapse, at once (an OnlyOnce task fails with
-- only_once.interrupted).  Instances the worker does not hold are ignored.
-- A stopped or unknown worker: RC006.
CREATE FUNCTION genroc.release(p_worker text, p_instances bigint[]) RETURNS int
	AS 'MODULE_PATHNAME', 'genroc_release'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.release(text, bigint[]) IS
	'Gives leases back at once (shutdown): the tasks run again elsewhere; an OnlyOnce task fails with only_once.interrupted.';

-- Semantics: accepted while the instance is running at that epoch, even
-- when its lease has expired and tick has not yet seen it (nobody else can
-- hold it then).
-- RC003 when there is no such instance, RC004 when it is not running at
-- that epoch (the lease lost), 42501 for a lease of another role's worker
-- (an admin may report for any).  engine/report.cpp.
CREATE FUNCTION genroc.complete(p_instance bigint, p_epoch bigint, p_output jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_complete'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.complete(bigint, bigint, jsonb) IS
	'Reports a task''s output under its lease epoch; the instance goes on in this transaction; returns the new status; RC004 for a stale epoch.';

-- Errors as complete's; a genroc.HandlerMissing may move the task to its
-- handler's queue instead (genroc._handler_missing).  engine/report.cpp.
CREATE FUNCTION genroc.fail(p_instance bigint, p_epoch bigint, p_error text,
							p_cause text DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_fail'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.fail(bigint, bigint, text, text) IS
	'Reports a task''s error under its lease epoch; Retry and Catch decide in this transaction; returns the new status; RC004 for a stale epoch.';

/*
 * Semantics of a report that hands back the next task (complete_and_claim,
 * fail_and_claim): the report exactly as complete / fail makes it (same
 * checks, errors, log rows and durability), and when the step leaves the
 * same instance with a handler task ready at once (no retry delay), it is
 * leased to p_worker in the same transaction, as claim would lease it (a
 * new random epoch, lease_expires = now + the worker's lease_duration,
 * timeout_at from now, claim's task_started row), provided (checked before
 * the step, by engine::handback_lease, engine/steps.cpp):
 *   p_worker holds the lease being reported (lease_owner), and is
 *   registered, not stopped and not draining (worker_drain)
 *   the instance's queue is one of p_queues (the queues the worker serves)
 *   the queue has no rate_limit or partition_rate_limit (those count starts
 *   in a window: claim decides), and with a global_concurrency the other
 *   running tasks of the queue are fewer than it (the worker keeps the
 *   one slot it held, so the queue's count never grows)
 * Otherwise the next task stays ready for any claim, as after complete.
 * The worker's concurrency is not exceeded: it gives one task back and takes
 * one.  The handed-back task goes ahead of the queue's order (it continues
 * the instance the worker just ran).  Not a heartbeat (renew is).  An
 * OnlyOnce next task: its claim is flushed as claim flushes it.
 * Result: one row; status is the instance's status after the call
 * ('running' when the task was handed back, with its columns as claim
 * returns them; NULL columns otherwise).
 */
-- engine/report.cpp
CREATE FUNCTION genroc.complete_and_claim(p_instance bigint, p_epoch bigint, p_output jsonb,
										  p_worker text, p_queues text[])
	RETURNS TABLE (status text, instance_id bigint, epoch bigint, state text, resource text, input jsonb,
				   only_once boolean, timeout_s int, attempt int, lease_expires timestamptz,
				   queue text)
	AS 'MODULE_PATHNAME', 'genroc_complete_and_claim'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.complete_and_claim(bigint, bigint, jsonb, text, text[]) IS
	'complete, and the instance''s next task leased to the reporting worker in the same transaction when it may take it (its queue, no limit in the way); one row: the new status and the task as claim returns it, or NULLs.';

-- engine/report.cpp
CREATE FUNCTION genroc.fail_and_claim(p_instance bigint, p_epoch bigint, p_error text, p_cause text,
									  p_worker text, p_queues text[])
	RETURNS TABLE (status text, instance_id bigint, epoch bigint, state text, resource text, input jsonb,
				   only_once boolean, timeout_s int, attempt int, lease_expires timestamptz,
				   queue text)
	AS 'MODULE_PATHNAME', 'genroc_fail_and_claim'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.fail_and_claim(bigint, bigint, text, text, text, text[]) IS
	'fail, and the instance''s next task (a Retry without delay, a Catch''s task) leased to the reporting worker in the same transaction when it may take it; one row as complete_and_claim.';

/*
 * Semantics of complete_many: the reports of many tasks in one transaction,
 * each exactly as complete makes it (complete_and_claim's, with the
 * hand-back, when p_worker and p_queues are given), in the order given.
 * A report the engine does not take, because its instance is gone (RC003)
 * or its lease is lost (RC004: another epoch, or the instance no longer
 * running), gets its SQLSTATE in `sqlstate` and NULL status; the others go
 * on.  Those are what a correct worker meets in normal life (a lease that
 * lapsed while the batch waited); a misuse fails the whole call and takes
 * none: a NULL or unequal-length argument (22004, 22023), more than 10,000
 * reports (54000), a lease of another role's worker (42501).
 * The rows are locked in id order first, so two batches never wait on each
 * other in a cycle over them (a fan-out's parent row still can: 40P01, and
 * the caller sends the reports again).
 * Result: one row per report, in the order given: the reported instance,
 * its new status (NULL when not taken), the SQLSTATE of a report not taken,
 * and with a hand-back the task as claim returns it (NULL columns
 * otherwise).
 *
 * The common reports are written set-wise, in one statement: a top-level
 * instance (no parent, no partition), not OnlyOnce, whose step ends it
 * ('succeeded') or stops at a handler task ready at once, written as the
 * step writer (engine/steps.cpp) writes them (the row, the log rows in its
 * order, the hand-back as engine::handback_lease allows it), each step run
 * once through genroc._step_succeeded.  The engine (engine/many.cpp) writes
 * a batch that way when it has more than one report, no instance twice,
 * and no queue at global_concurrency (each report frees room there:
 * _room_freed).  Every other report (a lost lease, a wait, a fan-out, a
 * failure, a child, an activity, a retry delay), and every call it does
 * not take (a misuse, one report, an instance twice, a limited queue), goes
 * the general way, one by one as complete_and_claim makes each, errors and
 * all.
 */
CREATE FUNCTION genroc.complete_many(p_instances bigint[], p_epochs bigint[], p_outputs jsonb[],
									 p_worker text DEFAULT NULL, p_queues text[] DEFAULT NULL)
	RETURNS TABLE (instance_id bigint, status text, sqlstate text, epoch bigint, state text, resource text,
				   input jsonb, only_once boolean, timeout_s int, attempt int, lease_expires timestamptz,
				   queue text)
	AS 'MODULE_PATHNAME', 'genroc_complete_many'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.complete_many(bigint[], bigint[], jsonb[], text, text[]) IS
	'Reports many tasks'' outputs in one transaction, each as complete (with p_worker and p_queues: as complete_and_claim); a row per report in order: its new status, or the SQLSTATE (RC003, RC004) of a report not taken.';

