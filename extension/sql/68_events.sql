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

-- A genroc:event task waits for its event, or takes the first kept one of
-- that name at once (genroc._park_event): the engine's, engine/children.cpp.

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
