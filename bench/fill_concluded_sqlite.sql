-- fill_concluded_sqlite.sql — fill_concluded.sql for a SQLite file (the
-- sqlite3 shell): concluded instances and their log, copied from two
-- instances the engine ran in this file (instance :small with a small input
-- {"n": 0}, instance :large with a large one), as bench/storage.sh
-- (SQLITE_MILLION) makes them with `genroc run`.  Each copy gets its own end
-- time (the template's times shifted), its own input ({"n": g}, or, every
-- :large_every-th, a new value of about :large_bytes bytes of random hex,
-- stored once in objects and referenced), and the template's log rows with
-- the input (or reference) replaced.  The hash of a copied object is random
-- (the shell has no sha256): nothing here reads a value by its hash.
--
-- Parameters (.parameter set): :n, :large_every (0: none), :large_bytes,
-- :ended_from (ms since the epoch), :step_ms, :small, :large (template ids).
BEGIN;
CREATE TEMP TABLE fill AS
SELECT value AS g, :ended_from + (value - 1) * :step_ms AS ended,
	   CASE WHEN :large_every > 0 AND value % :large_every = 0 THEN lower(hex(randomblob(32))) END AS hash,
	   CASE WHEN :large_every > 0 AND value % :large_every = 0
			THEN '{"blob":"' || lower(hex(randomblob((:large_bytes - 11) / 2))) || '"}' END AS value
FROM generate_series(1, :n);
-- the ids the copies get: AUTOINCREMENT goes on from the largest id ever
CREATE TEMP TABLE base AS
SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'instances'), 0),
		   coalesce((SELECT max(id) FROM instances), 0)) AS id;
INSERT INTO objects (hash, value, bytes, created_at, check_at, unused_since)
SELECT hash, value, length(value), ended - 40,
	   -- collection looked at it last within the day before
	   CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + abs(random() % 86400000), NULL
FROM fill WHERE hash IS NOT NULL;
INSERT INTO instances (definition_id, status, state, state_input, task_input, resource, queue, priority,
					   eligible_at, lease_owner, lease_epoch, lease_expires, retry_counts, attempt,
					   interruptions, only_once, timeout_s, timeout_at, heartbeat_s, heartbeat_at, wait_kind,
					   wait_until, activity, activity_token, activity_owner, input, output, error, cause,
					   idempotency_key, labels, partition_key, name, created_at, updated_at, ended_at,
					   parent_id, root_id, child_index, child_gen, scope, fanout, variables)
SELECT t.definition_id, t.status, t.state, t.state_input, t.task_input, t.resource, t.queue, t.priority,
	   t.eligible_at + f.ended - t.ended_at, t.lease_owner, abs(random()), t.lease_expires, t.retry_counts,
	   t.attempt, t.interruptions, t.only_once, t.timeout_s, t.timeout_at, t.heartbeat_s, t.heartbeat_at,
	   t.wait_kind, t.wait_until, t.activity, t.activity_token, t.activity_owner,
	   CASE WHEN f.hash IS NULL THEN '{"n":' || f.g || '}' ELSE '{"genroc:object":"' || f.hash || '"}' END,
	   CASE WHEN f.hash IS NULL THEN '{"n":' || f.g || '}' ELSE '{"genroc:object":"' || f.hash || '"}' END,
	   t.error, t.cause, t.idempotency_key, t.labels, t.partition_key, t.name,
	   t.created_at + f.ended - t.ended_at, t.updated_at + f.ended - t.ended_at, f.ended,
	   t.parent_id, t.root_id, t.child_index, t.child_gen, t.scope, t.fanout, t.variables
FROM fill f JOIN instances t ON t.id = CASE WHEN f.hash IS NULL THEN :small ELSE :large END
ORDER BY f.g;
INSERT INTO log (instance_id, at, event, state, detail)
SELECT base.id + f.g, l.at + f.ended - t.ended_at, l.event, l.state,
	   replace(l.detail, t.input,
			   CASE WHEN f.hash IS NULL THEN '{"n":' || f.g || '}' ELSE '{"genroc:object":"' || f.hash || '"}' END)
FROM fill f CROSS JOIN base
JOIN instances t ON t.id = CASE WHEN f.hash IS NULL THEN :small ELSE :large END
JOIN log l ON l.instance_id = t.id
ORDER BY f.g, l.seq;
DROP TABLE fill;
DROP TABLE base;
COMMIT;
