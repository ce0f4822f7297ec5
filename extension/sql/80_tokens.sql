/*
 * API tokens: the credentials `genroc serve|api --auth` accepts as
 * "Authorization: Bearer <token>" (docs/security.md "Authentication").
 *
 * A token's text is grt_<id>_<secret>: id is 8 to 32 of a-z and 0-9 (the
 * row's key, so a check is one index lookup), secret is 32 to 128 of A-Z,
 * a-z and 0-9.  Only the sha256 of the whole text is stored; the text itself
 * is shown once, by token_create.  The secret carries at least 128 random
 * bits, so an unsalted hash is enough; the hashes are compared in constant
 * time anyway.
 *
 * Permissions: admin, operator, worker, reader; the HTTP server decides what
 * each one may do.  A revoked token keeps its row (who made it, when it was
 * revoked) and never verifies again.
 *
 * Privileges: these functions hand out credentials, so PUBLIC may not run
 * them.  An admin grants EXECUTE on genroc.token_verify to the role genroc's
 * HTTP server connects as (and on token_create for a seed tokens file), and
 * on token_create / token_list / token_revoke to whoever administers tokens.
 */

CREATE TABLE genroc._tokens (
	id			text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{8,32}$'),
	name		text NOT NULL CHECK (name <> ''),
	hash		bytea NOT NULL,			-- sha256 of the token text, never the text
	permissions	text[] NOT NULL,		-- sorted, unique
	created_by	text NOT NULL,			-- a token's name, a JWT subject, or "cli"
	created_at	timestamptz NOT NULL,
	revoked_at	timestamptz
);
REVOKE ALL ON genroc._tokens FROM PUBLIC;

/*
 * token_create, token_verify, token_list and token_revoke are the engine's
 * (engine/tokens.cpp, entry points in extension/tokens.c), the same code
 * the SQLite store runs.
 *
 * Semantics of token_create: without p_secret a new token (random id and
 * secret from OpenSSL's CSPRNG: 48 bits of id, 256 of secret); with
 * p_secret (a whole token text, e.g. from a seed tokens file) that text's
 * hash is stored under its id.  Seeding is idempotent: the same text with
 * the same name and permissions again returns the existing token (is_new
 * false, revoked_at as it is: a revoked token stays revoked); the id with
 * another secret, name or permissions is 23505 naming the id.  The
 * permissions are kept sorted and without repeats; NULL is 22004, an empty
 * list or an unknown name (named) 22023.  Returns {id, name, permissions,
 * created_by, created_at, revoked_at, token, is_new}; token, the full text,
 * is shown here only.
 */
CREATE FUNCTION genroc.token_create(p_name text, p_permissions text[], p_created_by text,
									p_secret text DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_token_create'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.token_create(text, text[], text, text) IS
	'Creates an API token with permissions (admin, operator, worker, reader); returns it with its text, shown only here. p_secret: store that token text instead of a new one (seeding).';

-- Semantics: {id, name, permissions, created_by} of a live token whose text
-- hashes to the stored hash (the hashes compared in constant time); NULL
-- for anything else (malformed, unknown, wrong secret, revoked).  No
-- caching anywhere: a revoke is seen at once.
CREATE FUNCTION genroc.token_verify(p_token text) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'genroc_token_verify'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.token_verify(text) IS
	'The token''s id, name, permissions and creator when the text is a live token; NULL otherwise.';

CREATE FUNCTION genroc.token_list() RETURNS SETOF jsonb
	AS 'MODULE_PATHNAME', 'genroc_token_list'
	LANGUAGE C STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.token_list() IS
	'Every token, revoked ones too: id, name, permissions, created_by, created_at, revoked_at (never the text or its hash).';

-- Semantics: revoked at genroc.now(), at once for every server; revoking a
-- revoked token keeps its first time; an unknown id is 42704.
CREATE FUNCTION genroc.token_revoke(p_id text) RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_token_revoke'
	LANGUAGE C VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION genroc.token_revoke(text) IS
	'Revokes a token: it stops verifying at once.';

-- The helpers of the SQL functions above before the engine had them: gone
-- (nothing in a fresh install; an upgrade drops them here, once nothing
-- depends on them).
DROP FUNCTION IF EXISTS genroc._token_json(genroc._tokens), genroc._token_id(text),
	genroc._check_permissions(text[]);
-- genroc._iso, whose last caller was _token_json: timestamps as text are
-- the engine's (engine::iso_us)
DROP FUNCTION IF EXISTS genroc._iso(timestamptz);

-- Credentials: not for PUBLIC (see the top of this file for the grants).
REVOKE ALL ON FUNCTION genroc.token_create(text, text[], text, text), genroc.token_verify(text),
	genroc.token_list(), genroc.token_revoke(text) FROM PUBLIC;
