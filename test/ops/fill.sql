-- fill.sql — a genroc database with something of everything, for the backup
-- and upgrade tests (test/ops/): definitions, instances in every status
-- (queued, ready, running, waiting on a timer, an activity, an event and
-- children, succeeded, failed, cancelled), a kept event, a worker holding a
-- lease, queues (the default one changed), a token, the log.  Uses only the
-- API of the oldest version the upgrade test installs (0.1).  On the test
-- clock: 2030-01-01 00:00Z.
\set ON_ERROR_STOP 1
SET genroc.test_clock = '2030-01-01 00:00:00Z';

SELECT genroc.queue_set('default', '{"global_concurrency": 50, "partition_concurrency": 1}');
SELECT genroc.queue_set('gpu', '{"kind": "routed", "match": {"definitions": ["ml-*"]}, "global_concurrency": 2}');

SELECT * FROM genroc.define('work', '{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT * FROM genroc.define('timer', '{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":3600,"Next":"W"},"W":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT * FROM genroc.define('act', '{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:approve","End":true}}}');
SELECT * FROM genroc.define('evt', '{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"genroc:noop","Next":"E"},"E":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"End":true}}}');
SELECT * FROM genroc.define('fan', '{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true}}},{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"genroc:noop","End":true}}}]}}}');
SELECT * FROM genroc.define('done', '{"StartAt":"D","States":{"D":{"Type":"Pass","Result":"ok","End":true}}}');
SELECT * FROM genroc.define('boom', '{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"on purpose"}}}');

SELECT genroc.worker_register('w-old', '{"host": "old-host", "lease_duration": "10s", "stale_after": "30s"}');

-- running: leased to w-old (the lowest priority value is claimed first)
SELECT * FROM genroc.start('work', '{"n": 1}', '{"priority": -10, "name": "leased"}');
SELECT instance_id, epoch FROM genroc.claim('w-old', ARRAY['default'], 1);
-- ready, and a second of the same partition: queued
SELECT * FROM genroc.start('work', '{"n": 2}', '{"partition_key": "p1", "labels": {"tenant": "acme"}}');
SELECT * FROM genroc.start('work', '{"n": 3}', '{"partition_key": "p1", "idempotency_key": "k-3"}');
-- waiting: a timer, an activity, children (two ready branches)
SELECT * FROM genroc.start('timer', '{"n": 4}');
SELECT * FROM genroc.start('act', '{"n": 5}');
SELECT * FROM genroc.start('fan', '{"n": 6}');
-- ready, with an event kept for its wait after the first task
SELECT instance_id AS evt FROM genroc.start('evt', '{"n": 7}') \gset
SELECT genroc.emit(:evt, 'go', '{"approved": true}');
-- ended: succeeded, failed, cancelled
SELECT * FROM genroc.start('done', '{"n": 8}');
SELECT * FROM genroc.start('boom', '{"n": 9}');
SELECT instance_id AS doomed FROM genroc.start('work', '{"n": 10}') \gset
SELECT genroc.cancel(:doomed);

SELECT genroc.token_create('ann', ARRAY['admin'], 'cli', 'grt_ops0test_AbCdEfGhIjKlMnOpQrStUvWxYz012345');
