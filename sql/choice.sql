-- Choice: a few operators of each family (helper unit tests cover every
-- one), the Path forms, And/Or/Not, Default, States.NoChoiceMatched.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse

-- A Choice with one rule: "yes" when it matches, else Default "no".
CREATE FUNCTION pick(p_rule jsonb, p_input jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
	v_version int;
BEGIN
	-- define answers the version with this content (an older one when the
	-- rule was used before): start exactly that one, not the latest
	SELECT d.version INTO v_version FROM genroc.define('c', jsonb_build_object(
		'StartAt', 'C',
		'States', jsonb_build_object(
			'C', jsonb_build_object('Type', 'Choice',
				'Choices', jsonb_build_array(p_rule || '{"Next":"Yes"}'),
				'Default', 'No'),
			'Yes', '{"Type":"Pass","Result":"yes","End":true}'::jsonb,
			'No', '{"Type":"Pass","Result":"no","End":true}'::jsonb))) d;
	SELECT s.instance_id INTO v_id
	FROM genroc.start('c', p_input, jsonb_build_object('version', v_version)) s;
	RETURN genroc.get_instance(v_id) ->> 'output';
END;
$$;

SELECT rule, input, pick(rule::jsonb, input::jsonb) FROM (VALUES
	('{"Variable":"$.s","StringEquals":"abc"}', '{"s":"abc"}'),
	('{"Variable":"$.s","StringEquals":"abc"}', '{"s":"abd"}'),
	('{"Variable":"$.s","StringLessThan":"b"}', '{"s":"abc"}'),
	('{"Variable":"$.s","StringGreaterThanEquals":"abc"}', '{"s":"abc"}'),
	('{"Variable":"$.s","StringMatches":"log-*.txt"}', '{"s":"log-2030.txt"}'),
	('{"Variable":"$.s","StringMatches":"log-*.txt"}', '{"s":"log-2030.csv"}'),
	('{"Variable":"$.s","StringEqualsPath":"$.t"}', '{"s":"x","t":"x"}'),
	('{"Variable":"$.n","NumericEquals":3}', '{"n":3.0}'),
	('{"Variable":"$.n","NumericLessThan":3}', '{"n":2.5}'),
	('{"Variable":"$.n","NumericGreaterThan":3}', '{"n":3}'),
	('{"Variable":"$.n","NumericLessThanEqualsPath":"$.max"}', '{"n":4,"max":4}'),
	('{"Variable":"$.n","NumericEquals":3}', '{"n":"3"}'),
	('{"Variable":"$.b","BooleanEquals":true}', '{"b":true}'),
	('{"Variable":"$.b","BooleanEqualsPath":"$.c"}', '{"b":false,"c":true}'),
	('{"Variable":"$.t","TimestampEquals":"2030-01-01T00:00:00Z"}', '{"t":"2030-01-01T00:00:00Z"}'),
	('{"Variable":"$.t","TimestampLessThan":"2030-01-01T00:00:00Z"}', '{"t":"2029-12-31T23:59:59Z"}'),
	('{"Variable":"$.t","TimestampGreaterThanPath":"$.u"}', '{"t":"2030-01-02T00:00:00Z","u":"2030-01-01T00:00:00Z"}'),
	('{"Variable":"$.x","IsPresent":true}', '{"x":null}'),
	('{"Variable":"$.x","IsPresent":false}', '{}'),
	('{"Variable":"$.x","IsNull":true}', '{"x":null}'),
	('{"Variable":"$.x","IsNumeric":true}', '{"x":"1"}'),
	('{"Variable":"$.x","IsString":true}', '{"x":"1"}'),
	('{"Variable":"$.x","IsBoolean":false}', '{"x":1}'),
	('{"Variable":"$.x","IsTimestamp":true}', '{"x":"2030-01-01T00:00:00Z"}'),
	('{"Variable":"$.x","IsTimestamp":true}', '{"x":"yesterday"}'),
	('{"And":[{"Variable":"$.n","NumericGreaterThan":1},{"Variable":"$.n","NumericLessThan":5}]}', '{"n":3}'),
	('{"And":[{"Variable":"$.n","NumericGreaterThan":1},{"Variable":"$.n","NumericLessThan":5}]}', '{"n":7}'),
	('{"Or":[{"Variable":"$.s","StringEquals":"a"},{"Variable":"$.s","StringEquals":"b"}]}', '{"s":"b"}'),
	('{"Not":{"Variable":"$.s","StringEquals":"a"}}', '{"s":"a"}'),
	('{"Not":{"Variable":"$.s","StringEquals":"a"}}', '{"s":"z"}')
) AS t(rule, input);

-- rules are tried in order: the first match wins
SELECT * FROM genroc.define('order', '{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
	{"Variable":"$.n","NumericGreaterThan":10,"Next":"Big"},
	{"Variable":"$.n","NumericGreaterThan":0,"Next":"Small"}],"Default":"Zero"},
	"Big":{"Type":"Pass","Result":"big","End":true},
	"Small":{"Type":"Pass","Result":"small","End":true},
	"Zero":{"Type":"Pass","Result":"zero","End":true}}}');
SELECT count(*) FROM (VALUES (-1), (12), (5)) AS t(n), LATERAL genroc.start('order', jsonb_build_object('n', n));
SELECT j -> 'input' AS input, j -> 'output' AS output
FROM genroc.list_instances('{"definition":"order"}') j ORDER BY (j ->> 'id')::bigint;

-- no match and no Default: the instance fails with States.NoChoiceMatched
SELECT * FROM genroc.define('nodefault', '{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":1,"Next":"One"}]},"One":{"Type":"Succeed"}}}');
SELECT instance_id AS nomatch, status FROM genroc.start('nodefault', '{"n":2}') \gset
SELECT :'status' AS status, genroc.get_instance(:nomatch) ->> 'error' AS error;

DROP FUNCTION pick;
DROP EXTENSION genroc;
