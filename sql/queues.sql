-- queues: queue_set option checking, rate_limit and partition_rate_limit in
-- claim (the sliding windows), list_queues showing the effective limits.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

-- rate options: an object {"count": N >= 1, "period": duration}
SELECT genroc.queue_set('acme', '{"kind":"tenant","rate_limit":5}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","rate_limit":{"count":5}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","rate_limit":{"count":0,"period":"1s"}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":"fast"}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":{"period":"1s"}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":{"count":0,"period":"1s"}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":{"count":1.5,"period":"1s"}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":{"count":1,"period":"soon"}}');
SELECT genroc.queue_set('acme', '{"kind":"tenant","partition_rate_limit":{"count":1,"period":"1s","burst":2}}');
SELECT count(*) AS queues FROM genroc.queues;

-- a queue leaving it out has the default queue's
SELECT q ->> 'partition_rate_limit' AS partition_rate_limit, q ->> 'partition_rate_period_ms' AS period_ms
FROM genroc.queue_set('default', '{"partition_concurrency":10,"partition_rate_limit":{"count":2,"period":"10s"}}') q;
SELECT name, partition_rate_limit, partition_rate_period_ms, rate_limit
FROM genroc.queue_set('acme', '{"kind":"tenant"}') AS q,
	 jsonb_to_record(q) AS r(name text, partition_rate_limit int, partition_rate_period_ms bigint, rate_limit int);
SELECT name, partition_rate_limit, partition_rate_period_ms FROM genroc.queues ORDER BY name;

-- partition_rate_limit 2 per 10s: partition a has 4 ready tasks, b 1, and
-- one task has no key; a batch takes 2 of a, b's and the keyless one
SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT count(*) AS started FROM generate_series(1, 4) g, genroc.start('job', jsonb_build_object('n', g), '{"partition_key":"a"}');
SELECT count(*) AS started FROM genroc.start('job', '{}', '{"partition_key":"b"}');
SELECT count(*) AS started FROM genroc.start('job', '{}', '{}');
SELECT genroc.worker_register('w', '{}') ->> 'worker' AS worker;
SELECT genroc.get_instance(c.instance_id) ->> 'partition_key' AS partition_key, count(*) AS claimed
FROM genroc.claim('w', '{default}', 10) c GROUP BY 1 ORDER BY 1;
-- a's window is full: its tasks wait, ready; nothing failed
SELECT count(*) AS claimed FROM genroc.claim('w', '{default}', 10);
SELECT genroc.get_instance(id) ->> 'partition_key' AS partition_key, status, count(*)
FROM genroc.instances GROUP BY 1, 2 ORDER BY 1, 2;
SET genroc.test_clock = '2030-01-01 00:00:09.999Z';
SELECT count(*) AS claimed FROM genroc.claim('w', '{default}', 10);
-- the window slides past the first starts
SET genroc.test_clock = '2030-01-01 00:00:10.001Z';
SELECT count(*) AS claimed FROM genroc.claim('w', '{default}', 10);
SELECT genroc.get_instance(id) ->> 'partition_key' AS partition_key, status, count(*)
FROM genroc.instances GROUP BY 1, 2 ORDER BY 1, 2;

-- rate_limit and partition_rate_limit together: each bounds the claim
SET genroc.test_clock = '2030-01-01 00:05:00Z';
SELECT genroc.queue_set('default', '{"partition_concurrency":10,"rate_limit":{"count":3,"period":"1m"},"partition_rate_limit":{"count":2,"period":"10s"}}')
	->> 'rate_limit' AS rate_limit;
SELECT count(*) AS started FROM generate_series(1, 3) g, genroc.start('job', jsonb_build_object('n', g), '{"partition_key":"c"}');
SELECT count(*) AS started FROM generate_series(1, 3) g, genroc.start('job', jsonb_build_object('n', g), '{}');
SELECT genroc.get_instance(c.instance_id) ->> 'partition_key' AS partition_key, count(*) AS claimed
FROM genroc.claim('w', '{default}', 10) c GROUP BY 1 ORDER BY 1;
SELECT count(*) AS claimed FROM genroc.claim('w', '{default}', 10);
-- the start rows older than the longest period (1m) are gone
SELECT count(*) AS start_rows FROM genroc._queue_starts;

-- more tasks of one partition ahead than claim reads at once: the tasks
-- behind them are still found
SET genroc.test_clock = '2030-01-01 00:10:00Z';
SELECT count(genroc.cancel(id)) AS cancelled FROM genroc.instances WHERE status = 'ready';
SELECT genroc.queue_set('default', '{"partition_concurrency":200,"partition_rate_limit":{"count":2,"period":"10s"}}')
	->> 'partition_rate_limit' AS partition_rate_limit;
SELECT count(*) AS started FROM generate_series(1, 150) g, genroc.start('job', jsonb_build_object('n', g), '{"partition_key":"big"}');
SELECT count(*) AS started FROM genroc.start('job', '{}', '{"partition_key":"small"}');
SELECT genroc.get_instance(c.instance_id) ->> 'partition_key' AS partition_key, count(*) AS claimed
FROM genroc.claim('w', '{default}', 1) c GROUP BY 1 ORDER BY 1;
SELECT genroc.get_instance(c.instance_id) ->> 'partition_key' AS partition_key, count(*) AS claimed
FROM genroc.claim('w', '{default}', 10) c GROUP BY 1 ORDER BY 1;
SELECT count(*) AS claimed FROM genroc.claim('w', '{default}', 10);

DROP EXTENSION genroc;
