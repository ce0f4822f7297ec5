-- events: a genroc:event wait and genroc.emit (68_events.sql): delivered
-- during the wait, kept when emitted before it, a timeout through tick, and
-- the errors of emit.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SELECT * FROM genroc.define('gate', '{"StartAt":"Gate","States":{"Gate":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name.$":"$.event"},"TimeoutSeconds":30,"ResultPath":"$.got","End":true}}}');

SELECT instance_id AS a, status FROM genroc.start('gate', '{"event":"open"}') \gset
SELECT :'status' AS status;
SELECT status, wait_kind, activity AS waits_for FROM genroc.instances WHERE id = :a;
SELECT genroc.emit(:a, 'other', '{"x":1}');
SELECT genroc.emit(:a, 'open', '{"by":"ann"}');
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :a;
SELECT event, state, detail FROM genroc.history(:a) ORDER BY seq;

-- emitted before the wait: kept, then taken when the instance gets there
SELECT * FROM genroc.define('later', '{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":10,"Next":"Gate"},"Gate":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"End":true}}}');
SELECT instance_id AS b FROM genroc.start('later', '{}') \gset
SELECT genroc.emit(:b, 'go', '"early"');
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT genroc.tick() ->> 'timers' AS timers;
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :b;

-- the timeout: tick fails the wait with States.Timeout; later emits: RC008
SELECT instance_id AS c FROM genroc.start('gate', '{"event":"open"}') \gset
SET genroc.test_clock = '2030-01-01 00:00:40Z';
SELECT genroc.tick() ->> 'timeouts' AS timeouts;
SELECT status, error FROM genroc.instances WHERE id = :c;
SELECT genroc.emit(:c, 'open', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.emit(123456, 'open', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.emit(:a, '', '{}');
\echo :LAST_ERROR_SQLSTATE

-- numbers past what the interpreter's JSON holds exactly, in an event's
-- payload and a token's result: the log keeps the event as emitted; the
-- step (and so the output, and the task_succeeded row the step writes)
-- has them as the interpreter parsed them
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SELECT * FROM genroc.define('numbers', '{"StartAt":"Gate","States":{"Gate":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"n"},"ResultPath":"$.got","Next":"Notify"},"Notify":{"Type":"Task","Resource":"handler:notify.waitForTaskToken","Parameters":{"token.$":"$$.Task.Token"},"ResultPath":"$.reply","End":true}}}');
SELECT instance_id AS d FROM genroc.start('numbers', '{}') \gset
SELECT genroc.emit(:d, 'n', '{"big": 12345678901234567890, "wide": 123456789012345678901234567890, "dec": 3.14159265358979323846264338327950288}');
SELECT genroc.worker_register('wn', '{}') ->> 'worker';
SELECT instance_id = :d AS claimed, epoch AS ep, input ->> 'token' AS tok FROM genroc.claim('wn', ARRAY['default'], 1) \gset
SELECT :'claimed' AS claimed, genroc.complete(:d, :ep, '{}');
SELECT genroc.activity_succeed(:'tok', '{"big": 12345678901234567890, "dec": 0.1234567890123456789012345, "neg": -98765432109876543210}');
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :d;
SELECT event, detail FROM genroc.history(:d) WHERE event IN ('event_received', 'task_succeeded') ORDER BY seq;

DROP EXTENSION genroc;
