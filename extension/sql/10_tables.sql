/*
 * Tables.  Private to the extension: nothing outside genroc.* functions
 * reads or writes them, and PUBLIC has no grant on them.
 */

-- A named, versioned ASL definition.  hash is the sha256 of the canonical
-- text of the jsonb (jsonb::text is deterministic: keys sorted, no
-- duplicates), so "same content" means same hash; it is also the interpreter's
-- cache key.
CREATE TABLE genroc._definitions (
	id			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name		text NOT NULL CHECK (name <> ''),
	version		int NOT NULL CHECK (version > 0),
	definition	jsonb NOT NULL,
	hash		text NOT NULL,
	created_at	timestamptz NOT NULL,
	UNIQUE (name, version),
	UNIQUE (name, hash)
);

-- The values an instance's status and wait_kind may take: domains, not
-- CHECKs of the table.  PostgreSQL reads a table's CHECK expressions from
-- their stored text again in every statement that writes a row (about
-- 60,000 instructions for these two, a sixth of a step's UPDATE); a
-- domain's constraint it reads once per session.  The view
-- genroc.instances shows both as text.
CREATE DOMAIN genroc._status AS text
	CONSTRAINT _status_check
	CHECK (VALUE = ANY ('{queued,ready,running,waiting,succeeded,failed,cancelled}'::text[]));
CREATE DOMAIN genroc._wait_kind AS text
	CONSTRAINT _wait_kind_check
	CHECK (VALUE = ANY ('{timer,run_at,activity,children,pending,event,callback}'::text[]));

-- One execution.  The columns group as follows:
--   where it is      status, state, state_input (raw input of the state),
--                    task_input/resource (when stopped at a Task)
--   when it may run  queue (routed at start, 55_queues.sql), priority,
--                    eligible_at (claim order and delay); status 'queued':
--                    waiting for a slot of its partition (queue, partition_key)
--   lease            lease_owner, lease_epoch (new and random on every claim),
--                    lease_expires
--   attempts         retry_counts (the interpreter's, per Retry entry),
--                    attempt (their sum), interruptions (lapses of this
--                    attempt), only_once
--   deadlines        timeout_s/timeout_at (TimeoutSeconds), heartbeat_s/
--                    heartbeat_at (HeartbeatSeconds, activities),
--                    wait_kind/wait_until (timer or delayed start)
--   activity         activity (NAME), activity_token (one per parking, or
--                    per attempt of a .waitForTaskToken task: its callback
--                    token, kept from its scheduling to its result),
--                    activity_owner (who claimed it; NULL = not handed out)
--   composition      parent_id, root_id, child_index, child_gen, scope,
--                    fanout (see below)
--   variables        the ASL variables (Assign), see below
CREATE TABLE genroc._instances (
	id				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	-- no foreign key: its check cost a lookup and a row lock of the
	-- definition for every instance written (a tenth of start_many's
	-- time); genroc deletes no definition, and the trigger
	-- _definitions_keep (30_definitions.sql) refuses anyone else's delete
	-- of one with instances, as the key did
	definition_id	bigint NOT NULL,
	-- status and wait_kind take their values from a domain (above), not
	-- a CHECK of the table
	status			genroc._status NOT NULL,
	state			text,
	state_input		jsonb,
	task_input		jsonb,
	resource		text,
	queue			text NOT NULL DEFAULT 'default',
	priority		int NOT NULL DEFAULT 0,
	eligible_at		timestamptz NOT NULL,
	lease_owner		text,
	lease_epoch		bigint NOT NULL DEFAULT 0,
	lease_expires	timestamptz,
	retry_counts	jsonb,
	attempt			int NOT NULL DEFAULT 0,
	interruptions	int NOT NULL DEFAULT 0,
	only_once		boolean NOT NULL DEFAULT false,
	timeout_s		int,
	timeout_at		timestamptz,
	heartbeat_s		int,
	heartbeat_at	timestamptz,
	wait_kind		genroc._wait_kind,
	wait_until		timestamptz,
	activity		text,
	activity_token	text,
	activity_owner	text,
	input			jsonb NOT NULL,
	output			jsonb,
	error			text,
	cause			text,
	idempotency_key	text,
	labels			jsonb NOT NULL DEFAULT '{}',
	partition_key	text,
	name			text,
	created_at		timestamptz NOT NULL,
	updated_at		timestamptz NOT NULL,
	ended_at		timestamptz,
	-- Composition (65_children.sql).  A child (a Parallel branch or a Map
	-- item) runs its parent's definition version in its own scope (a JSON
	-- pointer into the definition, core/asl.hpp); child_gen is the parent's
	-- fan-out it belongs to (a retried Parallel starts a new one).  The
	-- parent of a fan-out waits with wait_kind 'children' and keeps its
	-- settings in fanout; a Map item not started yet (MaxConcurrency) waits
	-- with wait_kind 'pending'.
	parent_id		bigint REFERENCES genroc._instances (id),
	root_id			bigint REFERENCES genroc._instances (id),
	child_index		int,
	child_gen		int,
	scope			text,
	fanout			jsonb,
	-- The variables (ASL Assign) where the instance stands: NULL until a
	-- state assigns one; written by the step writer when the interpreter's
	-- answer carries them, handed to every step; a Parallel branch or Map
	-- item starts with a copy of its parent's (65_children.sql).
	variables		jsonb
);

-- The two unique keys, partial: most rows have neither (NULL), and an index
-- a row's values are in gets an entry on every update that is not HOT (each
-- claim and each step changes status, so every one): a full index would
-- take two entries per transition for nothing.  A lookup by value (= is
-- strict) uses them as it would the full ones; start's ON CONFLICT names the
-- predicate.
CREATE UNIQUE INDEX _instances_activity_token ON genroc._instances (activity_token)
	WHERE activity_token IS NOT NULL;
CREATE UNIQUE INDEX _instances_idempotency_key ON genroc._instances (idempotency_key)
	WHERE idempotency_key IS NOT NULL;
-- claim: ready rows of a queue in claim order (priority, eligible_at, id)
CREATE INDEX _instances_claim ON genroc._instances (queue, priority, eligible_at, id)
	WHERE status = 'ready';
-- claim_activity: unclaimed parked activities of a name, in the same order
CREATE INDEX _instances_activity ON genroc._instances (activity, priority, eligible_at, id)
	WHERE status = 'waiting' AND wait_kind = 'activity' AND activity_owner IS NULL;
-- tick: timers and delayed starts, lapsed leases, timeouts, heartbeats
CREATE INDEX _instances_wait ON genroc._instances (wait_until)
	WHERE status = 'waiting' AND wait_kind IN ('timer', 'run_at');
CREATE INDEX _instances_lease ON genroc._instances (lease_expires)
	WHERE status = 'running';
CREATE INDEX _instances_lease_owner ON genroc._instances (lease_owner)
	WHERE status = 'running';
CREATE INDEX _instances_timeout ON genroc._instances (timeout_at)
	WHERE timeout_at IS NOT NULL;
CREATE INDEX _instances_heartbeat ON genroc._instances (heartbeat_at)
	WHERE heartbeat_at IS NOT NULL;
-- list_instances by definition and status.  Neither holds the two states
-- a task passes through (ready, running; the claim and lease indexes hold
-- those): an instance update is not HOT (status is indexed), so an index
-- holding them took an entry at the start, at each claim and at each
-- report that makes another task, about 2.5 µs each.
-- The definition index holds the id as well: with the id alone, every
-- entry of a definition was a duplicate and went into a posting list, a
-- rewrite of it per concluded instance (an entry cost three times a plain
-- one: bench/pg_callgrind.sh), and a listing by definition reads it in id
-- order.
CREATE INDEX _instances_definition ON genroc._instances (definition_id, id)
	WHERE status NOT IN ('ready', 'running');
CREATE INDEX _instances_status ON genroc._instances (status, id)
	WHERE status NOT IN ('ready', 'running');
-- a parent's children, in order
CREATE INDEX _instances_parent ON genroc._instances (parent_id, child_gen, child_index)
	WHERE parent_id IS NOT NULL;
CREATE INDEX _instances_root ON genroc._instances (root_id) WHERE root_id IS NOT NULL;
-- prune: concluded top-level instances, oldest end first
CREATE INDEX _instances_ended ON genroc._instances (ended_at)
	WHERE parent_id IS NULL AND ended_at IS NOT NULL;

-- The worker registry: one row per worker id, kept after a stop so a
-- restart can find its own leases.
CREATE TABLE genroc._workers (
	id				text PRIMARY KEY CHECK (id <> ''),
	host			text NOT NULL,
	lease_duration	interval NOT NULL,
	stale_after		interval NOT NULL,
	queues			text[] NOT NULL,
	concurrency		int CHECK (concurrency > 0),
	-- genroc.durability() of the session that registered: what this worker's
	-- commits flush (shown by genctl workers)
	durability		text NOT NULL DEFAULT 'essential',
	started_at		timestamptz NOT NULL,
	heartbeat_at	timestamptz NOT NULL,
	stopped_at		timestamptz,
	-- the database session the worker last called from (pid and backend
	-- start); while it exists the worker is alive (worker_register).  NULL:
	-- registered with "pooled" (a transaction pooler: the session is not
	-- the worker's), so only the heartbeat tells
	session_pid		int,
	session_start	timestamptz
);

-- Each instance's history, oldest first by seq.  instance_id has no
-- foreign key: only genroc's functions write here, always for an instance
-- they hold locked, and the key check would cost a lookup and a row lock on
-- the instance for every entry (several per transition).  Whatever deletes
-- instances (retention) deletes their log entries with them.  No primary
-- key either: seq comes from its identity alone (GENERATED ALWAYS), nothing
-- looks an entry up by seq without its instance (_log_instance), and an
-- index on it would be one more entry written with each of the 3-4 rows a
-- task logs.
CREATE TABLE genroc._log (
	seq			bigint GENERATED ALWAYS AS IDENTITY,
	instance_id	bigint NOT NULL,
	at			timestamptz NOT NULL,
	event		text NOT NULL,
	state		text,
	detail		jsonb
);
-- Half full pages: an instance's later entries (its claim, its report)
-- go beside its first ones, in the middle of the index; in full pages each
-- such insert split a page (a page image in the WAL after a checkpoint).
CREATE INDEX _log_instance ON genroc._log (instance_id, seq) WITH (fillfactor = 50);
-- prune: log rows past the log retention, oldest first
CREATE INDEX _log_at ON genroc._log (at);

-- Locks that serialize genroc's own work, one row per thing serialized:
--   kind             key
--   define           a definition name (two defines of one name number
--                    their versions one after the other)
--   worker           a worker id (two registrations of one id)
--   queues           '' (queue_set and queue_drop, one at a time: a handler
--                    has one queue)
--   queue            a queue name (claimers of a queue with a
--                    global_concurrency or rate_limit count one at a time)
--   partition        [queue, partition_key] as JSON text (its slots)
--   partition_rate   the same key (its partition_rate_limit, claim only
--                    tries it)
-- Taken with genroc._lock / genroc._try_lock (20_core.sql), held to the
-- commit.  A row lock, not an advisory lock: an advisory key is a number any
-- role can compute and hold, stalling the engine; these rows only genroc's
-- functions can read or lock (PUBLIC has no grant).  Created on first use;
-- the partition rows of a partition with no instance left are deleted by
-- genroc.prune (engine/retention.cpp).
CREATE TABLE genroc._locks (
	kind	text NOT NULL,
	key		text NOT NULL,
	PRIMARY KEY (kind, key)
);

-- The counts of a parent's current fan-out (65_children.sql), kept in the
-- transactions that start and end its children, so that moving a Parallel
-- or a Map on costs the same at its 100,000th item as at its first (no
-- count over the siblings).  One row per parent that ever fanned out,
-- replaced by its next fan-out (gen = the parent's fanout.gen):
--   next_index  the children below it were started, in child_index order
--               (or had ended while pending: cancelled from outside)
--   live        started and not ended
--   pending     not started and not ended
--   succeeded   ended succeeded
--   failed      ended failed or cancelled
-- A fan-out without its row (one begun before this table existed) gets it
-- from its children on first use (genroc._fanout_row).
CREATE TABLE genroc._fanouts (
	parent_id	bigint PRIMARY KEY REFERENCES genroc._instances (id) ON DELETE CASCADE,
	gen			int NOT NULL,
	total		int NOT NULL,
	next_index	int NOT NULL,
	live		int NOT NULL,
	pending		int NOT NULL,
	succeeded	int NOT NULL,
	failed		int NOT NULL
);


-- Who ticks (75_metrics.sql, docs/operations.md "In-database ticker"): one row per
-- caller of genroc.tick(), written by the tick itself.  kind: 'ticker' (the
-- in-database background worker, told by its backend type), 'binary' (a
-- genroc process: its application_name is "genroc worker <id>" during the
-- tick) or 'session' (anyone else calling tick, named by application_name
-- or role).  Not user data: not marked for pg_dump; a row not ticked for
-- 7 days is deleted by tick.
CREATE TABLE genroc._tickers (
	ticked_by		text PRIMARY KEY,
	kind			text NOT NULL CHECK (kind IN ('ticker', 'binary', 'session')),
	role			text NOT NULL,
	first_tick_at	timestamptz NOT NULL,
	last_tick_at	timestamptz NOT NULL,
	ticks			bigint NOT NULL DEFAULT 1
);

REVOKE ALL ON genroc._definitions, genroc._instances, genroc._workers, genroc._log,
	genroc._locks, genroc._fanouts, genroc._tickers FROM PUBLIC;
-- USAGE on the schema: the capability groups only (99_privileges.sql).
