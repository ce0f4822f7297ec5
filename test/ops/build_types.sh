#!/usr/bin/env bash
# build_types.sh — every CMake build type compiles (Debug, Release,
# RelWithDebInfo, MinSizeRel), with warnings as errors (GENROC_WERROR=ON,
# stricter than a user's build) and the test suites configured.
#
# Bounded in time: each type builds the product (genroc, genctl: core/,
# store/, worker/; at Release worker/genctl.cpp is where GCC 12's false
# -Wrestrict showed, and the flag that keeps it a warning is the same for the
# test suites), in build-types/<type>, each build capped at
# BUILD_TYPE_TIMEOUT seconds (default 1800); ccache, used when installed,
# makes a repeated run quick; BUILD_TYPE_JOBS compilers at once (default: one
# per core).  BUILD_TYPE_TARGETS=all builds
# everything instead; BUILD_TYPES="Release" picks types.
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
  if timeout "$limit" cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DGENROC_TESTS=ON -DGENROC_WERROR=ON >"$log" 2>&1 &&
     timeout "$limit" cmake --build "$dir" --parallel "${BUILD_TYPE_JOBS:-$(nproc)}" "${args[@]}" >>"$log" 2>&1; then
    echo "ok $n - $type compiles ($((SECONDS - start))s)"
  else
    failed=$((failed + 1))
    echo "not ok $n - $type does not compile (or took over ${limit}s); $log:"
    grep -E 'error|Error' "$log" | head -20 | sed 's/^/# /'
  fi
done
[ "$failed" -eq 0 ]
