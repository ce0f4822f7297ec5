/*
 * Definitions: define and list.
 */

/*
 * Keeps the rows instances refer to, in place of a foreign key from
 * _instances.definition_id (10_tables.sql says why there is none): a
 * definition that has instances cannot be deleted, have its id changed or
 * be truncated away (23503, as the key's check).  genroc itself does none
 * of these; the trigger stops anyone else with rights on the table.
 */
CREATE FUNCTION genroc._definitions_keep() RETURNS trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		IF EXISTS (SELECT 1 FROM genroc._instances) THEN
			RAISE EXCEPTION 'genroc._definitions cannot be truncated: instances refer to its rows'
				USING ERRCODE = '23503';
		END IF;
		RETURN NULL;
	END IF;
	IF (TG_OP = 'DELETE' OR NEW.id IS DISTINCT FROM OLD.id)
	   AND EXISTS (SELECT 1 FROM genroc._instances i WHERE i.definition_id = OLD.id) THEN
		RAISE EXCEPTION 'definition % (% version %) has instances; it cannot be %',
			OLD.id, OLD.name, OLD.version, CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'given another id' END
			USING ERRCODE = '23503';
	END IF;
	RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END;
$$;
CREATE TRIGGER _definitions_keep BEFORE DELETE OR UPDATE OF id ON genroc._definitions
	FOR EACH ROW EXECUTE FUNCTION genroc._definitions_keep();
CREATE TRIGGER _definitions_keep_truncate BEFORE TRUNCATE ON genroc._definitions
	FOR EACH STATEMENT EXECUTE FUNCTION genroc._definitions_keep();

CREATE FUNCTION genroc.define(p_name text, p_definition jsonb)
	RETURNS TABLE (name text, version int, is_new boolean)
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	v_hash text;
	v_version int;
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._flush_commit('progress');
	PERFORM genroc._check_definition(p_name, 'admin');
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_definition IS NULL THEN
		RAISE EXCEPTION 'p_definition must not be null' USING ERRCODE = '22004';
	END IF;
	IF p_name = '' THEN
		RAISE EXCEPTION 'p_name must not be empty' USING ERRCODE = '22023';
	END IF;
	PERFORM genroc._check_name(p_name, 'p_name');
	v_hash := encode(sha256(convert_to(p_definition::text, 'UTF8')), 'hex');

	-- Semantics: versions of one name are numbered 1, 2, ... in the order
	-- their content first appeared; the lock keeps two concurrent defines of
	-- one name from taking the same number (a row lock: genroc._lock).
	PERFORM genroc._lock('define', p_name);
	SELECT d.version INTO v_version
	FROM genroc._definitions d WHERE d.name = p_name AND d.hash = v_hash;
	IF FOUND THEN
		RETURN QUERY SELECT p_name, v_version, false;
		RETURN;
	END IF;

	PERFORM genroc._validate(p_definition, v_hash);
	SELECT coalesce(max(d.version), 0) + 1 INTO v_version
	FROM genroc._definitions d WHERE d.name = p_name;
	INSERT INTO genroc._definitions (name, version, definition, hash, created_at)
	VALUES (p_name, v_version, p_definition, v_hash, genroc.now());
	RETURN QUERY SELECT p_name, v_version, true;
END;
$$;
COMMENT ON FUNCTION genroc.define(text, jsonb) IS
	'Validates an ASL definition and stores it as a new version of p_name unless a stored version has the same content.';

CREATE FUNCTION genroc.list_definitions()
	RETURNS TABLE (name text, version int, created_at timestamptz)
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._entry();
		SELECT DISTINCT ON (d.name) d.name, d.version, d.created_at
		FROM genroc._definitions d
		WHERE genroc._sees(d.owner, 'operator')
		ORDER BY d.name, d.version DESC;
	END;
COMMENT ON FUNCTION genroc.list_definitions() IS
	'The newest version of every definition the caller may read, by name.';

-- One stored definition: the newest version of p_name, or version
-- p_version; RC002 when there is none (get_definition, start, start_many).
CREATE FUNCTION genroc._definition_version(p_name text, p_version int) RETURNS genroc._definitions
	LANGUAGE plpgsql STABLE
AS $$
DECLARE
	v_def genroc._definitions;
BEGIN
	SELECT * INTO v_def FROM genroc._definitions d
	WHERE d.name = p_name AND (p_version IS NULL OR d.version = p_version)
	ORDER BY d.version DESC LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'definition "%"% not found', p_name,
			CASE WHEN p_version IS NULL THEN '' ELSE format(' version %s', p_version) END
			USING ERRCODE = 'RC002';
	END IF;
	RETURN v_def;
END;
$$;

-- The stored text of one definition (the newest version when p_version is NULL).
CREATE FUNCTION genroc.get_definition(p_name text, p_version int DEFAULT NULL)
	RETURNS jsonb
	LANGUAGE plpgsql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_def genroc._definitions;
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._check_definition(p_name, 'operator');
	IF p_name IS NULL THEN
		RAISE EXCEPTION 'p_name must not be null' USING ERRCODE = '22004';
	END IF;
	v_def := genroc._definition_version(p_name, p_version);
	RETURN jsonb_build_object('name', v_def.name, 'version', v_def.version,
							  'definition', v_def.definition,
							  'created_at', genroc._iso(v_def.created_at));
END;
$$;
COMMENT ON FUNCTION genroc.get_definition(text, int) IS
	'One stored definition as {name, version, definition, created_at}; raises RC002 when there is none.';
