-- Wait: Seconds, Timestamp, SecondsPath, TimestampPath; a due Wait runs
-- inline; tick fires the others when the test clock reaches them.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT * FROM genroc.define('w', '{"StartAt":"Pick","States":{
	"Pick":{"Type":"Choice","Choices":[
		{"Variable":"$.kind","StringEquals":"seconds","Next":"Seconds"},
		{"Variable":"$.kind","StringEquals":"timestamp","Next":"Timestamp"},
		{"Variable":"$.kind","StringEquals":"secondspath","Next":"SecondsPath"}],
		"Default":"TimestampPath"},
	"Seconds":{"Type":"Wait","Seconds":10,"Next":"Done"},
	"Timestamp":{"Type":"Wait","Timestamp":"2030-01-01T00:00:20Z","Next":"Done"},
	"SecondsPath":{"Type":"Wait","SecondsPath":"$.secs","Next":"Done"},
	"TimestampPath":{"Type":"Wait","TimestampPath":"$.until","Next":"Done"},
	"Done":{"Type":"Pass","Parameters":{"kind.$":"$.kind","woke.$":"$$.State.EnteredTime"},"End":true}}}');

SELECT s.instance_id AS seconds, s.status FROM genroc.start('w', '{"kind":"seconds"}') s \gset
SELECT s.instance_id AS ts, s.status FROM genroc.start('w', '{"kind":"timestamp"}') s \gset
SELECT s.instance_id AS secpath, s.status FROM genroc.start('w', '{"kind":"secondspath","secs":30}') s \gset
SELECT s.instance_id AS tspath, s.status FROM genroc.start('w', '{"kind":"timestamppath","until":"2030-01-01T00:00:40Z"}') s \gset
-- a Timestamp already past: the Wait is due and runs inline
SELECT status FROM genroc.start('w', '{"kind":"timestamppath","until":"2029-12-31T00:00:00Z"}');

SELECT id, status, state, wait_kind,
       wait_until = '2030-01-01 00:00:10Z' AS at_10, wait_until = '2030-01-01 00:00:20Z' AS at_20,
       wait_until = '2030-01-01 00:00:30Z' AS at_30, wait_until = '2030-01-01 00:00:40Z' AS at_40
FROM genroc.instances ORDER BY id;

-- nothing is due one second early
SET genroc.test_clock = '2030-01-01 00:00:09Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT genroc.tick();
SELECT genroc.get_instance(:seconds) -> 'output' AS output;
SET genroc.test_clock = '2030-01-01 00:00:35Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 00:01:00Z';
SELECT genroc.tick();
SELECT id, status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances ORDER BY id;
-- tick with nothing to do
SELECT genroc.tick();

-- a bad SecondsPath value is a runtime error: the instance fails
SELECT instance_id AS bad FROM genroc.start('w', '{"kind":"secondspath","secs":"soon"}') \gset
SELECT genroc.get_instance(:bad) ->> 'status' AS status, genroc.get_instance(:bad) ->> 'error' AS error;
-- tick's limit bounds each kind
SET genroc.test_clock = '2030-01-01 00:02:00Z';
SELECT count(*) FROM generate_series(1, 3) AS n, LATERAL genroc.start('w', jsonb_build_object('kind', 'seconds', 'n', n));
SET genroc.test_clock = '2030-01-01 00:03:00Z';
SELECT genroc.tick(2);
SELECT genroc.tick(2);
SELECT genroc.tick(0);
\echo :LAST_ERROR_SQLSTATE
-- the log of one waited instance
SELECT event, state, detail FROM genroc.history(:seconds) ORDER BY seq;

-- the test clock: a value that is not a time fails on use; empty means real time
SET genroc.test_clock = 'half past nine';
SELECT genroc.tick();
\echo :LAST_ERROR_SQLSTATE
SET genroc.test_clock = '';
SELECT genroc.now() = now() AS real_time;
SET genroc.test_clock = '2030-06-01 12:00:00+02';
SELECT genroc.now() = '2030-06-01 10:00:00Z' AS with_zone;

DROP EXTENSION genroc;
