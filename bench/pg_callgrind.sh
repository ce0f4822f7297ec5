#!/usr/bin/env bash
# pg_callgrind.sh — instructions per task in the PostgreSQL server, counted
# by callgrind (the same count on a loaded machine, where CPU times are
# not): a throwaway cluster gets the workload's instances, then a
# single-user backend runs the SQL driver under callgrind (collecting from
# the DO block's start to its end), and the count is divided by the tasks.
#
#   bash bench/pg_callgrind.sh onetask [N]   # N one-task jobs (default 300):
#                                            # claim 1, complete_and_claim
#   bash bench/pg_callgrind.sh batch [N]     # N one-task jobs (default 3200)
#                                            # as W1's tuned drivers take
#                                            # them: claims of B (default 32),
#                                            # complete_many of the B
#   bash bench/pg_callgrind.sh batchw [N]    # batch, with the worker and its
#                                            # queues passed to complete_many,
#                                            # as the genroc worker binary does
#                                            # (its hand-back check per batch)
#   bash bench/pg_callgrind.sh map [N]       # a Map of N genroc:noop items
#                                            # (default 200), MaxConcurrency 50:
#                                            # claims of 8, complete
#   bash bench/pg_callgrind.sh start [N]     # N starts of a one-task
#                                            # definition (default 300), a
#                                            # commit each
#
# Prints instructions per task (or item) and WAL bytes per task (the insert
# LSN's advance across the single-user run, a shutdown checkpoint
# included).  Needs valgrind and the extension installed (make install;
# with GENROC_PG_ROOT, a private PostgreSQL copy: scripts/private-pg.sh).
# CALLGRIND_OUT=FILE keeps callgrind's output (callgrind_annotate reads it).
# SETUP_SQL='...' runs before the count starts (what-if runs: an index
# dropped, a setting changed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHAT=${1:?usage: pg_callgrind.sh onetask|batch|batchw|map|start [N]}
export PGBIN=${GENROC_PG_ROOT:-}$(pg_config --bindir)
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
W=$(mktemp -d "${TMPDIR:-/tmp}/genroc-callgrind.XXXXXX")
chmod 755 "$W"
eval "$(bash "$ROOT/test/pgcluster.sh" start "$W/pg")"
cleanup() { bash "$ROOT/test/pgcluster.sh" stop "$W/pg" >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench -c "CREATE EXTENSION genroc" >/dev/null
case "$WHAT" in
  onetask)
    N=${2:-300}
    psql -X -q -d bench >/dev/null <<SQL
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SELECT count(*) FROM generate_series(1, $N) g, genroc.start('one', jsonb_build_object('i', g));
SQL
    # one statement a line: the single-user backend reads a line at a time
    cat >"$W/do.sql" <<'SQL'
DO $$ DECLARE r record; c record; BEGIN LOOP SELECT * INTO r FROM genroc.claim('w1', '{default}', 1); EXIT WHEN r.instance_id IS NULL; COMMIT; SELECT * INTO c FROM genroc.complete_and_claim(r.instance_id, r.epoch, '{}', 'w1', '{default}'); COMMIT; END LOOP; END $$;
SQL
    ;;
  batch|batchw)
    N=${2:-3200}
    B=${B:-32}
    psql -X -q -d bench >/dev/null <<SQL
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SELECT count(*) FROM generate_series(1, $N) g, genroc.start('one', jsonb_build_object('i', g));
SQL
    handback=""
    [ "$WHAT" = batchw ] && handback=", 'w1', '{default}'"
    cat >"$W/do.sql" <<SQL
DO \$\$ DECLARE i bigint[]; e bigint[]; BEGIN LOOP SELECT array_agg(c.instance_id), array_agg(c.epoch) INTO i, e FROM genroc.claim('w1', '{default}', $B) c; EXIT WHEN i IS NULL; COMMIT; PERFORM count(*) FROM genroc.complete_many(i, e, array_fill('{}'::jsonb, ARRAY[cardinality(i)])$handback); COMMIT; END LOOP; END \$\$;
SQL
    ;;
  map)
    N=${2:-200}
    psql -X -q -d bench >/dev/null <<SQL
SELECT genroc.define('m', '{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":50,"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}},"End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SELECT instance_id FROM genroc.start('m', jsonb_build_object('items', (SELECT jsonb_agg(g) FROM generate_series(1, $N) g)));
SQL
    cat >"$W/do.sql" <<'SQL'
DO $$ DECLARE r record; n int; BEGIN LOOP n := 0; FOR r IN SELECT * FROM genroc.claim('w1', '{default}', 8) LOOP n := n + 1; PERFORM genroc.complete(r.instance_id, r.epoch, r.input); COMMIT; END LOOP; EXIT WHEN n = 0; COMMIT; END LOOP; END $$;
SQL
    ;;
  start)
    N=${2:-300}
    psql -X -q -d bench >/dev/null <<SQL
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SQL
    cat >"$W/do.sql" <<SQL
DO \$\$ BEGIN FOR i IN 1..$N LOOP PERFORM genroc.start('one', jsonb_build_object('i', i)); COMMIT; END LOOP; END \$\$;
SQL
    ;;
  *) echo "pg_callgrind.sh: onetask, batch, batchw, map or start" >&2; exit 2 ;;
esac
# what-if runs: SETUP_SQL (e.g. an index dropped) after the workload's setup
if [ -n "${SETUP_SQL:-}" ]; then printf '%s\n' "$SETUP_SQL" | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null; fi
L0=$(psql -X -Atq -d bench -c "SELECT pg_current_wal_insert_lsn()")
as_owner "$PGBIN/pg_ctl" -D "$GENROC_PGDATA" -w stop >/dev/null
mkdir -p "$W/cg"
[ "$(id -u)" -eq 0 ] && chown postgres "$W/cg"
as_owner valgrind --tool=callgrind --callgrind-out-file="$W/cg/out" --toggle-collect=ExecuteDoStmt \
  "$PGBIN/postgres" --single -D "$GENROC_PGDATA" bench <"$W/do.sql" >"$W/single.log" 2>&1
if grep -q ERROR "$W/single.log"; then grep ERROR "$W/single.log" >&2; exit 1; fi
as_owner "$PGBIN/pg_ctl" -D "$GENROC_PGDATA" -l "$W/pg/server.log" -w start >/dev/null
L1=$(psql -X -Atq -d bench -c "SELECT pg_current_wal_insert_lsn()")
if [ "$WHAT" = start ]; then
  ready=$(psql -X -Atq -d bench -c "SELECT count(*) FROM genroc._instances WHERE status = 'ready'")
  [ "$ready" = "$N" ] || { echo "pg_callgrind.sh: $ready of $N started instances are ready" >&2; exit 1; }
else
  left=$(psql -X -Atq -d bench -c "SELECT count(*) FROM genroc._instances WHERE status <> 'succeeded'")
  [ "$left" = 0 ] || { echo "pg_callgrind.sh: $left instances did not succeed" >&2; exit 1; }
fi
ir=$(sed -n 's/^summary: *//p' "$W/cg/out" | head -1)
wal=$(psql -X -Atq -d bench -c "SELECT '$L1'::pg_lsn - '$L0'::pg_lsn")
echo "$WHAT N=$N instructions=$ir per_task=$((ir / N)) wal_bytes_per_task=$((wal / N))"
if [ -n "${CALLGRIND_OUT:-}" ]; then cp "$W/cg/out" "$CALLGRIND_OUT"; fi
