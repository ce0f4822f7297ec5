// e2e_genctl_test.cpp — genctl as a subprocess against a real database
// (a SQLite file; PostgreSQL too when GENROC_TEST_PG_URL is set): its tables,
// its --json output, and its exit status (1 engine error, 2 usage error).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "e2e_http_support.hpp"

namespace genroc::e2e::genctl_test {
namespace {

const std::string kGenctl = GENCTL_PATH;

class GenctlTest : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override {
		std::string skip;
		db_.create(GetParam(), skip);
		if (!skip.empty()) GTEST_SKIP() << skip;
		dir_ = test_dir("genroc-genctl");
	}

	void TearDown() override {
		db_.drop();
		if (!dir_.empty()) std::filesystem::remove_all(dir_);
	}

	// genctl --database DB ARGS...
	Output genctl(std::vector<std::string> args) {
		args.insert(args.begin(), {kGenctl, "--database", db_.url()});
		return run(args);
	}

	std::string write_file(const std::string &name, const std::string &text) {
		auto p = dir_ / name;
		std::ofstream(p) << text;
		return p.string();
	}

	json json_of(const Output &o) {
		json j = json::parse(o.out, nullptr, false);
		EXPECT_FALSE(j.is_discarded()) << "not JSON: " << o.out;
		return j;
	}

	TestDatabase db_;
	std::filesystem::path dir_;
};

constexpr const char *kHello = R"({"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}})";
constexpr const char *kApprove =
	R"({"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"activity:approve","End":true}}})";

TEST_P(GenctlTest, EmitAndTheChildrenTree) {
	ASSERT_EQ(genctl({"define", "gate", write_file("gate.json", R"({"StartAt":"G","States":{"G":{"Type":"Task",
	  "Resource":"genroc:event","Parameters":{"Name":"open"},"End":true}}})")}).exit_code, 0);
	auto o = genctl({"--json", "start", "gate"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const std::string id = std::to_string(json_of(o)["instance_id"].get<int64_t>());
	o = genctl({"emit", id, "open", "--payload", R"({"ok":true})"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "event open delivered (instance " + id + ")\n");
	o = genctl({"emit", id, "open"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC008"), std::string::npos) << o.err;

	ASSERT_EQ(genctl({"define", "par", write_file("par.json", R"({"StartAt":"P","States":{"P":{"Type":"Parallel",
	  "End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:a","End":true}}},
	  {"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}]}}})")}).exit_code, 0);
	o = genctl({"--json", "start", "par"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const std::string root = std::to_string(json_of(o)["instance_id"].get<int64_t>());
	o = genctl({"instances", "show", root});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("children:"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("/States/P/Branches/0"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("/States/P/Branches/1"), std::string::npos) << o.out;
}

TEST_P(GenctlTest, ACallTreeThenRetryAndResume) {
	ASSERT_EQ(genctl({"define", "leaf", write_file("leaf.json",
	  R"({"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Leaf.Broke","Cause":"always"}}})")}).exit_code, 0);
	ASSERT_EQ(genctl({"define", "top", write_file("top.json", R"({"StartAt":"Call","States":{"Call":{"Type":"Task",
	  "Resource":"genroc:call.sync","Parameters":{"Definition":"leaf"},"End":true}}})")}).exit_code, 0);
	auto o = genctl({"--json", "start", "top"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(json_of(o)["status"], "failed");
	const std::string id = std::to_string(json_of(o)["instance_id"].get<int64_t>());
	o = genctl({"instances", "show", id});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("Leaf.Broke"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("children:"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find(" leaf "), std::string::npos) << o.out;	 // the child's definition
	// retry calls the child again, which fails again
	o = genctl({"retry", id});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "instance " + id + " retried: failed\n");
	// resume goes past the call with a result given by hand
	o = genctl({"resume", id, "--output", R"({"fixed":true})"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "instance " + id + " resumed: succeeded\n");
	o = genctl({"--json", "instances", "show", id});
	EXPECT_EQ(json_of(o)["instance"]["output"], json({{"fixed", true}}));
	o = genctl({"resume", id});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC009"), std::string::npos) << o.err;
}

// docs/operations.md "Large values": a large input goes in through genctl, is stored
// once, and comes back identical from instances show, logs and object.
TEST_P(GenctlTest, LargeValuesReadBackIdentical) {
	ASSERT_EQ(genctl({"define", "echo", write_file("echo.json", R"({"StartAt":"E","States":{"E":{"Type":"Pass","End":true}}})")})
				  .exit_code,
			  0);
	std::string blob;
	for (int i = 0; blob.size() < 100000; i++) blob += std::to_string(i * 7919 % 10007) + ",";
	const json big = {{"blob", blob}};
	auto o = genctl({"--json", "start", "echo", "--input", "@" + write_file("big.json", big.dump())});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const int64_t id = json_of(o)["instance_id"];
	o = genctl({"--json", "instances", "show", std::to_string(id)});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const json shown = json_of(o);
	const json inst = shown.contains("instance") ? shown["instance"] : shown;
	EXPECT_EQ(inst["input"], big);
	EXPECT_EQ(inst["output"], big);
	o = genctl({"--json", "logs", std::to_string(id)});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(json_of(o)["history"][0]["detail"]["input"], big);
	// the reference the HTTP API would hand out: sha256 of the store's text
	auto store = open_store(db_.url());
	const std::string ref = store->get_instance(id, true)["input"]["genroc:object"];
	o = genctl({"object", ref});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(json_of(o), big);
	o = genctl({"object", std::string(64, '0')});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC011"), std::string::npos) << o.err;
	EXPECT_EQ(store->metrics(0)["objects"]["count"], 1);
}

TEST_P(GenctlTest, DefineStartListShowCancel) {
	auto o = genctl({"define", "hello", write_file("hello.json", kHello)});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "defined hello version 1\n");
	o = genctl({"define", "hello", write_file("hello.json", kHello)});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("unchanged"), std::string::npos) << o.out;
	ASSERT_EQ(genctl({"define", "approve", write_file("approve.json", kApprove)}).exit_code, 0);

	o = genctl({"definitions"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out.rfind("NAME", 0), 0u) << o.out;
	EXPECT_NE(o.out.find("\nhello "), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("\napprove "), std::string::npos) << o.out;
	o = genctl({"definitions", "--json"});
	json defs = json_of(o);
	ASSERT_TRUE(defs.is_array());
	EXPECT_EQ(defs.size(), 2u);

	o = genctl({"--json", "start", "hello", "--input", R"({"who":"world"})"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json started = json_of(o);
	int64_t hello = started["instance_id"];
	EXPECT_EQ(started["status"], "succeeded");
	o = genctl({"start", "approve"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out.rfind("started instance ", 0), 0u) << o.out;
	int64_t approve = std::stoll(o.out.substr(std::string("started instance ").size()));

	o = genctl({"instances"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("succeeded"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("waiting"), std::string::npos) << o.out;
	o = genctl({"instances", "--status", "waiting", "--json"});
	json waiting = json_of(o);
	ASSERT_EQ(waiting.size(), 1u) << o.out;
	EXPECT_EQ(waiting[0]["id"], approve);
	o = genctl({"instances", "--definition", "hello", "--limit", "5", "--json"});
	ASSERT_EQ(json_of(o).size(), 1u) << o.out;

	o = genctl({"instances", "show", std::to_string(hello)});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("status:"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("\"hello\""), std::string::npos) << o.out;	 // the output, as JSON
	EXPECT_NE(o.out.find("history:"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("started"), std::string::npos) << o.out;
	o = genctl({"instances", "show", std::to_string(hello), "--json"});
	json shown = json_of(o);
	EXPECT_EQ(shown["instance"]["output"], "hello");
	EXPECT_EQ(shown["instance"]["input"], (json{{"who", "world"}}));
	EXPECT_GE(shown["history"].size(), 2u);

	o = genctl({"cancel", std::to_string(approve)});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.out, "instance " + std::to_string(approve) + " cancelled\n");
	o = genctl({"instances", "--status", "cancelled", "--json"});
	ASSERT_EQ(json_of(o).size(), 1u) << o.out;
}

// A Map of many items: counts by status first, a page of children in
// order, the failed ones; `instances` lists top-level ones unless --all or
// --root.
// instances show prints the instance's ASL variables (get_instance's
// "variables"), as JSON like the input and output.
TEST_P(GenctlTest, ShowPrintsTheVariables) {
	const char *def = R"({"StartAt":"A","States":{"A":{"Type":"Pass",
	    "Assign":{"n.$":"$.n","prénom":"Zoë"},"End":true}}})";
	ASSERT_EQ(genctl({"define", "vars", write_file("vars.json", def)}).exit_code, 0);
	auto o = genctl({"--json", "start", "vars", "--input", R"({"n":3})"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const std::string id = std::to_string(json_of(o)["instance_id"].get<int64_t>());
	o = genctl({"instances", "show", id});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("variables:   {\"n\":3,\"prénom\":\"Zoë\"}"), std::string::npos) << o.out;
	o = genctl({"--json", "instances", "show", id});
	EXPECT_EQ(json_of(o)["instance"]["variables"], json::parse(R"({"n":3,"prénom":"Zoë"})"));
}

TEST_P(GenctlTest, AMapsChildrenCountedPagedAndKeptOutOfTheTopLevelList) {
	ASSERT_EQ(genctl({"define", "map", write_file("map.json", R"({"StartAt":"M","States":{"M":{"Type":"Map",
	  "MaxConcurrency":5,"ToleratedFailureCount":3,
	  "ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:a","End":true}}},
	  "End":true}}})")}).exit_code, 0);
	json items = json::array();
	for (int i = 0; i < 30; i++) items.push_back(i);
	auto o = genctl({"--json", "start", "map", "--input", items.dump()});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const int64_t root = json_of(o)["instance_id"].get<int64_t>();
	o = genctl({"--json", "instances", "--root", std::to_string(root)});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json tree = json_of(o);
	ASSERT_EQ(tree.size(), 30u) << o.out;
	int64_t item20 = 0;
	for (const auto &c : tree)
		if (c["child_index"] == 20) item20 = c["id"].get<int64_t>();
	ASSERT_EQ(genctl({"cancel", std::to_string(item20)}).exit_code, 0);

	o = genctl({"instances", "show", std::to_string(root)});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	const auto counts = o.out.find("children:    map, 30: 0 succeeded, 1 failed, 5 running, 24 waiting\n");
	const auto page = o.out.find("children 1-20 (page 1):\n"), more = o.out.find("more: --page 2\n"),
			   failed = o.out.find("failed children (first 20):\n"), history = o.out.find("\nhistory:\n");
	ASSERT_NE(counts, std::string::npos) << o.out;
	ASSERT_NE(page, std::string::npos) << o.out;
	ASSERT_NE(more, std::string::npos) << o.out;
	ASSERT_NE(failed, std::string::npos) << o.out;
	EXPECT_TRUE(counts < page && page < more && more < failed && failed < history) << o.out;
	EXPECT_NE(o.out.find(std::to_string(item20), failed), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("genroc.Cancelled", failed), std::string::npos) << o.out;

	o = genctl({"instances", "show", std::to_string(root), "--page", "2"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("children 21-40 (page 2):\n"), std::string::npos) << o.out;
	EXPECT_EQ(o.out.find("more: --page"), std::string::npos) << o.out;	 // 10 rows: the last page

	o = genctl({"--json", "instances", "show", std::to_string(root), "--page-size", "7"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json shown = json_of(o);
	EXPECT_EQ(shown["children"]["summary"], json::parse(R"({"kind":"map","total":30,"succeeded":0,"failed":1,
	  "running":5,"waiting":24})"));
	EXPECT_EQ(shown["instance"]["children"], shown["children"]["summary"]);
	ASSERT_EQ(shown["children"]["items"].size(), 7u);
	for (int i = 0; i < 7; i++) EXPECT_EQ(shown["children"]["items"][i]["child_index"], i);
	ASSERT_EQ(shown["children"]["failed"].size(), 1u);
	EXPECT_EQ(shown["children"]["failed"][0]["id"], item20);
	EXPECT_GE(shown["history"].size(), 1u);

	o = genctl({"--json", "instances"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	ASSERT_EQ(json_of(o).size(), 1u) << o.out;
	EXPECT_EQ(json_of(o)[0]["id"], root);
	o = genctl({"--json", "instances", "--all"});
	EXPECT_EQ(json_of(o).size(), 31u) << o.out;
	o = genctl({"instances", "--all", "--root", std::to_string(root)});
	EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
	o = genctl({"instances", "show", std::to_string(root), "--page", "0"});
	EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
	EXPECT_NE(o.err.find("--page"), std::string::npos) << o.err;
}

TEST_P(GenctlTest, LabelsFilter) {
	ASSERT_EQ(genctl({"define", "hello", write_file("hello.json", kHello)}).exit_code, 0);
	ASSERT_EQ(genctl({"start", "hello", "--options", R"({"labels":{"team":"red"}})"}).exit_code, 0);
	ASSERT_EQ(genctl({"start", "hello", "--options", R"({"labels":{"team":"blue"}})"}).exit_code, 0);
	auto o = genctl({"instances", "--label", "team=red", "--json"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	json list = json_of(o);
	ASSERT_EQ(list.size(), 1u) << o.out;
	EXPECT_EQ(list[0]["labels"]["team"], "red");
}

TEST_P(GenctlTest, WorkersAndActivity) {
	{
		auto store = open_store(db_.url());
		store->worker_register("w-one", {{"host", "box-1"}});
		store->worker_register("w-two", {{"host", "box-2"}});
		store->worker_stop("w-two");
		store->define("hello", json::parse(
								   R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}})"));
		store->start("hello", json::object(), json::object());
		ASSERT_EQ(store->claim("w-one", {"default"}, 1).size(), 1u);
	}
	auto o = genctl({"workers"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	// One row per worker: id, host, state, last heartbeat, running count.
	auto row = [&](const std::string &id) {
		auto at = o.out.find("\n" + id + " ");
		return at == std::string::npos ? std::string() : o.out.substr(at + 1, o.out.find('\n', at + 1) - at - 1);
	};
	EXPECT_NE(row("w-one").find("box-1"), std::string::npos) << o.out;
	EXPECT_NE(row("w-one").find(" live "), std::string::npos) << o.out;
	EXPECT_NE(row("w-two").find(" stopped "), std::string::npos) << o.out;
	json workers = json_of(genctl({"workers", "--json"}));
	ASSERT_EQ(workers.size(), 2u);
	EXPECT_EQ(workers[0]["worker"], "w-one");
	EXPECT_EQ(workers[0]["running"], 1);

	o = genctl({"activity"});
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("w-one"), std::string::npos) << o.out;
	EXPECT_NE(o.out.find("hello"), std::string::npos) << o.out;
	json running = json_of(genctl({"activity", "--json"}));
	ASSERT_EQ(running.size(), 1u);
	EXPECT_EQ(running[0]["status"], "running");
}

TEST_P(GenctlTest, EngineErrorsExit1WithTheSqlstate) {
	auto o = genctl({"instances", "show", "424242"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC003"), std::string::npos) << o.err;
	o = genctl({"cancel", "424242"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC003"), std::string::npos) << o.err;
	o = genctl({"start", "nope"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC002"), std::string::npos) << o.err;
	o = genctl({"define", "bad", write_file("bad.json", R"({"StartAt":"X","States":{}})")});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("RC001"), std::string::npos) << o.err;
	o = genctl({"define", "bad", (dir_ / "missing.json").string()});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("cannot read"), std::string::npos) << o.err;
}

TEST_P(GenctlTest, UsageErrorsExit2) {
	EXPECT_EQ(genctl({}).exit_code, 2);
	EXPECT_EQ(genctl({"frobnicate"}).exit_code, 2);
	EXPECT_EQ(genctl({"cancel"}).exit_code, 2);
	EXPECT_EQ(genctl({"cancel", "abc"}).exit_code, 2);
	EXPECT_EQ(genctl({"instances", "--label", "team"}).exit_code, 2);
	EXPECT_EQ(genctl({"instances", "--limit", "0"}).exit_code, 2);
	auto o = genctl({"start", "hello", "--input", "{oops"});
	EXPECT_EQ(o.exit_code, 2);
	EXPECT_NE(o.err.find("--input"), std::string::npos) << o.err;
	EXPECT_EQ(genctl({"--help"}).exit_code, 0);
}

// Issue 11 item 8: a bad argument gets one line naming it and exit 2 (or 1
// for a file); an id out of range is refused, never clamped to INT64_MAX.
TEST_P(GenctlTest, BadArgumentsGetOneLineNamingThem) {
	auto o = genctl({"define", "x", dir_.string()});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find(dir_.string() + ": is a directory, not a file"), std::string::npos) << o.err;
	const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
		{{"logs", "0"}, "ID: \"0\" is not a whole number from 1 to 9223372036854775807"},
		{{"instances", "show", "abc"}, "ID: \"abc\" is not a whole number"},
		{{"instances", "show", "99999999999999999999999"}, "ID: 99999999999999999999999 is out of range"},
		{{"instances", "--limit", "0"}, "--limit: \"0\" is not a whole number from 1 to 2147483647"},
		{{"instances", "--limit", "1e3"}, "--limit: \"1e3\""},
	};
	for (const auto &[args, message] : cases) {
		o = genctl(args);
		EXPECT_EQ(o.exit_code, 2) << args[0] << " " << o.err;
		EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
		EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
		EXPECT_EQ(o.err.find("1797693"), std::string::npos) << o.err;
	}
	// Deep nesting in a file: refused before it is parsed (it crashed with 139).
	o = genctl({"define", "deep", write_file("deep.json", R"({"StartAt":"P","States":{"P":{"Type":"Pass","Result":)" +
																 std::string(100'000, '[') + std::string(100'000, ']') +
																 R"(,"End":true}}})")});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("limit of 512 levels"), std::string::npos) << o.err.substr(0, 300);
	o = genctl({"start", "x", "--input", R"({"n":1e999999})"});
	EXPECT_EQ(o.exit_code, 2);
	EXPECT_NE(o.err.find("--input: field \"n\" holds the number 1e999999"), std::string::npos) << o.err;
}

TEST_P(GenctlTest, DatabaseFromTheEnvironment) {
	auto o = run({kGenctl, "define", "hello", write_file("hello.json", kHello)}, {{"GENROC_DATABASE", db_.url()}});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	auto store = open_store(db_.url());
	EXPECT_EQ(store->list_definitions().size(), 1u);
}

// queue set passes its options through; queues shows the limits (pr= rate
// per partition) and --json every column.
TEST_P(GenctlTest, QueueSetTakesAPartitionRateLimit) {
	auto o = genctl({"queue", "set", "default", "--options",
					 R"({"partition_rate_limit":{"count":5,"period":"1m"}})"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	o = genctl({"queues"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("pr=5/1m"), std::string::npos) << o.out;
	o = genctl({"--json", "queues"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	json q = json_of(o).at(0);
	EXPECT_EQ(q.at("partition_rate_limit"), 5);
	EXPECT_EQ(q.at("partition_rate_period_ms"), 60000);
	o = genctl({"queue", "set", "default", "--options", R"({"partition_rate_limit":{"count":0,"period":"1m"}})"});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("partition_rate_limit.count"), std::string::npos) << o.err;
}

// --input @FILE reads the file (issue 19); a missing one is named.
TEST_P(GenctlTest, StartInputFromAFile) {
	ASSERT_EQ(genctl({"define", "hello", write_file("hello.json", kHello)}).exit_code, 0);
	auto o = genctl({"--json", "start", "hello", "--input", "@" + write_file("in.json", R"({"who":"file"})")});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	int64_t id = json_of(o).at("instance_id");
	EXPECT_EQ(open_store(db_.url())->get_instance(id).at("input"), (json{{"who", "file"}}));
	o = genctl({"start", "hello", "--input", "@" + (dir_ / "nope.json").string()});
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("--input " + (dir_ / "nope.json").string() + ": cannot read it"), std::string::npos) << o.err;
}

// A ready task in a queue no live worker serves (issue 19): genctl queues
// warns on stderr, naming the queue and who would serve it.
TEST_P(GenctlTest, QueuesWarnsAboutReadyTasksNoWorkerServes) {
	auto o = genctl({"queue", "set", "ansible", "--options", R"({"kind":"handler","handler":"ansible"})"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	o = genctl({"queues"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_EQ(o.err.find("warning"), std::string::npos) << o.err;	// nothing waits yet
	o = genctl({"define", "deploy", write_file("deploy.json",
		R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:ansible","End":true}}})")});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	o = genctl({"start", "deploy"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	o = genctl({"queues"});
	ASSERT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.err.find("warning: queue ansible has 1 ready task(s) and no live worker serves it"), std::string::npos)
		<< o.err;
	EXPECT_NE(o.err.find("the handler \"ansible\""), std::string::npos) << o.err;
	EXPECT_EQ(o.err.find("queue default"), std::string::npos) << o.err;
}

INSTANTIATE_TEST_SUITE_P(Stores, GenctlTest, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e::genctl_test
