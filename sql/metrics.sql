-- Operators' figures (75_metrics.sql): genroc.queue_stats (and its view),
-- genroc.metrics (the database part of GET /metrics, with its bound on
-- definition labels), genroc.tickers (who ticks); what a role without the
-- worker or operator capability sees.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.define('alpha', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}') IS NOT NULL AS defined;
SELECT genroc.define('beta', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}') IS NOT NULL AS defined;
SELECT genroc.queue_set('bulk', '{"kind":"routed","match":{"definitions":["beta"]}}') IS NOT NULL AS configured;
-- nothing yet: the configured queues, all zero
SELECT * FROM genroc.queue_stats ORDER BY queue;

-- three alpha tasks become ready at 00:00, 00:00:10 and 00:00:20; one beta
SELECT count(*) AS started FROM genroc.start('alpha', '{}');
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT count(*) AS started FROM genroc.start('alpha', '{}');
SET genroc.test_clock = '2030-01-01 00:00:20Z';
SELECT count(*) AS started FROM genroc.start('alpha', '{}');
SELECT count(*) AS started FROM genroc.start('beta', '{}');
-- a task delayed past now is not ready to claim yet
SELECT count(*) AS started FROM genroc.start('beta', '{}', '{"run_at":"2030-01-01T01:00:00Z"}');
SET genroc.test_clock = '2030-01-01 00:01:00Z';
SELECT * FROM genroc.queue_stats ORDER BY queue;

-- a worker claims the oldest: running 1, the oldest ready is now 50 s old
SELECT genroc.worker_register('w1', '{"queues":["default","bulk"]}') ->> 'worker' AS worker;
SELECT instance_id, queue FROM genroc.claim('w1', '{default}', 1);
SELECT * FROM genroc.queue_stats() ORDER BY queue;

SELECT jsonb_pretty(genroc.metrics());
-- the bound: one definition named (the one with the most instances), one omitted
SELECT genroc.metrics(1) -> 'by_definition' AS by_definition, genroc.metrics(1) -> 'definitions_omitted' AS omitted;
SELECT genroc.metrics(0) -> 'by_definition' AS by_definition, genroc.metrics(0) -> 'definitions_omitted' AS omitted;
SELECT genroc.metrics(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.metrics(1001);
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.metrics(NULL);
\echo :LAST_ERROR_SQLSTATE

-- who ticks: this session by its application_name, a binary by its
-- worker id; not the in-database ticker (no such backend here)
SELECT * FROM genroc.tickers();
SET application_name = 'regress session';
SELECT genroc.tick() IS NOT NULL AS ticked;
SET genroc.test_clock = '2030-01-01 00:01:05Z';
SELECT genroc.tick() IS NOT NULL AS ticked;
BEGIN;
SELECT set_config('application_name', 'genroc worker w1', true) IS NOT NULL AS named;
SELECT genroc.tick() IS NOT NULL AS ticked;
COMMIT;
SET genroc.test_clock = '2030-01-01 00:01:06.5Z';
SELECT ticked_by, kind, role = current_user AS by_me, first_tick_at, last_tick_at, ago_ms, ticks FROM genroc.tickers();
-- a row not ticked for 7 days goes at the next tick
SET genroc.test_clock = '2030-01-08 00:01:05.001Z';
SELECT genroc.tick() IS NOT NULL AS ticked;
SELECT ticked_by, ticks FROM genroc.tickers();
RESET application_name;

-- A role with genroc_user alone counts its own instances only (none of
-- the six above) and sees the configured queues and its own; no metrics()
-- or tickers().
SET genroc.test_clock = '2030-01-01 00:02:00Z';
CREATE ROLE regress_metrics_user IN ROLE genroc_user;
SET ROLE regress_metrics_user;
SELECT * FROM genroc.queue_stats ORDER BY queue;
SELECT genroc.define('gamma', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}') IS NOT NULL AS defined;
SELECT count(*) AS started FROM genroc.start('gamma', '{}');
SELECT * FROM genroc.queue_stats ORDER BY queue;
SELECT genroc.metrics();
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.tickers();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the superuser sees every queue, the user's included
SELECT queue, ready FROM genroc.queue_stats ORDER BY queue;
-- PUBLIC: nothing
CREATE ROLE regress_metrics_none;
SET ROLE regress_metrics_none;
SELECT * FROM genroc.queue_stats;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

DROP EXTENSION genroc;
DROP ROLE regress_metrics_user, regress_metrics_none;
