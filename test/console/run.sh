#!/usr/bin/env bash
# run.sh — the console suite: genroc's web console in a real browser.
#
#   bash test/console/run.sh          (test/run-all.sh runs it as suite "console")
#
# For each store — a SQLite file, and PostgreSQL when GENROC_TEST_PG_URL names a
# cluster (run-all.sh's throwaway one) — it mints an admin and a reader token
# with `genroc token create`, starts `genroc serve --auth` on a free loopback
# port, and runs console_test.mjs: headless Chromium (Debian's package) driven
# by playwright-core (web/package-lock.json) signs in, filters, pages, opens
# instances, reads their graphs, cancels, retries, resumes and emits from the
# page, and checks each result in the database with SQL (sqlite3 / psql).
# It also checks that the committed web/dist/ is what web/src/ builds to.
# Prints TAP lines (ok / not ok); screenshots go to $ARTIFACTS
# (default build/artifacts/console/).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
ARTIFACTS=${ARTIFACTS:-$ROOT/$BUILD/artifacts/console}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
mkdir -p "$ARTIFACTS"

[ -x "$BUILD/genroc" ] || { echo "not ok - $BUILD/genroc is not built"; exit 1; }
[ -n "$CHROMIUM" ] || { echo "not ok - no chromium (scripts/deps.sh installs Debian's)"; exit 1; }
command -v node >/dev/null || { echo "not ok - no node (scripts/deps.sh installs it)"; exit 1; }
# The test-only packages, exactly as locked (nothing else is fetched; the
# console itself is served from the binary).
if [ ! -d web/node_modules/playwright-core ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error) >&2 || { echo "not ok - npm ci in web/"; exit 1; }
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The committed bundle is the one the sources build to (esbuild is
# deterministic for the locked versions).
node web/build.mjs "$tmp/dist" && if diff -r -q web/dist "$tmp/dist" >&2; then
  echo "ok - web/dist/ is what web/src/ builds to"
else
  echo "not ok - web/dist/ differs from a build of web/src/: run node web/build.mjs and commit web/dist/"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

run_store() { # name (sqlite|postgres) database
  local name=$1 db=$2; shift 2
  local admin reader port log=$ARTIFACTS/genroc-$name.log
  admin=$("$BUILD/genroc" token create --database "$db" --name console-admin --permissions admin 2>>"$log" | tail -1)
  reader=$("$BUILD/genroc" token create --database "$db" --name console-reader --permissions reader 2>>"$log" | tail -1)
  if [[ $admin != grt_* || $reader != grt_* ]]; then echo "not ok - $name: genroc token create"; return; fi
  port=$(free_port)
  "$BUILD/genroc" serve --database "$db" --auth --listen "127.0.0.1:$port" --worker-id "console-$name" \
    --tick-interval 200ms --poll-interval 200ms >>"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    sleep 0.1
  done
  local server=$!
  STORE=$name BASE="http://127.0.0.1:$port" ADMIN_TOKEN=$admin READER_TOKEN=$reader CHROMIUM=$CHROMIUM \
    ARTIFACTS=$ARTIFACTS SQL_KIND=$name SQL_TARGET=$db GENCTL=$BUILD/genctl node test/console/console_test.mjs
  kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null
}

run_store sqlite "$tmp/console.db"
if [ -n "${GENROC_TEST_PG_URL:-}" ]; then
  pg_db=genroc_console_$$
  base=${GENROC_TEST_PG_URL%/*}
  if psql -X -q "$base/postgres" -c "CREATE DATABASE $pg_db${GENROC_TEST_TEMPLATE:+ TEMPLATE $GENROC_TEST_TEMPLATE}" &&
    psql -X -q "$base/$pg_db" -c "CREATE EXTENSION IF NOT EXISTS genroc"; then
    run_store postgres "$base/$pg_db"
    psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null
  else
    echo "not ok - postgres: could not make database $pg_db"
  fi
fi
