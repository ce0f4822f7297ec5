// asl_start_task_test.cpp — start_task(): which definitions start the same
// way whatever the input, and that a start of one answers exactly what
// start_answer composes from it (what genroc.start_many and the step writer,
// engine/steps.cpp, write without a step).

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

std::optional<json> task_of(const std::string &definition) {
	return asl::start_task(*asl::compile(J(definition)));
}

// A JSONPath machine whose first state "A" is `body`, then "B" to end on.
std::string first(const std::string &body) {
	return R"j({"StartAt":"A","States":{"A":)j" + body + R"j(,"B":{"Type":"Succeed"}}})j";
}

// The same in a JSONata machine.
std::string first_jsonata(const std::string &body) {
	return R"j({"QueryLanguage":"JSONata","StartAt":"A","States":{"A":)j" + body +
		   R"j(,"B":{"Type":"Succeed"}}})j";
}

const char *const kInputs[] = {R"j({})j", R"j({"a":1,"b":[true,null,"x"]})j", R"j([1,2,3])j",
							   R"j("text")j", R"j(42)j", R"j(null)j", R"j({"Name":"n","Definition":"d"})j"};

}  // namespace

TEST(StartTask, APlainFirstTaskStartsTheSameWhateverTheInput) {
	const std::string defs[] = {
		first(R"j({"Type":"Task","Resource":"handler:h","Next":"B"})j"),
		first(R"j({"Type":"Task","Resource":"handler:h","TimeoutSeconds":30,"HeartbeatSeconds":5,
		          "OnlyOnce":true,"Retry":[{"ErrorEquals":["x"]},{"ErrorEquals":["States.ALL"]}],
		          "ResultPath":"$.r","OutputPath":"$.r","Next":"B"})j"),
		first(R"j({"Type":"Task","Resource":"activity:a","ResultSelector":{"v.$":"$.v"},"Next":"B"})j"),
		first_jsonata(R"j({"Type":"Task","Resource":"handler:h","TimeoutSeconds":9,
		                  "Output":"{% $states.result %}","Assign":{"x":"{% $states.input %}"},"Next":"B"})j"),
	};
	for (const auto &def : defs) {
		SCOPED_TRACE(def);
		auto compiled = asl::compile(J(def));
		const auto &task = asl::start_task(*compiled);
		ASSERT_TRUE(task.has_value());
		EXPECT_FALSE(asl::start_answer(*asl::compile(J(first(R"j({"Type":"Pass","Next":"B"})j"))), J("{}")));
		for (const char *in : kInputs) {
			SCOPED_TRACE(in);
			json input = J(in);
			json answer = asl::step(*compiled, json{{"op", "start"}, {"input", input}, {"now_ms", 1764842400000}});
			EXPECT_EQ(asl::start_answer(*compiled, input), answer);
		}
	}
}

TEST(StartTask, TheFieldsAreTheFirstTasksOwn) {
	auto task = task_of(first(R"j({"Type":"Task","Resource":"handler:h","TimeoutSeconds":30,
	  "HeartbeatSeconds":5,"OnlyOnce":true,"Retry":[{"ErrorEquals":["x"]},{"ErrorEquals":["States.ALL"]}],"Next":"B"})j"));
	ASSERT_TRUE(task.has_value());
	EXPECT_EQ(*task, J(R"j({"entered":[{"state":"A","type":"Task"}],"state":"A","resource":"handler:h",
	  "timeout_s":30,"heartbeat_s":5,"only_once":true,"retry_counts":[0,0]})j"));
}

TEST(StartTask, AnythingReadFromTheInputOrAnotherFirstStateMeansStepEachStart) {
	// the input shaped on the way in, or a number read from it
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","InputPath":"$.a","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","InputPath":"$","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","InputPath":null,"Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","Parameters":{"a":1},"Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","TimeoutSecondsPath":"$.t","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"handler:h","HeartbeatSecondsPath":"$.h","Next":"B"})j")));
	EXPECT_FALSE(task_of(first_jsonata(R"j({"Type":"Task","Resource":"handler:h","Arguments":{"a":1},"Next":"B"})j")));
	EXPECT_FALSE(task_of(first_jsonata(R"j({"Type":"Task","Resource":"handler:h","TimeoutSeconds":"{% 5 %}","Next":"B"})j")));
	EXPECT_FALSE(task_of(first_jsonata(R"j({"Type":"Task","Resource":"handler:h","HeartbeatSeconds":"{% 5 %}","Next":"B"})j")));
	// tasks the engine runs itself, which read their input
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"genroc:event","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"genroc:call","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Task","Resource":"genroc:call.sync","Next":"B"})j")));
	// a first state that is not a Task
	EXPECT_FALSE(task_of(first(R"j({"Type":"Pass","Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Wait","Seconds":1,"Next":"B"})j")));
	EXPECT_FALSE(task_of(first(R"j({"Type":"Parallel","Branches":[{"StartAt":"P","States":{"P":{"Type":"Task",
	  "Resource":"handler:h","End":true}}}],"Next":"B"})j")));
}

TEST(StartTask, AnInputTooDeepFailsAsTheStepFailsIt) {
	auto compiled = asl::compile(J(first(R"j({"Type":"Task","Resource":"handler:h","Next":"B"})j")));
	json deep = json::array();
	for (int i = 0; i < 600; i++) deep = json::array({deep});
	std::string stepped, composed;
	try {
		asl::step(*compiled, json{{"op", "start"}, {"input", deep}, {"now_ms", 1764842400000}});
	} catch (const Error &e) {
		stepped = std::string(e.sqlstate) + " " + e.what();
	}
	try {
		asl::start_answer(*compiled, deep);
	} catch (const Error &e) {
		composed = std::string(e.sqlstate) + " " + e.what();
	}
	EXPECT_FALSE(stepped.empty());
	EXPECT_EQ(composed, stepped);
}
