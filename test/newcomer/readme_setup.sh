#!/usr/bin/env bash
# readme_setup.sh — README "Running on PostgreSQL", run as written.
#
# The blocks the README marks `<!-- newcomer: tested block -->` are taken
# from README.md itself (so the test and the README cannot drift) and run in
# order, as one shell script, on a fresh throwaway cluster of their own.
# What differs from a real server is said here, and only this:
#   sudo [-u USER] CMD  runs CMD (the cluster is the invoking user's; psql
#                       reaches it through PGHOST/PGPORT as its superuser)
#   make ...            the extension side only (SKIP_CXX=1: the suite built
#                       the binaries), into GENROC_PG_ROOT when that is set
#   localhost:8448      a free port (GENROC_LISTEN for `genroc serve`, and
#                       curl's URLs rewritten): other tests may hold 8448
#   127.0.0.1 URLs      reach the cluster's port through PGPORT (libpq's
#                       default for a URL without one)
# Then checks what the steps promise.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description command...
  local what=$1 out; shift
  if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; echo "$out" | sed 's/^/# /' | head -40; fi
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-readme.XXXXXX")
awk '/<!-- newcomer: tested block -->/ { want = 1; next }
     want && /^```sh$/ { inside = 1; want = 0; blocks++; print "echo \"== README block " blocks "\" >&2"; next }
     inside && /^```$/ { inside = 0; next }
     inside { print }' README.md >"$WORK/blocks.sh"
blocks=$(grep -c '^echo "== README block' "$WORK/blocks.sh")
check "README.md has its four tested setup blocks (install, role and database, check, run)" test "$blocks" -eq 4

env_lines=$(bash test/pgcluster.sh start) || { not_ok "a fresh cluster"; exit 1; }
eval "$env_lines"
port=$(( 20000 + RANDOM % 12000 ))
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$(( 20000 + RANDOM % 12000 )); done
cleanup() {
  [ -f "$WORK/serve.pid" ] && kill "$(cat "$WORK/serve.pid")" 2>/dev/null
  bash test/pgcluster.sh stop "$GENROC_PGDIR"
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/run.sh" <<PRELUDE
set -euo pipefail
cd '$ROOT'
sudo() { while [ "\${1:-}" = -u ]; do shift 2; done; "\$@"; }
make() { command make -s SKIP_CXX=1 "\$@" \${GENROC_PG_ROOT:+DESTDIR=\$GENROC_PG_ROOT}; }
curl() { local a=() x; for x in "\$@"; do a+=("\${x//localhost:8448/127.0.0.1:$port}"); done; command curl --max-time 10 "\${a[@]}"; }
export GENROC_LISTEN=127.0.0.1:$port
PRELUDE
cat "$WORK/blocks.sh" >>"$WORK/run.sh"
# the server the last block left running: for the checks below, then stopped
echo 'echo $! >'"'$WORK/serve.pid'" >>"$WORK/run.sh"
run_readme() { timeout 300 bash "$WORK/run.sh" >"$WORK/run.out" 2>&1; local rc=$?; cat "$WORK/run.out"; return $rc; }
check "the README's steps run in order on a fresh server without an error" run_readme

DB=postgresql://app:change-me@127.0.0.1/app
views() {
  psql -X -qAt -v ON_ERROR_STOP=1 "$DB" -c 'SELECT count(*) FROM genroc.instances' \
    -c 'SELECT count(*) FROM genroc.workers' -c 'SELECT count(*) FROM genroc.queues'
}
check "app reads genroc.instances, genroc.workers and genroc.queues" views
both_succeeded() {
  local got deadline=$((SECONDS + 60))
  while :; do
    got=$(psql -X -qAt "$DB" -c "SELECT string_agg(status || ' ' || (genroc.get_instance(id) #>> '{output,greeting}'),
                                                   ',' ORDER BY id) FROM genroc.instances")
    [ "$got" = "succeeded hello http,succeeded hello sql" ] && return 0
    [ $SECONDS -ge $deadline ] && { echo "after 60 s: $got"; return 1; }
    sleep 0.2
  done
}
check "the instances started over HTTP and over SQL end as expected" both_succeeded
check "genctl showed them, and the worker web-1" \
  bash -c "grep -q 'greet' '$WORK/run.out' && grep -q 'web-1' '$WORK/run.out'"
test_clock_refused() {
  local out
  out=$(psql -X -q -v ON_ERROR_STOP=1 "$DB" -c "SET genroc.test_clock = '2030-01-01 00:00Z'" 2>&1) &&
    { echo "SET was accepted: $out"; return 1; }
  grep -q 'permission denied to set parameter "genroc.test_clock"' <<<"$out" || { echo "$out"; return 1; }
}
check "a role that may not set genroc.test_clock is refused at the SET (session_preload_libraries)" test_clock_refused
# Without session_preload_libraries PostgreSQL cannot refuse the SET: the
# module that defines the setting is not loaded yet, so the value is kept as
# a placeholder (PostgreSQL 15 has no hook for it).  What must hold: the
# module drops the value with a warning when it loads, so the clock never
# moves (README "Time").
test_clock_dropped_without_preload() {
  psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE noload OWNER app' >/dev/null &&
    psql -X -q -v ON_ERROR_STOP=1 -d noload -c 'CREATE EXTENSION genroc' >/dev/null ||
    return 1
  local out
  out=$(psql -X -qAt -v ON_ERROR_STOP=1 postgresql://app:change-me@127.0.0.1/noload \
    -c "SET genroc.test_clock = '2030-01-01 00:00Z'" -c "SELECT extract(year FROM genroc.now())" 2>&1) ||
    { echo "$out"; return 1; }
  grep -q 'permission denied to set parameter "genroc.test_clock"' <<<"$out" &&
    ! grep -qx '2030' <<<"$out" || { echo "$out"; return 1; }
}
check "without session_preload_libraries a role's SET genroc.test_clock is dropped, with a warning, at load" \
  test_clock_dropped_without_preload
bare_database_says_what_to_run() {
  psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE bare OWNER app' >/dev/null || return 1
  local out
  out=$("$ROOT/$BUILD/genctl" --database postgresql://app:change-me@127.0.0.1/bare instances 2>&1) &&
    { echo "genctl succeeded: $out"; return 1; }
  grep -q 'the genroc extension is not installed in database "bare"' <<<"$out" &&
    grep -q "CREATE EXTENSION genroc" <<<"$out" || { echo "$out"; return 1; }
}
check "a database without the extension: genctl says what to run" bare_database_says_what_to_run

echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
