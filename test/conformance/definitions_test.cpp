// definitions_test.cpp — define, versions, validation errors (RC001 with the
// JSON path of the fault), RC002.
#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json pass_def(const json &result) {
	return {{"StartAt", "A"}, {"States", {{"A", {{"Type", "Pass"}, {"Result", result}, {"End", true}}}}}};
}
}  // namespace

TEST_P(StoreTest, DefineStoresAVersionOnlyWhenTheContentChanges) {
	auto r1 = store().define("greet", pass_def("one"));
	EXPECT_EQ(r1.name, "greet");
	EXPECT_EQ(r1.version, 1);
	EXPECT_TRUE(r1.is_new);

	// The same content written with its keys in another order is the same.
	json reordered = json::parse(R"({"States":{"A":{"End":true,"Result":"one","Type":"Pass"}},"StartAt":"A"})");
	auto again = store().define("greet", reordered);
	EXPECT_EQ(again.version, 1);
	EXPECT_FALSE(again.is_new);

	auto r2 = store().define("greet", pass_def("two"));
	EXPECT_EQ(r2.version, 2);
	EXPECT_TRUE(r2.is_new);

	// Old content again: the version that has it, nothing new.
	auto back = store().define("greet", pass_def("one"));
	EXPECT_EQ(back.version, 1);
	EXPECT_FALSE(back.is_new);

	// Another name numbers its own versions.
	EXPECT_EQ(define("other", pass_def("one")), 1);

	json defs = store().list_definitions();
	ASSERT_EQ(defs.size(), 2u);
	EXPECT_EQ(defs[0].at("name"), "greet");
	EXPECT_EQ(defs[0].at("version"), 2);
	EXPECT_EQ(defs[1].at("name"), "other");
	EXPECT_EQ(defs[1].at("version"), 1);
	EXPECT_EQ(defs[0].at("created_at"), time_at(0));
}

// get_definition: the stored text of a version (the newest without one), as
// the console draws it.
TEST_P(StoreTest, GetDefinitionReturnsEachVersion) {
	define("g", pass_def("one"));
	at(5);
	define("g", pass_def("two"));
	json newest = store().get_definition("g", std::nullopt);
	EXPECT_EQ(newest.at("name"), "g");
	EXPECT_EQ(newest.at("version"), 2);
	EXPECT_EQ(newest.at("definition"), pass_def("two"));
	EXPECT_EQ(newest.at("created_at"), time_at(5));
	json first = store().get_definition("g", 1);
	EXPECT_EQ(first.at("version"), 1);
	EXPECT_EQ(first.at("definition"), pass_def("one"));
	EXPECT_EQ(first.at("created_at"), time_at(0));
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "version 3", store().get_definition("g", 3));
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "nope", store().get_definition("nope", std::nullopt));
}

TEST_P(StoreTest, InstancesKeepTheVersionTheyStartedWith) {
	define("v", pass_def("first"));
	int64_t old_one = start("v");
	define("v", pass_def("second"));
	int64_t new_one = start("v");
	int64_t pinned = start("v", json::object(), {{"version", 1}});

	EXPECT_EQ(instance(old_one).at("version"), 1);
	EXPECT_EQ(instance(old_one).at("output"), "first");
	EXPECT_EQ(instance(new_one).at("version"), 2);
	EXPECT_EQ(instance(new_one).at("output"), "second");
	EXPECT_EQ(instance(pinned).at("version"), 1);
	EXPECT_EQ(instance(pinned).at("output"), "first");
}

TEST_P(StoreTest, UnknownDefinitionOrVersionIsRC002) {
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "nope", store().start("nope", json::object(), json::object()));
	define("v", pass_def(1));
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "version 7", store().start("v", json::object(), {{"version", 7}}));
}

// Each refused definition: RC001, the message names the JSON path of the
// fault, and nothing is stored.
TEST_P(StoreTest, ValidationErrorsNameThePathOfTheFault) {
	struct Case {
		const char *why;
		const char *definition;
		const char *path;
	};
	const Case cases[] = {
		{"missing StartAt", R"({"States":{"A":{"Type":"Pass","End":true}}})", "$.StartAt"},
		{"StartAt names no state", R"({"StartAt":"X","States":{"A":{"Type":"Pass","End":true}}})", "$.StartAt"},
		{"unknown Next", R"({"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nope"}}})", "$.States.A.Next"},
		{"unreachable state",
		 R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true},"B":{"Type":"Pass","End":true}}})", "$.States.B"},
		{"neither Next nor End", R"({"StartAt":"A","States":{"A":{"Type":"Pass"}}})", "$.States.A"},
		{"unknown field", R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Bogus":1}}})",
		 "$.States.A.Bogus"},
		{"invalid path", R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"InputPath":"no path"}}})",
		 "$.States.A.InputPath"},
		{"Retry on a Pass state",
		 R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Retry":[{"ErrorEquals":["States.ALL"]}]}}})",
		 "$.States.A.Retry"},
		{"unknown Choice operator",
		 R"({"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","StringIsAbout":"a","Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}})",
		 "$.States.C.Choices[0].StringIsAbout"},
		{"unknown state type", R"({"StartAt":"A","States":{"A":{"Type":"Dance","End":true}}})", "$.States.A.Type"},
		{"unknown resource",
		 R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"ftp:x","End":true}}})", "$.States.A.Resource"},
		{"Catch without Next",
		 R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:h","End":true,"Catch":[{"ErrorEquals":["States.ALL"]}]}}})",
		 "$.States.A.Catch[0].Next"},
		{"a state name used again in a branch",
		 R"({"StartAt":"A","States":{"A":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}]}}})",
		 "$.States.A.Branches[0].States.A"},
	};
	for (const auto &c : cases) {
		SCOPED_TRACE(c.why);
		EXPECT_RAISES(sqlstate::INVALID_DEFINITION, c.path, store().define("bad", json::parse(c.definition)));
	}
	EXPECT_TRUE(store().list_definitions().empty());
	EXPECT_RAISES(sqlstate::DEFINITION_NOT_FOUND, "", store().start("bad", json::object(), json::object()));
}

// A definition keeps the text it was written as (get_definition's source),
// beside the canonical content that versions it: the first text of a
// content stays; a define of the object alone keeps none (null).
TEST_P(StoreTest, DefinitionKeepsTheTextAsWritten) {
	const std::string written = "{\n  \"StartAt\": \"A\",\n  \"States\": {\"A\": {\"Type\": \"Pass\", "
								"\"Result\": 1.50, \"End\": true}}  // not JSON\n}";
	// the text must be JSON: a comment is refused
	EXPECT_RAISES("22P02", "", store().define("src", pass_def(1.5), written));
	const std::string text = "{\n  \"States\": {\"A\": {\"Type\": \"Pass\", \"Result\": 2, \"End\": true}},\n"
							 "  \"StartAt\": \"A\"\n}\n";
	auto r = store().define("src", json::parse(text), text);
	EXPECT_TRUE(r.is_new);
	json got = store().get_definition("src", std::nullopt);
	EXPECT_EQ(got.at("source"), text);
	EXPECT_EQ(got.at("definition"), json::parse(text));
	// the same content written another way: the same version, its first text
	auto again = store().define("src", json::parse(text), std::string(json::parse(text).dump()));
	EXPECT_FALSE(again.is_new);
	EXPECT_EQ(again.version, r.version);
	EXPECT_EQ(store().get_definition("src", 1).at("source"), text);
	// defined as an object only: no text to keep
	define("plain", pass_def("x"));
	EXPECT_EQ(store().get_definition("plain", std::nullopt).at("source"), nullptr);
}

}  // namespace genroc::conformance
