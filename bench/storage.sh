#!/usr/bin/env bash
# storage.sh — what a large payload costs on PostgreSQL: a 3-task process
# (Task A -> B -> C) whose worker returns its input unchanged, carrying a
# PAYLOAD-byte value (random hex text, which TOAST cannot compress; a new one
# per instance), N instances, the instance log on with its default payload
# limit (1 MB: a 1,000,000-byte payload is logged whole).  Run twice in one
# cluster, one database each:
#   inline   genroc.object_threshold at its maximum: every value in its row
#            and log entry, as before large values were stored once
#   objects  the default threshold (8kB): stored once, referenced
# and prints per instance: WAL bytes (pg_current_wal_lsn's advance over the
# runs) and table bytes (instances, log, objects, with TOAST and indexes),
# each also as a multiple of the payload, and the full-page images in that
# WAL (pg_stat_wal.wal_fpi: pages written whole after the checkpoint).
# With PRUNE_N > 0 it then fills PRUNE_N concluded 3-task instances with a small payload and reports
# genroc.prune's rows/s and the table sizes before and after.
#
#   GENROC_PG_ROOT=/some/dir bash bench/storage.sh
#   N=20 PAYLOAD=1000000 PRUNE_N=100000 bash bench/storage.sh
#   N=0 PRUNE_N=20000 GENROC_PG_ROOT=... bash bench/storage.sh   # prune only
#   (PRUNE_OBJECTS=1: with one stored object, so prune collects references)
#                               (also against an extension without objects)
#
# Needs the extension installed where PGBIN's PostgreSQL finds it
# (GENROC_PG_ROOT: a private copy, scripts/private-pg.sh, with
# `make install SKIP_CXX=1 DESTDIR=...`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-20}
PAYLOAD=${PAYLOAD:-1000000}
PRUNE_N=${PRUNE_N:-0}
BIN=$(pg_config --bindir)
PGBIN=${GENROC_PG_ROOT:+$GENROC_PG_ROOT$BIN}
PGBIN=${PGBIN:-$BIN}
export PGBIN
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-storage.XXXXXX")
chmod 755 "$WORK"
eval "$(bash "$ROOT/test/pgcluster.sh" start "$WORK/cluster")"
trap 'bash "$ROOT/test/pgcluster.sh" stop "$WORK/cluster"; rm -rf "$WORK"' EXIT
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

run() { # database threshold
  q -d postgres -c "CREATE DATABASE $1"
  q -d "$1" -c "CREATE EXTENSION genroc"
  q -d "$1" -At -F ' ' <<SQL
SET genroc.durability = 'none';
SET genroc.object_threshold = '$2';
SELECT genroc.define('three', '{"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"handler:a","Next":"B"},
  "B":{"Type":"Task","Resource":"handler:b","Next":"C"},
  "C":{"Type":"Task","Resource":"handler:c","End":true}}}') IS NOT NULL AS defined \\gset
SELECT genroc.worker_register('w', '{}') IS NOT NULL AS registered \\gset
CHECKPOINT;
SELECT pg_current_wal_lsn() AS lsn0, (SELECT wal_fpi FROM pg_stat_wal) AS fpi0 \\gset
DO \$\$
DECLARE
	v_id bigint;
	v_task record;
BEGIN
	FOR i IN 1..$N LOOP
		PERFORM genroc.start('three', jsonb_build_object('blob',
			(SELECT left(string_agg(md5(random()::text || i), ''), $PAYLOAD - 11)
			 FROM generate_series(1, ($PAYLOAD / 32) + 1))));
		COMMIT;
		FOR s IN 1..3 LOOP
			SELECT * INTO STRICT v_task FROM genroc.claim('w', '{default}', 1);
			COMMIT;
			PERFORM genroc.complete(v_task.instance_id, v_task.epoch, v_task.input);
			COMMIT;
		END LOOP;
	END LOOP;
END;
\$\$;
SELECT '$1', $N, $PAYLOAD,
	   pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn0')::bigint / $N,
	   (pg_total_relation_size('genroc._instances') + pg_total_relation_size('genroc._log')
		+ pg_total_relation_size('genroc._objects')) / $N,
	   pg_total_relation_size('genroc._instances') / $N,
	   pg_total_relation_size('genroc._log') / $N,
	   pg_total_relation_size('genroc._objects') / $N,
	   (SELECT count(*) FROM genroc._instances WHERE status = 'succeeded'),
	   (SELECT wal_fpi FROM pg_stat_wal) - :fpi0;
SQL
}

if [ "$N" -gt 0 ]; then
echo "storage: $N instances of a 3-task process carrying a $PAYLOAD-byte payload, log on (payload max 1MB)"
{
  run inline 2147483647
  run objects 8kB
} | awk -v P="$PAYLOAD" '
  BEGIN { printf "%-8s %14s %7s %14s %7s %12s %12s %12s %8s  %s\n", "store", "WAL/inst", "xP",
          "tables/inst", "xP", "instances", "log", "objects", "FPIs", "check" }
  { ok = ($9 == $2) ? "ok" : "NOT all succeeded";
    printf "%-8s %14d %7.2f %14d %7.2f %12d %12d %12d %8d  %s\n", $1, $4, $4 / P, $5, $5 / P, $6, $7, $8, $10, ok }'
fi

if [ "$PRUNE_N" -gt 0 ]; then
  q -d postgres -c "CREATE DATABASE prune"
  q -d prune -c "CREATE EXTENSION genroc"
  # concluded instances made in bulk: rows as the engine writes them
  # (3 tasks: 14 log rows each), without running the steps one by one
  q -d prune -At -F ' ' <<SQL
SET genroc.durability = 'none';
SELECT genroc.define('three', '{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}') IS NOT NULL AS defined \\gset
INSERT INTO genroc._instances (definition_id, status, state, input, output, eligible_at, created_at,
							   updated_at, ended_at)
SELECT 1, 'succeeded', 'C', jsonb_build_object('n', g), jsonb_build_object('n', g), now(), now(), now(),
	   now() - interval '2 days'
FROM generate_series(1, $PRUNE_N) g;
INSERT INTO genroc._log (instance_id, at, event, state, detail)
SELECT i.id, now() - interval '2 days', e.event, 'A', jsonb_build_object('input', i.input, 'n', e.n)
FROM genroc._instances i, (VALUES ('started', 1), ('entered', 2), ('task_scheduled', 3), ('task_started', 4),
	('task_succeeded', 5), ('entered', 6), ('task_scheduled', 7), ('task_started', 8), ('task_succeeded', 9),
	('entered', 10), ('task_scheduled', 11), ('task_started', 12), ('task_succeeded', 13),
	('succeeded', 14)) AS e(event, n);
-- PRUNE_OBJECTS=1: one live instance with a stored value, so prune looks
-- for the references of what it deletes
SELECT CASE WHEN ${PRUNE_OBJECTS:-0} = 1 THEN (SELECT instance_id FROM genroc.start('three',
	jsonb_build_object('blob', repeat('x', 100000)))) END AS live_with_object \\gset
VACUUM ANALYZE genroc._instances, genroc._log;
SELECT 'before', pg_total_relation_size('genroc._instances'), pg_total_relation_size('genroc._log');
SELECT clock_timestamp() AS t0 \\gset
DO \$\$
DECLARE
	v jsonb;
BEGIN
	LOOP
		v := genroc.prune('0', '1 day', 1000);
		COMMIT;
		EXIT WHEN (v ->> 'instances')::int = 0;
	END LOOP;
END;
\$\$;
SELECT 'pruned', extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
	   $PRUNE_N / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
	   $PRUNE_N * 15 / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz);
SELECT 'after', pg_total_relation_size('genroc._instances'), pg_total_relation_size('genroc._log'),
	   (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = '_log');
SQL
fi
