/*
 * Read-only views for psql, and the privileges of the whole API.
 */

-- security_barrier: the caller's own conditions run only on rows the
-- filter let through, so a leaky function in a WHERE sees nothing else.
CREATE VIEW genroc.instances WITH (security_barrier) AS
	SELECT i.id, d.name AS definition, d.version, i.status::text AS status, i.state, i.resource, i.queue,
		   i.priority, i.attempt, i.interruptions, i.lease_owner, i.lease_epoch,
		   i.lease_expires, i.eligible_at, i.wait_kind::text AS wait_kind, i.wait_until, i.activity, i.error,
		   i.labels, i.name, i.idempotency_key, i.created_at, i.updated_at, i.ended_at,
		   i.parent_id, i.root_id, i.child_index, i.scope, i.owner
	FROM genroc._instances i
	JOIN genroc._definitions d ON d.id = i.definition_id
	WHERE genroc._sees(i.owner, 'operator');
COMMENT ON VIEW genroc.instances IS 'Every instance the caller may read (its own; operators every one), one row each (payloads left out); for psql.';

CREATE VIEW genroc.workers AS
	SELECT * FROM genroc.list_workers();
COMMENT ON VIEW genroc.workers IS 'Every registered worker the caller may see, whether it is live and how many tasks it holds; for psql.';

-- Not for PUBLIC; the capability groups read them (99_privileges.sql),
-- each role its own rows.
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
