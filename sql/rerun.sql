-- rerun: genroc.retry and genroc.resume. A failed top-level instance runs again from the state it
-- failed in, or goes on after its failed Task with an output given by hand
-- (40_instances.sql, genroc._run_again).
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker';
SELECT * FROM genroc.define('order', '{"StartAt":"Prep","States":{
  "Prep":{"Type":"Pass","Result":"prepared","ResultPath":"$.prep","Next":"Charge"},
  "Charge":{"Type":"Task","Resource":"handler:charge","ResultPath":"$.charge","Next":"Ship"},
  "Ship":{"Type":"Task","Resource":"handler:ship","End":true}}}');

-- fails at Charge; the instance keeps that state
SELECT instance_id AS a FROM genroc.start('order', '{"k":1}') \gset
SELECT genroc.fail(instance_id, epoch, 'Card.Declined', 'no funds') FROM genroc.claim('w1', '{default}');
SELECT status, state, error FROM genroc.instances WHERE id = :a;

-- retry: Charge again, with the input it had
SELECT genroc.retry(:a);
SELECT status, state, error, ended_at FROM genroc.instances WHERE id = :a;
SELECT state, input FROM genroc.claim('w1', '{default}') \gset
SELECT :'state' AS state, :'input' AS input;
SELECT genroc.fail(:a, (SELECT lease_epoch FROM genroc.instances WHERE id = :a), 'Card.Declined', 'still no funds');

-- resume: past Charge, with its result given by hand
SELECT genroc.resume(:a, '{"paid_by":"phone"}');
SELECT state, input FROM genroc.claim('w1', '{default}');
SELECT event, state, detail FROM genroc.history(:a) WHERE event IN ('failed', 'retried', 'resumed') ORDER BY seq;

-- refused: a live instance, a child, an unknown id, resume after a non-Task
SELECT genroc.retry(:a);
SELECT genroc.resume(:a);
SELECT genroc.retry(424242);
SELECT * FROM genroc.define('stop', '{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"No"}}}');
SELECT instance_id AS f FROM genroc.start('stop') \gset
SELECT genroc.resume(:f, '1');
SELECT genroc.retry(:f);
SELECT * FROM genroc.define('par', '{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
  {"StartAt":"X","States":{"X":{"Type":"Fail","Error":"Branch.Broke"}}}]}}}');
SELECT instance_id AS p FROM genroc.start('par') \gset
SELECT status, error FROM genroc.instances WHERE id = :p;
SELECT genroc.retry(id) FROM genroc.instances WHERE parent_id = :p;

DROP EXTENSION genroc;
