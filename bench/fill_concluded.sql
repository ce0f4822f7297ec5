-- fill_concluded.sql — concluded 3-task instances and their log, made in bulk
-- (INSERT ... SELECT over generate_series) in the shape the engine writes
-- for the process "three" (Task A -> B -> C, handler:a/b/c, each task
-- returning its input; a worker "w"): one succeeded instance row and 14 log
-- rows each (started; entered, task_scheduled, task_started,
-- task_succeeded per task; succeeded), with the payloads the log keeps.
-- Every :large_every-th instance carries a value of :large_bytes bytes of
-- random hex (over genroc.object_threshold): stored once in genroc._objects
-- under the sha256 of its jsonb text, referenced from the instance's input
-- and output and from its log entries, as _store_value does.  Used by
-- bench/storage.sh (PRUNE_N, MILLION), which first runs one small and one
-- large instance through the engine and checks that the rows made here have
-- the same events, states and detail keys (fill_check below).
--
-- psql variables:
--   n             instances to make
--   large_every   every that many-th instance has a large value (0: none)
--   large_bytes   its size
--   ended_from    when the first one ended (timestamptz); the others end
--   step_ms       this many milliseconds apart, in id order (so prune's
--                 oldest-first order is id order, as in a real database)
-- The definition "three" must be version 1 of its name, as storage.sh makes it.
SET synchronous_commit = off;
WITH d AS (SELECT id FROM genroc._definitions WHERE name = 'three' AND version = 1),
	 g AS (SELECT g, :'ended_from'::timestamptz + (g - 1) * :step_ms * interval '1 millisecond' AS ended,
				  :large_every > 0 AND g % greatest(:large_every, 1) = 0 AS large
		   FROM generate_series(1, :n) g),
	 v AS (SELECT g.g, g.ended, g.large,
				  CASE WHEN g.large
					   THEN jsonb_build_object('blob', (SELECT left(string_agg(md5(random()::text || g.g || k), ''),
																   :large_bytes - 11)
														FROM generate_series(1, :large_bytes / 32 + 1) k))
					   ELSE jsonb_build_object('n', g.g) END AS value
		   FROM g),
	 o AS (INSERT INTO genroc._objects (hash, value, bytes, created_at, check_at)
		   SELECT encode(sha256(convert_to(v.value::text, 'UTF8')), 'hex'), v.value,
				  octet_length(v.value::text), v.ended - interval '40 milliseconds',
				  -- collection looked at it last within the day before
				  now() + random() * interval '1 day'
		   FROM v WHERE v.large
		   RETURNING hash, value),
	 s AS (SELECT v.g, v.ended, CASE WHEN o.hash IS NULL THEN v.value
				  ELSE jsonb_build_object('genroc:object', o.hash) END AS stored
		   FROM v LEFT JOIN o ON v.large AND o.value = v.value),
	 i AS (INSERT INTO genroc._instances (definition_id, status, state, queue, priority, eligible_at,
										  lease_epoch, attempt, interruptions, only_once, input, output,
										  labels, created_at, updated_at, ended_at)
		   SELECT d.id, 'succeeded', 'C', 'default', 0, s.ended - interval '10 milliseconds',
				  (random() * 9e18)::bigint, 0, 0, false, s.stored, s.stored,
				  '{}', s.ended - interval '40 milliseconds', s.ended, s.ended
		   FROM s, d ORDER BY s.g
		   RETURNING id, input, created_at, ended_at, lease_epoch)
INSERT INTO genroc._log (instance_id, at, event, state, detail)
SELECT i.id, i.created_at + e.n * interval '2 milliseconds', e.event, e.state,
	   CASE e.event
		   WHEN 'started' THEN jsonb_build_object('input', i.input, 'version', 1, 'definition', 'three')
		   WHEN 'entered' THEN '{"type": "Task"}'::jsonb
		   WHEN 'task_scheduled' THEN jsonb_build_object('input', i.input, 'attempt', 0, 'delay_ms', 0,
														 'resource', 'handler:' || lower(e.state))
		   WHEN 'task_started' THEN jsonb_build_object('epoch', ep.epoch, 'worker', 'w', 'attempt', 0)
		   WHEN 'task_succeeded' THEN jsonb_build_object('epoch', ep.epoch, 'output', i.input, 'worker', 'w')
		   WHEN 'succeeded' THEN jsonb_build_object('output', i.input)
	   END
FROM i
CROSS JOIN LATERAL (VALUES (hashtextextended(i.id::text, 1) & 9223372036854775807,
							hashtextextended(i.id::text, 2) & 9223372036854775807)) AS x(e1, e2)
CROSS JOIN (VALUES (1, 'started', NULL), (2, 'entered', 'A'), (3, 'task_scheduled', 'A'),
				   (4, 'task_started', 'A'), (5, 'task_succeeded', 'A'), (6, 'entered', 'B'),
				   (7, 'task_scheduled', 'B'), (8, 'task_started', 'B'), (9, 'task_succeeded', 'B'),
				   (10, 'entered', 'C'), (11, 'task_scheduled', 'C'), (12, 'task_started', 'C'),
				   (13, 'task_succeeded', 'C'), (14, 'succeeded', 'C')) AS e(n, event, state)
CROSS JOIN LATERAL (VALUES (CASE e.state WHEN 'A' THEN x.e1 WHEN 'B' THEN x.e2
										 ELSE i.lease_epoch END)) AS ep(epoch)
ORDER BY i.id, e.n;
RESET synchronous_commit;
