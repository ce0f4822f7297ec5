// asl_success_ends_test.cpp — success_ends(): at which Tasks a success ends
// the instance with the result as its output, and that step answers such a
// success exactly as genroc._step_succeeded writes it without a step
// (extension/genroc.c success_answer): no state entered, the result as
// the output, whatever the state input, the retry counts, the context and
// the variables.

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

// A JSONPath machine: "A" is `body`, and "B" a Task after a Pass, so that
// a machine's End Task need not be its first state.
std::string with(const std::string &body) {
	return R"j({"StartAt":"P","States":{"P":{"Type":"Pass","Next":"A"},"A":)j" + body + "}}";
}

std::string with_jsonata(const std::string &body) {
	return R"j({"QueryLanguage":"JSONata","StartAt":"A","States":{"A":)j" + body + "}}";
}

bool ends(const std::string &definition, const std::string &state = "A") {
	return asl::success_ends(*asl::compile(J(definition)), state);
}

const char *const kResults[] = {R"j({})j", R"j({"a":1,"b":[true,null,"x"]})j", R"j([1,2,3])j",
								R"j("text")j", R"j(42)j", R"j(null)j",
								R"j({"genroc:object":"not a reference here"})j"};

}  // namespace

TEST(SuccessEnds, APlainEndTaskAnswersTheResultAsTheOutput) {
	// each definition with the retry counts its "A" takes
	const std::pair<std::string, json> defs[] = {
		{with(R"j({"Type":"Task","Resource":"handler:h","End":true})j"), J("[]")},
		{with(R"j({"Type":"Task","Resource":"handler:h","ResultPath":"$","OutputPath":"$",
		           "InputPath":"$.in","Parameters":{"x.$":"$"},"TimeoutSeconds":5,
		           "Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":3}],
		           "Catch":[{"ErrorEquals":["States.ALL"],"Next":"P"}],"End":true})j"),
		 J("[2]")},
		{with_jsonata(R"j({"Type":"Task","Resource":"handler:h","Arguments":{"a":"{% $states.input %}"},
		                   "End":true})j"),
		 J("[]")},
	};
	const json requests[] = {
		json{{"state_input", J(R"j({"in":{"deep":[1]}})j")}},
		json{{"state_input", nullptr}, {"variables", J(R"j({"v":1})j")},
			 {"context", J(R"j({"Execution":{"Id":"7"}})j")}},
	};
	for (const auto &[def, counts] : defs) {
		SCOPED_TRACE(def);
		auto compiled = asl::compile(J(def));
		ASSERT_TRUE(asl::success_ends(*compiled, "A"));
		for (const char *r : kResults)
			for (json req : requests) {
				SCOPED_TRACE(r);
				json result = J(r);
				req["op"] = "task_succeeded";
				req["state"] = "A";
				req["result"] = result;
				req["retry_counts"] = counts;
				req["now_ms"] = 1764842400000;
				json expected = {{"entered", json::array()},
								 {"outcome", {{"kind", "succeeded"}, {"output", result}}}};
				EXPECT_EQ(asl::step(*compiled, req), expected);
			}
	}
}

TEST(SuccessEnds, AnythingThatShapesTheOutputOrGoesOnMeansStepIt) {
	// goes on, or is no Task
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","Next":"P"})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Pass","End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","End":true})j"), "P"));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","End":true})j"), "nowhere"));
	// the result shaped, placed, filtered or assigned
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","ResultSelector":{"a.$":"$"},"End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","ResultPath":"$.r","End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","ResultPath":null,"End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","OutputPath":"$.a","End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","OutputPath":null,"End":true})j")));
	EXPECT_FALSE(ends(with(R"j({"Type":"Task","Resource":"handler:h","Assign":{"x.$":"$"},"End":true})j")));
	EXPECT_FALSE(ends(with_jsonata(R"j({"Type":"Task","Resource":"handler:h","Output":"{% $states.result %}","End":true})j")));
	EXPECT_FALSE(ends(with_jsonata(R"j({"Type":"Task","Resource":"handler:h","Assign":{"x":1},"End":true})j")));
	// a Task in a branch or an item processor ends that, not the instance
	EXPECT_FALSE(ends(R"j({"StartAt":"M","States":{"M":{"Type":"Map","End":true,
	  "ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:h","End":true}}}}}})j"));
}
