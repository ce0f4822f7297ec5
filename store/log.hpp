// log.hpp — the binary's own log lines (not the instance logs in the database).
//
// Text mode:  2026-11-29T10:20:46.123Z INFO  lease lost instance=42 epoch=3
// JSON mode:  {"ts":"2026-11-29T10:20:46.123Z","level":"info","msg":"lease lost","instance":42,"epoch":3}
// One line per call, written whole under a lock, to stderr; times in UTC.
#pragma once

#include <string>

#include "asl.hpp"

namespace genroc::log {

enum class Level { debug, info, warn, error };
enum class Mode { text, json };

void set_mode(Mode mode);
void set_level(Level level);
Mode mode();
// Whether write() at `level` writes: a hot path builds its fields only then.
bool enabled(Level level);

// fields: a JSON object of extra key/values (instance id, worker id, ...).
void write(Level level, const std::string &message, const json &fields = json::object());
// write() whatever the level (genroc run's progress lines, which are its
// output rather than its chatter, in the log's format).
void write_always(Level level, const std::string &message, const json &fields = json::object());
inline void debug(const std::string &m, const json &f = json::object()) { write(Level::debug, m, f); }
inline void info(const std::string &m, const json &f = json::object()) { write(Level::info, m, f); }
inline void warn(const std::string &m, const json &f = json::object()) { write(Level::warn, m, f); }
inline void error(const std::string &m, const json &f = json::object()) { write(Level::error, m, f); }

}  // namespace genroc::log
