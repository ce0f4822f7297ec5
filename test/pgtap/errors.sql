-- Every SQLSTATE of the API (core/errors.def and the standard codes it
-- uses), raised by the function and condition docs/errors.md names.
BEGIN;
SELECT plan(26);

SET LOCAL genroc.test_clock = '2030-01-01 00:00:00Z';
SELECT version AS job_version FROM genroc.define('tap_job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","Next":"Ask"},"Ask":{"Type":"Task","Resource":"activity:ask","End":true}}}') \gset
SELECT genroc.worker_register('tap-w1', '{"host":"tap-box"}') AS registered \gset
SELECT instance_id AS id FROM genroc.start('tap_job', '{}') \gset
SELECT epoch FROM genroc.claim('tap-w1', ARRAY['default']) \gset

SELECT throws_ok($$SELECT genroc.define('bad', '{"StartAt":"Nope","States":{"A":{"Type":"Succeed"}}}')$$,
	'RC001', 'invalid definition at $.StartAt: unknown state "Nope"', 'RC001 invalid_definition names the JSON path');
SELECT throws_ok(format('SELECT genroc.redrive(%s)', :id),
	'RC009', format('instance %s is running: only an instance that failed, timed out or was cancelled can be redriven', :id),
	'RC009 instance_not_failed: redrive of a running instance');
SELECT throws_ok($$SELECT genroc.start('no_such_definition')$$,
	'RC002', NULL, 'RC002 definition_not_found');
SELECT throws_ok($$SELECT genroc.start('tap_job', '{}', '{"alias":"nope"}')$$,
	'RC016', 'alias "nope" of definition "tap_job" not found', 'RC016 alias_not_found');
SELECT genroc.define('tap_gone', '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}') AS gone \gset
SELECT genroc.alias_set('tap_gone', 'live', '[{"version": 1, "weight": 100}]') AS aliased \gset
SELECT throws_ok($$SELECT genroc.undefine('tap_gone', 1)$$,
	'55006', 'version 1 of definition "tap_gone" is routed to by alias "live"', '55006 a version an alias routes to');
SELECT genroc.undefine('tap_gone') AS undefined \gset
SELECT throws_ok($$SELECT genroc.start('tap_gone')$$,
	'RC017', 'definition "tap_gone" was deleted', 'RC017 definition_deleted');
SELECT throws_ok($$SELECT genroc.get_instance(-1)$$,
	'RC003', NULL, 'RC003 instance_not_found');
SELECT throws_ok(format('SELECT genroc.complete(%s, %s, %L)', :id, :epoch + 1, '{}'),
	'RC004', NULL, 'RC004 lease_lost (stale epoch)');
SELECT throws_ok($$SELECT genroc.worker_register('tap-w1', '{"host":"elsewhere"}')$$,
	'RC005', 'worker id "tap-w1" is in use by a live worker on host "tap-box"', 'RC005 worker_id_in_use names the host');
SELECT throws_ok($$SELECT genroc.claim('tap-nobody', ARRAY['default'])$$,
	'RC006', NULL, 'RC006 worker_not_registered');
SELECT throws_ok($$SELECT genroc.activity_succeed('not-a-token', '{}')$$,
	'RC007', NULL, 'RC007 task_token_invalid');
SELECT genroc.cancel(:id) AS cancelled \gset
SELECT throws_ok(format('SELECT genroc.cancel(%s)', :id),
	'RC008', NULL, 'RC008 instance_ended');
SELECT throws_ok(format('SELECT genroc.complete(%s, %s, %L)', :id, :epoch, '{}'),
	'RC004', NULL, 'RC004 after cancel: the lease is gone');
SELECT throws_ok(format('SELECT genroc.retry(%s)', :id),
	'RC009', NULL, 'RC009 instance_not_failed: retry of a cancelled instance');
SELECT is(genroc.redrive(:id), 'ready', 'a cancelled instance is redriven: its Task is ready again');
SELECT throws_ok($$SELECT genroc.start('tap_job', '{}', '{"colour":"red"}')$$,
	'22023', 'unknown option "colour" in start options', '22023 unknown option names the key');
SELECT throws_ok($$SELECT genroc.worker_register('tap-w2', '{"concurrency":-1}')$$,
	'22023', NULL, '22023 bad option value');
SELECT throws_ok($$SELECT genroc.fail(1, 1, NULL)$$,
	'22004', 'p_error must not be null', '22004 missing required argument');
-- the C entry points' own checks raise the engine's message (engine/messages.def ARG_NULL)
SELECT throws_ok($$SELECT * FROM genroc.claim_wait('tap-w1', ARRAY['default'], 1, NULL)$$,
	'22004', 'p_wait must not be null', '22004 from a C entry point: claim_wait without p_wait');
SELECT throws_ok($$SELECT genroc._admit(NULL)$$,
	'22004', 'p_instance must not be null', '22004 from a C entry point: _admit without p_instance');
SELECT throws_ok($$SELECT genroc.start('tap_job', '{}', '{"run_at":"not a time"}')$$,
	'22007', NULL, '22007 run_at that does not parse');
SELECT throws_ok($$SELECT genroc.worker_register('tap-w2', '{"stale_after":"forever"}')$$,
	'22007', NULL, '22007 duration that does not parse');
SELECT throws_ok($$SELECT genroc.token_create('t', ARRAY['root'], 'tap')$$,
	'22023', 'unknown permission "root"', '22023 a token permission genroc does not know');
SELECT throws_ok($$SELECT genroc.token_revoke('nosuchtoken')$$,
	'42704', 'token "nosuchtoken" does not exist', '42704 revoking an unknown token');
SELECT lives_ok($$SELECT genroc.token_create('t', ARRAY['worker'], 'tap', 'grt_taptoken01_' || repeat('x', 40))$$,
	'a seeded token');
SELECT throws_ok($$SELECT genroc.token_create('t', ARRAY['admin'], 'tap', 'grt_taptoken01_' || repeat('x', 40))$$,
	'23505', NULL, '23505 a seeded token id with other permissions');

SELECT * FROM finish();
ROLLBACK;
