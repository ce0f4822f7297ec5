-- What another role might try, as a test: against alice's work, every line is refused
-- with 42501 or sees nothing, both for mallory (granted nothing) and for
-- eve, a peer tenant with genroc_user and genroc_worker of her own.  Each
-- line runs in a subtransaction that is rolled back, so a line that got
-- through could not hide from the next one.
BEGIN;
SELECT plan(72);

SET LOCAL genroc.test_clock = '2030-01-01 00:00:00Z';
CREATE ROLE tap_alice IN ROLE genroc_user, genroc_worker;
CREATE ROLE tap_mallory;
CREATE ROLE tap_eve IN ROLE genroc_user, genroc_worker;

-- alice's work
SET LOCAL ROLE tap_alice;
CREATE TEMP TABLE a (k text PRIMARY KEY, v text);
DO $$
DECLARE
	v_c record;
BEGIN
	PERFORM genroc.define('payroll', '{"StartAt":"Pay","States":{"Pay":{"Type":"Task","Resource":"handler:pay","End":true}}}');
	PERFORM genroc.define('review', '{"StartAt":"R","States":{"R":{"Type":"Task","Resource":"activity:alice-review","End":true}}}');
	PERFORM genroc.define('done', '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}');
	INSERT INTO a SELECT 'ended', s.instance_id FROM genroc.start('done', '{"old":true}') s;
	PERFORM genroc.worker_register('alice-w1');
	PERFORM genroc.worker_register('alice-w2');
	PERFORM genroc.worker_stop('alice-w2');
	INSERT INTO a SELECT 'payroll', s.instance_id
		FROM genroc.start('payroll', '{"salary":123456,"api_key":"sk_live_x"}') s;
	SELECT * INTO v_c FROM genroc.claim('alice-w1', '{default}', 1);
	INSERT INTO a VALUES ('epoch', v_c.epoch);
	INSERT INTO a SELECT 'waiting', s.instance_id FROM genroc.start('payroll', '{"salary":1}') s;
	INSERT INTO a SELECT 'review', s.instance_id FROM genroc.start('review', '{"salary":2}') s;
	INSERT INTO a SELECT 'token', c.token FROM genroc.claim_activity('alice-review', 'alice-w1', 1) c;
	INSERT INTO a SELECT 'review2', s.instance_id FROM genroc.start('review', '{"salary":3}') s;
END;
$$;
RESET ROLE;
GRANT SELECT ON a TO tap_mallory, tap_eve;
SET LOCAL genroc.test_clock = '2030-03-01 00:00:00Z';

CREATE FUNCTION pg_temp.must(p_seen boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF NOT p_seen THEN
		RAISE EXCEPTION 'nothing seen' USING ERRCODE = '42501';
	END IF;
END;
$$;

-- 'refused' for 42501; otherwise what got through ('TAPOK got through' or
-- another error)
CREATE FUNCTION pg_temp.try(p_role text, p_sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_sql text := p_sql;
	v_k text;
BEGIN
	FOR v_k IN SELECT k FROM a ORDER BY length(k) DESC LOOP
		v_sql := replace(v_sql, ':' || v_k, (SELECT v FROM a WHERE k = v_k));
	END LOOP;
	BEGIN
		EXECUTE format('SET LOCAL ROLE %I', p_role);
		EXECUTE v_sql;
		RAISE EXCEPTION 'got through' USING ERRCODE = 'TAPOK';
	EXCEPTION WHEN OTHERS THEN
		RETURN CASE SQLSTATE WHEN '42501' THEN 'refused' ELSE SQLSTATE || ' ' || SQLERRM END;
	END;
END;
$$;

CREATE TEMP TABLE lines (line text, sql text);
INSERT INTO lines VALUES
	('get_instance reads her input', $$SELECT genroc.get_instance(:payroll)$$),
	('list_instances shows her instances', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.list_instances()))$$),
	('the instances view shows her instances', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.instances))$$),
	('history shows her input', $$SELECT genroc.history(:payroll)$$),
	('claim with her worker id', $$SELECT genroc.claim('alice-w1', '{default}', 1)$$),
	('complete her task', $$SELECT genroc.complete(:payroll, :epoch, '{"paid":"mallory"}')$$),
	('fail her task', $$SELECT genroc.fail(:payroll, :epoch, 'Mallory')$$),
	('renew her lease', $$SELECT genroc.renew('alice-w1', ARRAY[:payroll]::bigint[])$$),
	('release her lease', $$SELECT genroc.release('alice-w1', ARRAY[:payroll]::bigint[])$$),
	('worker_stop her worker', $$SELECT genroc.worker_stop('alice-w1')$$),
	('worker_heartbeat her worker', $$SELECT genroc.worker_heartbeat('alice-w1')$$),
	('worker_drain her worker', $$SELECT genroc.worker_drain('alice-w1')$$),
	('register her stopped worker id again', $$SELECT genroc.worker_register('alice-w2')$$),
	('the workers view shows her workers', $$SELECT pg_temp.must(EXISTS (SELECT FROM genroc.workers))$$),
	('emit to her instance', $$SELECT genroc.emit(:waiting, 'approve', '{"by":"mallory"}')$$),
	('cancel her instance', $$SELECT genroc.cancel(:waiting)$$),
	('claim_activity with her worker id', $$SELECT genroc.claim_activity('alice-review', 'alice-w1', 1)$$),
	('activity_succeed with her token', $$SELECT genroc.activity_succeed(':token', '{"approved":true}')$$),
	('define a version 2 of her definition', $$SELECT genroc.define('payroll', '{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"stolen","End":true}}}')$$),
	('start her definition', $$SELECT genroc.start('payroll', '{}')$$),
	('read her definition', $$SELECT genroc.get_definition('payroll')$$),
	('queue_set throttles everyone', $$SELECT genroc.queue_set('default', '{"kind":"default","global_concurrency":1,"rate_limit":{"count":1,"period":"720h"}}')$$),
	('retention by tick deletes her concluded instances',
	 $$SET LOCAL genroc.instance_retention = '1s'; SELECT genroc.tick();
	   RESET ROLE; SELECT pg_temp.must(NOT EXISTS (SELECT FROM genroc._instances WHERE id = :ended))$$);

SELECT is(pg_temp.try(r.role, l.sql), 'refused', r.role || ': ' || l.line)
FROM lines l CROSS JOIN (VALUES ('tap_mallory'), ('tap_eve')) AS r (role)
ORDER BY r.role DESC, l.line;

-- The controls: alice herself gets through every line but the two that act
-- on everyone's data, and an administering role gets through those.
SELECT isnt(pg_temp.try('tap_alice', l.sql), 'refused', 'alice: ' || l.line)
FROM lines l WHERE l.line NOT LIKE 'queue_set%' AND l.line NOT LIKE 'retention%'
ORDER BY l.line;
SELECT is(pg_temp.try(current_user, l.sql), 'TAPOK got through', 'an admin: ' || l.line)
FROM lines l WHERE l.line LIKE 'queue_set%' OR l.line LIKE 'retention%'
ORDER BY l.line;

-- get_object: a value alice's instance holds answers eve (and mallory, who
-- may not call it at all: 42501 from PostgreSQL) as a value that was never
-- stored does: the same SQLSTATE, message, detail and hint, with the
-- reference in its place.  Otherwise a reference, a hash of the value,
-- tells whoever guesses a value (a card number, a salary) that some
-- instance holds it.
SET LOCAL ROLE tap_alice;
SET LOCAL genroc.object_threshold = 64;
INSERT INTO a SELECT 'big', s.instance_id
FROM genroc.start('done', jsonb_build_object('card', '4111111111111111', 'pad', repeat('x', 200))) s;
INSERT INTO a SELECT 'obj', genroc.get_instance(v::bigint, '{"values":"ref"}') -> 'input' ->> 'genroc:object'
FROM a WHERE k = 'big';
RESET ROLE;
CREATE FUNCTION pg_temp.object_answer(p_role text, p_ref text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v_state text;
	v_msg text;
	v_detail text;
	v_hint text;
BEGIN
	EXECUTE format('SET LOCAL ROLE %I', p_role);
	EXECUTE 'SELECT genroc.get_object($1)' USING p_ref;	-- checked as p_role each time
	RESET ROLE;
	RETURN 'read';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_msg = MESSAGE_TEXT,
		v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
	RETURN replace(concat_ws(' | ', v_state, v_msg, v_detail, v_hint), p_ref, 'REF');
END;
$$;
SELECT is(pg_temp.object_answer('tap_alice', (SELECT v FROM a WHERE k = 'obj')), 'read',
	'alice reads her stored value');
SELECT is(pg_temp.object_answer('tap_eve', (SELECT v FROM a WHERE k = 'obj')),
		  pg_temp.object_answer('tap_eve', repeat('0', 64)),
	'eve: alice''s stored value answers as one never stored');
SELECT matches(pg_temp.object_answer('tap_eve', (SELECT v FROM a WHERE k = 'obj')), '^RC011 ',
	'eve: RC011');

SELECT * FROM finish();
ROLLBACK;
