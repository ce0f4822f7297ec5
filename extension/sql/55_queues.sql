/*
 * Queues: operator configuration, routing at start, partition slots, and
 * the limits claim checks.
 *
 * Glossary
 *   queue       where a ready task waits for a worker; every instance gets
 *               one at start (genroc._route) and keeps it to its end
 *   kind        default (the queue "default", always there), tenant (the
 *               queue of the tenant of the same name: label "tenant"),
 *               handler (the queue of one handler: only workers having it
 *               serve it), routed (chosen by a match on definition name,
 *               tenant and labels), region (<queue>.<region>, derived: the
 *               label "region" of an instance; a worker started with
 *               --region R serves <queue>.R)
 *   partition   (queue, partition_key): at most partition_concurrency
 *               instances hold a slot from start (or run_at) to their end;
 *               the others wait in status 'queued' and get their slot, in
 *               order (priority, then age), in the transaction that frees
 *               one
 *   limits      global_concurrency (tasks running in the queue, 0 = none),
 *               rate_limit (task starts per period in the queue), checked
 *               by claim under a lock per limited queue;
 *               partition_rate_limit (task starts per period in one
 *               partition of the queue), checked by claim under a lock
 *               per partition that it only tries (the locks: rows of
 *               genroc._locks, 10_tables.sql)
 *
 * An option a queue row leaves NULL takes the default queue's value, then
 * the built-in one (global_concurrency 0, partition_concurrency 1, no rate
 * limit), as the reference does: a routed or handler queue has the limits
 * of the default queue unless it sets its own.
 */

CREATE TABLE genroc._queues (
	name					text PRIMARY KEY
							CHECK (name <> '' AND strpos(name, '.') = 0),
	kind					text NOT NULL
							CHECK (kind IN ('default', 'tenant', 'handler', 'routed')),
	-- routed queues are tried in this order (the order they were created)
	position				bigint GENERATED ALWAYS AS IDENTITY,
	handler					text UNIQUE,
	match					jsonb,
	global_concurrency		int CHECK (global_concurrency >= 0),
	partition_concurrency	int CHECK (partition_concurrency >= 1),
	rate_limit				int CHECK (rate_limit >= 1),
	rate_period				interval,
	partition_rate_limit	int CHECK (partition_rate_limit >= 1),
	partition_rate_period	interval,
	updated_at				timestamptz NOT NULL,
	CHECK ((kind = 'default') = (name = 'default')),
	CHECK ((kind = 'handler') = (handler IS NOT NULL)),
	CHECK ((kind = 'routed') = (match IS NOT NULL)),
	CHECK ((rate_limit IS NULL) = (rate_period IS NULL)),
	CHECK ((partition_rate_limit IS NULL) = (partition_rate_period IS NULL))
);
INSERT INTO genroc._queues (name, kind, updated_at) VALUES ('default', 'default', now());

-- Task starts of rate-limited queues, for the sliding windows of rate_limit
-- and partition_rate_limit.  claim appends one row per task it hands out
-- (in a queue with only a partition_rate_limit: per task of a partition)
-- and deletes the rows older than the longest of the queue's periods.
CREATE TABLE genroc._queue_starts (
	queue			text NOT NULL,
	partition_key	text,
	at				timestamptz NOT NULL
);
CREATE INDEX _queue_starts_queue ON genroc._queue_starts (queue, at);
CREATE INDEX _queue_starts_partition ON genroc._queue_starts (queue, partition_key, at)
	WHERE partition_key IS NOT NULL;

-- partition slots: holders and waiters of one (queue, partition_key)
CREATE INDEX _instances_partition ON genroc._instances (queue, partition_key, status)
	WHERE partition_key IS NOT NULL;

REVOKE ALL ON genroc._queues, genroc._queue_starts FROM PUBLIC;

-- The effective settings of a queue name: its own row, for <q>.<region> the
-- row of q (kind 'region'), else none (kind NULL); NULL options from the
-- default queue, then the built-in defaults.
CREATE FUNCTION genroc._queue_settings(p_queue text,
	OUT kind text, OUT global_concurrency int, OUT partition_concurrency int,
	OUT rate_limit int, OUT rate_period interval,
	OUT partition_rate_limit int, OUT partition_rate_period interval)
	AS 'MODULE_PATHNAME', 'genroc_queue_settings'
	LANGUAGE C STABLE;

/*
 * Semantics of routing (at start; the queue is recorded on the instance and
 * never moved by later config):
 *   1. a handler queue whose handler is used by a Task of the definition
 *      ("Resource": "handler:NAME" anywhere in it); several: the first by
 *      queue name
 *   2. the first routed queue (creation order) whose match applies
 *   3. the tenant's queue: a tenant queue named as the label "tenant"
 *   4. default
 *   then, with a label "region" R, the queue is <queue>.R
 */
CREATE FUNCTION genroc._route(p_definition genroc._definitions, p_labels jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_route'
	LANGUAGE C STABLE;

-- The instances holding a slot of a partition: top-level ones started (or
-- past run_at) and not ended.  Children carry their parent's partition key
-- (its rate limit counts their task starts) but hold no slot: their top
-- instance holds one for the whole tree.
CREATE FUNCTION genroc._slot_holders(p_queue text, p_partition text) RETURNS int
	AS 'MODULE_PATHNAME', 'genroc_slot_holders'
	LANGUAGE C STABLE;

/*
 * Semantics: gives free slots of a partition to its queued instances in
 * order (priority, created_at, id); each runs its first step here.  Called
 * by start and tick (a new waiter) and by every end (a freed slot).  A
 * lock per partition serializes the count and the hand-out, so no
 * partition ever has more holders than its partition_concurrency.  An
 * instance that ends inside its first step frees its slot at once: the
 * loop counts again; the nested call from that end is skipped (the
 * engine marks the partition being filled: engine/admission.cpp).
 */
CREATE FUNCTION genroc._fill_slots(p_queue text, p_partition text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_fill_slots'
	LANGUAGE C VOLATILE;

/*
 * Semantics: the first step of a started instance (start, or tick at
 * run_at), or of a failed one run again (p_request: retry, resume).
 * Without a partition_key it runs here.  With one, the instance queues
 * behind its partition ('queued', logged; the step waits in task_input)
 * and _fill_slots hands out what is free, so it runs here only when a slot
 * is free and nobody is ahead of it.  Returns the instance's status.
 */
CREATE FUNCTION genroc._admit(p_instance bigint, p_request jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_admit'
	LANGUAGE C VOLATILE;

-- Called when a task of p_queue is no longer running (complete, fail): in
-- a queue with a global_concurrency limit a claimer may have found it full
-- and gone to sleep, so wake the listeners (NOTIFY genroc, as a ready task
-- does) instead of leaving the room idle until their --poll-interval.
-- One NOTIFY per transaction (PostgreSQL folds repeats); no payload, as
-- every NOTIFY of genroc's: anyone who can connect may LISTEN.
CREATE FUNCTION genroc._room_freed(p_queue text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_room_freed'
	LANGUAGE C VOLATILE;

-- Called after an instance ended (its row already updated): its slot goes
-- to the next queued instance of its partition.
CREATE FUNCTION genroc._ended(p_instance bigint) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_ended'
	LANGUAGE C VOLATILE;

-- A handler's queue made after instances that need the handler were
-- started: they went to a queue whose workers need not have it (default, a
-- tenant's or a routed queue), where a worker without the handler fails the
-- task.  The instances not ended are routed again, with their root's labels
-- (a child's region is its root's); a running task keeps its lease, and its
-- instance's next task waits in the handler's queue.  p_skip_locked: rows
-- another transaction holds keep their queue (genroc._handler_missing, which
-- runs with an instance locked and must not wait for another such report).
CREATE FUNCTION genroc._reroute_handler(p_handler text, p_skip_locked boolean DEFAULT false) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_reroute_handler'
	LANGUAGE C VOLATILE;

/*
 * Semantics of a task reported genroc.HandlerMissing (fail, fail_and_claim)
 * for a Resource "handler:H", under its lease.  Routing sends an
 * instance to a handler's queue only once that queue exists; before, a task
 * that needs a handler only some workers have goes to a queue whose workers
 * need not have it.  The first worker without H that meets such a task makes
 * H its queue instead of failing it: a handler queue named H (the default
 * queue's limits), every other instance not ended that needs H routed again
 * (as queue_set does; those another transaction holds are left as they are,
 * and move at their own report), and this task routed again: when that puts
 * it in H's queue it is ready there at once, not counted as an interruption
 * (the handler never ran, so an OnlyOnce task too), and the log says so
 * (task_interrupted, reason "handler missing", with the handler and the
 * queue).  Workers serve the queue named after each handler they have, so
 * one that has H takes it from there.  Returns 'ready' then; NULL when the
 * task fails as reported:
 *   - the resource is not "handler:H", or H is no valid queue name;
 *   - the task is in H's queue and the reporting worker serves that queue
 *     (registered with it: a worker meant to have H lacks it);
 *   - H has no queue and the name H is a queue of another kind;
 *   - routed again, the instance lands elsewhere (a definition using two
 *     handlers whose other handler's queue comes first by name).
 * A task is moved to H's queue at most once: there, only a worker serving
 * it claims it, and such a worker's miss fails it.
 */
CREATE FUNCTION genroc._handler_missing(p_inst genroc._instances) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_handler_missing'
	LANGUAGE C VOLATILE;

/*
 * Semantics of queue_set (upsert; options the call leaves out are NULL:
 * the default queue's value applies):
 *   kind            default (only the queue "default", implied for it),
 *                   tenant, handler, routed; required otherwise
 *   handler         handler queues: the handler NAME (each handler in at
 *                   most one queue)
 *   match           routed queues: {definitions: [glob], tenants: [glob],
 *                   labels: {key: glob}}, at least one key
 *   global_concurrency     int >= 0 (0 = no limit)
 *   partition_concurrency  int >= 1
 *   rate_limit      {"count": N >= 1, "period": duration}: at most N task
 *                   starts per sliding period in the queue
 *   partition_rate_limit  the same shape: at most N task starts per
 *                   sliding period in each partition (partition_key) of
 *                   the queue; instances without a key are not limited
 *   a name with "." is refused (it is how region queues are spelled); a
 *   tenant queue cannot become another kind nor the reverse (the name is
 *   the tenant's); returns the queue as list_queues shows it
 */
CREATE FUNCTION genroc.queue_set(p_name text, p_options jsonb DEFAULT '{}') RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_queue_set'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.queue_set(text, jsonb) IS
	'Creates or replaces a queue (options kind, handler, match, global_concurrency, partition_concurrency, rate_limit, partition_rate_limit); returns it as list_queues shows it.';

-- Semantics: the instances already in a dropped queue keep it (routing is
-- never redone); they are served by whoever still lists that name, with the
-- default queue's limits.  Dropping "default" is refused; an unknown name
-- is 42704.
CREATE FUNCTION genroc.queue_drop(p_name text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_queue_drop'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.queue_drop(text) IS
	'Removes a configured queue (not "default"); instances already in it keep it.';

/*
 * Semantics of list_queues: every configured queue, plus every other queue
 * name a live worker serves or a live instance sits in (kind region for
 * <q>.<region> of a configured q, else unconfigured), by name; limits are
 * the effective ones; depth = ready tasks, queued = instances waiting for a
 * partition slot, running = leased tasks, workers = live workers serving it,
 * oldest_ready_at = since when its oldest ready task has been claimable
 * (NULL: none ready).
 */
CREATE FUNCTION genroc.list_queues()
	RETURNS TABLE (name text, kind text, handler text, match jsonb, global_concurrency int,
				   partition_concurrency int, rate_limit int, rate_period_ms bigint,
				   partition_rate_limit int, partition_rate_period_ms bigint,
				   depth bigint, queued bigint, running bigint, workers text[],
				   oldest_ready_at timestamptz)
	AS 'MODULE_PATHNAME', 'genroc_list_queues'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.list_queues() IS
	'Every queue (configured, served or in use): kind, match, effective limits, depth, queued, running, live workers serving it, since when its oldest ready task is claimable.';

CREATE VIEW genroc.queues AS
	SELECT * FROM genroc.list_queues();
COMMENT ON VIEW genroc.queues IS 'Every queue with its kind, limits, depth, running tasks and the workers serving it; for psql.';
REVOKE ALL ON genroc.queues FROM PUBLIC;

/*
 * Semantics of the limits claim checks (engine/claim.cpp, room): for each
 * queue of the claim with a global_concurrency or a rate_limit, under a
 * lock per queue (taken in name order, held to the commit, so two
 * claimers of one limited queue count one after the other):
 *   room = global_concurrency - running tasks of the queue, and
 *          rate_limit.count - task starts within the last period
 * A queue without room is left out of the claim; the claim takes at most
 * the smallest room of the others (a batch never oversteps a limit; the
 * next claim takes the rest).  A queue with a partition_rate_limit takes no
 * lock here: its partitions are counted one by one as claim meets them
 * (below).  The start rows older than the longest
 * period of a rate-limited queue are deleted here, skipping rows another
 * transaction deletes (pruning never waits).  Returns the queues to claim
 * from and that bound (NULL = no bound), the queues whose starts claim
 * records (rated: rate_limit, every task; partition_rated: only
 * partition_rate_limit, the tasks of a partition), and the queues with a
 * partition_rate_limit with its count and period (same order).
 */

/*
 * Semantics of partition rate limits in claim (engine/claim.cpp,
 * partitioned; used instead of claim's single statement when an open queue has a
 * partition_rate_limit): the ready tasks of the open queues, in claim
 * order, read in chunks (keyset: after the last one read).  For a task of
 * a partition-limited queue with a partition_key, the first time claim
 * meets its partition it tries the lock of (queue, partition_key):
 * held by another claimer, the partition is passed over for this claim
 * (never waited for: waiting in arbitrary order could deadlock); taken,
 * the window is counted, in a statement after the lock, so it sees every
 * start committed before, and the partition's room is the limit minus that
 * count.  A task is taken only while its partition has room; a partition
 * without room is left out of the following chunks.  Tasks without a key
 * and of other queues are taken as claim takes them.  Each taken row is
 * locked (FOR UPDATE SKIP LOCKED, status checked again).  Returns at most
 * p_n ids; the locks are held to the commit, when the starts claim records
 * are visible.
 */

/*
 * Semantics of claim_wake (the binary's wait, docs/sql-api.md "Queues and routing"):
 *   the windows of p_queues that are full while they hold back a ready task
 *   that could run now: a queue's rate_limit window (the queue holds a
 *   ready task) and a partition's partition_rate_limit window (the
 *   partition holds a ready task); in how many milliseconds the first of
 *   them has room again (a full window of limit N opens when its N-th
 *   newest start leaves it, at that start's time + the period); NULL when
 *   no window holds a ready task back (nothing to wake for: a task that
 *   becomes ready, or room under global_concurrency, is notified instead).
 *   A window that opens while another limit still holds the task back
 *   wakes the worker early: its claim takes nothing and it asks again.
 */
CREATE FUNCTION genroc.claim_wake(p_queues text[]) RETURNS bigint
	AS 'MODULE_PATHNAME', 'genroc_claim_wake'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.claim_wake(text[]) IS
	'Milliseconds until a rate_limit or partition_rate_limit window of these queues that holds back a ready task has room again (NULL: none does); the binary sleeps that long at most.';
