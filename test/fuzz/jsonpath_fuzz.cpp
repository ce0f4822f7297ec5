// jsonpath_fuzz.cpp — libFuzzer target: the JSONPath dialect.  Input: a path
// on the first line, a JSON document after it.  Parsing may refuse the path;
// selecting and writing at a reference path must not crash.

#include <cstddef>
#include <cstdint>
#include <string>

#include "internal.hpp"

using genroc::json;
namespace detail = genroc::asl::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string text(reinterpret_cast<const char *>(data), size);
	const size_t nl = text.find('\n');
	const std::string path_text = text.substr(0, nl);
	json doc = nl == std::string::npos ? json::object()
									   : json::parse(text.substr(nl + 1), nullptr, false);
	if (doc.is_discarded() || !genroc::limits::within_depth(doc, genroc::limits::JSON_DEPTH))
		return 0;  // the stores refuse such a document before a path sees it
	try {
		const detail::Path p = detail::Path::parse(path_text);
		auto got = p.select(doc, doc);
		if (got)
			(void)got->dump(-1, ' ', false, json::error_handler_t::replace);
		if (p.is_reference()) {
			json target = doc;
			(void)p.assign(target, json{{"written", true}});
		}
	} catch (const detail::SyntaxError &) {
	} catch (const genroc::Error &) {
	}
	return 0;
}
