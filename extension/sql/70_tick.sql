/*
 * tick: everything time does.
 */

/*
 * Retention: what tick prunes, and when (docs/operations.md "Logs and retention").
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
 * objects    stored values (15_objects.sql) no instance and no log row
 *            uses, genroc.object_grace after collection found them unused
 *            (genroc._collect_objects, at most p_limit looked at); the
 *            objects of the rows deleted here are looked at first
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
	PERFORM genroc._entry();
	PERFORM genroc._flush_commit('progress');
	RETURN genroc._prune(p_log_retention, p_instance_retention, p_limit);
END;
$$;
COMMENT ON FUNCTION genroc.prune(interval, interval, int) IS
	'Deletes log rows older than p_log_retention and concluded top-level instances (with their children, logs and kept events) that ended longer than p_instance_retention ago, at most p_limit of each; 0 keeps that kind; collects stored values unused for genroc.object_grace; returns {"log_rows", "instances", "objects"}.';

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
	v_marks text[] := ARRAY[]::text[];	-- partitions of deleted instances
	v_more text[];
	v_refs text[] := ARRAY[]::text[];	-- objects the deleted rows used
	v_objects int;
	v_objects_due text[];
	-- without any stored object, the deletes need not look for references
	v_any_objects boolean := EXISTS (SELECT 1 FROM genroc._objects);
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

	-- a retention longer than the time since 1970 (the earliest time genroc
	-- stores) keeps everything: now - retention would leave the timestamp
	-- range
	IF p_log_retention > interval '0' AND p_log_retention < v_now - timestamptz '1970-01-01 00:00:00+00' THEN
		IF NOT v_any_objects THEN
			DELETE FROM genroc._log l
			WHERE l.ctid = ANY (ARRAY(SELECT o.ctid FROM genroc._log o
									  WHERE o.at < v_now - p_log_retention
									  ORDER BY o.at LIMIT p_limit FOR UPDATE SKIP LOCKED));
			GET DIAGNOSTICS v_log_rows = ROW_COUNT;
		ELSE
			WITH d AS (DELETE FROM genroc._log l
					   WHERE l.ctid = ANY (ARRAY(SELECT o.ctid FROM genroc._log o
												 WHERE o.at < v_now - p_log_retention
												 ORDER BY o.at LIMIT p_limit FOR UPDATE SKIP LOCKED))
					   RETURNING l.detail)
			SELECT (SELECT count(*)::int FROM d),
				   (SELECT array_agg(x.v ->> 'genroc:object') FILTER (WHERE x.v ? 'genroc:object')
					FROM d CROSS JOIN LATERAL (VALUES (d.detail -> 'input'), (d.detail -> 'output'),
													  (d.detail -> 'payload')) AS x(v))
			INTO v_log_rows, v_more;
			v_refs := v_refs || coalesce(v_more, ARRAY[]::text[]);
		END IF;
	END IF;

	IF p_instance_retention > interval '0'
	   AND p_instance_retention < v_now - timestamptz '1970-01-01 00:00:00+00' THEN
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
			IF NOT v_any_objects THEN
				DELETE FROM genroc._log l WHERE l.instance_id = ANY (v_tree);
			ELSE
				-- the references of the rows deleted, found by the reference
				-- indexes' predicates (most rows have none)
				WITH d AS (DELETE FROM genroc._log l WHERE l.instance_id = ANY (v_tree)
						   RETURNING CASE WHEN l.detail -> 'input' ? 'genroc:object'
										   OR l.detail -> 'output' ? 'genroc:object'
										   OR l.detail -> 'payload' ? 'genroc:object'
										  THEN l.detail END AS detail)
				SELECT array_agg(x.v ->> 'genroc:object') FILTER (WHERE x.v ? 'genroc:object') INTO v_more
				FROM d CROSS JOIN LATERAL (VALUES (d.detail -> 'input'), (d.detail -> 'output'),
												  (d.detail -> 'payload')) AS x(v)
				WHERE d.detail IS NOT NULL;
				v_refs := v_refs || coalesce(v_more, ARRAY[]::text[]);
			END IF;
			DELETE FROM genroc._events e WHERE e.instance_id = ANY (v_tree);
			IF NOT v_any_objects THEN
				WITH d AS (DELETE FROM genroc._instances i WHERE i.id = ANY (v_tree)
						   RETURNING i.queue, i.partition_key)
				SELECT count(*)::int,
					   array_agg(DISTINCT jsonb_build_array(d.queue, d.partition_key)::text)
						   FILTER (WHERE d.partition_key IS NOT NULL)
				INTO v_n, v_more FROM d;
			ELSE
				WITH d AS (DELETE FROM genroc._instances i WHERE i.id = ANY (v_tree)
						   RETURNING i.queue, i.partition_key,
									 ARRAY[i.input ->> 'genroc:object', i.state_input ->> 'genroc:object',
										   i.task_input ->> 'genroc:object', i.output ->> 'genroc:object'] AS refs)
				SELECT count(*)::int,
					   array_agg(DISTINCT jsonb_build_array(d.queue, d.partition_key)::text)
						   FILTER (WHERE d.partition_key IS NOT NULL),
					   (SELECT array_agg(r) FROM d d2, unnest(d2.refs) AS r WHERE r IS NOT NULL)
				INTO v_n, v_more, v_objects_due FROM d;
			END IF;
			v_instances := v_instances + v_n;
			v_marks := v_marks || coalesce(v_more, ARRAY[]::text[]);
			v_refs := v_refs || coalesce(v_objects_due, ARRAY[]::text[]);
		END LOOP;
		-- the lock rows (10_tables.sql) of those partitions left without an
		-- instance; a partition used again makes them again
		DELETE FROM genroc._locks l WHERE l.ctid = ANY (ARRAY(
			SELECT o.ctid FROM genroc._locks o
			WHERE o.kind IN ('partition', 'partition_rate') AND o.key = ANY (v_marks)
			  AND NOT EXISTS (SELECT 1 FROM genroc._instances i
							  WHERE i.queue = o.key::jsonb ->> 0
								AND i.partition_key = o.key::jsonb ->> 1)
			FOR UPDATE SKIP LOCKED));
	END IF;
	IF cardinality(v_refs) > 0 THEN
		PERFORM genroc._objects_due(v_refs);
	END IF;
	v_objects := genroc._collect_objects(
		(genroc._log_settings() ->> 'object_grace_s')::int * interval '1 second', p_limit);
	RETURN jsonb_build_object('log_rows', v_log_rows, 'instances', v_instances,
							  'objects', v_objects);
END;
$$;

/*
 * Semantics of tick, kinds in this order, each at most p_limit rows (oldest
 * deadline first, then id; FOR UPDATE SKIP LOCKED, so concurrent ticks share
 * the work):
 *   timeouts    a running handler task past now >= claim + TimeoutSeconds,
 *               a parked activity or event wait past parking +
 *               TimeoutSeconds, a .waitForTaskToken task waiting for its
 *               token past its claim + TimeoutSeconds, or a sync call past its child's start +
 *               TimeoutSeconds (the child is cancelled first):
 *               task_failed States.Timeout
 *   heartbeats  a claimed activity, or a task waiting for its token, past
 *               its heartbeat deadline:
 *               task_failed States.HeartbeatTimeout
 *   lapsed      a running task whose lease expired: genroc._interrupt
 *   timers      a Wait whose time has come: timer_fired
 *   run_at      a delayed start whose time has come: the first step (or
 *               'queued' for a partition slot, genroc._admit)
 *   pruning     genroc._prune with this session's genroc.log_retention and
 *               genroc.instance_retention (both 0 unless set: nothing is
 *               pruned), p_limit of each kind; only when the caller
 *               administers genroc (a worker's session settings never
 *               delete other roles' rows)
 *   objects     stored values unused for genroc.object_grace
 *               (genroc._collect_objects, by _prune); a role that does not
 *               administer genroc collects too, with a grace of at least
 *               one hour (the default) whatever its session sets
 * Retry back-off needs no tick: the row is ready with a later eligible_at.
 * Returns {"timeouts", "heartbeats", "lapsed", "timers", "run_at",
 * "pruned_log_rows", "pruned_instances", "collected_objects"} counts.
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
	PERFORM genroc._entry();
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
						 OR (i.status = 'waiting' AND i.wait_kind IN ('activity', 'event', 'children', 'callback')))
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
				  WHERE i.heartbeat_at <= v_now AND i.status = 'waiting' AND i.wait_kind IN ('activity', 'callback')
				  ORDER BY i.heartbeat_at, i.id LIMIT p_limit FOR UPDATE SKIP LOCKED LOOP
		PERFORM genroc._fail_task(v_inst.id, 'States.HeartbeatTimeout',
			CASE WHEN v_inst.wait_kind = 'callback'
				 THEN format('task "%s" sent no heartbeat within %s seconds', v_inst.state, v_inst.heartbeat_s)
				 ELSE format('activity "%s" sent no heartbeat within %s seconds', v_inst.activity, v_inst.heartbeat_s) END);
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
			'state_input', coalesce(genroc._load_value(v_inst.state_input), 'null'::jsonb)));
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

	-- retention deletes everyone's rows: only an administering role's
	-- settings count (12_roles.sql); another role's tick prunes nothing
	v_settings := genroc._log_settings();
	IF genroc._can(genroc._caller(), 'admin') THEN
		v_pruned := genroc._prune((v_settings ->> 'log_retention_s')::int * interval '1 second',
								  (v_settings ->> 'instance_retention_s')::int * interval '1 second',
								  p_limit);
	ELSE
		v_pruned := jsonb_build_object('log_rows', 0, 'instances', 0,
			'objects', genroc._collect_objects(
				greatest((v_settings ->> 'object_grace_s')::int, 3600) * interval '1 second', p_limit));
	END IF;

	PERFORM genroc._tick_record(v_now);		-- who ticks (75_metrics.sql)
	RETURN jsonb_build_object('timeouts', v_timeouts, 'heartbeats', v_heartbeats,
							  'lapsed', v_lapsed, 'timers', v_timers, 'run_at', v_run_at,
							  'pruned_log_rows', v_pruned -> 'log_rows',
							  'pruned_instances', v_pruned -> 'instances',
							  'collected_objects', v_pruned -> 'objects');
END;
$$;
COMMENT ON FUNCTION genroc.tick(int) IS
	'Does the time-driven work, at most p_limit items of each kind: task and activity timeouts, missed heartbeats, lapsed leases, fired timers, delayed starts, and pruning by the settings genroc.log_retention and genroc.instance_retention; returns the counts.';
