-- Inline states (Pass, Succeed, Fail) and the path rules of ASL: InputPath,
-- Parameters (with .$ keys from the input and from the context object $$),
-- ResultSelector, ResultPath (replace, null, creating missing objects),
-- OutputPath.  All run inside start's transaction.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

-- Runs a one-state-or-more definition to its end and shows the result.
CREATE FUNCTION run(p_def jsonb, p_input jsonb, OUT status text, OUT output jsonb, OUT error text, OUT cause text)
LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
	v_inst jsonb;
BEGIN
	PERFORM genroc.define('t', p_def);
	SELECT s.instance_id INTO v_id FROM genroc.start('t', p_input) s;
	v_inst := genroc.get_instance(v_id);
	status := v_inst ->> 'status';
	output := v_inst -> 'output';
	error := v_inst ->> 'error';
	cause := v_inst ->> 'cause';
END;
$$;

-- Pass: no Result → the input goes through
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}', '{"a":1}');
-- Result replaces the input (ResultPath defaults to $)
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"x":1},"End":true}}}', '{"a":1}');
-- ResultPath puts the result into the input, creating missing objects
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Result":7,"ResultPath":"$.b.c","End":true}}}', '{"a":1}');
-- ResultPath null: the result is thrown away, the input goes on
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Result":7,"ResultPath":null,"End":true}}}', '{"a":1}');
-- InputPath selects; OutputPath selects after ResultPath
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.inner","ResultPath":"$.copy","OutputPath":"$.copy","End":true}}}', '{"inner":{"k":"v"},"other":1}');
-- InputPath null: the state sees {}
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":null,"End":true}}}', '{"a":1}');
-- OutputPath null: the output is {}
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","OutputPath":null,"End":true}}}', '{"a":1}');
-- Parameters: literal values, .$ keys from the input, nested objects, arrays
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"lit":"x","n.$":"$.a","deep":{"first.$":"$.list[0]"},"all.$":"$.list"},"End":true}}}',
                  '{"a":5,"list":[10,20]}');
-- Parameters from the context object: execution id, input, name, state name
SELECT output -> 'input' AS input, output -> 'state' AS state, output -> 'machine' AS machine
FROM run('{"StartAt":"Ctx","States":{"Ctx":{"Type":"Pass","Parameters":{"exec_is_id.$":"$$.Execution.Id","input.$":"$$.Execution.Input","state.$":"$$.State.Name","machine.$":"$$.StateMachine.Name"},"End":true}}}',
         '{"q":1}');
-- (Execution.Id is the instance id as a string)
SELECT genroc.get_instance(max(id)) -> 'output' ->> 'exec_is_id' = max(id)::text AS exec_is_id FROM genroc.instances;
-- Execution.Name is the start option "name"
SELECT * FROM genroc.define('ctxname', '{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$$.Execution.Name"},"End":true}}}');
SELECT instance_id AS named FROM genroc.start('ctxname', '{}', '{"name":"run-two"}') \gset
SELECT genroc.get_instance(:named) -> 'output' AS output;
-- intrinsic functions in Parameters
SELECT * FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"msg.$":"States.Format(''{} has {} items'', $.who, $.n)","arr.$":"States.Array($.n, 2)"},"End":true}}}',
                  '{"who":"cart","n":3}');
-- a chain of Pass states, then Succeed (its OutputPath applies)
SELECT * FROM run('{"StartAt":"A","States":{"A":{"Type":"Pass","Result":1,"ResultPath":"$.a","Next":"B"},"B":{"Type":"Pass","Result":2,"ResultPath":"$.b","Next":"S"},"S":{"Type":"Succeed","OutputPath":"$.b"}}}',
                  '{}');
-- Fail with Error and Cause
SELECT * FROM run('{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Nope","Cause":"because"}}}', '{}');
-- Fail with ErrorPath and CausePath
SELECT * FROM run('{"StartAt":"F","States":{"F":{"Type":"Fail","ErrorPath":"$.e","CausePath":"$.c"}}}', '{"e":"Custom.Error","c":"from the input"}');
-- a path that selects nothing is a runtime error (States.Runtime) and fails the instance
SELECT status, error FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.missing","End":true}}}', '{"a":1}');
-- a ResultPath that cannot apply (the input is not an object)
SELECT status, error FROM run('{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"ResultPath":"$.x","End":true}}}', '[1,2]');
-- the log of the Pass chain: every state entered, then the end
SELECT event, state, detail FROM genroc.history((SELECT max(id) FROM genroc.instances) - 4) ORDER BY seq;

DROP FUNCTION run;
DROP EXTENSION genroc;
