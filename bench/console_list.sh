#!/usr/bin/env bash
# console_list.sh — the web console's instance list over a big store: N
# (100,000) instances in a SQLite file and in PostgreSQL, then `genroc api`
# timed answering the list calls the console makes (GET /api/instances,
# 50 rows, values=ref, top-level only unless said): the first page, a deep
# keyset page, and each filter (status, definition, name, label, time,
# children too).  Prints p50 / p95 / max per call and store; the console's
# budget is p95 < 300 ms.  A benchmark, not a test: nothing here fails on
# the figures.
#
#   bash bench/console_list.sh                  both stores (PostgreSQL needs the
#                                               extension in PGBIN's tree:
#                                               PGBIN=$GENROC_PG_ROOT$(pg_config --bindir))
#   N=100000 REQS=100 STORES=sqlite bash bench/console_list.sh
#
# The instances: concluded 3-task instances made in bulk (fill_concluded.sql
# / fill_concluded_sqlite.sql, as bench/storage.sh makes them), then every
# 100th turned failed with an error, every 10th given a label, every 1,000th
# a name.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${N:-100000}
REQS=${REQS:-100}
STORES=${STORES:-"sqlite postgres"}
GENROC=$ROOT/${BUILD:-build}/genroc
[ -x "$GENROC" ] || { echo "build genroc first ($GENROC)"; exit 1; }
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
bench_cluster console_list
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
echo "console list: $N instances per store, $REQS requests per call; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The calls, as the console makes them (name|query).
calls() { # newest id
  local deep=$(( $1 / 2 ))
  cat <<CALLS
first page|top=true&limit=50&values=ref
page deep in the keyset|top=true&limit=50&values=ref&before=$deep
status=failed|status=failed&top=true&limit=50&values=ref
status=failed, deep|status=failed&top=true&limit=50&values=ref&before=$deep
definition|definition=three&top=true&limit=50&values=ref
name (one match)|name=run-5000&top=true&limit=50&values=ref
label|label=tenant:t3&top=true&limit=50&values=ref
time window|created_after=2000-01-01T00:00:00Z&top=true&limit=50&values=ref
children too|limit=50&values=ref
CALLS
}

# Times each call REQS times against a running API; prints a row per call.
measure() { # store port newest
  local store=$1 port=$2 newest=$3
  while IFS='|' read -r name qs; do
    local url="http://127.0.0.1:$port/api/instances?$qs" rows
    rows=$(curl -sf "$url" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["instances"]))')
    for _ in $(seq 1 "$REQS"); do curl -s -o /dev/null -w '%{time_total}\n' "$url"; done |
      sort -n | awk -v s="$store" -v n="$name" -v r="$rows" '{a[NR]=$1}
        END { i95 = int(NR * 0.95 + 0.999); printf "%-9s %-26s %5d %9.1f %9.1f %9.1f\n", s, n, r, a[int((NR+1)/2)]*1000, a[i95]*1000, a[NR]*1000 }'
  done < <(calls "$newest")
}

serve() { # database: starts genroc api, sets PORT and API_PID
  PORT=$(free_port)
  "$GENROC" api --database "$1" --listen "127.0.0.1:$PORT" >"$WORK/api.log" 2>&1 &
  API_PID=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return; sleep 0.1; done
  echo "genroc api did not start"; cat "$WORK/api.log"; exit 1
}

printf "%-9s %-26s %5s %9s %9s %9s\n" store call rows p50_ms p95_ms max_ms
T0MS=$(( ($(date +%s) - 86400) * 1000 ))
for store in $STORES; do
  case $store in
  sqlite)
    F=$WORK/list.db
    cat >"$WORK/three.json" <<'JSON'
{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","Next":"B"},
 "B":{"Type":"Task","Resource":"genroc:noop","Next":"C"},"C":{"Type":"Task","Resource":"genroc:noop","End":true}}}
JSON
    "$GENROC" run "$WORK/three.json" --name three --input '{"n":0}' --database "$F" >/dev/null 2>&1
    "$GENROC" run "$WORK/three.json" --name three --input '{"n":1}' --database "$F" >/dev/null 2>&1
    sqlite3 -bail "$F" >/dev/null <<SQL
.parameter set :n $N
.parameter set :large_every 0
.parameter set :large_bytes 0
.parameter set :ended_from $T0MS
.parameter set :step_ms 1
.parameter set :small 1
.parameter set :large 2
.read $ROOT/bench/fill_concluded_sqlite.sql
UPDATE instances SET status = 'failed', error = 'Boom', cause = 'made failed' WHERE id % 100 = 0;
UPDATE instances SET labels = json_object('tenant', 't' || (id % 7)) WHERE id % 10 = 0;
UPDATE instances SET name = 'run-' || id WHERE id % 1000 = 0;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
    newest=$(sqlite3 "$F" 'SELECT max(id) FROM instances')
    serve "$F"
    measure sqlite "$PORT" "$newest"
    kill "$API_PID"; wait "$API_PID" 2>/dev/null || true
    ;;
  postgres)
    q -d postgres -c "CREATE DATABASE list"
    q -d list -c "CREATE EXTENSION genroc"
    q -d list -At -c "SELECT genroc.define('three', '{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Task\",\"Resource\":\"handler:a\",\"Next\":\"B\"},\"B\":{\"Type\":\"Task\",\"Resource\":\"handler:b\",\"Next\":\"C\"},\"C\":{\"Type\":\"Task\",\"Resource\":\"handler:c\",\"End\":true}}}')" >/dev/null
    q -d list -v n="$N" -v large_every=0 -v large_bytes=0 -v ended_from="$(date -u -d @$(( T0MS / 1000 )) +%FT%TZ)" \
      -v step_ms=1 -f "$ROOT/bench/fill_concluded.sql" >/dev/null
    q -d list <<'SQL' >/dev/null
UPDATE genroc._instances SET status = 'failed', error = 'Boom', cause = 'made failed' WHERE id % 100 = 0;
UPDATE genroc._instances SET labels = jsonb_build_object('tenant', 't' || (id % 7)) WHERE id % 10 = 0;
UPDATE genroc._instances SET name = 'run-' || id WHERE id % 1000 = 0;
VACUUM ANALYZE genroc._instances;
SQL
    newest=$(q -d list -At -c 'SELECT max(id) FROM genroc._instances')
    serve "${GENROC_TEST_PG_URL%/*}/list"
    measure postgres "$PORT" "$newest"
    kill "$API_PID"; wait "$API_PID" 2>/dev/null || true
    ;;
  esac
done
