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
 * The tables of 0.2 against 0.1, in the order a fresh install makes them
 * (the column order must match): the session columns of _workers
 * (10_tables.sql), the table of lock rows genroc._locks (10_tables.sql),
 * the owner columns and their index (12_roles.sql).  The rest of 0.2 (pg_dump
 * marks, the default queue's merge trigger, genroc.version(), the roles and
 * their grants, the new helpers) is in the parts, which run after this.
 */

-- the worker's session (fencing; 10_tables.sql): NULL for a worker
-- registered by 0.1, which the heartbeat alone judges, as a pooled one
ALTER TABLE genroc._workers ADD COLUMN session_pid int, ADD COLUMN session_start timestamptz;

-- lock rows instead of advisory keys (10_tables.sql); its REVOKE runs again
-- with 10_tables.sql, and it is not marked for pg_dump (95_backup.sql)
CREATE TABLE genroc._locks (
	kind	text NOT NULL,
	key		text NOT NULL,
	PRIMARY KEY (kind, key)
);

-- 0.1 let PUBLIC use the schema; 0.2 gives it to the capability groups
-- only (99_privileges.sql, which also revokes EXECUTE from PUBLIC)
REVOKE USAGE ON SCHEMA genroc FROM PUBLIC;

-- Owners (12_roles.sql).  A SQL-standard function body (RETURN …) that
-- takes the row type of genroc._instances keeps PostgreSQL from adding a
-- column to it: these three are dropped first, and made again by
-- 20_core.sql, 40_instances.sql and 65_children.sql below (no grants to
-- keep: they are private helpers).  The column default is genroc._caller(), which
-- 12_roles.sql defines again after this; the rows 0.1 made get the role
-- that runs ALTER EXTENSION (a stable default is evaluated once, here).
CREATE FUNCTION genroc._caller() RETURNS oid
	AS 'MODULE_PATHNAME', 'genroc_caller'
	LANGUAGE C STABLE PARALLEL SAFE;
DROP FUNCTION genroc._task_request(genroc._instances, text, jsonb, text, text),
	genroc._instance_json(genroc._instances), genroc._depth(genroc._instances);
ALTER TABLE genroc._definitions ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._instances ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._workers ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
CREATE INDEX _definitions_owner ON genroc._definitions (owner, name);

-- Who ticks (10_tables.sql, 75_metrics.sql): not user data, not marked for
-- pg_dump; its REVOKE runs again with 10_tables.sql.
CREATE TABLE genroc._tickers (
	ticked_by		text PRIMARY KEY,
	kind			text NOT NULL CHECK (kind IN ('ticker', 'binary', 'session')),
	role			text NOT NULL,
	first_tick_at	timestamptz NOT NULL,
	last_tick_at	timestamptz NOT NULL,
	ticks			bigint NOT NULL DEFAULT 1
);

-- genroc.claim returns each task's queue since 0.2 (the binary's metrics
-- per queue): a changed return type is dropped and made again by
-- 50_workers.sql, its grant by 99_privileges.sql.
DROP FUNCTION genroc.claim(text, text[], int);
