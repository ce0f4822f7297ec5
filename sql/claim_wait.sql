-- claim_wait: claim, and while nothing is ready, wait in the server for a
-- task: a NOTIFY on the session (LISTEN genroc) wakes the wait, which
-- claims the task that became ready after the call began (at the clock's
-- time, not the transaction start's); without LISTEN a re-check every
-- 250 ms finds it.  Real time here (no test clock): a second session
-- (dblink) waits while this one starts the task.
CREATE EXTENSION genroc;
CREATE EXTENSION dblink;
\set VERBOSITY terse

SELECT 1 FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT 1 FROM genroc.worker_register('w', '{}');

-- p_wait: given, 0 to 60 seconds
SELECT * FROM genroc.claim_wait('w', ARRAY['default'], 1, NULL);
SELECT * FROM genroc.claim_wait('w', ARRAY['default'], 1, '-1 s');
SELECT * FROM genroc.claim_wait('w', ARRAY['default'], 1, '61 s');
SELECT * FROM genroc.claim_wait('w', ARRAY['default'], 1, '1 day');
-- the other arguments as claim says
SELECT * FROM genroc.claim_wait('nobody', ARRAY['default'], 1, '1 s');
SELECT * FROM genroc.claim_wait('w', ARRAY['default'], 0, '1 s');

-- a ready task is claimed at once, as claim would
SELECT 1 FROM genroc.start('job', '{"n":1}');
SELECT state, input, epoch <> 0 AS leased FROM genroc.claim_wait('w', ARRAY['default'], 5, '10 s');
-- nothing ready and no time to wait: nothing
SELECT count(*) FROM genroc.claim_wait('w', ARRAY['default'], 5, '0 s');

-- A waiter that listens, in a session of its own; this one starts a task
-- once the waiter is waiting (its wait event Extension).
CREATE FUNCTION pg_temp.connect(p_name text) RETURNS text LANGUAGE sql AS $$
	SELECT dblink_connect(p_name, format('host=%s port=%s dbname=%s user=%s application_name=%s',
		split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'),
		current_database(), current_user, p_name)) $$;
-- (up to 20 s, well inside the waiters' 50 s; if it gives up, it says
-- what the waiter was doing instead)
CREATE FUNCTION pg_temp.await_waiting(p_name text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	v_seen text;
BEGIN
	FOR k IN 1 .. 2000 LOOP
		-- pg_stat_activity is read once per transaction unless told to read again
		PERFORM pg_stat_clear_snapshot();
		IF EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = p_name
				   AND a.wait_event_type = 'Extension' AND a.query LIKE '%claim_wait%') THEN
			RETURN true;
		END IF;
		PERFORM pg_sleep(0.01);
	END LOOP;
	SELECT string_agg(format('%s %s/%s: %s', a.state, a.wait_event_type, a.wait_event, a.query), '; ')
	INTO v_seen FROM pg_stat_activity a WHERE a.application_name = p_name;
	RAISE NOTICE 'the waiter %: %', p_name, v_seen;
	RETURN false;
END $$;
SELECT pg_temp.connect('listening');
SELECT dblink_exec('listening', 'LISTEN genroc');
SELECT dblink_send_query('listening',
	$q$SELECT instance_id, input, lease_expires FROM genroc.claim_wait('w', ARRAY['default'], 5, '50 s')$q$);
SELECT pg_temp.await_waiting('listening') AS waiting;
SELECT 1 FROM genroc.start('job', '{"n":2}');
CREATE TEMP TABLE got AS
SELECT * FROM dblink_get_result('listening') AS t(instance_id bigint, input jsonb, lease_expires timestamptz);
-- the task that became ready while it waited, leased from the clock's time
-- at the claim: after the instance's start, which came after the wait began
SELECT g.input, i.status, i.lease_owner,
	   g.lease_expires > i.created_at AS lease_from_the_claims_time,
	   (SELECT l.at > i.created_at FROM genroc._log l
		WHERE l.instance_id = i.id AND l.event = 'task_started') AS logged_at_the_claims_time
FROM got g JOIN genroc._instances i ON i.id = g.instance_id;
SELECT dblink_disconnect('listening');

-- a waiter that does not listen finds the task at a re-check
SELECT pg_temp.connect('deaf');
SELECT dblink_send_query('deaf',
	$q$SELECT input FROM genroc.claim_wait('w', ARRAY['default'], 5, '50 s')$q$);
SELECT pg_temp.await_waiting('deaf') AS waiting;
SELECT 1 FROM genroc.start('job', '{"n":3}');
SELECT * FROM dblink_get_result('deaf') AS t(input jsonb);
SELECT dblink_disconnect('deaf');

-- REPEATABLE READ: its snapshot would never show a new task, so no wait
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS claimed,
	   clock_timestamp() - statement_timestamp() < interval '20 s' AS did_not_wait
FROM genroc.claim_wait('w', ARRAY['default'], 5, '30 s');
COMMIT;

-- a queue with a limit: the general claim decides, no wait (claim_wake
-- says when to ask again)
SELECT 1 FROM genroc.queue_set('default', '{"global_concurrency": 5}');
SELECT count(*) AS claimed,
	   clock_timestamp() - statement_timestamp() < interval '20 s' AS did_not_wait
FROM genroc.claim_wait('w', ARRAY['default'], 5, '30 s');
SELECT 1 FROM genroc.queue_set('default', '{"global_concurrency": 0}');

-- a draining worker takes nothing, and does not wait for it
SELECT genroc.worker_drain('w') ->> 'draining' AS draining;
SELECT count(*) AS claimed,
	   clock_timestamp() - statement_timestamp() < interval '20 s' AS did_not_wait
FROM genroc.claim_wait('w', ARRAY['default'], 5, '30 s');

DROP EXTENSION dblink;
DROP EXTENSION genroc;
