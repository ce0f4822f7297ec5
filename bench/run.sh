#!/usr/bin/env bash
# run.sh — genroc's own benchmark, in one go (about 8-10 minutes on 2 busy cores):
#   3-task and 1-task processes of genroc:noop tasks, for each store
#   (PostgreSQL, SQLite) x durability (none, essential, terminal, strict)
#   x parallel workers (1, 4, 16), and PostgreSQL with and without
#   commit_delay (what --pg-commit-delay sets; at essential and strict).
#
#   bash bench/run.sh                    # the table on stdout, JSON in bench/results/
#   BENCH_ARGS="--repeat 1 --w3 100" bash bench/run.sh    # shorter
#
# Needs the extension installed (make install).  Starts its own throwaway
# PostgreSQL (test/pgcluster.sh, fsync on) and builds genroc_bench in
# ${BUILD:-build}.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
cmake -S "$ROOT" -B "$ROOT/$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENROC_TESTS=ON >/dev/null
cmake --build "$ROOT/$BUILD" -j2 --target genroc_bench >/dev/null
RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$ROOT/bench/results
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-bench.XXXXXX")
chmod 755 "$WORK"
eval "$(bash "$ROOT/test/pgcluster.sh" start)"
cleanup() { bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"; }
trap cleanup EXIT
psql -X -q -c "CREATE DATABASE bench"
echo "genroc_bench $(date -u +%FT%TZ), $(nproc) CPUs, $(psql -X -Atc 'SHOW server_version'); medians of runs" >&2
"$ROOT/$BUILD/bench/genroc_bench" \
  --pg "postgresql://postgres@127.0.0.1:$PGPORT/bench" --pgdata "$GENROC_PGDATA" \
  --sqlite-dir "$WORK" --json "$OUT/genroc-$RUN.json" \
  --w3 250 --w1 600 --repeat 3 --latency 200 ${BENCH_ARGS:-} | tee "$OUT/genroc-$RUN.txt"
