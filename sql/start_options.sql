-- start: idempotency keys, run_at, priority, labels, name, partition_key,
-- option checking; list_instances filters.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');

-- idempotent start: the same key returns the same instance, not new
SELECT * FROM genroc.start('job', '{"n":1}', '{"idempotency_key":"order-42"}');
SELECT * FROM genroc.start('job', '{"n":2}', '{"idempotency_key":"order-42"}');
SELECT * FROM genroc.start('job', '{"n":3}', '{"idempotency_key":"order-43"}');
SELECT count(*) AS instances FROM genroc.instances;
SELECT genroc.get_instance(1) -> 'input' AS first_input_kept;
-- also after the instance ended
SELECT genroc.cancel(1);
SELECT * FROM genroc.start('job', '{"n":4}', '{"idempotency_key":"order-42"}');

-- run_at in the future: waiting, tick starts it when it is due
SELECT genroc.cancel(2);
SELECT instance_id AS later, is_new, status FROM genroc.start('job', '{"n":5}', '{"run_at":"2030-01-01T00:05:00Z"}') \gset
SELECT :'is_new' AS is_new, :'status' AS status;
SELECT status, state, wait_kind, wait_until = '2030-01-01 00:05:00Z' AS until_5m FROM genroc.instances WHERE id = :later;
SELECT genroc.worker_register('w', '{}') ->> 'worker' AS worker;
SELECT count(*) AS claimable FROM genroc.claim('w', '{default}', 10);
SET genroc.test_clock = '2030-01-01 00:04:59Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 00:05:00Z';
SELECT genroc.tick();
SELECT status, state FROM genroc.instances WHERE id = :later;
SELECT event, detail FROM genroc.history(:later) ORDER BY seq;
-- run_at in the past: starts at once
SELECT status FROM genroc.start('job', '{"n":6}', '{"run_at":"2029-01-01T00:00:00Z"}');

-- labels, name, partition_key, priority are kept
SELECT instance_id AS labelled FROM genroc.start('job', '{}', '{"labels":{"team":"billing","env":"prod"},"name":"nightly","partition_key":"billing/prod","priority":3}') \gset
SELECT j -> 'labels' AS labels, j -> 'name' AS name, j -> 'partition_key' AS partition_key, j -> 'priority' AS priority
FROM genroc.get_instance(:labelled) j;
SELECT j -> 'id' AS id, j -> 'status' AS status FROM genroc.list_instances('{"label":{"team":"billing"}}') j;
SELECT j -> 'id' AS id FROM genroc.list_instances('{"status":"cancelled"}') j;
SELECT j -> 'id' AS id FROM genroc.list_instances('{"definition":"job","limit":2}') j;
SELECT count(*) FROM genroc.list_instances('{"definition":"nope"}');

-- option errors name the option
SELECT * FROM genroc.start('job', '{}', '{"priorty":1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"priority":"high"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"priority":1.5}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"run_at":"next tuesday-ish"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"run_at":12}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"labels":{"n":1}}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '{"idempotency_key":""}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', '{}', '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('job', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.list_instances('{"colour":"red"}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.list_instances('{"status":"sleeping"}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.get_instance(12345);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.history(12345);
\echo :LAST_ERROR_SQLSTATE

DROP EXTENSION genroc;
