// jsonata_test.cpp — core's JSONata evaluator: every operator and every
// function of the library (AWS's additions included), the error codes, and
// the limits (a deep or huge expression is a clean L0001, never a crash).
// The differential test against the reference is test/jsonata/.

#include <regex>

#include "helpers.hpp"
#include "jsonata.hpp"

using namespace genroc;
using genroc::test::J;

namespace {

const json kDoc = J(R"({"a":1,"b":[1,2,3],"s":"Hello World","n":null,"t":true,
  "c":{"d":"x","e":[{"f":1,"g":"p"},{"f":2,"g":"q"},{"f":3,"g":"p"}]},
  "nums":[3,1,2,10],"strs":["b","a","c"],
  "objs":[{"k":"x","v":1},{"k":"y","v":2},{"k":"x","v":3}]})");

// The result as JSON text, "undefined", or "error CODE".
std::string ev(const std::string &expr, const json &input = kDoc, int64_t now_ms = 0,
			   std::map<std::string, json> vars = {}) {
	try {
		auto e = jsonata::compile(expr);
		jsonata::Environment env;
		env.now_ms = now_ms;
		env.vars = std::move(vars);
		auto r = jsonata::evaluate(*e, &input, env);
		return r ? r->dump() : "undefined";
	} catch (const jsonata::JsonataError &err) {
		return "error " + err.code;
	}
}

}  // namespace

TEST(Jsonata, Paths) {
	EXPECT_EQ(ev("a"), "1");
	EXPECT_EQ(ev("c.d"), "\"x\"");
	EXPECT_EQ(ev("c.e.f"), "[1,2,3]");
	EXPECT_EQ(ev("c.e[0].g"), "\"p\"");
	EXPECT_EQ(ev("c.e[-1].f"), "3");
	EXPECT_EQ(ev("c.e[f > 1].g"), R"(["q","p"])");
	EXPECT_EQ(ev("c.e[g = 'p'][1].f"), "3");
	EXPECT_EQ(ev("b[[0,2]]"), "[1,3]");
	EXPECT_EQ(ev("missing"), "undefined");
	EXPECT_EQ(ev("missing.x"), "undefined");
	EXPECT_EQ(ev("`a`"), "1");
	EXPECT_EQ(ev("$.a"), "1");
	EXPECT_EQ(ev("$$.c.d"), "\"x\"");
	EXPECT_EQ(ev("c.e.(f * 2)"), "[2,4,6]");
	EXPECT_EQ(ev("b.[$, $ * 10]"), "[[1,10],[2,20],[3,30]]");
}

TEST(Jsonata, SingletonsAndKeepArray) {
	EXPECT_EQ(ev("c.e[0].f"), "1");
	EXPECT_EQ(ev("c.e[0].f[]"), "[1]");
	EXPECT_EQ(ev("c.d[]"), "[\"x\"]");
	EXPECT_EQ(ev("[1]"), "[1]");
	EXPECT_EQ(ev("a.b", J(R"([{"a":{"b":1}},{"a":{"b":2}}])")), "[1,2]");
	EXPECT_EQ(ev("$", J("[1]")), "[1]");
	EXPECT_EQ(ev("a", J(R"([{"a":[1]},{"a":[2,3]}])")), "[1,2,3]");
}

TEST(Jsonata, WildcardsAndDescendants) {
	EXPECT_EQ(ev("c.*", J(R"({"c":{"x":1,"y":[2,3]}})")), "[1,2,3]");
	EXPECT_EQ(ev("**.f"), "[1,2,3]");
	EXPECT_EQ(ev("*.f", J(R"({"a":{"f":1},"b":{"f":2}})")), "[1,2]");
}

TEST(Jsonata, Arithmetic) {
	EXPECT_EQ(ev("1 + 2 * 3"), "7");
	EXPECT_EQ(ev("(1 + 2) * 3"), "9");
	EXPECT_EQ(ev("10 / 4"), "2.5");
	EXPECT_EQ(ev("10 % 3"), "1");
	EXPECT_EQ(ev("-a"), "-1");
	EXPECT_EQ(ev("a + missing"), "undefined");
	EXPECT_EQ(ev("1 + 'a'"), "error T2002");
	EXPECT_EQ(ev("'a' + 1"), "error T2001");
	EXPECT_EQ(ev("-'x'"), "error D1002");
	EXPECT_EQ(ev("1 / 0"), "error D1001");
}

TEST(Jsonata, Comparison) {
	EXPECT_EQ(ev("1 = 1"), "true");
	EXPECT_EQ(ev("1 = '1'"), "false");
	EXPECT_EQ(ev("b = [1,2,3]"), "true");
	EXPECT_EQ(ev("c.e[0] = {'f': 1, 'g': 'p'}"), "true");
	EXPECT_EQ(ev("1 != 2"), "true");
	EXPECT_EQ(ev("'a' < 'b'"), "true");
	EXPECT_EQ(ev("2 >= 2"), "true");
	EXPECT_EQ(ev("missing < 1"), "undefined");
	EXPECT_EQ(ev("missing = 1"), "false");
	EXPECT_EQ(ev("'a' < 1"), "error T2009");
	EXPECT_EQ(ev("b < 1"), "error T2010");
}

TEST(Jsonata, BooleansAndIn) {
	EXPECT_EQ(ev("true and false"), "false");
	EXPECT_EQ(ev("true or missing"), "true");
	EXPECT_EQ(ev("'' or 0"), "false");
	EXPECT_EQ(ev("[0] and [1]"), "false");
	EXPECT_EQ(ev("3 in b"), "true");
	EXPECT_EQ(ev("4 in b"), "false");
	EXPECT_EQ(ev("'x' in objs.k"), "true");
	EXPECT_EQ(ev("1 in 1"), "true");
}

TEST(Jsonata, ConcatRangeConditional) {
	EXPECT_EQ(ev("'a' & 1 & true & null & missing"), "\"a1truenull\"");
	EXPECT_EQ(ev("'a' & b"), "\"a[1,2,3]\"");
	EXPECT_EQ(ev("'' & 1e21"), "\"1e+21\"");
	EXPECT_EQ(ev("'' & (0.1 + 0.2)"), "\"0.3\"");
	EXPECT_EQ(ev("[1..3, 7]"), "[1,2,3,7]");
	EXPECT_EQ(ev("1..3"), "error S0201");	 // a range only inside [ ], as in the reference
	EXPECT_EQ(ev("[5..1]"), "[]");
	EXPECT_EQ(ev("[0.5..2]"), "error T2003");
	EXPECT_EQ(ev("[1..2.5]"), "error T2004");
	EXPECT_EQ(ev("[1..100000000]"), "error D2014");
	EXPECT_EQ(ev("a > 0 ? 'pos' : 'neg'"), "\"pos\"");
	EXPECT_EQ(ev("a > 5 ? 'big'"), "undefined");
	EXPECT_EQ(ev("missing ?: 'd'"), "\"d\"");
	EXPECT_EQ(ev("s ?: 'd'"), "\"Hello World\"");
	EXPECT_EQ(ev("n ?? 'd'"), "null");
	EXPECT_EQ(ev("missing ?? 'd'"), "\"d\"");
}

TEST(Jsonata, Constructors) {
	EXPECT_EQ(ev("{'a': 1, 'b': [1, 2], 'c': {'d': null}}"), R"({"a":1,"b":[1,2],"c":{"d":null}})");
	EXPECT_EQ(ev("{'x': missing}"), "{}");
	EXPECT_EQ(ev("[1, 2, [3, 4]]"), "[1,2,[3,4]]");
	EXPECT_EQ(ev("[b, nums]"), "[1,2,3,3,1,2,10]");
	EXPECT_EQ(ev("{1: 2}"), "error T1003");
	EXPECT_EQ(ev("objs{k: v}"), R"({"x":[1,3],"y":2})");
	EXPECT_EQ(ev("objs{k: $sum(v)}"), R"({"x":4,"y":2})");
	EXPECT_EQ(ev("c.e{g: f}"), R"({"p":[1,3],"q":2})");
	EXPECT_EQ(ev("objs{k: v, 'x': 1}"), "error D1009");
}

TEST(Jsonata, VariablesLambdasClosures) {
	EXPECT_EQ(ev("($x := 5; $x * 2)"), "10");
	EXPECT_EQ(ev("($x := 1; ($x := 2); $x)"), "1");
	EXPECT_EQ(ev("($f := function($n) { $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))"), "3628800");
	EXPECT_EQ(ev("(function($x){ $x * $x })(4)"), "16");
	EXPECT_EQ(ev("($add := function($a, $b){ $a + $b }; $inc := $add(?, 1); $inc(41))"), "42");
	EXPECT_EQ(ev("($k := function($x){ function(){ $x } }; $k(7)())"), "7");
	EXPECT_EQ(ev("$v + 1", kDoc, 0, {{"v", 41}}), "42");
	EXPECT_EQ(ev("$states.input.a", kDoc, 0, {{"states", J(R"({"input":{"a":3}})")}}), "3");
	EXPECT_EQ(ev("a()"), "error T1006");
	EXPECT_EQ(ev("1 := 2"), "error S0212");
	EXPECT_EQ(ev("($f := function($x) <n:n> { $x + 1 }; $f(1))"), "2");
}

TEST(Jsonata, ChainingAndSort) {
	EXPECT_EQ(ev("b ~> $sum()"), "6");
	EXPECT_EQ(ev("s ~> $uppercase ~> $substring(0, 3)"), "\"HEL\"");
	EXPECT_EQ(ev("($f := $uppercase ~> $trim; $f(' ab '))"), "\"AB\"");
	EXPECT_EQ(ev("1 ~> 2"), "error T2006");
	EXPECT_EQ(ev("nums^($)"), "[1,2,3,10]");
	EXPECT_EQ(ev("nums^(>$)"), "[10,3,2,1]");
	EXPECT_EQ(ev("objs^(k, >v).v"), "[3,1,2]");
	EXPECT_EQ(ev("objs^(v)[0].v"), "1");
	EXPECT_EQ(ev("[1, 'a']^($)"), "error T2007");
}

TEST(Jsonata, Transform) {
	EXPECT_EQ(ev("|c|{'d': 'y'}|"), "undefined");	// a function: no JSON value
	EXPECT_EQ(ev("($ ~> |c|{'d': 'y'}|).c.d"), "\"y\"");
	EXPECT_EQ(ev("c.d"), "\"x\"");	// the input is copied, not changed
	EXPECT_EQ(ev("(c ~> |e|{'z': true}, 'g'|).e[0]"), R"({"f":1,"z":true})");
	EXPECT_EQ(ev("$ ~> |c|5|"), "error T2011");
}

TEST(Jsonata, Syntax) {
	EXPECT_EQ(ev("\"unterminated"), "error S0101");
	EXPECT_EQ(ev("1 +"), "error S0207");
	EXPECT_EQ(ev("(1"), "error S0203");
	EXPECT_EQ(ev("{'a' 1}"), "error S0202");
	EXPECT_EQ(ev("'\\x'"), "error S0103");
	EXPECT_EQ(ev("a /* c */ + 1"), "2");
	EXPECT_EQ(ev("/* open"), "error S0106");
	EXPECT_EQ(ev("'\\u00e9\\n'"), "\"é\\n\"");
	EXPECT_EQ(ev("1e999"), "error S0102");
	EXPECT_EQ(ev("a.1"), "error S0213");
	EXPECT_EQ(ev("%.a"), "error S0217");	   // parent: not supported (documented)
	EXPECT_EQ(ev("b@$x"), "error S0218");	   // focus binding: not supported (documented)
}

TEST(Jsonata, StringFunctions) {
	EXPECT_EQ(ev("$string(123)"), "\"123\"");
	EXPECT_EQ(ev("$string(c.e[0])"), R"("{\"f\":1,\"g\":\"p\"}")");
	EXPECT_EQ(ev("$string({'a': [1]}, true)"), R"("{\n  \"a\": [\n    1\n  ]\n}")");
	EXPECT_EQ(ev("$string(1/3)"), "\"0.333333333333333\"");
	EXPECT_EQ(ev("$string(missing)"), "undefined");
	EXPECT_EQ(ev("$length('é€😀')"), "3");
	EXPECT_EQ(ev("$length(1)"), "error T0410");
	EXPECT_EQ(ev("$substring(s, 6)"), "\"World\"");
	EXPECT_EQ(ev("$substring(s, -5, 2)"), "\"Wo\"");
	EXPECT_EQ(ev("$substring('é€😀x', 1, 2)"), "\"€😀\"");
	EXPECT_EQ(ev("$substringBefore(s, ' ')"), "\"Hello\"");
	EXPECT_EQ(ev("$substringAfter(s, ' ')"), "\"World\"");
	EXPECT_EQ(ev("$uppercase(s)"), "\"HELLO WORLD\"");
	EXPECT_EQ(ev("$lowercase(s)"), "\"hello world\"");
	EXPECT_EQ(ev("$trim('  a \\n\\t b  ')"), "\"a b\"");
	EXPECT_EQ(ev("$pad('x', 4)"), "\"x   \"");
	EXPECT_EQ(ev("$pad('x', -4, '0')"), "\"000x\"");
	EXPECT_EQ(ev("$contains(s, 'World')"), "true");
	EXPECT_EQ(ev("$contains(s, /w.r/i)"), "true");
	EXPECT_EQ(ev("$split('a,b,,c', ',')"), R"(["a","b","","c"])");
	EXPECT_EQ(ev("$split('a,b,,c', ',', 2)"), R"(["a","b"])");
	EXPECT_EQ(ev("$split('a1b22c', /[0-9]+/)"), R"(["a","b","c"])");
	EXPECT_EQ(ev("$split('a', ',', -1)"), "error D3020");
	EXPECT_EQ(ev("$join(strs, '-')"), "\"b-a-c\"");
	EXPECT_EQ(ev("$join(['a', 1])"), "error T0412");
	EXPECT_EQ(ev("$match('ab12cd34', /[0-9]+/)"),
			  R"([{"groups":[],"index":2,"match":"12"},{"groups":[],"index":6,"match":"34"}])");
	EXPECT_EQ(ev("$match(s, /(l)(o)/).groups"), R"(["l","o"])");
	EXPECT_EQ(ev("$replace(s, 'o', '0')"), "\"Hell0 W0rld\"");
	EXPECT_EQ(ev("$replace(s, /(l+)(o)/, '$2$1')"), "\"Heoll World\"");
	EXPECT_EQ(ev("$replace(s, /l/, function($m){ $uppercase($m.match) })"), "\"HeLLo WorLd\"");
	EXPECT_EQ(ev("$replace(s, '', 'x')"), "error D3010");
	EXPECT_EQ(ev("$replace('abc', /b/, function($m){ 1 })"), "error D3012");
	EXPECT_EQ(ev("$match('aaa', /a*?/)"), "error D1004");
	EXPECT_EQ(ev("$base64encode('Hello, World')"), "\"SGVsbG8sIFdvcmxk\"");
	EXPECT_EQ(ev("$base64decode('SGVsbG8sIFdvcmxk')"), "\"Hello, World\"");
	EXPECT_EQ(ev("$encodeUrlComponent('a b&c/é')"), "\"a%20b%26c%2F%C3%A9\"");
	EXPECT_EQ(ev("$encodeUrl('a b&c/é')"), "\"a%20b&c/%C3%A9\"");
	EXPECT_EQ(ev("$decodeUrlComponent('a%20b%C3%A9')"), "\"a bé\"");
	EXPECT_EQ(ev("$decodeUrl('a%20b%2Fc')"), "\"a b%2Fc\"");
	EXPECT_EQ(ev("$decodeUrlComponent('%zz')"), "error D3140");
	EXPECT_EQ(ev("$formatBase(255, 16)"), "\"ff\"");
	EXPECT_EQ(ev("$formatBase(10, 1)"), "error D3100");
	EXPECT_EQ(ev("$uppercase()", J("\"ctx\"")), "\"CTX\"");
	EXPECT_EQ(ev("$uppercase()", J("5")), "error T0411");
}

TEST(Jsonata, NumericFunctions) {
	EXPECT_EQ(ev("$number('12.5')"), "12.5");
	EXPECT_EQ(ev("$number('0x1F')"), "31");
	EXPECT_EQ(ev("$number(true)"), "1");
	EXPECT_EQ(ev("$number('abc')"), "error D3030");
	EXPECT_EQ(ev("$abs(-3.5)"), "3.5");
	EXPECT_EQ(ev("$floor(-2.5)"), "-3");
	EXPECT_EQ(ev("$ceil(2.1)"), "3");
	EXPECT_EQ(ev("[$round(2.5), $round(3.5), $round(-2.5), $round(1.005, 2), $round(1234.5, -2)]"),
			  "[2,4,-2,1,1200]");
	EXPECT_EQ(ev("$sqrt(16)"), "4");
	EXPECT_EQ(ev("$sqrt(-1)"), "error D3060");
	EXPECT_EQ(ev("$power(2, 10)"), "1024");
	EXPECT_EQ(ev("$power(10, 400)"), "error D3061");
	std::string r = ev("$random()");
	double d = std::stod(r);
	EXPECT_TRUE(d >= 0 && d < 1) << r;
	EXPECT_EQ(ev("$random(7) = $random(7)"), "true");	// AWS's seeded form
	EXPECT_EQ(ev("$sum(b)"), "6");
	EXPECT_EQ(ev("$sum(5)"), "5");
	EXPECT_EQ(ev("$sum(['a'])"), "error T0412");
	EXPECT_EQ(ev("$max(nums)"), "10");
	EXPECT_EQ(ev("$min(nums)"), "1");
	EXPECT_EQ(ev("$max([])"), "undefined");
	EXPECT_EQ(ev("$average(b)"), "2");
	EXPECT_EQ(ev("$count(b)"), "3");
	EXPECT_EQ(ev("$count(missing)"), "0");
}

TEST(Jsonata, BooleanFunctions) {
	EXPECT_EQ(ev("[$boolean(''), $boolean('a'), $boolean(0), $boolean([]), $boolean([0, 1]), "
				 "$boolean({}), $boolean(c)]"),
			  "[false,true,false,false,true,false,true]");
	EXPECT_EQ(ev("$boolean(missing)"), "undefined");
	EXPECT_EQ(ev("$not(true)"), "false");
	EXPECT_EQ(ev("$exists(n)"), "true");
	EXPECT_EQ(ev("$exists(missing)"), "false");
}

TEST(Jsonata, ArrayAndObjectFunctions) {
	EXPECT_EQ(ev("$append(b, 4)"), "[1,2,3,4]");
	EXPECT_EQ(ev("$append(1, 2)"), "[1,2]");
	EXPECT_EQ(ev("$sort(nums)"), "[1,2,3,10]");
	EXPECT_EQ(ev("$sort(objs, function($l, $r){ $l.v < $r.v }).v"), "[3,2,1]");
	EXPECT_EQ(ev("$sort([1, 'a'])"), "error D3070");
	EXPECT_EQ(ev("$reverse(b)"), "[3,2,1]");
	EXPECT_EQ(ev("$count($shuffle(nums))"), "4");
	EXPECT_EQ(ev("$distinct([1, 2, 1, [1], [1], {'x':1}, {'x':1}])"), R"([1,2,[1],{"x":1}])");
	EXPECT_EQ(ev("$zip(b, strs)"), R"([[1,"b"],[2,"a"],[3,"c"]])");
	EXPECT_EQ(ev("$keys(objs)"), R"(["k","v"])");
	EXPECT_EQ(ev("$lookup(objs, 'k')"), R"(["x","y","x"])");
	EXPECT_EQ(ev("$spread(c.e[0])"), R"([{"f":1},{"g":"p"}])");
	EXPECT_EQ(ev("$merge([{'a': 1}, {'a': 2, 'b': 3}])"), R"({"a":2,"b":3})");
	EXPECT_EQ(ev("$type(b) & $type(c) & $type(n) & $type($sum)"), "\"arrayobjectnullfunction\"");
	EXPECT_EQ(ev("$error('boom')"), "error D3137");
	EXPECT_EQ(ev("$assert(1 = 2, 'nope')"), "error D3141");
	EXPECT_EQ(ev("$clone(c) = c"), "true");
}

TEST(Jsonata, HigherOrderFunctions) {
	EXPECT_EQ(ev("$map(b, function($v, $i){ $v + $i })"), "[1,3,5]");
	EXPECT_EQ(ev("$map(b, $string)"), R"(["1","2","3"])");
	EXPECT_EQ(ev("$filter(nums, function($v){ $v > 2 })"), "[3,10]");
	EXPECT_EQ(ev("$single(b, function($v){ $v = 2 })"), "2");
	EXPECT_EQ(ev("$single(b, function($v){ $v > 1 })"), "error D3138");
	EXPECT_EQ(ev("$single(b, function($v){ $v > 5 })"), "error D3139");
	EXPECT_EQ(ev("$reduce(b, function($a, $v){ $a + $v }, 10)"), "16");
	EXPECT_EQ(ev("$reduce(b, function($a){ $a })"), "error D3050");
	EXPECT_EQ(ev("$sift(c, function($v){ $type($v) = 'string' })"), R"({"d":"x"})");
	EXPECT_EQ(ev("$each(c.e[0], function($v, $k){ $k & ':' & $v })"), R"(["f:1","g:p"])");
}

TEST(Jsonata, DateTime) {
	EXPECT_EQ(ev("$toMillis('2024-01-02T03:04:05.678Z')"), "1704164645678");
	EXPECT_EQ(ev("$toMillis('2024-01-02T03:04:05+02:00')"), "1704157445000");
	EXPECT_EQ(ev("$toMillis('yesterday')"), "error D3110");
	EXPECT_EQ(ev("$fromMillis(1704164645678)"), "\"2024-01-02T03:04:05.678Z\"");
	EXPECT_EQ(ev("$now()", kDoc, 1704164645678), "\"2024-01-02T03:04:05.678Z\"");
	EXPECT_EQ(ev("$millis()", kDoc, 42), "42");
	EXPECT_EQ(ev("$fromMillis(0, '[Y]')"), "\"1970\"");	// pictures: jsonata_picture_test.cpp
}

TEST(Jsonata, AwsFunctions) {
	EXPECT_EQ(ev("$partition([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)"), "[[1,2,3],[4,5,6],[7,8,9]]");
	EXPECT_EQ(ev("$partition([1, 2, 3], 2)"), "[[1,2],[3]]");
	EXPECT_EQ(ev("$range(0, 10, 2)"), "[0,2,4,6,8,10]");
	EXPECT_EQ(ev("$range(5, 1, -2)"), "[5,3,1]");
	EXPECT_EQ(ev("$range(0, 1, 0)"), "error D3137");
	EXPECT_EQ(ev("$hash('input data', 'SHA-256')"),
			  "\"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3\"");
	EXPECT_EQ(ev("$hash('x', 'SHA-3')"), "error D3137");
	std::string u = ev("$uuid()");
	EXPECT_TRUE(std::regex_match(u, std::regex("\"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\"")))
		<< u;
	EXPECT_EQ(ev("$parse('{\"a\": [1, 2]}')"), R"({"a":[1,2]})");
	EXPECT_EQ(ev("$parse('[1')"), "error D3137");
}

TEST(Jsonata, Limits) {
	// a deep expression: a clean error, never a crash
	EXPECT_EQ(ev(std::string(100000, '(') + "1" + std::string(100000, ')')), "error L0001");
	EXPECT_EQ(ev(std::string(5000, '(') + "1" + std::string(5000, ')')), "error L0001");
	EXPECT_EQ(ev(std::string(5000, '-') + "1"), "error L0001");
	std::string nested = "1";
	for (int i = 0; i < 2000; i++)
		nested = "[" + nested + "]";
	EXPECT_EQ(ev(nested), "error L0001");
	// unbounded recursion and loops
	EXPECT_EQ(ev("($f := function($n){ $f($n + 1) }; $f(0))"), "error L0001");
	EXPECT_EQ(ev("$count([1..1000000, 1])"), "error L0001");				 // jsonata_sequence
	EXPECT_EQ(ev("$count([1..1000000].($ + $ + $ + $))"), "error L0001");	 // jsonata_steps
	EXPECT_EQ(ev("($s := function($x, $n){ $n = 0 ? $x : $s($x & $x, $n - 1) }; $length($s('ab', 30)))"),
			  "error L0001");
	EXPECT_EQ(ev("$pad('x', 100000000)"), "error L0001");
	// a regular expression on a long subject
	json big = json{{"s", std::string(20000, 'a')}};
	EXPECT_EQ(ev("$contains(s, /a+b/)", big), "error L0001");
	// a pattern that backtracks without end: its work counts as steps
	// (a required b the subject lacks, PCRE2 sees at once: [bc] hides it)
	json run = json{{"s", std::string(40, 'a')}};
	for (const char *e : {"$match(s, /(a+)+[bc]/)", "$contains(s, /(a|aa)+[bc]/)", "$split(s, /(a*)*[bc]/)",
						  "$replace(s, /(a+)+[bc]/, 'x')", "/(a+)+[bc]/(s)"})
		EXPECT_EQ(ev(e, run), "error L0001") << e;
	EXPECT_EQ(ev("$match(s, /(a+)+b/)", run), "undefined");
	// ... but ordinary sizes are fine
	EXPECT_EQ(ev("$count([1..100000])"), "100000");
	EXPECT_EQ(ev("$count($match(s, /a/))", json{{"s", std::string(10000, 'a')}}), "10000");
	EXPECT_EQ(ev("$replace(s, /(a+)+b/, 'x')", json{{"s", std::string(3000, 'a') + "b"}}), "\"x\"");
	EXPECT_EQ(ev("($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100))"), "100");
}

// A higher-order function whose function argument evaluates to nothing is
// T1006, not a null dereference (found by the fuzz target).
TEST(Jsonata, AnUndefinedFunctionArgumentIsT1006) {
	for (const char *e : {"$map(b, nope)", "$filter(b, nope)", "$reduce(b, nope)", "$sift(c, nope)"})
		EXPECT_EQ(ev(e), "error T1006") << e;
}

// Repetition counts and back-references of any length are read without
// overflow (std::regex overflowed, found by the fuzz target): PCRE2 refuses
// a count over 65535; \12345678 is JavaScript's octal \123 and "45678".
TEST(Jsonata, HugeRegexCountsAreRefused) {
	EXPECT_EQ(ev("$match('aa', /a{70000000000000000000}/)"), "error S0303");
	EXPECT_EQ(ev("$match('aa', /a{1,70000000000000000000}/)"), "error S0303");
	EXPECT_EQ(ev("$match('aa', /(a)\\12345678/)"), "undefined");
	EXPECT_EQ(ev("$match('aS45678', /(a)\\12345678/).match"), "\"aS45678\"");
	EXPECT_EQ(ev("$contains('aa', /a{2}/)"), "true");
	EXPECT_EQ(ev("$contains('1234567', /1234567/)"), "true");
}

// std::regex recursed once per character of the subject: these overflowed
// the stack (a PostgreSQL backend's: SIGSEGV, the cluster restarted) on a
// subject of 10,000 characters.  PCRE2 keeps its backtracking on the heap,
// bounded by jsonata_regex_memory; each answers at once.
TEST(Jsonata, RegexDoesNotRecurseOnTheSubject) {
	for (const char *re : {"/(a|b|c|d)*$/", "/((a|b))*$/", "/((a)|(b))*$/"}) {
		const std::string e = std::string("$match($pad(\"\", 9999, \"ab\"), ") + re + ")";
		EXPECT_EQ(ev(e + ".index"), "0") << e;
		EXPECT_EQ(ev("$length(" + e + ".match)"), "9999") << e;
		EXPECT_EQ(ev(e, json{{"s", std::string(9999, 'a')}}).substr(0, 10), "{\"groups\":") << e;
	}
	// the same on the input, at the subject limit
	json s = json{{"s", std::string(10000, 'b')}};
	EXPECT_EQ(ev("$length($match(s, /(a|b|c|d)*$/).match)", s), "10000");
	EXPECT_EQ(ev("$length($replace(s, /((a)|(b))*$/, 'x'))", s), "1");
	// many groups per character: over jsonata_regex_memory, a clean L0001
	std::string groups;
	for (int i = 0; i < 60; i++)
		groups += std::string(groups.empty() ? "" : "|") + "(" + static_cast<char>('a' + i % 26) + ")";
	EXPECT_EQ(ev("$match(s, /(" + groups + ")*$/)", s), "error L0001");
}

// A match's work between two callouts is charged too: an item that scans
// far and fails (a{7999}, a back-reference) after every backtracking step
// ends with L0001 within the step budget, not after minutes.
TEST(Jsonata, RegexScansCountAsSteps) {
	json s = json{{"s", std::string(8000, 'a') + "c"}};
	for (const char *e : {"$match(s, /(?:a?){30}a{7999}[bd]/)", "$match(s, /(?:a|a){0,40}?a{7990}[bd]/)",
						  "$match(s, /(a*)(?:a?\\1){20}[bd]/)", "$match(s, /(?:a|a)*[ab]{7999}[yz]/)"})
		EXPECT_EQ(ev(e, s), "error L0001") << e;
}

// JavaScript's syntax and meaning where PCRE2's differs (the reference's
// answers, checked with the jsonata package).
TEST(Jsonata, RegexIsJavaScripts) {
	EXPECT_EQ(ev("$match('éa', /./).match"), R"(["é","a"])");			  // a character, not a byte
	EXPECT_EQ(ev("$match('ÉCOLE', /école/i).match"), "\"ÉCOLE\"");
	EXPECT_EQ(ev("$contains('a\u2028b', /a.b/)"), "false");				  // . skips line terminators
	EXPECT_EQ(ev("$contains('a\rb', /a.b/)"), "false");
	EXPECT_EQ(ev("$match('a\nb\r\nc', /^.$/m).match"), R"(["a","b","c"])");
	EXPECT_EQ(ev("$match('ab\u2028cd', /^c/m).index"), "3");
	EXPECT_EQ(ev("$contains('a\nb\n', /b$/)"), "false");					  // $ is the end only
	EXPECT_EQ(ev("$match('x\u00a0y', /\\s/).index"), "1");				  // Unicode's spaces
	EXPECT_EQ(ev("$match('x\u00a0y z', /\\S+/).match"), R"(["x","y","z"])");
	EXPECT_EQ(ev("$match('a\\u000bb', /\\v/).index"), "1");
	EXPECT_EQ(ev("$match('abc', /[^]/).match"), R"(["a","b","c"])");
	EXPECT_EQ(ev("$contains('abc', /[]/)"), "false");
	EXPECT_EQ(ev("$match('aQz', /\\Q/).match"), "\"Q\"");				  // an identity escape
	EXPECT_EQ(ev("$match('A', /\\u0041/).match"), "\"A\"");
	EXPECT_EQ(ev("$match('b', /(a)?\\1b/).match"), "\"b\"");			  // an unset group is empty
	EXPECT_EQ(ev("$match('foo.bar', /\\w+\\b/).match"), R"(["foo","bar"])");
	EXPECT_EQ(ev("$match('\u00e9t\u00e9', /\\w+/).match"), "\"t\"");	  // \w is ASCII
	EXPECT_EQ(ev("$match('x', /(?<n>x)\\k<n>?/).groups"), R"(["x"])");
	EXPECT_EQ(ev("$match('ab', /(?<=a)b/).index"), "1");
	// a subject that is not UTF-8 (a lone surrogate's escape): no match
	// across the invalid bytes, no error
	EXPECT_EQ(ev("$match('\\uD800abc', /b/).index"), "2");
	EXPECT_EQ(ev("$contains('\\uD800', /./)"), "false");
}
