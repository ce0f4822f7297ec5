-- genroc 0.1, frozen: the install script of version 0.1 as built from extension/sql/ at
-- commit 000cd76.  Never edit it: databases installed with it upgrade through
-- genroc--0.1--0.2.sql, and test/ops/upgrade.sh installs it to test that.
/*
 * genroc — a durable process engine inside PostgreSQL.
 *
 * This script is built from the parts in extension/sql/, in file-name order.
 *
 * The API in one page (README.md has every signature and error):
 *
 *   define(name, definition)      validate an ASL state machine; store a new
 *                                 version only when the content changed
 *   start(definition, input, options)
 *                                 create an instance and run its inline states
 *                                 (Pass, Choice, Succeed, Fail, due Waits) in
 *                                 this transaction; it stops at a Task, a
 *                                 future Wait or its end
 *   worker_register / worker_heartbeat / worker_stop
 *                                 the worker registry: one live holder per id
 *   claim(worker, queues, n)      lease ready tasks to a worker (new epoch each)
 *   renew / release               extend or give back leases
 *   complete / fail               report a task under its lease epoch; the
 *                                 instance goes on in the same transaction
 *   claim_activity / activity_succeed / activity_fail / activity_heartbeat
 *                                 external tasks, addressed by a task token
 *   cancel(instance)              end a live instance
 *   tick(limit)                   everything time does: timers, delayed
 *                                 starts, timeouts, heartbeats, lapsed leases,
 *                                 pruning by the retention settings
 *   prune(log_retention, instance_retention, limit)
 *                                 delete old log rows and concluded trees
 *   get_instance / list_instances / history / list_definitions / list_workers
 *                                 reading; views genroc.instances, genroc.workers
 *   token_create / token_verify / token_list / token_revoke
 *                                 the HTTP API's credentials (hashed), not
 *                                 granted to PUBLIC
 *
 * How it is split: the ASL interpreter (C++, core/, shared with the SQLite
 * shim) answers "where does this instance stop now"; the C module bridges to
 * it (genroc._step); the PL/pgSQL here keeps the rows: statuses, leases and
 * epochs, tokens, deadlines, the log.  genroc._apply_step is the one place
 * where an interpreter answer becomes a row update, so every transition looks
 * the same.
 *
 * The SQLite shim (sqlite_shim/) copies these semantics one for one; the
 * comments marked "Semantics:" are the contract it follows.
 *
 * Privileges: tables and genroc._* helpers are private.  Public functions are
 * SECURITY DEFINER (callers must not touch the tables) with a fixed
 * search_path, and are executable by PUBLIC once the role has USAGE on the
 * schema, which the install grants.  The views are not granted: an admin
 * grants SELECT on genroc.instances / genroc.workers to the roles that may
 * read every instance.  To keep a role from running the engine, an admin
 * revokes EXECUTE on the functions it must not call.
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION genroc" to load this file. \quit
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

-- One execution.  The columns group as follows:
--   where it is      status, state, state_input (raw input of the state),
--                    task_input/resource (when stopped at a Task)
--   when it may run  queue (routed at start, 55_queues.sql), priority,
--                    eligible_at (claim order and delay); status 'queued':
--                    waiting for a slot of its partition (queue, partition_key)
--   lease            lease_owner, lease_epoch (bumped on every claim),
--                    lease_expires
--   attempts         retry_counts (the interpreter's, per Retry entry),
--                    attempt (their sum), interruptions (lapses of this
--                    attempt), only_once
--   deadlines        timeout_s/timeout_at (TimeoutSeconds), heartbeat_s/
--                    heartbeat_at (HeartbeatSeconds, activities),
--                    wait_kind/wait_until (timer or delayed start)
--   activity         activity (NAME), activity_token (one per parking),
--                    activity_owner (who claimed it; NULL = not handed out)
--   composition      parent_id, root_id, child_index, child_gen, scope,
--                    fanout (see below)
CREATE TABLE genroc._instances (
	id				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	definition_id	bigint NOT NULL REFERENCES genroc._definitions (id),
	status			text NOT NULL CHECK (status IN ('queued', 'ready', 'running', 'waiting',
													'succeeded', 'failed', 'cancelled')),
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
	wait_kind		text CHECK (wait_kind IN ('timer', 'run_at', 'activity', 'children',
											  'pending', 'event')),
	wait_until		timestamptz,
	activity		text,
	activity_token	text UNIQUE,
	activity_owner	text,
	input			jsonb NOT NULL,
	output			jsonb,
	error			text,
	cause			text,
	idempotency_key	text UNIQUE,
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
	fanout			jsonb
);

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
-- list_instances by definition and status
CREATE INDEX _instances_definition ON genroc._instances (definition_id);
CREATE INDEX _instances_status ON genroc._instances (status, id);
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
	stopped_at		timestamptz
);

-- Each instance's history, oldest first by seq.  instance_id has no
-- foreign key: only genroc's functions write here, always for an instance
-- they hold locked, and the key check would cost a lookup and a row lock on
-- the instance for every entry (several per transition).  Whatever deletes
-- instances (retention) deletes their log entries with them.
CREATE TABLE genroc._log (
	seq			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	instance_id	bigint NOT NULL,
	at			timestamptz NOT NULL,
	event		text NOT NULL,
	state		text,
	detail		jsonb
);
CREATE INDEX _log_instance ON genroc._log (instance_id, seq);
-- prune: log rows past the log retention, oldest first
CREATE INDEX _log_at ON genroc._log (at);

REVOKE ALL ON genroc._definitions, genroc._instances, genroc._workers, genroc._log FROM PUBLIC;
GRANT USAGE ON SCHEMA genroc TO PUBLIC;
/*
 * The engine's core: the clock, the interpreter bridge, small helpers, and
 * genroc._apply_step, where every interpreter answer becomes a row update.
 *
 * The private helpers (genroc._*) carry no SET search_path: they run only
 * inside the public SECURITY DEFINER functions, whose search_path is pinned
 * to pg_catalog, pg_temp, and every name in them is qualified.  A SET clause
 * costs a setting save and restore on every call and keeps SQL functions
 * from being inlined, and these run several times per transition.
 */

CREATE FUNCTION genroc.now() RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'genroc_now'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION genroc.now() IS
	'The engine''s clock: the test clock (setting genroc.test_clock) when set, else the transaction start time.';

-- Raises RC001 naming the JSON path of the first fault.  The cache key lets
-- the next _step skip compiling.
CREATE FUNCTION genroc._validate(p_definition jsonb, p_cache_key text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_validate'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- One interpreter step (core/asl.hpp, "The step protocol").  Deterministic:
-- the caller passes now_ms and the context in the request.
CREATE FUNCTION genroc._step(p_cache_key text, p_definition jsonb, p_request jsonb)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_step'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Timestamps as genroc writes them everywhere: ISO-8601 UTC with
-- milliseconds, e.g. 2030-01-01T00:00:00.000Z (the interpreter's format).
-- These one-expression helpers are STABLE as what they call is: a SQL
-- function the planner can inline costs nothing per call, one it cannot
-- (declared IMMUTABLE over STABLE calls) is planned again on every call.
CREATE FUNCTION genroc._iso(p_at timestamptz) RETURNS text
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- Milliseconds since the epoch (what the interpreter's now_ms/until_ms are).
CREATE FUNCTION genroc._ms(p_at timestamptz) RETURNS bigint
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN floor(extract(epoch FROM p_at) * 1000)::bigint;

CREATE FUNCTION genroc._from_ms(p_ms bigint) RETURNS timestamptz
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN 'epoch'::timestamptz + p_ms * interval '1 millisecond';

-- Semantics: an option bag must be a JSON object whose keys are all in
-- p_allowed; otherwise 22023 naming the first unknown key (in key order).
CREATE FUNCTION genroc._check_options(p_options jsonb, p_allowed text[], p_what text)
	RETURNS void
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_key text;
BEGIN
	IF jsonb_typeof(p_options) <> 'object' THEN
		RAISE EXCEPTION '% must be a JSON object', p_what
			USING ERRCODE = '22023';
	END IF;
	FOR v_key IN SELECT k FROM jsonb_object_keys(p_options) AS k ORDER BY k LOOP
		IF NOT v_key = ANY (p_allowed) THEN
			RAISE EXCEPTION 'unknown option "%" in %', v_key, p_what
				USING ERRCODE = '22023',
					  HINT = format('Known options: %s.', array_to_string(p_allowed, ', '));
		END IF;
	END LOOP;
END;
$$;

-- Semantics: a duration is a JSON number of seconds, or a string
-- "<number><unit>" with unit ms, s, m, h or d ("10s", "1.5m", "500ms").
-- Anything else is 22007 naming the option; zero or negative is 22023.
CREATE FUNCTION genroc._duration(p_value jsonb, p_option text) RETURNS interval
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_parts text[];
	v_result interval;
BEGIN
	IF jsonb_typeof(p_value) = 'number' THEN
		v_result := (p_value::text)::numeric * interval '1 second';
	ELSIF jsonb_typeof(p_value) = 'string' THEN
		v_parts := regexp_match(p_value #>> '{}', '^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$');
		IF v_parts IS NULL THEN
			RAISE EXCEPTION 'invalid duration for option "%": %', p_option, p_value
				USING ERRCODE = '22007',
					  HINT = 'Write a number of seconds or a string like "10s", "500ms", "2m", "1h", "1d".';
		END IF;
		v_result := v_parts[1]::numeric * CASE v_parts[2]
			WHEN 'ms' THEN interval '1 millisecond'
			WHEN 's' THEN interval '1 second'
			WHEN 'm' THEN interval '1 minute'
			WHEN 'h' THEN interval '1 hour'
			ELSE interval '1 day' END;
	ELSE
		RAISE EXCEPTION 'invalid duration for option "%": %', p_option, p_value
			USING ERRCODE = '22007';
	END IF;
	IF v_result <= interval '0' THEN
		RAISE EXCEPTION 'option "%" must be a positive duration', p_option
			USING ERRCODE = '22023';
	END IF;
	RETURN v_result;
END;
$$;

-- The log settings of this session (genroc.c): payloads, payload_max,
-- log_retention_s, instance_retention_s.
CREATE FUNCTION genroc._log_settings() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_log_settings'
	LANGUAGE C STABLE PARALLEL SAFE;

/*
 * What the log keeps of an entry's detail (README "Logs and retention").
 * Semantics: the payload keys of a detail are input, output and payload,
 * at its top level (an instance's or a task's input and output, a task
 * result, an event payload); every other key (error, cause, counts,
 * names) is kept as it is.
 *   genroc.log_payloads off  → the payload keys are removed
 *   genroc.log_payload_max N → a payload whose JSON text is longer than N
 *                              bytes becomes {"truncated": true, "bytes":
 *                              <its length>, "head": <its first min(N, 256)
 *                              characters>}; 0 = no limit
 */
CREATE FUNCTION genroc._log_detail(p_detail jsonb) RETURNS jsonb
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	c_payload_keys constant text[] := ARRAY['input', 'output', 'payload'];
	v_settings jsonb;
	v_max int;
	v_key text;
	v_text text;
	v_out jsonb := p_detail;
BEGIN
	IF p_detail IS NULL OR jsonb_typeof(p_detail) <> 'object' OR NOT p_detail ?| c_payload_keys THEN
		RETURN p_detail;
	END IF;
	v_settings := genroc._log_settings();
	IF NOT (v_settings ->> 'payloads')::boolean THEN
		RETURN p_detail - c_payload_keys;
	END IF;
	v_max := (v_settings ->> 'payload_max')::int;
	-- the whole detail within the limit: so is every payload in it
	IF v_max = 0 OR octet_length(p_detail::text) <= v_max THEN
		RETURN p_detail;
	END IF;
	FOREACH v_key IN ARRAY c_payload_keys LOOP
		CONTINUE WHEN NOT p_detail ? v_key;
		v_text := (p_detail -> v_key)::text;
		IF octet_length(v_text) > v_max THEN
			v_out := jsonb_set(v_out, ARRAY[v_key], jsonb_build_object(
				'truncated', true, 'bytes', octet_length(v_text), 'head', left(v_text, least(v_max, 256))));
		END IF;
	END LOOP;
	RETURN v_out;
END;
$$;

-- Appends one entry to an instance's log.  Every log row is written here,
-- so the payload settings apply to all of them (genroc._log_detail).
-- PL/pgSQL, not SQL: its INSERT is planned once per session (a SQL
-- function's would be planned again on every call, several per step).
CREATE FUNCTION genroc._log(p_instance bigint, p_event text, p_state text, p_detail jsonb)
	RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	INSERT INTO genroc._log (instance_id, at, event, state, detail)
	VALUES (p_instance, genroc.now(), p_event, p_state,
			-- only a detail with a payload key (_log_detail's) needs its rules
			CASE WHEN p_detail ?| ARRAY['input', 'output', 'payload'] THEN genroc._log_detail(p_detail)
				 ELSE p_detail END);
END;
$$;

/*
 * Durability (DESIGN §4; README "Durability").  Every engine function that
 * writes calls genroc._flush_commit with the class of its work, and the
 * level in the setting genroc.durability decides whether this transaction's
 * commit is flushed before it is confirmed:
 *
 *   class            flushed at
 *   outside          essential, terminal, strict   (start, activity results,
 *                                                   cancel: work from outside)
 *   only_once_claim  essential, terminal, strict   (before the handler runs)
 *   terminal         terminal, strict              (an instance ended)
 *   progress         strict                        (anything else)
 *
 * It sets synchronous_commit for the transaction ('on' or 'off': the server
 * default is 'on', so a commit that need not wait is set 'off' explicitly)
 * and never turns a flush that an earlier statement of the same transaction
 * asked for back off.  WAL is sequential: a flushed commit makes every
 * earlier commit durable too, so the unflushed progress of an instance
 * becomes durable with the next flushed commit of any session.
 */
CREATE FUNCTION genroc._flush_commit(p_class text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_flush_commit'
	LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION genroc.durability() RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_durability_level'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION genroc.durability() IS
	'The durability level in force for this session (setting genroc.durability): none, essential, terminal or strict.';

/*
 * The context object $$ as the store knows it (the interpreter adds State).
 * Semantics:
 *   Execution.Id         the instance id as a string ("42")
 *   Execution.Name       the start option "name", else the id as a string
 *   Execution.Input      the instance input
 *   Execution.StartTime  created_at, ISO-8601 UTC with milliseconds
 *   StateMachine.Id      "<definition name>:<version>"
 *   StateMachine.Name    the definition name
 *   Task.Token           a fresh random token (gen_random_uuid) for this step;
 *                        it becomes the activity token if the step parks
 *   A Parallel branch or a Map item (scope set) is part of the execution
 *   it was fanned out of: its Execution is that of its nearest ancestor
 *   without a scope (the top instance, or the child a call started).
 */
CREATE FUNCTION genroc._context(p_instance genroc._instances, p_def genroc._definitions,
								p_token text) RETURNS jsonb
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_exec genroc._instances := p_instance;
BEGIN
	-- PL/pgSQL, not SQL: its plans are kept for the session, where a SQL
	-- function's would be made again on every step
	WHILE v_exec.scope IS NOT NULL AND v_exec.parent_id IS NOT NULL LOOP
		SELECT * INTO STRICT v_exec FROM genroc._instances WHERE id = v_exec.parent_id;
	END LOOP;
	RETURN jsonb_build_object(
		'Execution', jsonb_build_object(
			'Id', v_exec.id::text,
			'Input', v_exec.input,
			'Name', coalesce(v_exec.name, v_exec.id::text),
			'StartTime', genroc._iso(v_exec.created_at)),
		'StateMachine', jsonb_build_object(
			'Id', p_def.name || ':' || p_def.version,
			'Name', p_def.name),
		'Task', jsonb_build_object('Token', p_token));
END;
$$;

/*
 * Runs one interpreter step for a locked instance and records where it
 * stopped.  p_request holds the op and its fields (input / state,
 * state_input, result|error+cause, retry_counts); this adds now_ms and the
 * context.  Returns the new status.  The caller holds the row lock.
 *
 * Semantics (the outcome → the row):
 *   every step clears the lease, the deadlines, the wait and the activity
 *   task → handler:/genroc: resources: status 'ready', eligible_at = now +
 *          delay_ms (a retry back-off; claim skips the row until then, no tick
 *          needed); activity: resources: status 'waiting', wait_kind
 *          'activity', a new token, eligible_at = now + delay_ms (claim_activity
 *          skips it until then), timeout_at = eligible_at + TimeoutSeconds.
 *          Either way: retry_counts from the answer, attempt = their sum,
 *          interruptions = 0 (a new attempt).
 *   wait → status 'waiting', wait_kind 'timer', wait_until = until_ms
 *   parallel / map / call → genroc._fan_out (65_children.sql): status
 *          'waiting', wait_kind 'children', the children created here
 *   succeeded / failed → that status, output or error+cause, ended_at; a
 *          failed one keeps state and state_input of the state it failed in
 *   log: one 'entered' row per state entered, then one row for the outcome
 *   ('task_scheduled', 'wait_started', 'succeeded', 'failed')
 *   NOTIFY genroc with the queue name when a task is ready at once
 */
CREATE FUNCTION genroc._apply_step(p_instance bigint, p_request jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_inst genroc._instances;
	v_def genroc._definitions;
	v_token text := gen_random_uuid()::text;
	v_request jsonb;
	v_answer jsonb;
	v_out jsonb;
	v_entered jsonb;
	v_e jsonb;
	v_last_state text;
	v_delay bigint;
	v_eligible timestamptz;
	v_resource text;
	v_status text;
	v_timeout int;
	v_heartbeat int;
	v_counts jsonb;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	SELECT * INTO STRICT v_def FROM genroc._definitions WHERE id = v_inst.definition_id;

	v_request := p_request || jsonb_build_object(
		'now_ms', genroc._ms(v_now),
		'context', genroc._context(v_inst, v_def, v_token))
		|| CASE WHEN v_inst.scope IS NOT NULL
				THEN jsonb_build_object('scope', v_inst.scope) ELSE '{}'::jsonb END;
	v_answer := genroc._step(v_def.hash, v_def.definition, v_request);
	v_out := v_answer -> 'outcome';
	v_entered := coalesce(v_answer -> 'entered', '[]');

	FOR v_e IN SELECT e FROM jsonb_array_elements(v_entered) WITH ORDINALITY AS t(e, n) ORDER BY n LOOP
		PERFORM genroc._log(p_instance, 'entered', v_e ->> 'state', jsonb_build_object('type', v_e -> 'type'));
	END LOOP;
	v_last_state := coalesce(v_entered -> -1 ->> 'state', v_inst.state);

	CASE v_out ->> 'kind'
	WHEN 'task' THEN
		v_delay := coalesce((v_out ->> 'delay_ms')::bigint, 0);
		v_eligible := v_now + v_delay * interval '1 millisecond';
		v_resource := v_out ->> 'resource';
		v_timeout := (v_out ->> 'timeout_s')::int;
		v_heartbeat := (v_out ->> 'heartbeat_s')::int;
		v_counts := coalesce(v_out -> 'retry_counts', '[]');
		v_status := CASE WHEN v_resource LIKE 'activity:%' THEN 'waiting' ELSE 'ready' END;
		UPDATE genroc._instances SET
			status = v_status,
			state = v_out ->> 'state',
			state_input = v_out -> 'state_input',
			task_input = v_out -> 'task_input',
			resource = v_resource,
			eligible_at = v_eligible,
			lease_owner = NULL,
			lease_expires = NULL,
			retry_counts = v_counts,
			attempt = (SELECT coalesce(sum(c::int), 0) FROM jsonb_array_elements_text(v_counts) AS c),
			interruptions = 0,
			only_once = coalesce((v_out ->> 'only_once')::boolean, false),
			timeout_s = v_timeout,
			heartbeat_s = v_heartbeat,
			-- handler tasks: TimeoutSeconds counts from the claim (set there)
			timeout_at = CASE WHEN v_status = 'waiting' AND v_timeout IS NOT NULL
						 THEN v_eligible + v_timeout * interval '1 second' END,
			heartbeat_at = NULL,
			wait_kind = CASE WHEN v_status = 'waiting' THEN 'activity' END,
			wait_until = NULL,
			activity = CASE WHEN v_status = 'waiting' THEN substr(v_resource, 10) END,
			activity_token = CASE WHEN v_status = 'waiting' THEN v_token END,
			activity_owner = NULL,
			updated_at = v_now
		WHERE id = p_instance;
		PERFORM genroc._log(p_instance, 'task_scheduled', v_out ->> 'state',
			jsonb_build_object('resource', v_resource, 'input', v_out -> 'task_input',
							   'attempt', (SELECT attempt FROM genroc._instances WHERE id = p_instance),
							   'delay_ms', v_delay));
		IF v_status = 'ready' AND v_delay = 0 THEN
			PERFORM pg_notify('genroc', v_inst.queue);
		END IF;
	WHEN 'parallel', 'map', 'call' THEN
		v_status := genroc._fan_out(p_instance, v_out);
	WHEN 'event' THEN
		v_status := genroc._park_event(p_instance, v_out);
	WHEN 'wait' THEN
		v_status := 'waiting';
		UPDATE genroc._instances SET
			status = v_status,
			state = v_out ->> 'state',
			state_input = v_out -> 'state_input',
			task_input = NULL, resource = NULL,
			lease_owner = NULL, lease_expires = NULL,
			retry_counts = NULL, attempt = 0, interruptions = 0, only_once = false,
			timeout_s = NULL, timeout_at = NULL, heartbeat_s = NULL, heartbeat_at = NULL,
			wait_kind = 'timer',
			wait_until = genroc._from_ms((v_out ->> 'until_ms')::bigint),
			activity = NULL, activity_token = NULL, activity_owner = NULL,
			updated_at = v_now
		WHERE id = p_instance;
		PERFORM genroc._log(p_instance, 'wait_started', v_out ->> 'state',
			jsonb_build_object('until', genroc._iso(genroc._from_ms((v_out ->> 'until_ms')::bigint))));
	WHEN 'succeeded', 'failed' THEN
		v_status := v_out ->> 'kind';
		-- a failed instance keeps where it failed and that state's input
		-- (genroc.retry / resume run it again from there)
		v_last_state := coalesce(v_out ->> 'state', v_last_state);
		UPDATE genroc._instances SET
			status = v_status,
			state = v_last_state,
			state_input = CASE WHEN v_status = 'failed' THEN v_out -> 'state_input' END,
			task_input = NULL, resource = NULL,
			lease_owner = NULL, lease_expires = NULL,
			retry_counts = NULL, only_once = false,
			timeout_s = NULL, timeout_at = NULL, heartbeat_s = NULL, heartbeat_at = NULL,
			wait_kind = NULL, wait_until = NULL,
			activity = NULL, activity_token = NULL, activity_owner = NULL,
			output = CASE WHEN v_status = 'succeeded' THEN v_out -> 'output' END,
			error = CASE WHEN v_status = 'failed' THEN v_out ->> 'error' END,
			cause = CASE WHEN v_status = 'failed' THEN v_out ->> 'cause' END,
			updated_at = v_now,
			ended_at = v_now
		WHERE id = p_instance;
		PERFORM genroc._log(p_instance, v_status, v_last_state,
			CASE WHEN v_status = 'succeeded'
				 THEN jsonb_build_object('output', v_out -> 'output')
				 ELSE jsonb_build_object('error', v_out -> 'error', 'cause', v_out -> 'cause') END);
		IF v_inst.parent_id IS NOT NULL THEN
			PERFORM genroc._child_ended(p_instance);	-- the last one wakes the parent
		END IF;
		PERFORM genroc._flush_commit('terminal');
		PERFORM genroc._ended(p_instance);	-- its partition slot goes to the next
	ELSE
		RAISE EXCEPTION 'ASL interpreter answered an unknown outcome: %', v_out
			USING ERRCODE = 'XX000';
	END CASE;
	RETURN v_status;
END;
$$;

-- The request that continues a stopped task with its result or error.
CREATE FUNCTION genroc._task_request(p_instance genroc._instances, p_op text,
									 p_result jsonb, p_error text, p_cause text)
	RETURNS jsonb
	LANGUAGE sql STABLE
	RETURN jsonb_strip_nulls(jsonb_build_object(
		'op', p_op,
		'state', p_instance.state,
		'retry_counts', p_instance.retry_counts,
		'error', p_error,
		'cause', p_cause))
		|| jsonb_build_object('state_input', coalesce(p_instance.state_input, 'null'::jsonb))
		|| CASE WHEN p_op = 'task_succeeded'
				THEN jsonb_build_object('result', coalesce(p_result, 'null'::jsonb))
				ELSE '{}'::jsonb END;

-- Semantics: a task fails with an engine error (timeouts, interruptions)
-- through the interpreter, so Retry and Catch decide as for any error.
CREATE FUNCTION genroc._fail_task(p_instance bigint, p_error text, p_cause text) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'task_failed', v_inst.state,
		jsonb_build_object('error', p_error, 'cause', p_cause));
	RETURN genroc._apply_step(p_instance,
		genroc._task_request(v_inst, 'task_failed', NULL, p_error, p_cause));
END;
$$;

/*
 * A running task lost its worker: the lease lapsed (tick), the worker gave
 * it back (release, worker_stop) or registered again after a crash
 * (worker_register).  The caller holds the row lock.
 * Semantics:
 *   OnlyOnce task → task_failed only_once.interrupted (never handed out again)
 *   the 5th interruption of one attempt → task_failed genroc.Interrupted
 *   otherwise → status 'ready', eligible_at = now, interruptions + 1, the
 *   lease dropped (the epoch stays; the next claim bumps it)
 */
CREATE FUNCTION genroc._interrupt(p_instance bigint, p_reason text) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
	v_now timestamptz := genroc.now();
	c_max_interruptions constant int := 5;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'task_interrupted', v_inst.state,
		jsonb_build_object('reason', p_reason, 'worker', v_inst.lease_owner,
						   'epoch', v_inst.lease_epoch,
						   'interruptions', v_inst.interruptions + 1));
	IF v_inst.only_once THEN
		RETURN genroc._fail_task(p_instance, 'only_once.interrupted',
			format('the lease of OnlyOnce task "%s" was lost (%s); it is not run again',
				   v_inst.state, p_reason));
	END IF;
	IF v_inst.interruptions + 1 >= c_max_interruptions THEN
		-- counted on the row too, so the failed instance shows why
		UPDATE genroc._instances SET interruptions = interruptions + 1 WHERE id = p_instance;
		RETURN genroc._fail_task(p_instance, 'genroc.Interrupted',
			format('task "%s" was interrupted %s times in one attempt',
				   v_inst.state, c_max_interruptions));
	END IF;
	UPDATE genroc._instances SET
		status = 'ready',
		eligible_at = v_now,
		interruptions = interruptions + 1,
		lease_owner = NULL,
		lease_expires = NULL,
		timeout_at = NULL,
		updated_at = v_now
	WHERE id = p_instance;
	PERFORM pg_notify('genroc', v_inst.queue);
	RETURN 'ready';
END;
$$;
/*
 * Definitions: define and list.
 */

CREATE FUNCTION genroc.define(p_name text, p_definition jsonb)
	RETURNS TABLE (name text, version int, is_new boolean)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	v_hash text;
	v_version int;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_definition IS NULL THEN
		RAISE EXCEPTION 'p_definition must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_name = '' THEN
		RAISE EXCEPTION 'p_name must not be empty' USING ERRCODE = '22023';
	END IF;
	v_hash := encode(sha256(convert_to(p_definition::text, 'UTF8')), 'hex');

	-- Semantics: versions of one name are numbered 1, 2, ... in the order
	-- their content first appeared; the lock keeps two concurrent defines of
	-- one name from taking the same number.
	PERFORM pg_advisory_xact_lock(hashtextextended('genroc.define:' || p_name, 0));
	SELECT d.version INTO v_version
	FROM genroc._definitions d WHERE d.name = p_name AND d.hash = v_hash;
	IF FOUND THEN
		RETURN QUERY SELECT p_name, v_version, false;
		RETURN;
	END IF;

	PERFORM genroc._validate(p_definition, v_hash);
	SELECT coalesce(max(d.version), 0) + 1 INTO v_version
	FROM genroc._definitions d WHERE d.name = p_name;
	INSERT INTO genroc._definitions (name, version, definition, hash, created_at)
	VALUES (p_name, v_version, p_definition, v_hash, genroc.now());
	RETURN QUERY SELECT p_name, v_version, true;
END;
$$;
COMMENT ON FUNCTION genroc.define(text, jsonb) IS
	'Validates an ASL definition and stores it as a new version of p_name unless a stored version has the same content.';

CREATE FUNCTION genroc.list_definitions()
	RETURNS TABLE (name text, version int, created_at timestamptz)
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT DISTINCT ON (d.name) d.name, d.version, d.created_at
		FROM genroc._definitions d
		ORDER BY d.name, d.version DESC;
	END;
COMMENT ON FUNCTION genroc.list_definitions() IS
	'The newest version of every definition, by name.';

-- The stored text of one definition (the newest version when p_version is NULL).
CREATE FUNCTION genroc.get_definition(p_name text, p_version int DEFAULT NULL)
	RETURNS jsonb
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_result jsonb;
BEGIN
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	SELECT jsonb_build_object('name', d.name, 'version', d.version,
							  'definition', d.definition,
							  'created_at', genroc._iso(d.created_at))
	INTO v_result
	FROM genroc._definitions d
	WHERE d.name = p_name AND (p_version IS NULL OR d.version = p_version)
	ORDER BY d.version DESC LIMIT 1;
	IF v_result IS NULL THEN
		RAISE EXCEPTION 'definition "%"% not found', p_name,
			CASE WHEN p_version IS NULL THEN '' ELSE format(' version %s', p_version) END
			USING ERRCODE = 'RC002';
	END IF;
	RETURN v_result;
END;
$$;
COMMENT ON FUNCTION genroc.get_definition(text, int) IS
	'One stored definition as {name, version, definition, created_at}; raises RC002 when there is none.';
/*
 * Instances: start, cancel, and reading them.
 */

-- Parses a timestamp option; 22007 naming the option when it does not parse.
CREATE FUNCTION genroc._parse_time(p_value jsonb, p_option text) RETURNS timestamptz
	LANGUAGE plpgsql STABLE
AS $$
BEGIN
	IF jsonb_typeof(p_value) <> 'string' THEN
		RAISE EXCEPTION 'option "%" must be a timestamp string, not %', p_option, p_value
			USING ERRCODE = '22007';
	END IF;
	BEGIN
		RETURN (p_value #>> '{}')::timestamptz;
	EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow THEN
		RAISE EXCEPTION 'invalid timestamp for option "%": %', p_option, p_value
			USING ERRCODE = '22007';
	END;
END;
$$;

-- An integer option (a JSON number without a fraction, in int range).
CREATE FUNCTION genroc._int_option(p_value jsonb, p_option text) RETURNS int
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_n numeric;
BEGIN
	IF jsonb_typeof(p_value) = 'number' THEN
		v_n := (p_value::text)::numeric;
		IF v_n = trunc(v_n) AND v_n BETWEEN -2147483648 AND 2147483647 THEN
			RETURN v_n::int;
		END IF;
	END IF;
	RAISE EXCEPTION 'option "%" must be an integer, not %', p_option, p_value
		USING ERRCODE = '22023';
END;
$$;

-- A string option.
CREATE FUNCTION genroc._text_option(p_value jsonb, p_option text) RETURNS text
	LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
	IF jsonb_typeof(p_value) <> 'string' OR p_value #>> '{}' = '' THEN
		RAISE EXCEPTION 'option "%" must be a non-empty string, not %', p_option, p_value
			USING ERRCODE = '22023';
	END IF;
	RETURN p_value #>> '{}';
END;
$$;

-- Semantics: labels (a start option, a list filter) are a JSON object whose
-- values are strings; anything else is 22023 naming the option.
CREATE FUNCTION genroc._labels_option(p_value jsonb, p_option text) RETURNS jsonb
	LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
	IF jsonb_typeof(p_value) <> 'object' OR EXISTS (
		SELECT 1 FROM jsonb_each(p_value) AS l WHERE jsonb_typeof(l.value) <> 'string') THEN
		RAISE EXCEPTION 'option "%" must be an object of strings, not %', p_option, p_value
			USING ERRCODE = '22023';
	END IF;
	RETURN p_value;
END;
$$;

/*
 * Semantics of start:
 *   the latest version of the definition, or option "version" (RC002 if none)
 *   idempotency_key: an instance with that key is returned as it is
 *     (is_new = false), whatever the definition and input; the unique index
 *     settles two concurrent starts
 *   run_at later than now: status 'waiting' (wait_kind 'run_at'); tick runs
 *     the first step when it is due.  Otherwise the first step runs here.
 *   the queue is decided here (genroc._route, 55_queues.sql) and kept; with
 *     a partition_key the first step waits for a slot (genroc._admit)
 */
CREATE FUNCTION genroc.start(p_definition text, p_input jsonb DEFAULT '{}',
							 p_options jsonb DEFAULT '{}')
	RETURNS TABLE (instance_id bigint, is_new boolean, status text)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	v_options jsonb := coalesce(p_options, '{}');
	v_now timestamptz := genroc.now();
	v_def genroc._definitions;
	v_version int;
	v_priority int := 0;
	v_run_at timestamptz;
	v_labels jsonb := '{}';
	v_key text;
	v_partition text;
	v_name text;
	v_id bigint;
	v_status text;
BEGIN
	IF p_definition IS NULL THEN
		RAISE EXCEPTION 'p_definition must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_input IS NULL THEN
		RAISE EXCEPTION 'p_input must not be null (pass ''null''::jsonb for a JSON null)'
			USING ERRCODE = '22004';
	END IF;
	PERFORM genroc._check_options(v_options,
		ARRAY['idempotency_key', 'labels', 'name', 'partition_key', 'priority', 'run_at', 'version'],
		'start options');
	IF v_options ? 'version' THEN
		v_version := genroc._int_option(v_options -> 'version', 'version');
	END IF;
	IF v_options ? 'priority' THEN
		v_priority := genroc._int_option(v_options -> 'priority', 'priority');
	END IF;
	IF v_options ? 'run_at' THEN
		v_run_at := genroc._parse_time(v_options -> 'run_at', 'run_at');
	END IF;
	IF v_options ? 'labels' THEN
		v_labels := genroc._labels_option(v_options -> 'labels', 'labels');
		-- the region label picks <queue>.<region> (55_queues.sql)
		IF v_labels ? 'region' AND (v_labels ->> 'region' = '' OR strpos(v_labels ->> 'region', '.') > 0) THEN
			RAISE EXCEPTION 'label "region" must be a non-empty name without ".", not "%"', v_labels ->> 'region'
				USING ERRCODE = '22023';
		END IF;
	END IF;
	IF v_options ? 'idempotency_key' THEN
		v_key := genroc._text_option(v_options -> 'idempotency_key', 'idempotency_key');
	END IF;
	IF v_options ? 'partition_key' THEN
		v_partition := genroc._text_option(v_options -> 'partition_key', 'partition_key');
	END IF;
	IF v_options ? 'name' THEN
		v_name := genroc._text_option(v_options -> 'name', 'name');
	END IF;

	SELECT * INTO v_def FROM genroc._definitions d
	WHERE d.name = p_definition AND (v_version IS NULL OR d.version = v_version)
	ORDER BY d.version DESC LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'definition "%"% not found', p_definition,
			CASE WHEN v_version IS NULL THEN '' ELSE format(' version %s', v_version) END
			USING ERRCODE = 'RC002';
	END IF;

	IF v_key IS NOT NULL THEN
		RETURN QUERY SELECT i.id, false, i.status FROM genroc._instances i
			WHERE i.idempotency_key = v_key;
		IF FOUND THEN
			RETURN;
		END IF;
	END IF;

	INSERT INTO genroc._instances AS i (definition_id, status, eligible_at, input, idempotency_key,
		labels, partition_key, name, priority, wait_kind, wait_until, created_at, updated_at, queue)
	VALUES (v_def.id,
			CASE WHEN v_run_at > v_now THEN 'waiting' ELSE 'ready' END,
			greatest(v_now, coalesce(v_run_at, v_now)), p_input, v_key,
			v_labels, v_partition, v_name, v_priority,
			CASE WHEN v_run_at > v_now THEN 'run_at' END,
			CASE WHEN v_run_at > v_now THEN v_run_at END,
			v_now, v_now, genroc._route(v_def, v_labels))
	ON CONFLICT (idempotency_key) DO NOTHING
	RETURNING i.id INTO v_id;
	IF v_id IS NULL THEN
		-- a concurrent start with the same key committed first
		RETURN QUERY SELECT i.id, false, i.status FROM genroc._instances i
			WHERE i.idempotency_key = v_key;
		RETURN;
	END IF;

	PERFORM genroc._log(v_id, 'started', NULL,
		jsonb_build_object('definition', v_def.name, 'version', v_def.version, 'input', p_input)
		|| CASE WHEN v_run_at > v_now THEN jsonb_build_object('run_at', genroc._iso(v_run_at))
				ELSE '{}'::jsonb END);
	IF v_run_at > v_now THEN
		v_status := 'waiting';
	ELSE
		v_status := genroc._admit(v_id);
	END IF;
	PERFORM genroc._flush_commit('outside');
	RETURN QUERY SELECT v_id, true, v_status;
END;
$$;
COMMENT ON FUNCTION genroc.start(text, jsonb, jsonb) IS
	'Starts an instance of a definition and runs its inline states; options: version, idempotency_key, priority, run_at, labels, partition_key, name.';

-- Locks an instance row for a change; RC003 when there is none.
CREATE FUNCTION genroc._lock_instance(p_instance bigint) RETURNS genroc._instances
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	IF p_instance IS NULL THEN
		RAISE EXCEPTION 'p_instance must not be null' USING ERRCODE = '22004';
	END IF;
	SELECT * INTO v_inst FROM genroc._instances WHERE id = p_instance FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'instance % not found', p_instance USING ERRCODE = 'RC003';
	END IF;
	RETURN v_inst;
END;
$$;

-- Semantics: cancel drops the lease, timer and activity token at once (a
-- late complete gets RC004, a late activity result RC007); the instance
-- ends as 'cancelled' with error genroc.Cancelled.  An ended one: RC008.
-- Its live children are cancelled too (recursively, 65_children.sql); a
-- cancelled child counts as a failed one for its parent's fan-out.
--
-- Lock order: a child that ends locks itself, then its parent (to wake
-- it); cancel locks the live descendants deepest first and the instance
-- last, the same order, so it waits for such a child instead of
-- deadlocking with it.  Other orders remain possible (a fan-out that fails
-- locks its parent, then cancels the siblings; a child started while the
-- tree was being locked): a deadlock is then retried here, up to 5 times.
CREATE FUNCTION genroc.cancel(p_instance bigint) RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c_tries constant int := 5;
BEGIN
	IF p_instance IS NULL THEN
		RAISE EXCEPTION 'p_instance must not be null' USING ERRCODE = '22004';
	END IF;
	FOR v_try IN 1 .. c_tries LOOP
		BEGIN
			RETURN genroc._cancel(p_instance);
		EXCEPTION WHEN deadlock_detected THEN
			IF v_try = c_tries THEN
				RAISE;
			END IF;
		END;
	END LOOP;
END;
$$;
COMMENT ON FUNCTION genroc.cancel(bigint) IS
	'Ends a live instance as cancelled (its lease, timer or activity is dropped); RC008 when it has already ended.';

CREATE FUNCTION genroc._cancel(p_instance bigint) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
	v_id bigint;
BEGIN
	FOR v_id IN WITH RECURSIVE tree (id, depth) AS (
					SELECT i.id, 1 FROM genroc._instances i
					WHERE i.parent_id = p_instance AND i.status NOT IN ('succeeded', 'failed', 'cancelled')
					UNION ALL
					SELECT i.id, t.depth + 1 FROM genroc._instances i JOIN tree t ON i.parent_id = t.id
					WHERE i.status NOT IN ('succeeded', 'failed', 'cancelled'))
				SELECT t.id FROM tree t ORDER BY t.depth DESC, t.id LOOP
		PERFORM 1 FROM genroc._instances i WHERE i.id = v_id FOR UPDATE;
	END LOOP;
	v_inst := genroc._lock_instance(p_instance);
	IF v_inst.status IN ('succeeded', 'failed', 'cancelled') THEN
		RAISE EXCEPTION 'instance % has already ended (%)', p_instance, v_inst.status
			USING ERRCODE = 'RC008';
	END IF;
	PERFORM genroc._cancel_tree(p_instance, 'cancelled by request', 'the parent was cancelled');
	PERFORM genroc._ended(p_instance);	-- its partition slot goes to the next
	IF v_inst.parent_id IS NOT NULL THEN
		PERFORM genroc._child_ended(p_instance);	-- counts as a failed child
	END IF;
	PERFORM genroc._flush_commit('outside');
	RETURN 'cancelled';
END;
$$;

/*
 * Semantics of retry and resume, an operator's second chance for a failed
 * instance (its definition version stays the one it started with):
 *   retry(id)          enters the state the instance failed in again, with
 *                      the input that state had; its Retry counts start
 *                      over, a Parallel or Map starts a new set of children
 *   resume(id, output) goes on after that state as if it had succeeded with
 *                      `output` (ResultSelector, ResultPath, OutputPath and
 *                      Next apply); that state must be a Task (22023
 *                      otherwise: retry it instead)
 * Both take a failed top-level instance: RC009 when it is not failed, or is
 * a child (the message names its top instance).  Error, cause and ended_at
 * are cleared, the log gets 'retried' / 'resumed', and the step runs here
 * or, with a partition key, after the instance got a slot (_admit).
 * Returns the new status.
 */
-- retry (p_output NULL) or resume (p_output the task's result).
CREATE FUNCTION genroc._run_again(p_instance bigint, p_output jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances := genroc._lock_instance(p_instance);
	v_type text;
	v_request jsonb;
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF v_inst.parent_id IS NOT NULL THEN
		RAISE EXCEPTION 'instance % is part of instance %: retry or resume that one', p_instance, v_inst.root_id
			USING ERRCODE = 'RC009';
	END IF;
	IF v_inst.status <> 'failed' THEN
		RAISE EXCEPTION 'instance % is %, not failed: only a failed instance can be retried or resumed',
			p_instance, v_inst.status USING ERRCODE = 'RC009';
	END IF;
	SELECT d.definition -> 'States' -> v_inst.state ->> 'Type' INTO v_type
	FROM genroc._definitions d WHERE d.id = v_inst.definition_id;
	IF p_output IS NULL THEN
		v_request := jsonb_build_object('op', 'enter', 'state', v_inst.state,
										'state_input', coalesce(v_inst.state_input, 'null'::jsonb));
	ELSIF v_type IS DISTINCT FROM 'Task' THEN
		RAISE EXCEPTION 'instance % failed in state "%", a % state: resume goes on after a Task only',
			p_instance, v_inst.state, v_type
			USING ERRCODE = '22023', HINT = 'genroc.retry runs that state again.';
	ELSE
		v_request := jsonb_build_object('op', 'task_succeeded', 'state', v_inst.state,
										'state_input', coalesce(v_inst.state_input, 'null'::jsonb),
										'result', p_output);
	END IF;
	UPDATE genroc._instances SET
		status = 'ready', error = NULL, cause = NULL, output = NULL, ended_at = NULL,
		updated_at = genroc.now()
	WHERE id = p_instance;
	PERFORM genroc._log(p_instance, CASE WHEN p_output IS NULL THEN 'retried' ELSE 'resumed' END,
		v_inst.state, jsonb_strip_nulls(jsonb_build_object(
			'error', v_inst.error, 'output', p_output)));
	RETURN genroc._admit(p_instance, v_request);
END;
$$;

CREATE FUNCTION genroc.retry(p_instance bigint) RETURNS text
	LANGUAGE sql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	RETURN genroc._run_again(p_instance, NULL::jsonb);
COMMENT ON FUNCTION genroc.retry(bigint) IS
	'Runs a failed top-level instance again from the state it failed in (RC009 when it is not failed).';

CREATE FUNCTION genroc.resume(p_instance bigint, p_output jsonb DEFAULT 'null') RETURNS text
	LANGUAGE sql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	RETURN genroc._run_again(p_instance, coalesce(p_output, 'null'::jsonb));
COMMENT ON FUNCTION genroc.resume(bigint, jsonb) IS
	'Continues a failed top-level instance after its failed Task as if it had returned p_output (RC009 when it is not failed).';

-- An instance as the API shows it (timestamps ISO-8601 UTC).
CREATE FUNCTION genroc._instance_json(p_instance genroc._instances) RETURNS jsonb
	LANGUAGE sql STABLE
	BEGIN ATOMIC
		SELECT jsonb_build_object(
			'id', p_instance.id,
			'definition', d.name,
			'version', d.version,
			'status', p_instance.status,
			'state', p_instance.state,
			'resource', p_instance.resource,
			'queue', p_instance.queue,
			'priority', p_instance.priority,
			'input', p_instance.input,
			'task_input', p_instance.task_input,
			'output', p_instance.output,
			'error', p_instance.error,
			'cause', p_instance.cause,
			'attempt', p_instance.attempt,
			'interruptions', p_instance.interruptions,
			'lease_owner', p_instance.lease_owner,
			'lease_epoch', p_instance.lease_epoch,
			'lease_expires', genroc._iso(p_instance.lease_expires),
			'eligible_at', genroc._iso(p_instance.eligible_at),
			'wait_kind', p_instance.wait_kind,
			'wait_until', genroc._iso(p_instance.wait_until),
			'activity', p_instance.activity,
			'idempotency_key', p_instance.idempotency_key,
			'labels', p_instance.labels,
			'partition_key', p_instance.partition_key,
			'name', p_instance.name,
			'created_at', genroc._iso(p_instance.created_at),
			'updated_at', genroc._iso(p_instance.updated_at),
			'ended_at', genroc._iso(p_instance.ended_at),
			'parent_id', p_instance.parent_id,
			'root_id', p_instance.root_id,
			'child_index', p_instance.child_index,
			'scope', p_instance.scope)
		FROM genroc._definitions d
		WHERE d.id = p_instance.definition_id;
	END;

CREATE FUNCTION genroc.get_instance(p_instance bigint) RETURNS jsonb
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	IF p_instance IS NULL THEN
		RAISE EXCEPTION 'p_instance must not be null' USING ERRCODE = '22004';
	END IF;
	SELECT * INTO v_inst FROM genroc._instances WHERE id = p_instance;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'instance % not found', p_instance USING ERRCODE = 'RC003';
	END IF;
	RETURN genroc._instance_json(v_inst);
END;
$$;
COMMENT ON FUNCTION genroc.get_instance(bigint) IS
	'One instance as JSON (status, state, input, output, error, lease, timestamps); RC003 when there is none.';

-- Semantics: filter keys status, definition, label ({"k":"v"}: every pair
-- must be among the instance's labels), limit (default 100, 1..10000);
-- newest first (id descending).
CREATE FUNCTION genroc.list_instances(p_filter jsonb DEFAULT '{}') RETURNS SETOF jsonb
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_filter jsonb := coalesce(p_filter, '{}');
	v_status text;
	v_definition text;
	v_label jsonb;
	v_root bigint;
	v_limit int := 100;
BEGIN
	PERFORM genroc._check_options(v_filter, ARRAY['definition', 'label', 'limit', 'root', 'status'],
								  'list_instances filter');
	IF v_filter ? 'status' THEN
		v_status := genroc._text_option(v_filter -> 'status', 'status');
		IF v_status NOT IN ('queued', 'ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled') THEN
			RAISE EXCEPTION 'option "status" must be one of queued, ready, running, waiting, succeeded, failed, cancelled, not "%"', v_status
				USING ERRCODE = '22023';
		END IF;
	END IF;
	IF v_filter ? 'definition' THEN
		v_definition := genroc._text_option(v_filter -> 'definition', 'definition');
	END IF;
	IF v_filter ? 'label' THEN
		v_label := genroc._labels_option(v_filter -> 'label', 'label');
	END IF;
	IF v_filter ? 'root' THEN
		IF jsonb_typeof(v_filter -> 'root') <> 'number' OR (v_filter ->> 'root') !~ '^[0-9]+$' THEN
			RAISE EXCEPTION 'option "root" must be an instance id, not %', v_filter -> 'root'
				USING ERRCODE = '22023';
		END IF;
		v_root := (v_filter ->> 'root')::bigint;
	END IF;
	IF v_filter ? 'limit' THEN
		v_limit := genroc._int_option(v_filter -> 'limit', 'limit');
		IF v_limit NOT BETWEEN 1 AND 10000 THEN
			RAISE EXCEPTION 'option "limit" must be between 1 and 10000, not %', v_limit
				USING ERRCODE = '22023';
		END IF;
	END IF;
	RETURN QUERY
		SELECT genroc._instance_json(i)
		FROM genroc._instances i
		JOIN genroc._definitions d ON d.id = i.definition_id
		WHERE (v_status IS NULL OR i.status = v_status)
		  AND (v_definition IS NULL OR d.name = v_definition)
		  AND (v_label IS NULL OR i.labels @> v_label)
		  AND (v_root IS NULL OR i.root_id = v_root)
		ORDER BY i.id DESC
		LIMIT v_limit;
END;
$$;
COMMENT ON FUNCTION genroc.list_instances(jsonb) IS
	'Instances as JSON, newest first; filter keys status, definition, label ({"k":"v"}), limit (default 100).';

CREATE FUNCTION genroc.history(p_instance bigint)
	RETURNS TABLE (seq bigint, at timestamptz, event text, state text, detail jsonb)
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF p_instance IS NULL THEN
		RAISE EXCEPTION 'p_instance must not be null' USING ERRCODE = '22004';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM genroc._instances i WHERE i.id = p_instance) THEN
		RAISE EXCEPTION 'instance % not found', p_instance USING ERRCODE = 'RC003';
	END IF;
	RETURN QUERY SELECT l.seq, l.at, l.event, l.state, l.detail
		FROM genroc._log l WHERE l.instance_id = p_instance ORDER BY l.seq;
END;
$$;
COMMENT ON FUNCTION genroc.history(bigint) IS
	'The log of one instance, oldest first: states entered, tasks scheduled, claimed, succeeded, failed, interrupted, waits, the end.';
/*
 * Workers and leases: the registry, claim, renew, release, complete, fail.
 */

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

/*
 * Semantics of worker_register:
 *   options host (default ''), lease_duration (default 10s), stale_after
 *   (default 30s), queues (array of strings, default ["default"]),
 *   concurrency (positive int, default none = no limit)
 *   an existing row that is not stopped and whose heartbeat is newer than
 *   its own stale_after (heartbeat_at > now - stale_after) is a live holder:
 *   RC005 naming its host, nothing changes
 *   otherwise the row is created or replaced (started_at = heartbeat_at =
 *   now, stopped_at cleared) and every instance still leased to that id is
 *   taken back at once through the lapse path (genroc._interrupt)
 */
CREATE FUNCTION genroc.worker_register(p_worker text, p_options jsonb DEFAULT '{}')
	RETURNS jsonb
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_options jsonb := coalesce(p_options, '{}');
	v_now timestamptz := genroc.now();
	v_host text := '';
	v_lease interval := interval '10 seconds';
	v_stale interval := interval '30 seconds';
	v_queues text[] := ARRAY['default'];
	v_concurrency int;
	v_old genroc._workers;
	v_id bigint;
	v_reclaimed int := 0;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_worker IS NULL THEN
		RAISE EXCEPTION 'p_worker must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_worker = '' THEN
		RAISE EXCEPTION 'p_worker must not be empty' USING ERRCODE = '22023';
	END IF;
	PERFORM genroc._check_options(v_options,
		ARRAY['concurrency', 'host', 'lease_duration', 'queues', 'stale_after'],
		'worker options');
	IF v_options ? 'host' THEN
		v_host := genroc._text_option(v_options -> 'host', 'host');
	END IF;
	IF v_options ? 'lease_duration' THEN
		v_lease := genroc._duration(v_options -> 'lease_duration', 'lease_duration');
	END IF;
	IF v_options ? 'stale_after' THEN
		v_stale := genroc._duration(v_options -> 'stale_after', 'stale_after');
	END IF;
	IF v_options ? 'queues' THEN
		IF jsonb_typeof(v_options -> 'queues') <> 'array'
		   OR jsonb_array_length(v_options -> 'queues') = 0
		   OR EXISTS (SELECT 1 FROM jsonb_array_elements(v_options -> 'queues') AS q
					  WHERE jsonb_typeof(q) <> 'string' OR q #>> '{}' = '') THEN
			RAISE EXCEPTION 'option "queues" must be a non-empty array of non-empty strings, not %',
				v_options -> 'queues' USING ERRCODE = '22023';
		END IF;
		v_queues := ARRAY(SELECT jsonb_array_elements_text(v_options -> 'queues'));
	END IF;
	IF v_options ? 'concurrency' THEN
		v_concurrency := genroc._int_option(v_options -> 'concurrency', 'concurrency');
		IF v_concurrency < 1 THEN
			RAISE EXCEPTION 'option "concurrency" must be at least 1, not %', v_concurrency
				USING ERRCODE = '22023';
		END IF;
	END IF;

	-- Two registrations of one new id: the second waits for the first here.
	PERFORM pg_advisory_xact_lock(hashtextextended('genroc.worker:' || p_worker, 0));
	SELECT * INTO v_old FROM genroc._workers WHERE id = p_worker FOR UPDATE;
	IF FOUND AND v_old.stopped_at IS NULL AND v_old.heartbeat_at > v_now - v_old.stale_after THEN
		RAISE EXCEPTION 'worker id "%" is in use by a live worker on host "%"', p_worker, v_old.host
			USING ERRCODE = 'RC005',
				  DETAIL = format('Its last heartbeat was at %s; it counts as alive for %s after that.',
								  genroc._iso(v_old.heartbeat_at), v_old.stale_after),
				  HINT = 'Use another worker id, stop that worker, or wait until it is stale.';
	END IF;
	INSERT INTO genroc._workers AS w (id, host, lease_duration, stale_after, queues, concurrency,
									  durability, started_at, heartbeat_at, stopped_at)
	VALUES (p_worker, v_host, v_lease, v_stale, v_queues, v_concurrency, genroc.durability(),
			v_now, v_now, NULL)
	ON CONFLICT (id) DO UPDATE SET
		host = excluded.host, lease_duration = excluded.lease_duration,
		stale_after = excluded.stale_after, queues = excluded.queues,
		concurrency = excluded.concurrency, durability = excluded.durability,
		started_at = excluded.started_at,
		heartbeat_at = excluded.heartbeat_at, stopped_at = NULL;

	FOR v_id IN SELECT i.id FROM genroc._instances i
				WHERE i.status = 'running' AND i.lease_owner = p_worker
				ORDER BY i.id FOR UPDATE LOOP
		PERFORM genroc._interrupt(v_id, 'worker registered again');
		v_reclaimed := v_reclaimed + 1;
	END LOOP;
	RETURN jsonb_build_object('worker', p_worker, 'reclaimed', v_reclaimed);
END;
$$;
COMMENT ON FUNCTION genroc.worker_register(text, jsonb) IS
	'Registers a worker id (options host, lease_duration, stale_after, queues, concurrency); RC005 when a live worker holds it; takes back the instances still leased to that id.';

CREATE FUNCTION genroc.worker_heartbeat(p_worker text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('progress');
	PERFORM genroc._live_worker(p_worker);
	UPDATE genroc._workers SET heartbeat_at = genroc.now() WHERE id = p_worker;
END;
$$;
COMMENT ON FUNCTION genroc.worker_heartbeat(text) IS
	'Records that the worker is alive; RC006 when it is not registered or stopped.';

-- Gives running instances of a worker back (release, worker_stop).
CREATE FUNCTION genroc._release(p_worker text, p_instances bigint[], p_reason text) RETURNS int
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_id bigint;
	v_n int := 0;
BEGIN
	FOR v_id IN SELECT i.id FROM genroc._instances i
				WHERE i.status = 'running' AND i.lease_owner = p_worker
				  AND (p_instances IS NULL OR i.id = ANY (p_instances))
				ORDER BY i.id FOR UPDATE LOOP
		PERFORM genroc._interrupt(v_id, p_reason);
		v_n := v_n + 1;
	END LOOP;
	RETURN v_n;
END;
$$;

-- Semantics: the worker's leases are released (as genroc.release) and the
-- row is marked stopped, so its id can be registered again at once.
CREATE FUNCTION genroc.worker_stop(p_worker text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('progress');
	PERFORM genroc._live_worker(p_worker);
	PERFORM genroc._release(p_worker, NULL, 'worker stopped');
	UPDATE genroc._workers SET stopped_at = genroc.now() WHERE id = p_worker;
END;
$$;
COMMENT ON FUNCTION genroc.worker_stop(text) IS
	'Releases the worker''s leases (the tasks run again elsewhere) and marks it stopped.';

CREATE FUNCTION genroc.list_workers()
	RETURNS TABLE (worker text, host text, queues text[], concurrency int,
				   lease_duration_ms bigint, stale_after_ms bigint,
				   started_at timestamptz, heartbeat_at timestamptz, stopped_at timestamptz,
				   live boolean, running bigint, durability text)
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT w.id, w.host, w.queues, w.concurrency,
			   (extract(epoch FROM w.lease_duration) * 1000)::bigint,
			   (extract(epoch FROM w.stale_after) * 1000)::bigint,
			   w.started_at, w.heartbeat_at, w.stopped_at,
			   w.stopped_at IS NULL AND w.heartbeat_at > genroc.now() - w.stale_after,
			   (SELECT count(*) FROM genroc._instances i
				WHERE i.status = 'running' AND i.lease_owner = w.id),
			   w.durability
		FROM genroc._workers w
		ORDER BY w.id;
	END;
COMMENT ON FUNCTION genroc.list_workers() IS
	'Every registered worker: settings, timestamps, whether it is live, and how many tasks it holds.';

/*
 * Semantics of claim:
 *   the worker must be registered and not stopped (RC006); a claim counts as
 *   its heartbeat
 *   candidates: status 'ready', queue in p_queues, eligible_at <= now, in
 *   the order priority asc, eligible_at asc, id asc; FOR UPDATE SKIP LOCKED
 *   (a row another transaction is claiming is skipped, not waited for)
 *   at most p_n, and with a worker concurrency c at most c minus the tasks
 *   it already holds
 *   queue limits (genroc._claim_room): a queue at its global_concurrency or
 *   rate_limit is skipped; otherwise the batch is at most its room; with a
 *   partition_rate_limit, a partition whose window is full is skipped and
 *   the batch takes at most its room of each (genroc._claim_partitioned)
 *   each: status 'running', lease_owner = worker, lease_epoch + 1,
 *   lease_expires = now + the worker's lease_duration, timeout_at = now +
 *   TimeoutSeconds (a handler task's timeout counts from its claim)
 *   attempt in the result: the retry number (0 for the first run)
 */
CREATE FUNCTION genroc.claim(p_worker text, p_queues text[], p_n int DEFAULT 1)
	RETURNS TABLE (instance_id bigint, epoch bigint, state text, resource text, input jsonb,
				   only_once boolean, timeout_s int, attempt int, lease_expires timestamptz)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	v_worker genroc._workers;
	v_now timestamptz := genroc.now();
	v_n int;
	v_row record;
	v_only_once boolean := false;
	v_room record;
	v_ids bigint[];
	v_claimed refcursor;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_queues IS NULL THEN
		RAISE EXCEPTION 'p_queues must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_n IS NULL THEN
		RAISE EXCEPTION 'p_n must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_n < 1 THEN
		RAISE EXCEPTION 'p_n must be at least 1, not %', p_n USING ERRCODE = '22023';
	END IF;
	v_worker := genroc._live_worker(p_worker);
	UPDATE genroc._workers SET heartbeat_at = v_now WHERE id = p_worker;
	v_n := p_n;
	IF v_worker.concurrency IS NOT NULL THEN
		v_n := least(v_n, v_worker.concurrency - (
			SELECT count(*)::int FROM genroc._instances i
			WHERE i.status = 'running' AND i.lease_owner = p_worker));
	END IF;
	IF v_n <= 0 THEN
		RETURN;
	END IF;
	-- queue limits (global_concurrency, rate_limit): full queues are left
	-- out and the batch is bounded by the smallest room (55_queues.sql)
	v_room := genroc._claim_room(p_queues, v_now);
	v_n := least(v_n, v_room.room);
	IF cardinality(v_room.partition_rated) = 0 THEN
		-- one statement chooses, locks and leases the tasks.  Each queue is
		-- read through its claim index, in claim order, and the queues'
		-- heads are merged: "queue = ANY (...)" over all of them would sort
		-- every ready row of the queues on each claim (a backlog of 20,000
		-- made a claim 13 ms instead of 0.1).  A queue may lock a few rows
		-- more than the merge keeps; they stay ready and are free again at
		-- the commit.
		OPEN v_claimed FOR
			WITH candidates AS (
				SELECT h.id FROM unnest(v_room.open_queues) AS q (name)
				CROSS JOIN LATERAL (
					SELECT i.id, i.priority, i.eligible_at FROM genroc._instances i
					WHERE i.status = 'ready' AND i.queue = q.name AND i.eligible_at <= v_now
					ORDER BY i.priority, i.eligible_at, i.id
					LIMIT v_n
					FOR UPDATE SKIP LOCKED) h
				ORDER BY h.priority, h.eligible_at, h.id
				LIMIT v_n),
			claimed AS (
			UPDATE genroc._instances i SET
				status = 'running',
				lease_owner = p_worker,
				lease_epoch = i.lease_epoch + 1,
				lease_expires = v_now + v_worker.lease_duration,
				timeout_at = CASE WHEN i.timeout_s IS NOT NULL
							 THEN v_now + i.timeout_s * interval '1 second' END,
				updated_at = v_now
			FROM candidates c
			WHERE i.id = c.id
			RETURNING i.id, i.lease_epoch, i.state, i.resource, i.task_input, i.only_once,
					  i.timeout_s, i.attempt, i.lease_expires, i.priority, i.eligible_at, i.queue,
					  i.partition_key)
			SELECT * FROM claimed c ORDER BY c.priority, c.eligible_at, c.id;
	ELSE
		-- partition_rate_limit: the tasks are chosen (and locked) one by one,
		-- then leased as above (the same UPDATE: the path without limits keeps
		-- choosing and leasing in one statement, measurably faster than
		-- collecting the ids first)
		v_ids := genroc._claim_partitioned(v_room.open_queues, v_room.partition_rated,
			v_room.partition_counts, v_room.partition_periods, v_now, v_n);
		OPEN v_claimed FOR
			WITH claimed AS (
			UPDATE genroc._instances i SET
				status = 'running',
				lease_owner = p_worker,
				lease_epoch = i.lease_epoch + 1,
				lease_expires = v_now + v_worker.lease_duration,
				timeout_at = CASE WHEN i.timeout_s IS NOT NULL
							 THEN v_now + i.timeout_s * interval '1 second' END,
				updated_at = v_now
			WHERE i.id = ANY (v_ids)
			RETURNING i.id, i.lease_epoch, i.state, i.resource, i.task_input, i.only_once,
					  i.timeout_s, i.attempt, i.lease_expires, i.priority, i.eligible_at, i.queue,
					  i.partition_key)
			SELECT * FROM claimed c ORDER BY c.priority, c.eligible_at, c.id;
	END IF;

	LOOP
		FETCH v_claimed INTO v_row;
		EXIT WHEN NOT FOUND;
		PERFORM genroc._log(v_row.id, 'task_started', v_row.state,
			jsonb_build_object('worker', p_worker, 'epoch', v_row.lease_epoch,
							   'attempt', v_row.attempt));
		v_only_once := v_only_once OR v_row.only_once;
		IF v_row.queue = ANY (v_room.rated)
		   OR (v_row.partition_key IS NOT NULL AND v_row.queue = ANY (v_room.partition_rated)) THEN
			INSERT INTO genroc._queue_starts (queue, partition_key, at)
			VALUES (v_row.queue, v_row.partition_key, v_now);
		END IF;
		instance_id := v_row.id;
		epoch := v_row.lease_epoch;
		state := v_row.state;
		resource := v_row.resource;
		input := v_row.task_input;
		only_once := v_row.only_once;
		timeout_s := v_row.timeout_s;
		attempt := v_row.attempt;
		lease_expires := v_row.lease_expires;
		RETURN NEXT;
	END LOOP;
	CLOSE v_claimed;
	IF v_only_once THEN
		-- the claim of an OnlyOnce task must be on disk before its handler runs
		PERFORM genroc._flush_commit('only_once_claim');
	END IF;
END;
$$;
COMMENT ON FUNCTION genroc.claim(text, text[], int) IS
	'Leases up to p_n ready tasks of the given queues to a registered worker (priority, then eligible time, then id), each with a new lease epoch.';

-- Semantics: only leases the worker holds on running instances are
-- extended (to now + its lease_duration); the others are absent from the
-- result.  Counts as a heartbeat.  Ids in ascending order.
CREATE FUNCTION genroc.renew(p_worker text, p_instances bigint[]) RETURNS SETOF bigint
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_worker genroc._workers;
	v_now timestamptz := genroc.now();
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_instances IS NULL THEN
		RAISE EXCEPTION 'p_instances must not be null' USING ERRCODE = '22004';
	END IF;
	v_worker := genroc._live_worker(p_worker);
	UPDATE genroc._workers SET heartbeat_at = v_now WHERE id = p_worker;
	RETURN QUERY
		WITH renewed AS (
			UPDATE genroc._instances i SET lease_expires = v_now + v_worker.lease_duration
			WHERE i.id = ANY (p_instances) AND i.status = 'running' AND i.lease_owner = p_worker
			RETURNING i.id)
		SELECT r.id FROM renewed r ORDER BY r.id;
END;
$$;
COMMENT ON FUNCTION genroc.renew(text, bigint[]) IS
	'Extends the leases the worker still holds among p_instances and returns their ids; counts as a heartbeat.';

-- Semantics: like a lapse, at once (an OnlyOnce task fails with
-- only_once.interrupted).  Instances the worker does not hold are ignored.
-- A stopped or unknown worker: RC006.
CREATE FUNCTION genroc.release(p_worker text, p_instances bigint[]) RETURNS int
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_instances IS NULL THEN
		RAISE EXCEPTION 'p_instances must not be null' USING ERRCODE = '22004';
	END IF;
	PERFORM genroc._live_worker(p_worker);
	RETURN genroc._release(p_worker, p_instances, 'released by worker');
END;
$$;
COMMENT ON FUNCTION genroc.release(text, bigint[]) IS
	'Gives leases back at once (shutdown): the tasks run again elsewhere; an OnlyOnce task fails with only_once.interrupted.';

-- The running instance under lease epoch p_epoch, locked; RC003 / RC004.
CREATE FUNCTION genroc._leased(p_instance bigint, p_epoch bigint) RETURNS genroc._instances
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	IF p_epoch IS NULL THEN
		RAISE EXCEPTION 'p_epoch must not be null' USING ERRCODE = '22004';
	END IF;
	v_inst := genroc._lock_instance(p_instance);
	IF v_inst.status <> 'running' OR v_inst.lease_epoch <> p_epoch THEN
		RAISE EXCEPTION 'lease lost on instance %', p_instance
			USING ERRCODE = 'RC004',
				  DETAIL = format('The report is for epoch %s; the instance is %s at epoch %s.',
								  p_epoch, v_inst.status, v_inst.lease_epoch);
	END IF;
	RETURN v_inst;
END;
$$;

-- Semantics: accepted while the instance is running at that epoch, even
-- when its lease has expired and tick has not yet seen it (nobody else can
-- hold it then).
CREATE FUNCTION genroc.complete(p_instance bigint, p_epoch bigint, p_output jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_output IS NULL THEN
		RAISE EXCEPTION 'p_output must not be null (pass ''null''::jsonb for a JSON null)'
			USING ERRCODE = '22004';
	END IF;
	v_inst := genroc._leased(p_instance, p_epoch);
	PERFORM genroc._log(p_instance, 'task_succeeded', v_inst.state,
		jsonb_build_object('output', p_output, 'worker', v_inst.lease_owner, 'epoch', p_epoch));
	RETURN genroc._apply_step(p_instance,
		genroc._task_request(v_inst, 'task_succeeded', p_output, NULL, NULL));
END;
$$;
COMMENT ON FUNCTION genroc.complete(bigint, bigint, jsonb) IS
	'Reports a task''s output under its lease epoch; the instance goes on in this transaction; returns the new status; RC004 for a stale epoch.';

CREATE FUNCTION genroc.fail(p_instance bigint, p_epoch bigint, p_error text,
							p_cause text DEFAULT NULL) RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_error IS NULL THEN
		RAISE EXCEPTION 'p_error must not be null' USING ERRCODE = '22004';
	END IF;
	v_inst := genroc._leased(p_instance, p_epoch);
	RETURN genroc._fail_task(p_instance, p_error, p_cause);
END;
$$;
COMMENT ON FUNCTION genroc.fail(bigint, bigint, text, text) IS
	'Reports a task''s error under its lease epoch; Retry and Catch decide in this transaction; returns the new status; RC004 for a stale epoch.';
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
 *               by claim under an advisory lock per limited queue;
 *               partition_rate_limit (task starts per period in one
 *               partition of the queue), checked by claim under an
 *               advisory lock per partition that it only tries
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

-- Semantics: a glob matches the whole text; * is any run of characters, ?
-- one character, everything else (\ % _ included) is itself.
CREATE FUNCTION genroc._glob(p_text text, p_glob text) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN p_text LIKE replace(replace(replace(replace(replace(p_glob,
		'\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_');

-- The effective settings of a queue name: its own row, for <q>.<region> the
-- row of q (kind 'region'), else none (kind NULL); NULL options from the
-- default queue, then the built-in defaults.
CREATE FUNCTION genroc._queue_settings(p_queue text,
	OUT kind text, OUT global_concurrency int, OUT partition_concurrency int,
	OUT rate_limit int, OUT rate_period interval,
	OUT partition_rate_limit int, OUT partition_rate_period interval)
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_row genroc._queues;
	v_default genroc._queues;
BEGIN
	SELECT * INTO v_row FROM genroc._queues q WHERE q.name = p_queue;
	IF FOUND THEN
		kind := v_row.kind;
	ELSIF strpos(p_queue, '.') > 0 THEN
		SELECT * INTO v_row FROM genroc._queues q WHERE q.name = split_part(p_queue, '.', 1);
		IF FOUND THEN
			kind := 'region';
		END IF;
	END IF;
	SELECT * INTO v_default FROM genroc._queues q WHERE q.name = 'default';
	global_concurrency := coalesce(v_row.global_concurrency, v_default.global_concurrency, 0);
	partition_concurrency := coalesce(v_row.partition_concurrency, v_default.partition_concurrency, 1);
	IF v_row.rate_limit IS NOT NULL THEN
		rate_limit := v_row.rate_limit;
		rate_period := v_row.rate_period;
	ELSE
		rate_limit := v_default.rate_limit;
		rate_period := v_default.rate_period;
	END IF;
	IF v_row.partition_rate_limit IS NOT NULL THEN
		partition_rate_limit := v_row.partition_rate_limit;
		partition_rate_period := v_row.partition_rate_period;
	ELSE
		partition_rate_limit := v_default.partition_rate_limit;
		partition_rate_period := v_default.partition_rate_period;
	END IF;
END;
$$;

-- Checks a routed queue's match; 22023 naming what is wrong.
CREATE FUNCTION genroc._check_match(p_match jsonb) RETURNS void
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_key text;
BEGIN
	IF jsonb_typeof(p_match) <> 'object' OR p_match = '{}' THEN
		RAISE EXCEPTION 'option "match" must be an object with at least one of definitions, tenants, labels, not %',
			p_match USING ERRCODE = '22023';
	END IF;
	PERFORM genroc._check_options(p_match, ARRAY['definitions', 'labels', 'tenants'], 'option "match"');
	FOREACH v_key IN ARRAY ARRAY['definitions', 'tenants'] LOOP
		IF p_match ? v_key AND (jsonb_typeof(p_match -> v_key) <> 'array' OR EXISTS (
				SELECT 1 FROM jsonb_array_elements(p_match -> v_key) AS g
				WHERE jsonb_typeof(g) <> 'string' OR g #>> '{}' = '')) THEN
			RAISE EXCEPTION 'option "match.%" must be an array of non-empty glob strings, not %',
				v_key, p_match -> v_key USING ERRCODE = '22023';
		END IF;
	END LOOP;
	IF p_match ? 'labels' AND (jsonb_typeof(p_match -> 'labels') <> 'object' OR EXISTS (
			SELECT 1 FROM jsonb_each(p_match -> 'labels') AS l WHERE jsonb_typeof(l.value) <> 'string')) THEN
		RAISE EXCEPTION 'option "match.labels" must be an object of glob strings, not %',
			p_match -> 'labels' USING ERRCODE = '22023';
	END IF;
END;
$$;

-- Semantics of a match: every list it has must match (an empty list matches
-- everything); definitions: one glob matches the definition name; tenants:
-- one glob matches the label "tenant" (absent: no match); labels: every
-- key is among the instance's labels with a value its glob matches.
CREATE FUNCTION genroc._matches(p_match jsonb, p_definition text, p_labels jsonb) RETURNS boolean
	LANGUAGE sql IMMUTABLE
	BEGIN ATOMIC
		SELECT (NOT p_match ? 'definitions' OR jsonb_array_length(p_match -> 'definitions') = 0
				OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(p_match -> 'definitions') AS g
						   WHERE genroc._glob(p_definition, g)))
		   AND (NOT p_match ? 'tenants' OR jsonb_array_length(p_match -> 'tenants') = 0
				OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(p_match -> 'tenants') AS g
						   WHERE genroc._glob(p_labels ->> 'tenant', g)))
		   AND NOT EXISTS (SELECT 1 FROM jsonb_each_text(coalesce(p_match -> 'labels', '{}')) AS l
						   WHERE NOT coalesce(genroc._glob(p_labels ->> l.key, l.value), false));
	END;

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
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_queue text;
	v_q genroc._queues;
BEGIN
	IF EXISTS (SELECT 1 FROM genroc._queues q WHERE q.kind = 'handler') THEN
		SELECT q.name INTO v_queue FROM genroc._queues q
		WHERE q.kind = 'handler' AND q.handler IN (
			SELECT substr(r #>> '{}', 9)
			FROM jsonb_path_query(p_definition.definition, 'lax $.**.Resource') AS r
			WHERE jsonb_typeof(r) = 'string' AND r #>> '{}' LIKE 'handler:%')
		ORDER BY q.name LIMIT 1;
	END IF;
	IF v_queue IS NULL THEN
		FOR v_q IN SELECT * FROM genroc._queues q WHERE q.kind = 'routed' ORDER BY q.position LOOP
			IF genroc._matches(v_q.match, p_definition.name, p_labels) THEN
				v_queue := v_q.name;
				EXIT;
			END IF;
		END LOOP;
	END IF;
	IF v_queue IS NULL AND p_labels ? 'tenant' THEN
		SELECT q.name INTO v_queue FROM genroc._queues q
		WHERE q.kind = 'tenant' AND q.name = p_labels ->> 'tenant';
	END IF;
	v_queue := coalesce(v_queue, 'default');
	IF p_labels ? 'region' THEN
		v_queue := v_queue || '.' || (p_labels ->> 'region');
	END IF;
	RETURN v_queue;
END;
$$;

-- The instances holding a slot of a partition: top-level ones started (or
-- past run_at) and not ended.  Children carry their parent's partition key
-- (its rate limit counts their task starts) but hold no slot: their top
-- instance holds one for the whole tree.
CREATE FUNCTION genroc._slot_holders(p_queue text, p_partition text) RETURNS int
	LANGUAGE sql STABLE
	BEGIN ATOMIC
		SELECT count(*)::int FROM genroc._instances i
		WHERE i.queue = p_queue AND i.partition_key = p_partition
		  AND i.status IN ('ready', 'running', 'waiting')
		  AND i.wait_kind IS DISTINCT FROM 'run_at'
		  AND i.parent_id IS NULL;
	END;

/*
 * Semantics: gives free slots of a partition to its queued instances in
 * order (priority, created_at, id); each runs its first step here.  Called
 * by start and tick (a new waiter) and by every end (a freed slot).  An
 * advisory lock per partition serializes the count and the hand-out, so no
 * partition ever has more holders than its partition_concurrency.  An
 * instance that ends inside its first step frees its slot at once: the
 * loop counts again; the nested call from that end is skipped (the
 * setting genroc_queue.filling marks the partition being filled; the
 * prefix genroc is reserved for the C module's settings).
 */
CREATE FUNCTION genroc._fill_slots(p_queue text, p_partition text) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_mark text := p_queue || '/' || p_partition;
	v_outer text := current_setting('genroc_queue.filling', true);
	v_limit int;
	v_inst genroc._instances;
BEGIN
	IF p_partition IS NULL OR v_outer = v_mark THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_xact_lock(hashtextextended('genroc.partition:' || v_mark, 0));
	v_limit := (genroc._queue_settings(p_queue)).partition_concurrency;
	PERFORM set_config('genroc_queue.filling', v_mark, true);
	LOOP
		EXIT WHEN genroc._slot_holders(p_queue, p_partition) >= v_limit;
		SELECT * INTO v_inst FROM genroc._instances i
		WHERE i.queue = p_queue AND i.partition_key = p_partition AND i.status = 'queued'
		ORDER BY i.priority, i.created_at, i.id LIMIT 1 FOR UPDATE;
		EXIT WHEN NOT FOUND;
		UPDATE genroc._instances SET status = 'ready', task_input = NULL, updated_at = genroc.now()
		WHERE id = v_inst.id;
		PERFORM genroc._log(v_inst.id, 'slot_acquired', NULL,
			jsonb_build_object('queue', p_queue, 'partition_key', p_partition));
		-- task_input of a queued instance: the step it runs with its slot
		-- (retry, resume); NULL: its start
		PERFORM genroc._apply_step(v_inst.id, coalesce(v_inst.task_input,
			jsonb_build_object('op', 'start', 'input', v_inst.input)));
	END LOOP;
	PERFORM set_config('genroc_queue.filling', coalesce(v_outer, ''), true);
END;
$$;

/*
 * Semantics: the first step of a started instance (start, or tick at
 * run_at), or of a failed one run again (p_request: retry, resume).
 * Without a partition_key it runs here.  With one, the instance queues
 * behind its partition ('queued', logged; the step waits in task_input)
 * and _fill_slots hands out what is free, so it runs here only when a slot
 * is free and nobody is ahead of it.  Returns the instance's status.
 */
CREATE FUNCTION genroc._admit(p_instance bigint, p_request jsonb DEFAULT NULL) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	IF v_inst.partition_key IS NULL THEN
		RETURN genroc._apply_step(p_instance, coalesce(p_request,
			jsonb_build_object('op', 'start', 'input', v_inst.input)));
	END IF;
	UPDATE genroc._instances SET status = 'queued', wait_kind = NULL, wait_until = NULL,
		task_input = p_request, updated_at = genroc.now() WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'queued', NULL,
		jsonb_build_object('queue', v_inst.queue, 'partition_key', v_inst.partition_key));
	PERFORM genroc._fill_slots(v_inst.queue, v_inst.partition_key);
	RETURN (SELECT i.status FROM genroc._instances i WHERE i.id = p_instance);
END;
$$;

-- Called after an instance ended (its row already updated): its slot goes
-- to the next queued instance of its partition.
CREATE FUNCTION genroc._ended(p_instance bigint) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	IF v_inst.partition_key IS NOT NULL AND v_inst.parent_id IS NULL THEN
		PERFORM genroc._fill_slots(v_inst.queue, v_inst.partition_key);
	END IF;
END;
$$;

-- Checks a rate option {"count": N >= 1, "period": duration} named p_name
-- (rate_limit, partition_rate_limit); 22023 (22007 for the period) naming
-- the field that is wrong.
CREATE FUNCTION genroc._rate_option(p_value jsonb, p_name text, OUT count int, OUT period interval)
	LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
	IF jsonb_typeof(p_value) <> 'object' THEN
		RAISE EXCEPTION 'option "%" must be an object {"count": N, "period": duration}, not %',
			p_name, p_value USING ERRCODE = '22023';
	END IF;
	PERFORM genroc._check_options(p_value, ARRAY['count', 'period'], format('option "%s"', p_name));
	IF NOT p_value ? 'count' OR NOT p_value ? 'period' THEN
		RAISE EXCEPTION 'option "%" needs "count" and "period"', p_name USING ERRCODE = '22023';
	END IF;
	count := genroc._int_option(p_value -> 'count', p_name || '.count');
	IF count < 1 THEN
		RAISE EXCEPTION 'option "%.count" must be at least 1, not %', p_name, count
			USING ERRCODE = '22023';
	END IF;
	period := genroc._duration(p_value -> 'period', p_name || '.period');
END;
$$;

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
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_options jsonb := coalesce(p_options, '{}');
	v_kind text;
	v_old genroc._queues;
	v_handler text;
	v_global int;
	v_partition int;
	v_rate int;
	v_period interval;
	v_prate int;
	v_pperiod interval;
	v_p text;
	v_q record;
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_name = '' OR strpos(p_name, '.') > 0 THEN
		RAISE EXCEPTION 'queue name "%" must be non-empty and without "."', p_name
			USING ERRCODE = '22023',
				  HINT = '<queue>.<region> names the region queues, which are derived.';
	END IF;
	PERFORM genroc._check_options(v_options,
		ARRAY['global_concurrency', 'handler', 'kind', 'match', 'partition_concurrency',
			  'partition_rate_limit', 'rate_limit'],
		'queue options');
	v_kind := CASE WHEN v_options ? 'kind' THEN genroc._text_option(v_options -> 'kind', 'kind')
				   WHEN p_name = 'default' THEN 'default' END;
	IF v_kind IS NULL THEN
		RAISE EXCEPTION 'queue options need "kind" (tenant, handler or routed)' USING ERRCODE = '22023';
	END IF;
	IF v_kind NOT IN ('default', 'tenant', 'handler', 'routed') THEN
		RAISE EXCEPTION 'option "kind" must be one of default, tenant, handler, routed, not "%"', v_kind
			USING ERRCODE = '22023';
	END IF;
	IF (v_kind = 'default') <> (p_name = 'default') THEN
		RAISE EXCEPTION 'kind "default" is the queue "default" only, and it has no other kind'
			USING ERRCODE = '22023';
	END IF;
	IF v_kind = 'handler' THEN
		IF NOT v_options ? 'handler' THEN
			RAISE EXCEPTION 'a handler queue needs option "handler"' USING ERRCODE = '22023';
		END IF;
		v_handler := genroc._text_option(v_options -> 'handler', 'handler');
		SELECT q.name INTO v_p FROM genroc._queues q WHERE q.handler = v_handler AND q.name <> p_name;
		IF FOUND THEN
			RAISE EXCEPTION 'handler "%" already has the queue "%"', v_handler, v_p
				USING ERRCODE = '22023', HINT = 'Drop that queue first.';
		END IF;
	ELSIF v_options ? 'handler' THEN
		RAISE EXCEPTION 'option "handler" is for handler queues only' USING ERRCODE = '22023';
	END IF;
	IF v_kind = 'routed' THEN
		IF NOT v_options ? 'match' THEN
			RAISE EXCEPTION 'a routed queue needs option "match"' USING ERRCODE = '22023';
		END IF;
		PERFORM genroc._check_match(v_options -> 'match');
	ELSIF v_options ? 'match' THEN
		RAISE EXCEPTION 'option "match" is for routed queues only' USING ERRCODE = '22023';
	END IF;
	IF v_options ? 'global_concurrency' THEN
		v_global := genroc._int_option(v_options -> 'global_concurrency', 'global_concurrency');
		IF v_global < 0 THEN
			RAISE EXCEPTION 'option "global_concurrency" must be at least 0, not %', v_global
				USING ERRCODE = '22023';
		END IF;
	END IF;
	IF v_options ? 'partition_concurrency' THEN
		v_partition := genroc._int_option(v_options -> 'partition_concurrency', 'partition_concurrency');
		IF v_partition < 1 THEN
			RAISE EXCEPTION 'option "partition_concurrency" must be at least 1, not %', v_partition
				USING ERRCODE = '22023';
		END IF;
	END IF;
	IF v_options ? 'rate_limit' THEN
		SELECT r.count, r.period INTO v_rate, v_period
		FROM genroc._rate_option(v_options -> 'rate_limit', 'rate_limit') r;
	END IF;
	IF v_options ? 'partition_rate_limit' THEN
		SELECT r.count, r.period INTO v_prate, v_pperiod
		FROM genroc._rate_option(v_options -> 'partition_rate_limit', 'partition_rate_limit') r;
	END IF;

	SELECT * INTO v_old FROM genroc._queues q WHERE q.name = p_name FOR UPDATE;
	IF FOUND AND v_old.kind <> v_kind AND 'tenant' IN (v_old.kind, v_kind) THEN
		RAISE EXCEPTION 'queue name "%" is used by a tenant and by a % queue', p_name,
			CASE WHEN v_kind = 'tenant' THEN v_old.kind ELSE v_kind END
			USING ERRCODE = '22023',
				  DETAIL = 'A tenant queue is named after its tenant; no other queue may use that name.',
				  HINT = 'Rename the other queue.';
	END IF;
	INSERT INTO genroc._queues AS q (name, kind, handler, match, global_concurrency,
		partition_concurrency, rate_limit, rate_period, partition_rate_limit, partition_rate_period,
		updated_at)
	VALUES (p_name, v_kind, v_handler, v_options -> 'match', v_global, v_partition, v_rate, v_period,
			v_prate, v_pperiod, genroc.now())
	ON CONFLICT (name) DO UPDATE SET
		kind = excluded.kind, handler = excluded.handler, match = excluded.match,
		global_concurrency = excluded.global_concurrency,
		partition_concurrency = excluded.partition_concurrency,
		rate_limit = excluded.rate_limit, rate_period = excluded.rate_period,
		partition_rate_limit = excluded.partition_rate_limit,
		partition_rate_period = excluded.partition_rate_period,
		updated_at = excluded.updated_at;

	-- A larger partition_concurrency frees slots now: hand them out (a
	-- change of "default" can concern every queue; filling a full partition
	-- does nothing).
	FOR v_q IN SELECT DISTINCT i.queue, i.partition_key FROM genroc._instances i
			   WHERE i.status = 'queued' ORDER BY 1, 2 LOOP
		PERFORM genroc._fill_slots(v_q.queue, v_q.partition_key);
	END LOOP;
	RETURN (SELECT to_jsonb(l) FROM genroc.list_queues() l WHERE l.name = p_name);
END;
$$;
COMMENT ON FUNCTION genroc.queue_set(text, jsonb) IS
	'Creates or replaces a queue (options kind, handler, match, global_concurrency, partition_concurrency, rate_limit, partition_rate_limit); returns it as list_queues shows it.';

-- Semantics: the instances already in a dropped queue keep it (routing is
-- never redone); they are served by whoever still lists that name, with the
-- default queue's limits.  Dropping "default" is refused; an unknown name
-- is 42704.
CREATE FUNCTION genroc.queue_drop(p_name text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_name = 'default' THEN
		RAISE EXCEPTION 'the queue "default" cannot be dropped' USING ERRCODE = '22023';
	END IF;
	DELETE FROM genroc._queues q WHERE q.name = p_name;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'queue "%" does not exist', p_name USING ERRCODE = '42704';
	END IF;
	DELETE FROM genroc._queue_starts s WHERE s.queue = p_name;
END;
$$;
COMMENT ON FUNCTION genroc.queue_drop(text) IS
	'Removes a configured queue (not "default"); instances already in it keep it.';

/*
 * Semantics of list_queues: every configured queue, plus every other queue
 * name a live worker serves or a live instance sits in (kind region for
 * <q>.<region> of a configured q, else unconfigured), by name; limits are
 * the effective ones; depth = ready tasks, queued = instances waiting for a
 * partition slot, running = leased tasks, workers = live workers serving it.
 */
CREATE FUNCTION genroc.list_queues()
	RETURNS TABLE (name text, kind text, handler text, match jsonb, global_concurrency int,
				   partition_concurrency int, rate_limit int, rate_period_ms bigint,
				   partition_rate_limit int, partition_rate_period_ms bigint,
				   depth bigint, queued bigint, running bigint, workers text[])
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		WITH live AS (
			SELECT w.id, w.queues FROM genroc._workers w
			WHERE w.stopped_at IS NULL AND w.heartbeat_at > genroc.now() - w.stale_after),
		names AS (
			SELECT q.name FROM genroc._queues q
			UNION SELECT unnest(l.queues) FROM live l
			UNION SELECT DISTINCT i.queue FROM genroc._instances i
				  WHERE i.status IN ('queued', 'ready', 'running', 'waiting'))
		SELECT n.name, coalesce(s.kind, 'unconfigured'), q.handler, q.match,
			   s.global_concurrency, s.partition_concurrency, s.rate_limit,
			   (extract(epoch FROM s.rate_period) * 1000)::bigint,
			   s.partition_rate_limit, (extract(epoch FROM s.partition_rate_period) * 1000)::bigint,
			   (SELECT count(*) FROM genroc._instances i WHERE i.queue = n.name AND i.status = 'ready'),
			   (SELECT count(*) FROM genroc._instances i WHERE i.queue = n.name AND i.status = 'queued'),
			   (SELECT count(*) FROM genroc._instances i WHERE i.queue = n.name AND i.status = 'running'),
			   ARRAY(SELECT l.id FROM live l WHERE n.name = ANY (l.queues) ORDER BY l.id)
		FROM names n
		CROSS JOIN LATERAL genroc._queue_settings(n.name) s
		LEFT JOIN genroc._queues q ON q.name = n.name
		ORDER BY n.name;
	END;
COMMENT ON FUNCTION genroc.list_queues() IS
	'Every queue (configured, served or in use): kind, match, effective limits, depth, queued, running, live workers serving it.';

CREATE VIEW genroc.queues AS
	SELECT * FROM genroc.list_queues();
COMMENT ON VIEW genroc.queues IS 'Every queue with its kind, limits, depth, running tasks and the workers serving it; for psql.';
REVOKE ALL ON genroc.queues FROM PUBLIC;

/*
 * Semantics of the limits claim checks (genroc._claim_room): for each
 * queue of the claim with a global_concurrency or a rate_limit, under an
 * advisory lock per queue (taken in name order, held to the commit, so two
 * claimers of one limited queue count one after the other):
 *   room = global_concurrency - running tasks of the queue, and
 *          rate_limit.count - task starts within the last period
 * A queue without room is left out of the claim; the claim takes at most
 * the smallest room of the others (a batch never oversteps a limit; the
 * next claim takes the rest).  A queue with a partition_rate_limit takes no
 * lock here: its partitions are counted one by one as claim meets them
 * (genroc._claim_partitioned).  The start rows older than the longest
 * period of a rate-limited queue are deleted here, skipping rows another
 * transaction deletes (pruning never waits).  Returns the queues to claim
 * from and that bound (NULL = no bound), the queues whose starts claim
 * records (rated: rate_limit, every task; partition_rated: only
 * partition_rate_limit, the tasks of a partition), and the queues with a
 * partition_rate_limit with its count and period (same order).
 */
CREATE FUNCTION genroc._claim_room(p_queues text[], p_now timestamptz,
	OUT open_queues text[], OUT room int, OUT rated text[],
	OUT partition_rated text[], OUT partition_counts int[], OUT partition_periods interval[])
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_q text;
	v_s record;
	v_room int;
BEGIN
	open_queues := ARRAY[]::text[];
	rated := ARRAY[]::text[];
	partition_rated := ARRAY[]::text[];
	partition_counts := ARRAY[]::int[];
	partition_periods := ARRAY[]::interval[];
	-- no queue row sets a limit (the default queue's included, which the
	-- others inherit): every queue is open and nothing is counted
	IF NOT EXISTS (SELECT 1 FROM genroc._queues q
				   WHERE q.global_concurrency > 0 OR q.rate_limit IS NOT NULL
					  OR q.partition_rate_limit IS NOT NULL) THEN
		open_queues := ARRAY(SELECT DISTINCT u FROM unnest(p_queues) AS u ORDER BY 1);
		RETURN;
	END IF;
	FOR v_q IN SELECT DISTINCT u FROM unnest(p_queues) AS u ORDER BY 1 LOOP
		v_s := genroc._queue_settings(v_q);
		IF v_s.rate_limit IS NOT NULL OR v_s.partition_rate_limit IS NOT NULL THEN
			DELETE FROM genroc._queue_starts s WHERE s.ctid = ANY (ARRAY(
				SELECT o.ctid FROM genroc._queue_starts o
				WHERE o.queue = v_q
				  AND o.at <= p_now - greatest(v_s.rate_period, v_s.partition_rate_period)
				FOR UPDATE SKIP LOCKED));
		END IF;
		IF v_s.global_concurrency = 0 AND v_s.rate_limit IS NULL THEN
			open_queues := open_queues || v_q;
		ELSE
			PERFORM pg_advisory_xact_lock(hashtextextended('genroc.queue:' || v_q, 0));
			v_room := NULL;
			IF v_s.global_concurrency > 0 THEN
				v_room := v_s.global_concurrency - (SELECT count(*)::int FROM genroc._instances i
													WHERE i.queue = v_q AND i.status = 'running');
			END IF;
			IF v_s.rate_limit IS NOT NULL THEN
				v_room := least(v_room, v_s.rate_limit - (SELECT count(*)::int FROM genroc._queue_starts s
														  WHERE s.queue = v_q AND s.at > p_now - v_s.rate_period));
			END IF;
			IF NOT v_room > 0 THEN
				CONTINUE;
			END IF;
			open_queues := open_queues || v_q;
			room := least(room, v_room);
			IF v_s.rate_limit IS NOT NULL THEN
				rated := rated || v_q;
			END IF;
		END IF;
		IF v_s.partition_rate_limit IS NOT NULL THEN
			partition_rated := partition_rated || v_q;
			partition_counts := partition_counts || v_s.partition_rate_limit;
			partition_periods := partition_periods || v_s.partition_rate_period;
		END IF;
	END LOOP;
END;
$$;

/*
 * Semantics of partition rate limits in claim (genroc._claim_partitioned,
 * used instead of claim's single statement when an open queue has a
 * partition_rate_limit): the ready tasks of the open queues, in claim
 * order, read in chunks (keyset: after the last one read).  For a task of
 * a partition-limited queue with a partition_key, the first time claim
 * meets its partition it tries the advisory lock of (queue, partition_key):
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
CREATE FUNCTION genroc._claim_partitioned(p_open text[], p_queues text[], p_counts int[],
	p_periods interval[], p_now timestamptz, p_n int) RETURNS bigint[]
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	-- rows read per statement: a batch and some to spare for the tasks of
	-- partitions without room
	v_chunk int := greatest(4 * p_n, 64);
	v_ids bigint[] := ARRAY[]::bigint[];
	v_c record;
	v_read int;
	v_last_priority int;
	v_last_eligible timestamptz;
	v_last_id bigint;
	v_mark text;
	v_left jsonb := '{}';	-- partition (its mark) -> room left
	v_room int;
	v_full_q text[] := ARRAY[]::text[];	-- partitions without room (queue, key)
	v_full_k text[] := ARRAY[]::text[];
BEGIN
	IF p_n < 1 THEN
		RETURN v_ids;
	END IF;
	<<chunks>>
	LOOP
		v_read := 0;
		FOR v_c IN
			-- each queue in index order (_instances_claim), then merged: reads
			-- about a chunk per queue, not every ready task
			SELECT c.id, c.queue, c.partition_key, c.priority, c.eligible_at,
				   CASE WHEN c.partition_key IS NOT NULL THEN array_position(p_queues, c.queue) END AS k
			FROM unnest(p_open) AS o(queue)
			CROSS JOIN LATERAL (
				SELECT i.id, i.queue, i.partition_key, i.priority, i.eligible_at
				FROM genroc._instances i
				WHERE i.queue = o.queue AND i.status = 'ready' AND i.eligible_at <= p_now
				  AND (v_last_id IS NULL
					   OR (i.priority, i.eligible_at, i.id) > (v_last_priority, v_last_eligible, v_last_id))
				  AND NOT EXISTS (SELECT 1 FROM unnest(v_full_q, v_full_k) AS f(queue, partition_key)
								  WHERE f.queue = i.queue AND f.partition_key = i.partition_key)
				ORDER BY i.priority, i.eligible_at, i.id
				LIMIT v_chunk) AS c
			ORDER BY c.priority, c.eligible_at, c.id
			LIMIT v_chunk
		LOOP
			v_read := v_read + 1;
			v_last_priority := v_c.priority;
			v_last_eligible := v_c.eligible_at;
			v_last_id := v_c.id;
			IF v_c.k IS NOT NULL THEN
				v_mark := jsonb_build_array(v_c.queue, v_c.partition_key)::text;
				v_room := (v_left ->> v_mark)::int;
				IF v_room IS NULL THEN
					v_room := 0;
					IF pg_try_advisory_xact_lock(hashtextextended('genroc.partition_rate:' || v_mark, 0)) THEN
						v_room := p_counts[v_c.k] - (
							SELECT count(*)::int FROM genroc._queue_starts s
							WHERE s.queue = v_c.queue AND s.partition_key = v_c.partition_key
							  AND s.at > p_now - p_periods[v_c.k]);
					END IF;
					v_left := jsonb_set(v_left, ARRAY[v_mark], to_jsonb(v_room));
					IF v_room <= 0 THEN
						v_full_q := v_full_q || v_c.queue;
						v_full_k := v_full_k || v_c.partition_key;
					END IF;
				END IF;
				CONTINUE WHEN v_room <= 0;
			END IF;
			PERFORM 1 FROM genroc._instances i
			WHERE i.id = v_c.id AND i.status = 'ready' AND i.eligible_at <= p_now
			FOR UPDATE SKIP LOCKED;
			CONTINUE WHEN NOT FOUND;
			v_ids := v_ids || v_c.id;
			IF v_c.k IS NOT NULL THEN
				v_left := jsonb_set(v_left, ARRAY[v_mark], to_jsonb(v_room - 1));
				IF v_room = 1 THEN
					v_full_q := v_full_q || v_c.queue;
					v_full_k := v_full_k || v_c.partition_key;
				END IF;
			END IF;
			EXIT chunks WHEN cardinality(v_ids) >= p_n;
		END LOOP;
		EXIT WHEN v_read < v_chunk;
	END LOOP;
	RETURN v_ids;
END;
$$;
/*
 * Activities: Tasks with "Resource": "activity:NAME", run by any outside
 * program that claims them and reports back with the task token.
 */

/*
 * Semantics of claim_activity:
 *   candidates: parked at activity NAME (status 'waiting', wait_kind
 *   'activity'), not yet handed out (activity_owner IS NULL), eligible_at <=
 *   now (a retry back-off has passed), in the order priority, eligible_at,
 *   id; FOR UPDATE SKIP LOCKED; at most p_n
 *   each is marked as handed out to p_worker (never handed out again; the
 *   token stays valid) and its heartbeat clock starts: heartbeat_at = now +
 *   HeartbeatSeconds.  p_worker is the outside program's name; it need not
 *   be a registered genroc worker.
 */
CREATE FUNCTION genroc.claim_activity(p_activity text, p_worker text, p_n int DEFAULT 1)
	RETURNS TABLE (token text, instance_id bigint, activity text, input jsonb,
				   heartbeat_s int, timeout_s int)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	v_now timestamptz := genroc.now();
	v_row record;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_activity IS NULL THEN
		RAISE EXCEPTION 'p_activity must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_worker IS NULL THEN
		RAISE EXCEPTION 'p_worker must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_n IS NULL THEN
		RAISE EXCEPTION 'p_n must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_n < 1 THEN
		RAISE EXCEPTION 'p_n must be at least 1, not %', p_n USING ERRCODE = '22023';
	END IF;
	FOR v_row IN
		WITH candidates AS (
			SELECT i.id FROM genroc._instances i
			WHERE i.status = 'waiting' AND i.wait_kind = 'activity' AND i.activity = p_activity
			  AND i.activity_owner IS NULL AND i.eligible_at <= v_now
			ORDER BY i.priority, i.eligible_at, i.id
			LIMIT p_n
			FOR UPDATE SKIP LOCKED),
		claimed AS (
			UPDATE genroc._instances i SET
				activity_owner = p_worker,
				heartbeat_at = CASE WHEN i.heartbeat_s IS NOT NULL
							   THEN v_now + i.heartbeat_s * interval '1 second' END,
				updated_at = v_now
			FROM candidates c
			WHERE i.id = c.id
			RETURNING i.id, i.state, i.activity_token, i.activity, i.task_input,
					  i.heartbeat_s, i.timeout_s, i.priority, i.eligible_at)
		SELECT * FROM claimed c ORDER BY c.priority, c.eligible_at, c.id
	LOOP
		PERFORM genroc._log(v_row.id, 'activity_claimed', v_row.state,
			jsonb_build_object('worker', p_worker, 'activity', v_row.activity));
		token := v_row.activity_token;
		instance_id := v_row.id;
		activity := v_row.activity;
		input := v_row.task_input;
		heartbeat_s := v_row.heartbeat_s;
		timeout_s := v_row.timeout_s;
		RETURN NEXT;
	END LOOP;
END;
$$;
COMMENT ON FUNCTION genroc.claim_activity(text, text, int) IS
	'Hands out up to p_n waiting tasks of activity p_activity, each with its input and task token.';

-- The instance parked with that token, locked; RC007 when there is none.
CREATE FUNCTION genroc._activity(p_token text) RETURNS genroc._instances
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	IF p_token IS NULL THEN
		RAISE EXCEPTION 'p_token must not be null' USING ERRCODE = '22004';
	END IF;
	SELECT * INTO v_inst FROM genroc._instances
	WHERE activity_token = p_token AND status = 'waiting' AND wait_kind = 'activity'
	FOR UPDATE;
	IF NOT FOUND THEN
		-- the message leaves the token out: it is a credential, and random
		RAISE EXCEPTION 'task token is not valid'
			USING ERRCODE = 'RC007',
				  DETAIL = 'No activity is waiting with that token: it is unknown, already reported, timed out or cancelled.';
	END IF;
	RETURN v_inst;
END;
$$;

-- Semantics: a token is valid from its parking until a result, a timeout
-- or heartbeat timeout recorded by tick, or cancel; a result that arrives
-- after a deadline but before tick has recorded it is accepted.  Whether
-- the task was claimed does not matter (a token passed on with
-- $$.Task.Token works the same).
CREATE FUNCTION genroc.activity_succeed(p_token text, p_output jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances;
	v_status text;
BEGIN
	IF p_output IS NULL THEN
		RAISE EXCEPTION 'p_output must not be null (pass ''null''::jsonb for a JSON null)'
			USING ERRCODE = '22004';
	END IF;
	v_inst := genroc._activity(p_token);
	PERFORM genroc._log(v_inst.id, 'task_succeeded', v_inst.state,
		jsonb_build_object('output', p_output, 'activity_worker', v_inst.activity_owner));
	v_status := genroc._apply_step(v_inst.id,
		genroc._task_request(v_inst, 'task_succeeded', p_output, NULL, NULL));
	PERFORM genroc._flush_commit('outside');
	RETURN v_status;
END;
$$;
COMMENT ON FUNCTION genroc.activity_succeed(text, jsonb) IS
	'Reports an activity''s output by its task token; the instance goes on in this transaction; returns the new status; RC007 for an invalid token.';

CREATE FUNCTION genroc.activity_fail(p_token text, p_error text, p_cause text DEFAULT NULL)
	RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances;
	v_status text;
BEGIN
	IF p_error IS NULL THEN
		RAISE EXCEPTION 'p_error must not be null' USING ERRCODE = '22004';
	END IF;
	v_inst := genroc._activity(p_token);
	v_status := genroc._fail_task(v_inst.id, p_error, p_cause);
	PERFORM genroc._flush_commit('outside');
	RETURN v_status;
END;
$$;
COMMENT ON FUNCTION genroc.activity_fail(text, text, text) IS
	'Reports an activity''s error by its task token; Retry and Catch decide in this transaction; returns the new status; RC007 for an invalid token.';

-- Semantics: pushes the heartbeat deadline to now + HeartbeatSeconds (no
-- effect on a task without HeartbeatSeconds; TimeoutSeconds still counts).
CREATE FUNCTION genroc.activity_heartbeat(p_token text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances := genroc._activity(p_token);
	v_now timestamptz := genroc.now();
BEGIN
	PERFORM genroc._flush_commit('progress');
	UPDATE genroc._instances SET
		heartbeat_at = CASE WHEN heartbeat_s IS NOT NULL
					   THEN v_now + heartbeat_s * interval '1 second' END,
		updated_at = v_now
	WHERE id = v_inst.id;
END;
$$;
COMMENT ON FUNCTION genroc.activity_heartbeat(text) IS
	'Tells genroc that the activity with this task token is still being worked on; RC007 for an invalid token.';
/*
 * Composition: child instances for Parallel branches and Map items
 * (DESIGN §1).  An instance is one thread of control; a fan-out parks the
 * parent and creates its children in the same transaction, and the child
 * that ends last wakes the parent in the transaction that ends it.
 *
 * Rows:
 *   parent  status 'waiting', wait_kind 'children', state / state_input /
 *           retry_counts of the Parallel or Map state; fanout =
 *           {kind, gen, total, max_concurrency, tolerated_count,
 *            tolerated_percentage}; wait_until set while a retry back-off
 *           holds the children back (tick lets them go)
 *   child   parent_id, root_id (the top instance), child_index (branch or
 *           item order), child_gen (= the parent's fanout.gen), scope (its
 *           machine in the definition), the parent's definition version,
 *           queue and priority.  Not started yet: status 'waiting',
 *           wait_kind 'pending'.
 *
 * A child is live from its start until it ends; a Map keeps at most
 * max_concurrency children live (0: no limit), starting the next item in
 * the transaction that ends one.  The fan-out fails (op task_failed on the
 * parent, so its Retry and Catch decide) when a branch fails, or when a Map
 * item fails and no tolerance is set, with that child's error; with a
 * tolerance, when the failed items exceed ToleratedFailureCount or
 * ToleratedFailurePercentage of all items, with
 * States.ExceedToleratedFailureThreshold.  Then every live or pending
 * sibling is cancelled (recursively).  A child cancelled from outside
 * counts as failed (genroc.Cancelled).
 *
 * Calls (genroc:call, genroc:call.sync) are a fan-out of one child of
 * another definition (fanout.kind 'call'): the child runs that definition
 * from its top (scope NULL), is its own execution for $$.Execution, gets
 * the queue routing gives its definition with the parent's labels, and
 * keeps parent_id / root_id like any child.  A sync call resumes the
 * parent with the child's output (task_succeeded) or error (task_failed),
 * or fails with States.Timeout at TimeoutSeconds (tick; the child is
 * cancelled); an async call resumes the parent with {"InstanceId": id} in
 * the transaction that starts the child, and the child's end then wakes
 * nobody.  A definition that does not exist fails the task with
 * genroc.DefinitionNotFound; a call nested deeper than 32 calls and
 * fan-outs fails it with genroc.CallDepthExceeded (a definition calling
 * itself without end).
 */

-- Creates the children of a fan-out outcome ('parallel', 'map' or 'call')
-- and starts as many as may run.  The caller (_apply_step) holds the row
-- lock.  Returns the parent's status (a call that cannot start goes on
-- through Retry and Catch at once).
CREATE FUNCTION genroc._fan_out(p_parent bigint, p_out jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_inst genroc._instances;
	v_kind text := p_out ->> 'kind';
	v_items jsonb;
	v_gen int;
	v_delay bigint := coalesce((p_out ->> 'delay_ms')::bigint, 0);
	v_counts jsonb := coalesce(p_out -> 'retry_counts', '[]');
	v_timeout int := (p_out ->> 'timeout_s')::int;
	v_called genroc._definitions;
	v_error text;
	v_cause text;
	c_max_depth constant int := 32;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_parent;
	IF v_kind = 'parallel' THEN
		SELECT jsonb_agg(b || jsonb_build_object('index', n - 1) ORDER BY n) INTO v_items
		FROM jsonb_array_elements(p_out -> 'branches') WITH ORDINALITY AS t(b, n);
	ELSIF v_kind = 'map' THEN
		v_items := p_out -> 'items';
	ELSE
		SELECT * INTO v_called FROM genroc._definitions d
		WHERE d.name = p_out ->> 'definition'
		  AND (jsonb_typeof(p_out -> 'version') IS DISTINCT FROM 'number'
			   OR d.version = (p_out ->> 'version')::int)
		ORDER BY d.version DESC LIMIT 1;
		IF NOT FOUND THEN
			v_error := 'genroc.DefinitionNotFound';
			v_cause := format('state "%s" calls definition "%s"%s, which does not exist',
				p_out ->> 'state', p_out ->> 'definition',
				CASE WHEN jsonb_typeof(p_out -> 'version') = 'number'
					 THEN ' version ' || (p_out ->> 'version') ELSE '' END);
		ELSIF genroc._depth(v_inst) >= c_max_depth THEN
			v_error := 'genroc.CallDepthExceeded';
			v_cause := format('state "%s" calls definition "%s" below %s nested calls and fan-outs',
				p_out ->> 'state', p_out ->> 'definition', c_max_depth);
		END IF;
		IF v_error IS NOT NULL THEN
			UPDATE genroc._instances SET state = p_out ->> 'state', state_input = p_out -> 'state_input',
				retry_counts = v_counts WHERE id = p_parent;
			RETURN genroc._fail_task(p_parent, v_error, v_cause);
		END IF;
		v_items := jsonb_build_array(jsonb_build_object(
			'index', 0, 'input', p_out -> 'input', 'definition_id', v_called.id,
			'name', p_out -> 'name', 'labels', v_inst.labels,
			'queue', genroc._route(v_called, v_inst.labels)));
	END IF;
	v_gen := coalesce((v_inst.fanout ->> 'gen')::int, 0) + 1;
	UPDATE genroc._instances SET
		status = 'waiting',
		state = p_out ->> 'state',
		state_input = p_out -> 'state_input',
		task_input = NULL, resource = NULL,
		lease_owner = NULL, lease_expires = NULL,
		retry_counts = v_counts,
		attempt = (SELECT coalesce(sum(c::int), 0) FROM jsonb_array_elements_text(v_counts) AS c),
		interruptions = 0, only_once = false,
		-- a sync call's TimeoutSeconds counts from the child's start
		timeout_s = v_timeout,
		timeout_at = v_now + (v_delay * interval '1 millisecond') + v_timeout * interval '1 second',
		heartbeat_s = NULL, heartbeat_at = NULL,
		wait_kind = 'children',
		-- a retry back-off: the children start when tick finds this due
		wait_until = CASE WHEN v_delay > 0 THEN v_now + v_delay * interval '1 millisecond' END,
		activity = NULL, activity_token = NULL, activity_owner = NULL,
		fanout = jsonb_build_object(
			'kind', v_kind,
			'gen', v_gen,
			'total', jsonb_array_length(v_items),
			'max_concurrency', coalesce((p_out ->> 'max_concurrency')::int, 0),
			'tolerated_count', p_out -> 'tolerated_count',
			'tolerated_percentage', p_out -> 'tolerated_percentage')
			|| CASE WHEN v_kind = 'call' THEN jsonb_build_object('sync', p_out -> 'sync')
					ELSE '{}'::jsonb END,
		updated_at = v_now
	WHERE id = p_parent;
	INSERT INTO genroc._instances (definition_id, status, eligible_at, input, queue, priority,
								   wait_kind, parent_id, root_id, child_index, child_gen, scope,
								   name, labels, partition_key, created_at, updated_at)
	SELECT coalesce((it ->> 'definition_id')::bigint, v_inst.definition_id), 'waiting', v_now,
		   it -> 'input', coalesce(it ->> 'queue', v_inst.queue), v_inst.priority,
		   'pending', p_parent, coalesce(v_inst.root_id, p_parent), (it ->> 'index')::int, v_gen,
		   it ->> 'scope', it ->> 'name', coalesce(it -> 'labels', '{}'), v_inst.partition_key,
		   v_now, v_now
	FROM jsonb_array_elements(v_items) AS it
	ORDER BY (it ->> 'index')::int;
	IF v_kind = 'call' THEN
		PERFORM genroc._log(p_parent, 'call_started', p_out ->> 'state',
			jsonb_build_object('definition', v_called.name, 'version', v_called.version,
							   'sync', p_out -> 'sync', 'delay_ms', v_delay,
							   'child', (SELECT i.id FROM genroc._instances i
										 WHERE i.parent_id = p_parent AND i.child_gen = v_gen)));
	ELSE
		PERFORM genroc._log(p_parent, 'children_started', p_out ->> 'state',
			jsonb_build_object('kind', v_kind, 'count', jsonb_array_length(v_items),
							   'max_concurrency', coalesce((p_out ->> 'max_concurrency')::int, 0),
							   'delay_ms', v_delay));
	END IF;
	IF v_delay = 0 THEN
		PERFORM genroc._advance_children(p_parent);
	END IF;
	RETURN (SELECT i.status FROM genroc._instances i WHERE i.id = p_parent);
END;
$$;

-- How many instances are above this one (0 for a top-level instance).
CREATE FUNCTION genroc._depth(p_instance genroc._instances) RETURNS int
	LANGUAGE sql STABLE
	BEGIN ATOMIC
		WITH RECURSIVE up (id, parent_id) AS (
			SELECT p_instance.id, p_instance.parent_id
			UNION ALL
			SELECT i.id, i.parent_id FROM genroc._instances i JOIN up ON i.id = up.parent_id)
		SELECT count(*)::int - 1 FROM up;
	END;

-- Cancels the live children of the parent's current fan-out (its failure,
-- a sync call's timeout).
CREATE FUNCTION genroc._cancel_children(p_parent genroc._instances, p_cause text) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_child bigint;
BEGIN
	FOR v_child IN SELECT id FROM genroc._instances
				   WHERE parent_id = p_parent.id AND child_gen = (p_parent.fanout ->> 'gen')::int
					 AND status NOT IN ('succeeded', 'failed', 'cancelled')
				   ORDER BY child_index LOOP
		PERFORM genroc._cancel_tree(v_child, p_cause);
	END LOOP;
END;
$$;

-- Cancels an instance and every live descendant, children first, with
-- p_cause (its descendants with p_children_cause when given).  No parent is
-- woken and no partition slot handed on: the caller decides what the end
-- means for the parent (children hold no slot; genroc.cancel hands the top
-- instance's on).
CREATE FUNCTION genroc._cancel_tree(p_instance bigint, p_cause text, p_children_cause text DEFAULT NULL)
	RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_child bigint;
	v_prev text;
	v_state text;
BEGIN
	FOR v_child IN SELECT id FROM genroc._instances
				   WHERE parent_id = p_instance
					 AND status NOT IN ('succeeded', 'failed', 'cancelled')
				   ORDER BY id FOR UPDATE LOOP
		PERFORM genroc._cancel_tree(v_child, coalesce(p_children_cause, p_cause));
	END LOOP;
	SELECT status, state INTO v_prev, v_state FROM genroc._instances WHERE id = p_instance;
	IF v_prev IN ('succeeded', 'failed', 'cancelled') THEN
		RETURN;
	END IF;
	UPDATE genroc._instances SET
		status = 'cancelled',
		task_input = NULL, resource = NULL,
		lease_owner = NULL, lease_expires = NULL,
		timeout_at = NULL, heartbeat_at = NULL,
		wait_kind = NULL, wait_until = NULL,
		activity = NULL, activity_token = NULL, activity_owner = NULL,
		error = 'genroc.Cancelled', cause = p_cause,
		updated_at = v_now, ended_at = v_now
	WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'cancelled', v_state,
		jsonb_build_object('previous_status', v_prev, 'cause', p_cause));
END;
$$;

-- A child ended (succeeded, failed, cancelled): lock its parent and let it
-- go on.  When the parent is already being advanced further up this
-- transaction (a child started by that loop ended at once), that loop sees
-- the end itself.
CREATE FUNCTION genroc._child_ended(p_child bigint) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_child genroc._instances;
	v_parent genroc._instances;
BEGIN
	SELECT * INTO STRICT v_child FROM genroc._instances WHERE id = p_child;
	IF v_child.parent_id IS NULL THEN
		RETURN;
	END IF;
	SELECT * INTO v_parent FROM genroc._instances WHERE id = v_child.parent_id FOR UPDATE;
	IF v_parent.status <> 'waiting' OR v_parent.wait_kind IS DISTINCT FROM 'children'
	   OR (v_parent.fanout ->> 'gen')::int IS DISTINCT FROM v_child.child_gen THEN
		RETURN;	-- a child of a fan-out that is over (its siblings were cancelled)
	END IF;
	IF (',' || coalesce(current_setting('genroc_fanout.active', true), '') || ',')
	   LIKE '%,' || v_parent.id || ',%' THEN
		RETURN;
	END IF;
	PERFORM genroc._advance_children(v_parent.id);
END;
$$;

/*
 * Moves a fan-out on: fails it when its failures say so, starts pending
 * children while there is room, and resumes the parent (children_done with
 * the outputs in order) when every child has ended.  The caller holds the
 * parent's row lock.  Loops rather than recursing, so a Map of a thousand
 * items whose children end at once does not nest a thousand calls.
 */
CREATE FUNCTION genroc._advance_children(p_parent bigint) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_parent genroc._instances;
	v_gen int;
	v_max int;
	v_total int;
	v_live int;
	v_pending int;
	v_failed int;
	v_first genroc._instances;
	v_tol_count numeric;
	v_tol_pct numeric;
	v_error text;
	v_cause text;
	v_child genroc._instances;
	v_outputs jsonb;
	v_active text := coalesce(current_setting('genroc_fanout.active', true), '');
BEGIN
	PERFORM set_config('genroc_fanout.active', v_active || ',' || p_parent, true);
	LOOP
		SELECT * INTO STRICT v_parent FROM genroc._instances WHERE id = p_parent;
		EXIT WHEN v_parent.status <> 'waiting' OR v_parent.wait_kind IS DISTINCT FROM 'children';
		v_gen := (v_parent.fanout ->> 'gen')::int;
		v_max := coalesce((v_parent.fanout ->> 'max_concurrency')::int, 0);
		v_total := (v_parent.fanout ->> 'total')::int;
		SELECT count(*) FILTER (WHERE status NOT IN ('succeeded', 'failed', 'cancelled')
								  AND wait_kind IS DISTINCT FROM 'pending'),
			   count(*) FILTER (WHERE wait_kind = 'pending' AND status = 'waiting'),
			   count(*) FILTER (WHERE status IN ('failed', 'cancelled'))
		INTO v_live, v_pending, v_failed
		FROM genroc._instances
		WHERE parent_id = p_parent AND child_gen = v_gen;

		IF v_failed > 0 THEN
			v_tol_count := (v_parent.fanout ->> 'tolerated_count')::numeric;
			v_tol_pct := (v_parent.fanout ->> 'tolerated_percentage')::numeric;
			v_error := NULL;
			IF v_tol_count IS NULL AND v_tol_pct IS NULL THEN
				SELECT * INTO v_first FROM genroc._instances
				WHERE parent_id = p_parent AND child_gen = v_gen
				  AND status IN ('failed', 'cancelled')
				ORDER BY ended_at, child_index LIMIT 1;
				v_error := v_first.error;
				v_cause := v_first.cause;
			ELSIF (v_tol_count IS NOT NULL AND v_failed > v_tol_count)
				  OR (v_tol_pct IS NOT NULL AND v_failed * 100 > v_tol_pct * v_total) THEN
				v_error := 'States.ExceedToleratedFailureThreshold';
				v_cause := format('%s of %s items of state "%s" failed', v_failed, v_total,
								  v_parent.state);
			END IF;
			IF v_error IS NOT NULL THEN
				PERFORM genroc._cancel_children(v_parent,
					format('state "%s" failed: %s', v_parent.state, v_error));
				PERFORM genroc._log(p_parent, 'children_failed', v_parent.state,
					jsonb_build_object('error', v_error, 'cause', v_cause, 'failed', v_failed));
				UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
				PERFORM genroc._apply_step(p_parent,
					genroc._task_request(v_parent, 'task_failed', NULL, v_error, v_cause));
				EXIT;
			END IF;
		END IF;

		IF v_pending > 0 AND (v_max = 0 OR v_live < v_max)
		   AND (v_parent.wait_until IS NULL OR v_parent.wait_until <= genroc.now()) THEN
			SELECT * INTO STRICT v_child FROM genroc._instances
			WHERE parent_id = p_parent AND child_gen = v_gen
			  AND status = 'waiting' AND wait_kind = 'pending'
			ORDER BY child_index LIMIT 1 FOR UPDATE;
			UPDATE genroc._instances SET status = 'ready', wait_kind = NULL
			WHERE id = v_child.id;
			PERFORM genroc._log(v_child.id, 'started', NULL,
				jsonb_build_object('parent', p_parent, 'index', v_child.child_index,
								   'scope', v_child.scope, 'input', v_child.input));
			PERFORM genroc._apply_step(v_child.id,
				jsonb_build_object('op', 'start', 'input', v_child.input));
			IF v_parent.fanout ->> 'kind' = 'call' AND NOT (v_parent.fanout ->> 'sync')::boolean THEN
				-- an async call goes on as soon as its child has started
				UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
				PERFORM genroc._apply_step(p_parent, genroc._task_request(v_parent, 'task_succeeded',
					jsonb_build_object('InstanceId', v_child.id), NULL, NULL));
				EXIT;
			END IF;
			CONTINUE;
		END IF;

		IF v_live = 0 AND v_pending = 0 THEN
			SELECT jsonb_agg(CASE WHEN status = 'succeeded' THEN coalesce(output, 'null'::jsonb)
								  ELSE jsonb_strip_nulls(jsonb_build_object('Error', error,
																			'Cause', cause)) END
							 ORDER BY child_index)
			INTO v_outputs
			FROM genroc._instances
			WHERE parent_id = p_parent AND child_gen = v_gen;
			UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
			IF v_parent.fanout ->> 'kind' = 'call' THEN
				PERFORM genroc._log(p_parent, 'call_done', v_parent.state, NULL);
				PERFORM genroc._apply_step(p_parent, genroc._task_request(v_parent, 'task_succeeded',
					v_outputs -> 0, NULL, NULL));
				EXIT;
			END IF;
			PERFORM genroc._log(p_parent, 'children_done', v_parent.state,
				jsonb_build_object('count', v_total, 'failed', v_failed));
			PERFORM genroc._apply_step(p_parent, jsonb_build_object(
				'op', 'children_done',
				'state', v_parent.state,
				'state_input', coalesce(v_parent.state_input, 'null'::jsonb),
				'retry_counts', v_parent.retry_counts,
				'outputs', coalesce(v_outputs, '[]'::jsonb)));
		END IF;
		EXIT;
	END LOOP;
	PERFORM set_config('genroc_fanout.active', v_active, true);
END;
$$;

-- tick: fan-outs whose retry back-off is over start their children.
CREATE FUNCTION genroc._tick_children(p_limit int) RETURNS int
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_id bigint;
	v_n int := 0;
BEGIN
	FOR v_id IN SELECT id FROM genroc._instances
				WHERE status = 'waiting' AND wait_kind = 'children'
				  AND wait_until <= genroc.now()
				ORDER BY wait_until, id LIMIT p_limit
				FOR UPDATE SKIP LOCKED LOOP
		UPDATE genroc._instances SET wait_until = NULL WHERE id = v_id;
		PERFORM genroc._advance_children(v_id);
		v_n := v_n + 1;
	END LOOP;
	RETURN v_n;
END;
$$;
/*
 * Events: a Task with "Resource": "genroc:event" parks its instance until
 * genroc.emit(instance, name, payload) or its TimeoutSeconds.
 *
 * Rows: the waiting instance has status 'waiting', wait_kind 'event', the
 * event name in column activity (what it waits for) and timeout_at from
 * TimeoutSeconds (tick fails it with States.Timeout, through the
 * interpreter, so the timeout is recorded before it takes effect).  An
 * event emitted while the instance waits for nothing of that name is kept
 * in genroc._events, oldest first, for the next wait of that name.
 */

CREATE TABLE genroc._events (
	seq			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	instance_id	bigint NOT NULL REFERENCES genroc._instances (id),
	name		text NOT NULL,
	payload		jsonb NOT NULL,
	at			timestamptz NOT NULL
);
CREATE INDEX _events_instance ON genroc._events (instance_id, name, seq);
REVOKE ALL ON genroc._events FROM PUBLIC;

-- Delivers an event to an instance waiting for it: the state goes on with
-- the payload as its task result.  The caller holds the row lock.
CREATE FUNCTION genroc._deliver_event(p_instance bigint, p_name text, p_payload jsonb)
	RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_inst genroc._instances;
BEGIN
	SELECT * INTO STRICT v_inst FROM genroc._instances WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'event_received', v_inst.state,
		jsonb_build_object('name', p_name, 'payload', p_payload));
	RETURN genroc._apply_step(p_instance,
		genroc._task_request(v_inst, 'task_succeeded', p_payload, NULL, NULL));
END;
$$;

-- The 'event' outcome of _apply_step: park, or take a kept event at once.
CREATE FUNCTION genroc._park_event(p_instance bigint, p_out jsonb) RETURNS text
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_counts jsonb := coalesce(p_out -> 'retry_counts', '[]');
	v_timeout int := (p_out ->> 'timeout_s')::int;
	v_kept genroc._events;
BEGIN
	UPDATE genroc._instances SET
		status = 'waiting',
		state = p_out ->> 'state',
		state_input = p_out -> 'state_input',
		task_input = NULL, resource = 'genroc:event',
		lease_owner = NULL, lease_expires = NULL,
		retry_counts = v_counts,
		attempt = (SELECT coalesce(sum(c::int), 0) FROM jsonb_array_elements_text(v_counts) AS c),
		interruptions = 0, only_once = false,
		timeout_s = v_timeout,
		timeout_at = v_now + v_timeout * interval '1 second',
		heartbeat_s = NULL, heartbeat_at = NULL,
		wait_kind = 'event', wait_until = NULL,
		activity = p_out ->> 'name', activity_token = NULL, activity_owner = NULL,
		updated_at = v_now
	WHERE id = p_instance;
	PERFORM genroc._log(p_instance, 'event_waiting', p_out ->> 'state',
		jsonb_build_object('name', p_out -> 'name', 'timeout_s', v_timeout));
	SELECT * INTO v_kept FROM genroc._events
	WHERE instance_id = p_instance AND name = p_out ->> 'name'
	ORDER BY seq LIMIT 1;
	IF FOUND THEN
		DELETE FROM genroc._events WHERE seq = v_kept.seq;
		RETURN genroc._deliver_event(p_instance, v_kept.name, v_kept.payload);
	END IF;
	RETURN 'waiting';
END;
$$;

/*
 * Semantics of emit: RC003 for an unknown instance, RC008 for an ended one,
 * 22023 for an empty name; a NULL payload is JSON null.  When the instance
 * waits for an event of that name, the state goes on in this transaction
 * and emit returns 'delivered'; otherwise the event is kept for the next
 * wait of that name and emit returns 'kept'.
 */
CREATE FUNCTION genroc.emit(p_instance bigint, p_name text, p_payload jsonb DEFAULT 'null')
	RETURNS text
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_inst genroc._instances := genroc._lock_instance(p_instance);
	v_payload jsonb := coalesce(p_payload, 'null'::jsonb);
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF p_name IS NULL OR p_name = '' THEN
		RAISE EXCEPTION 'p_name must be a non-empty event name' USING ERRCODE = '22023';
	END IF;
	IF v_inst.status IN ('succeeded', 'failed', 'cancelled') THEN
		RAISE EXCEPTION 'instance % has already ended (%)', p_instance, v_inst.status
			USING ERRCODE = 'RC008';
	END IF;
	IF v_inst.status = 'waiting' AND v_inst.wait_kind = 'event' AND v_inst.activity = p_name THEN
		PERFORM genroc._deliver_event(p_instance, p_name, v_payload);
		RETURN 'delivered';
	END IF;
	INSERT INTO genroc._events (instance_id, name, payload, at)
	VALUES (p_instance, p_name, v_payload, genroc.now());
	PERFORM genroc._log(p_instance, 'event_kept', v_inst.state,
		jsonb_build_object('name', p_name, 'payload', v_payload));
	RETURN 'kept';
END;
$$;
COMMENT ON FUNCTION genroc.emit(bigint, text, jsonb) IS
	'Emits a named event to an instance: delivered to its genroc:event wait of that name, or kept for the next one; RC008 when the instance has ended.';
/*
 * tick: everything time does.
 */

/*
 * Retention (DESIGN §6; README "Logs and retention").
 *
 * Semantics of prune, at most p_limit rows of each kind per call (oldest
 * first; SKIP LOCKED, so concurrent calls share the work):
 *   log_rows   log rows whose time is older than now - p_log_retention
 *              (any instance, live or not: a live instance's history
 *              loses its oldest entries)
 *   instances  concluded (succeeded, failed, cancelled) top-level instances
 *              that ended before now - p_instance_retention, with their
 *              whole tree (every instance whose root_id is theirs), their
 *              log rows and their kept events.  A tree with any live
 *              instance is left alone.  The count is of instances deleted,
 *              children included; a tree larger than what is left of
 *              p_limit is deleted from its newest instances down over
 *              several calls, the top-level instance last.
 * A retention of 0 (or NULL) prunes nothing of that kind; a negative one
 * is 22023.  A deleted instance's id then answers RC003.
 * Foreign keys: a child's id is always larger than its parent's (children
 * are created after their parent), so deleting a tree's instances from
 * the largest id down in one statement never leaves a row whose
 * parent_id or root_id points at a deleted one.
 */
CREATE FUNCTION genroc.prune(p_log_retention interval, p_instance_retention interval,
							 p_limit int DEFAULT 1000) RETURNS jsonb
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('progress');
	RETURN genroc._prune(p_log_retention, p_instance_retention, p_limit);
END;
$$;
COMMENT ON FUNCTION genroc.prune(interval, interval, int) IS
	'Deletes log rows older than p_log_retention and concluded top-level instances (with their children, logs and kept events) that ended longer than p_instance_retention ago, at most p_limit of each; 0 keeps that kind; returns {"log_rows", "instances"}.';

CREATE FUNCTION genroc._prune(p_log_retention interval, p_instance_retention interval,
							  p_limit int) RETURNS jsonb
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_log_rows int := 0;
	v_instances int := 0;
	v_root bigint;
	v_tree bigint[];
	v_n int;
BEGIN
	IF p_limit IS NULL THEN
		RAISE EXCEPTION 'p_limit must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_limit < 1 THEN
		RAISE EXCEPTION 'p_limit must be at least 1, not %', p_limit USING ERRCODE = '22023';
	END IF;
	IF p_log_retention < interval '0' OR p_instance_retention < interval '0' THEN
		RAISE EXCEPTION 'a retention must not be negative'
			USING ERRCODE = '22023', HINT = 'Use 0 to keep everything of that kind.';
	END IF;

	IF p_log_retention > interval '0' THEN
		DELETE FROM genroc._log l
		WHERE l.seq IN (SELECT o.seq FROM genroc._log o
						WHERE o.at < v_now - p_log_retention
						ORDER BY o.at LIMIT p_limit FOR UPDATE SKIP LOCKED);
		GET DIAGNOSTICS v_log_rows = ROW_COUNT;
	END IF;

	IF p_instance_retention > interval '0' THEN
		FOR v_root IN SELECT r.id FROM genroc._instances r
					  WHERE r.parent_id IS NULL AND r.ended_at IS NOT NULL
						AND r.ended_at < v_now - p_instance_retention
						AND r.status IN ('succeeded', 'failed', 'cancelled')
						AND NOT EXISTS (SELECT 1 FROM genroc._instances c
										WHERE c.root_id = r.id
										  AND c.status NOT IN ('succeeded', 'failed', 'cancelled'))
					  ORDER BY r.ended_at, r.id LIMIT p_limit
					  FOR UPDATE SKIP LOCKED LOOP
			EXIT WHEN v_instances >= p_limit;
			-- the largest ids of the tree, as many as the limit leaves room for
			v_tree := ARRAY(SELECT t.id FROM genroc._instances t
							WHERE t.root_id = v_root OR t.id = v_root
							ORDER BY t.id DESC LIMIT p_limit - v_instances);
			DELETE FROM genroc._log l WHERE l.instance_id = ANY (v_tree);
			DELETE FROM genroc._events e WHERE e.instance_id = ANY (v_tree);
			DELETE FROM genroc._instances i WHERE i.id = ANY (v_tree);
			GET DIAGNOSTICS v_n = ROW_COUNT;
			v_instances := v_instances + v_n;
		END LOOP;
	END IF;
	RETURN jsonb_build_object('log_rows', v_log_rows, 'instances', v_instances);
END;
$$;

/*
 * Semantics of tick, kinds in this order, each at most p_limit rows (oldest
 * deadline first, then id; FOR UPDATE SKIP LOCKED, so concurrent ticks share
 * the work):
 *   timeouts    a running handler task past now >= claim + TimeoutSeconds,
 *               a parked activity or event wait past parking +
 *               TimeoutSeconds, or a sync call past its child's start +
 *               TimeoutSeconds (the child is cancelled first):
 *               task_failed States.Timeout
 *   heartbeats  a claimed activity past its heartbeat deadline:
 *               task_failed States.HeartbeatTimeout
 *   lapsed      a running task whose lease expired: genroc._interrupt
 *   timers      a Wait whose time has come: timer_fired
 *   run_at      a delayed start whose time has come: the first step (or
 *               'queued' for a partition slot, genroc._admit)
 *   pruning     genroc._prune with this session's genroc.log_retention and
 *               genroc.instance_retention (both 0 unless set: nothing is
 *               pruned), p_limit of each kind
 * Retry back-off needs no tick: the row is ready with a later eligible_at.
 * Returns {"timeouts", "heartbeats", "lapsed", "timers", "run_at",
 * "pruned_log_rows", "pruned_instances"} counts.
 */
CREATE FUNCTION genroc.tick(p_limit int DEFAULT 1000) RETURNS jsonb
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_now timestamptz := genroc.now();
	v_inst genroc._instances;
	v_timeouts int := 0;
	v_heartbeats int := 0;
	v_lapsed int := 0;
	v_timers int := 0;
	v_run_at int := 0;
	v_settings jsonb;
	v_pruned jsonb;
BEGIN
	PERFORM genroc._flush_commit('progress');
	IF p_limit IS NULL THEN
		RAISE EXCEPTION 'p_limit must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_limit < 1 THEN
		RAISE EXCEPTION 'p_limit must be at least 1, not %', p_limit USING ERRCODE = '22023';
	END IF;

	FOR v_inst IN SELECT * FROM genroc._instances i
				  WHERE i.timeout_at <= v_now
					AND (i.status = 'running'
						 OR (i.status = 'waiting' AND i.wait_kind IN ('activity', 'event', 'children')))
				  ORDER BY i.timeout_at, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		IF v_inst.wait_kind = 'children' THEN	-- a sync call: its child is given up
			PERFORM genroc._cancel_children(v_inst,
				format('state "%s" timed out after %s seconds', v_inst.state, v_inst.timeout_s));
		END IF;
		PERFORM genroc._fail_task(v_inst.id, 'States.Timeout',
			format('task "%s" did not finish within %s seconds', v_inst.state, v_inst.timeout_s));
		v_timeouts := v_timeouts + 1;
	END LOOP;

	FOR v_inst IN SELECT * FROM genroc._instances i
				  WHERE i.heartbeat_at <= v_now AND i.status = 'waiting' AND i.wait_kind = 'activity'
				  ORDER BY i.heartbeat_at, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		PERFORM genroc._fail_task(v_inst.id, 'States.HeartbeatTimeout',
			format('activity "%s" sent no heartbeat within %s seconds', v_inst.activity, v_inst.heartbeat_s));
		v_heartbeats := v_heartbeats + 1;
	END LOOP;

	FOR v_inst IN SELECT * FROM genroc._instances i
				  WHERE i.lease_expires <= v_now AND i.status = 'running'
				  ORDER BY i.lease_expires, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		PERFORM genroc._interrupt(v_inst.id, 'lease lapsed');
		v_lapsed := v_lapsed + 1;
	END LOOP;

	FOR v_inst IN SELECT * FROM genroc._instances i
				  WHERE i.wait_until <= v_now AND i.status = 'waiting' AND i.wait_kind = 'timer'
				  ORDER BY i.wait_until, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		PERFORM genroc._log(v_inst.id, 'wait_ended', v_inst.state, NULL);
		PERFORM genroc._apply_step(v_inst.id, jsonb_build_object(
			'op', 'timer_fired', 'state', v_inst.state,
			'state_input', coalesce(v_inst.state_input, 'null'::jsonb)));
		v_timers := v_timers + 1;
	END LOOP;
	-- a retried Parallel or Map whose back-off is over counts as a timer:
	-- its children start (65_children.sql)
	v_timers := v_timers + genroc._tick_children(p_limit);

	FOR v_inst IN SELECT * FROM genroc._instances i
				  WHERE i.wait_until <= v_now AND i.status = 'waiting' AND i.wait_kind = 'run_at'
				  ORDER BY i.wait_until, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		PERFORM genroc._log(v_inst.id, 'run_at_reached', NULL, NULL);
		PERFORM genroc._admit(v_inst.id);	-- waits for a partition slot if it has one
		v_run_at := v_run_at + 1;
	END LOOP;

	v_settings := genroc._log_settings();
	v_pruned := genroc._prune((v_settings ->> 'log_retention_s')::int * interval '1 second',
							  (v_settings ->> 'instance_retention_s')::int * interval '1 second',
							  p_limit);

	RETURN jsonb_build_object('timeouts', v_timeouts, 'heartbeats', v_heartbeats,
							  'lapsed', v_lapsed, 'timers', v_timers, 'run_at', v_run_at,
							  'pruned_log_rows', v_pruned -> 'log_rows',
							  'pruned_instances', v_pruned -> 'instances');
END;
$$;
COMMENT ON FUNCTION genroc.tick(int) IS
	'Does the time-driven work, at most p_limit items of each kind: task and activity timeouts, missed heartbeats, lapsed leases, fired timers, delayed starts, and pruning by the settings genroc.log_retention and genroc.instance_retention; returns the counts.';
/*
 * API tokens: the credentials `genroc serve|api --auth` accepts as
 * "Authorization: Bearer <token>" (README "Authentication").
 *
 * A token's text is grt_<id>_<secret>: id is 8 to 32 of a-z and 0-9 (the
 * row's key, so a check is one index lookup), secret is 32 to 128 of A-Z,
 * a-z and 0-9.  Only the sha256 of the whole text is stored; the text itself
 * is shown once, by token_create.  The secret carries at least 128 random
 * bits, so an unsalted hash is enough, and comparing hashes with "=" leaks
 * nothing about the secret (at most which bytes of a hash matched).
 *
 * Permissions: admin, operator, worker, reader; the HTTP server decides what
 * each one may do.  A revoked token keeps its row (who made it, when it was
 * revoked) and never verifies again.
 *
 * Privileges: these functions hand out credentials, so PUBLIC may not run
 * them.  An admin grants EXECUTE on genroc.token_verify to the role genroc's
 * HTTP server connects as (and on token_create for a seed tokens file), and
 * on token_create / token_list / token_revoke to whoever administers tokens.
 */

CREATE TABLE genroc._tokens (
	id			text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{8,32}$'),
	name		text NOT NULL CHECK (name <> ''),
	hash		bytea NOT NULL,			-- sha256 of the token text, never the text
	permissions	text[] NOT NULL,		-- sorted, unique
	created_by	text NOT NULL,			-- a token's name, a JWT subject, or "cli"
	created_at	timestamptz NOT NULL,
	revoked_at	timestamptz
);
REVOKE ALL ON genroc._tokens FROM PUBLIC;

-- The id of a token text, or NULL when the text is not grt_<id>_<secret>.
CREATE FUNCTION genroc._token_id(p_token text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN substring(p_token FROM '^grt_([a-z0-9]{8,32})_[A-Za-z0-9]{32,128}$');

-- Semantics: the permissions sorted and without repeats; NULL is 22004, an
-- empty list or an unknown name (named) is 22023.
CREATE FUNCTION genroc._check_permissions(p_permissions text[]) RETURNS text[]
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_p text;
BEGIN
	IF p_permissions IS NULL THEN
		RAISE EXCEPTION 'p_permissions must not be null' USING ERRCODE = '22004';
	END IF;
	IF cardinality(p_permissions) = 0 THEN
		RAISE EXCEPTION 'a token needs at least one permission' USING ERRCODE = '22023',
			HINT = 'Permissions: admin, operator, worker, reader.';
	END IF;
	FOREACH v_p IN ARRAY p_permissions LOOP
		IF v_p IS NULL OR v_p NOT IN ('admin', 'operator', 'worker', 'reader') THEN
			RAISE EXCEPTION 'unknown permission "%"', coalesce(v_p, 'null') USING ERRCODE = '22023',
				HINT = 'Permissions: admin, operator, worker, reader.';
		END IF;
	END LOOP;
	RETURN ARRAY(SELECT DISTINCT p FROM unnest(p_permissions) p ORDER BY p);
END;
$$;

CREATE FUNCTION genroc._token_json(p_token genroc._tokens) RETURNS jsonb
	LANGUAGE sql IMMUTABLE
	RETURN jsonb_build_object(
		'id', p_token.id, 'name', p_token.name, 'permissions', to_jsonb(p_token.permissions),
		'created_by', p_token.created_by, 'created_at', genroc._iso(p_token.created_at),
		'revoked_at', genroc._iso(p_token.revoked_at));

/*
 * Semantics of token_create: without p_secret a new token (random id and
 * secret); with p_secret (a whole token text, e.g. from a seed tokens file)
 * that text's hash is stored under its id.  Seeding is idempotent: the same
 * text with the same name and permissions again returns the existing token
 * (is_new false, revoked_at as it is: a revoked token stays revoked); the id
 * with another secret, name or permissions is 23505 naming the id.  Returns
 * {id, name, permissions, created_by, created_at, revoked_at, token, is_new};
 * token, the full text, is shown here only.
 */
CREATE FUNCTION genroc.token_create(p_name text, p_permissions text[], p_created_by text,
									p_secret text DEFAULT NULL) RETURNS jsonb
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_permissions text[];
	v_token text := p_secret;
	v_id text;
	v_hash bytea;
	v_row genroc._tokens;
	v_new boolean := true;
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF p_name IS NULL OR p_created_by IS NULL THEN
		RAISE EXCEPTION '% must not be null', CASE WHEN p_name IS NULL THEN 'p_name' ELSE 'p_created_by' END
			USING ERRCODE = '22004';
	END IF;
	IF p_name = '' THEN
		RAISE EXCEPTION 'a token name must not be empty' USING ERRCODE = '22023';
	END IF;
	IF p_created_by = '' THEN
		RAISE EXCEPTION 'p_created_by must not be empty' USING ERRCODE = '22023';
	END IF;
	v_permissions := genroc._check_permissions(p_permissions);
	IF v_token IS NULL THEN
		-- gen_random_uuid draws from the server's strong random source; the
		-- first 12 hex digits of a v4 UUID are all random, and two UUIDs
		-- give 244 random bits of secret.
		v_id := substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
		v_token := 'grt_' || v_id || '_' || replace(gen_random_uuid()::text, '-', '')
				   || replace(gen_random_uuid()::text, '-', '');
	ELSE
		v_id := genroc._token_id(v_token);
		IF v_id IS NULL THEN
			RAISE EXCEPTION 'p_secret is not a token text grt_<id>_<secret>' USING ERRCODE = '22023',
				DETAIL = 'The id is 8 to 32 of a-z and 0-9, the secret 32 to 128 of A-Z, a-z and 0-9.';
		END IF;
	END IF;
	v_hash := sha256(convert_to(v_token, 'UTF8'));
	INSERT INTO genroc._tokens (id, name, hash, permissions, created_by, created_at)
	VALUES (v_id, p_name, v_hash, v_permissions, p_created_by, genroc.now())
	ON CONFLICT (id) DO NOTHING
	RETURNING * INTO v_row;
	IF NOT FOUND THEN
		SELECT * INTO v_row FROM genroc._tokens t WHERE t.id = v_id;
		IF p_secret IS NULL OR v_row.hash <> v_hash OR v_row.name <> p_name
		   OR v_row.permissions <> v_permissions THEN
			RAISE EXCEPTION 'token "%" already exists with another secret, name or permissions', v_id
				USING ERRCODE = '23505', HINT = 'Revoke it if it must go, and give a new token another id.';
		END IF;
		v_new := false;
	END IF;
	RETURN genroc._token_json(v_row) || jsonb_build_object('token', v_token, 'is_new', v_new);
END;
$$;
COMMENT ON FUNCTION genroc.token_create(text, text[], text, text) IS
	'Creates an API token with permissions (admin, operator, worker, reader); returns it with its text, shown only here. p_secret: store that token text instead of a new one (seeding).';

-- Semantics: {id, name, permissions, created_by} of a live token whose text
-- hashes to the stored hash; NULL for anything else (malformed, unknown,
-- wrong secret, revoked).  No caching anywhere: a revoke is seen at once.
CREATE FUNCTION genroc.token_verify(p_token text) RETURNS jsonb
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	RETURN (SELECT jsonb_build_object('id', t.id, 'name', t.name, 'permissions', to_jsonb(t.permissions),
									  'created_by', t.created_by)
			FROM genroc._tokens t
			WHERE t.id = genroc._token_id(p_token) AND t.revoked_at IS NULL
			  AND t.hash = sha256(convert_to(p_token, 'UTF8')));
COMMENT ON FUNCTION genroc.token_verify(text) IS
	'The token''s id, name, permissions and creator when the text is a live token; NULL otherwise.';

CREATE FUNCTION genroc.token_list() RETURNS SETOF jsonb
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._token_json(t) FROM genroc._tokens t ORDER BY t.created_at, t.id;
	END;
COMMENT ON FUNCTION genroc.token_list() IS
	'Every token, revoked ones too: id, name, permissions, created_by, created_at, revoked_at (never the text or its hash).';

-- Semantics: revoked at genroc.now(), at once for every server; revoking a
-- revoked token keeps its first time; an unknown id is 42704.
CREATE FUNCTION genroc.token_revoke(p_id text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._flush_commit('outside');
	IF p_id IS NULL THEN
		RAISE EXCEPTION 'p_id must not be null' USING ERRCODE = '22004';
	END IF;
	UPDATE genroc._tokens t SET revoked_at = coalesce(t.revoked_at, genroc.now()) WHERE t.id = p_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'token "%" does not exist', p_id USING ERRCODE = '42704';
	END IF;
END;
$$;
COMMENT ON FUNCTION genroc.token_revoke(text) IS
	'Revokes a token: it stops verifying at once.';

-- Credentials: not for PUBLIC (see the top of this file for the grants).
REVOKE ALL ON FUNCTION genroc.token_create(text, text[], text, text), genroc.token_verify(text),
	genroc.token_list(), genroc.token_revoke(text) FROM PUBLIC;
/*
 * Read-only views for psql, and the privileges of the whole API.
 */

CREATE VIEW genroc.instances AS
	SELECT i.id, d.name AS definition, d.version, i.status, i.state, i.resource, i.queue,
		   i.priority, i.attempt, i.interruptions, i.lease_owner, i.lease_epoch,
		   i.lease_expires, i.eligible_at, i.wait_kind, i.wait_until, i.activity, i.error,
		   i.labels, i.name, i.idempotency_key, i.created_at, i.updated_at, i.ended_at,
		   i.parent_id, i.root_id, i.child_index, i.scope
	FROM genroc._instances i
	JOIN genroc._definitions d ON d.id = i.definition_id;
COMMENT ON VIEW genroc.instances IS 'Every instance, one row each (payloads left out); for psql.';

CREATE VIEW genroc.workers AS
	SELECT * FROM genroc.list_workers();
COMMENT ON VIEW genroc.workers IS 'Every registered worker, whether it is live and how many tasks it holds; for psql.';

-- The views show every instance: an admin grants SELECT on them to the
-- roles that may see that (e.g. GRANT SELECT ON genroc.instances TO ops).
REVOKE ALL ON genroc.instances, genroc.workers FROM PUBLIC;

-- Private helpers (genroc._*) are for the public functions only.
DO $$
DECLARE
	v_fn regprocedure;
BEGIN
	FOR v_fn IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
				WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname LIKE '\_%' LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
	END LOOP;
END;
$$;
