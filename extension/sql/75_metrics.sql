/*
 * Figures for operators: the queues (genroc.queue_stats, also a view for
 * psql), the snapshot the binary's GET /metrics turns into gauges
 * (genroc.metrics), and who ticks (genroc.tickers, written by every
 * genroc.tick through genroc._tick_record).  docs/operations.md "Metrics" and
 * "In-database ticker".
 *
 * What a caller sees (12_roles.sql): queue figures count every instance for
 * a role with the worker or operator capability, else only the caller's own
 * instances (and name only the configured queues and those of its own
 * instances); metrics() counts instances by definition by the operator rule
 * of the instances view (a worker-only role: its own).
 */

-- Records that this session ticked (the end of genroc.tick).  Who: the
-- in-database ticker when this backend is one (its backend type, which no
-- session can fake); a genroc binary by its application_name ("genroc
-- worker <id>", set for the tick's transaction by the binary); anyone else
-- by application_name, or the role when that is empty.  Never waits: a row
-- another tick of the same name holds is left to that tick, which records
-- the same thing.  Rows not ticked for 7 days are deleted.
CREATE FUNCTION genroc._tick_record(p_now timestamptz) RETURNS void
	LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v_app text := coalesce(current_setting('application_name', true), '');
	v_role text := genroc._caller()::regrole::text;
	v_kind text;
	v_by text;
BEGIN
	IF EXISTS (SELECT 1 FROM pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()) a
			   WHERE a.backend_type = 'genroc ticker') THEN
		v_kind := 'ticker';
		v_by := 'genroc ticker';
	ELSIF v_app LIKE 'genroc worker %' THEN
		v_kind := 'binary';
		v_by := v_app;
	ELSE
		v_kind := 'session';
		v_by := CASE WHEN v_app = '' THEN v_role ELSE v_app END;
	END IF;
	v_by := left(v_by, 200);
	IF EXISTS (SELECT 1 FROM genroc._tickers t WHERE t.ticked_by = v_by) THEN
		UPDATE genroc._tickers t
		SET kind = v_kind, role = v_role, last_tick_at = p_now, ticks = t.ticks + 1
		WHERE t.ctid = (SELECT t2.ctid FROM genroc._tickers t2 WHERE t2.ticked_by = v_by
						FOR UPDATE SKIP LOCKED);
	ELSE
		INSERT INTO genroc._tickers (ticked_by, kind, role, first_tick_at, last_tick_at)
		VALUES (v_by, v_kind, v_role, p_now, p_now)
		ON CONFLICT (ticked_by) DO NOTHING;
	END IF;
	DELETE FROM genroc._tickers t
	WHERE t.ctid IN (SELECT t2.ctid FROM genroc._tickers t2
					 WHERE t2.last_tick_at < p_now - interval '7 days' FOR UPDATE SKIP LOCKED);
END;
$$;

CREATE FUNCTION genroc.tickers()
	RETURNS TABLE (ticked_by text, kind text, role text, first_tick_at timestamptz,
				   last_tick_at timestamptz, ago_ms bigint, ticks bigint)
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._entry();
		SELECT t.ticked_by, t.kind, t.role, t.first_tick_at, t.last_tick_at,
			   (extract(epoch FROM genroc.now() - t.last_tick_at) * 1000)::bigint, t.ticks
		FROM genroc._tickers t
		ORDER BY t.last_tick_at DESC, t.ticked_by;
	END;
COMMENT ON FUNCTION genroc.tickers() IS
	'Who called genroc.tick() in the last 7 days, newest first: the in-database ticker (kind ticker), genroc binaries (kind binary, by worker id) and other sessions (kind session), with the first and last tick, milliseconds since the last, and the count.';

CREATE FUNCTION genroc.queue_stats()
	RETURNS TABLE (queue text, ready bigint, oldest_ready_s double precision, queued bigint,
				   running bigint, workers int)
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._entry();
		WITH me AS (
			SELECT genroc._caller() AS role, genroc.now() AS now,
				   genroc._can(genroc._caller(), 'operator')
				   OR genroc._can(genroc._caller(), 'worker') AS every),
		live AS (
			SELECT w.queues FROM genroc._workers w, me
			WHERE w.stopped_at IS NULL AND w.heartbeat_at > me.now - w.stale_after),
		inst AS (
			-- each status through its partial index (ready: _instances_claim,
			-- running: _instances_lease, queued: _instances_status, which
			-- holds no ready or running row): a status list in one scan
			-- reads the whole table
			SELECT i.queue, i.status, i.eligible_at, i.owner FROM (
				SELECT r.queue, r.status, r.eligible_at, r.owner FROM genroc._instances r WHERE r.status = 'ready'
				UNION ALL
				SELECT r.queue, r.status, r.eligible_at, r.owner FROM genroc._instances r WHERE r.status = 'running'
				UNION ALL
				SELECT r.queue, r.status, r.eligible_at, r.owner FROM genroc._instances r WHERE r.status = 'queued') i, me
			WHERE me.every OR genroc._may(me.role, i.owner, 'operator')),
		names AS (
			SELECT q.name FROM genroc._queues q
			UNION SELECT unnest(l.queues) FROM live l, me WHERE me.every
			UNION SELECT DISTINCT inst.queue FROM inst)
		SELECT n.name,
			   count(i.queue) FILTER (WHERE i.status = 'ready' AND i.eligible_at <= me.now),
			   coalesce(extract(epoch FROM me.now - min(i.eligible_at)
								FILTER (WHERE i.status = 'ready' AND i.eligible_at <= me.now)), 0)::float8,
			   count(i.queue) FILTER (WHERE i.status = 'queued'),
			   count(i.queue) FILTER (WHERE i.status = 'running'),
			   (SELECT count(*) FROM live l WHERE n.name = ANY (l.queues))::int
		FROM names n CROSS JOIN me
		LEFT JOIN inst i ON i.queue = n.name
		GROUP BY n.name, me.now
		ORDER BY n.name;
	END;
COMMENT ON FUNCTION genroc.queue_stats() IS
	'Per queue: tasks ready to claim now, seconds since the oldest of them became ready (0 when none), queued (waiting for a slot), running, and live workers serving it; workers and operators count every instance, other roles their own.';

CREATE VIEW genroc.queue_stats AS
	SELECT * FROM genroc.queue_stats();
COMMENT ON VIEW genroc.queue_stats IS 'Per queue: ready depth, age of the oldest ready task in seconds, queued, running, live workers; for psql (the figures of GET /metrics).';
REVOKE ALL ON genroc.queue_stats FROM PUBLIC;

/*
 * The database's part of GET /metrics, one call per scrape (the binary
 * keeps the answer for --metrics-cache, so scrapers share it):
 *   instances         [{status, count}] every instance for a worker or
 *                     operator, else the caller's own; every status of the
 *                     fixed seven, 0 when none has it, by name
 *   by_definition     [{definition, status, count}] the p_max_definitions
 *                     definitions with the most instances (then by name):
 *                     the label's cardinality is bounded by that times the
 *                     seven statuses; the rest are in "instances" only
 *   definitions_omitted  how many definitions were left out of by_definition
 *   queues            genroc.queue_stats(), as objects
 *   workers_alive     live registered workers (not stopped, heartbeat
 *                     within their stale_after)
 *
 * The work, for a role that sees every instance and names every definition
 * (an operator): the instances are counted
 * by definition id and status: ready and running rows (few: the work in
 * flight) through _instances_claim and _instances_lease, every other row
 * by a scan the planner picks (on a few thousand rows, a sequential scan:
 * the time still grows with the rows kept), then grouped by name (a row
 * per definition version and status).  Other roles (their
 * own instances, or, a worker, every one counted but only its own named)
 * read the rows to see their owner, grouped by owner first: the caller's
 * rights on an owner (genroc._may: role membership, the extension's owner)
 * are asked once per owner, not once per row (6.5 µs a row before: 130 ms
 * of server CPU per call at 20,000 instances, for a worker's
 * --metrics-listen).
 */
CREATE FUNCTION genroc.metrics(p_max_definitions int DEFAULT 50) RETURNS jsonb
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_role oid := genroc._caller();
	v_ops boolean := genroc._can(genroc._caller(), 'operator');
	v_all boolean := genroc._can(genroc._caller(), 'operator') OR genroc._can(genroc._caller(), 'worker');
	v_every boolean;
	v_now timestamptz := genroc.now();
	v_instances jsonb;
	v_by_def jsonb;
	v_omitted bigint;
	v_queues jsonb;
	v_workers bigint;
BEGIN
	PERFORM genroc._entry();
	IF p_max_definitions IS NULL THEN
		RAISE EXCEPTION 'p_max_definitions must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_max_definitions < 0 OR p_max_definitions > 1000 THEN
		RAISE EXCEPTION 'p_max_definitions must be between 0 and 1000, not %', p_max_definitions
			USING ERRCODE = '22023';
	END IF;
	v_every := v_ops;	-- counts and names every instance
	-- counted: as queue_stats (workers and operators every instance);
	-- named by definition: the instances view's rule (operators every one).
	-- One of the two branches of "counted" runs (v_every is a constant of
	-- the statement: the other branch's gate is false before any scan).
	WITH counted AS (
		SELECT x.definition_id, x.status, true AS named, x.n
		FROM (SELECT r.definition_id, r.status, count(*) AS n FROM genroc._instances r
			  WHERE r.status = 'ready' GROUP BY 1, 2
			  UNION ALL
			  SELECT r.definition_id, r.status, count(*) FROM genroc._instances r
			  WHERE r.status = 'running' GROUP BY 1, 2
			  UNION ALL
			  SELECT r.definition_id, r.status, count(*) FROM genroc._instances r
			  WHERE r.status NOT IN ('ready', 'running') GROUP BY 1, 2) x
		WHERE v_every
		UNION ALL
		SELECT g.definition_id, g.status, (v_ops OR genroc._may(v_role, g.owner, 'operator')), g.n
		FROM (SELECT r.definition_id, r.status, r.owner, count(*) AS n FROM genroc._instances r
			  WHERE NOT v_every GROUP BY 1, 2, 3) g
		WHERE v_all OR genroc._may(v_role, g.owner, 'operator')),
	c AS (
		SELECT d.name, k.status, k.named, sum(k.n)::bigint AS n
		FROM counted k JOIN genroc._definitions d ON d.id = k.definition_id
		GROUP BY 1, 2, 3),
	ranked AS (
		SELECT c.name, row_number() OVER (ORDER BY sum(c.n) DESC, c.name) AS rank
		FROM c WHERE c.named GROUP BY c.name)
	SELECT (SELECT jsonb_agg(jsonb_build_object('status', st.status, 'count', coalesce(s.n, 0))
							 ORDER BY st.status)
			FROM unnest('{cancelled,failed,queued,ready,running,succeeded,waiting}'::text[]) st (status)
			LEFT JOIN (SELECT c.status, sum(c.n)::bigint AS n FROM c GROUP BY c.status) s
				ON s.status = st.status),
		   coalesce((SELECT jsonb_agg(jsonb_build_object('definition', c.name, 'status', c.status,
														 'count', c.n) ORDER BY c.name, c.status)
					 FROM c JOIN ranked r ON r.name = c.name
					 WHERE c.named AND r.rank <= p_max_definitions), '[]'),
		   (SELECT count(*) FROM ranked r WHERE r.rank > p_max_definitions)
	INTO v_instances, v_by_def, v_omitted;

	SELECT coalesce(jsonb_agg(to_jsonb(q) ORDER BY q.queue), '[]') INTO v_queues
	FROM genroc.queue_stats() q;

	SELECT count(*) INTO v_workers FROM genroc._workers w
	WHERE w.stopped_at IS NULL AND w.heartbeat_at > v_now - w.stale_after;

	RETURN jsonb_build_object('instances', v_instances, 'by_definition', v_by_def,
							  'definitions_omitted', v_omitted, 'queues', v_queues,
							  'workers_alive', v_workers,
							  -- stored large values (15_objects.sql), unused ones among them
							  'objects', (SELECT jsonb_build_object('count', count(*), 'bytes', coalesce(sum(o.bytes), 0),
																	'unused', count(o.unused_since))
										  FROM genroc._objects o));
END;
$$;
COMMENT ON FUNCTION genroc.metrics(int) IS
	'The database figures of GET /metrics as one JSON object: instances by status (every status, 0 when none), by definition and status for the p_max_definitions definitions with the most instances (how many were left out), genroc.queue_stats() per queue, live workers, and the stored large values (count, bytes, unused).';
