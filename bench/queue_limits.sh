#!/usr/bin/env bash
# queue_limits.sh — what a claim (and a start) costs with queue limits on
# versus off, on a throwaway PostgreSQL.  A benchmark, not a test: it prints
# microseconds per call and asserts nothing.
#
#   bash bench/queue_limits.sh            # N=2000 calls per case
#   N=5000 bash bench/queue_limits.sh
#
# Cases (each on a fresh database, one claim of one task per transaction,
# driven by pgbench so each call is its own transaction as a worker's is):
#   off        the default queue, no limit
#   global     global_concurrency high enough never to refuse (the count and
#              the queue's row lock are paid, nothing waits)
#   rate       rate_limit high enough never to refuse (the window count, the
#              start row and its pruning are paid)
#   partition rate  tasks of 100 partition keys, with and without a
#              partition_rate_limit high enough never to refuse (the per-task
#              path: full-partition cut, try-lock and count per partition,
#              row lock, start row)
#   partition  starts with a partition_key (the admission: row lock,
#              holder count) against starts without
# Needs the extension installed (make install).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-2000}
env_lines=$(bash "$ROOT/test/pgcluster.sh" start)
eval "$env_lines"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-qbench.XXXXXX")
trap 'bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"' EXIT

# N ready tasks (start options: a SQL expression of g, the row number; the
# call depends on g so that it runs once per row).
setup_db() { # db queue_options [start_options]
  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $1" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -d "$1" >/dev/null <<SQL
CREATE EXTENSION genroc;
SET genroc.durability = 'none';
SELECT genroc.define('job', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}}');
SELECT genroc.queue_set('default', '$2');
SELECT genroc.worker_register('w', '{}');
SELECT count(*) FROM generate_series(1, $N) g,
  genroc.start('job', jsonb_build_object('n', g), ${3:-jsonb_build_object()});
ANALYZE;
SQL
}

# pgbench: $N transactions of one statement on one connection; prints us/call.
per_call() { # db sql
  echo "SET genroc.durability = 'none'; $2" > "$WORK/script.sql"
  pgbench -n -c 1 -t "$N" -f "$WORK/script.sql" "$1" 2>/dev/null \
    | awk '/latency average/ {printf "%.0f", $4 * 1000}'
}

claim="SELECT count(*) FROM genroc.claim('w', ARRAY['default'], 1);"
printf '%-34s %10s\n' "case" "us/call"
setup_db b_off '{}'
printf '%-34s %10s\n' "claim, no limit" "$(per_call b_off "$claim")"
setup_db b_global '{"global_concurrency": 1000000}'
printf '%-34s %10s\n' "claim, global_concurrency" "$(per_call b_global "$claim")"
setup_db b_rate '{"rate_limit": {"count": 1000000, "period": "1h"}}'
printf '%-34s %10s\n' "claim, rate_limit" "$(per_call b_rate "$claim")"
keys="jsonb_build_object('partition_key', 'k' || g % 100)"
setup_db b_keys_off '{"partition_concurrency": 1000000}' "$keys"
printf '%-34s %10s\n' "claim, 100 keys, no limit" "$(per_call b_keys_off "$claim")"
setup_db b_keys_rate \
  '{"partition_concurrency": 1000000, "partition_rate_limit": {"count": 1000000, "period": "1h"}}' "$keys"
printf '%-34s %10s\n' "claim, 100 keys, partition_rate" "$(per_call b_keys_rate "$claim")"
setup_db b_start '{"partition_concurrency": 1000000}'
printf '%-34s %10s\n' "start, no partition_key" \
  "$(per_call b_start "SELECT status FROM genroc.start('job', '{}', '{}');")"
printf '%-34s %10s\n' "start, partition_key (one key)" \
  "$(per_call b_start "SELECT status FROM genroc.start('job', '{}', '{\"partition_key\":\"app/prod\"}');")"
