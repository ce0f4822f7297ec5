#!/usr/bin/env bash
# map.sh — a Map's cost per item against its size: a Map of
# genroc:noop items, MaxConcurrency 50, two worker threads, on PostgreSQL and
# SQLite, at 1,000 and 10,000 items (and 100,000 with MAP_LARGE=1: about
# ten minutes more).  Prints a table (CPU per item, and its ratio to the
# first size's) and writes JSON to bench/results/.
#
#   bash bench/map.sh
#   MAP_LARGE=1 bash bench/map.sh
#   MAP_ARGS="--stores sqlite --sizes 1000,5000" bash bench/map.sh
#
# Needs the extension installed (make install; with GENROC_PG_ROOT, a
# private PostgreSQL copy: scripts/private-pg.sh).  Starts its own throwaway
# PostgreSQL (test/pgcluster.sh) and builds genroc_map_bench in ${BUILD:-build}.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
if [[ -n ${GENROC_PG_ROOT:-} ]]; then export PGBIN=$GENROC_PG_ROOT/usr/lib/postgresql/15/bin; fi
cmake -S "$ROOT" -B "$ROOT/$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$ROOT/$BUILD" -j2 --target genroc_map_bench >/dev/null
SIZES=1000,10000
if [[ ${MAP_LARGE:-0} == 1 ]]; then SIZES=$SIZES,100000; fi
RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$ROOT/bench/results
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-map-bench.XXXXXX")
chmod 755 "$WORK"
eval "$(bash "$ROOT/test/pgcluster.sh" start)"
cleanup() { bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR"; rm -rf "$WORK"; }
trap cleanup EXIT
psql -X -q -c "CREATE DATABASE bench"
echo "genroc_map_bench $(date -u +%FT%TZ), $(nproc) CPUs, $(psql -X -Atc 'SHOW server_version')" >&2
"$ROOT/$BUILD/bench/genroc_map_bench" \
  --pg "postgresql://postgres@127.0.0.1:$PGPORT/bench" --pgdata "$GENROC_PGDATA" \
  --sqlite-dir "$WORK" --json "$OUT/map-$RUN.json" --sizes "$SIZES" ${MAP_ARGS:-} | tee "$OUT/map-$RUN.txt"
