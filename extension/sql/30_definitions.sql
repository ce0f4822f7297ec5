/*
 * Definitions: define, list and read them.
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

/*
 * The text a version was first defined with, as written (its spacing, key
 * order and number forms), beside the canonical jsonb the engine runs:
 * genroc.define(text, text) keeps it; a define of jsonb has none to keep
 * (NULL).  get_definition answers it as "source".
 */
ALTER TABLE genroc._definitions ADD COLUMN source text;

/*
 * define, list_definitions and get_definition are the engine's
 * (engine/definitions.cpp, entry points in extension/definitions.c), the same
 * code the SQLite store runs.  Semantics of define: versions of one name
 * are numbered 1, 2, ... in the order their content (the canonical jsonb
 * text, by its sha256) first appeared; a define of content a version
 * already has answers that version (is_new false); the name is locked
 * (genroc._lock('define', name)) so two concurrent defines cannot take
 * one number.  22004 for a NULL argument, 22023 for an empty or too long
 * name (genroc._check_name), RC001 naming the JSON path of the fault,
 * 42501 for another role's name.
 */
CREATE FUNCTION genroc.define(p_name text, p_definition jsonb)
	RETURNS TABLE (name text, version int, is_new boolean)
	AS 'MODULE_PATHNAME', 'genroc_define'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.define(text, jsonb) IS
	'Validates an ASL definition and stores it as a new version of p_name unless a stored version has the same content.';

-- The same with the definition as text: a new version keeps the text as
-- written (get_definition's "source").  A call with an untyped literal,
-- genroc.define('name', '{...}'), is this one.
CREATE FUNCTION genroc.define(p_name text, p_definition text)
	RETURNS TABLE (name text, version int, is_new boolean)
	AS 'MODULE_PATHNAME', 'genroc_define_text'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.define(text, text) IS
	'genroc.define of a definition''s JSON text; a new version keeps the text as written (get_definition''s source).';

CREATE FUNCTION genroc.list_definitions()
	RETURNS TABLE (name text, version int, created_at timestamptz)
	AS 'MODULE_PATHNAME', 'genroc_list_definitions'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.list_definitions() IS
	'The newest version of every definition the caller may read, by name.';

-- The stored text of one definition (the newest version when p_version is NULL).
CREATE FUNCTION genroc.get_definition(p_name text, p_version int DEFAULT NULL)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_get_definition'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.get_definition(text, int) IS
	'One stored definition as {name, version, definition, source, created_at} (source: the text as written, or null); raises RC002 when there is none.';
