// json_guard.hpp — checks JSON text from outside (an HTTP body, a file) before
// it is parsed, so that no value deeper than a fixed bound, and no number the
// parser would refuse with its own exception text, ever reaches nlohmann::json.
//
// Why before parsing: nlohmann's parser is iterative, but copying a value,
// dump() and every walk of ours recurse once per level, so a body of 100,000
// nested arrays (200 KB) overflows the stack in the first copy.  Bounding the
// text is the one place that covers every later walk.  The scan is a single
// pass over the bytes with a stack no deeper than the bound.
//
// Errors (genroc::Error):
//   54000  "<what>: field "input" nests deeper than the limit of 512 levels"
//   22003  "<what>: field "input.x" holds the number 1e999999, beyond the range of a double"
// Malformed text is not an error here: the parser reports it afterwards.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "limits.hpp"

namespace genroc {

// Nesting allowed in JSON the binary receives (HTTP bodies, definition and
// input files): the interpreter's json_depth (core/limits.def), so what the
// binary lets through the stores take, and the other way round.
constexpr size_t kMaxJsonDepth = limits::JSON_DEPTH;

// Throws genroc::Error (54000 or 22003) naming `what` (e.g. "request body")
// and the field; returns when the text may be parsed.
void check_json_text(std::string_view text, const std::string &what, size_t max_depth = kMaxJsonDepth);

// check_json_text, then the parse: any JSON value, or genroc::Error 22P02
// naming `what` (nlohmann's text without its "[json.exception...]" prefix).
nlohmann::json parse_json_text(std::string_view text, const std::string &what);

// The whole of a file, or std::runtime_error naming it and why (a folder,
// missing, unreadable): "<path>: is a directory, not a file".
std::string read_text_file(const std::string &path);

// The JSON text a flag such as --input stands for: "-" is standard input,
// "@PATH" the file's content (neither begins a JSON text), anything else the
// text itself.  std::runtime_error naming the flag and the file.
std::string json_argument_text(const std::string &arg, const std::string &flag);

// Text quoted in an error message: control characters (a NUL among them, which
// would end a C string) and DEL become %XX, and text over `max` bytes is cut
// with "...", so a message always shows what was sent, whole and printable.
std::string shown(std::string_view text, size_t max = 200);

}  // namespace genroc
