-- The worker registry: one live holder per id (RC005 names its host);
-- stale or stopped ids can be taken; registering again takes back the
-- instances still leased to that id; option checking; RC006.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('alpha', '{"host":"box-1","stale_after":"30s","lease_duration":"1m","queues":["default","bulk"],"concurrency":4}');
SELECT worker, host, queues, concurrency, lease_duration_ms, stale_after_ms, live, running FROM genroc.list_workers();
-- a live holder: refused, naming its host, nothing changes
SET genroc.test_clock = '2030-01-01 00:00:29Z';
SELECT genroc.worker_register('alpha', '{"host":"box-2"}');
\echo :LAST_ERROR_SQLSTATE
SELECT host FROM genroc.workers;
-- a heartbeat keeps it alive
SELECT genroc.worker_heartbeat('alpha');
SET genroc.test_clock = '2030-01-01 00:00:58Z';
SELECT genroc.worker_register('alpha', '{"host":"box-2"}');
\echo :LAST_ERROR_SQLSTATE
-- stale: 30 s after the last heartbeat the id can be taken
SET genroc.test_clock = '2030-01-01 00:00:59Z';
SELECT worker, live FROM genroc.workers;
SELECT genroc.worker_register('alpha', '{"host":"box-2"}');
SELECT worker, host, queues, concurrency, lease_duration_ms, live FROM genroc.workers;

-- registering again after a crash takes back the leases at once
SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT count(*) FROM generate_series(1, 3) AS n, LATERAL genroc.start('job', jsonb_build_object('n', n));
SELECT count(*) AS claimed FROM genroc.claim('alpha', '{default}', 2);
SET genroc.test_clock = '2030-01-01 00:02:00Z';
SELECT genroc.worker_register('alpha', '{"host":"box-2"}');
SELECT status, count(*), max(interruptions) AS interruptions FROM genroc.instances GROUP BY status;
SELECT instance_id, epoch > 0 AS epoch FROM genroc.claim('alpha', '{default}', 5);

-- stop: the id is free at once
SELECT genroc.worker_stop('alpha');
SELECT worker, live, running FROM genroc.workers;
SELECT genroc.worker_heartbeat('alpha');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_stop('alpha');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('alpha', '{"host":"box-3"}') ->> 'reclaimed' AS reclaimed;
SELECT genroc.worker_heartbeat('nobody');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.claim('nobody', '{default}');
\echo :LAST_ERROR_SQLSTATE

-- options
SELECT genroc.worker_register('beta', '{"hostname":"x"}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', '{"lease_duration":"ten seconds"}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', '{"lease_duration":0}');
\echo :LAST_ERROR_SQLSTATE
-- below a microsecond, and a number far below float8's range (sqlfuzz):
-- not positive either, not 22003
SELECT genroc.worker_register('beta', '{"lease_duration":"0.0000001s"}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', jsonb_build_object('lease_duration', ('1e-1000')::numeric));
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', '{"queues":[]}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', '{"concurrency":0}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.worker_register('beta', '{"lease_duration":"500ms","stale_after":2.5}') ->> 'worker' AS worker;
SELECT lease_duration_ms, stale_after_ms FROM genroc.workers WHERE worker = 'beta';

DROP EXTENSION genroc;
