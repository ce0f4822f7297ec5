#!/usr/bin/env bash
# run-peers.sh — genroc beside its peers (graphile-worker, pg-boss, DBOS), in one run,
# on one throwaway PostgreSQL, with the peers' own harness (../shared/bench-peers):
# genroc's SQL API driven from Node (peers/genroc.mjs), and for W1 and W2 the
# `genroc worker` binary running built-in genroc:noop tasks (peers/genroc-bin.mjs).
#
#   bash bench/run-peers.sh                 # W1 queue, W2 3-step workflows, W3 latency
#   ONLY=w1,w3 bash bench/run-peers.sh      # a subset
#   SYNC=off bash bench/run-peers.sh        # synchronous_commit off for the whole server
#   PEERS=genroc,genroc-bin bash bench/run-peers.sh   # some drivers only (bench/peers-ab.sh)
#   GENROC_BIN=FILE PGBIN=DIR OUT=DIR ...   # another genroc binary, PostgreSQL (with the
#                                           # extension installed) and results folder
#
# Needs the extension installed (make install) and the npm registry (npm ci of the
# harness's pinned versions).  Writes bench/results/peers-<UTC>/ and prints a table of
# figures and genroc's ratio to each peer.  Numbers vary 5-25 % between runs on these
# shared machines: compare within one run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS_SRC=${PEERS_SRC:-$ROOT/../shared/bench-peers}
ONLY=${ONLY:-w1,w2,w3}
SYNC=${SYNC:-on}
PEERS=${PEERS:-genroc,genroc-bin,graphile,pgboss,dbos}
want() { [[ ",$ONLY," == *",$1,"* ]]; }
peer() { [[ ",$PEERS," == *",$1,"* ]]; }

[ -d "$PEERS_SRC" ] || { echo "run-peers: no peers' harness at $PEERS_SRC (set PEERS_SRC)" >&2; exit 2; }
command -v node >/dev/null || { echo "run-peers: node is required" >&2; exit 2; }

RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/results/peers-$RUN}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-peers.XXXXXX")
cleanup() { [ -n "${GENROC_PGDIR:-}" ] && bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"; }
trap cleanup EXIT

# The harness, with genroc's driver beside the peers' ones.
cp -r "$PEERS_SRC" "$WORK/h" && chmod -R u+w "$WORK/h"
cp "$ROOT/bench/peers/genroc.mjs" "$ROOT/bench/peers/genroc-bin.mjs" "$WORK/h/peers/"
# genroc-bin runs the tasks in the `genroc worker` binary (build/genroc)
if [ -z "${GENROC_BIN:-}" ]; then
  [ -x "$ROOT/build/genroc" ] || make -s -C "$ROOT" >/dev/null
  GENROC_BIN=$ROOT/build/genroc
fi
export GENROC_BIN
CACHE=$ROOT/bench/.npm-cache
if [ -d "$CACHE/node_modules" ] && cmp -s "$CACHE/package-lock.json" "$WORK/h/package-lock.json"; then
  cp -r "$CACHE/node_modules" "$WORK/h/"
else
  (cd "$WORK/h" && npm ci --no-audit --no-fund >"$OUT/npm.log" 2>&1) || { echo "npm ci failed: $OUT/npm.log" >&2; exit 1; }
  rm -rf "$CACHE" && mkdir -p "$CACHE" && cp -r "$WORK/h/node_modules" "$WORK/h/package-lock.json" "$CACHE/"
fi

# One server for everyone: a throwaway cluster with the harness's role and admin db.
eval "$(bash "$ROOT/test/pgcluster.sh" start)"
psql -X -q -c "CREATE ROLE bench SUPERUSER LOGIN PASSWORD 'bench'" -c "CREATE DATABASE bench OWNER bench"
psql -X -q -c "ALTER SYSTEM SET synchronous_commit = '$SYNC'" -c "ALTER SYSTEM SET max_connections = 200" >/dev/null
PG_CTL=${PGBIN:-$(pg_config --bindir)}/pg_ctl
if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$PG_CTL" -D "$GENROC_PGDATA" -w -l "$GENROC_PGDIR/server.log" restart >/dev/null
else "$PG_CTL" -D "$GENROC_PGDATA" -w -l "$GENROC_PGDIR/server.log" restart >/dev/null; fi
export PGHOST=127.0.0.1 PGUSER=bench PGPASSWORD=bench RESULTS_FILE=$OUT/results.jsonl
NODE20=$(command -v node)
NODE22=$WORK/h/node_modules/node-22/bin/node

one() { # tag node cap args...
  local tag=$1 nodebin=$2 cap=$3; shift 3
  echo "[$(date -u +%T)] $tag" >&2
  (cd "$WORK/h" && timeout -k 5 $((cap + 150)) "$nodebin" --no-deprecation bench.mjs --tag "$tag" --cap "$cap" "$@") \
    >"$OUT/$tag.log" 2>&1 || echo "  $tag FAILED (see $OUT/$tag.log)" >&2
}
for w in w1 w2 w3; do
  want $w || continue
  cap=60; [ $w = w3 ] && cap=25
  if peer genroc; then
    one "$w-genroc-default" "$NODE20" $cap --peer genroc --workload $w --variant default
    [ $w != w3 ] && one "$w-genroc-tuned" "$NODE20" $cap --peer genroc --workload $w --variant tuned
  fi
  if peer genroc-bin && [ $w != w3 ]; then
    one "$w-genroc-bin" "$NODE20" $cap --peer genroc-bin --db genroc_bin --workload $w --variant default
    one "$w-genroc-bin-tuned" "$NODE20" $cap --peer genroc-bin --db genroc_bin --workload $w --variant tuned
  fi
  if peer graphile; then
    one "$w-graphile-default" "$NODE20" $cap --peer graphile --workload $w --variant default
    [ $w != w3 ] && one "$w-graphile-tuned" "$NODE20" $cap --peer graphile --workload $w --variant tuned
  fi
  peer pgboss && one "$w-pgboss-tuned" "$NODE20" $cap --peer pgboss --workload $w --variant tuned
  peer dbos && one "$w-dbos-tuned" "$NODE20" $cap --peer dbos --workload $w --variant tuned
done

node "$ROOT/bench/peers-table.mjs" "$OUT/results.jsonl" | tee "$OUT/summary.md"
