/*
 * Roles and ownership: who may call what, and on whose rows (docs/security.md "Roles
 * and ownership").
 *
 * Capabilities are four group roles, created by the install when absent:
 *   genroc_admin     queues, tokens, prune, retention by tick; passes every
 *                    ownership check (any definition, instance, worker id);
 *                    a member of the other three
 *   genroc_operator  read, cancel, retry, resume and emit for any instance;
 *                    read any definition and worker
 *   genroc_worker    register and own worker ids; claim, renew, release,
 *                    complete, fail; activities; tick
 *   genroc_user      define its own definitions, start them, read, cancel
 *                    and emit for its own instances
 * A role has a capability when it has the privileges of the group
 * (pg_has_role ... 'USAGE': GRANT genroc_user TO app), when it is a
 * superuser, or when it owns the extension.  PUBLIC has nothing, not even
 * USAGE on the schema.  Which function needs which capability is the
 * EXECUTE grants at the end of the install (99_privileges.sql), so
 * PostgreSQL itself refuses a call without it (42501) before any of
 * genroc's code runs; the checks here are about ownership.
 *
 * Why group roles rather than grants in a genroc table: a PostgreSQL user
 * already knows GRANT role TO role, \du shows it, pg_has_role answers it
 * from a per-backend cache (nothing to read on the hot path), and EXECUTE
 * grants make PostgreSQL do the capability check.  Roles are cluster-wide:
 * a second database's install finds them and leaves them alone, and DROP
 * EXTENSION does not drop them (as pgsodium does); a member of
 * genroc_worker is a worker in every database of the cluster that has
 * genroc and lets it CONNECT.
 *
 * Ownership: a definition name belongs to the role that defined its first
 * version (every version row carries that owner), an instance to the role
 * that started it (children and calls carry their root's owner), a worker
 * id to the role that registered it.  A role acts on a row it owns, on a
 * row owned by a role it is a member of (pg_has_role ... 'MEMBER'), or on
 * any row when it has the capability that covers everyone's rows
 * (operator for reading and steering instances, admin for everything).
 * Refusals are 42501 and name only the object the caller named.
 *
 * The caller: genroc acts for the session's current role (after SET ROLE),
 * genroc._caller(), because inside genroc's SECURITY DEFINER functions
 * current_user is the extension's owner.  A SECURITY DEFINER function of
 * another role in between does not change whom genroc acts for; its owner
 * still needs the EXECUTE grant (the capability) to call genroc at all.
 * Inside a security-restricted operation (ANALYZE, VACUUM, CLUSTER,
 * REINDEX, CREATE INDEX, REFRESH MATERIALIZED VIEW: a table owner's code,
 * run with the outer role of whoever started the command, autovacuum's
 * superuser included) every genroc function refuses with 42501: each
 * SECURITY DEFINER function calls genroc._entry() (or _caller()) first,
 * and the C entry points refuse the same way (test/pgtap/restricted.sql).
 */

DO $$
DECLARE
	v_role text;
BEGIN
	FOREACH v_role IN ARRAY ARRAY['genroc_admin', 'genroc_operator', 'genroc_worker', 'genroc_user'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = v_role) THEN
			EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
		END IF;
	END LOOP;
	FOREACH v_role IN ARRAY ARRAY['genroc_operator', 'genroc_worker', 'genroc_user'] LOOP
		IF NOT pg_catalog.pg_has_role('genroc_admin', v_role, 'MEMBER') THEN
			EXECUTE format('GRANT %I TO genroc_admin', v_role);
		END IF;
	END LOOP;
END;
$$;

CREATE FUNCTION genroc._caller() RETURNS oid
	AS 'MODULE_PATHNAME', 'genroc_caller'
	LANGUAGE C STABLE PARALLEL SAFE;

-- The refusal alone (42501 inside ANALYZE, VACUUM, CLUSTER, REINDEX, CREATE
-- INDEX, REFRESH MATERIALIZED VIEW: genroc.c genroc_refuse_restricted), the
-- first thing every SECURITY DEFINER function of genroc does; _caller()
-- refuses the same way.  VOLATILE, so that it runs where it is written.
CREATE FUNCTION genroc._entry() RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_entry'
	LANGUAGE C VOLATILE PARALLEL SAFE;

-- Owners: the role that made the row.  A definition's owner is replaced by
-- its name's owner on insert (genroc._definitions_owner); a child instance
-- gets its parent's (65_children.sql).  regrole: an oid on disk, compared
-- and indexed as one (no catalog look-up), which pg_dump writes and a
-- restore reads by role name, so a restore into another cluster, where the
-- same name has another oid, keeps who owns what (docs/operations.md "Backups").
ALTER TABLE genroc._definitions ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._instances ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
ALTER TABLE genroc._workers ADD COLUMN owner regrole NOT NULL DEFAULT genroc._caller();
CREATE INDEX _definitions_owner ON genroc._definitions (owner, name);

-- Whether p_role has capability p_cap (admin, operator, worker, user).
CREATE FUNCTION genroc._can(p_role oid, p_cap text) RETURNS boolean
	LANGUAGE sql STABLE PARALLEL SAFE
	-- an unknown capability is no capability (not a missing role's 42704)
	RETURN CASE WHEN p_cap IN ('admin', 'operator', 'worker', 'user') THEN
			pg_catalog.pg_has_role(p_role, 'genroc_' || p_cap, 'USAGE')
			OR p_role = (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'genroc')
		ELSE false END;

-- Whether p_role may act on a row of p_owner: its own, a role it is a
-- member of, or anyone's with genroc_<p_cap> (admin has every capability).
-- SQL bodies are bound at install, so a caller's search_path cannot change
-- what they call (the instances view runs them as the caller).
CREATE FUNCTION genroc._may(p_role oid, p_owner oid, p_cap text) RETURNS boolean
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN p_owner = p_role
		OR pg_catalog.pg_has_role(p_role, p_owner, 'MEMBER')
		OR genroc._can(p_role, p_cap);

-- Whether the caller sees rows of p_owner (the views' filter).
CREATE FUNCTION genroc._sees(p_owner oid, p_cap text) RETURNS boolean
	LANGUAGE sql STABLE PARALLEL SAFE
	RETURN genroc._may(genroc._caller(), p_owner, p_cap);

-- 42501 unless the caller may act on a row of p_owner (NULL: no such row,
-- the function goes on to say so); p_what names the object.
CREATE FUNCTION genroc._check_owner(p_owner oid, p_cap text, p_what text) RETURNS void
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_caller oid := genroc._caller();
BEGIN
	IF p_owner IS NULL OR p_owner = v_caller OR genroc._may(v_caller, p_owner, p_cap) THEN
		RETURN;
	END IF;
	RAISE EXCEPTION 'permission denied for %', p_what
		USING ERRCODE = '42501',
			  DETAIL = format('It belongs to another role, and role "%s" is neither a member of it nor of genroc_%s.',
							  pg_catalog.pg_get_userbyid(v_caller), p_cap),
			  HINT = 'docs/security.md "Roles and ownership" says who may act on what.';
END;
$$;

-- The checks at the top of the public functions, one per kind of object.
-- Each is one index lookup; none locks (the function locks as before).

-- Each reads the owner once and returns at once when it is the caller (the
-- hot path: a worker's own worker id and leases); only another owner costs
-- the membership and capability checks of _check_owner.

-- An instance: its owner, or genroc_<p_cap> (operator or admin).
CREATE FUNCTION genroc._check_instance(p_instance bigint, p_cap text) RETURNS void
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_owner oid;
BEGIN
	SELECT i.owner INTO v_owner FROM genroc._instances i WHERE i.id = p_instance;
	IF v_owner <> genroc._caller() THEN
		PERFORM genroc._check_owner(v_owner, p_cap, format('instance %s', p_instance));
	END IF;
END;
$$;

-- A definition name: its owner, or genroc_<p_cap>.
CREATE FUNCTION genroc._check_definition(p_name text, p_cap text) RETURNS void
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_owner oid;
BEGIN
	SELECT d.owner INTO v_owner FROM genroc._definitions d WHERE d.name = p_name
	ORDER BY d.version LIMIT 1;
	IF v_owner <> genroc._caller() THEN
		PERFORM genroc._check_owner(v_owner, p_cap, format('definition "%s"', p_name));
	END IF;
END;
$$;

-- A worker id: the role that registered it, or an admin.  An id nobody
-- registered passes (the function says RC006, or registers it).
CREATE FUNCTION genroc._check_worker(p_worker text) RETURNS void
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_owner oid;
BEGIN
	SELECT w.owner INTO v_owner FROM genroc._workers w WHERE w.id = p_worker;
	IF v_owner <> genroc._caller() THEN
		PERFORM genroc._check_owner(v_owner, 'admin', format('worker "%s"', p_worker));
	END IF;
END;
$$;

-- A task token: when the activity was claimed under a registered worker
-- id, that id's role (or an admin).  An unclaimed token is its own
-- credential, for any role that works.
CREATE FUNCTION genroc._check_activity(p_token text) RETURNS void
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_owner oid;
BEGIN
	SELECT w.owner INTO v_owner
	FROM genroc._instances i JOIN genroc._workers w ON w.id = i.activity_owner
	WHERE i.activity_token = p_token;
	IF v_owner <> genroc._caller() THEN
		PERFORM genroc._check_owner(v_owner, 'admin', 'this task token');
	END IF;
END;
$$;

-- A definition row takes its name's owner; adding a version to another
-- role's name is 42501 unless the caller is a member of it or an admin.
-- Here, in the insert, rather than only at the top of define: the insert
-- runs after define has serialized the name, so two first defines of one
-- name by two roles cannot both win.
CREATE FUNCTION genroc._definitions_owner() RETURNS trigger
	LANGUAGE plpgsql
AS $$
DECLARE
	v_owner oid;
BEGIN
	SELECT d.owner INTO v_owner FROM genroc._definitions d WHERE d.name = NEW.name
	ORDER BY d.version LIMIT 1;
	IF FOUND THEN
		PERFORM genroc._check_owner(v_owner, 'admin', format('definition "%s"', NEW.name));
		NEW.owner := v_owner;
	END IF;
	RETURN NEW;
END;
$$;
CREATE TRIGGER _definitions_owner BEFORE INSERT ON genroc._definitions
	FOR EACH ROW EXECUTE FUNCTION genroc._definitions_owner();

/*
 * Semantics of capabilities: {"role", "admin", "operator", "worker",
 * "user", "token_verify", "token_create"} for the calling role: whether it
 * has each capability and may run those two token functions (the binary
 * checks what it needs at start, docs/security.md "Roles and ownership").
 */
CREATE FUNCTION genroc.capabilities() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_capabilities'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.capabilities() IS
	'The calling role''s genroc capabilities (admin, operator, worker, user) and whether it may verify and create API tokens.';
