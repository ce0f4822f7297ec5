#!/usr/bin/env bash
# floor.sh — how much of a one-task job's server time is genroc's code and
# how much its table design (what a move of the hot path out of
# PL/pgSQL can win at best, and what only a new table layout can).  Three
# ways of running N one-task jobs (claim one, commit, report it, commit) with
# C pgbench clients, in turns on one throwaway cluster:
#   api    genroc.claim and genroc.complete, the SQL API as a worker calls it
#   rows   the same row changes and log rows written by plain SQL on
#          genroc's own tables (no PL/pgSQL, no interpreter call): the claim's
#          UPDATE and task_started row, the report's UPDATE and its
#          task_succeeded and succeeded rows — the most a hot path in C with
#          today's tables and log could save
#   jobs   a queue table of the kind graphile-worker keeps (one partial
#          index, no log; claim = UPDATE ... SKIP LOCKED, done = DELETE)
#   apiB   genroc.claim of B tasks, then genroc.complete_many of the B
#          reports: a batching worker (B=100, as the peers' tuned variants)
#   jobsB  the jobs table, B at a time (graphile-worker's local queue and
#          batched completions)
# Each client runs its statements prepared (pgbench -M prepared), as a
# worker's session keeps its plans.  The jobs are made before each run and not timed (genroc.start_many for
# api and rows, one INSERT for jobs).  Prints per run jobs/s, the server's
# CPU per job (the postmaster and its children, from /proc) and WAL bytes per
# job, then the medians per way.
#
#   bash bench/floor.sh                     # N=16000 C=16 B=100 ROUNDS=3
#   N=32000 C=4 ROUNDS=5 WAYS="api apiB" bash bench/floor.sh
#
# Needs the extension installed (make install) and pgbench (postgresql-contrib
# or the server package).  synchronous_commit on; genroc.durability at its
# default (essential: these reports are not flushed, nor are the others').
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-16000}
C=${C:-16}
B=${B:-100}
ROUNDS=${ROUNDS:-3}
WAYS=${WAYS:-api rows jobs apiB jobsB}
[ $((N % (C * B))) -eq 0 ] || { echo "floor.sh: N must be a multiple of C * B" >&2; exit 2; }
PGBIN=${PGBIN:-$(pg_config --bindir)}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-floor.XXXXXX")
chmod 755 "$WORK"
eval "$(bash "$ROOT/test/pgcluster.sh" start "$WORK/pg")"
cleanup() { bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
psql -X -q -c "CREATE DATABASE bench"
Q() { psql -X -q -At -d bench -v ON_ERROR_STOP=1 "$@"; }
Q >/dev/null <<SQL
CREATE EXTENSION genroc;
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:bench","End":true}}}');
SELECT genroc.worker_register('w' || g, '{"queues":["default"]}') FROM generate_series(0, $C - 1) g;
CREATE TABLE jobs (id bigserial PRIMARY KEY, queue text NOT NULL, payload json NOT NULL,
  run_at timestamptz NOT NULL DEFAULT now(), attempts int NOT NULL DEFAULT 0,
  locked_at timestamptz, locked_by text);
CREATE INDEX jobs_ready ON jobs (queue, run_at, id) WHERE locked_at IS NULL;
SQL

cat >"$WORK/api.sql" <<'SQL'
SELECT instance_id AS iid, epoch AS ep FROM genroc.claim('w' || :client_id::text, '{default}', 1) \gset
SELECT genroc.complete(:iid::bigint, :ep::bigint, '{"ok": 1}');
SQL
cat >"$WORK/rows.sql" <<'SQL'
WITH c AS (
  SELECT i.id FROM genroc._instances i
  WHERE i.status = 'ready' AND i.queue = 'default' AND i.eligible_at <= now()
  ORDER BY i.priority, i.eligible_at, i.id LIMIT 1 FOR UPDATE SKIP LOCKED),
u AS (
  UPDATE genroc._instances i SET status = 'running', lease_owner = 'w' || :client_id::text,
    lease_epoch = (random() * 9e18)::bigint, lease_expires = now() + interval '30 s', updated_at = now()
  WHERE i.id = ANY (ARRAY(SELECT c.id FROM c))
  RETURNING i.id, i.lease_epoch, i.state, i.attempt, i.resource, i.task_input),
l AS (
  INSERT INTO genroc._log (instance_id, at, event, state, detail)
  SELECT u.id, now(), 'task_started', u.state,
         jsonb_build_object('worker', 'w' || :client_id::text, 'epoch', u.lease_epoch, 'attempt', u.attempt)
  FROM u)
SELECT id AS iid, lease_epoch AS ep FROM u \gset
WITH u AS (
  UPDATE genroc._instances i SET status = 'succeeded', output = '{"ok": 1}', state_input = NULL,
    task_input = NULL, resource = NULL, lease_owner = NULL, lease_expires = NULL,
    ended_at = now(), updated_at = now()
  WHERE i.id = :iid::bigint AND i.lease_epoch = :ep::bigint AND i.status = 'running'
  RETURNING i.id, i.state)
INSERT INTO genroc._log (instance_id, at, event, state, detail)
SELECT u.id, now(), e.event, u.state, e.detail FROM u,
  (VALUES (1, 'task_succeeded', jsonb_build_object('worker', 'w' || :client_id::text, 'epoch', :ep::bigint, 'output', '{"ok": 1}'::jsonb)),
          (2, 'succeeded', '{"output": {"ok": 1}}'::jsonb)) AS e (k, event, detail)
ORDER BY e.k;
SQL
# the batched ways: a claim of B tasks, then their reports in one statement
cat >"$WORK/apiB.sql" <<SQL
SELECT array_agg(instance_id) AS iids, array_agg(epoch) AS eps FROM genroc.claim('w' || :client_id::text, '{default}', $B) \\gset
SELECT count(*) FROM genroc.complete_many(:iids::bigint[], :eps::bigint[], array_fill('{"ok": 1}'::jsonb, ARRAY[$B]));
SQL
cat >"$WORK/jobsB.sql" <<SQL
WITH c AS (
  SELECT j.id FROM jobs j WHERE j.locked_at IS NULL AND j.queue = 'default' AND j.run_at <= now()
  ORDER BY j.run_at, j.id LIMIT $B FOR UPDATE SKIP LOCKED),
u AS (
  UPDATE jobs j SET locked_at = now(), locked_by = 'w' || :client_id::text, attempts = j.attempts + 1
  WHERE j.id = ANY (ARRAY(SELECT c.id FROM c)) RETURNING j.id)
SELECT array_agg(u.id) AS jids FROM u \\gset
DELETE FROM jobs WHERE id = ANY (:jids::bigint[]);
SQL
cat >"$WORK/jobs.sql" <<'SQL'
WITH c AS (
  SELECT j.id FROM jobs j WHERE j.locked_at IS NULL AND j.queue = 'default' AND j.run_at <= now()
  ORDER BY j.run_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE jobs j SET locked_at = now(), locked_by = 'w' || :client_id::text, attempts = j.attempts + 1
WHERE j.id = ANY (ARRAY(SELECT c.id FROM c)) RETURNING j.id AS jid \gset
DELETE FROM jobs WHERE id = :jid::bigint;
SQL

fill() { # way: N jobs ready
  case "$1" in
    api | rows | apiB)
      Q -c "DO \$\$ BEGIN FOR k IN 0 .. $N / 1000 LOOP
              PERFORM genroc.start_many('one', (SELECT coalesce(jsonb_agg(jsonb_build_object('i', g)), '[]')
                FROM generate_series(k * 1000 + 1, least($N, k * 1000 + 1000)) g)); COMMIT; END LOOP; END \$\$" ;;
    jobs | jobsB)
      Q -c "INSERT INTO jobs (queue, payload) SELECT 'default', json_build_object('i', g) FROM generate_series(1, $N) g" ;;
  esac
  Q -c "CHECKPOINT" -c "VACUUM ANALYZE"
}
PM=$(head -1 "$GENROC_PGDATA/postmaster.pid")
# CPU ticks of the server: the postmaster, its children reaped, and those alive
server_ticks() {
  local t k
  t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$PM/stat")
  for k in $(pgrep -P "$PM"); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$k/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
TICK=$(getconf CLK_TCK)

declare -A RES
printf '%-6s %5s | %8s %12s %10s\n' way round jobs/s "cpu/job us" "WAL/job"
for r in $(seq 1 "$ROUNDS"); do
  for way in $WAYS; do
    per=1; case "$way" in *B) per=$B ;; esac
    fill "$way"
    lsn0=$(Q -c "SELECT pg_current_wal_insert_lsn()")
    sleep 0.5 # the backends of the fill and of that query reaped: their CPU is not the run's
    t0=$(server_ticks)
    s0=$(date +%s.%N)
    "$PGBIN/pgbench" -n -r -M prepared -c "$C" -j 2 -t $((N / C / per)) -f "$WORK/$way.sql" bench >"$WORK/pgbench.log" 2>&1 \
      || { cat "$WORK/pgbench.log" >&2; exit 1; }
    s1=$(date +%s.%N)
    [ -n "${VERBOSE:-}" ] && cat "$WORK/pgbench.log" >&2
    sleep 0.2 # the clients' backends reaped
    t1=$(server_ticks)
    wal=$(Q -c "SELECT round((pg_current_wal_insert_lsn() - '$lsn0') / $N.0)")
    line=$(awk -v n="$N" -v s0="$s0" -v s1="$s1" -v t="$((t1 - t0))" -v hz="$TICK" \
      'BEGIN { printf "%.0f %.0f", n / (s1 - s0), t / hz * 1e6 / n }')
    read -r rate cpu <<<"$line"
    printf '%-6s %5d | %8s %12s %10s\n' "$way" "$r" "$rate" "$cpu" "$wal"
    RES[$way]+="$rate $cpu $wal"$'\n'
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for way in $WAYS; do
  col() { printf '%s' "${RES[$way]}" | awk -v c="$1" 'NF {print $c}' | median; }
  printf 'median %-5s: %s jobs/s, %s us server CPU per job, %s WAL bytes per job\n' "$way" "$(col 1)" "$(col 2)" "$(col 3)"
done
