// log_payloads.hpp — what the instance log keeps of a detail's payloads,
// once for both stores (docs/operations.md "Logs and retention"): the
// payload settings, then large payloads made stored values (values.hpp).
// PostgreSQL runs it from genroc._log_payloads (extension/values.c, after
// its fast path in C), the SQLite store from its genroc_log_payloads
// function; the statements LOG_ROW and STEP_LOG_ROWS call those.
//
// Glossary
//   payload key  input, output or payload at a detail's top level (an
//                instance's or a task's input and output, a task result, an
//                event payload); every other key is kept as it is
//   log text     the one text the rule measures, on both stores: JSON as
//                jsonb writes it (": " after a key, ", " between items, an
//                object's keys shorter first, then by their bytes)
//   marker       {"truncated": true, "bytes": <its log text's length>,
//                "head": <its log text's first min(payload_max, 256)
//                characters>}: a payload longer than payload_max
#pragma once

#include <cstdint>
#include <string>

#include "engine.hpp"
#include "port.hpp"

namespace genroc::engine {

// The settings the rule reads: genroc.log_payloads, genroc.log_payload_max
// and genroc.object_threshold in PostgreSQL, the SQLite store's LogOptions.
struct LogSettings {
	bool payloads = true;
	int64_t payload_max = 1024 * 1024;	// bytes of log text; 0: no limit
	int64_t object_threshold = 8192;	// bytes of log text
};

// A value's log text (see the glossary).
std::string log_text(const json &v);

// The detail `text` (JSON) as the log keeps it: without log_payloads, its
// payload keys removed; a payload whose log text is longer than
// payload_max (the detail's being longer) made a marker; then, when the
// detail's log text is longer than object_threshold or a payload looks like
// a reference, each payload through store_value (large: its log text
// longer than object_threshold; the object's text the store's canonical
// one).  `text` itself when nothing changes; else compact JSON.
std::string log_payloads(Port &port, const std::string &text, const LogSettings &settings);

}  // namespace genroc::engine
