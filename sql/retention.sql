-- retention: the instance log's payload settings (genroc.log_payloads,
-- genroc.log_payload_max), genroc.prune by log and instance retention, and
-- tick pruning by the session settings (engine/log_payloads.cpp,
-- 70_tick.sql prune).
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

-- the defaults: payloads logged, whole up to 1MB; tick prunes nothing
SHOW genroc.log_payloads;
SHOW genroc.log_payload_max;
SHOW genroc.log_retention;
SHOW genroc.instance_retention;

SELECT * FROM genroc.define('echo', '{"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Parameters":{"said.$":"$.say"},"End":true}}}');
SELECT instance_id AS a FROM genroc.start('echo', '{"say":"hello"}') \gset
SELECT event, state, detail FROM genroc.history(:a) ORDER BY seq;

-- payloads off: input and output leave the log, events and states stay
SET genroc.log_payloads = off;
SELECT instance_id AS b FROM genroc.start('echo', '{"say":"secret"}') \gset
SELECT event, state, detail FROM genroc.history(:b) ORDER BY seq;
-- the instance itself keeps them
SELECT genroc.get_instance(:b) -> 'output' AS output;
-- an event payload and a task result too; an error's cause stays
SELECT * FROM genroc.define('gate', '{"StartAt":"Gate","States":{"Gate":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"End":true}}}');
SELECT instance_id AS c FROM genroc.start('gate', '{"k":1}') \gset
SELECT genroc.emit(:c, 'other', '{"pin":1234}');
SELECT genroc.emit(:c, 'go', '{"pin":1234}');
SELECT event, detail FROM genroc.history(:c) ORDER BY seq;
SELECT * FROM genroc.define('oops', '{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E","Cause":"why"}}}');
SELECT instance_id AS d FROM genroc.start('oops', '{"x":1}') \gset
SELECT event, detail FROM genroc.history(:d) ORDER BY seq;
RESET genroc.log_payloads;

-- payload max: a longer payload becomes a marker
SET genroc.log_payload_max = '16B';
SHOW genroc.log_payload_max;
SELECT instance_id AS e FROM genroc.start('echo', '{"say":"abcdefghijklmnopqrstuvwxyz"}') \gset
SELECT event, detail FROM genroc.history(:e) ORDER BY seq;
SET genroc.log_payload_max = '1kB';
SHOW genroc.log_payload_max;
SET genroc.log_payload_max = 0;	-- no limit
SELECT instance_id AS f FROM genroc.start('echo', '{"say":"abcdefghijklmnopqrstuvwxyz"}') \gset
SELECT detail FROM genroc.history(:f) WHERE event = 'succeeded';
SET genroc.log_payload_max = -1;
\echo :LAST_ERROR_SQLSTATE
RESET genroc.log_payload_max;

-- prune by log retention: rows older than the retention go, oldest first,
-- at most p_limit per call
SELECT count(*) AS rows_before FROM genroc.history(:a);
SET genroc.test_clock = '2030-01-01 01:00:00Z';
SELECT instance_id AS g FROM genroc.start('echo', '{"say":"late"}') \gset
SELECT genroc.prune('0', '0');
SELECT genroc.prune('30 minutes', '0', 2);
SELECT count(*) AS rows_left_a FROM genroc.history(:a);
SELECT genroc.prune('30 minutes', '0');
SELECT count(*) AS rows_left_a FROM genroc.history(:a);
SELECT count(*) AS rows_left_g FROM genroc.history(:g);
-- the instances stay
SELECT genroc.get_instance(:a) ->> 'status' AS status_a;

-- instance retention: a concluded tree (a Parallel of two branches, a Map
-- of three items) goes with its logs and kept events; a live tree stays
SELECT * FROM genroc.define('fan', '{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}],"End":true}}}');
SELECT instance_id AS h, status FROM genroc.start('fan', '{"items":[1,2,3]}') \gset
SELECT :'status' AS status;
SELECT count(*) AS tree FROM genroc.list_instances(jsonb_build_object('root', :h));
-- a live root whose children have ended: its Wait is still to come
SELECT * FROM genroc.define('fan_then_wait', '{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}],"Next":"W"},"W":{"Type":"Wait","Seconds":864000,"End":true}}}');
SELECT instance_id AS live, status FROM genroc.start('fan_then_wait', '{}') \gset
SELECT :'status' AS status;
SELECT i ->> 'status' AS child_status FROM genroc.list_instances(jsonb_build_object('root', :live)) AS i;
-- a concluded instance with a kept event (an event kept, then cancelled)
SELECT instance_id AS k FROM genroc.start('gate', '{}') \gset
SELECT genroc.emit(:k, 'other', '{}');
SELECT genroc.cancel(:k);

SET genroc.test_clock = '2030-01-02 02:00:00Z';
-- nothing ended long enough ago for a 2 day retention
SELECT genroc.prune('0', '2 days');
-- a 1 day retention: a, b, c, d, e, f, g, h (and its 5 descendants) and
-- k ended before 2030-01-01 02:00: 14 instances, 5 in the first call (its
-- limit), then the rest;
-- the live tree stays
SELECT genroc.prune('0', '1 day', 5);
SELECT genroc.prune('0', '1 day', 100);
SELECT genroc.prune('0', '1 day', 100);
SELECT genroc.get_instance(:h);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.history(:k);
\echo :LAST_ERROR_SQLSTATE
-- their log rows and kept events went with them (read as the superuser)
SELECT count(*) AS log_rows_left FROM genroc._log WHERE instance_id <> :live AND instance_id NOT IN
	(SELECT (i ->> 'id')::bigint FROM genroc.list_instances(jsonb_build_object('root', :live)) AS i);
SELECT count(*) AS events_left FROM genroc._events;
SELECT genroc.get_instance(:live) ->> 'status' AS live_status;
SELECT count(*) AS live_tree FROM genroc.list_instances(jsonb_build_object('root', :live));

-- tick prunes by the session settings
SELECT instance_id AS m FROM genroc.start('echo', '{"say":"m"}') \gset
SET genroc.test_clock = '2030-01-02 03:00:00Z';
SELECT genroc.tick() ->> 'pruned_instances' AS pruned;	-- not set: nothing
SET genroc.instance_retention = '30min';
SET genroc.log_retention = '10min';
SHOW genroc.instance_retention;
SELECT genroc.tick() - ARRAY['timeouts', 'heartbeats', 'lapsed', 'timers', 'run_at'] AS pruned;
SELECT genroc.get_instance(:m);
\echo :LAST_ERROR_SQLSTATE
SET genroc.log_retention = '-1';
\echo :LAST_ERROR_SQLSTATE

-- A database's default is not taken: its owner may write one without
-- administering genroc, and every session of the database would start with
-- it, the in-database ticker's (a superuser) included.  A new session, as
-- the ticker's is, warns and keeps the default: its tick prunes nothing.
SELECT current_database() AS db, datdba::regrole AS db_owner FROM pg_database
WHERE datname = current_database() \gset
CREATE ROLE genroc_test_dbo;
ALTER DATABASE :"db" OWNER TO genroc_test_dbo;
SET ROLE genroc_test_dbo;
ALTER DATABASE :"db" SET genroc.instance_retention = '1s';
RESET ROLE;
SELECT instance_id AS e FROM genroc.start('echo', '{"say":"e"}') \gset
SELECT genroc.get_instance(:e) ->> 'status' AS ended;
\c
SET genroc.test_clock = '2030-01-03 00:00:00Z';
SET genroc.durability = 'none';
SELECT genroc.tick() ->> 'pruned_instances' AS pruned;
SHOW genroc.instance_retention;
SELECT genroc.get_instance(:e) ->> 'status' AS still_there;
-- a role's own default (ALTER ROLE, by the role itself or one allowed to
-- change it) counts, as a session's SET and the server's files do
ALTER ROLE CURRENT_USER IN DATABASE :"db" SET genroc.instance_retention = '1s';
\c
SET genroc.test_clock = '2030-01-03 00:00:00Z';
SET genroc.durability = 'none';
SELECT genroc.tick() ->> 'pruned_instances' AS pruned;
ALTER ROLE CURRENT_USER IN DATABASE :"db" RESET genroc.instance_retention;
ALTER DATABASE :"db" RESET genroc.instance_retention;
ALTER DATABASE :"db" OWNER TO :"db_owner";
DROP ROLE genroc_test_dbo;
\c
SET genroc.test_clock = '2030-01-03 00:00:00Z';
SET genroc.durability = 'none';

-- a retention in months is calendar months: on March 1st, now - '1 mon'
-- is February 1st, so an instance that ended on January 31st goes, where
-- '30 days' keeps it (now - 30 days is January 30th); months are the
-- session time zone's
SET TimeZone = 'UTC';
SET genroc.test_clock = '2030-01-31 12:00:00Z';
SELECT instance_id AS m FROM genroc.start('echo', '{"say":"month"}') \gset
SET genroc.test_clock = '2030-03-01 00:00:00Z';
SELECT genroc.prune('0', '30 days') IS NOT NULL AS pruned;
SELECT genroc.get_instance(:m) ->> 'status' AS kept_by_30_days;
SELECT genroc.prune('0', '1 mon') IS NOT NULL AS pruned;
SELECT genroc.get_instance(:m) ->> 'status' AS gone_by_a_month;
\echo :LAST_ERROR_SQLSTATE
RESET TimeZone;
SET genroc.test_clock = '2030-01-03 00:00:00Z';

-- errors
SELECT genroc.prune('-1 day', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.prune('1 day', '0', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.prune('1 day', '0', NULL);
\echo :LAST_ERROR_SQLSTATE
-- a retention is negative as PostgreSQL compares intervals (a month 30 days)
SELECT genroc.prune('0', '1 mon -31 days');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.tick(NULL);
\echo :LAST_ERROR_SQLSTATE

DROP EXTENSION genroc;
