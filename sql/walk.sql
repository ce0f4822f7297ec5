-- Every kind of step in one walk, by hand from SQL alone:
-- Pass → Choice → Task(handler) with Retry → Wait → Task(activity) → Succeed,
-- driven with start / claim / fail / complete / tick / claim_activity /
-- activity_succeed, ending with the output ASL prescribes.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT * FROM genroc.define('order', '{
  "Comment": "charge an order, cool down, ship it",
  "StartAt": "Prepare",
  "States": {
    "Prepare": {"Type": "Pass", "Parameters": {"order.$": "$.order", "total.$": "$.amount"},
                "ResultPath": "$.prep", "Next": "Route"},
    "Route": {"Type": "Choice",
              "Choices": [{"Variable": "$.prep.total", "NumericGreaterThan": 100, "Next": "Charge"}],
              "Default": "TooSmall"},
    "TooSmall": {"Type": "Fail", "Error": "Order.TooSmall", "Cause": "orders start at 100"},
    "Charge": {"Type": "Task", "Resource": "handler:charge", "InputPath": "$.prep",
               "ResultPath": "$.charge",
               "Retry": [{"ErrorEquals": ["Bank.Busy"], "IntervalSeconds": 2, "MaxAttempts": 3,
                          "BackoffRate": 2, "JitterStrategy": "NONE"}],
               "Next": "CoolDown"},
    "CoolDown": {"Type": "Wait", "Seconds": 10, "Next": "Ship"},
    "Ship": {"Type": "Task", "Resource": "activity:ship",
             "Parameters": {"order.$": "$.prep.order", "receipt.$": "$.charge.receipt"},
             "ResultSelector": {"tracking.$": "$.tracking"},
             "ResultPath": "$.shipment", "Next": "Done"},
    "Done": {"Type": "Succeed"}
  }}');
SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker' AS worker;

-- Pass and Choice run inside start; the instance stops at Charge
SELECT instance_id AS id, is_new, status FROM genroc.start('order', '{"order":"A-1","amount":150}') \gset
SELECT :id AS id, :'is_new' AS is_new, :'status' AS status;
SELECT state, resource FROM genroc.instances WHERE id = :id;
-- a small order takes the Default branch and fails at once
SELECT instance_id AS small, status FROM genroc.start('order', '{"order":"A-2","amount":5}') \gset
SELECT :'status' AS status, genroc.get_instance(:small) ->> 'error' AS error, genroc.get_instance(:small) ->> 'cause' AS cause;

-- first run: the bank is busy
SELECT epoch > 0 AS epoch, state, resource, input, attempt FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:id, (SELECT lease_epoch FROM genroc.instances WHERE id = :id), 'Bank.Busy', 'try again');
-- Retry: ready again after 2 s, not before
SELECT count(*) AS early FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:00:02Z';
SELECT epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}');
SELECT genroc.fail(:id, (SELECT lease_epoch FROM genroc.instances WHERE id = :id), 'Bank.Busy');
-- back-off doubles: 4 s
SET genroc.test_clock = '2030-01-01 00:00:05Z';
SELECT count(*) AS early FROM genroc.claim('w1', '{default}');
SET genroc.test_clock = '2030-01-01 00:00:06Z';
SELECT epoch > 0 AS epoch, attempt FROM genroc.claim('w1', '{default}');
-- third run succeeds; the instance goes on to the Wait
SELECT genroc.complete(:id, (SELECT lease_epoch FROM genroc.instances WHERE id = :id), '{"receipt":"R-9"}');
SELECT state, wait_kind, wait_until = '2030-01-01 00:00:16Z' AS until_16s FROM genroc.instances WHERE id = :id;

-- the Wait ends at 00:00:16; tick then parks the instance at the activity
SET genroc.test_clock = '2030-01-01 00:00:15Z';
SELECT genroc.tick();
SET genroc.test_clock = '2030-01-01 00:00:16Z';
SELECT genroc.tick();
SELECT status, state, wait_kind, activity FROM genroc.instances WHERE id = :id;

-- an outside program ships the order
SELECT token, instance_id = :id AS same_instance, input FROM genroc.claim_activity('ship', 'warehouse') \gset
SELECT :'same_instance' AS same_instance, :'input' AS input;
SELECT genroc.activity_succeed(:'token', '{"tracking":"T-77","carrier":"post"}');

-- the output ASL prescribes: the input, plus prep (Pass), charge (task
-- result at $.charge), shipment (ResultSelector then ResultPath)
SELECT status, output, error FROM genroc.instances i, LATERAL (SELECT genroc.get_instance(i.id) -> 'output' AS output) o WHERE id = :id;
SELECT genroc.get_instance(:id) -> 'output' = '{"order":"A-1","amount":150,"prep":{"order":"A-1","total":150},"charge":{"receipt":"R-9"},"shipment":{"tracking":"T-77"}}'::jsonb AS output_as_prescribed;
SELECT event, state, detail - 'epoch' AS detail FROM genroc.history(:id) ORDER BY seq;

DROP EXTENSION genroc;
