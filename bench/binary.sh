#!/usr/bin/env bash
# binary.sh — the `genroc worker` binary alone on PostgreSQL: N
# one-task (or, STEPS=3, three-task) instances of built-in genroc:noop tasks
# queued with one statement, then one `genroc worker` with --concurrency C
# for each C, timed until none is ready or running.  Prints per C: jobs/s
# (instances/s), the server's CPU per instance (utime + stime of the
# postgres processes from /proc) and the worker's, and with PROFILE=1 the
# functions with the most time (pg_stat_user_functions).
#
#   bash bench/binary.sh                      # N=10000, C in 1 4 16
#   N=20000 CONC="16" STEPS=3 bash bench/binary.sh
#
# Needs the extension installed (make install) and build/genroc (make).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-10000}
CONC=${CONC:-"1 4 16"}
STEPS=${STEPS:-1}
DURABILITY=${DURABILITY:-essential}
BIN=${BIN:-$ROOT/build/genroc}
[ -x "$BIN" ] || make -s -C "$ROOT" >/dev/null
[ -x "$BIN" ] || { echo "binary.sh: no executable at $BIN" >&2; exit 2; }
case $STEPS in 1 | 3) ;; *) echo "binary.sh: STEPS must be 1 or 3" >&2; exit 2 ;; esac

eval "$(bash "$ROOT/test/pgcluster.sh" start)"
trap 'bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR" >/dev/null' EXIT
psql -X -q -c "ALTER SYSTEM SET track_functions = 'pl'" -c "SELECT pg_reload_conf()" >/dev/null

# CPU seconds of a set of processes, from /proc (utime + stime, in ticks)
cpu_of() {
  local hz pid t sum=0
  hz=$(getconf CLK_TCK)
  for pid in "$@"; do
    t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true)	# it may have exited
    [ -n "$t" ] && sum=$((sum + t))
  done
  awk -v s="$sum" -v hz="$hz" 'BEGIN {printf "%.3f", s / hz}'
}
# Whether any instance is still open, asked on one session kept for the
# run: a psql started per look (ten a second) took CPU from the two cores
# the worker and the server share.
open_left() {
  echo "SELECT EXISTS (SELECT 1 FROM genroc._instances WHERE status IN ('queued', 'ready', 'running', 'waiting'));" >&"${LOOK[1]}"
  local ans
  read -r -t 30 ans <&"${LOOK[0]}" || { echo "binary.sh: no answer from the progress session" >&2; exit 1; }
  [ "$ans" = t ]
}

if [ "$STEPS" = 3 ]; then
  def='{"StartAt":"S1","States":{"S1":{"Type":"Task","Resource":"genroc:noop","Next":"S2"},"S2":{"Type":"Task","Resource":"genroc:noop","Next":"S3"},"S3":{"Type":"Task","Resource":"genroc:noop","End":true}}}'
else
  def='{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}'
fi
printf '%-5s %10s %10s %16s %16s\n' conc seconds "inst/s" "server cpu/inst" "worker cpu/inst"
for c in $CONC; do
  psql -X -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS b" -c "CREATE DATABASE b"
  psql -X -q -d b -c "CREATE EXTENSION genroc"
  psql -X -q -d b -c "SELECT genroc.define('bench', '$def')" >/dev/null
  psql -X -q -d b -c "SELECT count(*) FROM generate_series(1, $N) g, LATERAL genroc.start('bench', jsonb_build_object('i', g)) s" >/dev/null
  psql -X -q -d b -c "SELECT pg_stat_reset()" >/dev/null
  url="host=$PGHOST port=$PGPORT user=$PGUSER dbname=b"
  "$BIN" worker --database "$url" --concurrency "$c" --prefetch "${PREFETCH:-0}" --durability "$DURABILITY" \
    --worker-id "bench-binary-$c" --log-level warn &
  worker=$!
  coproc LOOK { psql -X -qAt -d b; }
  t0=$(date +%s.%N)
  s0=$(cpu_of $(pgrep -u postgres))
  while open_left; do
    # a worker that died (a BIN that cannot run, a crash) would leave the queue as it is
    kill -0 "$worker" 2>/dev/null || { echo "binary.sh: the worker exited before the queue was empty" >&2; exit 1; }
    sleep 0.1
  done
  t1=$(date +%s.%N)
  s1=$(cpu_of $(pgrep -u postgres))
  w1=$(cpu_of "$worker")
  kill "$worker"; wait "$worker" || true
  eval "exec ${LOOK[1]}>&-"; wait "$LOOK_PID" || true
  awk -v n="$N" -v c="$c" -v t="$(echo "$t1 - $t0" | bc -l)" -v s="$(echo "$s1 - $s0" | bc -l)" -v w="$w1" \
    'BEGIN {printf "%-5s %10.2f %10.0f %13.0f us %13.0f us\n", c, t, n / t, s * 1e6 / n, w * 1e6 / n}'
  if [ "${PROFILE:-0}" = 1 ]; then
    psql -X -d b -c "SELECT funcname, calls, round(total_time::numeric) AS total_ms, round(self_time::numeric) AS self_ms
                     FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 12"
  fi
done
