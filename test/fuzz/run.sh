#!/usr/bin/env bash
# run.sh — builds the libFuzzer targets (test/fuzz/*_fuzz.cpp) with clang in
# their own build folder and runs each for a set time.  Prints one TAP line
# per target ("ok <name>" / "not ok <name>") and exits non-zero when any
# target crashed, leaked, timed out or did not build.
#
#   bash test/fuzz/run.sh                 every target, FUZZ_SECONDS each
#   FUZZ_SECONDS=600 bash test/fuzz/run.sh jsonpath step    some targets, longer
#
#   FUZZ_SECONDS     seconds per target (default 60)
#   FUZZ_BUILD       the build folder (default build-fuzz)
#   FUZZ_UNITY       ON (default): the product libraries compiled as unity
#                    sources (GENROC_UNITY); OFF: file by file
#   FUZZ_ARTIFACTS   where crash inputs and each target's log go
#                    (default $FUZZ_BUILD/artifacts)
#
# Each run starts from the seeds in test/fuzz/corpus/<name>/ (replayed first,
# so a committed crash input is a regression test) and keeps what it finds in
# $FUZZ_BUILD/corpus/<name>/, outside the repository.  A crash input lands in
# $FUZZ_ARTIFACTS/<name>/; to keep it as a regression test, copy it into
# test/fuzz/corpus/<name>/ with the fix.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SECONDS_EACH=${FUZZ_SECONDS:-60}
BUILD_DIR=${FUZZ_BUILD:-build-fuzz}
ARTIFACTS=${FUZZ_ARTIFACTS:-$BUILD_DIR/artifacts}
mkdir -p "$ARTIFACTS"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in test/fuzz/*_fuzz.cpp; do n=$(basename "$f" _fuzz.cpp); names+=("$n"); done
fi

# the product libraries as unity sources (GENROC_UNITY in CMakeLists.txt;
# FUZZ_UNITY=OFF: file by file): the same code, compiled in batches
if ! { CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -DGENROC_FUZZ=ON \
         -DGENROC_UNITY="${FUZZ_UNITY:-ON}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null \
       && cmake --build "$BUILD_DIR" --target fuzz_targets -j"$(nproc)"; } >"$ARTIFACTS/build.log" 2>&1; then
  tail -30 "$ARTIFACTS/build.log" >&2
  for n in "${names[@]}"; do echo "not ok $n (the fuzz build failed)"; done
  exit 1
fi

# AddressSanitizer's stack frames are several times a normal build's: a
# JSONata recursion stopped at jsonata_call_depth (300 calls) takes under 2 MB
# of stack in the RelWithDebInfo build (measured: clean L0001 with
# `ulimit -s 2048`, PostgreSQL's max_stack_depth default; PostgreSQL's own
# check stops it earlier in a backend) but overflows 8 MB under ASan.  The
# targets get a stack that leaves ASan the same headroom.
ulimit -s 65536 2>/dev/null || ulimit -s unlimited 2>/dev/null || true

status=0
for n in "${names[@]}"; do
  bin="$BUILD_DIR/fuzz/${n}_fuzz"
  if [ ! -x "$bin" ]; then echo "not ok $n (no target ${n}_fuzz)"; status=1; continue; fi
  work="$BUILD_DIR/corpus/$n"; art="$ARTIFACTS/$n"
  mkdir -p "$work" "$art"
  seeds=(); [ -d "test/fuzz/corpus/$n" ] && seeds=("test/fuzz/corpus/$n")
  dict=(); [ -f "test/fuzz/$n.dict" ] && dict=("-dict=test/fuzz/$n.dict")
  "$bin" "${dict[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$work" "${seeds[@]}" \
    >"$art/fuzz.log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$art/fuzz.log" | grep -oE '[0-9]+$')
  if [ $rc -eq 0 ]; then
    echo "ok $n (${runs:-?} runs in ${SECONDS_EACH}s)"
  else
    echo "not ok $n (exit $rc; see $art/fuzz.log)"
    grep -E 'ERROR: |SUMMARY: |Test unit written to' "$art/fuzz.log" | head -5 >&2
    status=1
  fi
done
exit $status
