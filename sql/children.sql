-- children: Parallel and Map run as child instances (65_children.sql); the
-- instances view and get_instance show the tree (parent_id, root_id,
-- child_index, scope); cancel reaches the children.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SELECT genroc.worker_register('w1', '{"host":"box-1"}') ->> 'worker';
SELECT * FROM genroc.define('pm', '{"StartAt":"M","States":{
  "M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":2,"ResultPath":"$.out","End":true,
       "ItemSelector":{"n.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
       "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
         {"StartAt":"X","States":{"X":{"Type":"Task","Resource":"handler:x","End":true}}},
         {"StartAt":"Y","States":{"Y":{"Type":"Pass","InputPath":"$.i","End":true}}}]}}}}}}');

SELECT instance_id AS root, status FROM genroc.start('pm', '{"xs":["a","b","c"]}') \gset
SELECT :'status' AS status;
-- two items live (MaxConcurrency 2), the third pending; each item a Parallel
SELECT id - :root AS rel, status, wait_kind, parent_id - :root AS parent, root_id = :root AS in_tree,
	   child_index, scope
FROM genroc.instances ORDER BY id;
SELECT genroc.get_instance(:root + 1) - ARRAY['created_at', 'updated_at', 'eligible_at', 'ended_at',
	'lease_expires', 'lease_epoch', 'lease_owner', 'id', 'parent_id', 'root_id'] AS first_item;

-- run every task to the end
DO $$
DECLARE
	v_task record;
	v_n int := 0;
BEGIN
	LOOP
		SELECT * INTO v_task FROM genroc.claim('w1', '{default}', 1);
		EXIT WHEN NOT FOUND;
		PERFORM genroc.complete(v_task.instance_id, v_task.epoch, to_jsonb(upper(v_task.input ->> 'n')));
		v_n := v_n + 1;
	END LOOP;
	RAISE NOTICE 'ran % tasks', v_n;
END;
$$;
SELECT status, genroc.get_instance(:root) -> 'output' AS output FROM genroc.instances WHERE id = :root;
SELECT event, state, detail FROM genroc.history(:root) ORDER BY seq;
SELECT event, state FROM genroc.history(:root + 1) ORDER BY seq;

-- cancel reaches every live descendant
SELECT instance_id AS root2 FROM genroc.start('pm', '{"xs":[1,2,3]}') \gset
SELECT count(*) AS live_before FROM genroc.instances
WHERE root_id = :root2 AND status NOT IN ('succeeded', 'failed', 'cancelled');
SELECT genroc.cancel(:root2);
SELECT status, count(*) FROM genroc.instances WHERE id = :root2 OR root_id = :root2
GROUP BY status ORDER BY status;
SELECT count(*) AS claimable FROM genroc.claim('w1', '{default}');
SELECT genroc.cancel(:root2);
\echo :LAST_ERROR_SQLSTATE

-- a Map over something that is not an array fails with States.Runtime
SELECT status FROM genroc.start('pm', '{"xs":{"not":"an array"}}');
SELECT error FROM genroc.instances ORDER BY id DESC LIMIT 1;

-- refused definitions name the path
SELECT * FROM genroc.define('bad', '{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}}}}');
SELECT * FROM genroc.define('bad', '{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.x","End":true}}}');
SELECT * FROM genroc.define('bad', '{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","Next":"Nope"}}}]}}}');

-- variables (Assign): read by a later state and by the Map's items, which
-- start with a copy of their parent's; an item's own Assign stays its own
SELECT version FROM genroc.define('vars', '{"StartAt":"S","States":{"S":{"Type":"Pass","Assign":{"k.$":"$.k"},"Next":"M"},"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Assign":{"mine.$":"$"},"Parameters":{"v.$":"$","k.$":"$k"},"End":true}}},"ResultPath":"$.out","Next":"E"},"E":{"Type":"Pass","Parameters":{"out.$":"$.out","k.$":"$k"},"End":true}}}');
SELECT instance_id AS vroot FROM genroc.start('vars', '{"k":"K","xs":[1,2]}') \gset
SELECT status, genroc.get_instance(id) -> 'output' AS output FROM genroc.instances WHERE id = :vroot;
SELECT child_index, variables FROM genroc._instances WHERE parent_id = :vroot ORDER BY child_index;

DROP EXTENSION genroc;
