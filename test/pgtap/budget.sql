-- budget.sql — the guard: every JSONata function and every States.*
-- intrinsic at its documented limits (jsonata_sequence items,
-- jsonata_string bytes, jsonata_regex_subject bytes), and the bombs past the
-- step's budget (step_work, step_bytes), each under statement_timeout = 1s:
-- every call answers (a result, a clean error or 57014) within 2 s, and the
-- postmaster is the same process at the end.  Then pg_cancel_backend from a
-- second connection (dblink) ends a long step within 1 s, and
-- pg_terminate_backend ends a third backend's within 1 s.
-- Generated with the lists in the comment at the end; one statement per call,
-- as statement_timeout counts per statement.
BEGIN;
SELECT plan(108);
SELECT pg_postmaster_start_time() AS postmaster_t0 \gset

-- Runs `def` (a definition's JSON) to its first stop; answers the seconds
-- it took and how it ended: 'ok', the SQLSTATE of an error, or 57014.
CREATE FUNCTION pg_temp.timed(name text, def text, OUT seconds float8, OUT ended text)
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	BEGIN
		PERFORM genroc.define(name, def::jsonb);
		PERFORM genroc.start(name, '{}');
		ended := 'ok';
	EXCEPTION WHEN query_canceled THEN
		ended := '57014';
	WHEN OTHERS THEN
		ended := SQLSTATE;
	END;
	seconds := extract(epoch FROM clock_timestamp() - t0);
	-- A step that ended just under the timeout leaves the statement's timer
	-- armed: it would fire after this block, outside any handler.  Wait past
	-- it here, where it is caught.
	IF ended <> '57014' AND seconds > 0.5 THEN
		BEGIN
			PERFORM pg_sleep(1.2 - seconds);
		EXCEPTION WHEN query_canceled THEN
			NULL;
		END;
	END IF;
END $$;

SET LOCAL statement_timeout = '1s';

SELECT cmp_ok((pg_temp.timed('budget_j0', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$sum answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j1', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$count answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j2', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $max([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$max answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j3', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $min([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$min answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j4', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $average([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$average answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j5', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($string([1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$string answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j6', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($substring($pad('''', 8000000, ''ab''), 10, 7000000)) %}", "End": true}}}')).seconds, '<', 2::float8, '$substring answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j7', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($substringBefore($pad('''', 8000000, ''ab''), ''c'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$substringBefore answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j8', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($substringAfter($pad('''', 8000000, ''ab''), ''b'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$substringAfter answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j9', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($lowercase($pad('''', 8000000, ''ab''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$lowercase answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j10', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($uppercase($pad('''', 8000000, ''ab''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$uppercase answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j11', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($pad('''', 8000000, ''ab'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$length answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j12', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($trim($pad('''', 8000000, ''ab''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$trim answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j13', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($pad('''', 8000000, ''ab'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$pad answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j14', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $contains($pad('''', 8000000, ''ab''), ''abc'') %}", "End": true}}}')).seconds, '<', 2::float8, '$contains answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j15', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($split($pad('''', 8000000, ''ab''), ''b'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$split answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j16', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($split($pad('''', 1000000, ''ab''), '''')) %}", "End": true}}}')).seconds, '<', 2::float8, '$split chars answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j17', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($join($map([1..1000000], function($v){''x''}), '','')) %}", "End": true}}}')).seconds, '<', 2::float8, '$join answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j18', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($match($pad('''', 9999, ''ab''), /a/)) %}", "End": true}}}')).seconds, '<', 2::float8, '$match answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j19', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($replace($pad('''', 8000000, ''ab''), ''a'', ''cc'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$replace answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j20', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($replace($pad('''', 9999, ''ab''), /b/, ''cc'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$replace regex answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j21', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $contains($pad('''', 9999, ''ab''), /c/) %}", "End": true}}}')).seconds, '<', 2::float8, '$contains regex answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j22', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($split($pad('''', 9999, ''ab''), /a/)) %}", "End": true}}}')).seconds, '<', 2::float8, '$split regex answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j23', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $now() %}", "End": true}}}')).seconds, '<', 2::float8, '$now answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j24', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $millis() %}", "End": true}}}')).seconds, '<', 2::float8, '$millis answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j25', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $fromMillis(1e12) %}", "End": true}}}')).seconds, '<', 2::float8, '$fromMillis answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j26', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $toMillis(''2030-01-01T00:00:00Z'') %}", "End": true}}}')).seconds, '<', 2::float8, '$toMillis answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j27', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $formatNumber(1e20, ''#,##0.00'') %}", "End": true}}}')).seconds, '<', 2::float8, '$formatNumber answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j28', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $formatBase(9007199254740991, 2) %}", "End": true}}}')).seconds, '<', 2::float8, '$formatBase answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j29', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $formatInteger(123456789, ''w'') %}", "End": true}}}')).seconds, '<', 2::float8, '$formatInteger answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j30', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $parseInteger(''12,345,678'', ''#,##0'') %}", "End": true}}}')).seconds, '<', 2::float8, '$parseInteger answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j31', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum($map([1..1000000], function($v){$number($string($v))})) %}", "End": true}}}')).seconds, '<', 2::float8, '$number answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j32', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$abs($)) %}", "End": true}}}')).seconds, '<', 2::float8, '$abs answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j33', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$floor($)) %}", "End": true}}}')).seconds, '<', 2::float8, '$floor answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j34', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$ceil($)) %}", "End": true}}}')).seconds, '<', 2::float8, '$ceil answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j35', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$round($)) %}", "End": true}}}')).seconds, '<', 2::float8, '$round answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j36', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$power($, 2)) %}", "End": true}}}')).seconds, '<', 2::float8, '$power answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j37', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $sum([1..1000000].$sqrt($)) %}", "End": true}}}')).seconds, '<', 2::float8, '$sqrt answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j38', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count([1..1000000].$random()) %}", "End": true}}}')).seconds, '<', 2::float8, '$random answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j39', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $boolean([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$boolean answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j40', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $not([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$not answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j41', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $exists([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$exists answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j42', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($map([1..1000000], function($v){$v * 2})) %}", "End": true}}}')).seconds, '<', 2::float8, '$map answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j43', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($filter([1..1000000], function($v){$v % 2})) %}", "End": true}}}')).seconds, '<', 2::float8, '$filter answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j44', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $single([1..1000000], function($v){$v = 7}) %}", "End": true}}}')).seconds, '<', 2::float8, '$single answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j45', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $reduce([1..1000000], function($a, $v){$a + $v}) %}", "End": true}}}')).seconds, '<', 2::float8, '$reduce answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j46', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($zip([1..1000000], [1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$zip answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j47', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($keys($sift($merge($map([1..100000], function($v){{$string($v): $v}})), function($v){$v % 2}))) %}", "End": true}}}')).seconds, '<', 2::float8, '$sift answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j48', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($each($merge($map([1..100000], function($v){{$string($v): $v}})), function($v){$v})) %}", "End": true}}}')).seconds, '<', 2::float8, '$each answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j49', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($keys($map([1..100000], function($v){{$string($v): $v}}))) %}", "End": true}}}')).seconds, '<', 2::float8, '$keys answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j50', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($lookup($map([1..1000000], function($v){{''k'': $v}}), ''k'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$lookup answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j51', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($append([1..1000000], [1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$append answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j52', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($spread($map([1..300000], function($v){{''k'': $v}}))) %}", "End": true}}}')).seconds, '<', 2::float8, '$spread answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j53', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($keys($merge($map([1..300000], function($v){{$string($v): $v}})))) %}", "End": true}}}')).seconds, '<', 2::float8, '$merge answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j54', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($reverse([1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$reverse answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j55', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($sort([1..1000000].$random())) %}", "End": true}}}')).seconds, '<', 2::float8, '$sort answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j56', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($sort([1..300000].$random(), function($a, $b){$a > $b})) %}", "End": true}}}')).seconds, '<', 2::float8, '$sort fn answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j57', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($shuffle([1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$shuffle answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j58', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($distinct([1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$distinct answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j59', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($distinct($map([1..1000000], function($v){{''k'': $v % 1000}}))) %}", "End": true}}}')).seconds, '<', 2::float8, '$distinct objects answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j60', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $error(''x'') %}", "End": true}}}')).seconds, '<', 2::float8, '$error answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j61', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $assert(false, ''x'') %}", "End": true}}}')).seconds, '<', 2::float8, '$assert answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j62', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $type([1..1000000]) %}", "End": true}}}')).seconds, '<', 2::float8, '$type answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j63', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($base64encode($pad('''', 8000000, ''ab''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$base64encode answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j64', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($base64decode($base64encode($pad('''', 6000000, ''ab'')))) %}", "End": true}}}')).seconds, '<', 2::float8, '$base64decode answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j65', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($encodeUrlComponent($pad('''', 2000000, ''a b''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$encodeUrlComponent answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j66', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($encodeUrl($pad('''', 2000000, ''a b''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$encodeUrl answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j67', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($decodeUrlComponent($pad('''', 6000000, ''%20''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$decodeUrlComponent answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j68', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($decodeUrl($pad('''', 6000000, ''%20''))) %}", "End": true}}}')).seconds, '<', 2::float8, '$decodeUrl answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j69', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($clone([1..1000000])) %}", "End": true}}}')).seconds, '<', 2::float8, '$clone answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j70', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($partition([1..1000000], 3)) %}", "End": true}}}')).seconds, '<', 2::float8, '$partition answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j71', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($range(1, 1000000, 1)) %}", "End": true}}}')).seconds, '<', 2::float8, '$range answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j72', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $hash($pad('''', 8000000, ''ab''), ''SHA-256'') %}", "End": true}}}')).seconds, '<', 2::float8, '$hash answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j73', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count([1..1000000].$uuid()) %}", "End": true}}}')).seconds, '<', 2::float8, '$uuid answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j74', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($parse($string([1..1000000]))) %}", "End": true}}}')).seconds, '<', 2::float8, '$parse answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j75', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($keys([1..1000000]{$string($ % 1000): $})) %}", "End": true}}}')).seconds, '<', 2::float8, 'group by answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j76', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count([1..1000000]^(>$)) %}", "End": true}}}')).seconds, '<', 2::float8, 'sort operator answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j77', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($pad('''', 8000000, ''ab'') & $pad('''', 8000000, ''ab'')) %}", "End": true}}}')).seconds, '<', 2::float8, 'concatenation answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j78', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $count($map([1..10000], function($i){[1..10000]})) %}", "End": true}}}')).seconds, '<', 2::float8, 'map bomb answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j79', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($reduce([1..100000], function($a, $v){$a & ''xxxxxxxxxx''}, '''')) %}", "End": true}}}')).seconds, '<', 2::float8, 'string bomb answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j80', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($formatInteger(8e9, ''I'')) %}", "End": true}}}')).seconds, '<', 2::float8, '$formatInteger roman at jsonata_string answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j81', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $toMillis($pad('''', 9990, ''one ''), ''[Yw]'') %}", "End": true}}}')).seconds, '<', 2::float8, '$toMillis words over a 10 KB subject answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j82', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $toMillis($pad('''', 9990, ''one '') & ''x'', ''[Yw]'') %}", "End": true}}}')).seconds, '<', 2::float8, '$toMillis words failing over a 10 KB subject answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_j83', '{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "Output": "{% $length($fromMillis(1e12, $join($map([1..256], function($v){''[Yw]''})))) %}", "End": true}}}')).seconds, '<', 2::float8, '$fromMillis with a picture at jsonata_picture answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i0', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.Format(''{} {}'', $.s, $.s)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.Format answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i1', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.StringToJson($.j)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.StringToJson answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i2', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.JsonToString($.a)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.JsonToString answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i3', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.Array($.a, $.a, $.s)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.Array answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i4', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayPartition($.a, 1)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayPartition answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i5', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayContains($.a, -1)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayContains answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i6', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayRange(1, 1000, 1)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayRange answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i7', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayGetItem($.a, 999999)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayGetItem answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i8', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayLength($.a)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayLength answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i9', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayUnique($.a)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayUnique answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i10', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.ArrayUnique($.o)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.ArrayUnique objects answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i11', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.Base64Encode($.s)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.Base64Encode answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i12', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.Base64Decode($.b)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.Base64Decode answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i13', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.Hash($.s, ''SHA-512'')"}, "End": true}}}')).seconds, '<', 2::float8, 'States.Hash answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i14', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.JsonMerge($.m, $.m, false)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.JsonMerge answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i15', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.MathRandom(1, 1000000)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.MathRandom answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i16', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.MathAdd(1, 2)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.MathAdd answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i17', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.StringSplit($.s, $.s)"}, "End": true}}}')).seconds, '<', 2::float8, 'States.StringSplit answers within 2 s');
SELECT cmp_ok((pg_temp.timed('budget_i18', '{"StartAt": "Make", "States": {"Make": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {''a'': [1..1000000], ''s'': $pad('''', 6000000, ''ab''), ''j'': $string([1..1000000]), ''o'': $map([1..300000], function($v){{''k'': $v % 1000}}), ''b'': $base64encode($pad('''', 6000000, ''ab'')), ''m'': $merge($map([1..200000], function($v){{$string($v): $v}}))} %}", "Next": "A"}, "A": {"Type": "Pass", "Parameters": {"r.$": "States.UUID()"}, "End": true}}}')).seconds, '<', 2::float8, 'States.UUID answers within 2 s');


-- The issue's bomb ends with the step's budget as the instance's error
-- (L0001 in States.QueryEvaluationError), not as a 3 GB backend.
SET LOCAL statement_timeout = 0;
SELECT genroc.define('budget_bomb', '{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $map([1..10000], function($i){[1..10000]}) %}","End":true}}}') IS NOT NULL AS defined \gset
SELECT instance_id AS bomb FROM genroc.start('budget_bomb', '{}') \gset
SELECT ok(genroc.get_instance(:bomb) ->> 'cause' LIKE '%(limit step_bytes)%',
	'the $map bomb fails the instance with step_bytes');

-- pg_cancel_backend from a second connection ends a long step within 1 s.
CREATE EXTENSION IF NOT EXISTS dblink;
-- A connection `name` of this session's own that starts budget_long and is in
-- its step when this returns (an event: its query is active); its pid.
CREATE FUNCTION pg_temp.long_step(name text) RETURNS int LANGUAGE plpgsql AS $f$
DECLARE
	v_pid int;
BEGIN
	PERFORM dblink_connect(name, format('dbname=%s port=%s host=%s', current_database(),
		current_setting('port'), trim(split_part(current_setting('unix_socket_directories'), ',', 1))));
	SELECT pid INTO v_pid FROM dblink(name, 'SELECT pg_backend_pid()') AS t(pid int);
	PERFORM * FROM dblink(name, $$SELECT genroc.define('budget_long', '{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $count($sort($map([1..1000000], $random))) %}","End":true}}}')::text$$) AS t(v text);
	PERFORM dblink_send_query(name, $$SELECT genroc.start('budget_long', '{}')$$);
	WHILE NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = v_pid
					  AND state = 'active' AND query LIKE '%budget_long%') LOOP
		PERFORM pg_stat_clear_snapshot();
	END LOOP;
	RETURN v_pid;
END $f$;
SELECT pg_temp.long_step('budget_other') AS other_pid \gset
SELECT clock_timestamp() AS cancel_t0 \gset
SELECT pg_cancel_backend(:other_pid) AS cancelled \gset
CREATE FUNCTION pg_temp.other_result(OUT ended text) LANGUAGE plpgsql AS $$
BEGIN
	PERFORM * FROM dblink_get_result('budget_other') AS t(r text);
	ended := 'ok';
EXCEPTION WHEN query_canceled OR OTHERS THEN  -- dblink raises the other backend's error
	ended := SQLERRM;
END $$;
SELECT alike(pg_temp.other_result(), '%canceling statement due to user request%',
	'pg_cancel_backend ends the step with the cancel''s error');
SELECT cmp_ok(extract(epoch FROM clock_timestamp() - :'cancel_t0'::timestamptz)::float8, '<', 1::float8,
	'the canceled step ended within 1 s');
SELECT dblink_disconnect('budget_other') AS disconnected \gset

-- pg_terminate_backend too: the backend running a long step ends within 1 s
-- (pg_terminate_backend's timeout: true only when it is gone by then), and
-- ends as a terminated backend, not a crash (the postmaster check below).
SELECT pg_temp.long_step('budget_third') AS third_pid \gset
SELECT ok(pg_terminate_backend(:third_pid, 1000),
	'pg_terminate_backend ends a backend in a long step within 1 s');
SELECT dblink_disconnect('budget_third') AS disconnected \gset

SELECT is(pg_postmaster_start_time(), :'postmaster_t0'::timestamptz,
	'the postmaster is the same process (no backend crashed)');
SELECT * FROM finish();
ROLLBACK;
