// duration.hpp — the duration syntax of every genroc flag: "10s", "500ms",
// "720h", "1h30m", "1.5s", "7d", "0".
//
// A duration is a sequence of <number><unit> pairs (units ms, s, m, h, d;
// the number may have a fraction), summed.  A bare "0" means zero.  Anything
// else — a missing unit, a negative sign, an unknown unit, trailing text —
// is refused, so a typo in --lease-duration cannot silently become 0.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace genroc {

using Millis = std::chrono::milliseconds;

// Parses `text`; nullopt when it is not a duration.
std::optional<Millis> parse_duration(const std::string &text);

// The shortest exact text for `d` in the same syntax ("10s", "1500ms",
// "1h30m"), accepted back by parse_duration and by the engine's options.
std::string format_duration(Millis d);

}  // namespace genroc
