/*
 * Large values stored once (docs/operations.md "Large values").
 *
 * A value (an instance's input, a state's input, a task's input, an
 * output, a log entry's payload) larger than genroc.object_threshold is
 * written once into genroc._objects, keyed by the sha256 of its jsonb text
 * (jsonb::text is canonical: keys sorted, no duplicates), and the row that
 * holds it keeps a reference instead: {"genroc:object": "<64 hex>"}.  The
 * same value written again (a payload passed unchanged from state to state
 * or into the log) finds its row and writes nothing but, when collection
 * had marked it unused, the mark's removal.
 *
 * Semantics of a reference: a JSON object with the key "genroc:object" in
 * a stored column is always a reference.  A value the caller or the
 * interpreter hands over that has that shape (an object with that key) is
 * therefore stored as an object whatever its size, so reading it back
 * gives the value, never its look-alike resolved.  genroc._store_value is
 * only ever given values, never a column read back (that would store the
 * reference itself); genroc._load_value turns a column back into its value.
 *
 * Collection (engine/retention.cpp collect_objects, from prune, so from tick and
 * prune): an object no instance column and no log entry uses is deleted
 * genroc.object_grace after collection first found it unused.  Objects are
 * looked at when due (check_at): a new one at the next collection, one in
 * use again after its own age (1 minute at least, 1 day at most), so a
 * long-lived object costs a handful of checks; prune makes the objects of
 * what it deletes due at once.  A write of the value (_store_value) clears
 * the mark under the row's lock, so collection never deletes an object a
 * transaction is about to reference: it skips locked rows and checks the
 * mark again after the lock.
 */

CREATE TABLE genroc._objects (
	hash			text PRIMARY KEY,	-- sha256 of value::text, hex
	value			jsonb NOT NULL,
	bytes			bigint NOT NULL,	-- octet_length(value::text)
	created_at		timestamptz NOT NULL,
	check_at		timestamptz NOT NULL,	-- when collection looks at it next
	unused_since	timestamptz			-- when collection found it unused; NULL: in use
);
CREATE INDEX _objects_check ON genroc._objects (check_at);

-- Where references are: one partial index per column that can hold one,
-- empty while no value is large (an update only evaluates the predicate).
CREATE INDEX _instances_obj_input ON genroc._instances ((input ->> 'genroc:object'))
	WHERE input ? 'genroc:object';
CREATE INDEX _instances_obj_state_input ON genroc._instances ((state_input ->> 'genroc:object'))
	WHERE state_input ? 'genroc:object';
CREATE INDEX _instances_obj_task_input ON genroc._instances ((task_input ->> 'genroc:object'))
	WHERE task_input ? 'genroc:object';
CREATE INDEX _instances_obj_output ON genroc._instances ((output ->> 'genroc:object'))
	WHERE output ? 'genroc:object';
CREATE INDEX _log_obj_input ON genroc._log ((detail -> 'input' ->> 'genroc:object'))
	WHERE detail -> 'input' ? 'genroc:object';
CREATE INDEX _log_obj_output ON genroc._log ((detail -> 'output' ->> 'genroc:object'))
	WHERE detail -> 'output' ? 'genroc:object';
CREATE INDEX _log_obj_payload ON genroc._log ((detail -> 'payload' ->> 'genroc:object'))
	WHERE detail -> 'payload' ? 'genroc:object';

-- This session's genroc.object_threshold in bytes (genroc.c).
CREATE FUNCTION genroc._object_threshold() RETURNS int
	AS 'MODULE_PATHNAME', 'genroc_object_threshold_fn'
	LANGUAGE C STABLE PARALLEL SAFE;

/*
 * Whether a stored column value is a reference, storing a value, reading
 * one: the engine's (engine/values.cpp, entry points in extension/values.c),
 * the same code the SQLite store runs.  In C, the common case (a value that
 * is not a reference, within the threshold) costs no SPI and no text.
 */

-- Whether a stored column value is a reference.
CREATE FUNCTION genroc._is_ref(p_value jsonb) RETURNS boolean
	AS 'MODULE_PATHNAME', 'genroc_is_ref_fn'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

/*
 * A value as a column keeps it: itself, or its reference when it is larger
 * than genroc.object_threshold (its jsonb size) or looks like a reference,
 * its object written once into genroc._objects (the same value again clears
 * only collection's mark).  Semantics: a value whose JSON text is longer
 * than the limit value_bytes (core/limits.def: 67108864) is 54000 naming
 * p_field; nothing is stored.
 */
CREATE FUNCTION genroc._store_value(p_value jsonb, p_field text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_store_value_fn'
	LANGUAGE C VOLATILE;

-- The value of a stored object; XX000 when it is gone (a reference in a row
-- always has its object: collection deletes only unused ones).
CREATE FUNCTION genroc._object(p_hash text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_object_fn'
	LANGUAGE C STABLE STRICT;

-- A column's value: the column itself, or the object it references.
CREATE FUNCTION genroc._load_value(p_value jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_load_value_fn'
	LANGUAGE C STABLE STRICT;

/*
 * Collection (which object is used, marking, deleting) and making the
 * objects of pruned rows due are retention's: engine/retention.cpp
 * (collect_objects, statements OBJECT_USED and the others), the same code
 * the SQLite store runs.
 */

/*
 * get_object: one stored value by its reference (the HTTP API's
 * GET /api/objects/{ref}); the engine's (engine/objects.cpp, entry point in
 * extension/objects.c), the same code the SQLite store runs.  Semantics: the caller sees it when an instance
 * it may read (its own, or any with the operator capability) uses it in a
 * column or its log; an object no instance uses any more (within its
 * grace) only an operator sees.  One the caller may not read is RC011 with
 * the same message as none (never stored, or collected): a reference is a
 * hash of the value, so a different answer would tell whoever guesses a
 * value that some instance holds it.
 */
CREATE FUNCTION genroc.get_object(p_ref text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_get_object'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.get_object(text) IS
	'One stored large value by its reference (as get_instance / history with references show it); RC011, the same answer, when there is none or the caller may not read it.';
