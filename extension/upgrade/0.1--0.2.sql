/*
 * genroc 0.1 -> 0.2: the hand-written part of the upgrade (docs/operations.md "Upgrades").
 *
 * Runs first; then every part of extension/sql/ runs again without its
 * table statements (scripts/upgrade-script.sh).  Put here what that cannot
 * do: ALTER TABLE for a new or changed column, constraint or index, a new
 * table (CREATE TABLE with its indexes; its pg_extension_config_dump call is
 * in 95_backup.sql, which runs again), seed rows, DROP FUNCTION for a
 * function whose signature or return type changed, DROP VIEW for a view
 * whose columns changed.  test/ops/upgrade.sh fails when the result differs
 * from a fresh install of 0.2.
 *
 * The tables of 0.2 against 0.1, in the order a fresh install makes them
 * (the column order must match): the session columns of _workers
 * (10_tables.sql), the table of lock rows genroc._locks (10_tables.sql),
 * the fan-out counts genroc._fanouts (10_tables.sql), the variables column
 * of _instances (10_tables.sql),
 * the owner columns and their index (12_roles.sql), the source column of
 * _definitions (30_definitions.sql), the objects table and
 * its reference indexes (15_objects.sql), the drain request of _workers
 * (50_workers.sql), the aliases and deletions of definitions
 * (32_aliases.sql), the domains of status and wait_kind (10_tables.sql;
 * at the end).  The rest of 0.2 (pg_dump
 * marks, the default queue's merge trigger, genroc.version(), the roles and
 * their grants, the new helpers) is in the parts, which run after this.
 */

-- the worker's session (fencing; 10_tables.sql): NULL for a worker
-- registered by 0.1, which the heartbeat alone judges, as a pooled one
ALTER TABLE genroc._workers ADD COLUMN session_pid int, ADD COLUMN session_start timestamptz;

-- lock rows instead of advisory keys (10_tables.sql); its REVOKE runs again
-- with 10_tables.sql, and it is not marked for pg_dump (95_backup.sql)
CREATE TABLE genroc._locks (
	kind	text NOT NULL,
	key		text NOT NULL,
	PRIMARY KEY (kind, key)
);

-- a fan-out's counts (10_tables.sql; marked for pg_dump in 95_backup.sql):
-- a fan-out 0.1 began gets its row from its children when it next moves
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

-- 0.1 let PUBLIC use the schema; 0.2 gives it to the capability groups
-- only (99_privileges.sql, which also revokes EXECUTE from PUBLIC)
REVOKE USAGE ON SCHEMA genroc FROM PUBLIC;

-- Owners (12_roles.sql).  A SQL-standard function body (RETURN …) that
-- takes the row type of genroc._instances keeps PostgreSQL from adding a
-- column to it: these three are dropped first, and not made again: they
-- are the engine's now (_depth: engine/children.cpp; _task_request:
-- engine/report.cpp; _instance_json: engine/instances.cpp) (no grants to
-- keep: they are private helpers).  The column default is genroc._caller(), which
-- 12_roles.sql defines again after this; the rows 0.1 made get the role
-- that runs ALTER EXTENSION (a stable default is evaluated once, here).
CREATE FUNCTION genroc._caller() RETURNS oid
	AS 'MODULE_PATHNAME', 'genroc_caller'
	LANGUAGE C STABLE PARALLEL SAFE;
DROP FUNCTION genroc._task_request(genroc._instances, text, jsonb, text, text),
	genroc._instance_json(genroc._instances), genroc._depth(genroc._instances);
-- the ASL variables (Assign; 10_tables.sql), before owner as a fresh
-- install orders them: none for the instances 0.1 ran
ALTER TABLE genroc._instances ADD COLUMN variables jsonb;
ALTER TABLE genroc._definitions ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._instances ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._workers ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
CREATE INDEX _definitions_owner ON genroc._definitions (owner, name);
-- a definition's text as written (30_definitions.sql), after owner as a
-- fresh install orders them: none kept for the versions 0.1 stored
ALTER TABLE genroc._definitions ADD COLUMN source text;

-- The unique keys of _instances, partial (10_tables.sql): the rows without
-- an activity token or idempotency key (most) no longer take an entry in
-- either index on every update.  Same names a fresh install gives them.
ALTER TABLE genroc._instances DROP CONSTRAINT _instances_activity_token_key,
	DROP CONSTRAINT _instances_idempotency_key_key;
CREATE UNIQUE INDEX _instances_activity_token ON genroc._instances (activity_token)
	WHERE activity_token IS NOT NULL;
CREATE UNIQUE INDEX _instances_idempotency_key ON genroc._instances (idempotency_key)
	WHERE idempotency_key IS NOT NULL;

-- No foreign key from an instance to its definition (10_tables.sql): the
-- trigger _definitions_keep (30_definitions.sql, made by the parts) keeps
-- the rows instances refer to instead.
ALTER TABLE genroc._instances DROP CONSTRAINT _instances_definition_id_fkey;

-- The definition and status indexes leave out ready and running rows
-- (10_tables.sql): no entry for a task's start, claim or next task.
DROP INDEX genroc._instances_definition, genroc._instances_status;
CREATE INDEX _instances_definition ON genroc._instances (definition_id, id)
	WHERE status NOT IN ('ready', 'running');
CREATE INDEX _instances_status ON genroc._instances (status, id)
	WHERE status NOT IN ('ready', 'running');

-- The log has no primary key (10_tables.sql): one index entry fewer per
-- entry; seq stays its identity, NOT NULL.
ALTER TABLE genroc._log DROP CONSTRAINT _log_pkey;
-- Its instance index leaves room in each page (10_tables.sql); the pages
-- written from now on.
ALTER INDEX genroc._log_instance SET (fillfactor = 50);

-- The step writer is the engine's, called in-process by every caller
-- (engine/steps.cpp): genroc._apply_step goes (and _interrupt below).
DROP FUNCTION genroc._apply_step(bigint, jsonb);

-- list_queues gained a column (oldest_ready_at, 55_queues.sql, for the web
-- console): its return type changed, and the view genroc.queues selects
-- it; both are made again, with their grants, by the parts that follow
DROP VIEW genroc.queues;
DROP FUNCTION genroc.list_queues();

-- Who ticks (10_tables.sql, 75_metrics.sql): not user data, not marked for
-- pg_dump; its REVOKE runs again with 10_tables.sql.
CREATE TABLE genroc._tickers (
	ticked_by		text PRIMARY KEY,
	kind			text NOT NULL CHECK (kind IN ('ticker', 'binary', 'session')),
	role			text NOT NULL,
	first_tick_at	timestamptz NOT NULL,
	last_tick_at	timestamptz NOT NULL,
	ticks			bigint NOT NULL DEFAULT 1
);

-- genroc.claim returns each task's queue since 0.2 (the binary's metrics
-- per queue): a changed return type is dropped and made again by
-- 50_workers.sql, its grant by 99_privileges.sql.
DROP FUNCTION genroc.claim(text, text[], int);

-- Large values stored once (15_objects.sql; marked for pg_dump in
-- 95_backup.sql): the table and the indexes that find a reference.  Rows
-- 0.1 wrote keep their values inline, which reads the same.
CREATE TABLE genroc._objects (
	hash			text PRIMARY KEY,	-- sha256 of value::text, hex
	value			jsonb NOT NULL,
	bytes			bigint NOT NULL,	-- octet_length(value::text)
	created_at		timestamptz NOT NULL,
	check_at		timestamptz NOT NULL,	-- when collection looks at it next
	unused_since	timestamptz			-- when collection found it unused; NULL: in use
);
CREATE INDEX _objects_check ON genroc._objects (check_at);

-- Where references are: one partial index per column that can hold one,
-- empty while no value is large (an update only evaluates the predicate).
CREATE INDEX _instances_obj_input ON genroc._instances ((input ->> 'genroc:object'))
	WHERE input ? 'genroc:object';
CREATE INDEX _instances_obj_state_input ON genroc._instances ((state_input ->> 'genroc:object'))
	WHERE state_input ? 'genroc:object';
CREATE INDEX _instances_obj_task_input ON genroc._instances ((task_input ->> 'genroc:object'))
	WHERE task_input ? 'genroc:object';
CREATE INDEX _instances_obj_output ON genroc._instances ((output ->> 'genroc:object'))
	WHERE output ? 'genroc:object';
CREATE INDEX _log_obj_input ON genroc._log ((detail -> 'input' ->> 'genroc:object'))
	WHERE detail -> 'input' ? 'genroc:object';
CREATE INDEX _log_obj_output ON genroc._log ((detail -> 'output' ->> 'genroc:object'))
	WHERE detail -> 'output' ? 'genroc:object';
CREATE INDEX _log_obj_payload ON genroc._log ((detail -> 'payload' ->> 'genroc:object'))
	WHERE detail -> 'payload' ? 'genroc:object';

-- Drain requests (50_workers.sql, after owner): the column, and the
-- functions whose result changed with it: worker_heartbeat answers whether
-- to drain, list_workers (and the view genroc.workers over it) has a
-- draining column.  The parts that follow make them again with their grants.
ALTER TABLE genroc._workers ADD COLUMN drain_requested_at timestamptz;
DROP FUNCTION genroc.worker_heartbeat(text);
DROP VIEW genroc.workers;
DROP FUNCTION genroc.list_workers();

-- genroc._context (the context object as jsonb) went: the steps write the
-- context as text in C (genroc._step_in_context) from genroc._execution.
DROP FUNCTION genroc._context(genroc._instances, genroc._definitions, text);

-- queue_set's option checks moved into the engine (engine/queues.cpp): the
-- PL/pgSQL helpers only it called go.
DROP FUNCTION genroc._check_match(jsonb);
DROP FUNCTION genroc._rate_option(jsonb, text);
-- The results by task token are the engine's (engine/callbacks.cpp): the
-- lookup genroc._activity went with their PL/pgSQL bodies.
DROP FUNCTION genroc._activity(text);
-- Aliases and deletions of definitions (32_aliases.sql; marked for pg_dump
-- in 95_backup.sql, their REVOKE runs again with 32_aliases.sql).
CREATE TABLE genroc._aliases (
	name		text NOT NULL,
	alias		text NOT NULL,
	routing		jsonb NOT NULL,
	description	text,
	created_at	timestamptz NOT NULL,
	updated_at	timestamptz NOT NULL,
	PRIMARY KEY (name, alias)
);
CREATE TABLE genroc._deletions (
	name		text NOT NULL,
	version		int NOT NULL,
	deleted_at	timestamptz NOT NULL,
	PRIMARY KEY (name, version)
);
-- cancel takes an error and a cause: the old signatures go
DROP FUNCTION genroc.cancel(bigint);
DROP FUNCTION genroc._cancel(bigint);
DROP FUNCTION genroc._cancel_tree(bigint, text, text);
-- Retention and the tick are the engine's (engine/retention.cpp,
-- engine/tick.cpp): the PL/pgSQL helpers only they called go (prune and
-- tick themselves are replaced in place by the parts that follow).
DROP FUNCTION genroc._prune(interval, interval, int);
DROP FUNCTION genroc._tick_children(int);
-- cancel, retry, resume, emit, renew and release are the engine's
-- (engine/control.cpp): the PL/pgSQL helpers only they called go.  0.1's
-- retry and resume are SQL bodies that depend on _run_again: they become
-- the C entry points in place first (their grants kept; 40_instances.sql
-- makes them the same again).
CREATE OR REPLACE FUNCTION genroc.retry(p_instance bigint) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_retry'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
CREATE OR REPLACE FUNCTION genroc.resume(p_instance bigint, p_output jsonb DEFAULT 'null') RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_resume'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
DROP FUNCTION genroc._run_again(bigint, jsonb);
DROP FUNCTION genroc._release(text, bigint[], text);
-- A worker's report (complete, fail, complete_and_claim, fail_and_claim) is
-- the engine's (engine/report.cpp): the PL/pgSQL helper only they called goes.
DROP FUNCTION genroc._leased(bigint, bigint);

-- Composition (fan-outs, their children, event waits) is the engine's
-- (engine/children.cpp): the PL/pgSQL helpers only the engine called go.
DROP FUNCTION genroc._fan_out(bigint, jsonb), genroc._cancel_children(genroc._instances, text),
	genroc._child_ended(bigint), genroc._advance_children(bigint), genroc._park_event(bigint, jsonb);

-- start and start_many are the engine's (engine/start.cpp): the PL/pgSQL
-- option readers only they (and list_instances) called go (start and
-- start_many themselves are replaced in place by the parts that follow).
DROP FUNCTION genroc._parse_time(jsonb, text);
DROP FUNCTION genroc._int_option(jsonb, text);
DROP FUNCTION genroc._text_option(jsonb, text);
DROP FUNCTION genroc._labels_option(jsonb, text);

-- Routing is the engine's (engine/admission.cpp, engine/queue_rules.hpp): the
-- SQL glob and match helpers nothing calls any more go.
DROP FUNCTION genroc._matches(jsonb, text, jsonb);
DROP FUNCTION genroc._glob(text, text);

-- claim's queue limits are the engine's (engine/claim.cpp): the PL/pgSQL
-- room and partition helpers go.
DROP FUNCTION genroc._claim_room(text[], timestamptz);
DROP FUNCTION genroc._claim_partitioned(text[], text[], int[], interval[], timestamptz, int);

-- What the log keeps of a detail's payloads is the engine's
-- (engine/log_payloads.cpp; genroc._log_payloads its C entry) and a log row
-- the statement LOG_ROW: the PL/pgSQL log writer and payload rules go.
DROP FUNCTION genroc._log(bigint, text, text, jsonb);
DROP FUNCTION genroc._log_detail(jsonb);
-- A task's request and a task's engine error are the engine's
-- (engine/report.cpp, engine/steps.cpp), called in-process by every
-- caller: genroc._fail_task goes (genroc._task_request went above).
DROP FUNCTION genroc._fail_task(bigint, text, text);
-- The step writer and the lapse path are the engine's, called in-process by
-- every caller (engine/steps.cpp): their SQL entries go.
DROP FUNCTION genroc._interrupt(bigint, text);

-- status and wait_kind: domains instead of the table's CHECKs
-- (10_tables.sql says why), last: after the functions above that read
-- them are gone.  The view that reads them goes first (the
-- parts make it again); the domains get their constraints after the
-- columns changed type, so the table is scanned once and not rewritten
-- (a domain with a constraint would rewrite it) and its indexes are kept.
DROP VIEW genroc.instances;
-- 0.1's _slot_holders, a SQL body that reads status, becomes now what
-- 55_queues.sql makes it again below
CREATE OR REPLACE FUNCTION genroc._slot_holders(p_queue text, p_partition text) RETURNS int
	AS 'MODULE_PATHNAME', 'genroc_slot_holders'
	LANGUAGE C STABLE;
CREATE DOMAIN genroc._status AS text;
CREATE DOMAIN genroc._wait_kind AS text;
ALTER TABLE genroc._instances DROP CONSTRAINT _instances_status_check,
	DROP CONSTRAINT _instances_wait_kind_check,
	ALTER COLUMN status TYPE genroc._status,
	ALTER COLUMN wait_kind TYPE genroc._wait_kind;
ALTER DOMAIN genroc._status ADD CONSTRAINT _status_check
	CHECK (VALUE = ANY ('{queued,ready,running,waiting,succeeded,failed,cancelled}'::text[]));
ALTER DOMAIN genroc._wait_kind ADD CONSTRAINT _wait_kind_check
	CHECK (VALUE = ANY ('{timer,run_at,activity,children,pending,event,callback}'::text[]));
