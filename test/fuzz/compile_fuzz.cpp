// compile_fuzz.cpp — libFuzzer target: definition text through the C ABI the
// PostgreSQL module calls (parse, limits, compile), and a first step of
// whatever compiles.  Anything may be refused with an error; nothing may
// crash, leak or hang.

#include <cstddef>
#include <cstdint>
#include <string>

#include "asl.hpp"
#include "asl_c.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string text(reinterpret_cast<const char *>(data), size);
	GenrocAslResult r = genroc_asl_validate(text.c_str(), nullptr);
	const bool ok = r.ok;
	genroc_asl_free(&r);
	if (!ok)
		return 0;
	// It compiled: start it once with an empty input, as genroc.start would.
	r = genroc_asl_step(nullptr, text.c_str(),
						R"({"op":"start","now_ms":1000000,"input":{},"context":{}})");
	genroc_asl_free(&r);
	return 0;
}
