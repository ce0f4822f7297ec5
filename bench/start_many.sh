#!/usr/bin/env bash
# start_many.sh — batched starts, the two ways a client can make them, in
# turns on one throwaway cluster: N starts of a
# one-task definition in calls of B inputs, each call its own transaction,
#   rows  genroc.start per row over jsonb_array_elements (the way before
#         start_many)
#   many  genroc.start_many(definition, inputs)
# Prints each run's starts/s, the backend's CPU per start (utime + stime
# from /proc, read by the session itself: superuser) and WAL bytes per start,
# then per way the medians and the ratio many / rows.
#
#   bash bench/start_many.sh                  # N=20000 B=1000 ROUNDS=5
#   N=50000 B=500 ROUNDS=3 bash bench/start_many.sh
#
# Needs the extension installed (make install).  synchronous_commit on and
# genroc.durability at its default (essential), as bench/run-peers.sh runs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-20000}
B=${B:-1000}
ROUNDS=${ROUNDS:-5}
[ "$N" -ge "$B" ] && [ "$B" -ge 1 ] && [ "$B" -le 10000 ] || { echo "start_many.sh: need 1 <= B <= 10000 and B <= N" >&2; exit 2; }
. "$ROOT/bench/lib.sh"
bench_cluster genroc-startmany
psql -X -q -c "CREATE DATABASE bench"
Q() { psql -X -q -At -d bench -v ON_ERROR_STOP=1 "$@"; }
Q -c "CREATE EXTENSION genroc" >/dev/null
Q -c "SELECT genroc.define('one', '{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"handler:bench\",\"End\":true}}}')" >/dev/null

# One run: N starts in calls of B, one session, each call committed on its
# own; prints "starts/s cpu_us_per_start wal_bytes_per_start".
run() { # way
  local call
  case "$1" in
    rows) call="SELECT count(*) FROM jsonb_array_elements(\$1) AS e(v), LATERAL genroc.start('one', e.v) AS s" ;;
    many) call="SELECT count(*) FROM genroc.start_many('one', \$1)" ;;
  esac
  Q <<SQL
$(mark_sql)
DO \$\$
DECLARE k int;
BEGIN
  FOR k IN 0 .. $N / $B - 1 LOOP
    EXECUTE \$q\$$call\$q\$ USING (SELECT jsonb_agg(jsonb_build_object('i', k * $B + g)) FROM generate_series(1, $B) g);
    COMMIT;
  END LOOP;
END \$\$;
$(rates_sql "$N")
SQL
}

ways_in_rounds "rows many" run start
read -r r1 c1 w1 <<<"${MEDIAN[rows]}"
read -r r2 c2 w2 <<<"${MEDIAN[many]}"
awk -v r1="$r1" -v r2="$r2" -v c1="$c1" -v c2="$c2" -v w1="$w1" -v w2="$w2" 'BEGIN {
  printf "many / rows: %.2fx the starts/s, %.2fx the server CPU per start, %.2fx the WAL per start\n", r2 / r1, c2 / c1, w2 / w1 }'
