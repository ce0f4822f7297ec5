#!/usr/bin/env bash
# examples.sh — the activity workers of examples/ (docs/handlers.md "Writing a worker
# in your own language") against real servers (issue 19):
#   activity_worker.py  over HTTP, against a `genroc serve` on a SQLite file
#   activity_worker.sh  over SQL (psql), against a throwaway PostgreSQL, as a
#                       login role with genroc_worker only
# Each does three tasks of examples/greet.json; every instance must end
# succeeded with the worker's greeting.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description command...
  local what=$1 out; shift
  if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; echo "$out" | sed 's/^/# /' | head -40; fi
}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-examples.XXXXXX")
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  [ -n "${GENROC_PGDIR:-}" ] && bash test/pgcluster.sh stop "$GENROC_PGDIR"
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- over HTTP: examples/activity_worker.py against genroc serve (SQLite)
port=$(( 20000 + RANDOM % 12000 ))
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$(( 20000 + RANDOM % 12000 )); done
url=http://127.0.0.1:$port
"$ROOT/$BUILD/genroc" serve --database "$WORK/http.db" --listen "127.0.0.1:$port" --worker-id ex-serve \
  >"$WORK/serve.log" 2>&1 &
serve_pid=$!
up() { for _ in $(seq 1 150); do curl -sf "$url/healthz" >/dev/null && return 0; sleep 0.2; done; cat "$WORK/serve.log"; return 1; }
check "genroc serve answers /healthz" up
http_worker() {
  curl -sf -XPOST "$url/api/definitions" -H 'Content-Type: application/json' \
    -d "$(jq -c '{name: "greet", definition: .}' examples/greet.json)" >/dev/null || return 1
  local who ids=()
  for who in ann bob cy; do
    ids+=("$(curl -sf -XPOST "$url/api/instances" -H 'Content-Type: application/json' -d '{"definition":"greet","input":{"who":"'$who'"}}' |
      jq -r .instance_id)") || return 1
  done
  timeout 60 python3 examples/activity_worker.py --url "$url" --activity greet --worker py-test \
    --max-tasks 3 --poll 0.2 || return 1
  local got
  got=$(for id in "${ids[@]}"; do curl -sf "$url/api/instances/$id" | jq -r '.status + " " + .output.greeting.text'; done |
    paste -sd, -)
  [ "$got" = "succeeded hello ann,succeeded hello bob,succeeded hello cy" ] || { echo "got: $got"; return 1; }
}
check "examples/activity_worker.py does three greet tasks over HTTP" http_worker

# ---- over SQL: examples/activity_worker.sh against PostgreSQL
env_lines=$(bash test/pgcluster.sh start) || { not_ok "a throwaway PostgreSQL"; exit 1; }
eval "$env_lines"
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
sql_worker() {
  q -c "CREATE DATABASE ex" -c "CREATE ROLE ex_app LOGIN" -c "CREATE ROLE ex_worker LOGIN" || return 1
  q -d ex -c "CREATE EXTENSION genroc" -c "GRANT genroc_user TO ex_app" -c "GRANT genroc_worker TO ex_worker" ||
    return 1
  local app="postgresql://ex_app@127.0.0.1:$PGPORT/ex"
  printf '%s\n' "SELECT 1 FROM genroc.define('greet', :'def');" "SELECT genroc.start('greet', jsonb_build_object('who', w))
    FROM unnest(ARRAY['ann', 'bob', 'cy']) w;" | q -d "$app" -v def="$(cat examples/greet.json)" >/dev/null || return 1
  DATABASE_URL="postgresql://ex_worker@127.0.0.1:$PGPORT/ex" WORKER_ID=sh-test POLL=0.2 \
    timeout 60 sh examples/activity_worker.sh 3 || return 1
  local got
  got=$(q -d "$app" -c "SELECT string_agg(status || ' ' || (genroc.get_instance(id) #>> '{output,greeting,text}'),
                                   ',' ORDER BY id) FROM genroc.instances")
  [ "$got" = "succeeded hello ann,succeeded hello bob,succeeded hello cy" ] || { echo "got: $got"; return 1; }
}
check "examples/activity_worker.sh does three greet tasks over SQL, as a genroc_worker role" sql_worker

echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
