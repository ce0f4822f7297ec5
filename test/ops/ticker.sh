#!/usr/bin/env bash
# ticker.sh — the in-database ticker (extension/ticker.c): a cluster of its
# own with shared_preload_libraries = 'genroc' and genroc.ticker_databases;
# no genroc binary runs, yet timers fire; a database named there without
# the extension is waited for; a database named there that does not exist
# is said once (no FATAL restart loop) and ticked once it is made; psql sessions calling genroc.tick() at the
# same time (as the binary's tick does) change nothing: every instance
# ends once.  Who ticks: genroc.tickers and `genctl tickers` name the
# ticker, then a genroc worker ticking beside it (GENROC_BIN, default
# build/genroc; skipped when it is not built).  Real time with generous bounds (a real-process test).
# Environment: PGBIN (default: pg_config's), the extension installed there.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
check() { # description command...
  local what=$1; shift
  n=$((n + 1))
  if out=$("$@" 2>&1); then echo "ok $n - $what"; else failed=$((failed + 1)); echo "not ok $n - $what"; echo "$out" | sed 's/^/# /' | head -30; fi
}
env_lines=$(bash test/pgcluster.sh start) || { echo "not ok 1 - a cluster of its own"; exit 1; }
eval "$env_lines"
trap 'bash test/pgcluster.sh stop "$GENROC_PGDIR"' EXIT
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE DATABASE tick_a" -c "CREATE DATABASE tick_b" && q -d tick_a -c "CREATE EXTENSION genroc" || exit 1
cat >>"$GENROC_PGDATA/postgresql.conf" <<CONF
shared_preload_libraries = 'genroc'
genroc.ticker_databases = 'tick_a, tick_b, tick_none'
genroc.ticker_interval = 100ms
CONF
owner=""; [ "$(id -u)" -eq 0 ] && owner="runuser -u postgres --"
$owner "${PGBIN:-$(pg_config --bindir)}/pg_ctl" -D "$GENROC_PGDATA" -l "$GENROC_PGDIR/server.log" -w -t 60 restart >/dev/null ||
  { cat "$GENROC_PGDIR/server.log"; exit 1; }

wait_for() { # seconds sql expected
  local deadline=$((SECONDS + $1)) got
  while :; do
    got=$(q -d "${DB:-tick_a}" -c "$2" 2>&1)
    [ "$got" = "$3" ] && return 0
    [ $SECONDS -ge "$deadline" ] && { echo "after $1 s: $got (wanted $3)"; return 1; }
    sleep 0.2
  done
}
check "one ticker per named database runs (pg_stat_activity)" wait_for 30 \
  "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_stat_activity WHERE backend_type = 'genroc ticker'" "tick_a,tick_b"

def='{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":1,"Next":"Done"},"Done":{"Type":"Pass","Result":"woke","End":true}}}'
q -d tick_a -c "SELECT 1 FROM genroc.define('nap', '$def')" >/dev/null
q -d tick_a -c "SELECT count(*) FROM genroc.start('nap', '{}'), generate_series(1, 1)" >/dev/null
check "with no genroc binary running, a timer fires and the instance ends" wait_for 60 \
  "SELECT string_agg(status || ' ' || output::text, ',') FROM genroc._instances" 'succeeded "woke"'

# by now the launcher has checked tick_none ten times and more (a timer of
# 1 s fired at 100 ms intervals)
said_once() {
  local said fatal
  said=$(grep -c 'no ticker for database "tick_none": it does not exist' "$GENROC_PGDIR/server.log")
  fatal=$(grep -c 'FATAL:  database "tick_none" does not exist' "$GENROC_PGDIR/server.log")
  echo "said $said times, FATAL $fatal times"
  [ "$said" -eq 1 ] && [ "$fatal" -eq 0 ]
}
check "a named database that does not exist is said once, without a FATAL restart loop" said_once
q -c "CREATE DATABASE tick_none" >/dev/null
check "... and gets its ticker once it is made" wait_for 30 \
  "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'genroc ticker' AND datname = 'tick_none'" "1"
check "... which the log says" grep -q 'database "tick_none" can be ticked now' "$GENROC_PGDIR/server.log"

check "who ticks: the ticker alone, named by its backend type (genroc.tickers)" wait_for 10 \
  "SELECT string_agg(ticked_by || ':' || kind, ',') FROM genroc.tickers() WHERE ago_ms < 5000" 'genroc ticker:ticker'

later() {
  q -d tick_b -c "CREATE EXTENSION genroc" -c "SELECT 1 FROM genroc.define('nap', '$def')" \
    -c "SELECT 1 FROM genroc.start('nap', '{}')" >/dev/null &&
    DB=tick_b wait_for 60 "SELECT status FROM genroc._instances" succeeded
}
check "a named database without the extension is waited for, then ticked" later

# a genroc worker ticking beside the ticker: both are named, genctl shows both
bin=${GENROC_BIN:-build/genroc}
if [ -x "$bin" ] && [ -x "$(dirname "$bin")/genctl" ]; then
  url="host=$PGHOST port=$PGPORT user=$PGUSER dbname=tick_a"
  "$bin" worker --database "$url" --worker-id tb --tick-interval 200ms >"$GENROC_PGDIR/worker.log" 2>&1 &
  wpid=$!
  check "who ticks: the ticker and a binary by its worker id" wait_for 30 \
    "SELECT string_agg(ticked_by || ':' || kind, ',' ORDER BY kind) FROM genroc.tickers() WHERE ago_ms < 5000" \
    'genroc worker tb:binary,genroc ticker:ticker'
  genctl_both() {
    local out
    out=$("$(dirname "$bin")/genctl" --database "$url" tickers) || return 1
    echo "$out"
    grep -q '^genroc worker tb  *binary ' <<<"$out" && grep -q '^genroc ticker  *ticker ' <<<"$out"
  }
  check "genctl tickers lists both" genctl_both
  kill -TERM "$wpid"; wait "$wpid"
else
  n=$((n + 1)); echo "ok $n # SKIP who ticks with a binary: $bin is not built"
fi

# 200 timers due at once, the ticker and four sessions ticking together
q -d tick_a -c "SELECT count(*) FROM generate_series(1, 200) g, genroc.start('nap', jsonb_build_object('g', g))" >/dev/null
for i in 1 2 3 4; do
  (for j in $(seq 1 40); do q -d tick_a -c "SELECT genroc.tick(50)" >/dev/null 2>&1; sleep 0.05; done) &
done
check "ticking from sessions alongside the ticker: every instance ends" wait_for 90 \
  "SELECT count(*) FILTER (WHERE status = 'succeeded') || '/' || count(*) FROM genroc._instances" "201/201"
wait
check "... and each timer fired once (one wait_ended entry each, the same log for all)" wait_for 5 \
  "SELECT count(DISTINCT c) || ' ' || min(w) || ' ' || max(w) FROM (SELECT count(*) AS c,
     count(*) FILTER (WHERE event = 'wait_ended') AS w FROM genroc._log GROUP BY instance_id) x" "1 1 1"
check "no ticker error in the server log" sh -c "! grep -E 'genroc ticker.*(ERROR|exited)|ERROR.*tick' '$GENROC_PGDIR/server.log'"
echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
