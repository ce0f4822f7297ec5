-- Timeouts: a handler task's TimeoutSeconds counts from its claim; an
-- activity's from its parking; HeartbeatSeconds from the activity's claim
-- and each heartbeat.  tick records them as States.Timeout /
-- States.HeartbeatTimeout, which Retry and Catch see like any error.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1","lease_duration":"1h"}') ->> 'worker' AS worker;
SELECT * FROM genroc.define('t', '{"StartAt":"Work","States":{
	"Work":{"Type":"Task","Resource":"handler:work","TimeoutSeconds":5,"End":true}}}');
SELECT * FROM genroc.define('tc', '{"StartAt":"Work","States":{
	"Work":{"Type":"Task","Resource":"handler:work","TimeoutSeconds":5,
		"Catch":[{"ErrorEquals":["States.Timeout"],"Next":"Late","ResultPath":"$.late"}],"End":true},
	"Late":{"Type":"Pass","End":true}}}');

SELECT instance_id AS t1 FROM genroc.start('t', '{}') \gset
-- not claimed for a minute: no timeout (it counts from the claim)
SET genroc.test_clock = '2030-01-01 00:01:00Z';
SELECT genroc.tick();
SELECT epoch > 0 AS epoch, timeout_s FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:01:04Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 00:01:05Z';
SELECT genroc.tick();
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id = :t1;
-- the worker's late report is refused
SELECT genroc.complete(:t1, 1, '{}');
\echo :LAST_ERROR_SQLSTATE

-- caught timeout
SELECT instance_id AS t2 FROM genroc.start('tc', '{"n":1}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:01:10Z';
SELECT genroc.tick();
SELECT status, state, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :t2;

-- a report in time wins; no timeout afterwards
SELECT instance_id AS t3 FROM genroc.start('t', '{}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:01:14Z';
SELECT genroc.complete(:t3, (SELECT lease_epoch FROM genroc.instances WHERE id = :t3), '"in time"');
SET genroc.test_clock = '2030-01-01 00:02:00Z';
SELECT genroc.tick();
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :t3;

-- activity TimeoutSeconds counts from parking, claimed or not
SET genroc.test_clock = '2030-01-01 01:00:00Z';
SELECT * FROM genroc.define('a', '{"StartAt":"Ask","States":{
	"Ask":{"Type":"Task","Resource":"activity:ask","TimeoutSeconds":30,"HeartbeatSeconds":10,"End":true}}}');
SELECT instance_id AS a1 FROM genroc.start('a', '{"q":1}') \gset
SELECT instance_id AS a2 FROM genroc.start('a', '{"q":2}') \gset
SELECT activity_token AS a2_token FROM genroc._instances WHERE id = :a2 \gset
SET genroc.test_clock = '2030-01-01 01:00:05Z';
-- one is claimed: its heartbeat clock starts now (deadline 01:00:15)
SELECT token AS a1_token, instance_id = :a1 AS claimed_first, input, heartbeat_s, timeout_s
FROM genroc.claim_activity('ask', 'outside', 1) \gset
SELECT :'claimed_first' AS claimed_first, :'input' AS input, :heartbeat_s AS heartbeat_s, :timeout_s AS timeout_s;
SET genroc.test_clock = '2030-01-01 01:00:12Z';
SELECT genroc.activity_heartbeat(:'a1_token');
-- 01:00:21: within 10 s of the heartbeat at 01:00:12
SET genroc.test_clock = '2030-01-01 01:00:21Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 01:00:22Z';
SELECT genroc.tick();
SELECT id, status, error FROM genroc.instances WHERE id IN (:a1, :a2) ORDER BY id;
-- the unclaimed one has no heartbeat deadline, but times out 30 s after parking
SET genroc.test_clock = '2030-01-01 01:00:29.999Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 01:00:30Z';
SELECT genroc.tick();
SELECT id, status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id IN (:a1, :a2) ORDER BY id;
-- their tokens are no longer valid
SELECT genroc.activity_succeed(:'a2_token', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.activity_heartbeat(:'a1_token');
\echo :LAST_ERROR_SQLSTATE

DROP EXTENSION genroc;
