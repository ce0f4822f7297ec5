-- objects: large values stored once and referenced (15_objects.sql): the
-- threshold, one row per distinct value, look-alikes, reading with and
-- without references, get_object, collection after genroc.object_grace
-- (fake clock), the value_bytes limit.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

SHOW genroc.object_threshold;
SHOW genroc.object_grace;
SET genroc.object_threshold = 10;		-- below the minimum
SET genroc.object_threshold = '1kB';

SELECT genroc.define('three', '{"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"handler:a","Next":"B"},
  "B":{"Type":"Task","Resource":"handler:b","Next":"C"},
  "C":{"Type":"Task","Resource":"handler:c","End":true}}}') IS NOT NULL AS defined;
SELECT genroc.worker_register('w', '{}') ->> 'worker' AS worker;

-- a small value stays in the row
SELECT instance_id AS small FROM genroc.start('three', '{"n": 1}') \gset
SELECT input FROM genroc._instances WHERE id = :small;
SELECT count(*) AS objects FROM genroc._objects;

-- a large one: one object, referenced from input, state_input, task_input
-- and the log's started and task_scheduled rows
SELECT instance_id AS big FROM genroc.start('three', jsonb_build_object('blob', repeat('x', 5000))) \gset
SELECT count(*) AS objects, sum(bytes) AS bytes FROM genroc._objects;
SELECT genroc._is_ref(input) AS input_ref, genroc._is_ref(state_input) AS state_ref,
       genroc._is_ref(task_input) AS task_ref, input = task_input AS same
FROM genroc._instances WHERE id = :big;
SELECT count(*) AS log_refs FROM genroc._log
WHERE instance_id = :big AND genroc._is_ref(detail -> 'input');

-- genroc._log_payloads: the engine's rule (engine/log_payloads.cpp), the
-- common case answered in C: no payload key, a small payload and an array
-- are kept as they are; a payload that is a reference already and one over
-- the threshold become stored values; with log_payloads off a small payload
-- goes (rolled back: the objects stored here are not counted below)
BEGIN;
SELECT input AS big_ref FROM genroc._instances WHERE id = :big \gset
CREATE TEMP TABLE details AS
SELECT * FROM (VALUES (1, '{"error": "E"}'::jsonb), (2, '{"input": {"n": 1}, "state": "A"}'),
	(3, '["input", 2]'), (4, jsonb_build_object('output', :'big_ref'::jsonb)),
	(5, jsonb_build_object('payload', (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g))))
	AS d(k, v);
SELECT d.k, l = d.v AS kept, genroc._is_ref(coalesce(l -> 'output', l -> 'payload')) AS stored,
	   l -> 'output' = d.v -> 'output' AS same_ref
FROM details d, genroc._log_payloads(d.v) l ORDER BY d.k;
-- the threshold measures the log's text (jsonb's, with its spaces): 400
-- ones are 1,200 bytes there, 300 are 900
SELECT n, genroc._is_ref(genroc._log_payloads(jsonb_build_object('input', a)) -> 'input') AS stored
FROM (SELECT n, (SELECT jsonb_agg(1) FROM generate_series(1, n)) AS a FROM (VALUES (300), (400)) v(n)) t
ORDER BY n;
SET genroc.log_payloads = off;
SELECT d.k, genroc._log_payloads(d.v) AS detail
FROM details d WHERE d.k IN (1, 2) ORDER BY d.k;
RESET genroc.log_payloads;
SELECT genroc._log_payloads(NULL) IS NULL AS null_stays_null;
ROLLBACK;

-- claim hands out the value; passed on unchanged it is not written again
CREATE TEMP TABLE c AS SELECT * FROM genroc.claim('w', '{default}', 2);
SELECT instance_id = :big AS is_big, length(input ->> 'blob') AS blob FROM c ORDER BY instance_id;
SELECT genroc.complete(instance_id, epoch, input) FROM c ORDER BY instance_id;
SELECT count(*) AS objects FROM genroc._objects;
DROP TABLE c;
-- the next step returns a different large value, then one that looks like a reference
CREATE TEMP TABLE c AS SELECT * FROM genroc.claim('w', '{default}', 2);
SELECT genroc.complete(instance_id, epoch,
  CASE WHEN instance_id = :big THEN jsonb_build_object('other', repeat('y', 5000)) ELSE '{"n": 2}' END)
FROM c ORDER BY instance_id;
DROP TABLE c;
CREATE TEMP TABLE c AS SELECT * FROM genroc.claim('w', '{default}', 2);
SELECT genroc.complete(instance_id, epoch, '{"genroc:object": "not a reference"}') FROM c ORDER BY instance_id;
DROP TABLE c;
SELECT count(*) AS objects FROM genroc._objects;

-- reading: values as they were; with {"values": "ref"}, references
SELECT g ->> 'status' AS status, length(g -> 'input' ->> 'blob') AS input_blob, g -> 'output' AS output
FROM genroc.get_instance(:big) AS g;
SELECT genroc._is_ref(genroc.get_instance(:big, '{"values": "ref"}') -> 'input') AS input_is_ref;
SELECT event, length((detail - 'epoch')::text) AS detail_bytes FROM genroc.history(:big) ORDER BY seq;
SELECT event, genroc._is_ref(coalesce(detail -> 'input', detail -> 'output')) AS is_ref
FROM genroc.history(:big, '{"values": "ref"}') WHERE detail ?| ARRAY['input', 'output'] ORDER BY seq;
SELECT count(*) AS listed FROM genroc.list_instances('{"values": "ref"}') AS l
WHERE genroc._is_ref(l -> 'input');
SELECT genroc.get_instance(:big, '{"values": "both"}');
SELECT genroc.get_instance(:big, '{"value": "ref"}');
SELECT genroc.list_instances('{"values": 1}');

-- get_object: the value by its reference; RC011 for an unknown one
SELECT length(genroc.get_object(input ->> 'genroc:object')::text) AS bytes
FROM genroc._instances WHERE id = :big;
SELECT genroc.get_object(repeat('0', 64));
SELECT genroc.get_object('nope');

-- collection: everything in use stays
SELECT genroc.tick() -> 'collected_objects' AS collected;
SET genroc.test_clock = '2030-01-01 02:00:00Z';
SELECT genroc.tick() -> 'collected_objects' AS collected;
SELECT count(*) AS objects, count(unused_since) AS unused FROM genroc._objects;

-- without the log, a replaced value becomes unused: readable for the grace
SET genroc.log_payloads = off;
SELECT instance_id AS rep FROM genroc.start('three', jsonb_build_object('first', repeat('a', 5000))) \gset
CREATE TEMP TABLE c AS SELECT * FROM genroc.claim('w', '{default}', 1);
SELECT genroc.complete(instance_id, epoch, jsonb_build_object('second', repeat('b', 5000))) FROM c;
DROP TABLE c;
CREATE TEMP TABLE c AS SELECT * FROM genroc.claim('w', '{default}', 1);
SELECT genroc.complete(instance_id, epoch, '{"small": true}') FROM c;
DROP TABLE c;
SELECT encode(sha256(convert_to(jsonb_build_object('second', repeat('b', 5000))::text, 'UTF8')), 'hex') AS second \gset
SELECT genroc.tick() -> 'collected_objects' AS collected;
SELECT unused_since FROM genroc._objects WHERE hash = :'second';
SET genroc.test_clock = '2030-01-01 02:59:00Z';
SELECT genroc.tick() -> 'collected_objects' AS collected;
SELECT length(genroc.get_object(:'second')::text) AS still_readable;
SET genroc.test_clock = '2030-01-01 03:00:01Z';
SELECT genroc.tick() -> 'collected_objects' AS collected;
SELECT genroc.get_object(:'second');
-- the instance's input is still there
SELECT length(genroc.get_instance(:rep) -> 'input' ->> 'first') AS first;

-- pruning an instance: its objects go a grace after
SET genroc.object_grace = '10min';
SELECT genroc.prune('0', '1 minute') - 'objects' AS pruned;
SELECT genroc.prune('0', '1 minute') -> 'objects' AS collected;
SELECT count(*) AS objects FROM genroc._objects;
SET genroc.test_clock = '2030-01-01 03:10:02Z';
SELECT genroc.prune('0', '1 minute') -> 'objects' AS collected;
SELECT count(*) AS objects FROM genroc._objects;

-- a value is written again after collection (same reference)
SELECT instance_id AS again FROM genroc.start('three', jsonb_build_object('first', repeat('a', 5000))) \gset
SELECT length(genroc.get_instance(:again) -> 'input' ->> 'first') AS first;

-- the limit value_bytes: 54000 naming the value
SELECT genroc.start('three', jsonb_build_object('huge', repeat('z', 67108864)));

DROP EXTENSION genroc;
