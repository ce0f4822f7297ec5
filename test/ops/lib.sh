# lib.sh — what the operations tests (test/ops/*.sh) share.  Sourced, with a
# throwaway cluster's PGHOST/PGPORT/PGUSER and GENROC_TEST_PG_URL in the
# environment (test/run-all.sh, or `eval "$(bash test/pgcluster.sh start)"`),
# and the genroc binary at $GENROC_BIN (default build/genroc).
# Prints TAP-style "ok N" / "not ok N" lines; `finish` exits non-zero when
# any check failed.
set -uo pipefail
OPS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$OPS_DIR/../.." && pwd)
GENROC_BIN=${GENROC_BIN:-$ROOT/${BUILD:-build}/genroc}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/genroc-ops.XXXXXX")
T0='2030-01-01T00:00:00Z'   # fill.sql's clock
T1='2030-01-01T02:00:00Z'   # after: timers due, w-old's leases lapsed, its heartbeat stale
checks=0 failures=0

ok() { checks=$((checks + 1)); echo "ok $checks - $1"; }
not_ok() { checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok $checks - $1"; }
check() { # description command...
  local what=$1; shift
  if "$@" >"$WORK/check.out" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/# /' "$WORK/check.out" | head -40; fi
}
finish() {
  echo "# $checks checks, $failures failed"
  rm -rf "$WORK"
  [ "$failures" -eq 0 ]
}

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
# one value: qv DB SQL
qv() { psql -X -qAt -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
db_url() { # the cluster's URL for database $1
  local url=${GENROC_TEST_PG_URL:?GENROC_TEST_PG_URL is not set}
  echo "${url%/*}/$1"
}
fresh_db() { # name [extension version]
  q -c "DROP DATABASE IF EXISTS \"$1\"" -c "CREATE DATABASE \"$1\"" &&
    q -d "$1" -c "CREATE EXTENSION genroc${2:+ VERSION '$2'}"
}

# Tables of the extension that hold no data, so pg_dump leaves their rows
# out and an upgrade or restore need not keep them: genroc._locks, rows made
# on demand to lock on (10_tables.sql); a restored database makes them again
# on first use, and 0.1 had no such table; genroc._tickers, who called tick
# and when (a record of this database's processes, written again by the
# next tick).
NOT_DATA="genroc._locks genroc._tickers"

# Every row of every table of the extension (but NOT_DATA), as text, sorted:
# two databases with the same rows give the same file.  With a third
# argument, a file columns_of wrote, only the columns named there: a table's
# rows before and after an upgrade that added columns.
snapshot() { # db file [columns]
  local t cols
  : >"$2"
  for t in $(qv "$1" "SELECT c.oid::regclass FROM pg_catalog.pg_depend d
                        JOIN pg_catalog.pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
                        WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
                          AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'genroc')
                          AND c.relkind = 'r' ORDER BY 1::text"); do
    [[ " $NOT_DATA " == *" $t "* ]] && continue
    if [ -n "${3:-}" ]; then
      cols=$(sed -n "s/^$t //p" "$3")
      if [ -z "$cols" ] && ! grep -q "^$t " "$3"; then
        # a table the older version lacks (genroc._fanouts): it starts empty
        [ "$(qv "$1" "SELECT count(*) FROM $t")" = 0 ] || { echo "$t: new, yet not empty" >&2; return 1; }
        continue
      fi
      echo "== $t" >>"$2"
      [ -n "$cols" ] || { echo "$t: no columns in $3" >&2; return 1; }
      qv "$1" "SELECT ROW($cols)::text FROM $t ORDER BY 1" >>"$2" || return 1
    else
      echo "== $t" >>"$2"
      qv "$1" "SELECT x::text FROM $t x ORDER BY 1" >>"$2" || return 1
    fi
  done
}
# The columns of every table of the extension, a line "table col, col…" each.
columns_of() { # db file
  qv "$1" "SELECT c.oid::regclass::text || ' ' || string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
           FROM pg_catalog.pg_depend d
           JOIN pg_catalog.pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
           JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
           WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
             AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'genroc')
             AND c.relkind = 'r' GROUP BY c.oid" >"$2"
}

# The extension's objects, as pg_dump writes them in binary-upgrade mode (the
# only mode that dumps an extension's members one by one), without what
# differs between two databases of equal schema: object ids, frozen xids.
schema_of() { # db file
  pg_dump --binary-upgrade --schema-only -d "$1" 2>/dev/null |
    grep -v -E 'binary_upgrade|relfrozenxid|^SELECT pg_catalog.setval|^WHERE oid = |^\\(un)?restrict |^-- Dumped (from|by) ' >"$2"
  [ -s "$2" ]
}
# The tables pg_dump saves the rows of, and their filters.
config_of() { # db
  qv "$1" "SELECT c::regclass::text || ' ' || coalesce(f, '') FROM pg_extension e,
             unnest(e.extconfig, e.extcondition) AS u(c, f) WHERE e.extname = 'genroc' ORDER BY 1"
}

# Carries on with a filled database (fill.sql) as the worker w-old that held
# a lease in it: a real `genroc worker` on the clock T1 takes its id back (its
# heartbeat is stale by then) and its leased task, tick fires the timer, an
# outside program approves the activity, the kept event meets its wait; one
# more instance is started (the identity sequences must go on).  Succeeds
# when every instance has ended as expected within a generous bound.
carry_on() { # db
  local db=$1 url pid deadline live epoch
  url=$(db_url "$db")
  # the epoch of w-old's lease: a claim hands out a new one (random since 0.2)
  epoch=$(qv "$db" "SELECT lease_epoch FROM genroc._instances WHERE name = 'leased'")
  PGOPTIONS="-c genroc.test_clock=$T1" "$GENROC_BIN" worker --database "$url" --worker-id w-old \
    --manual-tick --poll-interval 100ms --log-level warn >"$WORK/worker-$db.log" 2>&1 &
  pid=$!
  q -d "$db" >"$WORK/carry-$db.log" 2>&1 <<SQL || { kill "$pid"; cat "$WORK/carry-$db.log"; return 1; }
SET genroc.test_clock = '$T1';
SELECT genroc.tick();
SELECT genroc.activity_succeed(token, '{"approved": true}') FROM genroc.claim_activity('approve', 'outside', 1);
SELECT * FROM genroc.start('work', '{"n": 11}');
SQL
  deadline=$((SECONDS + 90))
  while :; do
    live=$(PGOPTIONS="-c genroc.test_clock=$T1" qv "$db" \
      "SELECT genroc.tick(); SELECT count(*) FROM genroc._instances WHERE status NOT IN ('succeeded', 'failed', 'cancelled')" | tail -1)
    [ "$live" = 0 ] && break
    if [ $SECONDS -ge $deadline ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "still live after 90s (or the worker exited):"
      qv "$db" "SELECT id, status, state, wait_kind, lease_owner FROM genroc._instances WHERE status NOT IN ('succeeded', 'failed', 'cancelled')"
      kill "$pid" 2>/dev/null; wait "$pid"; cat "$WORK/worker-$db.log"; return 1
    fi
    sleep 0.2
  done
  kill -TERM "$pid"; wait "$pid" || { echo "worker exited with $?"; cat "$WORK/worker-$db.log"; return 1; }
  # 10 top-level instances from fill.sql plus one, two Parallel branches,
  # and CARRY_EXTRA_SUCCEEDED more ended ones the caller added
  local got want="cancelled 1
failed 1
succeeded $((11 + ${CARRY_EXTRA_SUCCEEDED:-0}))"
  got=$(qv "$db" "SELECT status, count(*) FROM genroc._instances GROUP BY 1 ORDER BY 1" | tr '|' ' ')
  [ "$got" = "$want" ] || { echo "statuses: $got"; echo "wanted: $want"; return 1; }
  # w-old's leased task was claimed again, the kept event was delivered
  [ -n "$epoch" ] && [ "$(qv "$db" "SELECT lease_epoch FROM genroc._instances WHERE name = 'leased'")" != "$epoch" ] &&
    [ "$(qv "$db" "SELECT output->>'approved' FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id WHERE d.name = 'evt'")" = true ]
}
