-- Privileges: a plain role (granted nothing) can call nothing of genroc, not
-- even use its schema; a role with genroc_user or genroc_worker calls the
-- public API (through SECURITY DEFINER functions), never the tables or the
-- private genroc._* helpers; the token functions are genroc_admin's
-- (credentials, docs/security.md "Authentication").  test/pgtap/roles.sql has the
-- whole matrix.
BEGIN;
SELECT plan(22);

CREATE ROLE genroc_tap_plain NOLOGIN;
CREATE ROLE genroc_tap_app NOLOGIN IN ROLE genroc_user, genroc_worker;

SELECT ok(NOT has_schema_privilege('genroc_tap_plain', 'genroc', 'USAGE'), 'a plain role may not use the schema');

SELECT is_empty($$
	SELECT p.oid::regprocedure::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace
	  AND has_function_privilege('genroc_tap_plain', p.oid, 'EXECUTE')
$$, 'no function of genroc is executable by a plain role');

SELECT is(ARRAY(SELECT p.proname::text FROM pg_proc p
			   WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname LIKE 'token\_%'
				 AND NOT has_function_privilege('genroc_tap_app', p.oid, 'EXECUTE') ORDER BY 1),
		  ARRAY['token_create', 'token_list', 'token_revoke', 'token_verify'],
		  'no token function is executable by a using and working role (genroc_admin only)');

SELECT is_empty($$
	SELECT p.oid::regprocedure::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname LIKE '\_%'
	  AND has_function_privilege('genroc_tap_app', p.oid, 'EXECUTE')
	  AND p.proname NOT IN ('_sees', '_may', '_can', '_caller')
$$, 'no private genroc._* function but the views'' filter is executable by a using role');

SELECT cmp_ok((SELECT count(*)::int FROM pg_proc p WHERE p.pronamespace = 'genroc'::regnamespace
			   AND p.proname LIKE '\_%'), '>=', 20, 'the private helpers were all looked at');

SELECT is_empty($$
	SELECT c.oid::regclass::text || ' ' || priv FROM pg_class c,
		unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS priv
	WHERE c.relnamespace = 'genroc'::regnamespace AND c.relkind IN ('r', 'v')
	  AND has_table_privilege('genroc_tap_plain', c.oid, priv)
$$, 'no table or view of genroc is readable or writable by a plain role');

SELECT is_empty($$
	SELECT p.oid::regprocedure::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.prosecdef
	  AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)
$$, 'every SECURITY DEFINER function pins search_path to pg_catalog, pg_temp');

SELECT is_empty($$
	SELECT p.oid::regprocedure::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname NOT LIKE '\_%'
	  AND obj_description(p.oid, 'pg_proc') IS NULL
$$, 'every public function has a comment');

SELECT is_empty($$
	SELECT p.oid::regprocedure::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname LIKE '\_%' AND p.prosecdef
$$, 'no private helper is SECURITY DEFINER (only the public entry points are)');

-- the same, from a using and working role's side
SET LOCAL ROLE genroc_tap_app;
SELECT lives_ok($$SELECT genroc.define('tap', '{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}}')$$,
	'a using role can define');
SELECT is((SELECT status FROM genroc.start('tap', '{}')), 'succeeded', 'a using role can start and run an instance');
SELECT lives_ok($$SELECT genroc.worker_register('tap-worker', '{"host":"tap"}')$$, 'a working role can register a worker');
SELECT throws_ok('SELECT * FROM genroc._instances', '42501', NULL, 'the instances table is not readable');
SELECT throws_ok('DELETE FROM genroc._workers', '42501', NULL, 'the workers table is not writable');
SELECT lives_ok('SELECT * FROM genroc.instances', 'the instances view is readable by a using role (its own rows)');
SELECT throws_ok('SELECT * FROM genroc._tokens', '42501', NULL, 'the tokens table is not readable');
SELECT throws_ok($$SELECT genroc.token_create('me', ARRAY['admin'], 'me')$$, '42501', NULL,
	'a using role cannot mint a token');
SELECT throws_ok($$SELECT genroc.token_list()$$, '42501', NULL, 'a using role cannot list tokens');
SELECT throws_ok($$SELECT genroc._step('x', '{}', '{}')$$, '42501', NULL, 'the interpreter bridge is private');
SELECT throws_ok($$SELECT genroc._fencing_epoch(1)$$, '42501', NULL, 'the lease epoch draw is private');
SELECT throws_ok($$SELECT set_config('genroc.test_clock', '2030-01-01 00:00Z', true)$$, '42501', NULL,
	'a using role cannot move the test clock');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id
		   WHERE d.name = 'tap' AND i.owner = 'genroc_tap_app'::regrole), 1, 'what the using role did is in the tables, owned by it');

SELECT * FROM finish();
ROLLBACK;
