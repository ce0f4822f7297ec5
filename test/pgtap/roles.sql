-- The privilege matrix (docs/security.md "Roles and ownership"): every public function,
-- called by a role with one capability (or none), on that role's own objects
-- and on another role's, is allowed ("ok") or refused with 42501.  For the
-- list functions and views, "ok" means the row is in the answer and 42501
-- that the call is refused or the row is not there (checked by
-- pg_temp.must).  Each call runs against a fresh fixture in a
-- subtransaction that is rolled back, so calls do not see each other.
BEGIN;
SELECT plan(125);

CREATE ROLE tap_none;
CREATE ROLE tap_user IN ROLE genroc_user;
CREATE ROLE tap_operator IN ROLE genroc_operator;
CREATE ROLE tap_worker IN ROLE genroc_worker;
CREATE ROLE tap_admin IN ROLE genroc_admin;
CREATE ROLE tap_other IN ROLE genroc_user, genroc_worker;

-- 42501 unless p_seen: "sees nothing" counts as refused
CREATE FUNCTION pg_temp.must(p_seen boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF NOT p_seen THEN
		RAISE EXCEPTION 'row not visible' USING ERRCODE = '42501';
	END IF;
END;
$$;

-- Objects owned by p_owner, made as the superuser: definitions d_/a_<owner>
-- (a Task, an activity), a live worker w_<owner> and a stopped one
-- s_<owner>, a running instance (inst, epoch), a failed one (failed), an
-- activity claimed by w_<owner> (token), an API token (tokid).
CREATE FUNCTION pg_temp.fixture(p_owner text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	v_def text := 'd_' || p_owner;
	v_act text := 'a_' || p_owner;
	v_w text := 'w_' || p_owner;
	v_s text := 's_' || p_owner;
	v_failed bigint;
	v_inst bigint;
	v_epoch bigint;
	v_token text;
	v_ids bigint[];
BEGIN
	PERFORM genroc.define(v_def, '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}');
	PERFORM genroc.alias_set(v_def, 'live', '[{"version": 1, "weight": 100}]');
	PERFORM genroc.define(v_act, format('{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:act_%s","End":true}}}', p_owner)::jsonb);
	PERFORM genroc.worker_register(v_w);
	PERFORM genroc.worker_register(v_s);
	PERFORM genroc.worker_stop(v_s);
	SELECT s.instance_id INTO v_failed FROM genroc.start(v_def, '{}') s;
	PERFORM genroc.fail(c.instance_id, c.epoch, 'Boom') FROM genroc.claim(v_w, ARRAY['default'], 1) c;
	-- its input large enough to be a stored object (docs/operations.md "Large values")
	SELECT s.instance_id INTO v_inst
	FROM genroc.start(v_def, jsonb_build_object('secret', 1, 'pad', repeat('x', 10000))) s;
	SELECT c.epoch INTO v_epoch FROM genroc.claim(v_w, ARRAY['default'], 1) c;
	v_ids := ARRAY[v_failed, v_inst, (SELECT s.instance_id FROM genroc.start(v_act, '{}') s)];
	SELECT c.token INTO v_token FROM genroc.claim_activity('act_' || p_owner, v_w, 1) c;
	UPDATE genroc._definitions SET owner = p_owner::regrole WHERE name IN (v_def, v_act);
	UPDATE genroc._workers SET owner = p_owner::regrole WHERE id IN (v_w, v_s);
	UPDATE genroc._instances SET owner = p_owner::regrole WHERE id = ANY (v_ids);
	RETURN jsonb_build_object('def', v_def, 'worker', v_w, 'stopped', v_s, 'act', 'act_' || p_owner,
		'inst', v_inst, 'epoch', v_epoch, 'failed', v_failed, 'token', v_token,
		'tokid', genroc.token_create('tap', ARRAY['reader'], 'tap') ->> 'id',
		'obj', (SELECT i.input ->> 'genroc:object' FROM genroc._instances i WHERE i.id = v_inst));
END;
$$;

-- One cell: 'ok', or the SQLSTATE the call raised as p_role.
CREATE FUNCTION pg_temp.cell(p_role text, p_whose text, p_call text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_fix jsonb;
	v_sql text := p_call;
	v_key text;
BEGIN
	BEGIN
		v_fix := pg_temp.fixture(CASE p_whose WHEN 'own' THEN p_role ELSE 'tap_other' END);
		FOR v_key IN SELECT jsonb_object_keys(v_fix) ORDER BY length(jsonb_object_keys(v_fix)) DESC LOOP
			v_sql := replace(v_sql, ':' || v_key, v_fix ->> v_key);
		END LOOP;
		EXECUTE format('SET LOCAL ROLE %I', p_role);
		EXECUTE v_sql;
		RAISE EXCEPTION 'allowed' USING ERRCODE = 'TAPOK';
	EXCEPTION WHEN OTHERS THEN
		RETURN CASE SQLSTATE WHEN 'TAPOK' THEN 'ok' ELSE SQLSTATE || CASE WHEN SQLSTATE <> '42501' THEN ' ' || SQLERRM ELSE '' END END;
	END;
END;
$$;

-- genroc.get_object, with RC011 for the fixture's existing value read as 42501
-- (dynamic: PL/pgSQL keeps a simple expression's state, and with it the
-- EXECUTE check of the first role that ran it, for the transaction)
CREATE FUNCTION pg_temp.object(p_ref text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	v jsonb;
BEGIN
	EXECUTE 'SELECT genroc.get_object($1)' INTO v USING p_ref;
	RETURN v;
EXCEPTION WHEN SQLSTATE 'RC011' THEN
	RAISE EXCEPTION 'not readable' USING ERRCODE = '42501';
END;
$$;

-- The matrix: which capabilities may make the call on their own objects
-- and on another role's.  admin = genroc_admin, etc.; "none" is never
-- allowed anything.
CREATE TEMP TABLE matrix (fn text, call text, own text[], other text[]);
INSERT INTO matrix VALUES
	('define', $$SELECT genroc.define(':def', '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}')$$,
	 '{user,admin}', '{admin}'),
	('list_definitions', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.list_definitions() d WHERE d.name = ':def'))$$,
	 '{user,operator,admin}', '{operator,admin}'),
	('get_definition', $$SELECT genroc.get_definition(':def')$$, '{user,operator,admin}', '{operator,admin}'),
	('alias_set', $$SELECT genroc.alias_set(':def', 'next', '[{"version": 1, "weight": 100}]')$$, '{user,admin}', '{admin}'),
	('alias_drop', $$SELECT genroc.alias_drop(':def', 'live')$$, '{user,admin}', '{admin}'),
	('get_alias', $$SELECT genroc.get_alias(':def', 'live')$$, '{user,operator,admin}', '{operator,admin}'),
	('list_aliases', $$SELECT pg_temp.must(jsonb_array_length(genroc.list_aliases(':def')) = 1)$$,
	 '{user,operator,admin}', '{operator,admin}'),
	('undefine', $$SELECT genroc.undefine(':def')$$, '{user,admin}', '{admin}'),
	('start', $$SELECT genroc.start(':def', '{}')$$, '{user,admin}', '{admin}'),
	('start_many', $$SELECT genroc.start_many(':def', '[{}, {}]')$$, '{user,admin}', '{admin}'),
	('cancel', $$SELECT genroc.cancel(:inst)$$, '{user,operator,admin}', '{operator,admin}'),
	('retry', $$SELECT genroc.retry(:failed)$$, '{operator,admin}', '{operator,admin}'),
	('resume', $$SELECT genroc.resume(:failed, '1')$$, '{operator,admin}', '{operator,admin}'),
	('redrive', $$SELECT genroc.redrive(:failed)$$, '{operator,admin}', '{operator,admin}'),
	('get_instance', $$SELECT genroc.get_instance(:inst)$$, '{user,operator,admin}', '{operator,admin}'),
	-- a value the role may not read is answered as absent (RC011, the same
	-- message: no existence oracle by hash); counted here as refused
	('get_object', $$SELECT pg_temp.object(':obj')$$, '{user,operator,admin}', '{operator,admin}'),
	('list_instances', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.list_instances() i WHERE (i ->> 'id')::bigint = :inst))$$,
	 '{user,operator,admin}', '{operator,admin}'),
	('history', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.history(:inst)))$$,
	 '{user,operator,admin}', '{operator,admin}'),
	('view instances', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.instances i WHERE i.id = :inst))$$,
	 '{user,operator,admin}', '{operator,admin}'),
	('emit', $$SELECT genroc.emit(:inst, 'e')$$, '{user,operator,admin}', '{operator,admin}'),
	('worker_register', $$SELECT genroc.worker_register(':stopped')$$, '{worker,admin}', '{admin}'),
	('worker_heartbeat', $$SELECT genroc.worker_heartbeat(':worker')$$, '{worker,admin}', '{admin}'),
	('worker_stop', $$SELECT genroc.worker_stop(':worker')$$, '{worker,admin}', '{admin}'),
	-- a drain request: the worker's owner, or an operator (genctl workers drain)
	('worker_drain', $$SELECT genroc.worker_drain(':worker')$$, '{operator,worker,admin}', '{operator,admin}'),
	('list_workers', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.list_workers() w WHERE w.worker = ':worker'))$$,
	 '{operator,worker,admin}', '{operator,admin}'),
	('view workers', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.workers w WHERE w.worker = ':worker'))$$,
	 '{operator,worker,admin}', '{operator,admin}'),
	('claim', $$SELECT genroc.claim(':worker', '{default}', 1)$$, '{worker,admin}', '{admin}'),
	('claim_wait', $$SELECT genroc.claim_wait(':worker', '{default}', 1, '0 s')$$, '{worker,admin}', '{admin}'),
	('claim_wake', $$SELECT genroc.claim_wake('{default}')$$, '{worker,admin}', '{worker,admin}'),
	('renew', $$SELECT genroc.renew(':worker', ARRAY[:inst]::bigint[])$$, '{worker,admin}', '{admin}'),
	('release', $$SELECT genroc.release(':worker', ARRAY[:inst]::bigint[])$$, '{worker,admin}', '{admin}'),
	('complete', $$SELECT genroc.complete(:inst, :epoch, '{"ok":1}')$$, '{worker,admin}', '{admin}'),
	('fail', $$SELECT genroc.fail(:inst, :epoch, 'E')$$, '{worker,admin}', '{admin}'),
	('complete_and_claim', $$SELECT genroc.complete_and_claim(:inst, :epoch, '{"ok":1}', ':worker', '{default}')$$,
	 '{worker,admin}', '{admin}'),
	('fail_and_claim', $$SELECT genroc.fail_and_claim(:inst, :epoch, 'E', NULL, ':worker', '{default}')$$,
	 '{worker,admin}', '{admin}'),
	('complete_many', $$SELECT pg_temp.must((SELECT r.status FROM genroc.complete_many(ARRAY[:inst]::bigint[], ARRAY[:epoch]::bigint[], ARRAY['{"ok":1}']::jsonb[]) r) IS NOT NULL)$$,
	 '{worker,admin}', '{admin}'),
	-- a batch (the set-wise path: the owner checked once per worker;
	-- the failed instance's report is stale and answered RC004)
	('complete_many (a batch)', $$SELECT pg_temp.must((SELECT count(*) FROM genroc.complete_many(ARRAY[:inst, :failed]::bigint[], ARRAY[:epoch, 1]::bigint[], ARRAY['{"ok":1}', '{}']::jsonb[]) r WHERE r.status = 'succeeded') = 1)$$,
	 '{worker,admin}', '{admin}'),
	('claim_activity', $$SELECT genroc.claim_activity(':act', ':worker', 1)$$, '{worker,admin}', '{admin}'),
	('activity_succeed', $$SELECT genroc.activity_succeed(':token', '1')$$, '{worker,admin}', '{admin}'),
	('activity_fail', $$SELECT genroc.activity_fail(':token', 'E')$$, '{worker,admin}', '{admin}'),
	('activity_heartbeat', $$SELECT genroc.activity_heartbeat(':token')$$, '{worker,admin}', '{admin}'),
	('tick', $$SELECT genroc.tick()$$, '{worker,admin}', '{worker,admin}'),
	('list_queues', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.list_queues() q WHERE q.name = 'default'))$$,
	 '{operator,worker,admin}', '{operator,worker,admin}'),
	('view queues', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.queues q WHERE q.name = 'default'))$$,
	 '{operator,worker,admin}', '{operator,worker,admin}'),
	-- queue figures count the caller's own instances (workers and
	-- operators: everyone's): the fixture's running task
	('queue_stats', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.queue_stats() q WHERE q.queue = 'default' AND q.running >= 1))$$,
	 '{user,operator,worker,admin}', '{operator,worker,admin}'),
	('view queue_stats', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.queue_stats q WHERE q.queue = 'default' AND q.running >= 1))$$,
	 '{user,operator,worker,admin}', '{operator,worker,admin}'),
	-- definition names: the operator rule (a worker sees its own)
	('metrics', $$SELECT pg_temp.must(genroc.metrics() -> 'by_definition' @> '[{"definition": ":def"}]')$$,
	 '{operator,worker,admin}', '{operator,admin}'),
	('tickers', $$SELECT genroc.tickers()$$, '{operator,worker,admin}', '{operator,worker,admin}'),
	('queue_set', $$SELECT genroc.queue_set('tapq', '{"kind":"tenant","global_concurrency":1}')$$, '{admin}', '{admin}'),
	('queue_drop', $$SELECT genroc.queue_set('tapq', '{"kind":"tenant"}'), genroc.queue_drop('tapq')$$, '{admin}', '{admin}'),
	('prune', $$SELECT genroc.prune('1 day', '1 day')$$, '{admin}', '{admin}'),
	('token_create', $$SELECT genroc.token_create('t', '{admin}', 'tap')$$, '{admin}', '{admin}'),
	('token_verify', $$SELECT genroc.token_verify('grt_x')$$, '{admin}', '{admin}'),
	('token_list', $$SELECT genroc.token_list()$$, '{admin}', '{admin}'),
	('token_revoke', $$SELECT genroc.token_revoke(':tokid')$$, '{admin}', '{admin}'),
	('now', $$SELECT genroc.now()$$, '{user,operator,worker,admin}', '{user,operator,worker,admin}'),
	('durability', $$SELECT genroc.durability()$$, '{user,operator,worker,admin}', '{user,operator,worker,admin}'),
	('capabilities', $$SELECT genroc.capabilities()$$, '{user,operator,worker,admin}', '{user,operator,worker,admin}'),
	('version', $$SELECT genroc.version()$$, '{user,operator,worker,admin}', '{user,operator,worker,admin}');

-- Every public function has a row (a new one must be placed in the matrix).
SELECT is_empty($$
	SELECT p.proname::text FROM pg_proc p
	WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname NOT LIKE '\_%'
	  AND p.proname NOT IN (SELECT fn FROM matrix)
$$, 'every public function is in the privilege matrix');

-- Each row: the answer of every capability, against what the matrix says.
SELECT is(
	(SELECT string_agg(c || '=' || pg_temp.cell('tap_' || c, w.whose, m.call), ' ' ORDER BY o)
	 FROM unnest(ARRAY['none', 'user', 'operator', 'worker', 'admin']) WITH ORDINALITY AS u (c, o)),
	(SELECT string_agg(c || '=' || CASE WHEN c = ANY (CASE w.whose WHEN 'own' THEN m.own ELSE m.other END)
										THEN 'ok' ELSE '42501' END, ' ' ORDER BY o)
	 FROM unnest(ARRAY['none', 'user', 'operator', 'worker', 'admin']) WITH ORDINALITY AS u (c, o)),
	m.fn || ' on ' || w.whose || ' objects')
FROM matrix m CROSS JOIN (VALUES ('own'), ('other')) AS w (whose)
ORDER BY m.fn, w.whose DESC;

-- A member of the owning role acts as the owner (a definition name and
-- instances shared by a team role).
CREATE ROLE tap_member IN ROLE genroc_user, tap_other;
SELECT is(pg_temp.cell('tap_member', 'other', $$SELECT genroc.define(':def', '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}')$$),
	'ok', 'a member of the owning role may add a version to its definition');
SELECT is(pg_temp.cell('tap_member', 'other', $$SELECT genroc.cancel(:inst)$$),
	'ok', 'a member of the owning role may cancel its instance');

-- A call's child belongs to the caller, and a caller may not call a
-- definition it could not start.
DO $$ BEGIN PERFORM genroc.define('tap_callee', '{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}}'); END $$;
UPDATE genroc._definitions SET owner = 'tap_other'::regrole WHERE name = 'tap_callee';
SET LOCAL ROLE tap_user;
DO $$ BEGIN PERFORM genroc.define('tap_caller', '{"StartAt":"C","States":{"C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"tap_callee"},"End":true}}}'); END $$;
SELECT is((SELECT status FROM genroc.start('tap_caller', '{}')), 'failed',
	'calling another role''s definition fails the caller''s task');
SELECT is((SELECT i ->> 'error' FROM genroc.list_instances('{"definition":"tap_caller"}') i),
	'genroc.PermissionDenied', 'with genroc.PermissionDenied');
RESET ROLE;
UPDATE genroc._definitions SET owner = 'tap_user'::regrole WHERE name = 'tap_callee';
SET LOCAL ROLE tap_user;
SELECT isnt((SELECT status FROM genroc.start('tap_caller', '{}')), 'failed',
	'calling its own definition works');
SELECT is((SELECT count(*)::int FROM genroc.instances WHERE definition = 'tap_callee'), 1,
	'and the child is the caller''s (it sees it)');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
