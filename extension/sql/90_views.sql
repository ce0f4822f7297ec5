/*
 * Read-only views for psql, and the privileges of the whole API.
 */

CREATE VIEW genroc.instances AS
	SELECT i.id, d.name AS definition, d.version, i.status, i.state, i.resource, i.queue,
		   i.priority, i.attempt, i.interruptions, i.lease_owner, i.lease_epoch,
		   i.lease_expires, i.eligible_at, i.wait_kind, i.wait_until, i.activity, i.error,
		   i.labels, i.name, i.idempotency_key, i.created_at, i.updated_at, i.ended_at,
		   i.parent_id, i.root_id, i.child_index, i.scope
	FROM genroc._instances i
	JOIN genroc._definitions d ON d.id = i.definition_id;
COMMENT ON VIEW genroc.instances IS 'Every instance, one row each (payloads left out); for psql.';

CREATE VIEW genroc.workers AS
	SELECT * FROM genroc.list_workers();
COMMENT ON VIEW genroc.workers IS 'Every registered worker, whether it is live and how many tasks it holds; for psql.';

-- The views show every instance: an admin grants SELECT on them to the
-- roles that may see that (e.g. GRANT SELECT ON genroc.instances TO ops).
REVOKE ALL ON genroc.instances, genroc.workers FROM PUBLIC;

-- Private helpers (genroc._*) are for the public functions only.
DO $$
DECLARE
	v_fn regprocedure;
BEGIN
	FOR v_fn IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
				WHERE p.pronamespace = 'genroc'::regnamespace AND p.proname LIKE '\_%' LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
	END LOOP;
END;
$$;
