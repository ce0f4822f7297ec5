/*
 * Aliases and deletions: a definition's named pointers at one or two of its
 * versions, and the deletion of a definition or one of its versions.  The
 * functions are the engine's (engine/aliases.cpp, entry points in
 * extension/aliases.c), the same code the SQLite store runs.
 *
 * An alias belongs to its definition: who may define a name may set and
 * drop its aliases (genroc_admin, or the name's owner), who may read it may
 * read them (genroc_operator, or the owner).  A start by an alias (start's
 * option "alias") draws one of its versions by their weights and keeps the
 * alias as the instance's label "genroc:alias".
 *
 * Semantics of deletion (genroc.undefine): a deleted name is refused by
 * start (RC017), left out of list_definitions, and loses its aliases; its
 * versions stay (the instances that ran them refer to them: running ones go
 * on, finished ones keep their history) and get_definition still reads them,
 * with "deleted_at".  A later define of the name makes it live again, its
 * versions numbered on from the last.  A deleted version is refused by a
 * start naming it (RC017), and cannot be deleted while an alias routes to
 * it (55006).
 */

-- routing: [{"version": n, "weight": w}, ...], one or two versions of the
-- name, weights summing to 100 (engine/aliases.cpp checks it)
CREATE TABLE genroc._aliases (
	name		text NOT NULL,
	alias		text NOT NULL,
	routing		jsonb NOT NULL,
	description	text,
	created_at	timestamptz NOT NULL,
	updated_at	timestamptz NOT NULL,
	PRIMARY KEY (name, alias)
);

-- version 0: the whole name; another: that version
CREATE TABLE genroc._deletions (
	name		text NOT NULL,
	version		int NOT NULL,
	deleted_at	timestamptz NOT NULL,
	PRIMARY KEY (name, version)
);

REVOKE ALL ON genroc._aliases, genroc._deletions FROM PUBLIC;

CREATE FUNCTION genroc.alias_set(p_name text, p_alias text, p_routing jsonb, p_description text DEFAULT NULL)
	RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_alias_set'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.alias_set(text, text, jsonb, text) IS
	'Makes alias p_alias of definition p_name, or replaces its routing ([{"version": n, "weight": w}], one or two versions, weights summing to 100) and description.';

CREATE FUNCTION genroc.alias_drop(p_name text, p_alias text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_alias_drop'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.alias_drop(text, text) IS
	'Drops alias p_alias of definition p_name; RC016 when there is none.';

CREATE FUNCTION genroc.get_alias(p_name text, p_alias text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_get_alias'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.get_alias(text, text) IS
	'One alias as {name, alias, routing, description, created_at, updated_at}; RC016 when there is none.';

CREATE FUNCTION genroc.list_aliases(p_name text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_list_aliases'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.list_aliases(text) IS
	'The aliases of definition p_name, a JSON array of get_alias''s objects ordered by alias.';

CREATE FUNCTION genroc.undefine(p_name text, p_version int DEFAULT NULL) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_undefine'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.undefine(text, int) IS
	'Deletes definition p_name (no more starts, not listed, its aliases dropped; running instances go on) or its version p_version (55006 while an alias routes to it).';
