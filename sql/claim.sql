-- genroc.claim, the engine's (engine/claim.cpp): the common claim through
-- one statement prepared once per backend, a claim with queue limits
-- through their room.  Both ways give the same tasks in the same order
-- with the same log, and the errors stay in their order; the prepared
-- statements survive the extension being dropped and made again in the
-- same session.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse
-- which way a claim went: the limits' way reads each queue's settings
-- (genroc._queues) beyond what the common claim's heartbeat reads: the
-- scans of that table in this transaction, the common claim's kept
CREATE TEMP TABLE common_reads (n bigint);
CREATE FUNCTION pg_temp.queue_reads() RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(t.seq_scan, 0) + coalesce(t.idx_scan, 0)
	FROM pg_stat_xact_user_tables t WHERE t.relid = 'genroc._queues'::regclass
$$;

CREATE FUNCTION pg_temp.setup() RETURNS void LANGUAGE sql AS $$
	SELECT genroc.worker_register('w', '{"host":"box","lease_duration":"10s"}');
	SELECT genroc.worker_register('capped', '{"host":"box","concurrency":2}');
	SELECT genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","TimeoutSeconds":30,"End":true}}}');
$$;
-- five tasks on two queues (moved there by hand, as in leases.sql): the
-- claim merges the queues' heads in priority, eligible time, id order
CREATE FUNCTION pg_temp.start_five() RETURNS void LANGUAGE sql AS $$
	SELECT genroc.start('job', '{"n":1}');
	SELECT genroc.start('job', '{"n":2}', '{"priority":-1}');
	SELECT genroc.start('job', '{"n":3}', '{"priority":2}');
	SELECT genroc.start('job', '{"n":4}');
	SELECT genroc.start('job', '{"n":5}', '{"priority":-1}');
	UPDATE genroc._instances SET queue = CASE WHEN (input ->> 'n')::int IN (2, 4) THEN 'other' ELSE 'bulk' END;
$$;
SELECT pg_temp.setup();
SELECT pg_temp.start_five();

-- the common claim (no queue limit): the C path; a queue named twice counts once
BEGIN;
SELECT input ->> 'n' AS n, queue, state, resource, only_once, timeout_s, attempt,
	   epoch > 0 AS epoch, lease_expires = '2030-01-01 00:00:10Z' AS lease_10s
FROM genroc.claim('w', '{bulk,other,bulk}', 4);
INSERT INTO common_reads SELECT pg_temp.queue_reads();
COMMIT;
-- what it wrote: running rows with their lease and timeout, and one
-- task_started each with the worker, the epoch and the attempt
SELECT i.input ->> 'n' AS n, i.status, i.lease_owner, i.timeout_at = '2030-01-01 00:00:30Z' AS timeout_30s,
	   l.detail ->> 'worker' AS worker,
	   (l.detail ->> 'epoch')::bigint = i.lease_epoch AS logged_epoch, l.detail ->> 'attempt' AS attempt
FROM genroc._instances i JOIN genroc._log l ON l.instance_id = i.id AND l.event = 'task_started'
ORDER BY i.id;
-- then the last one (priority 2), then nothing
SELECT input ->> 'n' AS n FROM genroc.claim('w', '{bulk,other}', 10);
SELECT count(*) AS none_left FROM genroc.claim('w', '{bulk,other}', 10);

-- a queue limit anywhere: the limits' way, the same answer in the same order
DELETE FROM genroc._log;
DELETE FROM genroc._instances;
SELECT pg_temp.start_five();
SELECT genroc.queue_set('limited', '{"kind":"tenant","global_concurrency":5}') IS NOT NULL AS limited;
BEGIN;
SELECT input ->> 'n' AS n, queue, epoch > 0 AS epoch, lease_expires = '2030-01-01 00:00:10Z' AS lease_10s
FROM genroc.claim('w', '{bulk,other,bulk}', 4);
SELECT pg_temp.queue_reads() > (SELECT n FROM common_reads) AS limits_way;
COMMIT;
SELECT genroc.queue_drop('limited');

-- a worker's concurrency on the C path: it holds 0, takes 2, then nothing
DELETE FROM genroc._log;
DELETE FROM genroc._instances;
SELECT pg_temp.start_five();
SELECT count(*) AS took FROM genroc.claim('capped', '{bulk,other}', 5);
SELECT genroc.start('job', '{"n":6}') IS NOT NULL AS started;
UPDATE genroc._instances SET queue = 'bulk' WHERE input ->> 'n' = '6';
SELECT count(*) AS at_its_concurrency FROM genroc.claim('capped', '{bulk}', 5);
-- a draining worker takes nothing, and its heartbeat still moves
SET genroc.test_clock = '2030-01-01 00:00:05Z';
SELECT genroc.worker_drain('w') IS NOT NULL AS drained;
SELECT count(*) AS draining_takes FROM genroc.claim('w', '{bulk}', 5);
SELECT heartbeat_at FROM genroc._workers WHERE id = 'w';

-- the errors, in their order
SELECT * FROM genroc.claim(NULL, '{bulk}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.claim('capped', NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.claim('capped', '{bulk}', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.claim('capped', '{bulk}', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.claim('nobody', '{bulk}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_stop('capped');
SELECT * FROM genroc.claim('capped', '{bulk}', 1);
\echo :LAST_ERROR_SQLSTATE

-- dropped and made again in this session: the kept statements find the
-- new tables and functions
DROP EXTENSION genroc;
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SELECT pg_temp.setup();
SELECT pg_temp.start_five();
SELECT input ->> 'n' AS n, queue, epoch > 0 AS epoch FROM genroc.claim('w', '{bulk,other}', 2);

DROP EXTENSION genroc;
