/*
 * Composition: child instances for Parallel branches and Map items
 * (no instance runs two branches itself).  An instance is one thread of
 * control; a fan-out parks the
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
		-- the child is the caller's instance: its owner must be one who may
		-- start that definition (12_roles.sql)
		IF v_error IS NULL AND NOT genroc._may(v_inst.owner, v_called.owner, 'admin') THEN
			v_error := 'genroc.PermissionDenied';
			v_cause := format('state "%s" calls definition "%s", which the instance''s role may not start',
				p_out ->> 'state', p_out ->> 'definition');
		END IF;
		IF v_error IS NOT NULL THEN
			UPDATE genroc._instances SET state = p_out ->> 'state',
				state_input = genroc._store_value(p_out -> 'state_input', 'the state input'),
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
		state_input = genroc._store_value(p_out -> 'state_input', 'the state input'),
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
								   name, labels, partition_key, created_at, updated_at, owner,
								   variables)
	SELECT coalesce((it ->> 'definition_id')::bigint, v_inst.definition_id), 'waiting', v_now,
		   genroc._store_value(it -> 'input', 'an item''s input'), coalesce(it ->> 'queue', v_inst.queue), v_inst.priority,
		   'pending', p_parent, coalesce(v_inst.root_id, p_parent), (it ->> 'index')::int, v_gen,
		   it ->> 'scope', it ->> 'name', coalesce(it -> 'labels', '{}'), v_inst.partition_key,
		   v_now, v_now, v_inst.owner,
		   -- a branch or item reads its parent's variables; a called
		   -- definition is an execution of its own
		   CASE WHEN v_kind <> 'call' THEN v_inst.variables END
	FROM jsonb_array_elements(v_items) AS it
	ORDER BY (it ->> 'index')::int;
	INSERT INTO genroc._fanouts AS f (parent_id, gen, total, next_index, live, pending, succeeded, failed)
	VALUES (p_parent, v_gen, jsonb_array_length(v_items), 0, 0, jsonb_array_length(v_items), 0, 0)
	ON CONFLICT (parent_id) DO UPDATE SET
		gen = EXCLUDED.gen, total = EXCLUDED.total, next_index = 0, live = 0,
		pending = EXCLUDED.pending, succeeded = 0, failed = 0;
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
-- p_cause (its descendants with p_children_cause when given) and error
-- p_error (default genroc.Cancelled; the descendants get that).  No parent is
-- woken and no partition slot handed on: the caller decides what the end
-- means for the parent (children hold no slot; genroc.cancel hands the top
-- instance's on).
CREATE FUNCTION genroc._cancel_tree(p_instance bigint, p_cause text, p_children_cause text DEFAULT NULL,
									p_error text DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_cancel_tree'
	LANGUAGE C VOLATILE;

-- The counts row of a parent's fan-out of generation p_gen
-- (genroc._fanouts): made from its children when missing or of an earlier
-- generation (a fan-out begun before the table existed).  Returns true
-- when it made the row (the counts then include every child's end so far).
-- The caller holds the parent's row lock.
CREATE FUNCTION genroc._fanout_row(p_parent bigint, p_gen int) RETURNS boolean
	LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	PERFORM 1 FROM genroc._fanouts f WHERE f.parent_id = p_parent AND f.gen = p_gen;
	IF FOUND THEN
		RETURN false;
	END IF;
	INSERT INTO genroc._fanouts AS f (parent_id, gen, total, next_index, live, pending, succeeded, failed)
	SELECT p_parent, p_gen, count(*),
		   coalesce(min(c.child_index) FILTER (WHERE c.status = 'waiting' AND c.wait_kind = 'pending'),
					max(c.child_index) + 1, 0),
		   count(*) FILTER (WHERE c.status NOT IN ('succeeded', 'failed', 'cancelled')
							  AND c.wait_kind IS DISTINCT FROM 'pending'),
		   count(*) FILTER (WHERE c.status = 'waiting' AND c.wait_kind = 'pending'),
		   count(*) FILTER (WHERE c.status = 'succeeded'),
		   count(*) FILTER (WHERE c.status IN ('failed', 'cancelled'))
	FROM genroc._instances c
	WHERE c.parent_id = p_parent AND c.child_gen = p_gen
	ON CONFLICT (parent_id) DO UPDATE SET
		gen = EXCLUDED.gen, total = EXCLUDED.total, next_index = EXCLUDED.next_index,
		live = EXCLUDED.live, pending = EXCLUDED.pending, succeeded = EXCLUDED.succeeded,
		failed = EXCLUDED.failed;
	RETURN true;
END;
$$;

-- A child ended (succeeded, failed, cancelled): lock its parent, count the
-- end in the parent's fan-out counts, and let it go on.  When the parent is
-- already being advanced further up this transaction (a child started by
-- that loop ended at once), that loop sees the new counts itself.  Reads
-- only the columns it needs: the parent's state_input (a Map's items) is
-- never loaded per child.
CREATE FUNCTION genroc._child_ended(p_child bigint) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_parent_id bigint;
	v_gen int;
	v_index int;
	v_status text;
	v_p_status text;
	v_p_wait text;
	v_p_gen int;
BEGIN
	SELECT i.parent_id, i.child_gen, i.child_index, i.status
	INTO STRICT v_parent_id, v_gen, v_index, v_status
	FROM genroc._instances i WHERE i.id = p_child;
	IF v_parent_id IS NULL THEN
		RETURN;
	END IF;
	SELECT i.status, i.wait_kind, (i.fanout ->> 'gen')::int INTO v_p_status, v_p_wait, v_p_gen
	FROM genroc._instances i WHERE i.id = v_parent_id FOR UPDATE;
	IF v_p_status <> 'waiting' OR v_p_wait IS DISTINCT FROM 'children'
	   OR v_p_gen IS DISTINCT FROM v_gen THEN
		RETURN;	-- a child of a fan-out that is over (its siblings were cancelled)
	END IF;
	-- started children are below next_index; one above it ended while it
	-- was pending (cancelled from outside).  No row of this generation: it
	-- is made from the children, this end included.
	UPDATE genroc._fanouts f SET
		live = f.live - CASE WHEN v_index < f.next_index THEN 1 ELSE 0 END,
		pending = f.pending - CASE WHEN v_index < f.next_index THEN 0 ELSE 1 END,
		succeeded = f.succeeded + CASE WHEN v_status = 'succeeded' THEN 1 ELSE 0 END,
		failed = f.failed + CASE WHEN v_status = 'succeeded' THEN 0 ELSE 1 END
	WHERE f.parent_id = v_parent_id AND f.gen = v_gen;
	IF NOT FOUND THEN
		PERFORM genroc._fanout_row(v_parent_id, v_gen);
	END IF;
	IF (',' || coalesce(current_setting('genroc_fanout.active', true), '') || ',')
	   LIKE '%,' || v_parent_id || ',%' THEN
		RETURN;
	END IF;
	PERFORM genroc._advance_children(v_parent_id);
END;
$$;

/*
 * Moves a fan-out on: fails it when its failures say so, starts pending
 * children while there is room, and resumes the parent (children_done with
 * the outputs in order) when every child has ended.  The caller holds the
 * parent's row lock.  Loops rather than recursing, so a Map of a thousand
 * items whose children end at once does not nest a thousand calls.  The
 * counts come from genroc._fanouts and the next child from the children's
 * index, so each turn costs the same whatever the number of siblings; the
 * parent's whole row (its state_input holds a Map's items) is read only
 * when the fan-out ends.
 */
CREATE FUNCTION genroc._advance_children(p_parent bigint) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_parent genroc._instances;
	v_status text;
	v_wait text;
	v_state text;
	v_wait_until timestamptz;
	v_fanout jsonb;
	v_gen int;
	v_max int;
	v_total int;
	v_live int;
	v_pending int;
	v_failed int;
	v_next int;
	v_first genroc._instances;
	v_tol_count numeric;
	v_tol_pct numeric;
	v_error text;
	v_fails boolean;
	v_cause text;
	v_child genroc._instances;
	v_found record;
	v_input jsonb;
	v_outputs jsonb;
	v_active text := coalesce(current_setting('genroc_fanout.active', true), '');
BEGIN
	-- the parent's columns once: while this loop runs, only the loop
	-- itself changes the parent's row (a child that ends at once counts its
	-- end in _fanouts and leaves the rest to this loop), and it leaves the
	-- loop when it does
	SELECT i.status, i.wait_kind, i.state, i.wait_until, i.fanout
	INTO STRICT v_status, v_wait, v_state, v_wait_until, v_fanout
	FROM genroc._instances i WHERE i.id = p_parent;
	IF v_status <> 'waiting' OR v_wait IS DISTINCT FROM 'children' THEN
		RETURN;
	END IF;
	v_gen := (v_fanout ->> 'gen')::int;
	v_max := coalesce((v_fanout ->> 'max_concurrency')::int, 0);
	v_total := (v_fanout ->> 'total')::int;
	PERFORM set_config('genroc_fanout.active', v_active || ',' || p_parent, true);
	LOOP
		SELECT f.live, f.pending, f.failed, f.next_index INTO v_live, v_pending, v_failed, v_next
		FROM genroc._fanouts f WHERE f.parent_id = p_parent AND f.gen = v_gen;
		IF NOT FOUND THEN
			PERFORM genroc._fanout_row(p_parent, v_gen);
			SELECT f.live, f.pending, f.failed, f.next_index INTO STRICT v_live, v_pending, v_failed, v_next
			FROM genroc._fanouts f WHERE f.parent_id = p_parent;
		END IF;

		IF v_failed > 0 THEN
			v_tol_count := (v_fanout ->> 'tolerated_count')::numeric;
			v_tol_pct := (v_fanout ->> 'tolerated_percentage')::numeric;
			v_error := NULL;
			v_fails := false;
			IF v_tol_count IS NULL AND v_tol_pct IS NULL THEN
				-- the first failed child's error; NULL when a Fail state
				-- without Error ended it: the state fails all the same
				SELECT * INTO v_first FROM genroc._instances
				WHERE parent_id = p_parent AND child_gen = v_gen
				  AND status IN ('failed', 'cancelled')
				ORDER BY ended_at, child_index LIMIT 1;
				v_error := v_first.error;
				v_cause := v_first.cause;
				v_fails := true;
			ELSIF (v_tol_count IS NOT NULL AND v_failed > v_tol_count)
				  OR (v_tol_pct IS NOT NULL AND v_failed * 100 > v_tol_pct * v_total) THEN
				v_error := 'States.ExceedToleratedFailureThreshold';
				v_cause := format('%s of %s items of state "%s" failed', v_failed, v_total, v_state);
				v_fails := true;
			END IF;
			IF v_fails THEN
				SELECT * INTO STRICT v_parent FROM genroc._instances WHERE id = p_parent;
				PERFORM genroc._cancel_children(v_parent,
					format('state "%s" failed: %s', v_state, coalesce(v_error, 'an error without a name')));
				PERFORM genroc._log(p_parent, 'children_failed', v_state,
					jsonb_build_object('error', v_error, 'cause', v_cause, 'failed', v_failed));
				UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
				PERFORM genroc._apply_step(p_parent,
					genroc._task_request(v_parent, 'task_failed', NULL, v_error, v_cause));
				EXIT;
			END IF;
		END IF;

		IF v_pending > 0 AND (v_max = 0 OR v_live < v_max)
		   AND (v_wait_until IS NULL OR v_wait_until <= genroc.now()) THEN
			-- the first pending child from next_index on (the children
			-- index's order; one cancelled while pending is passed over)
			-- (read as one composite value, not column by column into the row
			-- variable: see genroc._apply_step)
			SELECT i AS inst INTO STRICT v_found FROM genroc._instances i
			WHERE i.parent_id = p_parent AND i.child_gen = v_gen AND i.child_index >= v_next
			  AND i.status = 'waiting' AND i.wait_kind = 'pending'
			ORDER BY i.child_index LIMIT 1 FOR UPDATE OF i;
			v_child := v_found.inst;
			UPDATE genroc._fanouts f SET next_index = v_child.child_index + 1,
				live = f.live + 1, pending = f.pending - 1
			WHERE f.parent_id = p_parent;
			-- the child's first step: its one update sets status and wait_kind
			-- whatever the outcome (a second update of the row before it, to
			-- 'ready', cost an index entry per index and the foreign key checks
			-- of a row updated twice); its 'started' row goes in with the step's
			v_input := genroc._load_value(v_child.input);
			PERFORM genroc._apply_step(v_child.id,
				jsonb_build_object('op', 'start', 'input', v_input),
				jsonb_build_object('event', 'started', 'state', NULL,
					'detail', jsonb_build_object('parent', p_parent, 'index', v_child.child_index,
												 'scope', v_child.scope, 'input', v_input)),
				NULL, NULL, v_child);
			IF v_fanout ->> 'kind' = 'call' AND NOT (v_fanout ->> 'sync')::boolean THEN
				-- an async call goes on as soon as its child has started
				SELECT * INTO STRICT v_parent FROM genroc._instances WHERE id = p_parent;
				UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
				PERFORM genroc._apply_step(p_parent, genroc._task_request(v_parent, 'task_succeeded',
					jsonb_build_object('InstanceId', v_child.id), NULL, NULL));
				EXIT;
			END IF;
			CONTINUE;
		END IF;

		IF v_live = 0 AND v_pending = 0 THEN
			-- once per fan-out: the outputs in order, and the parent's row
			SELECT * INTO STRICT v_parent FROM genroc._instances WHERE id = p_parent;
			SELECT jsonb_agg(CASE WHEN status = 'succeeded' THEN coalesce(genroc._load_value(output), 'null'::jsonb)
								  ELSE jsonb_strip_nulls(jsonb_build_object('Error', error,
																			'Cause', cause)) END
							 ORDER BY child_index)
			INTO v_outputs
			FROM genroc._instances
			WHERE parent_id = p_parent AND child_gen = v_gen;
			UPDATE genroc._instances SET wait_kind = NULL WHERE id = p_parent;
			IF v_fanout ->> 'kind' = 'call' THEN
				PERFORM genroc._log(p_parent, 'call_done', v_state, NULL);
				PERFORM genroc._apply_step(p_parent, genroc._task_request(v_parent, 'task_succeeded',
					v_outputs -> 0, NULL, NULL));
				EXIT;
			END IF;
			PERFORM genroc._log(p_parent, 'children_done', v_state,
				jsonb_build_object('count', v_total, 'failed', v_failed));
			PERFORM genroc._apply_step(p_parent, jsonb_build_object(
				'op', 'children_done',
				'state', v_state,
				'state_input', coalesce(genroc._load_value(v_parent.state_input), 'null'::jsonb),
				'retry_counts', v_parent.retry_counts,
				'outputs', coalesce(v_outputs, '[]'::jsonb)));
		END IF;
		EXIT;
	END LOOP;
	PERFORM set_config('genroc_fanout.active', v_active, true);
END;
$$;

-- tick: fan-outs whose retry back-off is over start their children
-- (engine/tick.cpp, TICK_CHILDREN).
