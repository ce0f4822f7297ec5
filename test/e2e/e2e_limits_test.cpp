// e2e_limits_test.cpp — nested intrinsic calls through the binaries: a
// definition whose Parameters nest 5,000 or 20,000 intrinsic calls (alone,
// or after a genroc:noop Task) makes `genroc run` and `genctl define` exit 1
// with the limit's message, on both stores, never die of a signal.
#include <filesystem>
#include <fstream>

#include "e2e_http_support.hpp"

namespace genroc::e2e::limits_test {
namespace {

std::string repeat(const std::string &s, size_t n) {
	std::string out;
	for (size_t i = 0; i < n; i++)
		out += s;
	return out;
}

std::string nested_definition(size_t n, bool noop_first) {
	json pass = {{"Type", "Pass"},
				 {"Parameters", {{"a.$", repeat("States.Array(", n) + "1" + repeat(")", n)}}},
				 {"End", true}};
	json states = {{"P", pass}};
	if (noop_first)
		states["T"] = {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"Next", "P"}};
	return json{{"StartAt", noop_first ? "T" : "P"}, {"States", states}}.dump();
}

const char *kMessage = "invalid definition at $.States.P.Parameters['a.$']: intrinsic calls nest "
					   "deeper than 32 levels at offset 416 (limit intrinsic_depth)";

class LimitsCli : public ::testing::TestWithParam<std::string> {
  protected:
	void SetUp() override {
		std::string skip;
		db_.create(GetParam(), skip);
		if (!skip.empty()) GTEST_SKIP() << skip;
		dir_ = test_dir("genroc-limits");
	}
	void TearDown() override {
		db_.drop();
		if (!dir_.empty()) std::filesystem::remove_all(dir_);
	}
	std::string write_file(const std::string &name, const std::string &text) {
		auto p = dir_ / name;
		std::ofstream(p) << text;
		return p.string();
	}

	TestDatabase db_;
	std::filesystem::path dir_;
};

TEST_P(LimitsCli, DeeplyNestedIntrinsicsExitOneWithTheLimit) {
	for (size_t n : {5000, 20000})
		for (bool noop : {false, true}) {
			const std::string file =
				write_file("d" + std::to_string(n) + (noop ? "n" : "") + ".json",
						   nested_definition(n, noop));
			Output o = run({GENROC_PATH, "run", file, "--database", db_.url()});
			EXPECT_EQ(o.exit_code, 1) << n << noop << o.err;
			EXPECT_NE(o.err.find(kMessage), std::string::npos) << o.err;
			o = run({GENCTL_PATH, "--database", db_.url(), "define", "deep", file});
			EXPECT_EQ(o.exit_code, 1) << n << noop << o.err;
			EXPECT_NE(o.err.find(kMessage), std::string::npos) << o.err;
		}
}

INSTANTIATE_TEST_SUITE_P(Stores, LimitsCli, ::testing::Values("postgres", "sqlite"),
						 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e::limits_test
