// http_fuzz.cpp — libFuzzer target for the HTTP request path: each input is
// the bytes one client sends on one connection (one or more requests),
// served in-process by make_api_handler (httplib's request parser, auth,
// the body checks, the routes) over a SQLite store in a temporary folder.
// What it looks for: a crash, a sanitizer report, or an answer that is not
// HTTP.  Seeds: test/fuzz/corpus/http/ (one request per file).
//
// Until the fuzz build (every test/fuzz/*_fuzz.cpp a target) lands, by hand:
// the worker and shim sources and this file with clang++ -g -O1 -std=gnu++20
// -fsanitize=fuzzer-no-link,address,undefined plus httplib's defines
// (pkg-config --cflags cpp-httplib), linked with -fsanitize=fuzzer,address,
// undefined, the gcc-built build/core/libgenroc_core.a, -lcpp-httplib
// -lsqlite3 -lpq -lssl -lcrypto; then
//   http_fuzz -max_total_time=600 -max_len=16384 CORPUS test/fuzz/corpus/http
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "http_api.hpp"
#include "log.hpp"
#include "store.hpp"

namespace {

genroc::ApiHandler &handler() {
	static std::unique_ptr<genroc::ApiHandler> h = [] {
		// Refusals are logged at info: only errors (a 500) are worth seeing.
		genroc::log::set_level(genroc::log::Level::error);
		char dir[] = "/tmp/genroc-http-fuzz-XXXXXX";
		if (!::mkdtemp(dir)) std::abort();
		// Gone when the fuzzer exits (registered before the handler is made,
		// so the handler and its store are destroyed first).
		static std::string made;
		made = dir;
		std::atexit([] { std::error_code ec; std::filesystem::remove_all(made, ec); });
		const std::string db = std::string(dir) + "/fuzz.db";
		// A definition and an instance, so routes that need them go deeper.
		auto store = genroc::open_store(db);
		store->define("h", genroc::json::parse(
							   R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:a","End":true}}})"));
		store->start("h", genroc::json::object(), genroc::json::object());
		genroc::ApiOptions o;
		o.max_body = 256 * 1024;
		genroc::HealthInfo health;
		health.worker_id = "fuzz";
		return genroc::make_api_handler(o, [db] { return genroc::open_store(db); }, health);
	}();
	return *h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const std::string answer = handler().serve_bytes(std::string(reinterpret_cast<const char *>(data), size));
	// Whatever came in, what goes out is HTTP (or nothing, for a connection
	// that closed before a request line).
	if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) std::abort();
	return 0;
}
