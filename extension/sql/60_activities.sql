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
	AS 'MODULE_PATHNAME', 'genroc_claim_activity'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
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
