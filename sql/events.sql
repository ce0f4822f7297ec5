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

DROP EXTENSION genroc;
