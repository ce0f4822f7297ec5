// size.hpp — the size syntax of genroc's flags: "1MB", "64KB", "512" (bytes).
//
// A size is a whole number and an optional unit: B (or none) for bytes, KB,
// MB, GB for 1024, 1024² and 1024³ bytes, as PostgreSQL counts its memory
// settings.  Units are case-insensitive ("64kb", "1Mb").  Anything else — a
// fraction, a sign, a space, an unknown unit, a value past 2^53 — is refused,
// so a typo cannot become a different limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace genroc {

// Parses `text`; nullopt when it is not a size.
std::optional<int64_t> parse_size(const std::string &text);

}  // namespace genroc
