// jsonata_fuzz.cpp — libFuzzer target: the JSONata evaluator (core/jsonata.*).
// Input: an expression on the first line, the JSON input it runs on after
// it.  Compiling may refuse the expression (S0xxx, L0001 over a limit) and
// evaluating may fail (T/D codes, L0001); nothing may crash, hang or leak.

#include <cstddef>
#include <cstdint>
#include <string>

#include "jsonata.hpp"
#include "limits.hpp"

using genroc::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string text(reinterpret_cast<const char *>(data), size);
	const size_t nl = text.find('\n');
	json input = nl == std::string::npos ? json::object()
										 : json::parse(text.substr(nl + 1), nullptr, false);
	if (input.is_discarded() || !genroc::limits::within_depth(input, genroc::limits::JSON_DEPTH))
		return 0;
	try {
		auto expr = genroc::jsonata::compile(text.substr(0, nl));
		genroc::jsonata::Environment env;
		env.now_ms = 1700000000000;
		env.vars["states"] = json{{"input", input}};
		auto out = genroc::jsonata::evaluate(*expr, &input, env);
		if (out)
			(void)out->dump(-1, ' ', false, json::error_handler_t::replace);
	} catch (const genroc::jsonata::JsonataError &) {
	}
	return 0;
}
