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
	AS 'MODULE_PATHNAME', 'genroc_deliver_event'
	LANGUAGE C VOLATILE STRICT;

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
		state_input = genroc._store_value(p_out -> 'state_input', 'the state input'),
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
	AS 'MODULE_PATHNAME', 'genroc_emit'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.emit(bigint, text, jsonb) IS
	'Emits a named event to an instance: delivered to its genroc:event wait of that name, or kept for the next one; RC008 when the instance has ended.';
