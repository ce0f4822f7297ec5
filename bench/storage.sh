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
# With PRUNE_N > 0 it then fills PRUNE_N concluded 3-task instances
# (fill_concluded.sql; PRUNE_OBJECTS=1: every 100th with a large value) and
# reports genroc.prune's rows/s and the table sizes before and after.
# MILLION=N and SQLITE_MILLION=N: storage, autovacuum and prune at a million
# concluded instances on PostgreSQL and on a SQLite file (their sections
# below say what they measure).
#
#   GENROC_PG_ROOT=/some/dir bash bench/storage.sh
#   N=20 PAYLOAD=1000000 PRUNE_N=100000 bash bench/storage.sh
#   N=0 PRUNE_N=20000 GENROC_PG_ROOT=... bash bench/storage.sh   # prune only
#   N=0 MILLION=1000000 BENCH=1 nice -n 5 bash bench/storage.sh
#   N=0 SQLITE_MILLION=1000000 nice -n 5 bash bench/storage.sh
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

# The process "three" (handler:a/b/c), a worker "w", and two instances run
# through the engine (a small and a large value): fill_concluded.sql's rows
# must look like theirs (same events, states, detail keys, references, and
# the same columns set in the instance row), checked here.
template() { # database
  q -d postgres -c "CREATE DATABASE $1"
  q -d "$1" -c "CREATE EXTENSION genroc"
  q -d "$1" -At <<'SQL'
SELECT genroc.define('three', '{"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"handler:a","Next":"B"},
  "B":{"Type":"Task","Resource":"handler:b","Next":"C"},
  "C":{"Type":"Task","Resource":"handler:c","End":true}}}') IS NOT NULL AS defined \gset
SELECT genroc.worker_register('w', '{}') IS NOT NULL AS registered \gset
DO $$
DECLARE
	v_task record;
BEGIN
	PERFORM genroc.start('three', '{"n": 0}');
	PERFORM genroc.start('three', jsonb_build_object('blob', repeat('t', 16000)));
	FOR s IN 1..6 LOOP
		SELECT * INTO STRICT v_task FROM genroc.claim('w', '{default}', 1);
		PERFORM genroc.complete(v_task.instance_id, v_task.epoch, v_task.input);
	END LOOP;
END;
$$;
SQL
}
fill() { # database n large_every ended_from step_ms
  q -d "$1" -v n="$2" -v large_every="$3" -v large_bytes="${LARGE_BYTES:-16000}" \
    -v ended_from="$4" -v step_ms="$5" -f "$ROOT/bench/fill_concluded.sql"
}
fill_check() { # database: prints the rows that differ (none: the shapes agree)
  q -d "$1" -At <<'SQL'
CREATE TEMP VIEW shape AS
SELECT l.instance_id, row_number() OVER (PARTITION BY l.instance_id ORDER BY l.seq) AS n, l.event, l.state,
	   (SELECT string_agg(k || ':' || jsonb_typeof(l.detail -> k)
						  || CASE WHEN l.detail -> k ? 'genroc:object' THEN ' ref' ELSE '' END, ',' ORDER BY k)
		FROM jsonb_object_keys(l.detail) k) AS keys
FROM genroc._log l WHERE l.instance_id <= 2 OR l.instance_id IN (
	(SELECT min(id) FROM genroc._instances WHERE id > 2 AND NOT input ? 'genroc:object'),
	(SELECT min(id) FROM genroc._instances WHERE id > 2 AND input ? 'genroc:object'));
CREATE TEMP VIEW cols AS
SELECT i.id, i.input ? 'genroc:object' AS large,
	   (SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(jsonb_strip_nulls(to_jsonb(i))) k) AS cols
FROM genroc._instances i;
WITH real AS (SELECT * FROM shape WHERE instance_id <= 2),
	 made AS (SELECT s.*, c.large FROM shape s JOIN cols c ON c.id = s.instance_id WHERE instance_id > 2)
SELECT 'log differs', * FROM (
	(SELECT instance_id = 2, n, event, state, keys FROM real
	 EXCEPT ALL SELECT large, n, event, state, keys FROM made)
	UNION ALL
	(SELECT large, n, event, state, keys FROM made
	 EXCEPT ALL SELECT instance_id = 2, n, event, state, keys FROM real)) d
UNION ALL
SELECT 'instance row differs', x.large, 0, x.cols, '', '' FROM (
	SELECT DISTINCT large, cols FROM cols WHERE id > 2
	EXCEPT SELECT large, cols FROM cols WHERE id <= 2) x;
SQL
}

if [ "$PRUNE_N" -gt 0 ]; then
  template prune
  # concluded instances made in bulk, as the engine writes them (3 tasks:
  # 14 log rows each), without running the steps one by one; with
  # PRUNE_OBJECTS=1 every 100th carries a large value (stored once)
  fill prune "$PRUNE_N" "$(( ${PRUNE_OBJECTS:-0} == 1 ? 100 : 0 ))" "$(date -u -d '-3 days' +%FT%TZ)" 1
  bad=$(fill_check prune)
  [ -z "$bad" ] || { echo "fill_concluded.sql does not write what the engine writes:"; echo "$bad"; exit 1; }
  q -d prune -At -F ' ' <<SQL
SET genroc.durability = 'none';
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

# ---------------------------------------------------------------------------
# MILLION=N (e.g. 1000000): N concluded 3-task instances (14 log rows each,
# every LARGE_EVERY-th, default 100, with a LARGE_BYTES value, default 16000,
# stored once), ended one day's worth (N / DAYS, DAYS default 10) per day
# from 12 days ago on; then
#   sizes     heap, TOAST and index bytes of instances, log and objects
#   bench     (BENCH=1, needs build/bench/genroc_bench) genroc_bench's
#             1-task and 3-task throughput on PostgreSQL at essential, 1 and
#             4 workers, in an empty database and in this one (--keep-db),
#             BENCH_ROUNDS rounds in turn, medians and their ratio
#   (PRUNE=0 stops here)
#   prune     the oldest day (N / DAYS instances and their log), alone:
#             rows/s from prune's own results and the time of each call
#             measured in the database (clock_timestamp around each call;
#             and pg_stat_user_functions' total time of genroc.prune), log
#             rows from the table's own count of deleted tuples, WAL bytes
#   cycles    CYCLES (default 4) times: a new day of concluded instances
#             filled and the oldest day pruned, while a client runs new
#             3-task instances through the engine; the table sizes after
#             each cycle show whether autovacuum (the cluster's defaults)
#             keeps the tables from growing
# Every 10 s a sampler writes n_live_tup, n_dead_tup, the size and the
# autovacuum count of the three tables to OUT/samples.txt (OUT default
# bench/results/million-TIME).
#   MILLION=1000000 BENCH=1 nice -n 5 bash bench/storage.sh
# ---------------------------------------------------------------------------
MILLION=${MILLION:-0}
if [ "$MILLION" -gt 0 ]; then
DAYS=${DAYS:-10}
CYCLES=${CYCLES:-4}
LARGE_EVERY=${LARGE_EVERY:-100}
PER_DAY=$(( MILLION / DAYS ))
STEP_MS=$(( 86400000 / PER_DAY ))
OUT=${OUT:-$ROOT/bench/results/million-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
echo "million: $MILLION concluded 3-task instances, every ${LARGE_EVERY}th with a ${LARGE_BYTES:-16000}-byte value; results in $OUT"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
q -d postgres -c "ALTER SYSTEM SET track_functions = 'pl'" -c "ALTER SYSTEM SET log_autovacuum_min_duration = 0" \
  -c "ALTER SYSTEM SET log_min_messages = 'log'" \
  -c "SELECT pg_reload_conf()" >/dev/null
DB=million
template $DB
# the first day ends DAYS + CYCLES + 1 days ago: every fill is in the past
T0S=$(( $(date +%s) - (DAYS + CYCLES + 1) * 86400 ))
at() { date -u -d "@$(( T0S + $1 ))" +%FT%TZ; }  # T0 + seconds

sizes() { # label
  q -d $DB -At -F ' ' <<SQL | awk -v L="$1" 'BEGIN { printf "%-22s | %-10s | %12s | %14s | %14s | %14s | %14s | %10s\n", "when", "table", "rows", "heap", "TOAST", "indexes", "total", "dead" }
  { printf "%-22s | %-10s | %12s | %14s | %14s | %14s | %14s | %10s\n", L, $1, $2, $3, $4, $5, $6, $7 }'
SELECT c.relname, s.n_live_tup, pg_relation_size(c.oid),
	   pg_table_size(c.oid) - pg_relation_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
	   s.n_dead_tup
FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.oid IN ('genroc._instances'::regclass, 'genroc._log'::regclass, 'genroc._objects'::regclass)
ORDER BY c.relname;
SQL
}

sampler() {
  while [ ! -e "$OUT/stop-sampler" ]; do
    q -d $DB -At -F ' ' -c "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'HH24:MI:SS'), relname, n_live_tup,
        n_dead_tup, pg_total_relation_size(relid), autovacuum_count, autoanalyze_count
      FROM pg_stat_user_tables WHERE schemaname = 'genroc' AND relname IN ('_instances', '_log', '_objects')
      ORDER BY relname" >>"$OUT/samples.txt" 2>/dev/null || true
    sleep 10
  done
}
sampler &
SAMPLER=$!

t=$(date +%s.%N)
for (( done = 0; done < MILLION; done += 100000 )); do
  k=$(( MILLION - done < 100000 ? MILLION - done : 100000 ))
  fill $DB $k "$LARGE_EVERY" "$(at $(( done * STEP_MS / 1000 )))" $STEP_MS
done
echo "filled in $(echo "$(date +%s.%N) - $t" | bc) s"
bad=$(fill_check $DB)
[ -z "$bad" ] || { echo "fill_concluded.sql does not write what the engine writes:"; echo "$bad"; exit 1; }
q -d $DB -c "VACUUM ANALYZE genroc._instances, genroc._log, genroc._objects" >/dev/null
sizes "filled, vacuumed" | tee "$OUT/sizes.txt"

# genroc_bench on PostgreSQL at essential, 1 and 4 workers, 1-task (600
# instances) and 3-task (100) runs, in an empty database and in this one
# (--keep-db), BENCH_ROUNDS times (default 5) in turn, one run each, so that
# both sides meet the same load on a shared machine: medians of the rounds
# and the ratio million / empty (throughput, and the server's CPU per task
# of the 3-task runs, which a busy machine disturbs less)
bench_one() { # label database round
  "$ROOT/${BUILD:-build}/bench/genroc_bench" --pg "postgresql://postgres@127.0.0.1:$PGPORT/$2" \
    --pgdata "$GENROC_PGDATA" --stores postgres --levels essential --workers 1,4 --w3 100 --w1 600 \
    --repeat 1 --latency 20 --commit-delay 0 --keep-db --json "$OUT/bench-$1-$3.json" |
    awk -v L="$1" '$1 == "postgres" { sub("us", "", $15); print L, $4, $9, $7, $15, $17 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
if [ "${BENCH:-0}" = 1 ] && [ ! -x "$ROOT/${BUILD:-build}/bench/genroc_bench" ]; then
  echo "BENCH=1: no ${BUILD:-build}/bench/genroc_bench (cmake --build build --target genroc_bench): skipped"
elif [ "${BENCH:-0}" = 1 ]; then
  q -d postgres -c "CREATE DATABASE bench_empty" && q -d bench_empty -c "CREATE EXTENSION genroc"
  echo "load average before the benchmarks: $(cut -d' ' -f1-3 /proc/loadavg)"
  for (( r = 1; r <= ${BENCH_ROUNDS:-5}; r++ )); do
    bench_one empty bench_empty $r
    bench_one million $DB $r
  done >"$OUT/bench-runs.txt"  # label workers w1_inst/s w3_task/s cpu_db_us/task WAL/task
  echo "load average after the benchmarks: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf "%-8s %3s | %10s %10s %12s %8s   (medians of %d rounds)\n" "" wk "w1 inst/s" "w3 task/s" "db CPU/task" "WAL/task" "${BENCH_ROUNDS:-5}"
  for wk in 1 4; do
    for side in empty million; do
      m() { awk -v S=$side -v W=$wk -v C="$1" '$1 == S && $2 == W { print $C }' "$OUT/bench-runs.txt" | median; }
      printf "%-8s %3d | %10.0f %10.0f %10.0fus %8.0f\n" $side $wk "$(m 3)" "$(m 4)" "$(m 5)" "$(m 6)"
    done
  done | tee "$OUT/bench.txt"
  awk '{ k = $2; if ($1 == "empty") { e1[k] = $4; e3[k] = $5; ec[k] = $6 } else { m1[k] = $4; m3[k] = $5; mc[k] = $6 } }
       END { for (k in e1) printf "ratio million/empty, %d workers: w1 %.3f, w3 %.3f, db CPU per task %.3f\n", k, m1[k] / e1[k], m3[k] / e3[k], mc[k] / ec[k] }' \
    <(sed 's/us / /' "$OUT/bench.txt") | sort | tee -a "$OUT/bench.txt"
fi
if [ "${PRUNE:-1}" != 1 ]; then touch "$OUT/stop-sampler"; wait $SAMPLER; exit 0; fi

# prune_day label retention: prunes with instance retention RETENTION until a
# call deletes nothing, and prints: instances, log rows (the table's own
# n_tup_del), objects, the seconds the calls took in the database, rows/s,
# genroc.prune's own total time (pg_stat_user_functions), WAL bytes
prune_day() {
  q -d $DB -At -F ' ' <<SQL
SET client_min_messages = warning;
-- collection deletes the objects of what is pruned at its next look
SET genroc.object_grace = '1s';
CREATE TABLE IF NOT EXISTS public.prune_calls (label text, call int, ms float8, result jsonb);
SELECT pg_stat_clear_snapshot();
SELECT pg_current_wal_lsn() AS lsn0,
	   (SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'genroc._log'::regclass) AS del0,
	   coalesce((SELECT total_time FROM pg_stat_user_functions WHERE funcname = 'prune'), 0) AS fn0 \\gset
DO \$\$
DECLARE
	v jsonb;
	t timestamptz;
	n int := 0;
BEGIN
	LOOP
		t := clock_timestamp();
		v := genroc.prune('0', '$2', 1000);
		n := n + 1;
		INSERT INTO public.prune_calls VALUES ('$1', n, extract(epoch FROM clock_timestamp() - t) * 1000, v);
		COMMIT;
		EXIT WHEN (v ->> 'instances')::int = 0;
	END LOOP;
END;
\$\$;
SELECT pg_sleep(1);	-- the statistics of the last transactions
SELECT pg_stat_clear_snapshot();
SELECT '$1', sum((result ->> 'instances')::int),
	   (SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'genroc._log'::regclass) - :del0,
	   sum((result ->> 'objects')::int), round((sum(ms) / 1000)::numeric, 2),
	   round(sum((result ->> 'instances')::int) / (sum(ms) / 1000))::int,
	   round(((SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'genroc._log'::regclass) - :del0)
			 / (sum(ms) / 1000))::int,
	   round((((SELECT total_time FROM pg_stat_user_functions WHERE funcname = 'prune') - :fn0) / 1000)::numeric, 2),
	   pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn0')::bigint
FROM public.prune_calls WHERE label = '$1';
SQL
}
prune_head() {
  printf "%-10s %10s %10s %8s %8s %12s %12s %10s %14s\n" pruned instances "log rows" objects "s (db)" "instances/s" "log rows/s" "prune() s" "WAL bytes"
}
prune_fmt() { awk 'NF == 9 { printf "%-10s %10d %10d %8d %8.2f %12d %12d %10.2f %14d\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'; }

# retention that keeps all but the oldest day, then one day less each cycle
retention() { # days pruned so far (1-based)
  local cut=$(( T0S + $1 * 86400 ))
  echo "$(( $(date +%s) - cut + 60 )) seconds"
}
echo "load average before prune: $(cut -d' ' -f1-3 /proc/loadavg)"
{ prune_head; prune_day quiet "$(retention 1)" | prune_fmt; } | tee "$OUT/prune.txt"
sizes "after prune" | tee -a "$OUT/sizes.txt"

# a client running new 3-task instances through the engine while the
# cycles fill and prune (the live work autovacuum has to keep up beside)
client() {
  while [ ! -e "$OUT/stop-client" ]; do
    q -d $DB -At >/dev/null 2>&1 <<'SQL' || true
DO $$
DECLARE
	v_task record;
BEGIN
	FOR i IN 1..50 LOOP
		PERFORM genroc.start('three', jsonb_build_object('live', i));
		COMMIT;
		FOR s IN 1..3 LOOP
			SELECT * INTO STRICT v_task FROM genroc.claim('w', '{default}', 1);
			COMMIT;
			PERFORM genroc.complete(v_task.instance_id, v_task.epoch, v_task.input);
			COMMIT;
		END LOOP;
	END LOOP;
END;
$$;
SQL
  done
}
client &
CLIENT=$!
for (( c = 1; c <= CYCLES; c++ )); do
  t=$(date +%s.%N)
  fill $DB $PER_DAY "$LARGE_EVERY" "$(at $(( (DAYS + c - 1) * 86400 )))" $STEP_MS
  echo "cycle $c: filled $PER_DAY in $(echo "$(date +%s.%N) - $t" | bc) s"
  { prune_head; prune_day "cycle$c" "$(retention $(( c + 1 )))" | prune_fmt; } | tee -a "$OUT/prune.txt"
  sizes "cycle $c" | tee -a "$OUT/sizes.txt"
done
touch "$OUT/stop-client"; wait $CLIENT
live=$(q -d $DB -At -c "SELECT count(*) FROM genroc._instances WHERE (input ->> 'live') IS NOT NULL")
echo "client: $live live-work instances ran during the cycles"
# autovacuum's own runs: wait up to AV_WAIT s (default 180) for the log's
# dead tuples to be vacuumed, then the last sizes
for (( w = 0; w < ${AV_WAIT:-180}; w += 10 )); do
  dead=$(q -d $DB -At -c "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'genroc._log'::regclass")
  [ "$dead" -lt $(( PER_DAY * 14 / 10 )) ] && break
  sleep 10
done
sizes "end (+${w}s)" | tee -a "$OUT/sizes.txt"
touch "$OUT/stop-sampler"; wait $SAMPLER
grep -c "automatic vacuum of table \"$DB.genroc._log\"" "$GENROC_PGDIR/server.log" | sed 's/^/autovacuum runs on the log: /'
grep -A10 "automatic vacuum of table \"$DB.genroc._log\"" "$GENROC_PGDIR/server.log" >"$OUT/autovacuum-log.txt" || true
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# ---------------------------------------------------------------------------
# SQLITE_MILLION=N: the same on a SQLite file (needs build/genroc and
# build/bench/genroc_bench): a 3-task process of genroc:noop tasks run twice
# by `genroc run` (a small input and a LARGE_BYTES one), copied N times
# (fill_concluded_sqlite.sql, one day's worth N / DAYS per day, every
# LARGE_EVERY-th with its own large value); the file's size and its tables'
# (dbstat); the oldest day pruned (genroc_bench --prune-sqlite: Store::prune
# timed in-process, the database being in it; log rows from the table's
# count before and after); then CYCLES times a new day filled and the oldest
# pruned, the file's size and free pages after each.
#   SQLITE_MILLION=1000000 N=0 nice -n 5 bash bench/storage.sh
# ---------------------------------------------------------------------------
SQLITE_MILLION=${SQLITE_MILLION:-0}
if [ "$SQLITE_MILLION" -gt 0 ]; then
DAYS=${DAYS:-10}
CYCLES=${CYCLES:-4}
LARGE_EVERY=${LARGE_EVERY:-100}
LARGE_BYTES=${LARGE_BYTES:-16000}
PER_DAY=$(( SQLITE_MILLION / DAYS ))
STEP_MS=$(( 86400000 / PER_DAY ))
GENROC=$ROOT/${BUILD:-build}/genroc
BENCHBIN=$ROOT/${BUILD:-build}/bench/genroc_bench
F=$WORK/million.db
echo "sqlite: $SQLITE_MILLION concluded 3-task instances, every ${LARGE_EVERY}th with a ${LARGE_BYTES}-byte value"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
cat >"$WORK/three.json" <<'JSON'
{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","Next":"B"},
 "B":{"Type":"Task","Resource":"genroc:noop","Next":"C"},"C":{"Type":"Task","Resource":"genroc:noop","End":true}}}
JSON
head -c $(( (LARGE_BYTES - 11) / 2 )) /dev/urandom | od -An -tx1 | tr -d ' \n' | sed 's/^/{"blob":"/; s/$/"}/' >"$WORK/big.json"
"$GENROC" run "$WORK/three.json" --name three --input '{"n":0}' --database "$F" >/dev/null 2>&1
"$GENROC" run "$WORK/three.json" --name three --input @"$WORK/big.json" --database "$F" >/dev/null 2>&1
s3() { sqlite3 -bail "$F" "$@"; }
SMALL=$(s3 "SELECT id FROM instances WHERE input = '{\"n\":0}'")
LARGE=$(s3 "SELECT id FROM instances WHERE substr(input, 1, 18) = '{\"genroc:object\":\"'")
NOWMS=$(( $(date +%s) * 1000 ))
T0MS=$(( NOWMS - (DAYS + CYCLES + 1) * 86400000 ))
sfill() { # n ended_from_ms
  s3 <<SQL
.parameter set :n $1
.parameter set :large_every $LARGE_EVERY
.parameter set :large_bytes $LARGE_BYTES
.parameter set :ended_from $2
.parameter set :step_ms $STEP_MS
.parameter set :small $SMALL
.parameter set :large $LARGE
.read $ROOT/bench/fill_concluded_sqlite.sql
SQL
}
ssizes() { # label
  local pages free size
  read -r pages free size < <(s3 "SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)" | tr '|' ' ')
  printf "%-16s file %12d bytes (+WAL %d), %d pages of %d, %d free; instances %s, log %s, objects %s rows\n" "$1" \
    "$(stat -c %s "$F")" "$(stat -c %s "$F-wal" 2>/dev/null || echo 0)" "$pages" "$size" "$free" \
    "$(s3 'SELECT count(*) FROM instances')" "$(s3 'SELECT count(*) FROM log')" "$(s3 'SELECT count(*) FROM objects')"
}
sprune() { # label days pruned so far: the oldest days go
  local cut=$(( T0MS + $2 * 86400000 )) l0 l1 out
  l0=$(s3 'SELECT count(*) FROM log')
  out=$("$BENCHBIN" --prune-sqlite "$F" --prune-retention-ms $(( $(date +%s) * 1000 - cut + 60000 )))
  l1=$(s3 'SELECT count(*) FROM log')
  echo "$1 $out" | sed "s/}\$/,\"log_rows_deleted\":$(( l0 - l1 )),\"all_log_rows_per_s\":$(echo "$out" | sed 's/.*"seconds":\([0-9.e+-]*\).*/\1/' | awk -v d=$(( l0 - l1 )) '{ printf "%.0f", d / $1 }')}/"
}
t=$(date +%s.%N)
for (( done = 0; done < SQLITE_MILLION; done += 100000 )); do
  k=$(( SQLITE_MILLION - done < 100000 ? SQLITE_MILLION - done : 100000 ))
  sfill $k $(( T0MS + done * STEP_MS ))
done
echo "filled in $(echo "$(date +%s.%N) - $t" | bc) s"
# the copies' log rows: as the template's, event for event
bad=$(s3 "SELECT count(*) FROM (SELECT l.event, l.state, (SELECT group_concat(key) FROM json_each(l.detail)) FROM log l
  WHERE l.instance_id = (SELECT min(id) FROM instances WHERE id > $LARGE AND substr(input, 1, 18) = '{\"genroc:object\":\"')
  EXCEPT SELECT l.event, l.state, (SELECT group_concat(key) FROM json_each(l.detail)) FROM log l WHERE l.instance_id = $LARGE)")
[ "$bad" = 0 ] || { echo "fill_concluded_sqlite.sql: the copies' log differs from the template's"; exit 1; }
s3 "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
ssizes "filled"
s3 "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 12" | sed 's/^/  dbstat: /'
echo "pruned: $(sprune quiet 1)"
s3 "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
ssizes "after prune"
for (( c = 1; c <= CYCLES; c++ )); do
  sfill $PER_DAY $(( T0MS + (DAYS + c - 1) * 86400000 ))
  echo "cycle $c pruned: $(sprune cycle$c $(( c + 1 )))"
  s3 "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
  ssizes "cycle $c"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
