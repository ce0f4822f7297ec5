-- JSONata's regular expressions (core/jsonata_regex.cpp) in a backend: a
-- pattern on a long subject used to recurse once per character (std::regex)
-- and take the backend down with SIGSEGV, and the cluster with it.  Now
-- each instance ends, with its match or failed with L0001 naming the
-- limit, and this session and the postmaster are the same ones at the end.
CREATE EXTENSION genroc;
SET genroc.test_clock = '2030-01-01 00:00:00Z';
\set VERBOSITY terse
CREATE TEMP TABLE session_was AS
	SELECT pg_backend_pid() AS pid, pg_postmaster_start_time() AS postmaster_started;
-- The newest instance of a definition, as get_instance shows it.
CREATE FUNCTION pg_temp.last(d text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT genroc.get_instance(max(id)) FROM genroc.instances WHERE definition = d
$$;

-- The reproducer as it was reported.
SELECT * FROM genroc.define('rx','{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% $match($pad(\"\", 9999, \"ab\"), /(a|b|c|d)*$/) %}","End":true}}}');
SELECT status FROM genroc.start('rx');
SELECT o -> 'index' AS index, length(o ->> 'match') AS match_length, o -> 'groups' AS groups
FROM (SELECT genroc.get_instance(id) -> 'output' AS o FROM genroc.instances WHERE definition = 'rx') m;

-- The other two patterns, on the input: up to jsonata_regex_subject bytes
-- (10000) they match, a 10 KB string fails the instance.
SELECT name FROM genroc.define('rx_in', '{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass",
	"Output":{"one":"{% $length($match($states.input.s, /((a|b))*$/).match) %}",
	          "two":"{% $length($match($states.input.s, /((a)|(b))*$/).match) %}"},"End":true}}}');
SELECT status FROM genroc.start('rx_in', jsonb_build_object('s', repeat('ab', 5000)));
SELECT pg_temp.last('rx_in') -> 'output' AS output;
SELECT status FROM genroc.start('rx_in', jsonb_build_object('s', repeat('ab', 5120)));
SELECT pg_temp.last('rx_in') -> 'error' AS error, pg_temp.last('rx_in') ->> 'cause' AS cause;

-- A pattern that backtracks without end: its work counts against
-- jsonata_steps.
SELECT name FROM genroc.define('rx_steps', '{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass",
	"Output":"{% $match($states.input.s, /(a+)+$/) %}","End":true}}}');
SELECT status FROM genroc.start('rx_steps', jsonb_build_object('s', repeat('a', 40) || 'c'));
SELECT pg_temp.last('rx_steps') -> 'error' AS error, pg_temp.last('rx_steps') ->> 'cause' AS cause;

-- A pattern whose backtracking outgrows jsonata_regex_memory.
SELECT name FROM genroc.define('rx_memory', jsonb_build_object('QueryLanguage', 'JSONata', 'StartAt', 'P',
	'States', jsonb_build_object('P', jsonb_build_object('Type', 'Pass', 'End', true,
		'Output', '{% $match($states.input.s, /(' ||
			(SELECT string_agg('(' || chr(97 + i % 26) || ')', '|') FROM generate_series(0, 59) i) ||
			')*$/) %}'))));
SELECT status FROM genroc.start('rx_memory', jsonb_build_object('s', repeat('b', 10000)));
SELECT pg_temp.last('rx_memory') -> 'error' AS error, pg_temp.last('rx_memory') ->> 'cause' AS cause;

-- the same session, the same postmaster
SELECT pid = pg_backend_pid() AS same_session,
	   postmaster_started = pg_postmaster_start_time() AS same_postmaster
FROM session_was;

DROP EXTENSION genroc;
