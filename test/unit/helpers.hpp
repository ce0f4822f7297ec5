// helpers.hpp — small helpers shared by the interpreter's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "asl.hpp"

namespace genroc::test {

inline json J(const std::string &text) { return json::parse(text); }

// The RC001 message compile() gives for `def`, or "<accepted>".
inline std::string compile_error(const json &def) {
	try {
		asl::compile(def);
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "RC001") << e.what();
		return e.what();
	}
	return "<accepted>";
}

inline std::string compile_error(const std::string &text) { return compile_error(J(text)); }
inline std::string compile_error(const char *text) { return compile_error(J(text)); }

// A definition with the given States object text, starting at "A".
inline json machine(const std::string &states) {
	return J(R"({"StartAt":"A","States":)" + states + "}");
}

// Runs op "start".
inline json start(const json &def, const json &input, int64_t now_ms = 1'000'000,
				  const json &context = json::object()) {
	auto d = asl::compile(def);
	return asl::step(*d, json{{"op", "start"}, {"now_ms", now_ms}, {"input", input},
							  {"context", context}});
}

// Runs any request against `def`.
inline json run(const json &def, json request) {
	auto d = asl::compile(def);
	if (!request.contains("now_ms"))
		request["now_ms"] = 1'000'000;
	return asl::step(*d, request);
}

inline json outcome(const json &answer) { return answer.at("outcome"); }

}  // namespace genroc::test
