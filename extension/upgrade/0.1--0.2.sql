/*
 * genroc 0.1 -> 0.2: the hand-written part of the upgrade (README "Upgrades").
 *
 * Runs first; then every part of extension/sql/ runs again without its
 * table statements (scripts/upgrade-script.sh).  Put here what that cannot
 * do: ALTER TABLE for a new or changed column, constraint or index, a new
 * table (CREATE TABLE with its indexes; its pg_extension_config_dump call is
 * in 95_backup.sql, which runs again), seed rows, DROP FUNCTION for a
 * function whose signature or return type changed, DROP VIEW for a view
 * whose columns changed.  test/ops/upgrade.sh fails when the result differs
 * from a fresh install of 0.2.
 *
 * 0.2 changes no table of 0.1: it adds pg_dump marks, the default queue's
 * merge trigger and genroc.version(), all in 95_backup.sql.
 */
