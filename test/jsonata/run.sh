#!/usr/bin/env bash
# run.sh — the jsonata_oracle ctest: installs the pinned reference (npm ci,
# from package-lock.json, into test/jsonata/node_modules, never used at run
# time) when it is missing, then runs difftest.js against jsonata_cli.
#   bash test/jsonata/run.sh build/test/jsonata/jsonata_cli [--seed N --count N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=$1; shift
if [ ! -f "$here/node_modules/jsonata/package.json" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node "$here/difftest.js" "$cli" "$@"
