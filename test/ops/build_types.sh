#!/usr/bin/env bash
# build_types.sh — every CMake build type compiles (Debug, Release,
# MinSizeRel; RelWithDebInfo is the test command's own build), with warnings
# as errors (GENROC_WERROR=ON, stricter than a user's build) and the test
# suites configured.
#
# What a type can show that the test command's build does not: warnings of
# the optimiser (inlining at -O3 / -Os: -Wrestrict, -Wmaybe-uninitialized,
# -Wstringop-*, -Warray-bounds; at Release, worker/genctl.cpp is where GCC
# 12's false -Wrestrict showed, and the flag that keeps it a warning is the
# same for the test suites) and, at Debug, the code only compiled without
# NDEBUG.  So each type is configured by CMake (its own flags, its own
# compile_commands.json) and the product's translation units (core/, engine/,
# store/, worker/) are compiled with those commands to object code, nothing
# linked (test/ops/compile_only.py); Debug without its debug information
# (-g0: no diagnostic depends on it).  Release and MinSizeRel compile the
# product as unity sources (GENROC_UNITY=ON: several files of a library per
# compiler run; Release 332 s of CPU, not 566 s); Debug compiles every
# product file alone, the one place of the test command where a file that
# misses an #include (and builds only after another file of its batch)
# fails.  BUILD_TYPE_UNITY=OFF: every type file by file.  Not checked per
# type: the link (the
# test command's own build links everything once).  BUILD_TYPE_FULL=1 builds
# and links genroc and genctl per type instead (BUILD_TYPE_TARGETS=all:
# everything).
#
# Bounded in time: each type capped at BUILD_TYPE_TIMEOUT seconds (default
# 1800); ccache, used when installed, makes a repeated full run quick;
# BUILD_TYPE_JOBS compilers at once (default: one per core);
# BUILD_TYPES="Release" picks types.
# Prints TAP-style lines; exits non-zero when a type did not compile.
set -uo pipefail
cd "$(dirname "$0")/../.."
# RelWithDebInfo is the type `make check-build` (the test command's own build,
# tests and -Werror included) compiles before any suite runs: not built twice.
types=${BUILD_TYPES:-"Debug Release MinSizeRel"}
# The product per type (BUILD_TYPE_TARGETS overrides for every type).
targets_for() { echo "${BUILD_TYPE_TARGETS:-genroc genctl}"; }
limit=${BUILD_TYPE_TIMEOUT:-1800}
# ccache (scripts/deps.sh installs it) unless the caller chose a launcher
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  # paths relative to the checkout, so another clone of the same code hits the cache
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
n=0 failed=0
for type in $types; do
  n=$((n + 1))
  dir=build-types/$type
  log=$dir.log
  mkdir -p build-types
  start=$SECONDS
  args=()
  targets=$(targets_for "$type")
  [ "$targets" = all ] || for t in $targets; do args+=(--target "$t"); done
  jobs=${BUILD_TYPE_JOBS:-$(nproc)}
  if [ "${BUILD_TYPE_FULL:-0}" = 1 ]; then
    build=(cmake --build "$dir" --parallel "$jobs" "${args[@]}")
  else
    g0=(); [ "$type" = Debug ] && g0=(g0)
    build=(python3 test/ops/compile_only.py "$dir" "$jobs" "${g0[@]}")
  fi
  unity=${BUILD_TYPE_UNITY:-ON}; [ "$type" = Debug ] && unity=OFF
  if timeout "$limit" cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DGENROC_TESTS=ON -DGENROC_WERROR=ON \
       -DGENROC_UNITY="$unity" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$log" 2>&1 &&
     timeout "$limit" "${build[@]}" >>"$log" 2>&1; then
    echo "ok $n - $type compiles ($((SECONDS - start))s)"
  else
    failed=$((failed + 1))
    echo "not ok $n - $type does not compile (or took over ${limit}s); $log:"
    grep -E 'error|Error' "$log" | head -20 | sed 's/^/# /'
  fi
done
[ "$failed" -eq 0 ]
