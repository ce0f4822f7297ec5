#!/usr/bin/env bash
# pgcluster.sh — a throwaway PostgreSQL 15 cluster for tests.
#
#   eval "$(bash test/pgcluster.sh start [DIR])"   # prints export lines: PGHOST PGPORT PGUSER
#                                                   # PGDATABASE GENROC_TEST_PG_URL GENROC_PGDATA
#   bash test/pgcluster.sh stop DIR
#
# The cluster lives in DIR (default: a new temporary folder), listens only on a
# Unix socket in DIR and on 127.0.0.1 at a free port, and is owned by the
# invoking user, or by "postgres" when run as root (initdb refuses root).
# GENROC_PG_SOCKET_DIRS: more socket folders, comma-separated (the newcomer
# suite's cluster also listens in Debian's /var/run/postgresql).
set -euo pipefail

PGBIN=${PGBIN:-$(pg_config --bindir)}
cmd=${1:-}
dir=${2:-}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  local p
  for _ in $(seq 1 50); do
    # below Linux's ephemeral range (32768-60999), where outgoing
    # connections and other tests' port-0 listeners take ports
    p=$(( 20000 + RANDOM % 12000 ))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "pgcluster: no free port found" >&2; return 1
}

case "$cmd" in
  start)
    [ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/genroc-pg.XXXXXX")
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
    port=$(free_port)
    as_owner "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir${GENROC_PG_SOCKET_DIRS:+, $GENROC_PG_SOCKET_DIRS}'
max_connections = 100
shared_buffers = 128MB
fsync = on
log_min_messages = warning
max_prepared_transactions = 10
CONF
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    cat <<ENV
export GENROC_PGDATA='$dir/data'
export GENROC_PGDIR='$dir'
export PGHOST='$dir'
export PGPORT='$port'
export PGUSER=postgres
export PGDATABASE=postgres
export GENROC_TEST_PG_URL='postgresql://postgres@127.0.0.1:$port/genroc_test'
ENV
    ;;
  stop)
    [ -n "$dir" ] || { echo "usage: pgcluster.sh stop DIR" >&2; exit 2; }
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "usage: pgcluster.sh start [DIR] | stop DIR" >&2; exit 2 ;;
esac
