#!/usr/bin/env bash
# claim.sh — what a claim costs the server, on one throwaway
# cluster, from one session with no client in between (a DO block, each
# call committed on its own):
#   one    N claims of one task from a backlog of N (a quiet queue's claim,
#          the one between a start and its handler in W3)
#   batch  N tasks as W1's tuned driver takes them: a claim of B, then one
#          genroc.complete_many of the B
# Prints each run's tasks/s, the backend's CPU per task (utime + stime from
# /proc, read by the session itself: superuser) and WAL bytes per task,
# then per way the medians.  Two versions are compared by installing one,
# running, installing the other (make install), in turns.
#
#   bash bench/claim.sh                      # N=5000 B=100 ROUNDS=3
#   N=20000 B=100 ROUNDS=5 bash bench/claim.sh
#
# Needs the extension installed (make install).  synchronous_commit on and
# genroc.durability at its default (essential), as bench/run-peers.sh runs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-5000}
B=${B:-100}
ROUNDS=${ROUNDS:-3}
[ "$N" -ge "$B" ] && [ "$B" -ge 1 ] && [ "$B" -le 10000 ] && [ "$N" -le 1000000 ] ||
  { echo "claim.sh: need 1 <= B <= 10000, B <= N <= 1000000" >&2; exit 2; }
. "$ROOT/bench/lib.sh"
bench_cluster genroc-claim
psql -X -q -c "CREATE DATABASE bench"
Q() { psql -X -q -At -d bench -v ON_ERROR_STOP=1 "$@"; }
Q -c "CREATE EXTENSION genroc" >/dev/null
Q >/dev/null <<'SQL'
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:bench","End":true}}}');
SELECT genroc.worker_register('w', '{"lease_duration":"120s","host":"bench"}');
SQL

# One run: N tasks started (calls of 1,000), then taken the given way;
# prints "tasks/s cpu_us_per_task wal_bytes_per_task".
run() { # way
  local body
  case "$1" in
    one) body="PERFORM count(*) FROM genroc.claim('w', '{default}', 1); COMMIT;" ;;
    batch) body="SELECT array_agg(c.instance_id), array_agg(c.epoch) INTO v_ids, v_eps
                   FROM genroc.claim('w', '{default}', $B) c;
                 COMMIT;
                 PERFORM count(*) FROM genroc.complete_many(v_ids, v_eps,
                   array_fill('{}'::jsonb, ARRAY[cardinality(v_ids)]));
                 COMMIT;" ;;
  esac
  local calls=$N
  [ "$1" = batch ] && calls=$((N / B))
  Q <<SQL
DO \$\$
DECLARE k int;
BEGIN
  FOR k IN 0 .. ($N + 999) / 1000 - 1 LOOP
    PERFORM count(*) FROM genroc.start_many('one',
      (SELECT jsonb_agg(jsonb_build_object('i', g)) FROM generate_series(1, least(1000, $N - k * 1000)) g));
    COMMIT;
  END LOOP;
END \$\$;
CHECKPOINT;
$(mark_sql)
DO \$\$
DECLARE k int; v_ids bigint[]; v_eps bigint[];
BEGIN
  FOR k IN 1 .. $calls LOOP
    $body
  END LOOP;
END \$\$;
$(rates_sql "$N")
SQL
  # the next run starts on tables without this one's rows
  Q -c "DELETE FROM genroc._log" -c "DELETE FROM genroc._instances" -c "VACUUM genroc._instances, genroc._log" >/dev/null
}

ways_in_rounds "one batch" run task
