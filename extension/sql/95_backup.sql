/*
 * Backups and the version.
 *
 * pg_dump leaves out the rows of an extension's tables unless the extension
 * marks them (pg_extension_config_dump): without these calls a dump restores
 * genroc with no definitions and no instances.  Every table whose rows are
 * the user's is marked, whole, and so are their identity sequences.
 * test/ops/dump_restore.sh fails when a table of the extension is neither
 * marked here nor listed there as not needing it.
 *
 * Everything in this file runs again on every upgrade (docs/operations.md "Upgrades").
 */

SELECT pg_catalog.pg_extension_config_dump('genroc._definitions', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._instances', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._workers', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._log', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._queues', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._queue_starts', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._events', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._tokens', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._fanouts', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._objects', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._aliases', '');
SELECT pg_catalog.pg_extension_config_dump('genroc._deletions', '');
-- the identity sequences, so a restored database does not hand out ids
-- again (one call per statement: each rewrites the pg_extension row)
SELECT pg_catalog.pg_extension_config_dump(
	pg_catalog.pg_get_serial_sequence('genroc._definitions', 'id')::regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
	pg_catalog.pg_get_serial_sequence('genroc._instances', 'id')::regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
	pg_catalog.pg_get_serial_sequence('genroc._log', 'seq')::regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
	pg_catalog.pg_get_serial_sequence('genroc._queues', 'position')::regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
	pg_catalog.pg_get_serial_sequence('genroc._events', 'seq')::regclass, '');

-- The install script inserts the queue "default"; a restore creates the
-- extension (that row again), then loads the dumped rows, the default
-- queue's among them, with the settings the user gave it.  Inserting a
-- "default" row when one exists takes the new row's settings instead of
-- failing on the key (queue_set's INSERT ... ON CONFLICT does the same).
CREATE FUNCTION genroc._queues_default_merge() RETURNS trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	UPDATE genroc._queues q SET
		kind = NEW.kind, handler = NEW.handler, match = NEW.match,
		global_concurrency = NEW.global_concurrency,
		partition_concurrency = NEW.partition_concurrency,
		rate_limit = NEW.rate_limit, rate_period = NEW.rate_period,
		partition_rate_limit = NEW.partition_rate_limit,
		partition_rate_period = NEW.partition_rate_period,
		updated_at = NEW.updated_at
	WHERE q.name = NEW.name;
	IF FOUND THEN
		RETURN NULL;
	END IF;
	RETURN NEW;
END;
$$;
CREATE TRIGGER _queues_default_merge BEFORE INSERT ON genroc._queues
	FOR EACH ROW WHEN (NEW.name = 'default')
	EXECUTE FUNCTION genroc._queues_default_merge();
REVOKE ALL ON FUNCTION genroc._queues_default_merge() FROM PUBLIC;

-- The version of the extension in this database, checked against the C
-- module's: an error that says what to upgrade when they differ.
CREATE FUNCTION genroc.version() RETURNS text
	LANGUAGE c STABLE STRICT
	AS 'MODULE_PATHNAME', 'genroc_version';
COMMENT ON FUNCTION genroc.version() IS
	'The genroc extension version of this database; an error (RC020) when the installed module is another version.';
