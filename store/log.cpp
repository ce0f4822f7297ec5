// log.cpp — one line per event, text or JSON, UTC timestamps.
#include "log.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>

namespace genroc::log {
namespace {
std::mutex g_lock;
Mode g_mode = Mode::text;
Level g_level = Level::info;

const char *name(Level l) {
	switch (l) {
		case Level::debug: return "debug";
		case Level::info: return "info";
		case Level::warn: return "warn";
		case Level::error: return "error";
	}
	return "info";
}
}  // namespace

void set_mode(Mode m) { g_mode = m; }
void set_level(Level l) { g_level = l; }
Mode mode() { return g_mode; }
bool enabled(Level level) { return level >= g_level; }

void write(Level level, const std::string &message, const json &fields) {
	if (level < g_level) return;
	write_always(level, message, fields);
}

void write_always(Level level, const std::string &message, const json &fields) {
	auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
				   std::chrono::system_clock::now().time_since_epoch())
				   .count();
	std::string ts = asl::format_time(now);
	std::string line;
	if (g_mode == Mode::json) {
		json j = {{"ts", ts}, {"level", name(level)}, {"msg", message}};
		if (fields.is_object())
			for (auto &[k, v] : fields.items()) j[k] = v;
		line = j.dump(-1, ' ', false, json::error_handler_t::replace);
	} else {
		char lv[8];
		std::snprintf(lv, sizeof lv, "%-5s", name(level));
		line = ts + " " + lv + " " + message;
		if (fields.is_object())
			for (auto &[k, v] : fields.items())
				line += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
	}
	line += '\n';
	std::lock_guard<std::mutex> g(g_lock);
	std::fwrite(line.data(), 1, line.size(), stderr);
	std::fflush(stderr);
}

}  // namespace genroc::log
