-- Catch: catchers are tried in order, the first match wins; ResultPath puts
-- {Error, Cause} into the state input (default: replaces it); Retry is
-- used up before Catch applies; no match → the instance fails.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker' AS worker;
SELECT * FROM genroc.define('c', '{"StartAt":"Work","States":{
	"Work":{"Type":"Task","Resource":"handler:work",
		"Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1,"MaxAttempts":1}],
		"Catch":[
			{"ErrorEquals":["Foo","Bar"],"Next":"FooBar","ResultPath":"$.error"},
			{"ErrorEquals":["Bar"],"Next":"BarOnly"},
			{"ErrorEquals":["Flaky"],"Next":"Gave up","ResultPath":"$.why"},
			{"ErrorEquals":["Known"],"Next":"Known"}],
		"End":true},
	"FooBar":{"Type":"Pass","End":true},
	"BarOnly":{"Type":"Pass","Result":"unreachable for Bar","End":true},
	"Gave up":{"Type":"Pass","End":true},
	"Known":{"Type":"Pass","End":true}}}');

-- Runs one instance: claim, fail with p_error, and show where it ended.
CREATE FUNCTION fail_with(p_error text, OUT status text, OUT state text, OUT output jsonb, OUT error text)
LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
	v_epoch bigint;
	v_inst jsonb;
BEGIN
	SELECT s.instance_id INTO v_id FROM genroc.start('c', '{"order":7}') s;
	SELECT c.epoch INTO v_epoch FROM genroc.claim('w1', '{default}') c WHERE c.instance_id = v_id;
	PERFORM genroc.fail(v_id, v_epoch, p_error, 'cause of ' || p_error);
	v_inst := genroc.get_instance(v_id);
	status := v_inst ->> 'status';
	state := v_inst ->> 'state';
	output := v_inst -> 'output';
	error := v_inst ->> 'error';
END;
$$;

-- Bar matches the first catcher (listed second there), not the second one
SELECT * FROM fail_with('Bar');
SELECT * FROM fail_with('Foo');
-- the default ResultPath ($) replaces the input with the error object
SELECT * FROM fail_with('Known');
-- no catcher matches: the instance fails with that error
SELECT * FROM fail_with('Unknown');
-- Retry first: Flaky is retried once, the second Flaky is caught
SELECT s.instance_id AS flaky FROM genroc.start('c', '{"order":8}') s \gset
SELECT genroc.fail(:flaky, (SELECT epoch FROM genroc.claim('w1', '{default}')), 'Flaky');
SELECT status FROM genroc.instances WHERE id = :flaky;
SET genroc.test_clock = '2030-01-01 00:00:01Z';
SELECT genroc.fail(:flaky, (SELECT epoch FROM genroc.claim('w1', '{default}')), 'Flaky', 'twice');
SELECT status, state, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :flaky;

-- States.ALL catches everything (here after a more specific catcher)
SELECT * FROM genroc.define('all', '{"StartAt":"Work","States":{
	"Work":{"Type":"Task","Resource":"handler:work","Catch":[
		{"ErrorEquals":["Specific"],"Next":"Specific"},
		{"ErrorEquals":["States.ALL"],"Next":"Any","ResultPath":"$.caught"}],"End":true},
	"Specific":{"Type":"Pass","Result":"specific","End":true},
	"Any":{"Type":"Pass","End":true}}}');
SELECT s.instance_id AS anyid FROM genroc.start('all', '{"x":1}') s \gset
SELECT genroc.fail(:anyid, (SELECT epoch FROM genroc.claim('w1', '{default}')), 'States.TaskFailed', 'exit 3');
SELECT status, state, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :anyid;
SELECT s.instance_id AS spec FROM genroc.start('all', '{"x":2}') s \gset
SELECT genroc.fail(:spec, (SELECT epoch FROM genroc.claim('w1', '{default}')), 'Specific');
SELECT status, state, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :spec;

DROP FUNCTION fail_with;
DROP EXTENSION genroc;
