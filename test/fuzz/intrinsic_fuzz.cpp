// intrinsic_fuzz.cpp — libFuzzer target: intrinsic functions.  Input: a call
// ("States.Format('{}', $.a)") on the first line, the JSON input it runs on
// after it.  Parsing may refuse the call and evaluating may fail the way ASL
// fails (States.IntrinsicFailure, States.Runtime); nothing may crash.

#include <cstddef>
#include <cstdint>
#include <string>

#include "internal.hpp"

using genroc::json;
namespace detail = genroc::asl::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string text(reinterpret_cast<const char *>(data), size);
	const size_t nl = text.find('\n');
	json input = nl == std::string::npos ? json::object()
										 : json::parse(text.substr(nl + 1), nullptr, false);
	if (input.is_discarded() || !genroc::limits::within_depth(input, genroc::limits::JSON_DEPTH))
		return 0;
	try {
		auto call = detail::parse_intrinsic(text.substr(0, nl));
		json out = detail::eval_intrinsic(*call, input, json{{"Execution", {{"Id", "x"}}}});
		(void)out.dump(-1, ' ', false, json::error_handler_t::replace);
	} catch (const detail::SyntaxError &) {
	} catch (const detail::Failure &) {
	} catch (const genroc::Error &) {
	}
	return 0;
}
