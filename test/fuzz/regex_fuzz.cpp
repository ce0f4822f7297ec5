// regex_fuzz.cpp — libFuzzer target: JSONata's regular expressions
// (core/jsonata_regex.cpp) with $match, $replace, $split and $contains.
// Input: the pattern on the first line, the subject after it (at most
// jsonata_regex_subject bytes are used).  A bad pattern is S0303, a pattern
// that backtracks too much or too deep is L0001; nothing may crash, hang or
// leak.  The stack watchdog: each case runs on a thread with a 1 MB stack,
// so an engine that recursed once per character of the subject (std::regex
// did) overflows it and the fuzzer reports the crash; run.sh's -timeout
// and -rss_limit_mb watch time and memory.

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "jsonata.hpp"
#include "limits.hpp"

using genroc::json;

namespace {

struct Case {
	std::string pattern, subject;
};

void *run(void *arg) {
	const auto *c = static_cast<const Case *>(arg);
	json input = {{"s", c->subject}};
	for (const char *f : {"$match(s, /%/)", "$replace(s, /%/im, '$1-$0')", "$split(s, /%/m)",
						  "$contains(s, /%/i)"}) {
		std::string expr = f;
		expr.replace(expr.find('%'), 1, c->pattern);
		try {
			auto e = genroc::jsonata::compile(expr);
			genroc::jsonata::Environment env;
			auto out = genroc::jsonata::evaluate(*e, &input, env);
			if (out)
				(void)out->dump(-1, ' ', false, json::error_handler_t::replace);
		} catch (const genroc::jsonata::JsonataError &) {
		}
	}
	return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string text(reinterpret_cast<const char *>(data), size);
	const size_t nl = text.find('\n');
	if (nl == std::string::npos || nl == 0 || nl > 1000)
		return 0;
	Case c{text.substr(0, nl), text.substr(nl + 1, genroc::limits::JSONATA_REGEX_SUBJECT)};
	// The subject goes through JSON: keep it valid UTF-8 (nlohmann throws
	// on invalid text when it dumps).
	c.subject = json(c.subject).dump(-1, ' ', false, json::error_handler_t::replace);
	c.subject = json::parse(c.subject).get<std::string>();
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	pthread_t t;
	if (pthread_create(&t, &attr, run, &c) == 0)
		pthread_join(t, nullptr);
	pthread_attr_destroy(&attr);
	return 0;
}
