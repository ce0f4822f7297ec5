-- tokens: API tokens (80_tokens.sql): create, verify, list, revoke; only a
-- hash is stored; bad names and permissions; a seeded token text.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
SET genroc.durability = 'none';
\set VERBOSITY terse

-- a new token: its text is grt_<12 of a-z0-9>_<64 of hex>, shown only here
SELECT genroc.token_create('ops', ARRAY['admin'], 'cli') AS t \gset
SELECT :'t'::jsonb ->> 'token' ~ '^grt_[a-z0-9]{12}_[0-9a-f]{64}$' AS token_format,
	   :'t'::jsonb - 'id' - 'token' AS rest;
SELECT :'t'::jsonb ->> 'token' AS token, :'t'::jsonb ->> 'id' AS id \gset
SELECT genroc.token_verify(:'token') - 'id' AS verified;
-- the table keeps a hash, never the text
SELECT count(*) AS rows, bool_and(hash = sha256(convert_to(:'token', 'UTF8'))) AS hash_of_text
FROM genroc._tokens;
SELECT strpos(genroc.token_list()::text, split_part(:'token', '_', 3)) = 0 AS list_has_no_secret;

-- permissions sorted and unique; list oldest first
SET genroc.test_clock = '2030-01-01 00:00:05Z';
SELECT genroc.token_create('worker-eu-1', ARRAY['worker', 'reader', 'worker'], 'ops') -> 'permissions' AS permissions;
SELECT t - 'id' AS token FROM genroc.token_list() t;

-- wrong or malformed texts do not verify
SELECT genroc.token_verify(NULL) IS NULL AS null_text,
	   genroc.token_verify('') IS NULL AS empty_text,
	   genroc.token_verify('grt_' || :'id' || '_' || repeat('0', 64)) IS NULL AS wrong_secret,
	   genroc.token_verify(:'token' || 'x') IS NULL AS longer,
	   genroc.token_verify('Bearer ' || :'token') IS NULL AS with_scheme;

-- revoked: at once, and the first revoke time stays
SET genroc.test_clock = '2030-01-01 00:00:10Z';
SELECT genroc.token_revoke(:'id');
SELECT genroc.token_verify(:'token') IS NULL AS revoked_does_not_verify;
SET genroc.test_clock = '2030-01-01 00:00:20Z';
SELECT genroc.token_revoke(:'id');
SELECT t ->> 'name' AS name, t ->> 'revoked_at' AS revoked_at FROM genroc.token_list() t;
SELECT genroc.token_revoke('nosuchid');
\echo :LAST_ERROR_SQLSTATE

-- errors: unknown or no permissions, empty name, a seed that is not a token text
SELECT genroc.token_create('x', ARRAY['reader', 'superuser'], 'cli');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_create('x', ARRAY[]::text[], 'cli');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_create('', ARRAY['reader'], 'cli');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_create('x', NULL, 'cli');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_create('x', ARRAY['reader'], 'cli', 's3cret');
\echo :LAST_ERROR_SQLSTATE

-- a seeded text: stored once; again is a no-op; the id with another secret,
-- name or permissions is refused naming it
SELECT genroc.token_create('seeded', ARRAY['worker'], 'seed', 'grt_seedw0rker01_' || repeat('Ab9', 12))
	- 'created_at' AS seeded;
SELECT genroc.token_create('seeded', ARRAY['worker'], 'seed', 'grt_seedw0rker01_' || repeat('Ab9', 12)) ->> 'is_new' AS again_is_new;
SELECT genroc.token_create('seeded', ARRAY['worker'], 'seed', 'grt_seedw0rker01_' || repeat('Ab8', 12));
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_create('seeded', ARRAY['admin'], 'seed', 'grt_seedw0rker01_' || repeat('Ab9', 12));
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.token_verify('grt_seedw0rker01_' || repeat('Ab9', 12)) ->> 'name' AS seeded_verifies;

DROP EXTENSION genroc;
