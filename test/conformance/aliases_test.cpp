// aliases_test.cpp — aliases (set, read, list, drop, every refusal naming
// its field), starts by an alias drawn by its weights, deleted definitions
// and versions, and a cancel with an error and a cause.
#include <cmath>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {
json pass_def(const json &result) {
	return {{"StartAt", "A"}, {"States", {{"A", {{"Type", "Pass"}, {"Result", result}, {"End", true}}}}}};
}
json task_def() {
	return json::parse(
		R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})");
}
json route(int version, int weight) { return {{"version", version}, {"weight", weight}}; }
}  // namespace

TEST_P(StoreTest, AliasIsSetReadListedReplacedAndDropped) {
	define("m", pass_def("one"));
	at(1);
	define("m", pass_def("two"));
	at(2);
	json a = store().alias_set("m", "prod", json::array({route(1, 90), route(2, 10)}), "ninety ten");
	EXPECT_EQ(a.at("name"), "m");
	EXPECT_EQ(a.at("alias"), "prod");
	EXPECT_EQ(a.at("routing"), json::array({route(1, 90), route(2, 10)}));
	EXPECT_EQ(a.at("description"), "ninety ten");
	EXPECT_EQ(a.at("created_at"), time_at(2));
	EXPECT_EQ(a.at("updated_at"), time_at(2));
	EXPECT_EQ(store().get_alias("m", "prod"), a);

	at(3);
	json b = store().alias_set("m", "prod", json::array({route(2, 100)}), std::nullopt);
	EXPECT_EQ(b.at("routing"), json::array({route(2, 100)}));
	EXPECT_TRUE(b.at("description").is_null());
	EXPECT_EQ(b.at("created_at"), time_at(2));
	EXPECT_EQ(b.at("updated_at"), time_at(3));

	store().alias_set("m", "beta", json::array({route(1, 100)}), std::nullopt);
	json list = store().list_aliases("m");
	ASSERT_EQ(list.size(), 2u);
	EXPECT_EQ(list[0].at("alias"), "beta");
	EXPECT_EQ(list[1].at("alias"), "prod");

	store().alias_drop("m", "beta");
	EXPECT_EQ(store().list_aliases("m").size(), 1u);
	EXPECT_RAISES("RC016", "alias \"beta\" of definition \"m\" not found", store().get_alias("m", "beta"));
	EXPECT_RAISES("RC016", "not found", store().alias_drop("m", "beta"));
}

TEST_P(StoreTest, AliasRefusalsNameTheField) {
	define("m", pass_def("one"));
	define("m", pass_def("two"));
	const json ok = json::array({route(1, 100)});
	EXPECT_RAISES("22023", "p_alias", store().alias_set("m", "", ok, std::nullopt));
	EXPECT_RAISES("22023", "p_alias", store().alias_set("m", "12", ok, std::nullopt));
	EXPECT_RAISES("22023", "p_alias", store().alias_set("m", "a b", ok, std::nullopt));
	EXPECT_RAISES("22023", "p_alias", store().alias_set("m", std::string(81, 'a'), ok, std::nullopt));
	EXPECT_RAISES("22023", "p_routing must be an array", store().alias_set("m", "a", json::array(), std::nullopt));
	EXPECT_RAISES("22023", "p_routing must be an array",
				  store().alias_set("m", "a", json::array({route(1, 50), route(2, 25), route(3, 25)}), std::nullopt));
	EXPECT_RAISES("22023", "p_routing[1].weight",
				  store().alias_set("m", "a", json::array({route(1, 50), route(2, 101)}), std::nullopt));
	EXPECT_RAISES("22023", "p_routing[0].version",
				  store().alias_set("m", "a", json::array({{{"version", "1"}, {"weight", 100}}}), std::nullopt));
	EXPECT_RAISES("22023", "must sum to 100, not 90",
				  store().alias_set("m", "a", json::array({route(1, 50), route(2, 40)}), std::nullopt));
	EXPECT_RAISES("22023", "names version 1 twice",
				  store().alias_set("m", "a", json::array({route(1, 50), route(1, 50)}), std::nullopt));
	EXPECT_RAISES("RC002", "definition \"m\" version 3 not found",
				  store().alias_set("m", "a", json::array({route(3, 100)}), std::nullopt));
	EXPECT_RAISES("RC002", "definition \"nope\" not found", store().alias_set("nope", "a", ok, std::nullopt));
	EXPECT_RAISES("22023", "p_description must be at most 256 characters",
				  store().alias_set("m", "a", ok, std::string(257, 'd')));
	EXPECT_EQ(store().list_aliases("m").size(), 0u);
	EXPECT_RAISES("22023", "options \"alias\" and \"version\"", start("m", json::object(), {{"alias", "a"}, {"version", 1}}));
	EXPECT_RAISES("RC016", "alias \"a\" of definition \"m\" not found", start("m", json::object(), {{"alias", "a"}}));
}

// A 100/0 alias always starts its first version; the start keeps the alias
// as a label, so lists find the instances started through it.
TEST_P(StoreTest, StartByAliasAtHundredRunsThatVersion) {
	define("m", pass_def("one"));
	define("m", pass_def("two"));
	store().alias_set("m", "old", json::array({route(1, 100), route(2, 0)}), std::nullopt);
	for (int k = 0; k < 20; k++) {
		json inst = instance(start("m", json::object(), {{"alias", "old"}}));
		EXPECT_EQ(inst.at("version"), 1);
		EXPECT_EQ(inst.at("output"), "one");
		EXPECT_EQ(inst.at("labels").at("genroc:alias"), "old");
	}
	start("m");	// the newest, not through the alias
	EXPECT_EQ(store().list_instances({{"label", {{"genroc:alias", "old"}}}, {"limit", 100}}).size(), 20u);
	EXPECT_EQ(store().list_instances({{"definition", "m"}, {"limit", 100}}).size(), 21u);
}

// 90/10 over 1,000 starts: the count of the first version within five
// standard deviations of 900 (sd = sqrt(1000 * 0.9 * 0.1) = 9.5): 853..947.
// A draw that ignored the weights (500, or 1000 / 0) fails it.
TEST_P(StoreTest, StartByAliasDrawsByTheWeights) {
	define("m", pass_def("one"));
	define("m", pass_def("two"));
	store().alias_set("m", "split", json::array({route(1, 90), route(2, 10)}), std::nullopt);
	int first = 0;
	for (int k = 0; k < 1000; k++) {
		StartResult r = store().start("m", json::object(), {{"alias", "split"}});
		first += instance(r.instance_id).at("version") == 1;
	}
	const double sd = std::sqrt(1000 * 0.9 * 0.1);
	EXPECT_LE(std::abs(first - 900), 5 * sd) << first << " of 1000 ran version 1";
}

// A deleted definition refuses starts and leaves the list, while an
// instance it started goes on to its end; its versions stay readable, its
// aliases go; a define makes the name live again, numbering on.
TEST_P(StoreTest, DeletedDefinitionRefusesStartsWhileARunningInstanceFinishes) {
	define("m", task_def());
	define("other", pass_def("x"));
	store().alias_set("m", "prod", json::array({route(1, 100)}), std::nullopt);
	const int64_t running = start("m");
	worker("w1");
	Task t = claim_one("w1");
	at(5);
	store().undefine("m", std::nullopt);
	EXPECT_RAISES("RC017", "definition \"m\" was deleted", start("m"));
	EXPECT_RAISES("RC017", "was deleted", start("m", json::object(), {{"version", 1}}));
	EXPECT_RAISES("RC017", "was deleted", store().start_many("m", json::array({json::object()}), json::object()));
	json defs = store().list_definitions();
	ASSERT_EQ(defs.size(), 1u);
	EXPECT_EQ(defs[0].at("name"), "other");
	EXPECT_EQ(store().get_definition("m", 1).at("deleted_at"), time_at(5));
	EXPECT_EQ(store().list_aliases("m").size(), 0u);
	EXPECT_RAISES("RC017", "was deleted", store().alias_set("m", "prod", json::array({route(1, 100)}), std::nullopt));

	EXPECT_EQ(store().complete(running, t.epoch, {{"done", true}}), "succeeded");
	EXPECT_EQ(status(running), "succeeded");

	// made again: live, versions numbered on
	auto again = store().define("m", pass_def("new"));
	EXPECT_EQ(again.version, 2);
	EXPECT_FALSE(store().get_definition("m", std::nullopt).contains("deleted_at"));
	EXPECT_EQ(instance(start("m")).at("output"), "new");
	EXPECT_EQ(store().list_definitions().size(), 2u);
	EXPECT_RAISES("RC002", "definition \"nope\" not found", store().undefine("nope", std::nullopt));
}

TEST_P(StoreTest, DeletedVersionRefusesStartsByItAndIsKeptWhileRouted) {
	define("m", pass_def("one"));
	define("m", pass_def("two"));
	store().alias_set("m", "prod", json::array({route(1, 50), route(2, 50)}), std::nullopt);
	EXPECT_RAISES("55006", "version 1 of definition \"m\" is routed to by alias \"prod\"", store().undefine("m", 1));
	store().alias_set("m", "prod", json::array({route(2, 100)}), std::nullopt);
	store().undefine("m", 1);
	EXPECT_RAISES("RC017", "definition \"m\" version 1 was deleted", start("m", json::object(), {{"version", 1}}));
	EXPECT_RAISES("RC017", "version 1 was deleted",
				  store().alias_set("m", "prod", json::array({route(1, 100)}), std::nullopt));
	EXPECT_EQ(instance(start("m")).at("version"), 2);
	EXPECT_EQ(store().get_definition("m", 1).at("deleted_at"), time_at(0));
	EXPECT_FALSE(store().get_definition("m", 2).contains("deleted_at"));
	EXPECT_RAISES("RC002", "version 7 not found", store().undefine("m", 7));
}

// cancel with an error and a cause: the instance ends with them and the
// log's cancelled entry carries them; without, genroc.Cancelled as before.
TEST_P(StoreTest, CancelRecordsItsErrorAndCause) {
	define("m", task_def());
	const int64_t id = start("m");
	EXPECT_EQ(store().cancel(id, "Ops.Stopped", "a person stopped it"), "cancelled");
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "cancelled");
	EXPECT_EQ(inst.at("error"), "Ops.Stopped");
	EXPECT_EQ(inst.at("cause"), "a person stopped it");
	json log = store().history(id);
	json last = log.back();
	EXPECT_EQ(last.at("event"), "cancelled");
	EXPECT_EQ(last.at("detail").at("error"), "Ops.Stopped");
	EXPECT_EQ(last.at("detail").at("cause"), "a person stopped it");

	const int64_t plain = start("m");
	store().cancel(plain);
	EXPECT_EQ(instance(plain).at("error"), "genroc.Cancelled");
	EXPECT_EQ(instance(plain).at("cause"), "cancelled by request");
	EXPECT_FALSE(store().history(plain).back().at("detail").contains("error"));

	const int64_t bad = start("m");
	EXPECT_RAISES("22023", "p_error must be at most 256 characters", store().cancel(bad, std::string(257, 'e'), std::nullopt));
	EXPECT_RAISES("22023", "p_cause must be at most 32768 characters", store().cancel(bad, std::nullopt, std::string(32769, 'c')));
	EXPECT_EQ(status(bad), "ready");
}

}  // namespace genroc::conformance
