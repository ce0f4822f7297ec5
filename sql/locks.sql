-- locks: what genroc serializes on (10_tables.sql genroc._locks, 20_core.sql
-- _lock / _try_lock): rows of its own table, made on first use, not
-- advisory-lock keys; the partition rows go with the partition's last
-- instance (70_tick.sql _prune).  Input bounds (docs/limits.md "Identifier
-- limits"): run_at's range and the names' lengths and characters.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SELECT * FROM genroc.define('job', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}');
SELECT genroc.queue_set('default', '{"global_concurrency": 5, "partition_concurrency": 3, "partition_rate_limit": {"count": 10, "period": "1h"}}') ->> 'name' AS queue;
SELECT genroc.worker_register('w1') ->> 'worker' AS worker;
SELECT status FROM genroc.start('job', '{}', '{"partition_key": "p"}');
SELECT status FROM genroc.start('job', '{}', '{"partition_key": "q"}');
SELECT count(*) AS claimed FROM genroc.claim('w1', ARRAY['default'], 5);
-- one row per thing serialized: the definition name, the worker id, the
-- limited queue, each partition's slots and rate
SELECT kind, key FROM genroc._locks ORDER BY kind, key;
-- no advisory lock is held by a genroc call
SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory';

-- the partition rows go when the partition's instances are pruned
SELECT genroc.complete(i.id, i.lease_epoch, '1') FROM genroc._instances i WHERE i.partition_key = 'p';
SET genroc.test_clock = '2030-01-03 00:00:00Z';
SELECT genroc.prune('0', '1 day');
SELECT kind, key FROM genroc._locks WHERE kind LIKE 'partition%' ORDER BY kind, key;
-- and come back with the next one
SELECT status FROM genroc.start('job', '{}', '{"partition_key": "p"}');
SELECT kind, key FROM genroc._locks WHERE kind LIKE 'partition%' ORDER BY kind, key;

-- run_at: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z
SELECT genroc.start('job', '{}', '{"run_at": "infinity"}');
SELECT genroc.start('job', '{}', '{"run_at": "-infinity"}');
SELECT genroc.start('job', '{}', '{"run_at": "0001-01-01T00:00:00Z"}');
SELECT genroc.start('job', '{}', '{"run_at": "0044-03-15 BC"}');
SELECT genroc.start('job', '{}', '{"run_at": "294276-01-01"}');
SELECT status FROM genroc.start('job', '{}', '{"run_at": "9999-12-31T23:59:59.999Z"}');

-- names: at most 200 characters (label values 1000), no control characters
SELECT genroc.worker_register(repeat('w', 100000));
SELECT genroc.worker_register(E'w\n1');
SELECT genroc.worker_register(E'w\u0085');
SELECT genroc.worker_register(repeat('é', 200)) ->> 'worker' = repeat('é', 200) AS registered;
SELECT genroc.define(repeat('d', 201), '{}');
SELECT genroc.start('job', '{}', jsonb_build_object('idempotency_key', repeat('k', 201)));
SELECT genroc.start('job', '{}', jsonb_build_object('labels', jsonb_build_object('team', repeat('v', 1001))));
SELECT genroc.start('job', '{}', jsonb_build_object('labels', jsonb_build_object(E'te\tam', 'v')));
SELECT genroc.queue_set(repeat('q', 201), '{"kind": "tenant"}');
SELECT genroc.emit(max(id), E'ev\u0007', 'null') FROM genroc._instances;

DROP EXTENSION genroc;
