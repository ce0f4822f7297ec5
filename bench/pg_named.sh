#!/usr/bin/env bash
# pg_named.sh — what named prepared statements save on PgStore's hot path,
# in server instructions per task, counted by callgrind (the same count on
# a loaded machine): N one-task jobs queued on a throwaway cluster, which
# is then stopped; for each variant a copy of it starts with the
# postmaster under callgrind (--trace-children), bench/pg_named.c claims B
# at a time and reports them with complete_many until none is left, and
# the client backend's count (the busiest process) is divided by N.
#
#   bash bench/pg_named.sh [N] [B] [VARIANT...]
#     N default 320, B default 1; VARIANTs (default: all three)
#       named-nsettings    PgStore on a connection of its own: the settings
#                          statement and the hot ones named
#       unnamed-settings   PgStore pooled: every statement unnamed
#       named-nosettings   session settings, hot statements named (before
#                          settings went with each transaction)
#
# Needs valgrind, gcc, libpq's headers and the extension installed (with
# GENROC_PG_ROOT, a private PostgreSQL copy: scripts/private-pg.sh).
# Slow: several minutes per variant.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-320}
B=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(named-nsettings unnamed-settings named-nosettings)
export PGBIN=${GENROC_PG_ROOT:-}$(pg_config --bindir)
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
W=$(mktemp -d "${TMPDIR:-/tmp}/genroc-named.XXXXXX")
chmod 755 "$W"
gcc -O2 -o "$W/pg_named" "$ROOT/bench/pg_named.c" -I"$(pg_config --includedir)" -lpq
eval "$(bash "$ROOT/test/pgcluster.sh" start "$W/pg")"
cleanup() {
  [ -n "${PM:-}" ] && kill "$PM" 2>/dev/null
  bash "$ROOT/test/pgcluster.sh" stop "$W/pg" >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -v ON_ERROR_STOP=1 -d bench >/dev/null <<SQL
CREATE EXTENSION genroc;
SELECT genroc.define('one', '{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}}');
SELECT genroc.worker_register('w1', '{"queues":["default"]}');
SELECT count(*) FROM generate_series(1, $N) g, genroc.start('one', jsonb_build_object('i', g));
CHECKPOINT;
SQL
as_owner "$PGBIN/pg_ctl" -D "$GENROC_PGDATA" -m fast -w stop >/dev/null
for v in "${VARIANTS[@]}"; do
  rm -rf "$W/d" "$W/cg"
  cp -a "$GENROC_PGDATA" "$W/d"
  mkdir -p "$W/cg"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$W/cg"
  as_owner valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$W/cg/cg.%p" \
    "$PGBIN/postgres" -D "$W/d" >"$W/postmaster.log" 2>&1 &
  PM=$!
  for _ in $(seq 1 300); do psql -X -qAt -d bench -c "SELECT 1" >/dev/null 2>&1 && break; sleep 1; done
  "$W/pg_named" "host=$PGHOST port=$PGPORT dbname=bench user=postgres" "${v%%-*}" "${v#*-}" "$B" >"$W/out"
  as_owner "$PGBIN/pg_ctl" -D "$W/d" -m fast -w -t 300 stop >/dev/null || true
  wait "$PM" 2>/dev/null || true
  PM=
  best=0
  for f in "$W"/cg/cg.*; do
    t=$(awk '/^totals:/ {print $2; exit}' "$f")
    [ "${t:-0}" -gt "$best" ] && best=$t
  done
  printf '%-18s B=%-3s %s: %d instructions per task\n' "$v" "$B" "$(cat "$W/out")" $((best / N))
done
