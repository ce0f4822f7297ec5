/*
 * tick: everything time does.
 */

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
 * Retry back-off needs no tick: the row is ready with a later eligible_at.
 * Returns {"timeouts", "heartbeats", "lapsed", "timers", "run_at"} counts.
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

	RETURN jsonb_build_object('timeouts', v_timeouts, 'heartbeats', v_heartbeats,
							  'lapsed', v_lapsed, 'timers', v_timers, 'run_at', v_run_at);
END;
$$;
COMMENT ON FUNCTION genroc.tick(int) IS
	'Does the time-driven work, at most p_limit items of each kind: task and activity timeouts, missed heartbeats, lapsed leases, fired timers, delayed starts; returns the counts.';
