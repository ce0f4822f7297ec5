-- calls: genroc:call and genroc:call.sync start a child instance of another
-- definition (65_children.sql); the tree shows in genroc.instances; a failed
-- child is the task's error; a missing definition and endless recursion
-- fail the task; a sync call's TimeoutSeconds cancels its child.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker';
SELECT * FROM genroc.define('billing', '{"StartAt":"Charge","States":{
  "Charge":{"Type":"Task","Resource":"handler:charge","ResultPath":"$.charged","Next":"Ctx"},
  "Ctx":{"Type":"Pass","Parameters":{"charged.$":"$.charged","exec.$":"$$.Execution.Id",
         "name.$":"$$.Execution.Name","machine.$":"$$.StateMachine.Id"},"End":true}}}');
SELECT * FROM genroc.define('order', '{"StartAt":"Audit","States":{
  "Audit":{"Type":"Task","Resource":"genroc:call","Parameters":{"Definition":"billing","Input":{"audit":true}},
           "ResultPath":"$.audit","Next":"Bill"},
  "Bill":{"Type":"Task","Resource":"genroc:call.sync",
          "Parameters":{"Definition":"billing","Version":1,"Input":{"amount.$":"$.amount"},"Name":"bill"},
          "Retry":[{"ErrorEquals":["Card.Declined"],"MaxAttempts":1,"IntervalSeconds":10}],
          "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Refund"}],
          "ResultPath":"$.bill","End":true},
  "Refund":{"Type":"Pass","End":true}}}');

-- the async call returned at once; the sync call waits for its child
SELECT instance_id AS root, status FROM genroc.start('order', '{"amount":12}') \gset
SELECT :'status' AS status;
SELECT id - :root AS rel, definition, status, wait_kind, parent_id - :root AS parent,
	   root_id - :root AS root, name, queue
FROM genroc.instances ORDER BY id;
SELECT event, state, detail - 'child' AS detail FROM genroc.history(:root) ORDER BY seq;

-- both children get the charge task; the sync one succeeds, its output
-- (with its own $$.Execution) comes back as the task's result
DO $$
DECLARE
	v_task record;
BEGIN
	FOR v_task IN SELECT * FROM genroc.claim('w1', '{default}', 10) LOOP
		PERFORM genroc.complete(v_task.instance_id, v_task.epoch, '"ok"');
	END LOOP;
END;
$$;
SELECT status, (genroc.get_instance(:root) -> 'output') #- '{bill,exec}' #- '{audit,InstanceId}' AS output,
	   (genroc.get_instance(:root) #>> '{output,bill,exec}')::bigint - :root AS bill_exec_rel,
	   (genroc.get_instance(:root) #>> '{output,audit,InstanceId}')::bigint - :root AS audit_rel
FROM genroc.instances WHERE id = :root;

-- a failed child is the task's error: Retry (a new child 10 s later), then Catch
SELECT instance_id AS r2 FROM genroc.start('order', '{"amount":5}') \gset
SELECT genroc.fail(c.instance_id, c.epoch, 'Card.Declined', 'no funds')
FROM genroc.claim('w1', '{default}', 10) c JOIN genroc.instances i ON i.id = c.instance_id
WHERE i.name = 'bill';
SELECT status, wait_kind, wait_until FROM genroc.instances WHERE id = :r2;
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT genroc.tick() ->> 'timers' AS timers;
SELECT genroc.fail(c.instance_id, c.epoch, 'Card.Declined', 'still none')
FROM genroc.claim('w1', '{default}', 10) c JOIN genroc.instances i ON i.id = c.instance_id
WHERE i.name = 'bill';
SELECT status, genroc.get_instance(:r2) -> 'output' -> 'err' AS err FROM genroc.instances WHERE id = :r2;
SELECT count(*) AS bill_children FROM genroc.instances WHERE parent_id = :r2 AND name = 'bill';

-- a sync call's TimeoutSeconds: the task fails with States.Timeout and the
-- child is cancelled
SELECT * FROM genroc.define('slow', '{"StartAt":"Bill","States":{
  "Bill":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"billing"},
          "TimeoutSeconds":30,"End":true}}}');
SELECT instance_id AS r3 FROM genroc.start('slow', '{}') \gset
SET genroc.test_clock = '2030-01-01 00:00:40Z';
SELECT genroc.tick() ->> 'timeouts' AS timeouts;
SELECT id - :r3 AS rel, status, error, genroc.get_instance(id) ->> 'cause' AS cause
FROM genroc.instances WHERE id = :r3 OR parent_id = :r3 ORDER BY id;

-- a missing definition, a bad call input, endless recursion
SELECT * FROM genroc.define('missing', '{"StartAt":"C","States":{
  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"nope","Version":2},"End":true}}}');
SELECT status FROM genroc.start('missing', '{}');
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause
FROM genroc.instances WHERE definition = 'missing';
SELECT * FROM genroc.define('badinput', '{"StartAt":"C","States":{
  "C":{"Type":"Task","Resource":"genroc:call","Parameters":{"Definition":"billing","Queue":"fast"},"End":true}}}');
SELECT status FROM genroc.start('badinput', '{}');
SELECT status, error, genroc.get_instance(id) ->> 'cause' AS cause
FROM genroc.instances WHERE definition = 'badinput';
SELECT * FROM genroc.define('rec', '{"StartAt":"C","States":{
  "C":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"rec"},"End":true}}}');
SELECT status FROM genroc.start('rec', '{}');
SELECT status, error, count(*) FROM genroc.instances WHERE definition = 'rec' GROUP BY status, error;

-- a resource genroc does not know is refused at define
SELECT genroc.define('x', '{"StartAt":"C","States":{"C":{"Type":"Task","Resource":"genroc:call.later","End":true}}}');

DROP EXTENSION genroc;
