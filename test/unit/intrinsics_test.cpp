// intrinsics_test.cpp — every intrinsic function, its error cases
// (States.IntrinsicFailure), and calls nested in calls, through Parameters.

#include <regex>
#include <set>

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

const json kInput = J(R"({"name":"Ada","n":3,"list":[1,2,2,3,1],"obj":{"a":1,"b":{"x":1}},
  "other":{"b":{"y":2},"c":3},"text":"{\"k\":[1,true]}","csv":"a,b;;c","b64":"aGVsbG8=",
  "empty":[],"tpl":"{} and {}","d":2.5})");

// Runs `expr` (the value of a "v.$" key) on kInput: the result, or the
// failure as {"error","cause"}.
json call(const std::string &expr, const json &input = kInput) {
	json def = J(R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}})");
	def["States"]["A"]["Parameters"] = {{"v.$", expr}};
	auto o = outcome(start(def, input, 0, J(R"({"Execution":{"Id":"e-1"}})")));
	if (o["kind"] == "failed")
		return json{{"error", o["error"]}, {"cause", o["cause"]}};
	return o["output"]["v"];
}

// The error name of a failing call.
std::string failure(const std::string &expr) {
	json r = call(expr);
	if (!r.is_object() || !r.contains("error"))
		return "<no failure: " + r.dump() + ">";
	return r["error"].get<std::string>();
}

}  // namespace

TEST(Intrinsic, Format) {
	EXPECT_EQ(call("States.Format('Hello, {}!', $.name)"), "Hello, Ada!");
	EXPECT_EQ(call("States.Format('{} + {} = {}', 1, $.n, 4.5)"), "1 + 3 = 4.5");
	EXPECT_EQ(call("States.Format('{}{}{}', true, null, 'x')"), "truenullx");
	EXPECT_EQ(call("States.Format('no placeholders')"), "no placeholders");
	EXPECT_EQ(call(R"(States.Format('it\'s \{literal\} {}', $.name))"), "it's {literal} Ada");
	EXPECT_EQ(call(R"(States.Format('back\\slash {}', 1))"), "back\\slash 1");
	EXPECT_EQ(call("States.Format($.tpl, 'a', 'b')"), "a and b");
	// AWS's recorded answer: an object or an array is formatted as its JSON text.
	EXPECT_EQ(call("States.Format('obj {}', $.obj)"), R"(obj {"a":1,"b":{"x":1}})");
	EXPECT_EQ(call("States.Format('{} and {}', $.list, $.empty)"), "[1,2,2,3,1] and []");
	EXPECT_EQ(failure("States.Format('{} {}', 1)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Format('{}', 1, 2)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Format('{ }', 1)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Format('}', 1)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Format($.n)"), "States.IntrinsicFailure");	 // template not a string
}

TEST(Intrinsic, StringToJsonAndJsonToString) {
	EXPECT_EQ(call("States.StringToJson($.text)"), J(R"({"k":[1,true]})"));
	EXPECT_EQ(call("States.StringToJson('[1, 2]')"), J("[1,2]"));
	EXPECT_EQ(call("States.JsonToString($.obj)"), R"({"a":1,"b":{"x":1}})");
	EXPECT_EQ(call("States.JsonToString($.name)"), "\"Ada\"");
	EXPECT_EQ(call("States.StringToJson(States.JsonToString($.obj))"), kInput["obj"]);
	EXPECT_EQ(failure("States.StringToJson('{nope')"), "States.IntrinsicFailure");
	// AWS: an empty or blank string is null, not a failure.
	EXPECT_EQ(call("States.StringToJson('')"), nullptr);
	EXPECT_EQ(call("States.StringToJson('  ')"), nullptr);
	EXPECT_EQ(failure("States.StringToJson($.n)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, Array) {
	EXPECT_EQ(call("States.Array('a', 1, $.n, null, true, $.obj.a)"), J(R"(["a",1,3,null,true,1])"));
	EXPECT_EQ(call("States.Array()"), json::array());
	EXPECT_EQ(call("States.Array(States.Array(1), $.empty)"), J("[[1],[]]"));
}

TEST(Intrinsic, ArrayPartition) {
	EXPECT_EQ(call("States.ArrayPartition($.list, 2)"), J("[[1,2],[2,3],[1]]"));
	EXPECT_EQ(call("States.ArrayPartition($.list, 5)"), J("[[1,2,2,3,1]]"));
	EXPECT_EQ(call("States.ArrayPartition($.empty, 3)"), json::array());
	EXPECT_EQ(failure("States.ArrayPartition($.list, 0)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.ArrayPartition($.list, $.d)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.ArrayPartition($.name, 2)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, ArrayContains) {
	EXPECT_EQ(call("States.ArrayContains($.list, 3)"), true);
	EXPECT_EQ(call("States.ArrayContains($.list, 7)"), false);
	EXPECT_EQ(call("States.ArrayContains(States.Array($.obj), $.obj)"), true);
	EXPECT_EQ(failure("States.ArrayContains($.obj, 1)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, ArrayRange) {
	EXPECT_EQ(call("States.ArrayRange(1, 9, 2)"), J("[1,3,5,7,9]"));
	EXPECT_EQ(call("States.ArrayRange(10, 0, -5)"), J("[10,5,0]"));
	EXPECT_EQ(call("States.ArrayRange(1, 0, 1)"), json::array());
	EXPECT_EQ(call("States.ArrayRange(0, $.n, 1)"), J("[0,1,2,3]"));
	EXPECT_EQ(failure("States.ArrayRange(1, 5, 0)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.ArrayRange(0, 1000, 1)"), "States.IntrinsicFailure");  // 1001 items
	EXPECT_EQ(call("States.ArrayRange(1, 1000, 1)").size(), 1000u);
	EXPECT_EQ(failure("States.ArrayRange(0, $.d, 1)"), "States.IntrinsicFailure");
	// Stepping past the int64 range ends the range instead of wrapping around.
	EXPECT_EQ(call("States.ArrayRange(9223372036854775806, 9223372036854775807, 5)"),
			  J("[9223372036854775806]"));
}

TEST(Intrinsic, ArrayGetItemLengthUnique) {
	EXPECT_EQ(call("States.ArrayGetItem($.list, 3)"), 3);
	EXPECT_EQ(call("States.ArrayGetItem($.list, $.n)"), 3);
	EXPECT_EQ(failure("States.ArrayGetItem($.list, 5)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.ArrayGetItem($.list, -1)"), "States.IntrinsicFailure");
	EXPECT_EQ(call("States.ArrayLength($.list)"), 5);
	EXPECT_EQ(call("States.ArrayLength($.empty)"), 0);
	EXPECT_EQ(failure("States.ArrayLength($.name)"), "States.IntrinsicFailure");
	EXPECT_EQ(call("States.ArrayUnique($.list)"), J("[1,2,3]"));
	EXPECT_EQ(call("States.ArrayUnique(States.Array($.obj, $.obj, 1, 1.0))"), J(R"([{"a":1,"b":{"x":1}},1])"));
	EXPECT_EQ(failure("States.ArrayUnique($.obj)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, Base64) {
	EXPECT_EQ(call("States.Base64Encode('hello')"), "aGVsbG8=");
	EXPECT_EQ(call("States.Base64Encode('hi')"), "aGk=");
	EXPECT_EQ(call("States.Base64Encode('abc')"), "YWJj");
	EXPECT_EQ(call("States.Base64Encode('')"), "");
	EXPECT_EQ(call("States.Base64Decode($.b64)"), "hello");
	EXPECT_EQ(call("States.Base64Decode('aGk=')"), "hi");
	EXPECT_EQ(call("States.Base64Decode(States.Base64Encode('ünïcode ✓'))"), "ünïcode ✓");
	EXPECT_EQ(failure("States.Base64Decode('abc')"), "States.IntrinsicFailure");	 // not padded
	EXPECT_EQ(failure("States.Base64Decode('a=bc')"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Base64Decode('////')"), "States.IntrinsicFailure");	 // not UTF-8
	EXPECT_EQ(failure("States.Base64Decode('AA==')"), "States.IntrinsicFailure");	 // NUL
	EXPECT_EQ(failure("States.Base64Encode($.n)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, Hash) {
	EXPECT_EQ(call("States.Hash('abc', 'MD5')"), "900150983cd24fb0d6963f7d28e17f72");
	EXPECT_EQ(call("States.Hash('abc', 'SHA-1')"), "a9993e364706816aba3e25717850c26c9cd0d89d");
	EXPECT_EQ(call("States.Hash('abc', 'SHA-256')"),
			  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	EXPECT_EQ(call("States.Hash('abc', 'SHA-384')"),
			  "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
	EXPECT_EQ(call("States.Hash('abc', 'SHA-512')"),
			  "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	json in = kInput;
	in["alg"] = "SHA-2";
	EXPECT_EQ(call("States.Hash($.name, $.alg)", in)["error"], "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.Hash($.n, 'MD5')"), "States.IntrinsicFailure");
}

TEST(Intrinsic, JsonMerge) {
	EXPECT_EQ(call("States.JsonMerge($.obj, $.other, false)"), J(R"({"a":1,"b":{"y":2},"c":3})"));
	EXPECT_EQ(call("States.JsonMerge($.obj, $.other, true)"),
			  J(R"({"a":1,"b":{"x":1,"y":2},"c":3})"));
	EXPECT_EQ(failure("States.JsonMerge($.obj, $.list, false)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, MathRandom) {
	std::set<int64_t> seen;
	for (int i = 0; i < 200; i++) {
		const int64_t v = call("States.MathRandom(1, 10)").get<int64_t>();
		ASSERT_GE(v, 1);
		ASSERT_LT(v, 10);
		seen.insert(v);
	}
	EXPECT_GT(seen.size(), 5u);
	EXPECT_EQ(call("States.MathRandom(0, 1000, 7)"), call("States.MathRandom(0, 1000, 7)"));
	EXPECT_EQ(call("States.MathRandom(5, 6)"), 5);
	EXPECT_EQ(failure("States.MathRandom(5, 5)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.MathRandom($.name, 5)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, MathAdd) {
	EXPECT_EQ(call("States.MathAdd(1, 2)"), 3);
	EXPECT_EQ(call("States.MathAdd($.n, -5)"), -2);
	// AWS rounds each argument to a whole number, halves upwards, before adding
	// (its recorded answers).
	EXPECT_EQ(call("States.MathAdd($.d, 1)"), 4);
	EXPECT_EQ(call("States.MathAdd(1.5, 0)"), 2);
	EXPECT_EQ(call("States.MathAdd(2.5, 0)"), 3);
	EXPECT_EQ(call("States.MathAdd(-1.5, 0)"), -1);
	EXPECT_EQ(call("States.MathAdd(-2.5, 0)"), -2);
	EXPECT_EQ(call("States.MathAdd(-0.5, 0.5)"), 1);
	EXPECT_TRUE(call("States.MathAdd(0.25, 0)").is_number_integer());
	EXPECT_EQ(failure("States.MathAdd(9223372036854775807, 1)"), "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.MathAdd(1e308, 1e308)"), "States.IntrinsicFailure");
	json in = kInput;
	in["huge"] = J("18446744073709551615");
	EXPECT_EQ(call("States.ArrayGetItem($.list, $.huge)", in)["error"], "States.IntrinsicFailure");
	EXPECT_EQ(failure("States.MathAdd($.name, 1)"), "States.IntrinsicFailure");
}

TEST(Intrinsic, StringSplit) {
	EXPECT_EQ(call("States.StringSplit('1,2,3', ',')"), J(R"(["1","2","3"])"));
	EXPECT_EQ(call("States.StringSplit($.csv, ',;')"), J(R"(["a","b","c"])"));
	EXPECT_EQ(call("States.StringSplit('a→b→c', '→')"), J(R"(["a","b","c"])"));
	EXPECT_EQ(call("States.StringSplit('', ',')"), json::array());
	EXPECT_EQ(call("States.StringSplit('abc', '')"), J(R"(["abc"])"));
	EXPECT_EQ(failure("States.StringSplit($.list, ',')"), "States.IntrinsicFailure");
}

TEST(Intrinsic, UUID) {
	const std::regex v4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
	const std::string a = call("States.UUID()").get<std::string>();
	const std::string b = call("States.UUID()").get<std::string>();
	EXPECT_TRUE(std::regex_match(a, v4)) << a;
	EXPECT_NE(a, b);
}

TEST(Intrinsic, ContextPathArguments) {
	EXPECT_EQ(call("States.Format('run {}', $$.Execution.Id)"), "run e-1");
}

TEST(Intrinsic, MissingPathArgumentIsRuntime) {
	EXPECT_EQ(failure("States.ArrayLength($.nope)"), "States.Runtime");
}

TEST(Intrinsic, FailureNamesTheStateAndField) {
	json r = call("States.ArrayGetItem($.list, 9)");
	EXPECT_EQ(r["error"], "States.IntrinsicFailure");
	EXPECT_EQ(r["cause"], "in state \"A\", Parameters: States.ArrayGetItem: index 9 is outside "
						  "the array (size 5)");
}

TEST(Intrinsic, InResultSelector) {
	auto def = J(R"j({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:h",
	  "ResultSelector":{"count.$":"States.ArrayLength($.items)","first.$":"$.items[0]"},"End":true}}})j");
	auto o = outcome(run(def, J(R"({"op":"task_succeeded","state":"A","state_input":{},
	  "result":{"items":["x","y"]}})")));
	EXPECT_EQ(o["output"], J(R"({"count":2,"first":"x"})"));
}
