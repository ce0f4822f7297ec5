-- complete_many: each report as genroc.complete makes it (with a worker
-- and its queues, as complete_and_claim), in the order given; a report on
-- a lost lease or a missing instance is answered in its row (RC004, RC003)
-- and the others go on; a misuse takes none.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

-- an instance as the reports leave it, without what differs between two
-- instances (the id, written as <id> wherever it shows, the token and the
-- random lease epochs)
CREATE FUNCTION pg_temp.shape(p_id bigint) RETURNS jsonb LANGUAGE sql AS $$
	SELECT replace(jsonb_build_object(
		'row', to_jsonb(i) - ARRAY['id', 'activity_token', 'root_id', 'lease_epoch'],
		'log', (SELECT jsonb_agg(jsonb_build_array(l.event, l.state, l.detail - 'epoch') ORDER BY l.seq)
				FROM genroc._log l WHERE l.instance_id = i.id),
		'children', (SELECT jsonb_agg(jsonb_build_array(c.status, c.state, c.input) ORDER BY c.id)
					 FROM genroc._instances c WHERE c.parent_id = i.id))::text,
		'"' || i.id || '"', '"<id>"')::jsonb
	FROM genroc._instances i WHERE i.id = p_id $$;

SELECT genroc.worker_register('w1') IS NOT NULL AS registered;

-- cancels what an earlier case left running, so that a claim takes only
-- the next case's tasks
CREATE FUNCTION pg_temp.clear() RETURNS void LANGUAGE sql AS $$
	SELECT count(genroc.cancel(i.id)) FROM genroc._instances i
	WHERE i.parent_id IS NULL AND i.status NOT IN ('succeeded', 'failed', 'cancelled') $$;

-- starts the inputs twice, claims them all, reports one copy with complete
-- (complete_and_claim with p_handback) one by one and the other with one
-- complete_many; says whether each pair is alike, and the statuses
CREATE FUNCTION pg_temp.same(p_def text, p_inputs jsonb, p_outputs jsonb, p_handback boolean)
	RETURNS TABLE (n bigint, status text, handed_back boolean, alike boolean) LANGUAGE plpgsql AS $$
DECLARE
	v_one bigint[];
	v_many bigint[];
	v_t record;
	v_ids bigint[] := '{}';
	v_eps bigint[] := '{}';
	v_outs jsonb[] := '{}';
	v_k int := 0;
BEGIN
	PERFORM pg_temp.clear();
	SELECT array_agg(s.instance_id ORDER BY e.n) INTO v_one
	FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e(v, n), LATERAL genroc.start(p_def, e.v) s;
	SELECT array_agg(s.instance_id) INTO v_many FROM genroc.start_many(p_def, p_inputs) s;
	FOR v_t IN SELECT * FROM genroc.claim('w1', '{default}', 2 * jsonb_array_length(p_inputs)) c ORDER BY c.instance_id LOOP
		IF v_t.instance_id = ANY (v_one) THEN
			IF p_handback THEN
				PERFORM genroc.complete_and_claim(v_t.instance_id, v_t.epoch,
					p_outputs -> (array_position(v_one, v_t.instance_id) - 1), 'w1', '{default}');
			ELSE
				PERFORM genroc.complete(v_t.instance_id, v_t.epoch, p_outputs -> (array_position(v_one, v_t.instance_id) - 1));
			END IF;
		ELSE
			v_ids := v_ids || v_t.instance_id;
			v_eps := v_eps || v_t.epoch;
			v_outs := v_outs || (p_outputs -> (array_position(v_many, v_t.instance_id) - 1));
		END IF;
	END LOOP;
	FOR v_t IN SELECT * FROM genroc.complete_many(v_ids, v_eps, v_outs,
			CASE WHEN p_handback THEN 'w1' END, CASE WHEN p_handback THEN '{default}'::text[] END) LOOP
		v_k := v_k + 1;
		IF v_t.instance_id <> v_ids[v_k] THEN
			RAISE EXCEPTION 'row % is for %, not %', v_k, v_t.instance_id, v_ids[v_k];
		END IF;
		n := array_position(v_many, v_t.instance_id);
		status := v_t.status;
		handed_back := v_t.epoch IS NOT NULL;
		alike := pg_temp.shape(v_one[n]) = pg_temp.shape(v_t.instance_id);
		RETURN NEXT;
	END LOOP;
END $$;

SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT * FROM pg_temp.same('job', '[1, 2, 3]', '[{"ok": 1}, null, [3]]', false) ORDER BY n;
-- the success of 'job' ends it with the result (core success_ends): the set-wise
-- statement writes that answer without a step; every JSON kind, a look-alike
-- reference (stored as an object) and a nested value leave what a step leaves
SELECT * FROM pg_temp.same('job', '[1, 2, 3, 4, 5]',
	'[42, "x", true, {"genroc:object": "look-alike"}, {"deep": {"a": [1, {"b": null}]}}]', false) ORDER BY n;
-- complete_many writes those reports (the definition cached in the backend
-- by then) with two statements of its own, no set-wise step: an output
-- over the object threshold (stored as an object, its log rows too), one
-- over log_payload_max (logged as its size), a small one, and a report on
-- a lost lease among them (RC004) leave what complete leaves
SET genroc.object_threshold = '1kB';
SET genroc.log_payload_max = 2500;
SELECT * FROM pg_temp.same('job', '[1, 2, 3]',
	jsonb_build_array(repeat('x', 3000), repeat('y', 1500), 'small'), false) ORDER BY n;
SELECT genroc._is_ref(i.output) AS stored, jsonb_typeof(i.output) AS kind
FROM genroc._instances i WHERE i.status = 'succeeded' ORDER BY i.id DESC LIMIT 3;
RESET genroc.log_payload_max;
RESET genroc.object_threshold;
SELECT pg_temp.clear();
SELECT count(*) FROM genroc.start_many('job', '[1, 2]');
SELECT array_agg(c.instance_id ORDER BY c.instance_id) AS ids, array_agg(c.epoch ORDER BY c.instance_id) AS eps
FROM genroc.claim('w1', '{default}', 2) c \gset
SELECT instance_id = (:'ids'::bigint[])[1] AS first, status, sqlstate
FROM genroc.complete_many(:'ids'::bigint[], ARRAY[(:'eps'::bigint[])[1], 1], '{"1", "2"}');
SELECT status, output FROM genroc._instances WHERE id = ANY (:'ids'::bigint[]) ORDER BY id;
-- genroc._detail, the log details' builder, builds what jsonb_build_object
-- builds for the types it takes; any other type is 22023
SELECT genroc._detail('w', 'x'::text, 'e', 5::bigint, 'a', 2, 'b', true, 'j', '{"z": [1]}'::jsonb,
		'n', NULL::jsonb, 's', '3'::jsonb, 'a', 3)
	 = jsonb_build_object('w', 'x'::text, 'e', 5::bigint, 'a', 2, 'b', true, 'j', '{"z": [1]}'::jsonb,
		'n', NULL::jsonb, 's', '3'::jsonb, 'a', 3) AS same_object;
SELECT genroc._detail('at', now());
SELECT genroc._detail(VARIADIC ARRAY['a', 'b']);

-- the next state: a second task (handed back with a worker), a Choice to
-- a Fail, a Wait, a Map of two items
SELECT * FROM genroc.define('steps', $d${"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:a","ResultPath":"$.a","Next":"C"},
	"C":{"Type":"Choice","Choices":[
		{"Variable":"$.a","StringEquals":"task","Next":"B"},
		{"Variable":"$.a","StringEquals":"fail","Next":"F"},
		{"Variable":"$.a","StringEquals":"wait","Next":"W"}],
	 "Default":"M"},
	"B":{"Type":"Task","Resource":"handler:b","End":true},
	"F":{"Type":"Fail","Error":"Told","Cause":"by the output"},
	"W":{"Type":"Wait","Seconds":60,"Next":"B"},
	"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"I","States":{
		"I":{"Type":"Task","Resource":"handler:i","End":true}}},"End":true}}}$d$);
SELECT * FROM pg_temp.same('steps', '[{"items": [1, 2]}, {"items": [1, 2]}, {"items": [1, 2]}, {"items": [3]}]',
	'["task", "fail", "wait", "map"]', false) ORDER BY n;
SELECT * FROM pg_temp.same('steps', '[{"items": [1, 2]}, {"items": [1, 2]}, {"items": [1, 2]}, {"items": [3]}]',
	'["task", "fail", "wait", "map"]', true) ORDER BY n;

-- variables (an Assign), the context (the execution's start and input, the
-- definition's name), retry counts, a value stored as an object (a state
-- input, an input), a task's timeout: written by the set-wise path (its
-- request written in C, genroc._step_succeeded) as complete writes them
SET genroc.object_threshold = '1kB';
SELECT * FROM genroc.define('rich', $d${"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:a","Assign":{"mark":"set"},"ResultPath":"$.a","Next":"P",
		"Retry":[{"ErrorEquals":["Never"],"MaxAttempts":1}]},
	"P":{"Type":"Pass","Parameters":{"big.$":"$.a","def.$":"$$.StateMachine.Name","mark.$":"$mark",
		"at.$":"$$.Execution.StartTime","in.$":"$$.Execution.Input"},"Next":"B"},
	"B":{"Type":"Task","Resource":"handler:b","TimeoutSeconds":30,"End":true}}}$d$);
SELECT * FROM pg_temp.same('rich', jsonb_build_array(jsonb_build_object('pad', repeat('y', 2000)), '{}'::jsonb, '{"n": "é\"q"}'::jsonb),
	jsonb_build_array(repeat('x', 3000), 'small', null), false) ORDER BY n;
SELECT * FROM pg_temp.same('rich', jsonb_build_array(jsonb_build_object('pad', repeat('y', 2000)), '{}'::jsonb, '{"n": "é\"q"}'::jsonb),
	jsonb_build_array(repeat('x', 3000), 'small', null), true) ORDER BY n;
SELECT i.variables, i.timeout_s, i.timeout_at IS NOT NULL AS times_out, genroc._is_ref(i.state_input) AS stored
FROM genroc._instances i WHERE i.status = 'running' ORDER BY i.id;
RESET genroc.object_threshold;
-- the execution's id and name (an instance's own: the id when it has no
-- name) as the set-wise path puts them in the context
SELECT * FROM genroc.define('ctx', $d${"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:a","ResultPath":"$.a","Next":"P"},
	"P":{"Type":"Pass","Parameters":{"exec.$":"$$.Execution.Id","name.$":"$$.Execution.Name"},"Next":"B"},
	"B":{"Type":"Task","Resource":"handler:b","End":true}}}$d$);
SELECT * FROM pg_temp.same('ctx', '[{}, {"k": 2}]', '[{"a": 1}, "b"]', false) ORDER BY n;
-- genroc._step_succeeded itself (the row's and its definition's columns,
-- as complete_many passes them): a fresh version 4 UUID as the task
-- token on each call; a branch's or an item's row (a parent and a scope)
-- refused; null arguments refused
CREATE FUNCTION pg_temp.step_succeeded(i genroc._instances, d genroc._definitions, r jsonb, ms bigint)
	RETURNS jsonb LANGUAGE sql AS $$
	SELECT genroc._step_succeeded(i.id, i.name, i.created_at, i.input, i.state, i.retry_counts,
		i.state_input, i.scope, i.variables, i.parent_id, d.hash, d.definition, d.name, d.version, r, ms) $$;
SELECT * FROM genroc.define('tok', $d${"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:a","Next":"P"},
	"P":{"Type":"Pass","Parameters":{"t.$":"$$.Task.Token"},"End":true}}}$d$);
SELECT instance_id AS tok FROM genroc.start('tok', '{}') \gset
SELECT a -> 'outcome' -> 'output' ->> 't' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' AS uuid_v4,
	   a -> 'outcome' ->> 'kind' AS kind
FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id,
	 LATERAL pg_temp.step_succeeded(i, d, '"r"', 1893456000000) AS a WHERE i.id = :tok;
SELECT count(DISTINCT pg_temp.step_succeeded(i, d, '"r"', 1893456000000) -> 'outcome' -> 'output' ->> 't') AS tokens
FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id, generate_series(1, 3)
WHERE i.id = :tok;
SELECT pg_temp.step_succeeded(jsonb_populate_record(i, jsonb_build_object('parent_id', i.id, 'scope', 'x')), d, '1', 1)
FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id WHERE i.id = :tok;
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.step_succeeded(NULL, d, '1', 1) FROM genroc._definitions d WHERE d.name = 'tok';
\echo :LAST_ERROR_SQLSTATE
-- (its row types belong to the extension, which the file drops at its end)
DROP FUNCTION pg_temp.step_succeeded(genroc._instances, genroc._definitions, jsonb, bigint);

-- a Map's items reported in one batch: the parent ends with them
SELECT * FROM genroc.define('fan', $d${"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$",
	"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Task","Resource":"handler:i","End":true}}},"End":true}}}$d$);
SELECT pg_temp.clear();
SELECT instance_id AS fan FROM genroc.start('fan', '[10, 20, 30]') \gset
CREATE TEMP TABLE items AS SELECT * FROM genroc.claim('w1', '{default}', 10);
SELECT count(*) AS items FROM items;
SELECT r.status, r.sqlstate FROM genroc.complete_many(
	(SELECT array_agg(instance_id ORDER BY instance_id) FROM items),
	(SELECT array_agg(epoch ORDER BY instance_id) FROM items),
	(SELECT array_agg(to_jsonb(instance_id) ORDER BY instance_id) FROM items)) r;
SELECT status, output = (SELECT jsonb_agg(instance_id ORDER BY instance_id) FROM items) AS outputs_in_order
FROM genroc._instances WHERE id = :fan;

-- reports not taken are answered in their rows; the others go on: an
-- unknown instance, a stale epoch, the same report twice (the second finds
-- the instance ended)
SELECT pg_temp.clear();
SELECT count(*) FROM genroc.start_many('job', '[1, 2]');
CREATE TEMP TABLE two AS SELECT * FROM genroc.claim('w1', '{default}', 2) ORDER BY instance_id;
SELECT row_number() OVER () AS n, r.status, r.sqlstate FROM genroc.complete_many(
	ARRAY[-1, (SELECT min(instance_id) FROM two), (SELECT max(instance_id) FROM two), (SELECT max(instance_id) FROM two)],
	ARRAY[1, (SELECT min(epoch) FROM two) + 1, (SELECT epoch FROM two ORDER BY instance_id DESC LIMIT 1),
		  (SELECT epoch FROM two ORDER BY instance_id DESC LIMIT 1)],
	ARRAY['1', '2', '3', '4']::jsonb[]) r;
SELECT status FROM genroc._instances WHERE id IN (SELECT instance_id FROM two) ORDER BY id;
SELECT count(*) AS reports_of_nothing FROM genroc.complete_many('{}', '{}', '{}');

-- a misuse takes none
SELECT genroc.complete_many(NULL, '{1}', '{1}');
SELECT genroc.complete_many('{1}', NULL, '{1}');
SELECT genroc.complete_many('{1}', '{1}', NULL);
SELECT genroc.complete_many('{1, 2}', '{1}', '{1, 2}');
SELECT genroc.complete_many('{1}', '{1}', '{1, 2}');
SELECT genroc.complete_many('{{1}}', '{{1}}', '{{1}}');
SELECT genroc.complete_many('{1, NULL}', '{1, 2}', '{1, 2}');
SELECT genroc.complete_many('{1, 2}', '{NULL, 2}', '{1, 2}');
SELECT genroc.complete_many('{1, 2}', '{1, 2}', ARRAY['1', NULL]::jsonb[]);
SELECT genroc.complete_many('{1}', '{1}', '{1}', 'w1');
SELECT genroc.complete_many('{1}', '{1}', '{1}', NULL, '{default}');
SELECT genroc.complete_many(array_fill(1::bigint, ARRAY[10001]), array_fill(1::bigint, ARRAY[10001]),
	array_fill('1'::jsonb, ARRAY[10001]));
-- the next task is handed back only to the worker that held the lease
SELECT count(*) FROM genroc.start_many('steps', '[{}]');
CREATE TEMP TABLE one AS SELECT * FROM genroc.claim('w1', '{default}', 1);
SELECT genroc.worker_register('w2') IS NOT NULL AS registered;
SELECT r.status, r.epoch IS NULL AS not_handed_back
FROM genroc.complete_many(ARRAY[(SELECT instance_id FROM one)], ARRAY[(SELECT epoch FROM one)], ARRAY['"task"']::jsonb[], 'w2', '{default}') r;

-- which way a batch went (engine/many.cpp): the reports it took one by
-- one (each report's lease read once by REPORT_LEASED, the one statement
-- that calls genroc._caller(); the set-wise path passes the caller's role
-- as a parameter)
-- in the transaction (the count before the call taken off: counts of
-- earlier transactions wait in the session to be reported).  A common
-- batch is written set-wise, with none; a stale report among common ones
-- goes there alone, after the others, and the rows keep the order given;
-- a batch of one, and one with an instance twice, go there whole (and any
-- batch while a queue has a global_concurrency: below).
SET track_functions = 'all';
CREATE FUNCTION pg_temp.general_reports() RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(pg_stat_get_xact_function_calls(
		'genroc._caller()'::regprocedure), 0) $$;
-- one complete_many of the claimed tasks numbered p_ks (in that order, a
-- number twice for an instance twice; p_stale's with a wrong epoch): each
-- report's status or SQLSTATE, whether the rows came back in the order
-- given, and the general path's reports in this call (one transaction)
CREATE FUNCTION pg_temp.batch(p_ks int[], p_stale int DEFAULT NULL)
	RETURNS TABLE (answers text[], in_order boolean, general_reports bigint) LANGUAGE plpgsql AS $$
DECLARE
	v_before bigint := pg_temp.general_reports();
	v_ids bigint[];
BEGIN
	SELECT array_agg(w.instance_id ORDER BY g.n) INTO v_ids
	FROM unnest(p_ks) WITH ORDINALITY AS g (k, n) JOIN ways w ON w.k = g.k;
	RETURN QUERY
	SELECT array_agg(coalesce(r.status, r.sqlstate) ORDER BY r.n), array_agg(r.instance_id ORDER BY r.n) = v_ids,
		   pg_temp.general_reports() - v_before
	FROM genroc.complete_many(v_ids,
		(SELECT array_agg(CASE WHEN w.k = p_stale THEN w.epoch + 1 ELSE w.epoch END ORDER BY g.n)
		 FROM unnest(p_ks) WITH ORDINALITY AS g (k, n) JOIN ways w ON w.k = g.k),
		(SELECT array_agg(to_jsonb(g.k) ORDER BY g.n) FROM unnest(p_ks) WITH ORDINALITY AS g (k, n)))
		WITH ORDINALITY AS r (instance_id, status, sqlstate, epoch, state, resource, input, only_once,
							  timeout_s, attempt, lease_expires, queue, n);
END $$;
SELECT pg_temp.clear();
SELECT count(*) FROM genroc.start_many('job', '[1, 2, 3, 4, 5, 6, 7, 8]');
CREATE TEMP TABLE ways AS
SELECT row_number() OVER (ORDER BY c.instance_id) AS k, c.* FROM genroc.claim('w1', '{default}', 8) c;
SELECT * FROM pg_temp.batch('{1, 2, 3}');
SELECT * FROM pg_temp.batch('{4, 5, 6}', 5);
SELECT * FROM pg_temp.batch('{7}');
SELECT * FROM pg_temp.batch('{8, 8}');
-- a queue with a global_concurrency anywhere: the whole batch one by one,
-- each report freeing its room (_room_freed)
SELECT 1 FROM genroc.queue_set('default', '{"global_concurrency": 5}');
SELECT count(*) FROM genroc.start_many('job', '[9, 10]');
INSERT INTO ways SELECT 8 + row_number() OVER (ORDER BY c.instance_id), c.* FROM genroc.claim('w1', '{default}', 2) c;
SELECT * FROM pg_temp.batch('{9, 10}');
SELECT 1 FROM genroc.queue_set('default', '{"global_concurrency": 0}');
SELECT w.k, i.status, i.output FROM ways w JOIN genroc._instances i ON i.id = w.instance_id ORDER BY w.k;

-- the set-wise batch's hand-back is decided by the engine's check (its
-- handback_room, as complete_and_claim's): two reports whose next task is
-- a handler task ready at once, by p_worker serving p_queues (drained
-- after its claim when p_drain), written set-wise (no general report)
CREATE FUNCTION pg_temp.handed_back(p_worker text, p_queues text[], p_drain boolean)
	RETURNS TABLE (status text, handed_back boolean, general_reports bigint) LANGUAGE plpgsql AS $$
DECLARE
	v_ids bigint[];
	v_eps bigint[];
	v_before bigint;
BEGIN
	PERFORM pg_temp.clear();
	PERFORM genroc.start_many('steps', '[{}, {}]');
	SELECT array_agg(c.instance_id ORDER BY c.instance_id), array_agg(c.epoch ORDER BY c.instance_id)
	INTO v_ids, v_eps FROM genroc.claim(p_worker, '{default}', 2) c;
	IF p_drain THEN
		PERFORM genroc.worker_drain(p_worker);
	END IF;
	v_before := pg_temp.general_reports();
	RETURN QUERY
	SELECT r.status, r.epoch IS NOT NULL, pg_temp.general_reports() - v_before
	FROM genroc.complete_many(v_ids, v_eps, ARRAY['"task"', '"task"']::jsonb[], p_worker, p_queues) r;
END $$;
-- to the worker that held the lease and serves the queue
SELECT * FROM pg_temp.handed_back('w1', '{default}', false);
-- not when it does not serve the queue, nor while it drains
SELECT * FROM pg_temp.handed_back('w1', '{other}', false);
SELECT genroc.worker_register('w3') IS NOT NULL AS registered;
SELECT * FROM pg_temp.handed_back('w3', '{default}', true);
-- nor from a queue with a rate limit (claim counts its starts)
SELECT 1 FROM genroc.queue_set('default', '{"rate_limit": {"count": 100, "period": "10s"}}');
SELECT * FROM pg_temp.handed_back('w1', '{default}', false);

DROP EXTENSION genroc;
