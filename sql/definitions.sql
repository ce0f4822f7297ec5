-- Definitions: versions by content, lookups, and every validation error
-- (the message names the JSON path of the fault).
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

SELECT * FROM genroc.define('hello', '{"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}}');
-- same content, keys in another order and other spacing: the same version
SELECT * FROM genroc.define('hello', '{ "States": {"Hi": {"End": true, "Result": "hello", "Type": "Pass"}}, "StartAt": "Hi"}');
-- new content: a new version
SELECT * FROM genroc.define('hello', '{"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hi","End":true}}}');
-- the first content again: still version 1
SELECT * FROM genroc.define('hello', '{"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}}');
-- another name starts at 1
SELECT * FROM genroc.define('other', '{"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}}');
SELECT name, version FROM genroc.list_definitions();
SELECT genroc.get_definition('hello') -> 'version' AS latest,
       genroc.get_definition('hello', 1) -> 'definition' -> 'States' -> 'Hi' -> 'Result' AS v1_result;

-- instances pin their version; the latest is the default
SELECT status FROM genroc.start('hello', '{}');
SELECT status FROM genroc.start('hello', '{}', '{"version":1}');
SELECT definition, version, status FROM genroc.instances ORDER BY id;
SELECT output FROM genroc.instances i, LATERAL (SELECT genroc.get_instance(i.id) -> 'output' AS output) o ORDER BY i.id;

-- lookups that fail
SELECT genroc.get_definition('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT genroc.get_definition('hello', 9);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.start('hello', '{}', '{"version":7}');
\echo :LAST_ERROR_SQLSTATE

-- required arguments
SELECT * FROM genroc.define(NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('x', NULL);
\echo :LAST_ERROR_SQLSTATE

-- validation: each fault, each with its JSON path
-- not an object
SELECT * FROM genroc.define('bad', '[1,2]');
\echo :LAST_ERROR_SQLSTATE
-- missing StartAt
SELECT * FROM genroc.define('bad', '{"States":{"A":{"Type":"Pass","End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- StartAt names no state
SELECT * FROM genroc.define('bad', '{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- unknown Next
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nope"}}}');
\echo :LAST_ERROR_SQLSTATE
-- unknown Next inside a Choice rule
SELECT * FROM genroc.define('bad', '{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"A"},{"Variable":"$.x","IsNull":true,"Next":"Nope"}],"Default":"A"},"A":{"Type":"Succeed"}}}');
\echo :LAST_ERROR_SQLSTATE
-- unreachable state
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","End":true},"Lost":{"Type":"Succeed"}}}');
\echo :LAST_ERROR_SQLSTATE
-- neither Next nor End
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass"}}}');
\echo :LAST_ERROR_SQLSTATE
-- unknown field
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Colour":"red"}}}');
\echo :LAST_ERROR_SQLSTATE
-- unknown state type
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Parallelogram","End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- unknown Choice operator
SELECT * FROM genroc.define('bad', '{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","NumericRoughly":1,"Next":"A"}]},"A":{"Type":"Succeed"}}}');
\echo :LAST_ERROR_SQLSTATE
-- a Path that is not a path
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"x.y","End":true}}}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"v.$":"$..[["},"End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- Retry on a state that cannot have one
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Pass","Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- Task without a known resource kind
SELECT * FROM genroc.define('bad', '{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:x","End":true}}}');
\echo :LAST_ERROR_SQLSTATE
-- nothing of it was stored
SELECT count(*) AS bad_versions FROM genroc.list_definitions() WHERE name = 'bad';

-- A definition's row stays while instances refer to it (_definitions_keep,
-- in place of a foreign key): no delete, no new id, no truncate (23503);
-- one without instances may go.
SELECT * FROM genroc.define('kept', '{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}');
SELECT * FROM genroc.define('unused', '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}');
SELECT status FROM genroc.start('kept', '{}');
DELETE FROM genroc._definitions WHERE name = 'kept';
\echo :LAST_ERROR_SQLSTATE
UPDATE genroc._definitions SET id = DEFAULT WHERE name = 'kept';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE genroc._definitions;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS kept FROM genroc._definitions WHERE name = 'kept';
DELETE FROM genroc._definitions WHERE name = 'unused';
SELECT count(*) AS unused FROM genroc._definitions WHERE name = 'unused';

-- The text as written: a define of text (here an untyped literal) keeps it,
-- get_definition answers it as source; a define of jsonb keeps none.
SELECT * FROM genroc.define('written', E'{\n  "StartAt": "A",\n  "States": {"A": {"Type": "Pass", "Result": 1.50, "End": true}}\n}');
SELECT genroc.get_definition('written') ->> 'source' AS source;
SELECT genroc.get_definition('written') -> 'definition' -> 'States' -> 'A' -> 'Result' AS result;
SELECT * FROM genroc.define('typed', '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}'::jsonb);
SELECT genroc.get_definition('typed') -> 'source' AS typed_source;
-- the same content as text: the version it has, its source unchanged
SELECT * FROM genroc.define('typed', '{"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}'::text);
SELECT genroc.get_definition('typed') -> 'source' AS still_none;
-- text that is not JSON: 22P02
SELECT * FROM genroc.define('written', '{"StartAt": ');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM genroc.define('written', NULL::text);
\echo :LAST_ERROR_SQLSTATE

-- An error raised inside a statement the engine runs (a trigger on the
-- insert, refusing with a unique violation as a racing writer would) comes
-- out with its SQLSTATE, message, detail and hint; the session goes on, in
-- the same transaction after a rollback to its savepoint, and the same
-- statements run again.
CREATE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'refused by a test trigger' USING ERRCODE = '23505',
		DETAIL = 'The row was taken.', HINT = 'Try again.';
END;
$$;
CREATE TRIGGER refuse BEFORE INSERT ON genroc._definitions
	FOR EACH ROW EXECUTE FUNCTION pg_temp.refuse();
\set VERBOSITY default
BEGIN;
SAVEPOINT before_define;
SELECT * FROM genroc.define('raced', '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK TO SAVEPOINT before_define;
DROP TRIGGER refuse ON genroc._definitions;
SELECT * FROM genroc.define('raced', '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}');
COMMIT;
\set VERBOSITY terse
SELECT name, version FROM genroc.list_definitions() WHERE name = 'raced';

DROP EXTENSION genroc;
