-- OnlyOnce: a claimed OnlyOnce task whose lease is lost (lapse, release,
-- the worker registering again) is never handed out again on its own: the
-- instance gets only_once.interrupted, which Retry and Catch see.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1","lease_duration":"10s","stale_after":"15s"}') ->> 'worker';
SELECT * FROM genroc.define('pay', '{"StartAt":"Charge","States":{
	"Charge":{"Type":"Task","Resource":"handler:charge","OnlyOnce":true,"End":true}}}');
SELECT * FROM genroc.define('pay_caught', '{"StartAt":"Charge","States":{
	"Charge":{"Type":"Task","Resource":"handler:charge","OnlyOnce":true,
		"Catch":[{"ErrorEquals":["only_once.interrupted"],"Next":"Check","ResultPath":"$.interrupted"}],"End":true},
	"Check":{"Type":"Task","Resource":"handler:check","End":true}}}');
SELECT * FROM genroc.define('pay_retried', '{"StartAt":"Charge","States":{
	"Charge":{"Type":"Task","Resource":"handler:charge","OnlyOnce":true,
		"Retry":[{"ErrorEquals":["only_once.interrupted"],"IntervalSeconds":5,"MaxAttempts":1}],"End":true}}}');

-- lapse
SELECT instance_id AS lapsed FROM genroc.start('pay', '{"amount":10}') \gset
SELECT instance_id = :lapsed AS got_it, epoch > 0 AS epoch, only_once FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT genroc.tick();
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id = :lapsed;
SELECT count(*) AS handed_out_again FROM genroc.claim('w1', '{default}');
SELECT genroc.complete(:lapsed, 1, '{}');
\echo :LAST_ERROR_SQLSTATE

-- release: Catch takes the instance to its next task
SELECT instance_id AS released FROM genroc.start('pay_caught', '{"amount":20}') \gset
SELECT epoch > 0 AS epoch, only_once FROM genroc.claim('w1', '{default}');
SELECT genroc.release('w1', ARRAY[:released]);
SELECT status, state, genroc.get_instance(id) -> 'task_input' AS check_input FROM genroc.instances WHERE id = :released;
SELECT state, epoch > 0 AS epoch, only_once, input FROM genroc.claim('w1', '{default}');
SELECT genroc.complete(:released, (SELECT lease_epoch FROM genroc.instances WHERE id = :released), '"checked"');
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :released;

-- a Retry on only_once.interrupted runs the task again as a new attempt
SELECT instance_id AS retried FROM genroc.start('pay_retried', '{"amount":30}') \gset
SELECT epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}');
-- the worker crashes; after stale_after it registers again and takes back
-- its leases at once
SET genroc.test_clock = '2030-01-01 00:00:26Z';
SELECT genroc.worker_register('w1', '{"host":"box-1","lease_duration":"10s","stale_after":"15s"}');
SELECT status, attempt, eligible_at = '2030-01-01 00:00:31Z' AS after_5s FROM genroc.instances WHERE id = :retried;
SET genroc.test_clock = '2030-01-01 00:00:31Z';
SELECT epoch > 0 AS epoch, attempt, only_once FROM genroc.claim('w1', '{default}');
SELECT genroc.complete(:retried, (SELECT lease_epoch FROM genroc.instances WHERE id = :retried), '"charged once"');
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :retried;
SELECT event, detail ->> 'reason' AS reason, detail ->> 'error' AS error
FROM genroc.history(:retried) WHERE event IN ('task_interrupted', 'task_failed') ORDER BY seq;

DROP EXTENSION genroc;
