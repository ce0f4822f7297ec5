/*
 * The engine's core: the clock, the interpreter bridge and small helpers
 * (the step writer, where every interpreter answer becomes a row update, is
 * engine/steps.cpp's, called in-process).
 *
 * The private helpers (genroc._*) carry no SET search_path: they run only
 * inside the public SECURITY DEFINER functions, whose search_path is pinned
 * to pg_catalog, pg_temp, and every name in them is qualified.  A SET clause
 * costs a setting save and restore on every call and keeps SQL functions
 * from being inlined, and these run several times per transition.
 */

CREATE FUNCTION genroc.now() RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'genroc_now'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION genroc.now() IS
	'The engine''s clock: the test clock (setting genroc.test_clock) when set, else the transaction start time.';

/*
 * Semantics of genroc._lock: waits for and takes the lock (p_kind, p_key),
 * a row of genroc._locks (10_tables.sql), until the end of the transaction.
 * The row is created on first use, with the rows of p_also (kinds of the
 * same key another path only tries, so that it finds them there).  A row
 * deleted between the look-up and the lock (genroc.prune) is made again.
 */
CREATE FUNCTION genroc._lock(p_kind text, p_key text, p_also text[] DEFAULT '{}') RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	LOOP
		PERFORM 1 FROM genroc._locks l WHERE l.kind = p_kind AND l.key = p_key
		FOR NO KEY UPDATE;
		EXIT WHEN FOUND;
		-- another transaction inserting the same row: this waits for its end
		INSERT INTO genroc._locks (kind, key) VALUES (p_kind, p_key) ON CONFLICT DO NOTHING;
		IF FOUND THEN
			-- an inserted row is this transaction's until the commit: whoever
			-- wants it waits on the insert
			INSERT INTO genroc._locks (kind, key) SELECT k, p_key FROM unnest(p_also) AS k
			ON CONFLICT DO NOTHING;
			EXIT;
		END IF;
	END LOOP;
END;
$$;

/*
 * Semantics of genroc._try_lock: takes the lock (p_kind, p_key) when no
 * other transaction holds it, else answers false at once.  A row not made
 * yet (its kind is created along with another, genroc._lock's p_also, so
 * this is rare) is inserted here, which waits only for a concurrent insert
 * of the same row.
 */
CREATE FUNCTION genroc._try_lock(p_kind text, p_key text) RETURNS boolean
	LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	PERFORM 1 FROM genroc._locks l WHERE l.kind = p_kind AND l.key = p_key
	FOR NO KEY UPDATE SKIP LOCKED;
	IF FOUND THEN
		RETURN true;
	END IF;
	IF EXISTS (SELECT 1 FROM genroc._locks l WHERE l.kind = p_kind AND l.key = p_key) THEN
		RETURN false;
	END IF;
	INSERT INTO genroc._locks (kind, key) VALUES (p_kind, p_key) ON CONFLICT DO NOTHING;
	RETURN FOUND;
END;
$$;

/*
 * Semantics of the identifier limits (docs/limits.md "Identifier limits"): a name
 * genroc stores and shows (a definition, worker id, host, queue, handler,
 * instance name, idempotency key, partition key, event name, token name,
 * label key) has at most 200 characters, a label value at most 1000, and
 * none has a control character (U+0001-U+001F, U+007F-U+009F).  22023,
 * naming p_field.
 */
CREATE FUNCTION genroc._check_name(p_value text, p_field text, p_max int DEFAULT 200) RETURNS void
	LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
	IF length(p_value) > p_max THEN
		RAISE EXCEPTION '% must be at most % characters long, not %', p_field, p_max, length(p_value)
			USING ERRCODE = '22023';
	END IF;
	IF p_value ~ '[\x01-\x1f\x7f-\x9f]' THEN
		RAISE EXCEPTION '% must not contain control characters', p_field USING ERRCODE = '22023';
	END IF;
END;
$$;

-- Raises RC001 naming the JSON path of the first fault.  The cache key lets
-- the next _step skip compiling.
CREATE FUNCTION genroc._validate(p_definition jsonb, p_cache_key text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_validate'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- One interpreter step (core/asl.hpp, "The step protocol").  Deterministic:
-- the caller passes now_ms and the context in the request.
CREATE FUNCTION genroc._step(p_cache_key text, p_definition jsonb, p_request jsonb)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_step'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;

/*
 * The context object $$ of a step: the engine's ask builds it (engine/ask.hpp
 * says what it holds) and runs the interpreter in-process.
 * genroc._step_start is genroc._step of the start request {op: start,
 * input: p_input} with now_ms and the context (p_id, p_name (null: the
 * id), p_start_time (the start as ISO-8601 text: engine::iso_us), that input, the
 * definition's p_def_name and p_def_version, p_token) written as text in C
 * (genroc.c): genroc.start_many's items, which have no row yet; a null
 * p_token there is drawn when needed.  A definition whose text cannot read
 * the context (no "$$", no JSONata $states but its input, result and
 * errorOutput: core/asl.hpp reads_context) gets its steps asked without
 * it, once the interpreter has compiled it in this backend: the same
 * answer for a fraction of the request.
 */
CREATE FUNCTION genroc._step_start(p_cache_key text, p_definition jsonb, p_input jsonb,
								   p_now_ms bigint, p_id bigint, p_name text, p_start_time text,
								   p_def_name text, p_def_version int, p_token text)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_step_start'
	LANGUAGE C VOLATILE;

-- What every start of the definition answers apart from its input, when
-- its first state is a Task the input reaches unchanged (core/asl.hpp
-- start_task): "entered", and the task's "state", "resource", "timeout_s",
-- "heartbeat_s", "only_once" and "retry_counts"; the input is its state
-- input and task input.  NULL: each start is stepped.  genroc.start_many
-- writes its batch from it, with no step per input.
CREATE FUNCTION genroc._start_task(p_cache_key text, p_definition jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_start_task'
	LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- The step of a task's success (the engine's task request with op
-- 'task_succeeded') for a top-level instance, in its own context (the one
-- engine/ask.cpp builds for it) with a fresh token: the request written
-- in C from the row's columns (complete_many's set-wise reports), a stored
-- state input or input read through genroc._load_value.  An instance with
-- a parent and a scope is refused (22023).  The instance's and its
-- definition's columns, not their rows (genroc.c says why).
CREATE FUNCTION genroc._step_succeeded(p_id bigint, p_name text, p_created_at timestamptz,
	p_input jsonb, p_state text, p_retry_counts jsonb, p_state_input jsonb, p_scope text,
	p_variables jsonb, p_parent_id bigint, p_hash text, p_definition jsonb, p_def_name text,
	p_def_version int, p_result jsonb, p_now_ms bigint)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_step_succeeded'
	LANGUAGE C VOLATILE;

-- Raises 54000 when a payload nests deeper than the interpreter's limit
-- json_depth (core/limits.def), naming it (p_what) and where.  For payloads
-- kept before any step reads them (a start with run_at, an event kept for a
-- later wait): refused at the door, not when a later step (a tick, another
-- caller's transaction) would trip over them.
CREATE FUNCTION genroc._check_depth(p_value jsonb, p_what text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_check_depth'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Milliseconds since the epoch (what the interpreter's now_ms/until_ms are).
-- These one-expression helpers are STABLE as what they call is: a SQL
-- function the planner can inline costs nothing per call, one it cannot
-- (declared IMMUTABLE over STABLE calls) is planned again on every call.
-- (Timestamps as text, ISO-8601 UTC with milliseconds, are the engine's:
-- engine::iso_us.)
CREATE FUNCTION genroc._ms(p_at timestamptz) RETURNS bigint
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN floor(extract(epoch FROM p_at) * 1000)::bigint;

CREATE FUNCTION genroc._from_ms(p_ms bigint) RETURNS timestamptz
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN 'epoch'::timestamptz + p_ms * interval '1 millisecond';

-- Semantics: an option bag must be a JSON object whose keys are all in
-- p_allowed; otherwise 22023 naming the first unknown key (in key order).
CREATE FUNCTION genroc._check_options(p_options jsonb, p_allowed text[], p_what text)
	RETURNS void
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_key text;
BEGIN
	IF jsonb_typeof(p_options) <> 'object' THEN
		RAISE EXCEPTION '% must be a JSON object', p_what
			USING ERRCODE = '22023';
	END IF;
	FOR v_key IN SELECT k FROM jsonb_object_keys(p_options) AS k ORDER BY k LOOP
		IF NOT v_key = ANY (p_allowed) THEN
			RAISE EXCEPTION 'unknown option "%" in %', v_key, p_what
				USING ERRCODE = '22023',
					  HINT = format('Known options: %s.', array_to_string(p_allowed, ', '));
		END IF;
	END LOOP;
END;
$$;

-- Semantics: a duration is a JSON number of seconds, or a string
-- "<number><unit>" with unit ms, s, m, h or d ("10s", "1.5m", "500ms").
-- Anything else is 22007 naming the option; zero or negative is 22023, and
-- so is more than 36500 days (100 years: a bound far past any lease, period
-- or timeout, that keeps now + duration inside the timestamp range).
CREATE FUNCTION genroc._duration(p_value jsonb, p_option text) RETURNS interval
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_parts text[];
	v_seconds numeric;
BEGIN
	IF jsonb_typeof(p_value) = 'number' THEN
		v_seconds := (p_value::text)::numeric;
	ELSIF jsonb_typeof(p_value) = 'string' THEN
		v_parts := regexp_match(p_value #>> '{}', '^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$');
		IF v_parts IS NULL THEN
			RAISE EXCEPTION 'invalid duration for option "%": %', p_option, p_value
				USING ERRCODE = '22007',
					  HINT = 'Write a number of seconds or a string like "10s", "500ms", "2m", "1h", "1d".';
		END IF;
		v_seconds := v_parts[1]::numeric * CASE v_parts[2]
			WHEN 'ms' THEN 0.001 WHEN 's' THEN 1 WHEN 'm' THEN 60 WHEN 'h' THEN 3600
			ELSE 86400 END;
	ELSE
		RAISE EXCEPTION 'invalid duration for option "%": %', p_option, p_value
			USING ERRCODE = '22007';
	END IF;
	-- below the interval's microsecond it would be stored as zero (and a
	-- numeric far below it is out of float8's range in the product below)
	IF v_seconds < 0.000001 THEN
		RAISE EXCEPTION 'option "%" must be a positive duration', p_option
			USING ERRCODE = '22023';
	END IF;
	IF v_seconds > 3153600000 THEN	-- 36500 days
		RAISE EXCEPTION 'option "%" must be at most 36500 days', p_option USING ERRCODE = '22023';
	END IF;
	IF v_parts IS NOT NULL THEN
		RETURN v_parts[1]::numeric * CASE v_parts[2]
			WHEN 'ms' THEN interval '1 millisecond'
			WHEN 's' THEN interval '1 second'
			WHEN 'm' THEN interval '1 minute'
			WHEN 'h' THEN interval '1 hour'
			ELSE interval '1 day' END;
	END IF;
	RETURN v_seconds * interval '1 second';
END;
$$;

-- The log settings of this session (genroc.c): payloads, payload_max,
-- log_retention_s, instance_retention_s.
CREATE FUNCTION genroc._log_settings() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_log_settings'
	LANGUAGE C STABLE PARALLEL SAFE;

-- A log entry's detail from key/value pairs, as jsonb_build_object builds
-- it, for text, integer, boolean and jsonb values; the hot path's details
-- (genroc.c says why it is not jsonb_build_object).
CREATE FUNCTION genroc._detail(VARIADIC "any") RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_detail'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;

/*
 * A log entry's detail as the log keeps it (docs/operations.md "Logs and
 * retention"): the engine's rule (engine/log_payloads.hpp) under this
 * session's genroc.log_payloads, genroc.log_payload_max and
 * genroc.object_threshold — the payload keys (input, output, payload at
 * the top level) removed, or one longer than log_payload_max a marker
 * {truncated, bytes, head}; then large payloads stored values.  Every log
 * row with a payload key is written through it (the statements LOG_ROW and
 * STEP_LOG_ROWS, the set-wise statements of complete_many and
 * start_many).  In C (genroc.c): the common case, a detail kept as it is,
 * costs no SPI and no SQL call.
 */
CREATE FUNCTION genroc._log_payloads(p_detail jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_log_payloads_fn'
	LANGUAGE C VOLATILE STRICT;

/*
 * Durability (docs/design.md §4).  Every engine function that
 * writes calls genroc._flush_commit with the class of its work, and the
 * level in the setting genroc.durability decides whether this transaction's
 * commit is flushed before it is confirmed:
 *
 *   class            flushed at
 *   outside          essential, terminal, strict   (start, activity results,
 *                                                   cancel: work from outside)
 *   only_once_claim  essential, terminal, strict   (before the handler runs)
 *   only_once_report essential, terminal, strict   (its complete or fail: an
 *                                                   acknowledged result is
 *                                                   never lost to a crash)
 *   terminal         terminal, strict              (an instance ended)
 *   progress         strict                        (anything else)
 *
 * It sets synchronous_commit for the transaction ('on' or 'off': the server
 * default is 'on', so a commit that need not wait is set 'off' explicitly)
 * and never turns a flush that an earlier statement of the same transaction
 * asked for back off.  WAL is sequential: a flushed commit makes every
 * earlier commit durable too, so the unflushed progress of an instance
 * becomes durable with the next flushed commit of any session.
 */
CREATE FUNCTION genroc._flush_commit(p_class text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_flush_commit'
	LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION genroc.durability() RETURNS text
	AS 'MODULE_PATHNAME', 'genroc_durability_level'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION genroc.durability() IS
	'The durability level in force for this session (setting genroc.durability): none, essential, terminal or strict.';


