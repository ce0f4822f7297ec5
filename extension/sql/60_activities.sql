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
	PERFORM genroc._entry();
	PERFORM genroc._check_worker(p_worker);
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
		input := genroc._load_value(v_row.task_input);
		heartbeat_s := v_row.heartbeat_s;
		timeout_s := v_row.timeout_s;
		RETURN NEXT;
	END LOOP;
END;
$$;
COMMENT ON FUNCTION genroc.claim_activity(text, text, int) IS
	'Hands out up to p_n waiting tasks of activity p_activity, each with its input and task token.';

/*
 * Results by task token: an activity's (handed out by claim_activity) or a
 * .waitForTaskToken task's (its input carried the token as $$.Task.Token).
 * The engine implements them (engine/callbacks.hpp says the semantics:
 * when a token is valid, single use, a new one per attempt); the caller
 * may report for the worker that claimed the activity
 * (genroc._check_activity).  RC007 for a token no task holds.
 */
CREATE FUNCTION genroc.activity_succeed(p_token text, p_output jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_activity_succeed'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.activity_succeed(text, jsonb) IS
	'Reports an activity''s or a .waitForTaskToken task''s output by its task token; the instance goes on in this transaction; returns the new status; RC007 for an invalid token.';

CREATE FUNCTION genroc.activity_fail(p_token text, p_error text, p_cause text DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_activity_fail'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.activity_fail(text, text, text) IS
	'Reports an activity''s or a .waitForTaskToken task''s error by its task token; Retry and Catch decide in this transaction; returns the new status; RC007 for an invalid token.';

CREATE FUNCTION genroc.activity_heartbeat(p_token text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_activity_heartbeat'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.activity_heartbeat(text) IS
	'Tells genroc that the activity or .waitForTaskToken task with this task token is still being worked on; RC007 for an invalid token.';
