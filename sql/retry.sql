-- Retry: back-off under the test clock (IntervalSeconds, BackoffRate,
-- MaxDelaySeconds, JitterStrategy NONE), MaxAttempts, the first matching
-- retrier decides; a retried task is ready but not claimable before its time.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1","lease_duration":"60s"}');
SELECT * FROM genroc.define('r', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work",
	"Retry":[
		{"ErrorEquals":["Busy"],"IntervalSeconds":2,"MaxAttempts":3,"BackoffRate":2,"JitterStrategy":"NONE"},
		{"ErrorEquals":["Slow"],"IntervalSeconds":10,"MaxAttempts":3,"BackoffRate":3,"MaxDelaySeconds":15},
		{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":1}],
	"End":true}}}');

SELECT instance_id AS busy FROM genroc.start('r', '{"job":1}') \gset
SELECT instance_id, epoch > 0 AS epoch, state, resource, input, attempt FROM genroc.claim('w1', '{default}', 5);
SELECT genroc.fail(:busy, (SELECT lease_epoch FROM genroc.instances WHERE id = :busy), 'Busy', 'try later');
-- ready, eligible 2 s later (IntervalSeconds 2)
SELECT status, attempt, eligible_at = '2030-01-01 00:00:02Z' AS eligible_at_2s FROM genroc.instances WHERE id = :busy;
SELECT count(*) AS claimed_too_early FROM genroc.claim('w1', '{default}', 5);
SET genroc.test_clock = '2030-01-01 00:00:02Z';
SELECT instance_id, epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}', 5);
SELECT genroc.fail(:busy, (SELECT lease_epoch FROM genroc.instances WHERE id = :busy), 'Busy');
-- second retry: 2 s * 2 = 4 s
SELECT eligible_at = '2030-01-01 00:00:06Z' AS eligible_at_6s FROM genroc.instances WHERE id = :busy;
SET genroc.test_clock = '2030-01-01 00:00:05.999Z';
SELECT count(*) AS claimed_too_early FROM genroc.claim('w1', '{default}', 5);
SET genroc.test_clock = '2030-01-01 00:00:06Z';
SELECT instance_id, epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}', 5);
SELECT genroc.fail(:busy, (SELECT lease_epoch FROM genroc.instances WHERE id = :busy), 'Busy');
-- third retry: 8 s
SELECT eligible_at = '2030-01-01 00:00:14Z' AS eligible_at_14s FROM genroc.instances WHERE id = :busy;
SET genroc.test_clock = '2030-01-01 00:00:14Z';
SELECT instance_id, epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}', 5);
-- MaxAttempts 3 used up: the first matching retrier decided, so the
-- States.ALL retrier does not get a turn; the instance fails
SELECT genroc.fail(:busy, (SELECT lease_epoch FROM genroc.instances WHERE id = :busy), 'Busy', 'still busy');
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id = :busy;

-- MaxDelaySeconds caps the back-off: 10 s, then 30 s capped to 15 s
SET genroc.test_clock = '2030-01-01 00:01:00Z';
SELECT instance_id AS slow FROM genroc.start('r', '{"job":2}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:slow, (SELECT lease_epoch FROM genroc.instances WHERE id = :slow), 'Slow');
SELECT eligible_at = '2030-01-01 00:01:10Z' AS eligible_after_10s FROM genroc.instances WHERE id = :slow;
SET genroc.test_clock = '2030-01-01 00:01:10Z';
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:slow, (SELECT lease_epoch FROM genroc.instances WHERE id = :slow), 'Slow');
SELECT eligible_at = '2030-01-01 00:01:25Z' AS eligible_after_15s_capped FROM genroc.instances WHERE id = :slow;
SET genroc.test_clock = '2030-01-01 00:01:25Z';
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:slow, (SELECT lease_epoch FROM genroc.instances WHERE id = :slow), 'Slow');
SELECT eligible_at = '2030-01-01 00:01:40Z' AS eligible_after_15s_capped FROM genroc.instances WHERE id = :slow;
SET genroc.test_clock = '2030-01-01 00:01:40Z';
SELECT epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:slow, (SELECT lease_epoch FROM genroc.instances WHERE id = :slow), 'Slow', 'gave up');
SELECT status, error FROM genroc.instances WHERE id = :slow;

-- another error goes to the States.ALL retrier (once), then fails
SET genroc.test_clock = '2030-01-01 00:02:00Z';
SELECT instance_id AS other FROM genroc.start('r', '{"job":3}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:other, (SELECT lease_epoch FROM genroc.instances WHERE id = :other), 'Oops');
SET genroc.test_clock = '2030-01-01 00:02:01Z';
SELECT epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:other, (SELECT lease_epoch FROM genroc.instances WHERE id = :other), 'Oops', 'again');
SELECT status, error FROM genroc.instances WHERE id = :other;
-- a success after a retry ends the instance with the task's output
SET genroc.test_clock = '2030-01-01 00:03:00Z';
SELECT instance_id AS ok FROM genroc.start('r', '{"job":4}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:ok, (SELECT lease_epoch FROM genroc.instances WHERE id = :ok), 'Busy');
SET genroc.test_clock = '2030-01-01 00:03:02Z';
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.complete(:ok, (SELECT lease_epoch FROM genroc.instances WHERE id = :ok), '{"done":true}');
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :ok;
SELECT event, state, detail - 'epoch' AS detail FROM genroc.history(:ok) ORDER BY seq;

DROP EXTENSION genroc;
