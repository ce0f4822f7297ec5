#!/usr/bin/env bash
# upgrade.sh — the upgrade walk: install the previous version (its frozen
# install script, extension/genroc--PREV.sql), fill it (fill.sql), check that
# this genroc binary refuses it, ALTER EXTENSION genroc UPDATE, then: the
# schema equals a fresh install's (pg_dump of the extension's objects), the
# rows are unchanged, and a real `genroc worker` carries on with them.  Also
# the messages for a version the module or the binary does not know.
# Environment: see lib.sh.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
CUR=$(sed -n "s/^default_version = '\(.*\)'/\1/p" genroc.control)
PREV=$(sed -n 's/^PREVVERSION *= *//p' Makefile)

fresh_db ops_new || { not_ok "CREATE EXTENSION genroc ($CUR)"; finish; exit 1; }
fresh_db ops_old "$PREV" && q -d ops_old -f "$OPS_DIR/fill.sql" >"$WORK/fill.log" 2>&1 ||
  { cat "$WORK/fill.log"; not_ok "install $PREV and fill it"; finish; exit 1; }
ok "install genroc $PREV and fill it"
snapshot ops_old "$WORK/before.rows"
columns_of ops_old "$WORK/before.columns"
schema_of ops_new "$WORK/new.schema"
schema_of ops_old "$WORK/old.schema"
check "the schema comparison sees $PREV and $CUR differ" sh -c "! cmp -s '$WORK/old.schema' '$WORK/new.schema'"

refused() {
  local out
  out=$(timeout 60 "$GENROC_BIN" worker --database "$(db_url ops_old)" --worker-id probe --manual-tick 2>&1)
  [ $? -ne 0 ] && grep -q "is version $PREV" <<<"$out" && grep -q "ALTER EXTENSION genroc UPDATE TO '$CUR'" <<<"$out" ||
    { echo "$out"; return 1; }
}
check "genroc refuses the $PREV database, saying to run ALTER EXTENSION genroc UPDATE" refused

check "ALTER EXTENSION genroc UPDATE ($PREV -> $CUR)" q -d ops_old -c "ALTER EXTENSION genroc UPDATE"
check "genroc.version() answers $CUR" test "$(qv ops_old "SELECT genroc.version()")" = "$CUR"
schema_of ops_old "$WORK/upgraded.schema"
check "the upgraded schema equals a fresh install's" diff "$WORK/new.schema" "$WORK/upgraded.schema"
check "the same tables are marked for pg_dump" diff <(config_of ops_new) <(config_of ops_old)
snapshot ops_old "$WORK/after.rows" "$WORK/before.columns"
check "the rows are unchanged by the upgrade (the columns $PREV has)" diff "$WORK/before.rows" "$WORK/after.rows"
owned_by_upgrader() { # every row of the three tables, and there are some
  test "$(qv ops_old "SELECT count(*) FILTER (WHERE owner = current_user::regrole) = count(*) AND count(*) > 10
                      FROM (SELECT owner FROM genroc._definitions UNION ALL SELECT owner FROM genroc._instances
                            UNION ALL SELECT owner FROM genroc._workers) o")" = t
}
check "the rows $PREV made are owned by the role that ran the upgrade" owned_by_upgrader
check "a genroc worker carries on with the upgraded instances to their ends" carry_on ops_old

# Versions this build does not know (pg_extension edited in a scratch
# database): the module's version() and the binary say what to upgrade.
fake() { q -d ops_new -c "UPDATE pg_catalog.pg_extension SET extversion = '$1' WHERE extname = 'genroc'" >/dev/null; }
fake 9.9
check "genroc.version() on a newer extension says to install its files" \
  sh -c "psql -X -d ops_new -c 'SELECT genroc.version()' 2>&1 | grep -q 'Install the genroc 9.9 extension files'"
newer() {
  local out
  out=$(timeout 60 "$GENROC_BIN" worker --database "$(db_url ops_new)" --worker-id probe --manual-tick 2>&1)
  [ $? -ne 0 ] && grep -q "Upgrade this genroc binary" <<<"$out" || { echo "$out"; return 1; }
}
check "genroc refuses a newer extension, saying to upgrade the binary" newer
fake 0.0
check "genroc.version() on an older extension says to run ALTER EXTENSION" \
  sh -c "psql -X -d ops_new -c 'SELECT genroc.version()' 2>&1 | grep -q \"ALTER EXTENSION genroc UPDATE TO '$CUR'\""
fake "$CUR"

q -c "DROP DATABASE ops_old" -c "DROP DATABASE ops_new" >/dev/null 2>&1
finish
