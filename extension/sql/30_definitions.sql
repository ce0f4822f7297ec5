/*
 * Definitions: define and list.
 */

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
