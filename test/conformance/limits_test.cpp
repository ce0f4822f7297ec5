// limits_test.cpp — the interpreter's limits (core/limits.def) as both
// stores answer them: a definition or a payload over a limit is refused with
// 54000 and the same message, nothing is stored, and the store goes on.
#include <string>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

std::string repeat(const std::string &s, size_t n) {
	std::string out;
	for (size_t i = 0; i < n; i++)
		out += s;
	return out;
}

json nested_arrays(size_t n) { return json::parse(repeat("[", n) + "1" + repeat("]", n)); }

// Parameters nesting `n` States.Array calls (5,000 deep crashed a backend
// before the depth limit).
json nested_intrinsics(size_t n) {
	return {{"StartAt", "P"},
			{"States",
			 {{"P",
			   {{"Type", "Pass"},
				{"Parameters", {{"a.$", repeat("States.Array(", n) + "1" + repeat(")", n)}}},
				{"End", true}}}}}};
}

const char *kDeepInput = "the input nests deeper than 512 levels of arrays and objects at "
						 "$[0][0][0][0][0][0][0][0]... (limit json_depth)";

}  // namespace

TEST_P(StoreTest, DeeplyNestedIntrinsicCallsAreRefusedAtDefine) {
	for (size_t n : {5000, 20000}) {
		auto r = raised([&] { store().define("deep", nested_intrinsics(n)); });
		EXPECT_EQ(r.sqlstate, "54000") << n;
		EXPECT_EQ(r.message, "invalid definition at $.States.P.Parameters['a.$']: intrinsic calls "
							 "nest deeper than 32 levels at offset 416 (limit intrinsic_depth)");
	}
	EXPECT_EQ(store().list_definitions().size(), 0u);
	// 32 levels are within the limit: defined, started, run.
	define("deep", nested_intrinsics(32));
	int64_t id = start("deep");
	EXPECT_EQ(status(id), "succeeded");
}

TEST_P(StoreTest, ADefinitionNestedTooDeepIsRefused) {
	json deep = 1;
	for (int i = 0; i < 600; i++)
		deep = json{{"a", deep}};
	auto r = raised([&] {
		store().define("deep", {{"StartAt", "P"},
								{"States", {{"P", {{"Type", "Pass"}, {"Result", deep}, {"End", true}}}}}});
	});
	EXPECT_EQ(r.sqlstate, "54000");
	EXPECT_EQ(r.message, "invalid definition at $.States.P.Result.a.a.a.a.a...: nests deeper than "
						 "512 levels of arrays and objects (limit json_depth)");
}

TEST_P(StoreTest, ADeepInputIsRefusedAtStart) {
	define("pass", {{"StartAt", "P"}, {"States", {{"P", {{"Type", "Pass"}, {"End", true}}}}}});
	EXPECT_RAISES("54000", kDeepInput, store().start("pass", nested_arrays(600), json::object()));
	// Also when no step would read it yet (a later run_at).
	EXPECT_RAISES("54000", kDeepInput,
				  store().start("pass", nested_arrays(600), {{"run_at", time_at(60)}}));
	EXPECT_EQ(store().list_instances(json::object()).size(), 0u);
	EXPECT_EQ(status(start("pass", nested_arrays(510))), "succeeded");
}

TEST_P(StoreTest, ADeepTaskResultOrEventPayloadIsRefused) {
	define("task", json::parse(R"({"StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"handler:h","Next":"E"},
	  "E":{"Type":"Task","Resource":"genroc:event","Parameters":{"Name":"go"},"End":true}}})"));
	worker("w1");
	int64_t id = start("task");
	Task t = claim_one("w1");
	auto r = raised([&] { store().complete(id, t.epoch, nested_arrays(600)); });
	EXPECT_EQ(r.sqlstate, "54000");
	EXPECT_EQ(r.message, "the task result nests deeper than 512 levels of arrays and objects at "
						 "$[0][0][0][0][0][0][0][0]... (limit json_depth)");
	// Nothing changed: the lease still holds and a good result goes through.
	EXPECT_EQ(status(id), "running");
	store().complete(id, t.epoch, nested_arrays(500));
	EXPECT_EQ(status(id), "waiting");
	EXPECT_RAISES("54000", "the event payload nests deeper than 512 levels",
				  store().emit(id, "go", nested_arrays(600)));
	EXPECT_RAISES("54000", "the event payload nests deeper than 512 levels",
				  store().emit(id, "other", nested_arrays(600)));
	EXPECT_EQ(store().emit(id, "go", nested_arrays(3)), "delivered");
	EXPECT_EQ(status(id), "succeeded");
}

// A regular expression on a long subject: std::regex recursed once per
// character and overflowed the stack (SIGSEGV in a PostgreSQL backend, the
// cluster restarted; `genroc serve` exited 139).  The pattern that
// crashed ends with its match; the same patterns on the input too, up to
// jsonata_regex_subject bytes; past it, a failed instance (L0001).
TEST_P(StoreTest, ARegexOnALongSubjectEndsTheInstance) {
	define("rx", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% $match($pad(\"\", 9999, \"ab\"), /(a|b|c|d)*$/) %}","End":true}}})"));
	const int64_t id = start("rx");
	ASSERT_EQ(status(id), "succeeded");
	json out = instance(id).at("output");
	EXPECT_EQ(out.at("index"), 0);
	EXPECT_EQ(out.at("match").get<std::string>().size(), 9999u);
	int n = 0;
	for (const char *re : {"/(a|b|c|d)*$/", "/((a|b))*$/", "/((a)|(b))*$/"}) {
		const std::string name = "rx" + std::to_string(++n);
		define(name, json{{"QueryLanguage", "JSONata"},
						  {"StartAt", "P"},
						  {"States",
						   {{"P",
							 {{"Type", "Pass"},
							  {"Output", std::string("{% $length($match($states.input.s, ") + re + ").match) %}"},
							  {"End", true}}}}}});
		const int64_t fits = start(name, {{"s", repeat("ab", 5000)}});
		EXPECT_EQ(status(fits), "succeeded") << re;
		EXPECT_EQ(instance(fits).at("output"), 10000) << re;
		const int64_t over = start(name, {{"s", repeat("ab", 5120)}});  // 10 KB
		EXPECT_EQ(status(over), "failed") << re;
		EXPECT_EQ(instance(over).at("error"), "States.QueryEvaluationError") << re;
		const std::string cause = instance(over).at("cause");
		EXPECT_NE(cause.find("(limit jsonata_regex_subject)"), std::string::npos) << cause;
	}
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// The step's budget (step_bytes) on both stores: 10,000 arrays of 10,000
// items in one expression (3 GB before it), each array under
// jsonata_sequence, fails the instance with L0001; the store goes on.
TEST_P(StoreTest, TheMapBombIsRefusedByTheStepsBytes) {
	define("bomb", {{"QueryLanguage", "JSONata"},
					{"StartAt", "A"},
					{"States",
					 {{"A",
					   {{"Type", "Pass"},
						{"Output", "{% $map([1..10000], function($i){[1..10000]}) %}"},
						{"End", true}}}}}});
	int64_t id = start("bomb");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "States.QueryEvaluationError");
	EXPECT_NE(instance(id).at("cause").get<std::string>().find("(limit step_bytes)"),
			  std::string::npos)
		<< instance(id).dump();
	define("fine", {{"QueryLanguage", "JSONata"},
					{"StartAt", "A"},
					{"States", {{"A", {{"Type", "Pass"}, {"Output", "{% $count([1..1000000]) %}"}, {"End", true}}}}}});
	int64_t ok = start("fine");
	EXPECT_EQ(status(ok), "succeeded");
}

}  // namespace genroc::conformance
