#!/usr/bin/env bash
# getting_started.sh — docs/getting-started.md run as written, as a newcomer
# would paste it: the SQLite quick start, then PostgreSQL on a fresh cluster
# on a port that is not 5432, as root without sudo.
#
# Which blocks run: every fenced block whose info string is `sh` or `sql`, in
# the page's order, taken from the page itself (so the test and the page
# cannot drift).  A block that must not run (an output sample, a package
# install, Docker) has the line
#     <!-- newcomer: not run (why) -->
# as the last non-blank line above its fence.  `sh` blocks run as they are,
# one after the other in one bash script (set -euo pipefail); `sql` blocks run
# in `psql -X -v ON_ERROR_STOP=1 "$GENROC_DATABASE"`, as the page says.
#
# The page sets the cluster once, at the top of its PostgreSQL part:
#     export PGPORT=5432   # your cluster's port
# This test edits that one value to its own cluster's port, as a reader edits
# it to theirs; every other command runs unchanged.  What else differs from a
# fresh machine is said here, and only this:
#   the directory  the blocks run in a scratch directory whose build/,
#                  examples/ and scripts/ are links into this checkout, so
#                  ./genroc.db and the like do not land in the checkout
#   make ...       `make -C <checkout>`, the extension side only (SKIP_CXX=1:
#                  the suite built the binaries), installed into
#                  GENROC_PG_ROOT when that is set (a private PostgreSQL copy)
#   localhost:8448 a free port (GENROC_LISTEN for `genroc serve`, and curl's
#                  URLs rewritten): other tests may hold 8448
#   the socket     the cluster also listens in /var/run/postgresql (Debian's
#                  default socket folder), where `runuser -u postgres -- psql`
#                  finds it by PGPORT; when the test does not run as root,
#                  PGHOST names the cluster's own folder and `runuser -u U --`
#                  runs the command as the invoking user
# The environment the blocks start with has no PG* or GENROC_* variable.
# The README's tour runs through this page: every `sh` block of README.md
# (and `sql` block) that is not marked "not run" must be a block of the page, character for
# character.  Then the checks below, of what the steps promise.  Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
PAGE=docs/getting-started.md
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description command...
  local what=$1 out; shift
  if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; echo "$out" | sed 's/^/# /' | head -40; fi
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-start.XXXXXX")
# blocks FILE DIR: each runnable block of FILE into DIR/NNN.sh or DIR/NNN.sql
blocks() {
  mkdir -p "$2"
  awk -v dir="$2" '
    /^<!-- newcomer: not run/ { skip = 1; next }
    !inside && /^```(sh|sql)$/ { inside = 1; kind = substr($0, 4); k++
                                 file = sprintf("%s/%03d.%s", dir, k, kind)
                                 if (skip) file = file ".skipped"; printf "" >file; next }
    inside && /^```$/ { inside = 0; skip = 0; close(file); next }
    inside { print >file; next }
    /^```/ { skip = 0 }            # another fenced block: the mark was for it
    NF { skip = skip && /^<!--/ }  # a mark holds only over blank lines
  ' "$1"
}
blocks "$PAGE" "$WORK/page"
blocks README.md "$WORK/readme"
nblocks=$(ls "$WORK/page" | grep -cvE 'skipped$')
check "$PAGE has runnable blocks (SQLite and PostgreSQL: at least eight)" test "$nblocks" -ge 8
port_lines=$(cat "$WORK"/page/*.sh | grep -cE '^export PGPORT=[0-9]+( |$)')
check "$PAGE sets PGPORT once, on an export line of its own" test "$port_lines" -eq 1
no_sudo() { ! grep -nE '(^|[^a-z_])sudo([^a-z_]|$)' "$WORK"/page/*.sh "$WORK"/page/*.sql; }
check "no block of $PAGE runs sudo (Debian as root has none)" no_sudo
readme_in_page() {
  local f g found bad=0
  for f in "$WORK"/readme/*.sh "$WORK"/readme/*.sql; do
    [ -e "$f" ] || continue
    found=0
    for g in "$WORK"/page/*."${f##*.}"; do cmp -s "$f" "$g" && found=1 && break; done
    [ $found -eq 1 ] || { echo "README block not on the page:"; cat "$f"; bad=1; }
  done
  return $bad
}
check "every runnable block of README.md is a block of $PAGE" readme_in_page

[ "$(id -u)" -eq 0 ] && export GENROC_PG_SOCKET_DIRS=/var/run/postgresql
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

mkdir -p "$WORK/here"
ln -s "$ROOT/$BUILD" "$WORK/here/build"
ln -s "$ROOT/examples" "$WORK/here/examples"
ln -s "$ROOT/scripts" "$WORK/here/scripts"
{
  cat <<PRELUDE
set -euo pipefail
for v in \$(compgen -e); do case \$v in PG*|GENROC_*) unset "\$v" ;; esac; done
cd '$WORK/here'
make() { command make -s -C '$ROOT' SKIP_CXX=1 "\$@" ${GENROC_PG_ROOT:+DESTDIR='$GENROC_PG_ROOT'}; }
export GENROC_LISTEN=127.0.0.1:$port
curl() { local a=() x; for x in "\$@"; do a+=("\${x//localhost:8448/127.0.0.1:$port}"); done; command curl --max-time 10 "\${a[@]}"; }
PRELUDE
  [ "$(id -u)" -eq 0 ] || cat <<PRELUDE
runuser() { while [ "\$1" != -- ]; do shift; done; shift; "\$@"; }
export PGHOST='$GENROC_PGDIR' PGUSER=postgres
PRELUDE
  for f in "$WORK"/page/*; do
    case $f in
      *.skipped) ;;
      *.sh) echo "echo '== $PAGE block ${f##*/}' >&2"
            sed -E "s/^export PGPORT=[0-9]+/export PGPORT=$PGPORT/" "$f" ;;
      *.sql) echo "echo '== $PAGE block ${f##*/}' >&2"
             echo "psql -X -v ON_ERROR_STOP=1 \"\$GENROC_DATABASE\" <<'GENROC_PAGE_SQL'"
             cat "$f"; echo "GENROC_PAGE_SQL" ;;
    esac
  done
  # the server the page left running: for the checks below, then stopped
  echo "echo \$! >'$WORK/serve.pid'"
} >"$WORK/run.sh"
run_page() { timeout 300 bash "$WORK/run.sh" >"$WORK/run.out" 2>&1; local rc=$?; cat "$WORK/run.out"; return $rc; }
check "the page's blocks run in order, as root without sudo, on a fresh server on port $PGPORT" run_page

check "the SQLite quick start printed the order's output" grep -q '"status": "shipped"' "$WORK/run.out"
check "genctl listed the SQLite file's instance" grep -qE '^1 +order@1 +succeeded' "$WORK/run.out"
check "the SQLite file is in the directory the page ran in, not in the checkout" test -f "$WORK/here/genroc.db"

DB=postgresql://app:change-me@127.0.0.1:$PGPORT/app
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
# moves (docs/sql-api.md "Time").
test_clock_dropped_without_preload() {
  psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE noload OWNER app' >/dev/null &&
    psql -X -q -v ON_ERROR_STOP=1 -d noload -c 'CREATE EXTENSION genroc' >/dev/null ||
    return 1
  local out
  out=$(psql -X -qAt -v ON_ERROR_STOP=1 "postgresql://app:change-me@127.0.0.1:$PGPORT/noload" \
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
  out=$("$ROOT/$BUILD/genctl" --database "postgresql://app:change-me@127.0.0.1:$PGPORT/bare" instances 2>&1) &&
    { echo "genctl succeeded: $out"; return 1; }
  grep -q 'the genroc extension is not installed in database "bare"' <<<"$out" &&
    grep -q "CREATE EXTENSION genroc" <<<"$out" || { echo "$out"; return 1; }
}
check "a database without the extension: genctl says what to run" bare_database_says_what_to_run

echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
