-- Activities: parked tasks handed to outside programs with a task token;
-- one token per parking; a claimed activity is not handed out again;
-- succeed / fail / heartbeat by token; Retry on an activity.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT * FROM genroc.define('review', '{"StartAt":"Review","States":{
	"Review":{"Type":"Task","Resource":"activity:review",
		"Parameters":{"doc.$":"$.doc","token.$":"$$.Task.Token"},
		"ResultSelector":{"verdict.$":"$.verdict"},
		"ResultPath":"$.review",
		"Retry":[{"ErrorEquals":["Rejected"],"IntervalSeconds":30,"MaxAttempts":1}],
		"HeartbeatSeconds":60,
		"End":true}}}');

SELECT instance_id AS r1, status FROM genroc.start('review', '{"doc":"a.pdf"}') \gset
SELECT instance_id AS r2, status FROM genroc.start('review', '{"doc":"b.pdf"}', '{"priority":-1}') \gset
SELECT :'status' AS status;
-- no worker needed: nothing is ready for handler workers
SELECT genroc.worker_register('w', '{}') ->> 'worker';
SELECT count(*) AS for_workers FROM genroc.claim('w', '{default}', 10);
-- claim order: priority first; the token handed out is the $$.Task.Token the
-- Parameters saw
SELECT token AS t2, instance_id = :r2 AS is_r2, activity, input ->> 'doc' AS doc,
       input ->> 'token' = token AS token_in_input, heartbeat_s, timeout_s IS NULL AS no_timeout
FROM genroc.claim_activity('review', 'reviewer-1') \gset
SELECT :'is_r2' AS is_r2, :'activity' AS activity, :'doc' AS doc, :'token_in_input' AS token_in_input,
       :heartbeat_s AS heartbeat_s, :'no_timeout' AS no_timeout;
SELECT token AS t1, instance_id = :r1 AS is_r1 FROM genroc.claim_activity('review', 'reviewer-2', 5) \gset
SELECT :'is_r1' AS is_r1, :'t1' <> :'t2' AS distinct_tokens;
-- both are handed out: nothing more to claim; other activity names see nothing
SELECT count(*) AS again FROM genroc.claim_activity('review', 'reviewer-3', 5);
SELECT count(*) AS other FROM genroc.claim_activity('sign', 'reviewer-3', 5);

-- heartbeat, then success: ResultSelector then ResultPath
SELECT genroc.activity_heartbeat(:'t2');
SELECT genroc.activity_succeed(:'t2', '{"verdict":"ok","notes":"fine"}');
SELECT genroc.get_instance(:r2) -> 'output' AS output;
-- a used token is invalid
SELECT genroc.activity_succeed(:'t2', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.activity_heartbeat(:'t2');
\echo :LAST_ERROR_SQLSTATE

-- failure with a Retry: parked again after 30 s, with a new token
SELECT genroc.activity_fail(:'t1', 'Rejected', 'missing page');
SELECT status, wait_kind, attempt, eligible_at = '2030-01-01 00:00:30Z' AS after_30s FROM genroc.instances WHERE id = :r1;
SELECT count(*) AS too_early FROM genroc.claim_activity('review', 'reviewer-1');
SET genroc.test_clock = '2030-01-01 00:00:30Z';
SELECT token AS t1b FROM genroc.claim_activity('review', 'reviewer-1') \gset
SELECT :'t1b' <> :'t1' AS new_token;
SELECT genroc.activity_fail(:'t1', 'Rejected');
\echo :LAST_ERROR_SQLSTATE
-- the second rejection exhausts the Retry: the instance fails
SELECT genroc.activity_fail(:'t1b', 'Rejected', 'still missing');
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause FROM genroc.instances WHERE id = :r1;

-- unknown tokens and missing arguments
SELECT genroc.activity_succeed('no-such-token', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.activity_fail('no-such-token', 'E');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.activity_succeed(NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.activity_fail(:'t1b', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.claim_activity('review', 'x', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT event, state, detail - 'input' - 'output' AS detail FROM genroc.history(:r1) ORDER BY seq;

DROP EXTENSION genroc;
