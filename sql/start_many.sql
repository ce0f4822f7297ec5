-- start_many: every input starts the instance genroc.start would start
-- (the row and its log the same, but for the id), in input order, with the
-- shared options; errors start none.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

-- an instance as start / start_many leave it, without what differs between
-- two instances (the id, written as <id> wherever it shows, and the token)
CREATE FUNCTION pg_temp.shape(p_id bigint) RETURNS jsonb LANGUAGE sql AS $$
	SELECT replace(jsonb_build_object(
		'row', to_jsonb(i) - ARRAY['id', 'activity_token', 'root_id'],
		'log', (SELECT jsonb_agg(jsonb_build_array(l.event, l.state, l.detail) ORDER BY l.seq)
				FROM genroc._log l WHERE l.instance_id = i.id))::text,
		'"' || i.id || '"', '"<id>"')::jsonb
	FROM genroc._instances i WHERE i.id = p_id $$;

-- starts each input with start and all of them with start_many; says
-- whether each pair is alike, and the statuses
CREATE FUNCTION pg_temp.same(p_def text, p_inputs jsonb, p_options jsonb DEFAULT '{}')
	RETURNS TABLE (n bigint, status text, alike boolean) LANGUAGE sql AS $$
	WITH one AS (
		SELECT e.n, s.instance_id AS id
		FROM jsonb_array_elements(p_inputs) WITH ORDINALITY AS e(v, n),
			 LATERAL genroc.start(p_def, e.v, p_options) AS s
	), many AS (
		SELECT row_number() OVER () AS n, m.instance_id AS id, m.status
		FROM genroc.start_many(p_def, p_inputs, p_options) AS m
	)
	SELECT one.n, many.status, pg_temp.shape(one.id) = pg_temp.shape(many.id)
	FROM one JOIN many USING (n) ORDER BY one.n $$;

SELECT * FROM genroc.define('job', '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT * FROM pg_temp.same('job', '[{"n":1}, 2, "three", null, [4]]');
-- ids in input order, one queue wake-up
SELECT array_agg(instance_id ORDER BY instance_id) = array_agg(instance_id) AS ids_ascending
FROM genroc.start_many('job', '[1, 2, 3, 4, 5, 6]');

-- a first Task the input reaches unchanged is not stepped per input
-- (genroc._start_task gives what every start answers but the input); its
-- settings are the definition's all the same
SELECT * FROM genroc.define('plain', '{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"handler:work","TimeoutSeconds":30,"HeartbeatSeconds":10,"OnlyOnce":true,"Retry":[{"ErrorEquals":["x"]},{"ErrorEquals":["States.ALL"],"MaxAttempts":2}],"End":true}}}');
SELECT genroc._start_task(hash, definition) FROM genroc._definitions WHERE name = 'plain';
SELECT * FROM pg_temp.same('plain', '[{"n":1}, [2], null]', '{"priority":3}');
-- one that reads its input is stepped
SELECT * FROM genroc.define('shaped', '{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"handler:work","InputPath":"$.n","End":true}}}');
SELECT genroc._start_task(hash, definition) IS NULL AS stepped FROM genroc._definitions WHERE name = 'shaped';
SELECT * FROM pg_temp.same('shaped', '[{"n":1}, {"n":[2]}]');

-- the context ($$), Parameters, an Assign and the task's settings
SELECT * FROM genroc.define('rich', $d${"StartAt":"Prep","States":{
	"Prep":{"Type":"Pass","Parameters":{"exec.$":"$$.Execution.Id","name.$":"$$.Execution.Name",
		"at.$":"$$.Execution.StartTime","sm.$":"$$.StateMachine.Id","in.$":"$$.Execution.Input","v.$":"$.v"},
		"Assign":{"seen.$":"$.v"},"Next":"Work"},
	"Work":{"Type":"Task","Resource":"genroc:noop","TimeoutSeconds":30,"HeartbeatSeconds":10,"OnlyOnce":true,
		"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":2}],"End":true}}}$d$);
SELECT * FROM pg_temp.same('rich', '[{"v":1},{"v":"x"}]', '{"priority":5,"labels":{"team":"a"}}');
SELECT task_input ->> 'exec' = id::text AS own_id, variables, priority, labels
FROM genroc._instances WHERE id = (SELECT max(id) FROM genroc._instances);

-- genroc._step_start (the step of start_many's items) answers as
-- genroc._step does to the whole request {op: start, input} written out
-- with that input in the context: names, tokens and inputs that need
-- escaping, a null name (the id)
SELECT * FROM genroc.define('ctx', '{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"all.$":"$$","in.$":"$"},"End":true}}}');
CREATE TEMP TABLE parts AS
SELECT * FROM (VALUES (1, '{"s":"é\n\"\\ \u0001","n":1e300,"z":-0.5}'::jsonb, NULL, 'ctx', 'tok'),
					  (2, '[1,{"a":null},"x"]', 'nämé "q" \ /', 'ma"ch\ine', 'tok"en	'),
					  (3, 'null', '', 'ctx', '')) AS v(k, input, name, machine, token);
SELECT v.k, genroc._step_start(d.hash, d.definition, v.input, 1893456000000, 42, v.name,
						  '2030-01-01T00:00:00.000Z', v.machine, 3, v.token)
	 = genroc._step(d.hash, d.definition, jsonb_build_object('op', 'start', 'input', v.input,
			'now_ms', 1893456000000, 'context', jsonb_build_object(
				'Execution', jsonb_build_object('Id', '42', 'Name', coalesce(v.name, '42'),
												'StartTime', '2030-01-01T00:00:00.000Z', 'Input', v.input),
				'StateMachine', jsonb_build_object('Id', v.machine || ':3', 'Name', v.machine),
				'Task', jsonb_build_object('Token', v.token)))) AS as_written
FROM genroc._definitions d, parts v WHERE d.name = 'ctx' ORDER BY v.k;
-- the context as the Pass state sees it
SELECT genroc._step_start(d.hash, d.definition, '[1]', 1893456000000, 42, NULL,
						  '2030-01-01T00:00:00.000Z', 'ctx', 1, 't') -> 'outcome' -> 'output' -> 'all' AS context
FROM genroc._definitions d WHERE d.name = 'ctx';
-- every argument but the optional ones must be there
SELECT genroc._step_start(d.hash, d.definition, '1', 1, 42, NULL, NULL, 'ctx', 1, 't')
FROM genroc._definitions d WHERE d.name = 'ctx';
DROP TABLE parts;

-- the others take start's path: a first step that waits, ends, fans out
-- or parks an activity; run_at later than now; a partition_key
SELECT * FROM genroc.define('waits', '{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}}');
SELECT * FROM pg_temp.same('waits', '[1, 2]');
SELECT * FROM genroc.define('ends', '{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":1,"Next":"Ok"}],"Default":"No"},"Ok":{"Type":"Succeed"},"No":{"Type":"Fail","Error":"E"}}}');
SELECT * FROM pg_temp.same('ends', '[1, 2]');
SELECT * FROM genroc.define('fans', '{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:work","End":true}}},"End":true}}}');
SELECT * FROM pg_temp.same('fans', '[[1, 2], []]');
SELECT * FROM genroc.define('asks', '{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:review","End":true}}}');
SELECT * FROM pg_temp.same('asks', '[1]');
SELECT * FROM pg_temp.same('job', '[1, 2]', '{"run_at":"2030-01-01T00:05:00Z"}');
SELECT * FROM pg_temp.same('job', '[1, 2]', '{"run_at":"2029-01-01T00:00:00Z"}');
-- (start's first got the partition's slot: a partition of its own here)
SELECT * FROM genroc.start_many('job', '[1, 2]', '{"partition_key":"q"}');

-- values over the object threshold are kept as references, as start keeps them
SET genroc.object_threshold = 64;
SELECT * FROM pg_temp.same('job', jsonb_build_array(jsonb_build_object('big', repeat('x', 200))));
RESET genroc.object_threshold;

-- a version: all of them run it
SELECT * FROM genroc.define('job', '{"StartAt":"Work2","States":{"Work2":{"Type":"Task","Resource":"handler:work","End":true}}}');
SELECT array_agg(instance_id) AS v1 FROM genroc.start_many('job', '[1, 2]', '{"version":1}') \gset
SELECT array_agg(instance_id) AS v2 FROM genroc.start_many('job', '[1, 2]') \gset
SELECT id = ANY (:'v2'::bigint[]) AS latest, state FROM genroc._instances
WHERE id = ANY (:'v1'::bigint[] || :'v2'::bigint[]) ORDER BY id;
SELECT * FROM genroc.start_many('job', '[]');

-- errors: each names what is wrong, and none of the inputs starts
SELECT count(*) AS before FROM genroc._instances \gset
SELECT * FROM genroc.start_many(NULL, '[1]');
SELECT * FROM genroc.start_many('job', NULL);
SELECT * FROM genroc.start_many('job', '{"n":1}');
SELECT * FROM genroc.start_many('job', '[1]', '{"idempotency_key":"k"}');
SELECT * FROM genroc.start_many('job', '[1]', '{"name":"k"}');
SELECT * FROM genroc.start_many('job', '[1]', '{"priority":"high"}');
SELECT * FROM genroc.start_many('job', '[1]', '[]');
SELECT * FROM genroc.start_many('nope', '[1]');
SELECT * FROM genroc.start_many('job', '[1]', '{"version":7}');
SELECT * FROM genroc.start_many('job', (SELECT jsonb_agg(g) FROM generate_series(1, 10001) g));
SELECT * FROM genroc.start_many('job', jsonb_build_array(1, 2, (repeat('[', 600) || repeat(']', 600))::jsonb));
SELECT count(*) - :before AS started_by_errors FROM genroc._instances;

DROP EXTENSION genroc;
