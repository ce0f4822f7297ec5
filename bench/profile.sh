#!/usr/bin/env bash
# profile.sh — where the PostgreSQL server's time goes per task
# and per Map item: a throwaway cluster with pg_stat_statements
# (track = all: the statements inside the PL/pgSQL functions too) and
# track_functions = all, one workload, then the statements and functions
# with the most time per task, from pg_stat_statements and
# pg_stat_user_functions.
#
#   bash bench/profile.sh onetask [N]   # N one-task jobs (default 2000): one
#                                       # session claims 1 and reports it with
#                                       # complete_and_claim, a commit each
#   bash bench/profile.sh map [N]       # one Map of N genroc:noop items
#                                       # (default 1000), genroc_map_bench
#                                       # (two threads, claims of 8, complete)
#   bash bench/profile.sh mapsql [N]    # the same Map from one session in SQL
#                                       # (claims of 8, complete, a commit each)
#
# The times are the server's own (pg_stat_statements' execution and
# planning time, functions' self time); the tracking itself costs a little
# on every statement, so compare the shares here and take CPU per task from
# bench/map.sh, bench/ab.sh or the one-task line this prints (the backend's
# /proc CPU, read by the session itself: superuser).  Needs the extension
# installed (make install; with GENROC_PG_ROOT, a private PostgreSQL copy).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
WHAT=${1:?usage: profile.sh onetask|map|mapsql [N]}
if [[ -n ${GENROC_PG_ROOT:-} ]]; then export PGBIN=$GENROC_PG_ROOT$(pg_config --bindir); fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-profile.XXXXXX")
chmod 755 "$WORK"
eval "$(bash "$ROOT/test/pgcluster.sh" start "$WORK/pg")"
cleanup() { bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
cat >>"$GENROC_PGDATA/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on
track_functions = all
CONF
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_owner "${PGBIN:-$(pg_config --bindir)}/pg_ctl" -D "$GENROC_PGDATA" -l "$GENROC_PGDIR/server.log" -w restart >/dev/null
psql -X -q -c "CREATE DATABASE bench"
Q() { psql -X -q -d bench "$@"; }
Q -c "CREATE EXTENSION pg_stat_statements"
case "$WHAT" in
  onetask)
    N=${2:-2000}
    Q -c "CREATE EXTENSION genroc" >/dev/null
    Q >/dev/null <<SQL
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SELECT count(*) FROM generate_series(1, $N) g, genroc.start('one', jsonb_build_object('i', g));
SQL
    # the backend's CPU ticks (utime + stime) from /proc/self/stat
    Q <<SQL
CREATE TEMP TABLE m AS SELECT pg_current_wal_insert_lsn() AS lsn, (SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) AS ticks, clock_timestamp() AS t;
SELECT pg_stat_statements_reset(), pg_stat_reset() \gset
DO \$\$
DECLARE r record; c record; n int := 0;
BEGIN
  LOOP
    SELECT * INTO r FROM genroc.claim('w1', '{default}', 1);
    EXIT WHEN r.instance_id IS NULL;
    COMMIT;
    SELECT * INTO c FROM genroc.complete_and_claim(r.instance_id, r.epoch, '{}', 'w1', '{default}');
    COMMIT;
    n := n + 1;
  END LOOP;
END \$\$;
SELECT $N AS tasks,
  round(((SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) - m.ticks) * 1e6 / 100 / $N) AS backend_cpu_us_per_task,
  round((pg_current_wal_insert_lsn() - m.lsn) / $N) AS wal_bytes_per_task,
  round(extract(epoch FROM clock_timestamp() - m.t) * 1e6 / $N) AS wall_us_per_task
FROM m;
SQL
    PER=$N ;;
  mapsql)
    N=${2:-1000}
    Q -c "CREATE EXTENSION genroc" >/dev/null
    Q >/dev/null <<SQL
SELECT genroc.define('m', '{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":50,"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},"End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SQL
    Q <<SQL
CREATE TEMP TABLE m AS SELECT pg_current_wal_insert_lsn() AS lsn, (SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) AS ticks, clock_timestamp() AS t;
SELECT pg_stat_statements_reset(), pg_stat_reset() \gset
SELECT instance_id FROM genroc.start('m', jsonb_build_object('items', (SELECT jsonb_agg(g) FROM generate_series(1, $N) g))) \gset
DO \$\$
DECLARE r record; n int := 0;
BEGIN
  LOOP
    n := 0;
    FOR r IN SELECT * FROM genroc.claim('w1', '{default}', 8) LOOP
      n := n + 1;
      PERFORM genroc.complete(r.instance_id, r.epoch, r.input);
      COMMIT;
    END LOOP;
    EXIT WHEN n = 0;
    COMMIT;
  END LOOP;
END \$\$;
SELECT status FROM genroc._instances WHERE id = :instance_id;
SELECT $N AS items,
  round(((SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) - m.ticks) * 1e6 / 100 / $N) AS backend_cpu_us_per_item,
  round((pg_current_wal_insert_lsn() - m.lsn) / $N) AS wal_bytes_per_item,
  round(extract(epoch FROM clock_timestamp() - m.t) * 1e6 / $N) AS wall_us_per_item
FROM m;
SQL
    PER=$N ;;
  map)
    N=${2:-1000}
    cmake --build "$ROOT/$BUILD" -j2 --target genroc_map_bench >/dev/null
    Q -c "SELECT pg_stat_statements_reset(), pg_stat_reset()" >/dev/null
    "$ROOT/$BUILD/bench/genroc_map_bench" --stores postgres --sizes "$N" \
      --pg "postgresql://postgres@127.0.0.1:$PGPORT/bench" --pgdata "$GENROC_PGDATA" \
      --json "$WORK/map.json" --sqlite-dir "$WORK"
    PER=$N ;;
  *) echo "profile.sh: onetask, map or mapsql" >&2; exit 2 ;;
esac
echo "== statements by total time (execution + planning) per task, µs (pg_stat_statements, track = all)"
Q -P pager=off <<SQL
SELECT round((total_exec_time + total_plan_time) * 1000 / $PER) AS us_per_task,
       round(calls::numeric / $PER, 2) AS calls_per_task,
       round(total_plan_time * 1000 / $PER) AS plan_us,
       round(wal_bytes::numeric / $PER) AS wal_b,
       left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench')
ORDER BY total_exec_time + total_plan_time DESC LIMIT ${TOP:-25};
SQL
echo "== functions by self time per task, µs (pg_stat_user_functions)"
Q -P pager=off <<SQL
SELECT round(self_time * 1000 / $PER) AS self_us, round(total_time * 1000 / $PER) AS total_us,
       round(calls::numeric / $PER, 2) AS calls_per_task, schemaname || '.' || funcname AS function
FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT ${TOP:-25};
SQL
