/*
 * Instances: start, cancel, and reading them.
 */

-- The start options (genroc.start, genroc.start_many) and the option
-- readers they use (_parse_time, _int_option, _text_option, _labels_option,
-- _start_options) are the engine's (engine/start.cpp, engine/options.cpp).

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
	AS 'MODULE_PATHNAME', 'genroc_start'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
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
	AS 'MODULE_PATHNAME', 'genroc_start_many'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
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
