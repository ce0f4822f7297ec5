// jsonata_picture.hpp — JSONata's picture strings (jsonata_picture.cpp):
// $formatInteger / $parseInteger (XPath's format-integer pictures),
// $formatNumber (decimal-format pictures), $fromMillis / $toMillis / $now
// with a date-time picture and a time zone (format-dateTime pictures), as the
// reference implementation reads them.
//
// Glossary
//   picture      the format string: "#,##0", "w;o", "[Y0001]-[M01]-[D01]"
//   marker       a [...] of a date-time picture: a component letter (Y, M,
//                D, ...), presentation modifiers, a width ",min-max"
//   time zone    the third argument of $fromMillis / second of $now:
//                "±HHMM" as the reference reads it, or an IANA name
//                ("Europe/Paris", read from the system's tzdata)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jsonata_internal.hpp"

namespace genroc::jsonata::detail {

// The library's entries (registered in jsonata_lib.cpp).
Value f_format_integer(Context &cx, Args &a, const Value &input);
Value f_parse_integer(Context &cx, Args &a, const Value &input);
Value f_format_number(Context &cx, Args &a, const Value &input);

// $fromMillis(millis, picture?, timezone?) and $now(picture?, timezone?):
// `picture` / `timezone` null when not given.  D3137 for a time outside
// JavaScript's Date range (±8.64e15 ms) or an unknown time zone.
std::string format_date_time(Context &cx, double millis, const std::string *picture,
							 const std::string *timezone);

// $toMillis(text, picture): undefined (nullopt) when the text does not fit
// the picture; missing leading components from `now_ms`.
std::optional<double> parse_date_time(Context &cx, const std::string &text,
									  const std::string &picture, int64_t now_ms);

namespace picture {
// The UTC offset in seconds of IANA zone `name` at `utc_ms`; false when the
// name is not a zone of the system's tzdata.  Exposed for the unit tests.
bool zone_offset(const std::string &name, int64_t utc_ms, int32_t &offset_seconds);
// The directory the zones are read from (tests point it elsewhere).
void set_zoneinfo_dir(const std::string &dir);
}  // namespace picture

}  // namespace genroc::jsonata::detail
