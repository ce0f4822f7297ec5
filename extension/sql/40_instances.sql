/*
 * Instances: start, cancel, and reading them.
 */

-- Parses a timestamp option; 22007 naming the option when it does not parse,
-- 22008 when it is outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z
-- (infinity, -infinity, year 1, BC dates: docs/limits.md "Identifier limits").
-- The earliest is the epoch: the interpreter counts milliseconds from it.
CREATE FUNCTION genroc._parse_time(p_value jsonb, p_option text) RETURNS timestamptz
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_at timestamptz;
BEGIN
	IF jsonb_typeof(p_value) <> 'string' THEN
		RAISE EXCEPTION 'option "%" must be a timestamp string, not %', p_option, p_value
			USING ERRCODE = '22007';
	END IF;
	BEGIN
		v_at := (p_value #>> '{}')::timestamptz;
	EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow THEN
		RAISE EXCEPTION 'invalid timestamp for option "%": %', p_option, p_value
			USING ERRCODE = '22007';
	END;
	IF NOT (v_at >= timestamptz '1970-01-01 00:00:00+00' AND v_at < timestamptz '10000-01-01 00:00:00+00') THEN
		RAISE EXCEPTION 'option "%" must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, not %',
			p_option, p_value USING ERRCODE = '22008';
	END IF;
	RETURN v_at;
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

-- The start options (genroc.start, genroc.start_many) read and checked:
-- those not in p_allowed and every malformed one are 22023 naming the
-- option (22007 / 22008 for run_at).  An option not given is NULL.
CREATE FUNCTION genroc._start_options(p_options jsonb, p_allowed text[], p_what text,
	OUT version int, OUT priority int, OUT run_at timestamptz, OUT labels jsonb,
	OUT idempotency_key text, OUT partition_key text, OUT name text)
	LANGUAGE plpgsql STABLE
AS $$
BEGIN
	PERFORM genroc._check_options(p_options, p_allowed, p_what);
	IF p_options ? 'version' THEN
		version := genroc._int_option(p_options -> 'version', 'version');
	END IF;
	IF p_options ? 'priority' THEN
		priority := genroc._int_option(p_options -> 'priority', 'priority');
	END IF;
	IF p_options ? 'run_at' THEN
		run_at := genroc._parse_time(p_options -> 'run_at', 'run_at');
	END IF;
	IF p_options ? 'labels' THEN
		labels := genroc._labels_option(p_options -> 'labels', 'labels');
		PERFORM genroc._check_name(l.key, 'a label key'),
				genroc._check_name(l.value, format('label "%s"', left(l.key, 200)), 1000)
		FROM jsonb_each_text(labels) AS l;
		-- the region label picks <queue>.<region> (55_queues.sql)
		IF labels ? 'region' AND (labels ->> 'region' = '' OR strpos(labels ->> 'region', '.') > 0) THEN
			RAISE EXCEPTION 'label "region" must be a non-empty name without ".", not "%"', labels ->> 'region'
				USING ERRCODE = '22023';
		END IF;
	END IF;
	IF p_options ? 'idempotency_key' THEN
		idempotency_key := genroc._text_option(p_options -> 'idempotency_key', 'idempotency_key');
		PERFORM genroc._check_name(idempotency_key, 'option "idempotency_key"');
	END IF;
	IF p_options ? 'partition_key' THEN
		partition_key := genroc._text_option(p_options -> 'partition_key', 'partition_key');
		PERFORM genroc._check_name(partition_key, 'option "partition_key"');
	END IF;
	IF p_options ? 'name' THEN
		name := genroc._text_option(p_options -> 'name', 'name');
		PERFORM genroc._check_name(name, 'option "name"');
	END IF;
END;
$$;

/*
 * Semantics of start:
 *   the latest version of the definition, or option "version" (RC002 if none),
 *     or a version drawn by option "alias" (32_aliases.sql); RC017 for a
 *     deleted definition or version
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
	v_alias text;
	v_id bigint;
	v_status text;
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._check_definition(p_definition, 'admin');
	IF p_definition IS NULL THEN
		RAISE EXCEPTION 'p_definition must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_input IS NULL THEN
		RAISE EXCEPTION 'p_input must not be null (pass ''null''::jsonb for a JSON null)'
			USING ERRCODE = '22004';
	END IF;
	PERFORM genroc._check_depth(p_input, 'the input');
	IF v_options <> '{}' THEN
		SELECT o.version, coalesce(o.priority, 0), o.run_at, coalesce(o.labels, '{}'), o.idempotency_key,
			   o.partition_key, o.name
		INTO v_version, v_priority, v_run_at, v_labels, v_key, v_partition, v_name
		FROM genroc._start_options(v_options,
			ARRAY['alias', 'idempotency_key', 'labels', 'name', 'partition_key', 'priority', 'run_at', 'version'],
			'start options') AS o;
		-- a start by an alias keeps it as a label (lists filter by it)
		v_alias := genroc._text_option(v_options -> 'alias', 'alias');
		v_labels := v_labels || jsonb_strip_nulls(jsonb_build_object('genroc:alias', v_alias));
	END IF;

	v_def := genroc._start_definition(p_definition, v_version, v_alias);

	IF v_key IS NOT NULL THEN
		-- an idempotency key is one for the whole database: another role's
		-- instance under it is neither shown nor taken over
		PERFORM genroc._check_owner((SELECT i.owner FROM genroc._instances i WHERE i.idempotency_key = v_key),
									'admin', format('idempotency key "%s"', v_key));
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
			greatest(v_now, coalesce(v_run_at, v_now)), genroc._store_value(p_input, 'the input'), v_key,
			v_labels, v_partition, v_name, v_priority,
			CASE WHEN v_run_at > v_now THEN 'run_at' END,
			CASE WHEN v_run_at > v_now THEN v_run_at END,
			v_now, v_now, genroc._route(v_def, v_labels))
	ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
	RETURNING i.id INTO v_id;
	IF v_id IS NULL THEN
		-- a concurrent start with the same key committed first
		PERFORM genroc._check_owner((SELECT i.owner FROM genroc._instances i WHERE i.idempotency_key = v_key),
									'admin', format('idempotency key "%s"', v_key));
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
	'Starts an instance of a definition and runs its inline states; options: version or alias, idempotency_key, priority, run_at, labels, partition_key, name.';

/*
 * Semantics of start_many: genroc.start for each input of the JSON array
 * p_inputs (at most 10,000; 54000 beyond), all of one definition version
 * and with the same options (start's, but idempotency_key and name, which
 * belong to one instance: 22023), in one transaction, as one statement
 * where it can be: the instances whose first step stops at a handler task
 * (most definitions) are written with one insert, their log with another,
 * and one NOTIFY wakes the queue's workers.  The others (a first step that
 * waits, fans out, ends or parks an activity; a run_at later than now; a
 * partition_key) take start's own path, one by one.  Returns a row per
 * input, in their order; an error in any input starts none (22023 names
 * its index for a non-array, 54000 for a payload too deep).
 */
CREATE FUNCTION genroc.start_many(p_definition text, p_inputs jsonb, p_options jsonb DEFAULT '{}')
	RETURNS TABLE (instance_id bigint, status text)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	c_max_inputs constant int := 10000;
	v_options jsonb := coalesce(p_options, '{}');
	v_now timestamptz := genroc.now();
	v_now_ms bigint := genroc._ms(v_now);
	v_def genroc._definitions;
	v_version int;
	v_priority int := 0;
	v_run_at timestamptz;
	v_labels jsonb := '{}';
	v_partition text;
	v_queue text;
	v_count int;
	v_ids bigint[];
	v_fast boolean[];
	v_input jsonb;
	v_k int;
	v_task jsonb;
	v_task_entered jsonb;
	v_task_state text;
	v_task_resource text;
	v_task_retry jsonb;
	v_task_only_once boolean;
	v_task_timeout int;
	v_task_heartbeat int;
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._check_definition(p_definition, 'admin');
	IF p_definition IS NULL THEN
		RAISE EXCEPTION 'p_definition must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_inputs IS NULL THEN
		RAISE EXCEPTION 'p_inputs must not be null' USING ERRCODE = '22004';
	END IF;
	IF jsonb_typeof(p_inputs) <> 'array' THEN
		RAISE EXCEPTION 'p_inputs must be a JSON array of inputs, not a JSON %', jsonb_typeof(p_inputs)
			USING ERRCODE = '22023';
	END IF;
	v_count := jsonb_array_length(p_inputs);
	IF v_count > c_max_inputs THEN
		RAISE EXCEPTION 'p_inputs holds % inputs; at most % start in one call', v_count, c_max_inputs
			USING ERRCODE = '54000';
	END IF;
	PERFORM genroc._check_depth(e.v, format('the input at index %s', e.n - 1))
	FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e(v, n);
	IF v_options <> '{}' THEN
		SELECT o.version, coalesce(o.priority, 0), o.run_at, coalesce(o.labels, '{}'), o.partition_key
		INTO v_version, v_priority, v_run_at, v_labels, v_partition
		FROM genroc._start_options(v_options,
			ARRAY['labels', 'partition_key', 'priority', 'run_at', 'version'],
			'start_many options') AS o;
	END IF;

	v_def := genroc._start_definition(p_definition, v_version, NULL);
	IF v_count = 0 THEN
		RETURN;
	END IF;

	IF v_run_at > v_now OR v_partition IS NOT NULL THEN
		-- start's path for each, all of the version found here
		FOR v_input IN SELECT e.v FROM jsonb_array_elements(p_inputs) AS e(v) LOOP
			RETURN QUERY SELECT s.instance_id, s.status
				FROM genroc.start(p_definition, v_input,
								  v_options || jsonb_build_object('version', v_def.version)) AS s;
		END LOOP;
		RETURN;
	END IF;

	-- The first step of every input, then each instance written as that
	-- step left it when it stops at a handler task ("fast": what
	-- _apply_step writes for a 'task' outcome without delay), else as start
	-- writes it before genroc._admit runs the step again below.  A
	-- definition whose first state is a Task the input reaches unchanged
	-- (genroc._start_task) is not stepped per input: every start stops
	-- there, the input as its state and task input, the rest the same.
	v_queue := genroc._route(v_def, v_labels);
	v_task := genroc._start_task(v_def.hash, v_def.definition);
	IF v_task IS NOT NULL THEN
		v_task_entered := v_task -> 'entered';
		v_task_state := v_task ->> 'state';
		v_task_resource := v_task ->> 'resource';
		v_task_retry := v_task -> 'retry_counts';
		v_task_only_once := (v_task ->> 'only_once')::boolean;
		v_task_timeout := (v_task ->> 'timeout_s')::int;
		v_task_heartbeat := (v_task ->> 'heartbeat_s')::int;
	END IF;
	WITH item AS MATERIALIZED (
		SELECT e.n, e.v AS input, nextval('genroc._instances_id_seq') AS id
		FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e(v, n)
		ORDER BY e.n
	), answered AS MATERIALIZED (
		SELECT it.n, it.id, it.input,
			   CASE WHEN v_task IS NULL
					THEN genroc._step_start(v_def.hash, v_def.definition, it.input, v_now_ms, it.id, NULL,
											genroc._iso(v_now), v_def.name, v_def.version, NULL) END
				 AS answer
		FROM item it
	), stepped AS MATERIALIZED (
		-- the outcome's fields, each read once (without a step: _start_task's)
		SELECT a.n, a.id, a.input, a.answer -> 'variables' AS variables, t.*,
			   (t.kind = 'task' AND t.resource NOT LIKE 'activity:%' AND t.delay_ms = 0
				AND NOT coalesce(o.out ? 'token', false)) AS fast
		FROM answered a, LATERAL (SELECT a.answer -> 'outcome' AS out) o,
			 LATERAL (SELECT a.answer -> 'entered' AS entered, o.out ->> 'kind' AS kind,
							 o.out ->> 'state' AS state, o.out -> 'state_input' AS state_input,
							 o.out -> 'task_input' AS task_input, o.out ->> 'resource' AS resource,
							 coalesce(o.out -> 'retry_counts', '[]') AS retry_counts,
							 (SELECT coalesce(sum(c::int), 0)
							  FROM jsonb_array_elements_text(o.out -> 'retry_counts') AS c) AS attempt,
							 coalesce((o.out ->> 'only_once')::boolean, false) AS only_once,
							 (o.out ->> 'timeout_s')::int AS timeout_s,
							 (o.out ->> 'heartbeat_s')::int AS heartbeat_s,
							 coalesce((o.out ->> 'delay_ms')::bigint, 0) AS delay_ms
					 WHERE v_task IS NULL
					 UNION ALL
					 SELECT v_task_entered, 'task', v_task_state, a.input, a.input, v_task_resource,
							v_task_retry, 0, v_task_only_once, v_task_timeout, v_task_heartbeat, 0
					 WHERE v_task IS NOT NULL) t
	), ins AS (
		INSERT INTO genroc._instances AS i (id, definition_id, status, eligible_at, input, labels, priority,
			created_at, updated_at, queue, state, state_input, task_input, resource, retry_counts, attempt,
			only_once, timeout_s, heartbeat_s, variables)
		OVERRIDING SYSTEM VALUE
		SELECT s.id, v_def.id, 'ready', v_now, genroc._store_value(s.input, 'the input'), v_labels, v_priority,
			   v_now, v_now, v_queue,
			   CASE WHEN s.fast THEN s.state END,
			   CASE WHEN s.fast THEN genroc._store_value(s.state_input, 'the state input') END,
			   CASE WHEN s.fast THEN genroc._store_value(s.task_input, 'the task input') END,
			   CASE WHEN s.fast THEN s.resource END,
			   CASE WHEN s.fast THEN s.retry_counts END,
			   CASE WHEN s.fast THEN s.attempt ELSE 0 END,
			   s.fast AND s.only_once,
			   CASE WHEN s.fast THEN s.timeout_s END,
			   CASE WHEN s.fast THEN s.heartbeat_s END,
			   CASE WHEN s.fast THEN s.variables END
		FROM stepped s ORDER BY s.n
		RETURNING i.id
	), logged AS (
		-- start's 'started' row; for a fast one the step's 'entered' rows
		-- and its 'task_scheduled', as _apply_step writes them
		INSERT INTO genroc._log (instance_id, at, event, state, detail)
		SELECT l.id, v_now, l.event, l.state, l.detail
		FROM (SELECT s.n, 0::bigint AS k, s.id, 'started' AS event, NULL::text AS state,
					 genroc._log_payloads(jsonb_build_object('definition', v_def.name,
						'version', v_def.version, 'input', s.input)) AS detail
			  FROM stepped s
			  UNION ALL
			  SELECT s.n, t.k, s.id, 'entered', t.e ->> 'state', jsonb_build_object('type', t.e -> 'type')
			  FROM stepped s,
				   jsonb_array_elements(coalesce(s.entered, '[]')) WITH ORDINALITY AS t(e, k)
			  WHERE s.fast
			  UNION ALL
			  SELECT s.n, 1000000, s.id, 'task_scheduled', s.state,
					 genroc._log_payloads(jsonb_build_object('resource', s.resource, 'input', s.task_input,
						'attempt', s.attempt, 'delay_ms', 0))
			  FROM stepped s WHERE s.fast) l
		ORDER BY l.n, l.k
		RETURNING 1
	)
	SELECT array_agg(s.id ORDER BY s.n), array_agg(s.fast ORDER BY s.n)
	INTO v_ids, v_fast
	FROM stepped s;	-- ins and logged run whether read or not

	IF true = ANY (v_fast) THEN
		PERFORM pg_notify('genroc', '');
	END IF;
	FOR v_k IN 1 .. v_count LOOP
		instance_id := v_ids[v_k];
		status := CASE WHEN v_fast[v_k] THEN 'ready' ELSE genroc._admit(v_ids[v_k]) END;
		RETURN NEXT;
	END LOOP;
	PERFORM genroc._flush_commit('outside');
END;
$$;
COMMENT ON FUNCTION genroc.start_many(text, jsonb, jsonb) IS
	'Starts an instance of a definition for each input of a JSON array (at most 10,000), in one transaction; options: version, priority, run_at, labels, partition_key.';

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
-- ends as 'cancelled' with error p_error (default genroc.Cancelled, at
-- most 256 characters) and cause p_cause (default "cancelled by request",
-- at most 32768), both in the log's 'cancelled' entry when given.  An
-- ended one: RC008.  Its live children are cancelled too (recursively,
-- 65_children.sql, with genroc.Cancelled); a cancelled child counts as a
-- failed one for its parent's fan-out.
--
-- Lock order: a child that ends locks itself, then its parent (to wake
-- it); cancel locks the live descendants deepest first and the instance
-- last, the same order, so it waits for such a child instead of
-- deadlocking with it.  Other orders remain possible (a fan-out that fails
-- locks its parent, then cancels the siblings; a child started while the
-- tree was being locked): a deadlock is then retried here, up to 5 times.
CREATE FUNCTION genroc.cancel(p_instance bigint, p_error text DEFAULT NULL, p_cause text DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_cancel'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.cancel(bigint, text, text) IS
	'Ends a live instance as cancelled with an optional error and cause (its lease, timer or activity is dropped); RC008 when it has already ended.';

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
CREATE FUNCTION genroc.retry(p_instance bigint) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_retry'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.retry(bigint) IS
	'Runs a failed top-level instance again from the state it failed in (RC009 when it is not failed).';

CREATE FUNCTION genroc.resume(p_instance bigint, p_output jsonb DEFAULT 'null') RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_resume'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.resume(bigint, jsonb) IS
	'Continues a failed top-level instance after its failed Task as if it had returned p_output (RC009 when it is not failed).';

/*
 * redrive(id): a failed, timed-out or cancelled top-level instance goes on
 * from where it stopped; a Map or Parallel reruns only its children that did
 * not succeed (engine/redrive.hpp says how).  RC009 when it is running,
 * waiting, succeeded or a child; RC003 when there is none.  Returns the new
 * status.  The log gets 'redriven' with the count of redrives so far and
 * p_client_token, if given: the same token again (one of the last 10)
 * answers the status and redrives nothing.
 */
CREATE FUNCTION genroc.redrive(p_instance bigint, p_client_token text DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_redrive'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.redrive(bigint, text) IS
	'Continues a failed, timed-out or cancelled top-level instance from where it stopped; a Map or Parallel reruns only its unsuccessful children (RC009 otherwise); the same p_client_token as one of its last 10 redrives redrives nothing again.';

/*
 * Reading instances: the engine's (engine/instances.cpp, entry points in
 * extension/instances.c), STABLE: they write nothing.
 *
 * get_instance(id[, options]): the instance as JSON (timestamps ISO-8601
 * UTC), its ASL variables ({} before any Assign) and, when it fanned out,
 * the children of its last fan-out from their counts (genroc._fanouts):
 * {"kind", "total", "succeeded", "failed" (failed or cancelled), "running"
 * (started, not ended), "waiting" (not started yet)}.  RC003 when there is
 * none.
 *
 * Semantics of the options of get_instance and history: {"values":
 * "value"} (the default) shows every value; {"values": "ref"} shows a
 * large value as its reference, {"genroc:object": "<hash>"}, which
 * get_object reads (docs/operations.md "Large values").  Anything else is 22023.
 */
CREATE FUNCTION genroc.get_instance(p_instance bigint, p_options jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_get_instance'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
CREATE FUNCTION genroc.get_instance(p_instance bigint) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_get_instance'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION genroc.get_instance(bigint) IS
	'One instance as JSON (status, state, input, output, error, lease, timestamps, ASL variables); RC003 when there is none.';
COMMENT ON FUNCTION genroc.get_instance(bigint, jsonb) IS
	'get_instance with options: {"values": "ref"} shows large values as references (get_object reads them).';

-- Semantics: filter keys status, definition, name (the instance's name,
-- exactly), label ({"k":"v"}: every pair must be among the instance's
-- labels), root (the instances below that
-- top instance), parent (that instance's children, every fan-out's), top
-- (true: top-level instances only), before (an instance id: only older ids,
-- the next page of a keyset walk), created_after / created_before (RFC 3339
-- times, created_after inclusive, created_before exclusive), limit (default
-- 100, 1..10000), offset (rows passed over first; default 0); newest first
-- (id descending), but a parent's children in the order they were made
-- (fan-out by fan-out, item by item).  A keyset page (before) is a backward
-- walk of the primary key (or of (status, id) with a status), so paging
-- stays as cheap on page 1000 as on page 1.  values: as get_instance's
-- option (large values shown or as references).  Only the instances the
-- caller may read: its own, a role's it is a member of, every one for
-- genroc_operator.
CREATE FUNCTION genroc.list_instances(p_filter jsonb DEFAULT '{}') RETURNS SETOF jsonb
	AS 'MODULE_PATHNAME', 'genroc_list_instances'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.list_instances(jsonb) IS
	'Instances the caller may read, as JSON, newest first (a parent''s children in order); filter keys status, definition, name, label ({"k":"v"}), root, parent, top, before (an id: the next page), created_after, created_before, limit (default 100), offset.';

CREATE FUNCTION genroc.history(p_instance bigint, p_options jsonb)
	RETURNS TABLE (seq bigint, at timestamptz, event text, state text, detail jsonb)
	AS 'MODULE_PATHNAME', 'genroc_history'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
CREATE FUNCTION genroc.history(p_instance bigint)
	RETURNS TABLE (seq bigint, at timestamptz, event text, state text, detail jsonb)
	AS 'MODULE_PATHNAME', 'genroc_history'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION genroc.history(bigint, jsonb) IS
	'history with options: {"values": "ref"} shows large payloads as references (get_object reads them).';
COMMENT ON FUNCTION genroc.history(bigint) IS
	'The log of one instance, oldest first: states entered, tasks scheduled, claimed, succeeded, failed, interrupted, waits, the end.';
