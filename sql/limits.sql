-- Limits (core/limits.def): nothing a caller sends may take the backend
-- down.  Definitions and payloads over a limit get 54000 with the limit's
-- name and where it was hit; data deeper than PostgreSQL's own stack allows
-- gets PostgreSQL's 54001; the interpreter's C++ recursion stops at the
-- backend's max_stack_depth too.  This session and the postmaster are the
-- same ones at the end.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse
CREATE TEMP TABLE session_was AS
	SELECT pg_backend_pid() AS pid, pg_postmaster_start_time() AS postmaster_started;

-- A Pass whose Parameters nest n States.Array calls (5,000 deep crashed the backend before the depth limit).
CREATE FUNCTION pg_temp.nested_calls(n int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('StartAt', 'P', 'States', jsonb_build_object('P',
		jsonb_build_object('Type', 'Pass', 'End', true, 'Parameters',
			jsonb_build_object('a.$', repeat('States.Array(', n) || '1' || repeat(')', n)))))
$$;
-- n arrays nested around 1.
CREATE FUNCTION pg_temp.nested_arrays(n int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT (repeat('[', n) || '1' || repeat(']', n))::jsonb
$$;

SELECT * FROM genroc.define('deep', pg_temp.nested_calls(5000));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('deep', pg_temp.nested_calls(20000));
\echo :LAST_ERROR_SQLSTATE
-- 32 levels: defined, started, run
SELECT name, version FROM genroc.define('deep', pg_temp.nested_calls(32));
SELECT status FROM genroc.start('deep', '{}');
SELECT jsonb_path_query(genroc.get_instance(i.id) -> 'output', 'strict $.a.size()') AS outer_size
FROM genroc.instances i WHERE definition = 'deep';

-- the other limits of a definition
SELECT * FROM genroc.define('long_path', jsonb_build_object('StartAt', 'P', 'States',
	jsonb_build_object('P', jsonb_build_object('Type', 'Pass', 'End', true,
		'InputPath', '$' || repeat('.a', 1100)))));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('bangs', jsonb_build_object('StartAt', 'P', 'States',
	jsonb_build_object('P', jsonb_build_object('Type', 'Pass', 'End', true,
		'InputPath', '$.a[?(' || repeat('!', 40) || '@.x)]'))));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('many', jsonb_build_object('StartAt', 's1', 'States',
	(SELECT jsonb_object_agg('s' || i, jsonb_build_object('Type', 'Succeed'))
	 FROM generate_series(1, 10001) AS i)));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('nested_json', jsonb_build_object('StartAt', 'P', 'States',
	jsonb_build_object('P', jsonb_build_object('Type', 'Pass', 'End', true,
		'Result', pg_temp.nested_arrays(600)))));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS stored_over_a_limit FROM genroc.list_definitions() WHERE name <> 'deep';

-- payloads: refused at start, with or without a step to read them now
SELECT * FROM genroc.define('task', '{"StartAt":"T","States":{
	"T":{"Type":"Task","Resource":"handler:h","Next":"E"},
	"E":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"End":true}}}');
SELECT * FROM genroc.start('task', pg_temp.nested_arrays(600));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('task', pg_temp.nested_arrays(600), '{"run_at":"2030-01-02T00:00:00Z"}');
\echo :LAST_ERROR_SQLSTATE
-- deeper than PostgreSQL's own jsonb parser allows: its error, not a crash
SELECT * FROM genroc.start('task', pg_temp.nested_arrays(200000));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS instances FROM genroc.instances;

-- a task result and an event payload
SELECT genroc.worker_register('w1', '{"host":"box"}') ->> 'worker' AS worker;
SELECT status FROM genroc.start('task', '{}');
SELECT instance_id, epoch AS task_epoch, state FROM genroc.claim('w1', '{default}', 1) \gset
\echo :instance_id :state
SELECT genroc.complete((SELECT id FROM genroc.instances WHERE definition = 'task'), :task_epoch,
	pg_temp.nested_arrays(600));
\echo :LAST_ERROR_SQLSTATE
SELECT status FROM genroc.instances WHERE definition = 'task';
SELECT genroc.complete((SELECT id FROM genroc.instances WHERE definition = 'task'), :task_epoch,
	pg_temp.nested_arrays(500));
SELECT genroc.emit((SELECT id FROM genroc.instances WHERE definition = 'task'), 'later',
	pg_temp.nested_arrays(600));
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.emit((SELECT id FROM genroc.instances WHERE definition = 'task'), 'go',
	pg_temp.nested_arrays(600));
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.emit((SELECT id FROM genroc.instances WHERE definition = 'task'), 'go', '[[1]]');

-- data a state builds past the limit fails the instance (States.Runtime)
SELECT * FROM genroc.define('grow', '{"StartAt":"P","States":{
	"P":{"Type":"Pass","Parameters":{"x.$":"$"},"Next":"C"},
	"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"P"}]}}}');
SELECT status FROM genroc.start('grow', '{}');
SELECT genroc.get_instance(i.id) -> 'error' AS error, genroc.get_instance(i.id) -> 'cause' AS cause
FROM genroc.instances i WHERE definition = 'grow';

-- PostgreSQL's stack check reaches into the interpreter: a small
-- max_stack_depth stops a definition that is within every limit, with
-- 54001 raised by the C++ side, not a crash
CREATE TEMP TABLE big AS SELECT jsonb_build_object('StartAt', 'P', 'States',
	jsonb_build_object('P', jsonb_build_object('Type', 'Pass', 'End', true, 'Parameters',
		pg_temp.nested_arrays(505)))) AS d;
SET max_stack_depth = '100kB';
SELECT * FROM genroc.define('stack', (SELECT d FROM big));
\echo :LAST_ERROR_SQLSTATE
RESET max_stack_depth;
SELECT name, version FROM genroc.define('stack', (SELECT d FROM big));

-- jsonb keeps a number of any size; the interpreter holds a double: a start,
-- a resume or an emit with one beyond a double's range is 54000 (a limit) naming what
-- holds it, not an exception of the JSON library (XX000)
SELECT status FROM genroc.start('deep', '{"n": 1e400}');
\echo :LAST_ERROR_SQLSTATE
SELECT status FROM genroc.start('deep', jsonb_build_object('n', repeat('9', 400)::numeric));
\echo :LAST_ERROR_SQLSTATE
SELECT status FROM genroc.start('deep', '{"n": 1e300}');

-- the same session, the same postmaster
SELECT pid = pg_backend_pid() AS same_session,
	   postmaster_started = pg_postmaster_start_time() AS same_postmaster
FROM session_was;

DROP EXTENSION genroc;
