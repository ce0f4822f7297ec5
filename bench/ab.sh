#!/usr/bin/env bash
# ab.sh — the PostgreSQL store's hot path, two versions of the extension in
# one run: BASE (a git revision, default where this branch left main) against
# this checkout, each in its own private PostgreSQL and throwaway cluster,
# genroc_bench taking turns between them (ROUNDS rounds, each one run of
# each), so both see the same load on a shared machine.  Prints each run's line and, per side, the
# median server CPU per task and WAL bytes per task, and their ratio.
#
#   bash bench/ab.sh                         # the fork point against the checkout
#   BASE=07cf007 ROUNDS=5 bash bench/ab.sh
#   BENCH_ARGS="--workers 1,16 --levels essential,strict" bash bench/ab.sh
#
# Uses scripts/private-pg.sh for the two copies (under ${AB_ROOT:-build}) and
# builds genroc_bench in ${BUILD:-build}.  The figures are genroc_bench's:
# server CPU of the postmaster and its children from /proc, WAL as the
# insert LSN's advance, per task of the 3-task process.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
BASE=${BASE:-$(git -C "$ROOT" merge-base main HEAD)}
ROUNDS=${ROUNDS:-3}
AB_ROOT=${AB_ROOT:-$ROOT/$BUILD}   # under the checkout: ccache hits for the base build
ARGS=${BENCH_ARGS:---workers 1,4 --levels essential --commit-delay 0}
cmake -S "$ROOT" -B "$ROOT/$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGENROC_TESTS=ON >/dev/null
cmake --build "$ROOT/$BUILD" -j2 --target genroc_bench >/dev/null
BIN=$(pg_config --bindir)
WORK=$(mktemp -d "$AB_ROOT/genroc-ab.XXXXXX")
chmod 755 "$WORK"
declare -A PGDIR URL
cleanup() {
  for side in base head; do
    [ -n "${PGDIR[$side]:-}" ] && PGBIN="$WORK/pg-$side$BIN" bash "$ROOT/test/pgcluster.sh" stop "${PGDIR[$side]}"
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
git -C "$ROOT" archive --format=tar "$BASE" | (mkdir -p "$WORK/src-base" && tar -x -C "$WORK/src-base")
for side in base head; do
  src=$ROOT; [ $side = base ] && src=$WORK/src-base
  bash "$ROOT/scripts/private-pg.sh" "$WORK/pg-$side" >/dev/null
  make -s -C "$src" install SKIP_CXX=1 DESTDIR="$WORK/pg-$side" >"$WORK/install-$side.log" 2>&1 ||
    { cat "$WORK/install-$side.log" >&2; exit 1; }
  env=$(PGBIN="$WORK/pg-$side$BIN" bash "$ROOT/test/pgcluster.sh" start "$WORK/cluster-$side")
  PGDIR[$side]=$WORK/cluster-$side
  port=$(sed -n "s/^export PGPORT='\(.*\)'/\1/p" <<<"$env")
  URL[$side]="postgresql://postgres@127.0.0.1:$port/bench"
  psql -X -q -h "$WORK/cluster-$side" -p "$port" -U postgres -d postgres -c "CREATE DATABASE bench"
done
echo "ab: $BASE ($(git -C "$ROOT" rev-parse --short "$BASE")) against $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- extension || echo '+changes'), $ROUNDS rounds, $ARGS"
for r in $(seq 1 "$ROUNDS"); do
  for side in base head; do
    # shellcheck disable=SC2086
    "$ROOT/$BUILD/bench/genroc_bench" --stores postgres --pg "${URL[$side]}" --pgdata "${PGDIR[$side]}/data" \
      --json "$WORK/$side-$r.json" --w3 250 --w1 300 --repeat 1 --latency 20 $ARGS |
      sed -n "s/^postgres/$side $r/p"
  done
done | tee "$WORK/lines"
# per side and configuration: the medians (columns as genroc_bench prints them)
awk -F'|' '
  { split($1, k, " "); key = k[3] " " k[4] " wk " k[5]; side = k[1]
    split($5, c, " "); cpu = c[2]; sub(/us/, "", cpu); split($6, w, " ")
    n = ++cnt[side, key]; cpus[side, key, n] = cpu + 0; wals[side, key, n] = w[1] + 0; keys[key] = 1 }
  function med(arr, s, k, n,   i, j, t, v) {
    for (i = 1; i <= n; i++) v[i] = arr[s, k, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((n + 1) / 2)]
  }
  END {
    printf "%-24s | %14s %14s %6s | %12s %12s %6s\n", "config", "base cpu db/t", "head cpu db/t", "ratio", "base WAL/t", "head WAL/t", "ratio"
    for (key in keys) {
      bc = med(cpus, "base", key, cnt["base", key]); hc = med(cpus, "head", key, cnt["head", key])
      bw = med(wals, "base", key, cnt["base", key]); hw = med(wals, "head", key, cnt["head", key])
      printf "%-24s | %12.0fus %12.0fus %6.2f | %12.0f %12.0f %6.2f\n", key, bc, hc, hc / bc, bw, hw, hw / bw
    }
  }' "$WORK/lines"
