-- Durability: the commit class of each engine function and the level
-- decide synchronous_commit for its transaction (read here just before the
-- commit; test/durability/ checks what reaches the disk).  Each operation
-- is its own transaction, as the binary runs them.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT genroc.durability() AS default_level;
SELECT set_config('genroc.durability', 'sometimes', false);
SELECT genroc.durability() AS unchanged;
SELECT genroc._flush_commit('whenever');

SELECT name FROM genroc.define('two', '{"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
	"B":{"Type":"Task","Resource":"handler:h","End":true}}}');
SELECT name FROM genroc.define('once', '{"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"handler:h","OnlyOnce":true,"End":true}}}');
SELECT genroc.worker_register('w') ->> 'worker';


-- none
SET genroc.durability = 'none';
SELECT genroc.durability();
BEGIN;
SELECT instance_id AS id FROM genroc.start('two') \gset
SELECT 'none' AS level, 'start' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'none' AS level, 'claim' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'none' AS level, 'complete, goes on' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'none' AS level, 'complete, ends' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('once') \gset
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'none' AS level, 'claim OnlyOnce' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
BEGIN;
SELECT genroc.worker_heartbeat('w');
SELECT 'none' AS level, 'heartbeat' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('two') \gset
BEGIN;
SELECT genroc.cancel(:id);
SELECT 'none' AS level, 'cancel' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;

-- essential
SET genroc.durability = 'essential';
SELECT genroc.durability();
BEGIN;
SELECT instance_id AS id FROM genroc.start('two') \gset
SELECT 'essential' AS level, 'start' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'essential' AS level, 'claim' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'essential' AS level, 'complete, goes on' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'essential' AS level, 'complete, ends' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('once') \gset
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'essential' AS level, 'claim OnlyOnce' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
BEGIN;
SELECT genroc.worker_heartbeat('w');
SELECT 'essential' AS level, 'heartbeat' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('two') \gset
BEGIN;
SELECT genroc.cancel(:id);
SELECT 'essential' AS level, 'cancel' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;

-- terminal
SET genroc.durability = 'terminal';
SELECT genroc.durability();
BEGIN;
SELECT instance_id AS id FROM genroc.start('two') \gset
SELECT 'terminal' AS level, 'start' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'terminal' AS level, 'claim' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'terminal' AS level, 'complete, goes on' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'terminal' AS level, 'complete, ends' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('once') \gset
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'terminal' AS level, 'claim OnlyOnce' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
BEGIN;
SELECT genroc.worker_heartbeat('w');
SELECT 'terminal' AS level, 'heartbeat' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('two') \gset
BEGIN;
SELECT genroc.cancel(:id);
SELECT 'terminal' AS level, 'cancel' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;

-- strict
SET genroc.durability = 'strict';
SELECT genroc.durability();
BEGIN;
SELECT instance_id AS id FROM genroc.start('two') \gset
SELECT 'strict' AS level, 'start' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'strict' AS level, 'claim' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'strict' AS level, 'complete, goes on' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
BEGIN;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
SELECT 'strict' AS level, 'complete, ends' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('once') \gset
BEGIN;
SELECT instance_id AS id, epoch FROM genroc.claim('w', '{default}') \gset
SELECT 'strict' AS level, 'claim OnlyOnce' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT genroc.complete(:id, :epoch, '{}') AS status;
BEGIN;
SELECT genroc.worker_heartbeat('w');
SELECT 'strict' AS level, 'heartbeat' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;
SELECT instance_id AS id FROM genroc.start('two') \gset
BEGIN;
SELECT genroc.cancel(:id);
SELECT 'strict' AS level, 'cancel' AS op, current_setting('synchronous_commit') AS sync;
COMMIT;

-- one transaction: a flush asked for by an earlier statement stays
SET genroc.durability = 'essential';
BEGIN;
SELECT instance_id AS id FROM genroc.start('two') \gset
SELECT genroc.worker_heartbeat('w');
SELECT current_setting('synchronous_commit') AS after_start_then_heartbeat;
COMMIT;
BEGIN;
SELECT genroc.worker_heartbeat('w');
SELECT current_setting('synchronous_commit') AS heartbeat_alone;
SELECT genroc.cancel(:id);
SELECT current_setting('synchronous_commit') AS then_cancel;
COMMIT;

DROP EXTENSION genroc;
