-- cancel: ends a live instance in any status; drops its lease, timer or
-- activity token (late reports are refused); an ended instance → RC008.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker';
SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","Next":"Nap"},"Nap":{"Type":"Wait","Seconds":60,"Next":"Ask"},"Ask":{"Type":"Task","Resource":"activity:ask","End":true}}}');

-- ready
SELECT instance_id AS ready FROM genroc.start('job', '{}') \gset
SELECT genroc.cancel(:ready);
SELECT status, error, lease_owner FROM genroc.instances WHERE id = :ready;
SELECT count(*) AS claimable FROM genroc.claim('w1', '{default}');

-- running: the worker's report is refused afterwards
SELECT instance_id AS running FROM genroc.start('job', '{}') \gset
SELECT epoch > 0 AS epoch FROM genroc.claim('w1', '{default}');
SELECT genroc.cancel(:running);
SELECT genroc.complete(:running, 1, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS renewed FROM genroc.renew('w1', ARRAY[:running]::bigint[]);

-- waiting on a timer: tick does not wake it
SELECT instance_id AS timer FROM genroc.start('job', '{}') \gset
SELECT genroc.complete(:timer, (SELECT epoch FROM genroc.claim('w1', '{default}')), '{}');
SELECT genroc.cancel(:timer);
SET genroc.test_clock = '2030-01-01 00:02:00Z';
SELECT genroc.tick();

-- parked at an activity: its token is void
SELECT instance_id AS act FROM genroc.start('job', '{}') \gset
SELECT genroc.complete(:act, (SELECT epoch FROM genroc.claim('w1', '{default}')), '{}');
SET genroc.test_clock = '2030-01-01 00:03:00Z';
SELECT genroc.tick() ->> 'timers' AS timers;
SELECT token AS token FROM genroc.claim_activity('ask', 'outside') \gset
SELECT genroc.cancel(:act);
SELECT genroc.activity_succeed(:'token', '{}');
\echo :LAST_ERROR_SQLSTATE

SELECT id, status, error, ended_at IS NOT NULL AS ended FROM genroc.instances ORDER BY id;
-- ended instances cannot be cancelled again; unknown ones do not exist
SELECT genroc.cancel(:ready);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.cancel(4242);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.cancel(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT event, state, detail FROM genroc.history(:act) WHERE event = 'cancelled';

DROP EXTENSION genroc;
