// limits_test.cpp — every limit of core/limits.def: the exact message and
// SQLSTATE at the limit's edge, and inputs far past it (5,000
// and 20,000 nested intrinsic calls, 100,000 nested arrays) answered with
// an error instead of a crash.

#include <string>

#include "helpers.hpp"
#include "limits.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

// The error compile() throws for `def`: "SQLSTATE message", or "<accepted>".
std::string refusal(const json &def) {
	try {
		asl::compile(def);
	} catch (const Error &e) {
		return e.sqlstate + " " + e.what();
	}
	return "<accepted>";
}

std::string repeat(const std::string &s, size_t n) {
	std::string out;
	for (size_t i = 0; i < n; i++)
		out += s;
	return out;
}

// `n` arrays nested in one another around 1 (parsed: the parser does not
// recurse, so this is how a hostile payload arrives).
json nested_arrays(size_t n) { return json::parse(repeat("[", n) + "1" + repeat("]", n)); }

// A Pass whose Parameters nest `n` States.Array calls (5,000 deep crashed
// a backend before the depth limit).
json nested_intrinsics(size_t n) {
	return json{{"StartAt", "P"},
				{"States",
				 {{"P",
				   {{"Type", "Pass"},
					{"Parameters", {{"a.$", repeat("States.Array(", n) + "1" + repeat(")", n)}}},
					{"End", true}}}}}};
}

json pass_with(const json &fields) {
	json st = {{"Type", "Pass"}, {"End", true}};
	if (fields.is_object())
		st.update(fields);
	return json{{"StartAt", "A"}, {"States", {{"A", st}}}};
}

int always_too_deep() { return 1; }

// `base` with `value` moved in at `key`: a value past the limit must not be
// copied (nlohmann copies recursively), as the stores never copy one.
json with(json base, const char *key, json value) {
	base[key] = std::move(value);
	return base;
}

}  // namespace

TEST(Limits, DepthOfValues) {
	EXPECT_TRUE(limits::within_depth(json(1), 0));
	EXPECT_FALSE(limits::within_depth(json::array(), 0));
	EXPECT_TRUE(limits::within_depth(json::array(), 1));
	EXPECT_TRUE(limits::within_depth(J(R"({"a":[1,{"b":2}]})"), 3));
	EXPECT_FALSE(limits::within_depth(J(R"({"a":[1,{"b":{}}]})"), 3));
	std::string where;
	EXPECT_FALSE(limits::within_depth(J(R"({"x":1,"a b":[0,[[]]]})"), 3, "$", &where));
	EXPECT_EQ(where, "$['a b'][1][0]");
	EXPECT_TRUE(limits::within_depth(nested_arrays(512), limits::JSON_DEPTH));
	EXPECT_FALSE(limits::within_depth(nested_arrays(513), limits::JSON_DEPTH));
}

TEST(Limits, JsonDepthOfAPayloadNamesWhere) {
	try {
		limits::check_json_depth(nested_arrays(100000), "the input");
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "54000");
		EXPECT_STREQ(e.what(), "the input nests deeper than 512 levels of arrays and objects at "
							   "$[0][0][0][0][0][0][0][0]... (limit json_depth)");
	}
}

TEST(Limits, DefinitionJsonDepth) {
	json deep = 1;
	for (int i = 0; i < 600; i++)
		deep = json{{"a", deep}};
	EXPECT_EQ(refusal(pass_with({{"Parameters", deep}})),
			  "54000 invalid definition at $.States.A.Parameters.a.a.a.a.a...: nests deeper than "
			  "512 levels of arrays and objects (limit json_depth)");
	json ok = 1;
	for (int i = 0; i < 509; i++)  // with $, States, A and Parameters: 512 levels
		ok = json{{"a", ok}};
	EXPECT_EQ(refusal(pass_with({{"Parameters", ok}})), "<accepted>");
	EXPECT_EQ(refusal(pass_with({{"Parameters", json{{"a", ok}}}})).substr(0, 5), "54000");
}

TEST(Limits, IntrinsicNesting) {
	EXPECT_EQ(refusal(nested_intrinsics(32)), "<accepted>");
	for (size_t n : {33, 5000, 20000})
		EXPECT_EQ(refusal(nested_intrinsics(n)),
				  "54000 invalid definition at $.States.P.Parameters['a.$']: intrinsic calls nest "
				  "deeper than 32 levels at offset 416 (limit intrinsic_depth)")
			<< n;
	// The 32 levels that compile also run.
	auto out = outcome(start(nested_intrinsics(32), json::object()));
	EXPECT_EQ(out["kind"], "succeeded");
	EXPECT_TRUE(limits::within_depth(out["output"], 33));
	EXPECT_FALSE(limits::within_depth(out["output"], 32));
}

TEST(Limits, PathLength) {
	const std::string ok = "$" + repeat(".a", 1023) + "b";  // 2048 characters
	ASSERT_EQ(ok.size(), 2048u);
	EXPECT_EQ(refusal(pass_with({{"InputPath", ok}})), "<accepted>");
	EXPECT_EQ(refusal(pass_with({{"InputPath", ok + "c"}})),
			  "54000 invalid definition at $.States.A.InputPath: the path has 2049 characters, "
			  "more than 2048 (limit path_length)");
	// A path inside an intrinsic call.
	EXPECT_EQ(refusal(pass_with({{"Parameters", {{"f.$", "States.Format('{}', " + ok + "c)"}}}})),
			  "54000 invalid definition at $.States.A.Parameters['f.$']: the path has 2049 "
			  "characters, more than 2048 (limit path_length)");
}

TEST(Limits, FilterNesting) {
	auto filter = [](size_t bangs) { return "$.a[?(" + repeat("!", bangs) + "@.x)]"; };
	// The filter itself is one level; each ! another.
	EXPECT_EQ(refusal(pass_with({{"InputPath", filter(31)}})), "<accepted>");
	EXPECT_EQ(refusal(pass_with({{"InputPath", filter(32)}})),
			  "54000 invalid definition at $.States.A.InputPath: the filter nests deeper than 32 "
			  "levels at offset 38 (limit filter_depth)");
	EXPECT_EQ(refusal(pass_with({{"InputPath", "$.a[?(" + repeat("(", 40) + "@.x" +
													  repeat(")", 40) + ")]"}}))
				  .substr(0, 5),
			  "54000");
	// A long chain of || is one level, parsed and run without recursion.
	std::string chain = "$.a[?(@.x == 0";
	for (int i = 1; i < 130; i++)
		chain += " || @.x == " + std::to_string(i);
	chain += ")]";
	ASSERT_LE(chain.size(), limits::PATH_LENGTH);
	json def = pass_with({{"InputPath", chain}});
	auto out = outcome(start(def, J(R"({"a":[{"x":129},{"x":130},{"x":3}]})")));
	EXPECT_EQ(out["output"], J(R"([{"x":129},{"x":3}])"));
}

TEST(Limits, StateCount) {
	auto chain = [](int n) {
		json states = json::object();
		for (int i = 0; i < n; i++) {
			json st = {{"Type", "Pass"}};
			if (i + 1 < n)
				st["Next"] = "s" + std::to_string(i + 1);
			else
				st["End"] = true;
			states["s" + std::to_string(i)] = st;
		}
		return json{{"StartAt", "s0"}, {"States", states}};
	};
	EXPECT_EQ(refusal(chain(10000)), "<accepted>");
	EXPECT_EQ(refusal(chain(10001)), "54000 invalid definition at $.States: the definition has "
									 "more than 10000 states (limit state_count)");
}

TEST(Limits, ScopeNesting) {
	// n Parallel states P<n-1> (outermost) ... P0, each the only state of its
	// parent's first branch (state names are unique across a definition).
	auto nest = [](int n) {
		json m = {{"StartAt", "S"}, {"States", {{"S", {{"Type", "Succeed"}}}}}};
		for (int i = 0; i < n; i++) {
			const std::string name = "P" + std::to_string(i);
			m = {{"StartAt", name},
				 {"States", {{name, {{"Type", "Parallel"}, {"Branches", {m}}, {"End", true}}}}}};
		}
		return m;
	};
	EXPECT_EQ(refusal(nest(32)), "<accepted>");
	std::string where = "$";
	for (int k = 32; k >= 1; k--)
		where += ".States.P" + std::to_string(k) + ".Branches[0]";
	EXPECT_EQ(refusal(nest(33)), "54000 invalid definition at " + where +
									 ".States.P0: Parallel and Map states nest deeper than 32 "
									 "levels (limit scope_depth)");
}

TEST(Limits, HostStackCheckStopsTheInterpreter) {
	struct Reset {
		~Reset() { limits::set_stack_check(nullptr); }
	} reset;
	limits::set_stack_check(always_too_deep);
	std::string got = refusal(pass_with({{"Parameters", {{"a", 1}}}}));
	std::string detail;
	try {
		asl::compile(pass_with({}));
	} catch (const Error &e) {
		detail = e.detail;
	}
	limits::set_stack_check(nullptr);
	EXPECT_EQ(got, "54001 stack depth limit exceeded in the ASL interpreter");
	EXPECT_EQ(detail, "The definition or the data nests too deeply for the server's "
					  "max_stack_depth.");
	EXPECT_EQ(refusal(pass_with({{"Parameters", {{"a", 1}}}})), "<accepted>");
}

namespace {
void recurse(size_t n) {
	limits::RecursionGuard guard;
	if (n > 0)
		recurse(n - 1);
}
}  // namespace

TEST(Limits, RecursionDepthIsASafetyNet) {
	EXPECT_NO_THROW(recurse(limits::RECURSION_DEPTH - 1));
	try {
		recurse(limits::RECURSION_DEPTH);
		FAIL() << "no limit";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "54001");
		EXPECT_STREQ(e.what(), "the ASL interpreter recursed deeper than 5000 levels (limit "
							   "recursion_depth)");
	}
	EXPECT_NO_THROW(recurse(10));  // the count went back down
}

TEST(Limits, DeepInputIsRefused) {
	const json def = pass_with({});
	auto d0 = asl::compile(def);
	for (size_t n : {513, 100000}) {
		try {
			asl::step(*d0, with({{"op", "start"}, {"now_ms", 0}}, "input", nested_arrays(n)));
			FAIL() << "accepted " << n;
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "54000");
			EXPECT_STREQ(e.what(), "the input nests deeper than 512 levels of arrays and objects "
								   "at $[0][0][0][0][0][0][0][0]... (limit json_depth)");
		}
	}
	auto d = asl::compile(J(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	try {
		asl::step(*d, with({{"op", "task_succeeded"}, {"now_ms", 0}, {"state", "T"}, {"result", 1}},
						   "state_input", nested_arrays(600)));
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "54000");
		EXPECT_EQ(std::string(e.what()).substr(0, 47), "the state input nests deeper than 512 levels of");
	}
}

TEST(Limits, DeepTaskResultIsRefused) {
	auto d = asl::compile(J(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h",
		"Retry":[{"ErrorEquals":["States.ALL"]}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"S"}],
		"End":true},"S":{"Type":"Succeed"}}})"));
	for (size_t n : {513, 100000}) {
		try {
			asl::step(*d, with({{"op", "task_succeeded"}, {"now_ms", 0}, {"state", "T"},
								{"state_input", json::object()}},
							   "result", nested_arrays(n)));
			FAIL() << "accepted " << n;
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "54000");
			EXPECT_STREQ(e.what(), "the task result nests deeper than 512 levels of arrays and "
								   "objects at $[0][0][0][0][0][0][0][0]... (limit json_depth)");
		}
	}
	auto ok = outcome(asl::step(*d, {{"op", "task_succeeded"}, {"now_ms", 0}, {"state", "T"},
									 {"state_input", json::object()},
									 {"result", nested_arrays(512)}}));
	EXPECT_EQ(ok["kind"], "succeeded");
	// The output built from it may not pass the limit either: ResultPath
	// puts the result one level down.
	auto d2 = asl::compile(J(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h",
		"ResultPath":"$.r","End":true}}})"));
	auto failed = outcome(asl::step(*d2, {{"op", "task_succeeded"}, {"now_ms", 0}, {"state", "T"},
										  {"state_input", json::object()},
										  {"result", nested_arrays(512)}}));
	EXPECT_EQ(failed["kind"], "failed");
	EXPECT_EQ(failed["error"], "States.Runtime");
	EXPECT_EQ(failed["cause"], "in state \"T\", ResultPath nests deeper than 512 levels of "
							   "arrays and objects at $.r[0][0][0][0][0][0][0]... (limit json_depth)");
}

TEST(Limits, DataAStateBuildsIsBounded) {
	// Each round wraps the data in one more object, until the limit.
	const json def = J(R"({"StartAt":"P","States":{
		"P":{"Type":"Pass","Parameters":{"x.$":"$"},"Next":"C"},
		"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"P"}]}}})");
	auto out = outcome(start(def, json::object()));
	EXPECT_EQ(out["kind"], "failed");
	EXPECT_EQ(out["error"], "States.Runtime");
	EXPECT_EQ(out["state"], "P");
	EXPECT_EQ(out["cause"], "in state \"P\", Parameters nests deeper than 512 levels of arrays "
							"and objects at $.x.x.x.x.x.x.x.x... (limit json_depth)");
	// The same through ResultPath.
	const json def2 = J(R"({"StartAt":"P","States":{
		"P":{"Type":"Pass","ResultPath":"$.x.y","Next":"P"}}})");
	auto out2 = outcome(start(def2, json::object()));
	EXPECT_EQ(out2["error"], "States.Runtime");
	EXPECT_EQ(out2["cause"].get<std::string>().substr(0, 50),
			  "in state \"P\", ResultPath nests deeper than 512 lev");
}

TEST(Limits, StringToJsonOfADeepString) {
	const json def = pass_with({{"Parameters", {{"v.$", "States.StringToJson($.s)"}}}});
	auto out = outcome(start(def, {{"s", repeat("[", 100000) + repeat("]", 100000)}}));
	EXPECT_EQ(out["kind"], "failed");
	EXPECT_EQ(out["kind"], "failed");
	EXPECT_EQ(out["error"], "States.IntrinsicFailure");
	EXPECT_EQ(out["cause"], "in state \"A\", Parameters: States.StringToJson: the string nests "
							"deeper than 512 levels of arrays and objects (limit json_depth)");
}

TEST(Limits, CatchLoopRunsOnABoundedStack) {
	// Task -> (its Parameters fail) -> Catch -> the same Task: every round
	// used to nest three more frames; now a step loops, up to
	// states_per_step states.
	const json def = J(R"j({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h",
		"Parameters":{"v.$":"States.StringToJson('x')"},
		"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":null,"Next":"T"}],"End":true}}})j");
	auto answer = start(def, json::object());
	EXPECT_EQ(answer["entered"].size(), limits::STATES_PER_STEP);
	EXPECT_EQ(outcome(answer)["error"], "States.Runtime");
	EXPECT_EQ(outcome(answer)["cause"],
			  "more than 10000 states entered in one step (a loop of states that never stops?)");
}
