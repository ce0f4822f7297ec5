-- Leases: claim order and batches, epochs, renew, stale reports (RC004),
-- lapse → ready again, the bound on interruptions, release, worker_stop,
-- concurrency, queues.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1","lease_duration":"10s","stale_after":"30s"}');
SELECT genroc.worker_register('w2', '{"host":"box-2","lease_duration":"20s"}');
SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","ResultPath":"$.result","End":true}}}');

-- claim order: priority ascending, then eligible time, then id
SELECT instance_id AS low FROM genroc.start('job', '{"n":1}', '{"priority":5}') \gset
SET genroc.test_clock = '2030-01-01 00:00:01Z';
SELECT instance_id AS old FROM genroc.start('job', '{"n":2}') \gset
SET genroc.test_clock = '2030-01-01 00:00:02Z';
SELECT instance_id AS young FROM genroc.start('job', '{"n":3}') \gset
SELECT instance_id AS urgent FROM genroc.start('job', '{"n":4}', '{"priority":-1}') \gset
SELECT instance_id AS other_queue FROM genroc.start('job', '{"n":5}') \gset
-- (queues are decided at start by routing, a later issue; moved by hand here)
UPDATE genroc._instances SET queue = 'special' WHERE id = :other_queue;
-- epochs are random (docs/design.md "Fencing and liveness"): shown as whether set
SELECT instance_id, epoch > 0 AS epoch, input, attempt, only_once, lease_expires = '2030-01-01 00:00:12Z' AS lease_10s
FROM genroc.claim('w1', '{default}', 2);
SELECT instance_id, epoch > 0 AS epoch, input, lease_expires = '2030-01-01 00:00:22Z' AS lease_20s
FROM genroc.claim('w2', '{default,special}', 10);
SELECT lease_epoch AS urgent_epoch FROM genroc.instances WHERE id = :urgent \gset
SELECT lease_epoch AS old_epoch FROM genroc.instances WHERE id = :old \gset
SELECT lease_epoch AS young_epoch FROM genroc.instances WHERE id = :young \gset
SELECT count(*) AS nothing_left FROM genroc.claim('w1', '{default,special}', 10);

-- complete with the right epoch: the instance goes on (here: to its end)
SELECT genroc.complete(:urgent, :urgent_epoch, '{"ok":true}');
SELECT genroc.get_instance(:urgent) -> 'output' AS output;
-- a second report for the same run, or a wrong epoch, is refused
SELECT genroc.complete(:urgent, :urgent_epoch, '{"ok":true}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.fail(:old, :old_epoch + 1, 'Boom');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.complete(999999, 1, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT status, lease_owner, lease_epoch = :old_epoch AS same_epoch FROM genroc.instances WHERE id = :old;

-- renew: extends what the worker holds; others' leases are simply absent
SET genroc.test_clock = '2030-01-01 00:00:08Z';
SELECT array_agg(r ORDER BY r) = ARRAY[:old]::bigint[] AS renewed_only_own
FROM genroc.renew('w1', ARRAY[:old, :young, :low, 424242]::bigint[]) AS r;
SELECT id, lease_owner, lease_expires = '2030-01-01 00:00:18Z' AS extended_to_18s
FROM genroc.instances WHERE id IN (:old, :low) ORDER BY id;

-- lapse: at 00:00:22 w2's leases (young, low, other_queue) and w1's
-- renewed one (old, until 00:00:18) have expired
SET genroc.test_clock = '2030-01-01 00:00:22Z';
SELECT genroc.tick();
SELECT id, status, lease_owner, interruptions FROM genroc.instances WHERE id IN (:young, :low, :other_queue, :old) ORDER BY id;
-- the same tasks run again, under new epochs (they went back in line:
-- eligible again from the lapse on); the old worker's report loses
SELECT instance_id, epoch <> ALL (ARRAY[:old_epoch, :young_epoch]::bigint[]) AS new_epoch
FROM genroc.claim('w1', '{default}', 2);
SELECT genroc.complete(:young, :young_epoch, '{"late":true}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.complete(:young, (SELECT lease_epoch FROM genroc.instances WHERE id = :young), '{"second":true}');
SELECT event, detail - 'epoch' AS detail, (detail ->> 'epoch')::bigint = :young_epoch AS first_epoch
FROM genroc.history(:young) WHERE event LIKE 'task%' ORDER BY seq;
SELECT genroc.get_instance(:young) -> 'output' AS output;

-- repeated interruptions of one attempt end in genroc.Interrupted
SET genroc.test_clock = '2030-01-01 00:01:00Z';
SELECT genroc.tick() ->> 'lapsed' AS lapsed_before;
SELECT instance_id AS loop_id FROM genroc.start('job', '{"n":6}', '{"priority":-10}') \gset
-- One round: claim at p_at, let the 10 s lease lapse, tick.
CREATE FUNCTION lapse_round(p_instance bigint, p_at timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v_epoch bigint;
	v_lapsed text;
	v_inst jsonb;
BEGIN
	PERFORM set_config('genroc.test_clock', p_at::text, false);
	SELECT c.epoch INTO v_epoch FROM genroc.claim('w1', '{default}', 1) c WHERE c.instance_id = p_instance;
	PERFORM set_config('genroc.test_clock', (p_at + interval '11 seconds')::text, false);
	v_lapsed := genroc.tick() ->> 'lapsed';
	v_inst := genroc.get_instance(p_instance);
	RETURN format('epoch %s, lapsed %s, %s after %s interruptions', v_epoch > 0, v_lapsed,
				  v_inst ->> 'status', v_inst ->> 'interruptions');
END;
$$;
SELECT n, lapse_round(:loop_id, timestamptz '2030-01-01 00:01:00Z' + n * interval '1 minute')
FROM generate_series(1, 5) AS n ORDER BY n;
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id = :loop_id;
SELECT event, detail ->> 'interruptions' AS n FROM genroc.history(:loop_id) WHERE event = 'task_interrupted' ORDER BY seq;

-- release: given back at once, ready for another worker
SET genroc.test_clock = '2030-01-01 01:00:00Z';
SELECT genroc.tick();
SELECT instance_id AS rel FROM genroc.start('job', '{"n":7}', '{"priority":-20}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}', 1);
SELECT genroc.release('w1', ARRAY[:rel]);
SELECT genroc.release('w1', ARRAY[:rel]);
SELECT status, lease_owner FROM genroc.instances WHERE id = :rel;
SELECT instance_id = :rel AS same, epoch > 0 AS epoch FROM genroc.claim('w2', '{default}', 1);

-- worker_stop releases everything the worker holds
SELECT genroc.worker_stop('w2');
SELECT status, lease_owner FROM genroc.instances WHERE id = :rel;
SELECT genroc.claim('w2', '{default}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.renew('w2', ARRAY[:rel]);
\echo :LAST_ERROR_SQLSTATE

-- concurrency: a worker never holds more than its limit
SELECT genroc.worker_register('w3', '{"host":"box-3","concurrency":2}') ->> 'worker';
SELECT count(*) AS ready FROM genroc.instances WHERE status = 'ready';
SELECT count(*) AS first_claim FROM genroc.claim('w3', '{default,special}', 10);
SELECT count(*) AS second_claim FROM genroc.claim('w3', '{default,special}', 10);
SELECT worker, live, running FROM genroc.workers ORDER BY worker;

-- argument errors
SELECT genroc.claim('w1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.claim('w1', '{default}', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.complete(:rel, NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.fail(:rel, 1, NULL);
\echo :LAST_ERROR_SQLSTATE

DROP FUNCTION lapse_round;
DROP EXTENSION genroc;
