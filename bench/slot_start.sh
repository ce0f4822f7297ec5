#!/usr/bin/env bash
# slot_start.sh — how long a claimed task waits for its handler to start,
# with mixed short and long tasks on one worker.  A benchmark, not a test:
# per binary it prints the tasks and their claim -> start delays, p50, p99
# and max, in milliseconds.
#
#   bash bench/slot_start.sh                                  # build/genroc
#   BINS="/old/genroc build/genroc" bash bench/slot_start.sh  # before / after
#   WAVES=40 BATCH=6 CONCURRENCY=8 bash bench/slot_start.sh
#
# WAVES times, GAP seconds apart, genroc.start_many starts BATCH tasks at
# once (so one claim takes them together); in each wave the first LONG tasks
# sleep LONG_S seconds and the others SHORT_S.  One `genroc worker
# --concurrency CONCURRENCY` runs them with a handler process (bash) that
# first writes its start time ($EPOCHREALTIME); the claim time is the
# task_started row of the instance log (the claim's transaction).  Each
# binary gets a fresh database of one throwaway PostgreSQL
# (test/pgcluster.sh).  Needs the extension installed (make install; with a
# private PostgreSQL copy, set PGBIN as test/pgcluster.sh reads it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WAVES=${WAVES:-20} BATCH=${BATCH:-6} GAP=${GAP:-0.5} CONCURRENCY=${CONCURRENCY:-8}
LONG=${LONG:-2} LONG_S=${LONG_S:-2} SHORT_S=${SHORT_S:-0.05}
BINS=${BINS:-$ROOT/${BUILD:-build}/genroc}
env_lines=$(bash "$ROOT/test/pgcluster.sh" start)
eval "$env_lines"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-slotstart.XXXXXX")
chmod 755 "$WORK"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"
}
trap cleanup EXIT
cat >"$WORK/h.sh" <<'SH'
#!/usr/bin/env bash
t=$EPOCHREALTIME
input=$(cat)
echo "$GENROC_INSTANCE_ID $t" >>"$SLOT_STARTS"
secs=$(printf '%s' "$input" | sed -n 's/.*"secs":\([0-9.]*\).*/\1/p')
sleep "${secs:-0}"
echo '{}'
SH
chmod 755 "$WORK/h.sh"
printf '{"handlers":{"h":{"command":["%s"],"sha256":"%s"}}}\n' "$WORK/h.sh" \
  "$(sha256sum "$WORK/h.sh" | cut -d' ' -f1)" >"$WORK/handlers.json"
inputs=$(for i in $(seq 1 "$BATCH"); do
  if [ "$i" -le "$LONG" ]; then printf '{"secs":%s}\n' "$LONG_S"; else printf '{"secs":%s}\n' "$SHORT_S"; fi
done | paste -sd, -)
printf '%-40s %6s %8s %8s %8s\n' binary tasks p50_ms p99_ms max_ms
i=0
for bin in $BINS; do
  i=$((i + 1)); db=slot_$i
  psql -X -q -c "CREATE DATABASE $db" && psql -X -q -d "$db" -c "CREATE EXTENSION genroc"
  url="postgresql://$PGUSER@127.0.0.1:$PGPORT/$db"
  psql -X -q -d "$db" -c "SELECT genroc.define('mixed', '{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"handler:h\",\"End\":true}}}')" >/dev/null
  : >"$WORK/starts$i"
  SLOT_STARTS="$WORK/starts$i" "$bin" worker --database "$url" --worker-id "slot-$i" --handlers "$WORK/handlers.json" \
    --concurrency "$CONCURRENCY" --log-level warn >"$WORK/w$i.log" 2>&1 &
  pids=($!)
  # one task first: the worker then waits with an idle thread, as in use
  psql -X -q -d "$db" -c "SELECT genroc.start('mixed', '{\"secs\":0}')" >/dev/null
  until [ "$(psql -X -qAt -d "$db" -c "SELECT count(*) FROM genroc._instances WHERE status = 'succeeded'")" -ge 1 ]; do sleep 0.2; done
  for w in $(seq 1 "$WAVES"); do
    psql -X -q -d "$db" -c "SELECT genroc.start_many('mixed', '[$inputs]')" >/dev/null
    sleep "$GAP"
  done
  total=$((WAVES * BATCH + 1)) deadline=$((SECONDS + 600))
  while [ "$(psql -X -qAt -d "$db" -c "SELECT count(*) FROM genroc._instances WHERE status = 'succeeded'")" -lt "$total" ]; do
    [ $SECONDS -ge $deadline ] && { echo "$bin: not done after 600 s" >&2; break; }
    sleep 0.5
  done
  kill -TERM "${pids[0]}"; wait "${pids[0]}" || true
  pids=()
  psql -X -qAt -d "$db" -F ' ' -v ON_ERROR_STOP=1 <<SQL
CREATE TEMP TABLE starts (instance_id bigint, t double precision);
\copy starts FROM '$WORK/starts$i' WITH (DELIMITER ' ')
WITH d AS (
  SELECT (s.t - extract(epoch FROM l.at)) * 1000 AS ms
  FROM starts s JOIN genroc._log l ON l.instance_id = s.instance_id AND l.event = 'task_started'
)
SELECT rpad('$bin', 40), lpad(count(*)::text, 6),
  lpad(round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1)::text, 8),
  lpad(round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1)::text, 8),
  lpad(round(max(ms)::numeric, 1)::text, 8)
FROM d;
SQL
done
