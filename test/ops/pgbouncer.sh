#!/usr/bin/env bash
# pgbouncer.sh — genroc through a real pgbouncer in transaction pooling mode
# (docs/operations.md "Behind a connection pooler"): a PostgreSQL cluster of its own, a
# pgbouncer in front of it (pool_mode = transaction, server_round_robin = 1,
# 4 server connections for more clients, its config in a temporary folder),
# `genroc worker`, `genroc api`, `genroc serve` and genctl through it, none
# with --pooled, all with settings other than the defaults (--durability
# none --log-payloads=false), psql through pgbouncer for the SQL API
# (starts, an activity).  A second psql client through the same pgbouncer
# runs 40 transactions meanwhile and must never see genroc's settings
# (genroc.durability, genroc.log_payloads, application_name, TimeZone), and
# neither log may show a prepared statement of one client met by another.
# Mid-run PostgreSQL is restarted behind pgbouncer (pg_ctl restart -m
# immediate); the work carries on and every instance ends once: none lost,
# none doubled, every Task reported once.  The log-payloads check fails with
# session settings (they stay on the server connection that ran them and
# are gone after the restart).  Real time with generous bounds (a
# real-process test).
# Skips (a "# SKIP" line, exit 0) only when pgbouncer is not installed;
# scripts/deps.sh installs it.
# Environment: PGBIN (default: pg_config's), the extension installed there;
# GENROC_BIN (default build/genroc), GENCTL_BIN (default: genctl beside it).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GENROC_BIN=${GENROC_BIN:-$ROOT/${BUILD:-build}/genroc}
GENCTL_BIN=${GENCTL_BIN:-$(dirname "$GENROC_BIN")/genctl}
PGBIN=${PGBIN:-$(pg_config --bindir)}
n=0 failed=0
check() { # description command...
  local what=$1; shift
  n=$((n + 1))
  if out=$("$@" 2>&1); then echo "ok $n - $what"; else failed=$((failed + 1)); echo "not ok $n - $what"; echo "$out" | sed 's/^/# /' | head -40; fi
}
PGBOUNCER=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null || true)
if [ -z "$PGBOUNCER" ]; then
  echo "ok 1 # SKIP pgbouncer is not installed (scripts/deps.sh installs Debian's package)"
  exit 0
fi

env_lines=$(bash test/pgcluster.sh start) || { echo "not ok 1 - a cluster of its own"; exit 1; }
eval "$env_lines"
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# pgbouncer refuses to run as root: its folder belongs to the cluster's owner
BDIR=$(mktemp -d "${TMPDIR:-/tmp}/genroc-bouncer.XXXXXX")
[ "$(id -u)" -eq 0 ] && chown postgres: "$BDIR"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [ -f "$BDIR/pgbouncer.pid" ] && kill "$(cat "$BDIR/pgbouncer.pid")" 2>/dev/null
  sleep 0.3
  bash test/pgcluster.sh stop "$GENROC_PGDIR"
  rm -rf "$BDIR"
}
trap cleanup EXIT
direct() { psql -X -qAt -v ON_ERROR_STOP=1 -d bnc "$@"; }   # PostgreSQL itself (its socket)

direct -d postgres -c "CREATE DATABASE bnc" >/dev/null && direct -c "CREATE EXTENSION genroc" >/dev/null ||
  { echo "not ok 1 - a database with the extension"; exit 1; }

bport=$(( 20000 + RANDOM % 12000 ))
while (exec 3<>/dev/tcp/127.0.0.1/$bport) 2>/dev/null; do bport=$(( 20000 + RANDOM % 12000 )); done
echo '"postgres" ""' >"$BDIR/userlist.txt"
cat >"$BDIR/pgbouncer.ini" <<INI
[databases]
bnc = host=$GENROC_PGDIR port=$PGPORT dbname=bnc user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir = $BDIR
auth_type = trust
auth_file = $BDIR/userlist.txt
admin_users = postgres
pool_mode = transaction
; fewer server connections than genroc's clients: they must share them,
; lent out in turns (the one idle longest first), so a client's next
; transaction seldom runs on the server connection of its last one
default_pool_size = 4
server_round_robin = 1
max_client_conn = 200
server_login_retry = 1
query_wait_timeout = 120
logfile = $BDIR/pgbouncer.log
pidfile = $BDIR/pgbouncer.pid
INI
[ "$(id -u)" -eq 0 ] && chown postgres: "$BDIR"/*
as_owner "$PGBOUNCER" -d "$BDIR/pgbouncer.ini" >/dev/null 2>&1
URL="postgresql://postgres@127.0.0.1:$bport/bnc"
pooled() { psql -X -qAt -v ON_ERROR_STOP=1 -d "$URL" "$@"; }   # the SQL API through pgbouncer
up() { for _ in $(seq 1 50); do pooled -c "SELECT 1" >/dev/null 2>&1 && return 0; sleep 0.1; done; cat "$BDIR/pgbouncer.log"; return 1; }
check "pgbouncer runs in transaction pooling mode in front of the cluster" \
  bash -c "$(declare -f up pooled); URL='$URL' BDIR='$BDIR' up && psql -X -qAt -d 'postgresql://postgres@127.0.0.1:$bport/pgbouncer' -c 'SHOW CONFIG' | grep -q '^pool_mode|transaction|'"

def='{"StartAt":"Work","States":{
  "Work":{"Type":"Task","Resource":"genroc:sleep","Parameters":{"Seconds":0.3,"n.$":"$.n"},"ResultPath":"$.slept","Next":"Nap"},
  "Nap":{"Type":"Wait","Seconds":1,"Next":"Done"},
  "Done":{"Type":"Task","Resource":"genroc:noop","ResultPath":"$.done","End":true}}}'
appr='{"StartAt":"Approve","States":{"Approve":{"Type":"Task","Resource":"activity:approve","End":true}}}'

# No --pooled anywhere: the settings must travel with each transaction
# whether or not the pooler is detected.
common=(--database "$URL" --durability none --log-payloads=false --log-level info)
free_port() { local p=$(( 20000 + RANDOM % 12000 )); while (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; do p=$(( 20000 + RANDOM % 12000 )); done; echo "$p"; }
"$GENROC_BIN" worker "${common[@]}" --worker-id w1 --concurrency 8 --lease-duration 3s \
  --poll-interval 200ms --tick-interval 200ms >"$BDIR/worker.log" 2>&1 &
pids+=($!); wpid=$!
hport=$(free_port)
"$GENROC_BIN" api "${common[@]}" --listen "127.0.0.1:$hport" >"$BDIR/api.log" 2>&1 &
pids+=($!); apid=$!
API="http://127.0.0.1:$hport"
sport=$(free_port)
"$GENROC_BIN" serve "${common[@]}" --listen "127.0.0.1:$sport" --worker-id s1 --concurrency 4 --lease-duration 3s \
  --poll-interval 200ms --tick-interval 200ms >"$BDIR/serve.log" 2>&1 &
pids+=($!); spid=$!
api_up() { # url log
  for _ in $(seq 1 100); do curl -sf "$1/healthz" >/dev/null && return 0; sleep 0.1; done; cat "$2"; return 1
}
check "genroc api starts through pgbouncer" api_up "$API" "$BDIR/api.log"
check "genroc serve starts through pgbouncer" api_up "http://127.0.0.1:$sport" "$BDIR/serve.log"

# The second client: 40 transactions, each its own, through the same
# pgbouncer while genroc works; each line what that transaction saw.  When
# genroc leaves nothing behind: the module's defaults, its own application
# name and time zone (one other than genroc's UTC, sent at start-up, PGTZ).
tz_default=America/Sao_Paulo
watch_settings() {
  local i
  for i in $(seq 1 40); do
    echo "SELECT genroc.durability() || ' ' || current_setting('genroc.log_payloads') || ' ' ||
                 current_setting('application_name') || ' ' || current_setting('TimeZone');"
    echo "SELECT pg_sleep(0.1);"
  done | PGTZ=$tz_default psql -X -qAt -v ON_ERROR_STOP=1 -d "$URL?application_name=checker" | grep -v '^$' >"$BDIR/watch.out"
}
watch_settings & watcher=$!
# genctl, without --pooled, while the others work
genctl_calls() {
  local i
  for i in $(seq 1 10); do
    "$GENCTL_BIN" --database "$URL" instances >/dev/null &&
      "$GENCTL_BIN" --database "$URL" workers >/dev/null &&
      "$GENCTL_BIN" --database "$URL" queues >/dev/null || return 1
  done
}

# A request that may meet the outage: sent again until it is answered
# (starts carry an idempotency key, so a repeat is the same instance).
post() { # path body
  local deadline=$((SECONDS + 90)) code
  while :; do
    code=$(curl -s -o "$BDIR/post.out" -w '%{http_code}' -XPOST "$API$1" -H 'Content-Type: application/json' -d "$2")
    case "$code" in 2??) return 0 ;; esac
    [ $SECONDS -ge "$deadline" ] && { echo "POST $1: $code $(cat "$BDIR/post.out")"; return 1; }
    sleep 0.3
  done
}
define() {
  post /api/definitions "{\"name\":\"flow\",\"definition\":$def}" &&
    post /api/definitions "{\"name\":\"appr\",\"definition\":$appr}"
}
check "definitions over HTTP" define
start_http() { # from to
  local i
  for i in $(seq "$1" "$2"); do
    post /api/instances "{\"definition\":\"flow\",\"input\":{\"n\":$i,\"via\":\"http\"},\"options\":{\"idempotency_key\":\"h$i\"}}" || return 1
  done
}
start_sql() { # from to
  pooled -c "SELECT count(*) FROM generate_series($1, $2) g,
             genroc.start('flow', jsonb_build_object('n', g, 'via', 'sql'), jsonb_build_object('idempotency_key', 's' || g))" >/dev/null
}
check "20 starts over HTTP" start_http 1 20
check "genctl (instances, workers, queues) through pgbouncer, 10 times each" genctl_calls
check "10 starts over SQL through pgbouncer" start_sql 1 10
wait "$watcher"
seen_none() {
  [ "$(wc -l <"$BDIR/watch.out")" = 40 ] || { echo "$(wc -l <"$BDIR/watch.out") answers of 40"; return 1; }
  local bad
  bad=$(grep -vxF "essential on checker $tz_default" "$BDIR/watch.out")
  [ -z "$bad" ] || { echo "expected: essential on checker $tz_default"; sort "$BDIR/watch.out" | uniq -c; return 1; }
}
check "a second client through pgbouncer never saw genroc's settings (40 transactions)" seen_none
check "an activity's instance started over SQL" \
  pooled -c "SELECT 1 FROM genroc.start('appr', '{\"via\":\"sql\"}', '{\"idempotency_key\":\"a1\"}')"

# Some work done, some not: then PostgreSQL goes down hard behind pgbouncer.
some_done() {
  local deadline=$((SECONDS + 60)) done
  while :; do
    done=$(direct -c "SELECT count(*) FROM genroc._instances WHERE status = 'succeeded'")
    [ "$done" -ge 3 ] && return 0
    [ $SECONDS -ge "$deadline" ] && { echo "succeeded: $done"; tail -20 "$BDIR/worker.log"; return 1; }
    sleep 0.1
  done
}
check "the worker runs tasks and timers through pgbouncer" some_done
live_before=$(direct -c "SELECT count(*) FROM genroc._instances WHERE status NOT IN ('succeeded', 'failed', 'cancelled')")
restart() {
  as_owner "$PGBIN/pg_ctl" -D "$GENROC_PGDATA" -m immediate -w -t 60 stop >/dev/null &&
    sleep 2 &&
    as_owner "$PGBIN/pg_ctl" -D "$GENROC_PGDATA" -l "$GENROC_PGDIR/server.log" -w -t 60 start >/dev/null
}
check "PostgreSQL restarted (immediate) behind pgbouncer with $live_before instances unfinished" \
  bash -c "[ '$live_before' -gt 0 ] && $(declare -f restart as_owner) && PGBIN='$PGBIN' GENROC_PGDATA='$GENROC_PGDATA' GENROC_PGDIR='$GENROC_PGDIR' restart"

check "10 more starts over HTTP after the restart" start_http 21 30
check "the activity completed over SQL through pgbouncer" \
  pooled -c "SELECT genroc.activity_succeed(token, '{\"approved\": true}') FROM genroc.claim_activity('approve', 'sql-client', 1)"
check "an HTTP start repeated with its key is the same instance" \
  bash -c "curl -sf -XPOST '$API/api/instances' -H 'Content-Type: application/json' -d '{\"definition\":\"flow\",\"input\":{\"n\":1,\"via\":\"http\"},\"options\":{\"idempotency_key\":\"h1\"}}' | grep -q '\"is_new\":false'"

all_end() {
  local deadline=$((SECONDS + 120)) live
  while :; do
    live=$(direct -c "SELECT count(*) FROM genroc._instances WHERE status NOT IN ('succeeded', 'failed', 'cancelled')")
    [ "$live" = 0 ] && return 0
    if [ $SECONDS -ge "$deadline" ] || ! kill -0 "$wpid" 2>/dev/null; then
      echo "still live after 120 s (or the worker exited): $live"
      direct -c "SELECT id, status, state, wait_kind, lease_owner FROM genroc._instances WHERE status NOT IN ('succeeded', 'failed', 'cancelled')"
      tail -30 "$BDIR/worker.log"; return 1
    fi
    sleep 0.2
  done
}
check "every instance ends after the restart" all_end
check "41 instances, every one succeeded (none lost, none doubled)" \
  test "$(direct -c "SELECT status || ' ' || count(*) FROM genroc._instances GROUP BY status")" = "succeeded 41"
check "each start key made one instance" \
  test "$(direct -c "SELECT count(DISTINCT idempotency_key) || ' ' || count(*) FROM genroc._instances")" = "41 41"
# Each Task's result applied once: one task_succeeded row per Task state
# (a report repeated after the outage is refused by its epoch, RC004).
once() {
  local bad
  bad=$(direct -c "SELECT i.id, s.state, count(l.seq) FROM genroc._instances i
                   CROSS JOIN (VALUES ('Work'), ('Done')) s(state)
                   LEFT JOIN genroc._log l ON l.instance_id = i.id AND l.event = 'task_succeeded' AND l.state = s.state
                   WHERE i.definition_id = (SELECT id FROM genroc._definitions WHERE name = 'flow')
                   GROUP BY 1, 2 HAVING count(l.seq) <> 1")
  [ -z "$bad" ] || { echo "instance|state|task_succeeded rows"; echo "$bad"; return 1; }
  test "$(direct -c "SELECT count(*) FROM genroc._instances WHERE output->'done'->>'n' IS NOT NULL AND (output->>'n') = (output->'done'->>'n')")" = 40
}
check "every Task reported once, its output in the instance" once
check "the timer fired for every flow (wait_ended logged once each)" \
  test "$(direct -c "SELECT count(*) || ' ' || count(DISTINCT instance_id) FROM genroc._log WHERE event = 'wait_ended'")" = "40 40"
check "the activity's instance ended with the SQL result" \
  test "$(direct -c "SELECT output->>'approved' FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id WHERE d.name = 'appr'")" = true
# --log-payloads=false travels with every transaction: no row the binaries
# wrote carries a payload, before or after the restart.  psql's rows use
# the server's default and do: those of its starts (written in the start's
# transaction, so at the instance's created_at) and the activity's.
BY_PSQL="(i.input->>'via' = 'sql' AND (l.at = i.created_at OR l.state = 'Approve'))"
no_payloads() {
  local n
  n=$(direct -c "SELECT count(*) FROM genroc._log l JOIN genroc._instances i ON i.id = l.instance_id
                 WHERE l.detail ?| ARRAY['input', 'output', 'payload']
                   AND NOT $BY_PSQL")
  [ "$n" = 0 ] || {
    echo "$n log rows with a payload:"
    direct -c "SELECT l.instance_id, l.event, l.state, i.input->>'via', l.at, l.detail::text FROM genroc._log l JOIN genroc._instances i ON i.id = l.instance_id
               WHERE l.detail ?| ARRAY['input', 'output', 'payload']
                 AND NOT $BY_PSQL ORDER BY l.seq LIMIT 20"
    return 1
  }
  # and the check can see one: psql's starts logged their input
  test "$(direct -c "SELECT count(*) FROM genroc._log l JOIN genroc._instances i ON i.id = l.instance_id
                     WHERE l.event = 'started' AND $BY_PSQL AND l.detail ? 'input'")" = 11
}
check "the binaries' settings hold in every transaction across the restart (no payload logged)" no_payloads
check "the workers registered pooled (no session recorded)" \
  test "$(direct -c "SELECT string_agg(id || ' ' || (session_pid IS NULL), ',' ORDER BY id) FROM genroc._workers")" = "s1 true,w1 true"
for what in worker api serve; do
  check "genroc $what, without --pooled, detected the pooler (server_round_robin = 1)" \
    grep -q 'a transaction pooler is in front of PostgreSQL' "$BDIR/$what.log"
done
no_statement_errors() {
  ! grep -iE 'prepared statement|bind message supplies' "$GENROC_PGDIR/server.log" "$BDIR/pgbouncer.log" "$BDIR"/*.log
}
check "no prepared statement errors in the server's, pgbouncer's or genroc's logs" no_statement_errors

kill -TERM "$wpid"; wait "$wpid"; wrc=$?
check "the worker stops cleanly (SIGTERM, exit 0)" test "$wrc" = 0
kill -TERM "$spid"; wait "$spid"; src=$?
check "serve stops cleanly (SIGTERM, exit 0)" test "$src" = 0
check "it is marked stopped" test "$(direct -c "SELECT stopped_at IS NOT NULL FROM genroc._workers WHERE id = 'w1'")" = t

echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
