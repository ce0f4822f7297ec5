// budget_test.cpp — the step's budget of work and bytes (step_work,
// step_bytes), the host's interrupt check, and the functions over large
// collections that were quadratic: States.ArrayUnique, $distinct,
// States.StringSplit with many delimiters, $spread, grouping.

#include <string>

#include "asl_c.h"
#include "helpers.hpp"
#include "jsonata.hpp"
#include "limits.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

json jsonata_pass(const std::string &output) {
	return json{{"QueryLanguage", "JSONata"},
				{"StartAt", "A"},
				{"States", {{"A", {{"Type", "Pass"}, {"Output", output}, {"End", true}}}}}};
}

json jsonpath_pass(const json &parameters) {
	return json{{"StartAt", "A"},
				{"States", {{"A", {{"Type", "Pass"}, {"Parameters", parameters}, {"End", true}}}}}};
}

// The interrupt check of the tests: pending after `g_after` questions.
int g_asked = 0;
int g_after = 0;
int pending_after_k() { return ++g_asked > g_after ? 1 : 0; }

struct InterruptReset {
	InterruptReset(int after) {
		g_asked = 0;
		g_after = after;
		limits::set_interrupt_check(pending_after_k);
	}
	~InterruptReset() { limits::set_interrupt_check(nullptr); }
};

// An array of n items: i % mod, as integers.
json numbers(size_t n, size_t mod) {
	json a = json::array();
	for (size_t i = 0; i < n; i++)
		a.push_back(i % mod);
	return a;
}

}  // namespace

// A memory bomb: 10,000 arrays of 10,000 items (3 GB) in one expression,
// each array under jsonata_sequence.  The step's bytes end it: L0001 in the
// instance, States.QueryEvaluationError for Retry and Catch.
TEST(StepBudget, MapOfRangesIsRefusedByTheBytes) {
	auto a = start(jsonata_pass("{% $map([1..10000], function($i){[1..10000]}) %}"), json::object());
	ASSERT_EQ(outcome(a)["kind"], "failed") << a.dump().substr(0, 400);
	EXPECT_EQ(outcome(a)["error"], "States.QueryEvaluationError");
	const std::string cause = outcome(a)["cause"].get<std::string>();
	EXPECT_NE(cause.find("(limit step_bytes)"), std::string::npos) << cause;
	EXPECT_NE(cause.find("(L0001)"), std::string::npos) << cause;
}

// One budget for the whole step, not one per expression: each expression
// of the Output builds 200 MB (under the limit alone), five of them pass it.
TEST(StepBudget, IsOneBudgetForTheWholeStep) {
	const std::string one = "$count($map([1..1000], function($i){[1..2500]}))";
	auto alone = start(jsonata_pass("{% " + one + " %}"), json::object());
	ASSERT_EQ(outcome(alone)["kind"], "succeeded") << alone.dump().substr(0, 400);
	json out = json::object();
	for (const char *k : {"a", "b", "c", "d", "e", "f", "g"})
		out[k] = "{% " + one + " %}";
	json def = {{"QueryLanguage", "JSONata"},
				{"StartAt", "A"},
				{"States", {{"A", {{"Type", "Pass"}, {"Output", out}, {"End", true}}}}}};
	auto all = start(def, json::object());
	ASSERT_EQ(outcome(all)["kind"], "failed") << all.dump().substr(0, 400);
	EXPECT_NE(outcome(all)["cause"].get<std::string>().find("(limit step_bytes)"),
			  std::string::npos);
	// The next step starts afresh.
	auto again = start(jsonata_pass("{% " + one + " %}"), json::object());
	EXPECT_EQ(outcome(again)["kind"], "succeeded");
}

// Work: 21 expressions of 5,000,000 evaluation steps each, every one under
// jsonata_steps, pass step_work together.
TEST(StepBudget, WorkOfTheWholeStepIsBounded) {
	const std::string busy = "$count([1..1000000].($ + 1))";
	json out = json::object();
	for (int i = 0; i < 40; i++)
		out["k" + std::to_string(i)] = "{% " + busy + " %}";
	json def = {{"QueryLanguage", "JSONata"},
				{"StartAt", "A"},
				{"States", {{"A", {{"Type", "Pass"}, {"Output", out}, {"End", true}}}}}};
	auto a = start(def, json::object());
	ASSERT_EQ(outcome(a)["kind"], "failed") << a.dump().substr(0, 400);
	const std::string cause = outcome(a)["cause"].get<std::string>();
	EXPECT_TRUE(cause.find("(limit step_work)") != std::string::npos ||
				cause.find("(limit step_bytes)") != std::string::npos)
		<< cause;
}

// An intrinsic over the budget is States.IntrinsicFailure.
TEST(StepBudget, IntrinsicOverTheBudgetIsAnIntrinsicFailure) {
	json big = json::array();
	for (int i = 0; i < 200000; i++)
		big.push_back(i);
	// Each ArrayPartition copies the 200,000 items; 100 of them in one step.
	json params = json::object();
	for (int i = 0; i < 100; i++)
		params["p" + std::to_string(i) + ".$"] = "States.ArrayPartition($.a, 7)";
	auto a = start(jsonpath_pass(params), json{{"a", big}});
	ASSERT_EQ(outcome(a)["kind"], "failed") << a.dump().substr(0, 400);
	EXPECT_EQ(outcome(a)["error"], "States.IntrinsicFailure");
	EXPECT_NE(outcome(a)["cause"].get<std::string>().find("(limit step_"), std::string::npos);
}

// The host's interrupt: the step stops with 57014, as an error of the call
// (never the instance's), from JSONata, an intrinsic or a path.
TEST(Interrupt, StopsAJsonataLoopWith57014) {
	InterruptReset reset(3);
	try {
		start(jsonata_pass("{% $sum([1..1000000].($ * 2)) %}"), json::object());
		FAIL() << "the step did not stop";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "57014") << e.what();
	}
	EXPECT_GT(g_asked, 3);
}

TEST(Interrupt, StopsAnIntrinsicAndAPath) {
	json big = numbers(300000, 300000);
	{
		InterruptReset reset(2);
		try {
			start(jsonpath_pass({{"u.$", "States.ArrayUnique($.a)"}}), json{{"a", big}});
			FAIL() << "the step did not stop";
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "57014") << e.what();
		}
	}
	{
		InterruptReset reset(2);
		try {
			start(jsonpath_pass({{"u.$", "$.a[?(@ > 5)]"}}), json{{"a", big}});
			FAIL() << "the step did not stop";
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "57014") << e.what();
		}
	}
}

// Through the C ABI: a distinct result (GENROC_ASL_INTERRUPTED), never an
// answer that fails the instance.
TEST(Interrupt, TheCAbiAnswersInterrupted) {
	genroc_asl_set_interrupt_check(pending_after_k);
	g_asked = 0;
	g_after = 5;
	const std::string def = jsonata_pass("{% $count($map([1..1000000], function($v){$v})) %}").dump();
	GenrocAslResult r = genroc_asl_step(nullptr, def.c_str(),
										R"({"op":"start","now_ms":1000000,"input":{}})");
	genroc_asl_set_interrupt_check(nullptr);
	EXPECT_EQ(r.ok, 0);
	EXPECT_STREQ(r.sqlstate, GENROC_ASL_INTERRUPTED);
	genroc_asl_free(&r);
	// Unset, the same step runs to its end.
	r = genroc_asl_step(nullptr, def.c_str(), R"({"op":"start","now_ms":1000000,"input":{}})");
	EXPECT_EQ(r.ok, 1) << (r.message ? r.message : "");
	genroc_asl_free(&r);
}

// Never pending: asked, and the step completes.
TEST(Interrupt, AQuietHostIsAskedAndTheStepCompletes) {
	InterruptReset reset(1 << 30);
	auto a = start(jsonata_pass("{% $sum([1..1000000]) %}"), json::object());
	EXPECT_EQ(outcome(a)["output"], 500000500000);
	EXPECT_GT(g_asked, 100);  // polled along the way
}

// 1,000,000 items (pairwise compares took 11 and 30+ minutes): hashing,
// same answers.
TEST(Quadratic, ArrayUniqueOfAMillionItems) {
	json big = numbers(1000000, 1000000);
	auto a = start(jsonpath_pass({{"u.$", "States.ArrayUnique($.a)"}}), json{{"a", big}});
	ASSERT_EQ(outcome(a)["kind"], "succeeded") << a.dump().substr(0, 300);
	EXPECT_EQ(outcome(a)["output"]["u"], big);
	json dup = numbers(1000000, 1000);
	auto b = start(jsonpath_pass({{"u.$", "States.ArrayUnique($.a)"}}), json{{"a", dup}});
	EXPECT_EQ(outcome(b)["output"]["u"], numbers(1000, 1000));
}

TEST(Quadratic, ArrayUniqueKeepsJsonEquality) {
	// 1 and 1.0 are ==, the first kept; objects by keys; order of first
	// occurrence; a huge unsigned equals the negative of the same bits.
	auto a = start(jsonpath_pass({{"u.$", "States.ArrayUnique($.a)"}}),
				   J(R"({"a":[1,1.0,"1",[1],[1.0],{"x":1,"y":2},{"y":2,"x":1.0},null,false,0,-0.0,
						 true,null,[],{}]})"));
	EXPECT_EQ(outcome(a)["output"]["u"], J(R"([1,"1",[1],{"x":1,"y":2},null,false,0,true,[],{}])"));
	auto b = start(jsonpath_pass({{"u.$", "States.ArrayUnique($.a)"}}),
				   J(R"({"a":[-1,18446744073709551615,2,2]})"));
	EXPECT_EQ(outcome(b)["output"]["u"], J(R"([-1,2])"));
}

TEST(Quadratic, DistinctOfAMillionItems) {
	json big = numbers(1000000, 1000000);
	auto a = start(jsonata_pass("{% $count($distinct($states.input.a)) %}"), json{{"a", big}});
	EXPECT_EQ(outcome(a)["output"], 1000000) << a.dump().substr(0, 300);
	auto b = start(jsonata_pass("{% $distinct($states.input.a) %}"),
				   json{{"a", numbers(1000000, 997)}});
	EXPECT_EQ(outcome(b)["output"], numbers(997, 997));
}

TEST(Quadratic, DistinctKeepsDeepEquality) {
	auto a = start(jsonata_pass(R"({% $distinct([1, "1", {"a":1,"b":[2]}, {"b":[2],"a":1}, [1,2],
	                                [1,2], [2,1], 1, null, null, 0, -0]) %})"),
				   json::object());
	EXPECT_EQ(outcome(a)["output"], J(R"([1,"1",{"a":1,"b":[2]},[1,2],[2,1],null,0])"));
}

TEST(Quadratic, StringSplitWithManyDelimiters) {
	std::string s(300000, 'a'), delims;
	for (size_t i = 0; i < s.size(); i += 3)
		s[i] = ',';
	for (int i = 0; i < 100000; i++)
		delims += static_cast<char>('b' + i % 20);
	delims += ",";
	auto a = start(jsonpath_pass({{"n.$", "States.ArrayLength(States.StringSplit($.s, $.d))"}}),
				   json{{"s", s}, {"d", delims}});
	EXPECT_EQ(outcome(a)["output"]["n"], 100000) << a.dump().substr(0, 300);
}

TEST(Quadratic, SpreadAndGroupOfManyItems) {
	auto a = start(jsonata_pass("{% $count($spread([1..200000].{'k': $})) %}"), json::object());
	EXPECT_EQ(outcome(a)["output"], 200000) << a.dump().substr(0, 300);
	auto b = start(jsonata_pass("{% $count($lookup([1..200000]{'all': $}, 'all')) %}"), json::object());
	EXPECT_EQ(outcome(b)["output"], 200000) << b.dump().substr(0, 300);
	// Grouping keeps append's answer: a group of one item is the item.
	auto c = start(jsonata_pass(R"({% [{"k":"a","v":1},{"k":"b","v":[2,3]},{"k":"a","v":[4]}]{k: v} %})"),
				   json::object());
	EXPECT_EQ(outcome(c)["output"], J(R"({"a":[1,4],"b":[2,3]})"));
}
