-- Inside a security-restricted operation every genroc function refuses.
-- ANALYZE, CREATE INDEX, REINDEX, CLUSTER and REFRESH MATERIALIZED VIEW
-- (and VACUUM, autovacuum's ANALYZE, VACUUM FULL: the same mark) run a
-- table owner's code as the owner, with the outer role left as whoever ran
-- the command; genroc acts for the outer role, so bob's index expression,
-- run by a superuser's ANALYZE, would act as that superuser.  Here bob (a
-- genroc_user) owns a table whose index expression calls genroc; the test,
-- a superuser, runs each command; every call must be refused with 42501
-- and the refusal's own message, alice's instance stays as it was, and
-- nothing of alice's reaches bob's table.  Then the same for every
-- function a genroc group may call (from the catalog, so a new function is
-- held to it), run by a table owner with every capability.
BEGIN;
SELECT plan(13);

SET LOCAL max_parallel_maintenance_workers = 0;
CREATE ROLE tap_alice IN ROLE genroc_user;
CREATE ROLE tap_bob IN ROLE genroc_user;
CREATE ROLE tap_root IN ROLE genroc_admin;

-- alice's instance, waiting at a task with a secret in its input
SET LOCAL ROLE tap_alice;
CREATE TEMP TABLE a (id bigint);
DO $$
BEGIN
	PERFORM genroc.define('tap_secret', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:x","End":true}}}');
	INSERT INTO a SELECT s.instance_id FROM genroc.start('tap_secret', '{"api_key":"sk_alice"}') s;
END;
$$;
RESET ROLE;
SELECT id AS alice_id FROM a \gset

-- The probe: the calls of one set, each in a block of its own; what each
-- answered goes to tap_sro.seen ('ok: ' and the result, or the SQLSTATE and
-- message).  VOLATILE, called from the IMMUTABLE index function (as an
-- attacker would declare it).
CREATE SCHEMA tap_sro;
GRANT USAGE ON SCHEMA tap_sro TO PUBLIC;
CREATE TABLE tap_sro.calls (set int, sql text);
CREATE TABLE tap_sro.seen (op text, sql text, answer text);
GRANT SELECT ON tap_sro.calls TO PUBLIC;
GRANT SELECT, INSERT ON tap_sro.seen TO PUBLIC;
CREATE TABLE tap_sro.op (name text);
GRANT SELECT ON tap_sro.op TO PUBLIC;
CREATE FUNCTION tap_sro.record(p_set int) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_sql text;
	v_answer text;
BEGIN
	FOR v_sql IN SELECT c.sql FROM tap_sro.calls c WHERE c.set = p_set ORDER BY c.sql LOOP
		BEGIN
			EXECUTE v_sql INTO v_answer;
			v_answer := 'ok: ' || coalesce(v_answer, 'null');
		EXCEPTION WHEN OTHERS THEN
			v_answer := SQLSTATE || ' ' || SQLERRM;
		END;
		INSERT INTO tap_sro.seen VALUES ((SELECT name FROM tap_sro.op), v_sql, v_answer);
	END LOOP;
END;
$$;
CREATE FUNCTION tap_sro.probe(p_set int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	PERFORM tap_sro.record(p_set);
	RETURN p_set;
END;
$$;

INSERT INTO tap_sro.calls
SELECT 1, format(c, (SELECT id FROM a)) FROM unnest(ARRAY[
	'SELECT genroc.capabilities()::text',
	'SELECT genroc.get_instance(%s)::text',
	'SELECT genroc.cancel(%s)::text']) AS c;

-- bob's table: one row, so each command runs the probe (the calls) once
CREATE TABLE tap_sro.bob_t (x int);
INSERT INTO tap_sro.bob_t VALUES (1);
ALTER TABLE tap_sro.bob_t OWNER TO tap_bob;
CREATE MATERIALIZED VIEW tap_sro.bob_mv AS SELECT tap_sro.probe(x) AS p FROM tap_sro.bob_t WITH NO DATA;
ALTER MATERIALIZED VIEW tap_sro.bob_mv OWNER TO tap_bob;

CREATE FUNCTION pg_temp.run(p_op text, p_sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM tap_sro.op;
	INSERT INTO tap_sro.op VALUES (p_op);
	EXECUTE p_sql;
END;
$$;
SELECT pg_temp.run('create index', 'CREATE INDEX bob_i ON tap_sro.bob_t (tap_sro.probe(x))');
SELECT pg_temp.run('analyze', 'ANALYZE tap_sro.bob_t');
SELECT pg_temp.run('reindex', 'REINDEX TABLE tap_sro.bob_t');
SELECT pg_temp.run('cluster', 'CLUSTER tap_sro.bob_t USING bob_i');
SELECT pg_temp.run('refresh materialized view', 'REFRESH MATERIALIZED VIEW tap_sro.bob_mv');

-- the refusal, and only it: no other SQLSTATE, no answer
CREATE FUNCTION pg_temp.refused(p_answer text) RETURNS boolean LANGUAGE sql AS $$
	SELECT p_answer = '42501 genroc cannot be called inside a security-restricted operation'
$$;
SELECT is((SELECT array_agg(DISTINCT s.op ORDER BY s.op) FROM tap_sro.seen s),
	ARRAY['analyze', 'cluster', 'create index', 'refresh materialized view', 'reindex'],
	'each command ran bob''s index expression (or view) as bob');
SELECT is((SELECT count(*)::int FROM tap_sro.seen s), 15, 'three calls each');
SELECT is_empty($$SELECT s.op, s.sql, s.answer FROM tap_sro.seen s WHERE NOT pg_temp.refused(s.answer)$$,
	'every call was refused with 42501 and the refusal''s message');
SELECT is_empty($$SELECT 1 FROM tap_sro.seen s WHERE s.answer LIKE '%sk_alice%' OR s.answer LIKE '%admin%'$$,
	'nothing of alice''s, no capability reached bob''s table');
SELECT is((SELECT status FROM genroc._instances WHERE id = (SELECT id FROM a)), 'ready',
	'alice''s instance is not cancelled');

-- Outside those commands bob is bob, and the same calls answer as before.
SET LOCAL ROLE tap_bob;
SELECT is(genroc.capabilities() ->> 'role', 'tap_bob', 'bob''s own call acts for bob');
SELECT throws_ok('SELECT genroc.cancel(' || :alice_id || ')', '42501', NULL,
	'bob may not cancel alice''s instance');
RESET ROLE;
-- A SECURITY DEFINER function of bob's, called by alice, acts for alice
-- (its owner still needs the capability to call genroc at all).
CREATE FUNCTION tap_sro.bob_definer() RETURNS text LANGUAGE sql SECURITY DEFINER
	RETURN genroc.capabilities() ->> 'role';
ALTER FUNCTION tap_sro.bob_definer() OWNER TO tap_bob;
SET LOCAL ROLE tap_alice;
SELECT is(tap_sro.bob_definer(), 'tap_alice', 'a definer function in between: genroc acts for the calling role');
RESET ROLE;

-- Every function a genroc group may call, with arguments of its types, by
-- an owner with every capability, in the first command (CREATE INDEX) and
-- in ANALYZE.  The exceptions answer nothing of anyone's: the clock, the
-- version, the session's durability, and the capability predicates on the
-- roles given.  Views through their filter or function.
INSERT INTO tap_sro.calls
SELECT 2, format('SELECT genroc.%I(%s)::text', p.proname, (
		SELECT coalesce(string_agg(CASE t::regtype::text
			WHEN 'text' THEN quote_literal('x') WHEN 'bigint' THEN '1' WHEN 'integer' THEN '1'
			WHEN 'jsonb' THEN quote_literal('{}') || '::jsonb' WHEN 'interval' THEN quote_literal('1 s') || '::interval'
			WHEN 'oid' THEN '10::oid' WHEN 'text[]' THEN quote_literal('{x}') || '::text[]'
			WHEN 'bigint[]' THEN quote_literal('{1}') || '::bigint[]' WHEN 'jsonb[]' THEN quote_literal('{}') || '::jsonb[]'
			ELSE 'NULL::' || t::regtype::text END, ', ' ORDER BY n), '')
		FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS u (t, n)))
FROM pg_proc p
WHERE p.pronamespace = 'genroc'::regnamespace
  AND EXISTS (SELECT 1 FROM aclexplode(p.proacl) x
			  WHERE x.grantee IN (SELECT r.oid FROM pg_roles r WHERE r.rolname LIKE 'genroc\_%'))
  AND p.proname NOT IN ('now', 'version', 'durability', '_may', '_can');
INSERT INTO tap_sro.calls
SELECT 2, format('SELECT count(*)::text FROM genroc.%I', c.relname)
FROM pg_class c WHERE c.relnamespace = 'genroc'::regnamespace AND c.relkind = 'v';
SELECT cmp_ok((SELECT count(*)::int FROM tap_sro.calls WHERE set = 2), '>=', 50, 'the catalog''s functions and views');

CREATE TABLE tap_sro.root_t (x int);
INSERT INTO tap_sro.root_t VALUES (2);
ALTER TABLE tap_sro.root_t OWNER TO tap_root;
DELETE FROM tap_sro.seen;
SELECT pg_temp.run('create index', 'CREATE INDEX root_i ON tap_sro.root_t (tap_sro.probe(x))');
SELECT pg_temp.run('analyze', 'ANALYZE tap_sro.root_t');
SELECT is((SELECT count(*)::int FROM tap_sro.seen), 2 * (SELECT count(*)::int FROM tap_sro.calls WHERE set = 2),
	'every call ran in both commands');
SELECT is_empty($$SELECT s.op, s.sql, s.answer FROM tap_sro.seen s WHERE NOT pg_temp.refused(s.answer)$$,
	'every function and view a genroc group may use refuses with 42501 inside a security-restricted operation');

-- And statically: every SECURITY DEFINER function of genroc refuses first
-- (genroc._entry() or genroc._caller() in its text; the C ones in C).
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.prosecdef
	  AND p.prolang <> (SELECT l.oid FROM pg_language l WHERE l.lanname = 'c')
	  AND pg_get_functiondef(p.oid) !~ 'genroc\._(entry|caller)\(\)'
$$, 'every SECURITY DEFINER function calls genroc._entry() or genroc._caller()');
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.prosecdef
	  AND p.prolang = (SELECT l.oid FROM pg_language l WHERE l.lanname = 'c')
	  AND p.prosrc NOT IN ('genroc_claim', 'genroc_claim_wait', 'genroc_complete_many',
						   -- extension/report.c
						   'genroc_complete', 'genroc_fail', 'genroc_complete_and_claim', 'genroc_fail_and_claim',
						   -- the engine's entry points (genroc_engine_begin, engine_entry.h)
						   'genroc_define', 'genroc_define_text', 'genroc_list_definitions',
						   'genroc_get_definition',
						   -- extension/tokens.c
						   'genroc_token_create', 'genroc_token_verify', 'genroc_token_list',
						   'genroc_token_revoke',
						   -- extension/metrics.c
						   'genroc_queue_stats', 'genroc_metrics', 'genroc_tickers',
						   -- extension/objects.c
						   'genroc_get_object',
						   -- extension/admin.c
						   'genroc_worker_register', 'genroc_worker_heartbeat', 'genroc_worker_drain',
						   'genroc_worker_stop', 'genroc_list_workers',
						   'genroc_queue_set', 'genroc_queue_drop', 'genroc_list_queues',
						   -- extension/callbacks.c
						   'genroc_activity_succeed', 'genroc_activity_fail', 'genroc_activity_heartbeat',
						   -- extension/redrive.c
						   'genroc_redrive',
						   -- extension/aliases.c
						   'genroc_alias_set', 'genroc_alias_drop', 'genroc_get_alias', 'genroc_list_aliases',
						   'genroc_undefine',
						   -- extension/retention.c
						   'genroc_prune', 'genroc_tick',
						   -- extension/instances.c
						   'genroc_get_instance', 'genroc_list_instances', 'genroc_history',
						   'genroc_capabilities',
						   -- extension/control.c
						   'genroc_cancel', 'genroc_retry', 'genroc_resume', 'genroc_emit', 'genroc_renew',
						   'genroc_release', 'genroc_claim_activity', 'genroc_claim_wake',
						   -- extension/start.c
						   'genroc_start', 'genroc_start_many')
$$, 'the C SECURITY DEFINER functions are the ones that refuse in C');

SELECT * FROM finish();
ROLLBACK;
