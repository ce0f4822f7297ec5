#!/usr/bin/env bash
# metrics_scrape.sh — what one GET /metrics scrape costs: a throwaway
# cluster with N instances run to their end through the engine (claim and
# complete, so each has its log rows) over DEFS definitions, READY of them
# left ready and RUNNING leased, then `genroc api` scraped M times in a row;
# prints the median and the max time of a scrape (curl's time_total), and
# what genroc.metrics() alone costs in the server (the backend's CPU and the
# wall time per call, as an operator and as a worker role).
#
#   bash bench/metrics_scrape.sh                       # N=5000 M=50
#   N=20000 M=100 bash bench/metrics_scrape.sh
#   GENROC=/path/to/genroc GENROC_FLAGS="--metrics-cache 0" bash bench/metrics_scrape.sh
#
# GENROC_FLAGS go to `genroc api` (e.g. --metrics-cache 0: every scrape reads
# the database; the default cache serves repeated scrapes from memory).
# Needs the extension installed (make install; PGBIN for a private copy).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-5000}
M=${M:-50}
DEFS=${DEFS:-20}
READY=${READY:-300}
RUNNING=${RUNNING:-50}
GENROC=${GENROC:-$ROOT/build/genroc}
GENROC_FLAGS=${GENROC_FLAGS:-}
. "$ROOT/bench/lib.sh"
bench_cluster genroc-metrics
psql -X -q -c "CREATE DATABASE bench"
Q() { psql -X -q -At -d bench -v ON_ERROR_STOP=1 "$@"; }
Q -c "CREATE EXTENSION genroc" >/dev/null
Q <<SQL >/dev/null
SELECT genroc.define('job' || d, '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:bench","End":true}}}')
FROM generate_series(1, $DEFS) d;
SELECT genroc.worker_register('w', '{}');
SQL
# N instances in calls of 1000 per definition in turn; all but READY+RUNNING
# claimed and completed (each its own transaction, as a worker's)
made=0 d=1
while [ "$made" -lt "$N" ]; do
  b=$(( N - made < 1000 ? N - made : 1000 ))
  Q -c "SELECT count(*) FROM genroc.start_many('job$d', (SELECT jsonb_agg(jsonb_build_object('n', g)) FROM generate_series(1, $b) g))" >/dev/null
  made=$(( made + b )); d=$(( d % DEFS + 1 ))
done
Q <<SQL >/dev/null
DO \$\$
DECLARE
	v record;
BEGIN
	FOR i IN 1..greatest($N - $READY - $RUNNING, 0) LOOP
		SELECT * INTO STRICT v FROM genroc.claim('w', '{default}', 1);
		PERFORM genroc.complete(v.instance_id, v.epoch, jsonb_build_object('ok', i));
		IF i % 500 = 0 THEN COMMIT; END IF;
	END LOOP;
END;
\$\$;
SELECT count(*) FROM genroc.claim('w', '{default}', $RUNNING);
VACUUM ANALYZE;
SQL
echo "instances: $(Q -c "SELECT string_agg(status || ' ' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM genroc._instances GROUP BY 1) s"); log rows: $(Q -c "SELECT count(*) FROM genroc._log")"

# genroc.metrics() in the server alone: the backend's CPU per call over 20
# calls (/proc, superuser), as the superuser (every instance counted and
# named, like an operator) and as a role with genroc_worker alone (every
# instance counted, its own named: a worker's --metrics-listen)
cpu_per_call() { # role or empty
  Q <<SQL
CREATE TEMP TABLE m AS SELECT (SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint
  FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) AS ticks, clock_timestamp() AS t;
${1:+SET ROLE $1;}
DO \$\$ BEGIN FOR i IN 1..20 LOOP PERFORM genroc.metrics(50); END LOOP; END \$\$;
RESET ROLE;
SELECT round(((SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint
  FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) - m.ticks) * 10.0 / 20, 1) || ' ms CPU, ' ||
  round(extract(epoch FROM clock_timestamp() - m.t)::numeric * 1000 / 20, 1) || ' ms wall' FROM m;
SQL
}
Q -c "CREATE ROLE bench_metrics_worker IN ROLE genroc_worker" >/dev/null
echo "genroc.metrics() per call, as an operator: $(cpu_per_call); as a worker role: $(cpu_per_call bench_metrics_worker)"

# the binary, scraped M times in a row
url="postgresql://postgres@127.0.0.1:$PGPORT/bench"
# shellcheck disable=SC2086
"$GENROC" api --database "$url" --listen 127.0.0.1:0 $GENROC_FLAGS >"$WORK/api.log" 2>&1 &
api=$!
trap 'kill $api 2>/dev/null || true; bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*HTTP API listening.*listen=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/api.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "genroc api did not start:"; cat "$WORK/api.log"; exit 1; }
curl -s -o /dev/null "http://127.0.0.1:$port/metrics"	# the connection pool warmed
for _ in $(seq 1 "$M"); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"
done >"$WORK/times"
printf 'GET /metrics, %s scrapes (%s %s): median %.1f ms, max %.1f ms\n' "$M" "$(basename "$GENROC")" "${GENROC_FLAGS:-(defaults)}" \
  "$(median <"$WORK/times" | awk '{print $1 * 1000}')" "$(sort -n "$WORK/times" | tail -1 | awk '{print $1 * 1000}')"
