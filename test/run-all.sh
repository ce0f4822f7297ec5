#!/usr/bin/env bash
# run-all.sh — the whole test suite, as CI runs it (.ci/run calls this).
#
# Installs what it needs, builds, starts a throwaway PostgreSQL cluster,
# installs the extension, runs every suite, stops the cluster and prints
# one line over all suites: "N passed, N failed".  Exits non-zero when
# anything failed or a suite could not run.
#
#   bash test/run-all.sh            everything
#   SUITES="regress ctest" bash test/run-all.sh    a subset:
#                                   errors regress pgtap ctest sqlfuzz fuzz ops builds newcomer console sfn
#                                   (errors: the SQLSTATE table, test/check_errors.sh;
#                                   the docs' links, test/check_links.sh; MAP.md against
#                                   the files, test/check_map.sh)
#                                   (sfn: the Step Functions endpoint driven by the AWS CLI
#                                   and @aws-sdk/client-sfn on both stores, test/sfn/run.sh)
#                                   (console: the web console in headless Chromium,
#                                   test/console/run.sh; screenshots in
#                                   $BUILD/artifacts/console/)
#   SQLFUZZ_SECONDS=N               how long the SQL fuzz test calls (default 60)
#   FUZZ_BUDGET=90 bash test/run-all.sh           seconds the fuzz suite runs its
#                                   libFuzzer targets, in all (default 35: 5 s
#                                   each after the replay of its corpus)
#                                   (ops: pg_dump/restore, the upgrade walk, the
#                                   packaging files, the in-database ticker,
#                                   pgbouncer in transaction mode (skipped, and
#                                   said so, when pgbouncer is missing),
#                                   test/ops/; builds: every CMake build type
#                                   compiles, test/ops/build_types.sh; newcomer:
#                                   docs/getting-started.md run as written on a fresh
#                                   cluster, and the example activity workers,
#                                   test/newcomer/)
#   BUILD=build-x bash test/run-all.sh            C++ build folder (default build)
#   GENROC_PG_ROOT=DIR bash test/run-all.sh       install the extension into a private
#                                   copy of PostgreSQL (scripts/private-pg.sh DIR) and run
#                                   every cluster from it, so checkouts side by side on
#                                   one machine do not replace each other's extension
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SUITES=${SUITES:-"errors regress pgtap ctest sqlfuzz fuzz ops builds newcomer console sfn"}
export BUILD=${BUILD:-build}
# The C++ build: the test suites for ctest (check-build), the binaries alone
# for ops, none otherwise; warnings are errors either way.  Debug information
# -g1 (line tables, no variables: GENROC_DEBUG_LEVEL in CMakeLists.txt), the
# same code and warnings as -g for less CPU (a cold check-build: 831 s, not 1,008).
# The product libraries as unity sources (GENROC_UNITY in CMakeLists.txt: a
# cold check-build 570 s of CPU, not 831 s); the install below takes the
# module's C++ from them.
BUILD_ARGS=(check-build GENROC_DEBUG_LEVEL=1 GENROC_UNITY=ON)
INSTALL_ARGS=(SKIP_CXX=1 GENROC_UNITY=ON)
if [[ " $SUITES " != *" ctest "* ]]; then
  if [[ " $SUITES " == *" ops "* || " $SUITES " == *" newcomer "* || " $SUITES " == *" console "* || " $SUITES " == *" sfn "* ]]; then
    BUILD_ARGS=(all GENROC_WERROR=ON GENROC_DEBUG_LEVEL=1 GENROC_UNITY=ON)
  else
    # the extension alone, its core/ and engine/ compiled file by file here
    export SKIP_CXX=1
    BUILD_ARGS=(check-build GENROC_DEBUG_LEVEL=1) INSTALL_ARGS=(SKIP_CXX=1)
  fi
fi
LOG=${GENROC_TEST_LOG:-$ROOT/$BUILD/test-logs}
mkdir -p "$LOG"

passed=0 failed=0 broken=()
note() { printf '== %s\n' "$*" >&2; }
suite_start=$SECONDS
count() { # suite passed failed [seconds]
  note "$1: $2 passed, $3 failed (${4:-$((SECONDS - suite_start))} s)"
  passed=$((passed + $2)); failed=$((failed + $3))
}

note "dependencies"; bash scripts/deps.sh || { echo "0 passed, 1 failed"; exit 1; }
note "build"
build_start=$SECONDS
# -j: the PostgreSQL module's objects (PGXS) compile beside the CMake build
# instead of one at a time before it.
if ! make -s -j"$(nproc)" "${BUILD_ARGS[@]}" >"$LOG/build.log" 2>&1; then
  tail -50 "$LOG/build.log" >&2; echo "0 passed, 1 failed"; exit 1
fi
note "build: $((SECONDS - build_start)) s"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
DESTDIR_ARG=()
if [ -n "${GENROC_PG_ROOT:-}" ]; then
  [ -x "$GENROC_PG_ROOT$(pg_config --bindir)/postgres" ] || bash scripts/private-pg.sh "$GENROC_PG_ROOT"
  export PGBIN="$GENROC_PG_ROOT$(pg_config --bindir)"
  DESTDIR_ARG=("DESTDIR=$GENROC_PG_ROOT"); SUDO=""
fi
if ! $SUDO make -s install "${INSTALL_ARGS[@]}" "${DESTDIR_ARG[@]}" >"$LOG/install.log" 2>&1; then
  tail -20 "$LOG/install.log" >&2; echo "0 passed, 1 failed"; exit 1
fi

note "throwaway PostgreSQL"
env_lines=$(bash test/pgcluster.sh start) || { echo "0 passed, 1 failed"; exit 1; }
eval "$env_lines"
trap 'bash test/pgcluster.sh stop "$GENROC_PGDIR"' EXIT
# A template database with the extension, for suites that make one database per test.
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE genroc_template" \
  && psql -X -q -v ON_ERROR_STOP=1 -d genroc_template -c "CREATE EXTENSION genroc" \
  || broken+=("template database")
export GENROC_TEST_TEMPLATE=genroc_template GENROC_TEST_REQUIRE_PG=1
# The postmaster's start time, asked again after the last suite: a backend
# that died of a signal (a crash in genroc's code, or one no cancel stopped
# and someone killed) restarts every backend, and the time with them.
postmaster_start=$(psql -X -At -c "SELECT pg_postmaster_start_time()")

# The builds suite compiles the product once per CMake build type: minutes of
# CPU with nothing to wait for.  It runs in the background at the lowest CPU
# priority from here on, so it takes what the suites leave idle while they
# wait (ctest's process and crash tests, fuzz's one process, ops, newcomer,
# console), and is counted at the end.
builds_pid="" builds_start=0
start_builds() {
  [ -n "$builds_pid" ] && return
  builds_start=$SECONDS
  (nice -n 19 bash test/ops/build_types.sh >"$LOG/builds.log" 2>&1; echo $? >"$LOG/builds.rc") &
  builds_pid=$!
}
finish_builds() {
  wait "$builds_pid"
  local out rc p f
  out=$(cat "$LOG/builds.log"); rc=$(cat "$LOG/builds.rc" 2>/dev/null || echo 1)
  p=$(grep -cE '^ok ' <<<"$out"); f=$(grep -cE '^not ok ' <<<"$out")
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  [ "$f" -gt 0 ] && echo "$out" >&2
  count builds "$p" "$f" $((SECONDS - builds_start))
}
[[ " $SUITES " == *" builds "* ]] && start_builds

for suite in $SUITES; do
  suite_start=$SECONDS
  case "$suite" in
    errors)
      # the SQLSTATE table (core/errors.def against the code and docs/errors.md),
      # every link of README.md, docs/ and bench/RESULTS.md (test/check_links.sh),
      # MAP.md against the files, no tracker citations (test/check_map.sh),
      # the figures of code still written twice (scripts/engine-once.sh:
      # none may grow past its ratchet), and the C/C++ folders' floors (an
      # include runs down them only: scripts/check-layers.sh, its rules on
      # made-up trees too)
      out=$(bash test/check_errors.sh 2>&1); rc=$?
      out_links=$(bash test/check_links.sh 2>&1) || rc=1
      out_map=$(bash test/check_map.sh 2>&1) || rc=1
      out_once=$(bash scripts/engine-once.sh 2>&1) || rc=1
      out_layers=$(bash scripts/check-layers.sh 2>&1 && bash scripts/check-layers.sh --self-test 2>&1) || rc=1
      out=$(printf '%s\n%s\n%s\n%s\n%s' "$out" "$out_links" "$out_map" "$out_once" "$out_layers")
      echo "$out" >"$LOG/errors.log"
      p=$(grep -c '^ok ' <<<"$out"); f=$(grep -c '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
      [ "$f" -gt 0 ] && echo "$out" | grep -E '^not ok |^    ' >&2
      count errors "$p" "$f" ;;
    regress)
      # pg_regress (sql/, expected/) and pg_isolation_regress (specs/, expected/)
      make -s installcheck >"$LOG/regress.log" 2>&1; rc=$?
      p=$(grep -cE '\.\.\. +ok' "$LOG/regress.log"); f=$(grep -cE '\.\.\. +FAILED' "$LOG/regress.log")
      if [ $rc -ne 0 ]; then
        [ "$f" -eq 0 ] && { f=1; tail -30 "$LOG/regress.log" >&2; }
        cat "$BUILD/regress/regression.diffs" "$BUILD/isolation/regression.diffs" 2>/dev/null | head -300 >&2
      fi
      count regress "$p" "$f" ;;
    pgtap)
      psql -X -q -c "CREATE DATABASE genroc_pgtap TEMPLATE genroc_template" && \
        psql -X -q -d genroc_pgtap -c "CREATE EXTENSION pgtap"
      out=$(pg_prove --verbose -d genroc_pgtap test/pgtap/*.sql 2>&1); rc=$?
      echo "$out" >"$LOG/pgtap.log"
      p=$(grep -cE '^ok ' <<<"$out"); f=$(grep -cE '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && { [ "$f" -eq 0 ] && f=1; tail -40 <<<"$out" >&2; }
      count pgtap "$p" "$f" ;;
    ctest)
      # GoogleTest: core units, the conformance suite on both stores, end-to-end tests
      (cd "$BUILD" && ctest -j2 --timeout 300 --output-on-failure) >"$LOG/ctest.log" 2>&1; rc=$?
      line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$LOG/ctest.log" | tail -1)
      if [ -n "$line" ]; then
        total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
        f=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line"); p=$((total - f))
      else
        p=0; f=1
      fi
      if [ $rc -ne 0 ]; then
        [ "$f" -eq 0 ] && f=1
        # each failed test's own output (--output-on-failure puts it right
        # after the test's result line), so a CI log says why, not only which
        awk '/\*\*\*(Failed|Timeout|Exception)|\*\*\*Not Run/ { on = 1; n = 0 }
             on && /^ +Start +[0-9]+: |^ *[0-9]+\/[0-9]+ Test +#[0-9]+: .* (Passed|\*\*\*)/ && !/\*\*\*/ { on = 0 }
             on && n++ < 150 { print substr($0, 1, 400) }' "$LOG/ctest.log" >&2
        sed -n '/tests failed out of/,$p' "$LOG/ctest.log" | head -40 >&2
      fi
      count ctest "$p" "$f" ;;
    sqlfuzz)
      # every genroc function called by an unprivileged role with random
      # arguments: no backend may die, every error a clean SQLSTATE
      out=$(python3 test/sqlfuzz.py 2>&1); rc=$?
      echo "$out" >"$LOG/sqlfuzz.log"
      p=$(grep -cE '^ok ' <<<"$out"); f=$(grep -cE '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && { [ "$f" -eq 0 ] && f=1; grep -vE '^ok ' <<<"$out" | head -60 >&2; }
      count sqlfuzz "$p" "$f" ;;
    fuzz)
      # libFuzzer targets (test/fuzz/), built with clang in build-fuzz/: each
      # replays its committed corpus, then fuzzes its share of FUZZ_BUDGET;
      # crash inputs are kept in $LOG/fuzz/<target>/
      n=$(ls test/fuzz/*_fuzz.cpp 2>/dev/null | wc -l)
      # The replay of every committed seed and regression input is what
      # catches a regression; the fuzzing after it is a few seconds per
      # target here (longer runs: make fuzz, FUZZ_SECONDS).
      each=$(( ${FUZZ_BUDGET:-35} / (n > 0 ? n : 1) )); [ "$each" -lt 5 ] && each=5
      out=$(FUZZ_SECONDS=$each FUZZ_ARTIFACTS="$LOG/fuzz" bash test/fuzz/run.sh 2>&1); rc=$?
      echo "$out" >"$LOG/fuzz.log"
      p=$(grep -c '^ok ' <<<"$out"); f=$(grep -c '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && { [ "$f" -eq 0 ] && f=1; grep -v '^ok ' <<<"$out" | head -20 >&2; }
      count fuzz "$p" "$f" ;;
    ops)
      # pg_dump and restore, the upgrade walk, the packaging files, the
      # in-database ticker, genroc through pgbouncer (test/ops/); a test
      # that cannot run says "ok N # SKIP why": counted apart, not passed
      p=0; f=0; s=0
      for t in dump_restore upgrade packaging ticker pgbouncer; do
        out=$(bash "test/ops/$t.sh" 2>&1); rc=$?
        echo "$out" >"$LOG/ops-$t.log"
        ts=$(grep -cE '^ok .*# SKIP' <<<"$out"); s=$((s + ts))
        [ "$ts" -gt 0 ] && note "ops: skipped: $(grep -E '^ok .*# SKIP' <<<"$out" | sed 's/.*# SKIP *//' | head -3 | tr '\n' ' ')"
        p=$((p + $(grep -cE '^ok ' <<<"$out") - ts)); tf=$(grep -cE '^not ok ' <<<"$out")
        [ $rc -ne 0 ] && [ "$tf" -eq 0 ] && { tf=1; tail -20 <<<"$out" >&2; }
        [ "$tf" -gt 0 ] && grep -A12 -E '^not ok ' <<<"$out" | head -60 >&2
        f=$((f + tf))
      done
      [ "$s" -gt 0 ] && note "ops: $s skipped"
      count ops "$p" "$f" ;;
    builds)
      start_builds ;;	# counted after the other suites (finish_builds)
    newcomer)
      # docs/getting-started.md run as written on a fresh cluster, and
      # the example activity workers against real servers (test/newcomer/)
      p=0; f=0
      for t in getting_started examples; do
        out=$(bash "test/newcomer/$t.sh" 2>&1); rc=$?
        echo "$out" >"$LOG/newcomer-$t.log"
        p=$((p + $(grep -cE '^ok ' <<<"$out"))); tf=$(grep -cE '^not ok ' <<<"$out")
        [ $rc -ne 0 ] && [ "$tf" -eq 0 ] && { tf=1; tail -20 <<<"$out" >&2; }
        [ "$tf" -gt 0 ] && grep -A12 -E '^not ok ' <<<"$out" | head -60 >&2
        f=$((f + tf))
      done
      count newcomer "$p" "$f" ;;
    console)
      # the web console in headless Chromium on both stores (test/console/)
      out=$(ARTIFACTS="$ROOT/$BUILD/artifacts/console" bash test/console/run.sh 2>&1); rc=$?
      echo "$out" >"$LOG/console.log"
      p=$(grep -cE '^ok ' <<<"$out"); f=$(grep -cE '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && [ "$f" -eq 0 ] && { f=1; tail -20 <<<"$out" >&2; }
      [ "$f" -gt 0 ] && grep -A6 -E '^not ok ' <<<"$out" | head -60 >&2
      count console "$p" "$f" ;;
    sfn)
      # the Step Functions endpoint through the AWS CLI and the JavaScript
      # SDK on both stores (test/sfn/)
      out=$(bash test/sfn/run.sh 2>&1); rc=$?
      echo "$out" >"$LOG/sfn.log"
      p=$(grep -cE '^ok ' <<<"$out"); f=$(grep -cE '^not ok ' <<<"$out")
      [ $rc -ne 0 ] && [ "$f" -eq 0 ] && { f=1; tail -20 <<<"$out" >&2; }
      [ "$f" -gt 0 ] && grep -A6 -E '^not ok ' <<<"$out" | head -60 >&2
      count sfn "$p" "$f" ;;
    *) broken+=("unknown suite $suite") ;;
  esac
done

[ -n "$builds_pid" ] && finish_builds
suite_start=$SECONDS
now_start=$(psql -X -At -c "SELECT pg_postmaster_start_time()" 2>&1)
if [ "$now_start" = "$postmaster_start" ]; then count postmaster 1 0
else note "postmaster: started at $postmaster_start, now $now_start (a backend crashed or was killed)"; count postmaster 0 1; fi
note "total: $SECONDS s"
for b in "${broken[@]}"; do note "could not run: $b"; failed=$((failed + 1)); done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
