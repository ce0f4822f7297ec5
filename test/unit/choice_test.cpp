// choice_test.cpp — every Choice operator, true and false, plus missing
// variables, type mismatches, And/Or/Not, Default and NoChoiceMatched.

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

// Whether the rule (without Next) matches `input`.
bool matches(const std::string &rule, const std::string &input) {
	json r = J(rule);
	r["Next"] = "Yes";
	json def = J(R"({"StartAt":"C","States":{
	  "C":{"Type":"Choice","Default":"No"},
	  "Yes":{"Type":"Pass","Result":true,"End":true},
	  "No":{"Type":"Pass","Result":false,"End":true}}})");
	def["States"]["C"]["Choices"] = json::array({r});
	auto a = start(def, J(input));
	EXPECT_EQ(outcome(a)["kind"], "succeeded") << a.dump();
	return outcome(a)["output"].get<bool>();
}

// True when evaluating the rule fails the instance with States.Runtime.
bool runtime_failure(const std::string &rule, const std::string &input) {
	json r = J(rule);
	r["Next"] = "Yes";
	json def = J(R"({"StartAt":"C","States":{
	  "C":{"Type":"Choice","Default":"No"},
	  "Yes":{"Type":"Pass","End":true},
	  "No":{"Type":"Pass","End":true}}})");
	def["States"]["C"]["Choices"] = json::array({r});
	auto a = start(def, J(input));
	return outcome(a)["kind"] == "failed" && outcome(a)["error"] == "States.Runtime";
}

}  // namespace

TEST(Choice, StringComparisons) {
	const char *in = R"({"s":"banana","o":"cherry","n":5})";
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringEquals":"banana"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringEquals":"apple"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringLessThan":"cherry"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringLessThan":"apple"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringGreaterThan":"apple"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringGreaterThan":"banana"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringLessThanEquals":"banana"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringLessThanEquals":"b"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringGreaterThanEquals":"banana"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringGreaterThanEquals":"c"})", in));
	// ...Path forms compare with another node of the input
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringLessThanPath":"$.o"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringEqualsPath":"$.o"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.o","StringGreaterThanPath":"$.s"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringLessThanEqualsPath":"$.s"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","StringGreaterThanEqualsPath":"$.s"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringGreaterThanEqualsPath":"$.o"})", in));
	// a type mismatch is false; a missing path is States.Runtime (as in Step Functions)
	EXPECT_FALSE(matches(R"({"Variable":"$.n","StringEquals":"5"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","StringEqualsPath":"$.n"})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","StringEquals":"x"})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.s","StringEqualsPath":"$.nope"})", in));
}

TEST(Choice, NumericComparisons) {
	const char *in = R"({"n":5,"f":5.0,"g":7.5,"s":"5","big":18446744073709551615,"neg":-3})";
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericEquals":5})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.f","NumericEquals":5})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericEquals":6})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericLessThan":5.5})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericLessThan":5})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.g","NumericGreaterThan":7})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.g","NumericGreaterThan":8})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericLessThanEquals":5})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.g","NumericLessThanEquals":7})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericGreaterThanEquals":5})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericGreaterThanEquals":5.01})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.neg","NumericLessThan":0})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.big","NumericGreaterThan":1})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericEqualsPath":"$.f"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericLessThanPath":"$.g"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericGreaterThanPath":"$.g"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.g","NumericGreaterThanPath":"$.n"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","NumericLessThanEqualsPath":"$.f"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.g","NumericGreaterThanEqualsPath":"$.n"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericGreaterThanEqualsPath":"$.g"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","NumericEquals":5})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","NumericEqualsPath":"$.s"})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","NumericLessThan":5})", in));
}

TEST(Choice, BooleanComparisons) {
	const char *in = R"({"t":true,"f":false,"s":"true"})";
	EXPECT_TRUE(matches(R"({"Variable":"$.t","BooleanEquals":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","BooleanEquals":false})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.f","BooleanEquals":false})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","BooleanEquals":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","BooleanEqualsPath":"$.t"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","BooleanEqualsPath":"$.f"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","BooleanEqualsPath":"$.s"})", in));
}

TEST(Choice, TimestampComparisons) {
	const char *in = R"({"t":"2026-11-29T10:00:00Z","same":"2026-11-29T11:00:00+01:00",
	                     "later":"2026-11-29T10:00:00.500Z","bad":"soon","n":1})";
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampEquals":"2026-11-29T10:00:00.000Z"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampEqualsPath":"$.same"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampEqualsPath":"$.later"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampLessThan":"2026-11-29T10:00:01Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampLessThan":"2026-11-29T10:00:00Z"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.later","TimestampGreaterThan":"2026-11-29T10:00:00Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampGreaterThan":"2026-11-29T10:00:00Z"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampLessThanEquals":"2026-11-29T10:00:00Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.later","TimestampLessThanEquals":"2026-11-29T10:00:00Z"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampGreaterThanEquals":"2026-11-29T09:00:00Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampGreaterThanEquals":"2026-11-29T10:00:01Z"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampLessThanPath":"$.later"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.later","TimestampGreaterThanPath":"$.t"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampLessThanEqualsPath":"$.same"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","TimestampGreaterThanEqualsPath":"$.same"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampGreaterThanEqualsPath":"$.later"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.bad","TimestampEquals":"2026-11-29T10:00:00Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","TimestampLessThan":"2026-11-29T10:00:00Z"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.t","TimestampEqualsPath":"$.bad"})", in));
}

TEST(Choice, StringMatches) {
	const char *in = R"({"f":"log-2026.txt","star":"a*b","n":1,"empty":""})";
	EXPECT_TRUE(matches(R"({"Variable":"$.f","StringMatches":"log-*.txt"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.f","StringMatches":"*"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.f","StringMatches":"*.txt"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.f","StringMatches":"log*2026*"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.f","StringMatches":"*.csv"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.f","StringMatches":"log"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.star","StringMatches":"a\\*b"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.f","StringMatches":"log\\*"})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.empty","StringMatches":"*"})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","StringMatches":"*"})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","StringMatches":"*"})", in));
}

TEST(Choice, TypeTests) {
	const char *in = R"({"z":null,"n":1.5,"s":"x","b":false,"t":"2026-01-01T00:00:00Z","o":{}})";
	EXPECT_TRUE(matches(R"({"Variable":"$.z","IsNull":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","IsNull":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","IsNull":false})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.n","IsNumeric":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","IsNumeric":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","IsNumeric":false})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","IsString":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.n","IsString":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.b","IsBoolean":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.z","IsBoolean":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.t","IsTimestamp":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","IsTimestamp":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.s","IsTimestamp":false})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.o","IsPresent":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.z","IsPresent":true})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.nope","IsPresent":true})", in));
	EXPECT_TRUE(matches(R"({"Variable":"$.nope","IsPresent":false})", in));
	EXPECT_FALSE(matches(R"({"Variable":"$.s","IsPresent":false})", in));
	// Every other test of a missing variable fails with States.Runtime.
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","IsNull":true})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","IsNull":false})", in));
	EXPECT_TRUE(runtime_failure(R"({"Variable":"$.nope","IsString":false})", in));
	EXPECT_FALSE(runtime_failure(R"({"Variable":"$.s","IsString":false})", in));
}

TEST(Choice, AndOrNotNest) {
	const char *in = R"({"a":1,"b":"x"})";
	EXPECT_TRUE(matches(R"({"And":[{"Variable":"$.a","NumericEquals":1},
	                               {"Variable":"$.b","StringEquals":"x"}]})", in));
	EXPECT_FALSE(matches(R"({"And":[{"Variable":"$.a","NumericEquals":1},
	                                {"Variable":"$.b","StringEquals":"y"}]})", in));
	EXPECT_TRUE(matches(R"({"Or":[{"Variable":"$.a","NumericEquals":2},
	                              {"Variable":"$.b","StringEquals":"x"}]})", in));
	EXPECT_FALSE(matches(R"({"Or":[{"Variable":"$.a","NumericEquals":2},
	                               {"Variable":"$.nope","IsPresent":true}]})", in));
	EXPECT_TRUE(matches(R"({"Not":{"Variable":"$.a","NumericEquals":2}})", in));
	EXPECT_FALSE(matches(R"({"Not":{"Variable":"$.a","NumericEquals":1}})", in));
	EXPECT_TRUE(runtime_failure(R"({"Not":{"Variable":"$.nope","StringEquals":"x"}})", in));
	// the IsPresent guard: And stops at the first false rule, so the missing
	// variable is never compared
	EXPECT_FALSE(matches(R"({"And":[{"Variable":"$.nope","IsPresent":true},
	                                {"Variable":"$.nope","StringEquals":"x"}]})", in));
	EXPECT_TRUE(matches(R"({"Or":[{"Variable":"$.a","NumericEquals":1},
	                              {"Variable":"$.nope","StringEquals":"x"}]})", in));
	EXPECT_TRUE(matches(R"({"Or":[{"Not":{"And":[{"Variable":"$.a","NumericEquals":1},
	  {"Not":{"Variable":"$.b","StringEquals":"x"}}]}},{"Variable":"$.a","IsNull":true}]})", in));
}

TEST(Choice, ContextVariables) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
	  {"Variable":"$$.Execution.Name","StringEquals":"special","Next":"Yes"}],"Default":"No"},
	  "Yes":{"Type":"Succeed"},"No":{"Type":"Fail","Error":"NotSpecial"}}})");
	auto ctx = J(R"({"Execution":{"Name":"special"}})");
	EXPECT_EQ(outcome(start(def, J("{}"), 0, ctx))["kind"], "succeeded");
	EXPECT_EQ(outcome(start(def, J("{}"), 0, J(R"({"Execution":{"Name":"x"}})")))["kind"], "failed");
}

TEST(Choice, FirstMatchingRuleWins) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
	  {"Variable":"$.n","NumericGreaterThan":10,"Next":"Big"},
	  {"Variable":"$.n","NumericGreaterThan":0,"Next":"Small"}]},
	  "Big":{"Type":"Pass","Result":"big","End":true},"Small":{"Type":"Pass","Result":"small","End":true}}})");
	EXPECT_EQ(outcome(start(def, J(R"({"n":50})")))["output"], "big");
	EXPECT_EQ(outcome(start(def, J(R"({"n":5})")))["output"], "small");
}

TEST(Choice, NoMatchWithoutDefaultFailsTheInstance) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[
	  {"Variable":"$.n","NumericGreaterThan":10,"Next":"Big"}]},"Big":{"Type":"Succeed"}}})");
	auto o = outcome(start(def, J(R"({"n":1})")));
	EXPECT_EQ(o["kind"], "failed");
	EXPECT_EQ(o["error"], "States.NoChoiceMatched");
}

TEST(Choice, InputPathAndOutputPathApply) {
	auto def = J(R"({"StartAt":"C","States":{"C":{"Type":"Choice","InputPath":"$.in","OutputPath":"$.out",
	  "Choices":[{"Variable":"$.go","BooleanEquals":true,"Next":"S"}]},"S":{"Type":"Succeed"}}})");
	EXPECT_EQ(outcome(start(def, J(R"({"in":{"go":true,"out":"o"}})")))["output"], "o");
}
