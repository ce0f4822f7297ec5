// asl_c_test.cpp — the C ABI the PostgreSQL module calls (core/asl_c.h):
// errors come back as SQLSTATEs, never as exceptions; the definition cache.

#include <cstring>
#include <string>

#include "asl_c.h"
#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

// Owns a result and frees it.
struct Result {
	GenrocAslResult r;
	explicit Result(GenrocAslResult r) : r(r) {}
	~Result() { genroc_asl_free(&r); }
	std::string sqlstate() const { return r.ok ? "" : std::string(r.sqlstate); }
	std::string message() const { return r.message ? r.message : ""; }
};

const char *kDef = R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:h","Next":"B"},
  "B":{"Type":"Pass","Result":"done","End":true}}})";

}  // namespace

TEST(CAbi, ValidateAcceptsAGoodDefinition) {
	Result res(genroc_asl_validate(kDef, nullptr));
	EXPECT_EQ(res.r.ok, 1);
	EXPECT_EQ(res.r.json, nullptr);
}

TEST(CAbi, ValidateErrorIsRC001WithThePath) {
	Result res(genroc_asl_validate(R"({"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}})",
								   nullptr));
	EXPECT_EQ(res.r.ok, 0);
	EXPECT_EQ(res.sqlstate(), "RC001");
	EXPECT_EQ(res.message(), "invalid definition at $.States.A.Next: unknown state \"B\"");
}

TEST(CAbi, ValidateRefusesTextThatIsNotJson) {
	Result res(genroc_asl_validate("{nope", nullptr));
	EXPECT_EQ(res.sqlstate(), "RC001");
	Result null_def(genroc_asl_validate(nullptr, nullptr));
	EXPECT_EQ(null_def.sqlstate(), "22004");
}

TEST(CAbi, CacheMissWithoutTextIs55000ThenTextFillsTheCache) {
	const char *req = R"({"op":"start","now_ms":1000,"input":{"x":1}})";
	Result miss(genroc_asl_step("c-abi-miss-key", nullptr, req));
	EXPECT_EQ(miss.r.ok, 0);
	EXPECT_EQ(miss.sqlstate(), "55000");
	EXPECT_NE(miss.message().find("c-abi-miss-key"), std::string::npos);

	Result filled(genroc_asl_step("c-abi-miss-key", kDef, req));
	ASSERT_EQ(filled.r.ok, 1) << filled.message();
	Result hit(genroc_asl_step("c-abi-miss-key", nullptr, req));
	ASSERT_EQ(hit.r.ok, 1) << hit.message();
	EXPECT_STREQ(filled.r.json, hit.r.json);
}

TEST(CAbi, ValidateWithAKeyFillsTheCache) {
	Result v(genroc_asl_validate(kDef, "c-abi-validated"));
	ASSERT_EQ(v.r.ok, 1);
	Result hit(genroc_asl_step("c-abi-validated", nullptr, R"({"op":"start","now_ms":1})"));
	EXPECT_EQ(hit.r.ok, 1) << hit.message();
}

TEST(CAbi, StepJsonRoundTrip) {
	Result started(genroc_asl_step(nullptr, kDef,
								   R"({"op":"start","now_ms":1000,"input":{"x":1},
								       "context":{"Task":{"Token":"t"}}})"));
	ASSERT_EQ(started.r.ok, 1) << started.message();
	json a = json::parse(started.r.json);
	EXPECT_EQ(a["outcome"]["kind"], "task");
	EXPECT_EQ(a["outcome"]["task_input"], J(R"({"x":1})"));
	EXPECT_EQ(a["entered"], J(R"([{"state":"A","type":"Task"}])"));

	// Feed the outcome back as the store would.
	json req = {{"op", "task_succeeded"},
				{"now_ms", 2000},
				{"state", a["outcome"]["state"]},
				{"state_input", a["outcome"]["state_input"]},
				{"result", {{"y", 2}}},
				{"retry_counts", a["outcome"]["retry_counts"]}};
	Result done(genroc_asl_step(nullptr, kDef, req.dump().c_str()));
	ASSERT_EQ(done.r.ok, 1) << done.message();
	EXPECT_EQ(json::parse(done.r.json)["outcome"], J(R"({"kind":"succeeded","output":"done"})"));
}

TEST(CAbi, BadRequestIs22023AndNullsAre22004) {
	Result bad(genroc_asl_step(nullptr, kDef, R"({"op":"start"})"));
	EXPECT_EQ(bad.sqlstate(), "22023");
	Result not_json(genroc_asl_step(nullptr, kDef, "{"));
	EXPECT_EQ(not_json.sqlstate(), "22023");
	Result no_req(genroc_asl_step(nullptr, kDef, nullptr));
	EXPECT_EQ(no_req.sqlstate(), "22004");
	Result nothing(genroc_asl_step(nullptr, nullptr, R"({"op":"start","now_ms":1})"));
	EXPECT_EQ(nothing.sqlstate(), "22004");
}

TEST(CAbi, CacheIsBoundedAndEvictsTheLeastRecentlyUsed) {
	Result first(genroc_asl_validate(kDef, "c-abi-evict-0"));
	ASSERT_EQ(first.r.ok, 1);
	for (int i = 1; i <= 300; i++) {
		Result r(genroc_asl_validate(kDef, ("c-abi-evict-" + std::to_string(i)).c_str()));
		ASSERT_EQ(r.r.ok, 1);
	}
	const char *req = R"({"op":"start","now_ms":1})";
	Result evicted(genroc_asl_step("c-abi-evict-0", nullptr, req));
	EXPECT_EQ(evicted.sqlstate(), "55000");
	Result kept(genroc_asl_step("c-abi-evict-300", nullptr, req));
	EXPECT_EQ(kept.r.ok, 1);
}

TEST(CAbi, FreeIsSafeTwice) {
	GenrocAslResult r = genroc_asl_validate("[]", nullptr);
	genroc_asl_free(&r);
	genroc_asl_free(&r);
	genroc_asl_free(nullptr);
	EXPECT_EQ(r.message, nullptr);
}

TEST(CAbi, ReadsContextAnswersFromTheCacheOnly) {
	EXPECT_EQ(genroc_asl_reads_context("ctx-never-cached"), -1);
	EXPECT_EQ(genroc_asl_reads_context(nullptr), -1);
	Result plain(genroc_asl_validate(kDef, "ctx-plain"));
	ASSERT_EQ(plain.r.ok, 1);
	EXPECT_EQ(genroc_asl_reads_context("ctx-plain"), 0);
	Result reading(genroc_asl_validate(
		R"({"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"id.$":"$$.Execution.Id"},"End":true}}})",
		"ctx-reading"));
	ASSERT_EQ(reading.r.ok, 1);
	EXPECT_EQ(genroc_asl_reads_context("ctx-reading"), 1);
}
