#!/usr/bin/env bash
# dump_restore.sh — pg_dump keeps genroc's data: a database filled with
# fill.sql is dumped (custom and plain formats), restored into fresh
# databases, and has the same rows there; every table of the extension is
# marked for dumping; a real `genroc worker` then carries on with the
# restored instances to their ends.  Environment: see lib.sh.
source "$(dirname "$0")/lib.sh"

# A definition owned by a role other than the superuser's: owners are
# dumped by role name (regrole, 12_roles.sql).
q -c "DROP ROLE IF EXISTS ops_owner" -c "CREATE ROLE ops_owner IN ROLE genroc_user" >/dev/null 2>&1
fresh_db ops_src && q -d ops_src -f "$OPS_DIR/fill.sql" >"$WORK/fill.log" 2>&1 &&
  q -d ops_src -c "SET ROLE ops_owner" \
    -c "SELECT genroc.define('mine', '{\"StartAt\":\"D\",\"States\":{\"D\":{\"Type\":\"Pass\",\"End\":true}}}')" \
    >>"$WORK/fill.log" 2>&1 ||
  { cat "$WORK/fill.log"; not_ok "fill a database"; finish; exit 1; }
# A value over genroc.object_threshold, stored once in genroc._objects and
# referenced from the instance row and its log (fill.sql keeps to 0.1's API,
# which had no stored values, so it is added here).
BIG="{\"blob\": \"$(head -c 15000 /dev/zero | tr '\0' 'x')\"}"
q -d ops_src -c "SET genroc.test_clock = '2030-01-01 00:00:00Z'" \
  -c "SELECT genroc.start('done', '$BIG', '{\"name\": \"big\"}')" >>"$WORK/fill.log" 2>&1 ||
  { cat "$WORK/fill.log"; not_ok "start an instance with a large input"; finish; exit 1; }
CARRY_EXTRA_SUCCEEDED=1
snapshot ops_src "$WORK/src.rows"

# Tables and sequences whose rows pg_dump may leave out: NOT_DATA (lib.sh),
# the lock rows of genroc._locks, which carry nothing (a restored database
# makes them again on first use; dumping them would only copy stale lock
# rows).  A new table or sequence of the extension must be marked in
# extension/sql/95_backup.sql or listed here.
not_dumped=$NOT_DATA
unmarked() {
  local t missing=0
  for t in $(qv ops_src "SELECT c.oid::regclass FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
                         AND d.classid = 'pg_class'::regclass
                         WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
                           AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'genroc')
                           AND c.relkind IN ('r', 'S')
                           AND c.oid <> ALL ((SELECT extconfig FROM pg_extension WHERE extname = 'genroc')::oid[])"); do
    [[ " $not_dumped " == *" $t "* ]] || { echo "$t is not marked with pg_extension_config_dump"; missing=1; }
  done
  return $missing
}
check "every table and sequence of the extension is marked for pg_dump" unmarked

# The rows are in the dump (a dump without the marks restores empty tables).
pg_dump -Fc -d ops_src -f "$WORK/src.dump" 2>"$WORK/dump.err"
check "pg_dump (custom format) succeeds" test -s "$WORK/src.dump"
pg_dump -d ops_src -f "$WORK/src.sql" 2>>"$WORK/dump.err"
check "pg_dump (plain format) succeeds" test -s "$WORK/src.sql"

# The owner's role made again, so it has another oid, as in another
# cluster: the restored rows must name it, not the old oid.
check "the owning role is dropped and made again, with another oid" \
  q -c "DROP ROLE ops_owner" -c "CREATE ROLE ops_owner IN ROLE genroc_user"

restore_custom() {
  q -c "DROP DATABASE IF EXISTS ops_dst" -c "CREATE DATABASE ops_dst" &&
    pg_restore --exit-on-error -d ops_dst "$WORK/src.dump"
}
check "pg_restore into a fresh database succeeds" restore_custom
restore_plain() {
  q -c "DROP DATABASE IF EXISTS ops_dst_plain" -c "CREATE DATABASE ops_dst_plain" &&
    q -d ops_dst_plain -f "$WORK/src.sql" >/dev/null
}
check "psql restores the plain dump into a fresh database" restore_plain

same_rows() { # db
  snapshot "$1" "$WORK/$1.rows" && diff "$WORK/src.rows" "$WORK/$1.rows" &&
    [ "$(grep -vc '^==' "$WORK/src.rows")" -gt 50 ]
}
check "the restored database has the same rows (custom format)" same_rows ops_dst
check "the restored database has the same rows (plain format)" same_rows ops_dst_plain
check "the default queue keeps its settings, once" \
  test "$(qv ops_dst "SELECT count(*) || ' ' || global_concurrency FROM genroc._queues WHERE name = 'default' GROUP BY global_concurrency")" = "1 50"
check "the token still verifies after the restore" \
  test "$(qv ops_dst "SELECT genroc.token_verify('grt_ops0test_AbCdEfGhIjKlMnOpQrStUvWxYz012345') ->> 'name'")" = ann

big_value() { # db: the large input is in _objects, referenced, and reads back whole
  local ref
  ref=$(qv "$1" "SELECT input ->> 'genroc:object' FROM genroc._instances WHERE name = 'big'")
  [ "$(qv "$1" "SELECT count(*) FROM genroc._objects")" -ge 1 ] &&
    [ "$(qv "$1" "SELECT genroc.get_object('$ref') = '$BIG'::jsonb")" = t ] &&
    [ "$(qv "$1" "SELECT (genroc.get_instance(id) -> 'input') = '$BIG'::jsonb FROM genroc._instances WHERE name = 'big'")" = t ] || {
      echo "ref: $ref"; qv "$1" "SELECT left(input::text, 80) FROM genroc._instances WHERE name = 'big'"; return 1; }
}
check "a stored large value reads back whole after the restore (custom format)" big_value ops_dst
check "a stored large value reads back whole after the restore (plain format)" big_value ops_dst_plain

owned() { # db
  test "$(qv "$1" "SELECT owner::text || ' ' || (owner = 'ops_owner'::regrole) FROM genroc._definitions WHERE name = 'mine'")" = "ops_owner true" &&
    test "$(qv "$1" "SET ROLE ops_owner; SELECT count(*) FROM genroc.list_definitions() WHERE name = 'mine'" | tail -1)" = 1
}
check "a definition keeps its owner by role name, who still sees it (custom format)" owned ops_dst
check "a definition keeps its owner by role name, who still sees it (plain format)" owned ops_dst_plain

check "a genroc worker carries on with the restored instances to their ends" carry_on ops_dst

q -c "DROP DATABASE ops_src" -c "DROP DATABASE ops_dst" -c "DROP DATABASE ops_dst_plain" -c "DROP ROLE ops_owner" >/dev/null 2>&1
finish
