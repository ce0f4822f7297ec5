#!/usr/bin/env bash
# rate_wake.sh — how close to its rate_limit a queue runs with real workers
# (issue 19, docs/sql-api.md "Waking on a rate window").  A benchmark, not a test: it
# prints, per binary, the tasks, the seconds from the first start to the
# last, and the start rate after the first window as a fraction of the limit.
#
#   bash bench/rate_wake.sh                      # build/genroc
#   BINS="/old/genroc build/genroc" bash bench/rate_wake.sh   # before / after
#   N=40 WORKERS=2 bash bench/rate_wake.sh
#   LIMIT=partition bash bench/rate_wake.sh       # a partition_rate_limit
#
# The queue default gets rate_limit 5/1500ms (LIMIT=partition: a
# partition_rate_limit 5/1500ms, and the tasks all start in one partition,
# with partition_concurrency N so that none waits for a slot); N genroc:noop
# tasks run on
# WORKERS `genroc worker` processes with --poll-interval 1s, each binary on a
# fresh database of one throwaway PostgreSQL (test/pgcluster.sh).  Needs the
# extension installed (make install; with a private PostgreSQL copy, set
# PGBIN as test/pgcluster.sh reads it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-40} WORKERS=${WORKERS:-2} LIMIT=${LIMIT:-queue}
case $LIMIT in
  queue) queue_options='{"rate_limit":{"count":5,"period":"1500ms"}}' start_options='{}' ;;
  partition) queue_options="{\"partition_concurrency\":$N,\"partition_rate_limit\":{\"count\":5,\"period\":\"1500ms\"}}"
             start_options='{"partition_key":"p"}' ;;
  *) echo "LIMIT must be queue or partition, not $LIMIT" >&2; exit 2 ;;
esac
BINS=${BINS:-$ROOT/${BUILD:-build}/genroc}
env_lines=$(bash "$ROOT/test/pgcluster.sh" start)
eval "$env_lines"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-ratewake.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"
}
trap cleanup EXIT
i=0
for bin in $BINS; do
  i=$((i + 1)); db=rate_$i
  psql -X -q -c "CREATE DATABASE $db" && psql -X -q -d "$db" -c "CREATE EXTENSION genroc"
  url="postgresql://$PGUSER@127.0.0.1:$PGPORT/$db"
  psql -X -q -d "$db" -c "SELECT genroc.queue_set('default', '$queue_options')" \
    -c "SELECT genroc.define('noop1', '{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"genroc:noop\",\"End\":true}}}')" >/dev/null
  pids=()
  for w in $(seq 1 "$WORKERS"); do
    "$bin" worker --database "$url" --worker-id "rate-$w" --poll-interval 1s --log-level warn >"$WORK/w$i-$w.log" 2>&1 &
    pids+=($!)
  done
  sleep 2
  psql -X -q -d "$db" -c "SELECT genroc.start('noop1', '{}', '$start_options') FROM generate_series(1, $N)" >/dev/null
  deadline=$((SECONDS + 180))
  while [ "$(psql -X -qAt -d "$db" -c "SELECT count(*) FROM genroc._instances WHERE status = 'succeeded'")" -lt "$N" ]; do
    [ $SECONDS -ge $deadline ] && { echo "$bin: not done after 180 s" >&2; break; }
    sleep 0.5
  done
  for p in "${pids[@]}"; do kill -TERM "$p"; done
  wait "${pids[@]}" || true
  pids=()
  psql -X -qAt -d "$db" -F ' ' -c "SELECT '$bin', '$LIMIT', count(*) AS tasks,
      round(extract(epoch FROM max(at) - min(at))::numeric, 2) AS span_s,
      round(((count(*) - 5) / extract(epoch FROM max(at) - min(at)))::numeric / (5 / 1.5), 3) AS of_limit
    FROM genroc._log WHERE event = 'task_started'"
done
