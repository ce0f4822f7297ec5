/*
 * API tokens: the credentials `genroc serve|api --auth` accepts as
 * "Authorization: Bearer <token>" (docs/security.md "Authentication").
 *
 * A token's text is grt_<id>_<secret>: id is 8 to 32 of a-z and 0-9 (the
 * row's key, so a check is one index lookup), secret is 32 to 128 of A-Z,
 * a-z and 0-9.  Only the sha256 of the whole text is stored; the text itself
 * is shown once, by token_create.  The secret carries at least 128 random
 * bits, so an unsalted hash is enough, and comparing hashes with "=" leaks
 * nothing about the secret (at most which bytes of a hash matched).
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

-- The id of a token text, or NULL when the text is not grt_<id>_<secret>.
CREATE FUNCTION genroc._token_id(p_token text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN substring(p_token FROM '^grt_([a-z0-9]{8,32})_[A-Za-z0-9]{32,128}$');

-- Semantics: the permissions sorted and without repeats; NULL is 22004, an
-- empty list or an unknown name (named) is 22023.
CREATE FUNCTION genroc._check_permissions(p_permissions text[]) RETURNS text[]
	LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	v_p text;
BEGIN
	IF p_permissions IS NULL THEN
		RAISE EXCEPTION 'p_permissions must not be null' USING ERRCODE = '22004';
	END IF;
	IF cardinality(p_permissions) = 0 THEN
		RAISE EXCEPTION 'a token needs at least one permission' USING ERRCODE = '22023',
			HINT = 'Permissions: admin, operator, worker, reader.';
	END IF;
	FOREACH v_p IN ARRAY p_permissions LOOP
		IF v_p IS NULL OR v_p NOT IN ('admin', 'operator', 'worker', 'reader') THEN
			RAISE EXCEPTION 'unknown permission "%"', coalesce(v_p, 'null') USING ERRCODE = '22023',
				HINT = 'Permissions: admin, operator, worker, reader.';
		END IF;
	END LOOP;
	RETURN ARRAY(SELECT DISTINCT p FROM unnest(p_permissions) p ORDER BY p);
END;
$$;

CREATE FUNCTION genroc._token_json(p_token genroc._tokens) RETURNS jsonb
	LANGUAGE sql IMMUTABLE
	RETURN jsonb_build_object(
		'id', p_token.id, 'name', p_token.name, 'permissions', to_jsonb(p_token.permissions),
		'created_by', p_token.created_by, 'created_at', genroc._iso(p_token.created_at),
		'revoked_at', genroc._iso(p_token.revoked_at));

/*
 * Semantics of token_create: without p_secret a new token (random id and
 * secret); with p_secret (a whole token text, e.g. from a seed tokens file)
 * that text's hash is stored under its id.  Seeding is idempotent: the same
 * text with the same name and permissions again returns the existing token
 * (is_new false, revoked_at as it is: a revoked token stays revoked); the id
 * with another secret, name or permissions is 23505 naming the id.  Returns
 * {id, name, permissions, created_by, created_at, revoked_at, token, is_new};
 * token, the full text, is shown here only.
 */
CREATE FUNCTION genroc.token_create(p_name text, p_permissions text[], p_created_by text,
									p_secret text DEFAULT NULL) RETURNS jsonb
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_permissions text[];
	v_token text := p_secret;
	v_id text;
	v_hash bytea;
	v_row genroc._tokens;
	v_new boolean := true;
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._flush_commit('outside');
	IF p_name IS NULL OR p_created_by IS NULL THEN
		RAISE EXCEPTION '% must not be null', CASE WHEN p_name IS NULL THEN 'p_name' ELSE 'p_created_by' END
			USING ERRCODE = '22004';
	END IF;
	IF p_name = '' THEN
		RAISE EXCEPTION 'a token name must not be empty' USING ERRCODE = '22023';
	END IF;
	IF p_created_by = '' THEN
		RAISE EXCEPTION 'p_created_by must not be empty' USING ERRCODE = '22023';
	END IF;
	PERFORM genroc._check_name(p_name, 'p_name'), genroc._check_name(p_created_by, 'p_created_by');
	v_permissions := genroc._check_permissions(p_permissions);
	IF v_token IS NULL THEN
		-- gen_random_uuid draws from the server's strong random source; the
		-- first 12 hex digits of a v4 UUID are all random, and two UUIDs
		-- give 244 random bits of secret.
		v_id := substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
		v_token := 'grt_' || v_id || '_' || replace(gen_random_uuid()::text, '-', '')
				   || replace(gen_random_uuid()::text, '-', '');
	ELSE
		v_id := genroc._token_id(v_token);
		IF v_id IS NULL THEN
			RAISE EXCEPTION 'p_secret is not a token text grt_<id>_<secret>' USING ERRCODE = '22023',
				DETAIL = 'The id is 8 to 32 of a-z and 0-9, the secret 32 to 128 of A-Z, a-z and 0-9.';
		END IF;
	END IF;
	v_hash := sha256(convert_to(v_token, 'UTF8'));
	INSERT INTO genroc._tokens (id, name, hash, permissions, created_by, created_at)
	VALUES (v_id, p_name, v_hash, v_permissions, p_created_by, genroc.now())
	ON CONFLICT (id) DO NOTHING
	RETURNING * INTO v_row;
	IF NOT FOUND THEN
		SELECT * INTO v_row FROM genroc._tokens t WHERE t.id = v_id;
		IF p_secret IS NULL OR v_row.hash <> v_hash OR v_row.name <> p_name
		   OR v_row.permissions <> v_permissions THEN
			RAISE EXCEPTION 'token "%" already exists with another secret, name or permissions', v_id
				USING ERRCODE = '23505', HINT = 'Revoke it if it must go, and give a new token another id.';
		END IF;
		v_new := false;
	END IF;
	RETURN genroc._token_json(v_row) || jsonb_build_object('token', v_token, 'is_new', v_new);
END;
$$;
COMMENT ON FUNCTION genroc.token_create(text, text[], text, text) IS
	'Creates an API token with permissions (admin, operator, worker, reader); returns it with its text, shown only here. p_secret: store that token text instead of a new one (seeding).';

-- Semantics: {id, name, permissions, created_by} of a live token whose text
-- hashes to the stored hash; NULL for anything else (malformed, unknown,
-- wrong secret, revoked).  No caching anywhere: a revoke is seen at once.
CREATE FUNCTION genroc.token_verify(p_token text) RETURNS jsonb
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._entry();
		SELECT (SELECT jsonb_build_object('id', t.id, 'name', t.name, 'permissions', to_jsonb(t.permissions),
										  'created_by', t.created_by)
				FROM genroc._tokens t
				WHERE t.id = genroc._token_id(p_token) AND t.revoked_at IS NULL
				  AND t.hash = sha256(convert_to(p_token, 'UTF8')));
	END;
COMMENT ON FUNCTION genroc.token_verify(text) IS
	'The token''s id, name, permissions and creator when the text is a live token; NULL otherwise.';

CREATE FUNCTION genroc.token_list() RETURNS SETOF jsonb
	LANGUAGE sql STABLE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
	BEGIN ATOMIC
		SELECT genroc._entry();
		SELECT genroc._token_json(t) FROM genroc._tokens t ORDER BY t.created_at, t.id;
	END;
COMMENT ON FUNCTION genroc.token_list() IS
	'Every token, revoked ones too: id, name, permissions, created_by, created_at, revoked_at (never the text or its hash).';

-- Semantics: revoked at genroc.now(), at once for every server; revoking a
-- revoked token keeps its first time; an unknown id is 42704.
CREATE FUNCTION genroc.token_revoke(p_id text) RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM genroc._entry();
	PERFORM genroc._flush_commit('outside');
	IF p_id IS NULL THEN
		RAISE EXCEPTION 'p_id must not be null' USING ERRCODE = '22004';
	END IF;
	UPDATE genroc._tokens t SET revoked_at = coalesce(t.revoked_at, genroc.now()) WHERE t.id = p_id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'token "%" does not exist', p_id USING ERRCODE = '42704';
	END IF;
END;
$$;
COMMENT ON FUNCTION genroc.token_revoke(text) IS
	'Revokes a token: it stops verifying at once.';

-- Credentials: not for PUBLIC (see the top of this file for the grants).
REVOKE ALL ON FUNCTION genroc.token_create(text, text[], text, text), genroc.token_verify(text),
	genroc.token_list(), genroc.token_revoke(text) FROM PUBLIC;
