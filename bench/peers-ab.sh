#!/usr/bin/env bash
# peers-ab.sh — run-peers.sh's W1 and W2 for two versions of genroc, in
# turns on one machine: BASE (a git revision) against this checkout, each
# with its own private PostgreSQL (scripts/private-pg.sh, the version's
# extension installed) and its own `genroc` binary.  Each round runs
# run-peers.sh once for each side, the base first in odd rounds and the
# checkout first in even ones, genroc's drivers only (the SQL API from Node
# and the binary, default and tuned), so both sides see the same load.
# Prints, per run, the median over the rounds of each side and the
# checkout's ratio to the base (> 1: faster).
#
#   BASE=f1cfca9 bash bench/peers-ab.sh               # 5 rounds, W1 and W2
#   BASE=f1cfca9 ROUNDS=7 ONLY=w1 bash bench/peers-ab.sh
#
# The base's source, build and PostgreSQL copy are kept under
# build/peers-ab-<BASE>/ and reused by the next run; the results of each
# run go to bench/results/peers-ab-<UTC>/.  Needs what run-peers.sh needs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${BASE:?usage: BASE=<revision> bash bench/peers-ab.sh}
ROUNDS=${ROUNDS:-5}
export ONLY=${ONLY:-w1,w2} PEERS=${PEERS:-genroc,genroc-bin}
SHA=$(git -C "$ROOT" rev-parse --short "$BASE")
KEEP=$ROOT/build/peers-ab-$SHA
OUTS=$ROOT/bench/results/peers-ab-$(date -u +%Y%m%dT%H%M%SZ)
BIN=$(pg_config --bindir)
mkdir -p "$KEEP" "$OUTS"

# The base: its source, its build (genroc binary, extension), its PostgreSQL.
if [ ! -x "$KEEP/src/build/genroc" ]; then
  rm -rf "$KEEP/src" && mkdir -p "$KEEP/src"
  git -C "$ROOT" archive --format=tar "$BASE" | tar -x -C "$KEEP/src"
  make -s -C "$KEEP/src" >"$KEEP/build.log" 2>&1 || { tail -30 "$KEEP/build.log" >&2; exit 1; }
fi
[ -x "$ROOT/build/genroc" ] || make -s -C "$ROOT" >/dev/null
for side in base head; do
  src=$ROOT; [ $side = base ] && src=$KEEP/src
  bash "$ROOT/scripts/private-pg.sh" "$KEEP/pg-$side" >/dev/null
  make -s -C "$src" install SKIP_CXX=1 DESTDIR="$KEEP/pg-$side" >"$KEEP/install-$side.log" 2>&1 ||
    { cat "$KEEP/install-$side.log" >&2; exit 1; }
done
echo "peers-ab: $SHA against $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo '+changes'), $ROUNDS rounds, $ONLY, $PEERS"

for r in $(seq 1 "$ROUNDS"); do
  # the order alternates: a side that always runs first (or second) in a
  # round meets the machine in another state than the other
  order="base head"; [ $((r % 2)) = 0 ] && order="head base"
  for side in $order; do
    src=$ROOT; [ $side = base ] && src=$KEEP/src
    echo "[$(date -u +%T)] round $r $side" >&2
    PGBIN="$KEEP/pg-$side$BIN" GENROC_BIN="$src/build/genroc" OUT="$OUTS/$side-$r" \
      bash "$ROOT/bench/run-peers.sh" >"$OUTS/$side-$r.log" 2>&1 || echo "  round $r $side FAILED ($OUTS/$side-$r.log)" >&2
  done
done

# Per run (tag): each side's median figure (W1 jobs/s, W2 steps/s) and the ratio.
python3 - "$OUTS" "$ROUNDS" <<'PY' | tee "$OUTS/summary.md"
import json, os, statistics, sys
outs, rounds = sys.argv[1], int(sys.argv[2])
fig = {}
for side in ('base', 'head'):
    for r in range(1, rounds + 1):
        p = os.path.join(outs, f'{side}-{r}', 'results.jsonl')
        if not os.path.exists(p):
            continue
        for line in open(p):
            if not line.strip():
                continue
            row = json.loads(line)
            proc = row.get('process') or {}
            v = proc.get('steps_per_sec') if row.get('workload') == 'w2' else proc.get('per_sec')
            if v is not None:
                fig.setdefault(row['tag'], {}).setdefault(side, []).append(float(v))
print('| run | base median | head median | head / base | runs (base, head) |')
print('|---|---:|---:|---:|---|')
for tag in sorted(fig):
    b, h = fig[tag].get('base', []), fig[tag].get('head', [])
    mb = statistics.median(b) if b else None
    mh = statistics.median(h) if h else None
    ratio = f'{mh / mb:.3f}' if mb and mh else 'n/a'
    show = lambda m: f'{m:,.0f}' if m is not None else 'n/a'
    print(f'| {tag} | {show(mb)} | {show(mh)} | {ratio} | {len(b)}, {len(h)} |')
PY
