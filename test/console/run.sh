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

source test/lib/serve.sh
serve_scratch

# The committed bundle is the one the sources build to (esbuild is
# deterministic for the locked versions).
node web/build.mjs "$tmp/dist" && if diff -r -q web/dist "$tmp/dist" >&2; then
  echo "ok - web/dist/ is what web/src/ builds to"
else
  echo "not ok - web/dist/ differs from a build of web/src/: run node web/build.mjs and commit web/dist/"
fi

run_store() { # name (sqlite|postgres) database
  local name=$1 db=$2; shift 2
  local admin reader log=$ARTIFACTS/genroc-$name.log
  admin=$("$BUILD/genroc" token create --database "$db" --name console-admin --permissions admin 2>>"$log" | tail -1)
  reader=$("$BUILD/genroc" token create --database "$db" --name console-reader --permissions reader 2>>"$log" | tail -1)
  if [[ $admin != grt_* || $reader != grt_* ]]; then echo "not ok - $name: genroc token create"; return; fi
  serve_start "$log" --database "$db" --auth --worker-id "console-$name" \
    --tick-interval 200ms --poll-interval 200ms
  local server=$SERVE_PID
  STORE=$name BASE="http://127.0.0.1:$SERVE_PORT" ADMIN_TOKEN=$admin READER_TOKEN=$reader CHROMIUM=$CHROMIUM \
    ARTIFACTS=$ARTIFACTS SQL_KIND=$name SQL_TARGET=$db GENCTL=$BUILD/genctl node test/console/console_test.mjs
  kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null
}

run_store sqlite "$tmp/console.db"
serve_on_postgres genroc_console run_store
