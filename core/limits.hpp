// limits.hpp — the bounds of core/limits.def and the checks every part
// shares: the JSON depth of a value (without recursion, so a value of any
// depth can be measured), and the recursion guard of the interpreter.
//
// Glossary
//   depth            how many arrays and objects enclose the deepest value:
//                    0 for a scalar, 1 for [] or {"a": 1}, 2 for [[1]]
//   stack check      a function the host sets (the PostgreSQL module sets one
//                    that asks the backend's stack_is_too_deep()); every
//                    recursive function of the core calls it once per level
//                    through RecursionGuard, so PostgreSQL's max_stack_depth
//                    bounds the interpreter too, as a C++ exception, never a
//                    longjmp across C++ frames
#pragma once

#include <cstddef>
#include <string>

#include "asl.hpp"

namespace genroc::limits {

#define GENROC_LIMIT(sym, name, value, what) inline constexpr size_t sym = value;
#include "limits.def"
#undef GENROC_LIMIT

// 54000 program_limit_exceeded: over one of the limits above.
// 54001 statement_too_complex: the stack itself ran out (PostgreSQL's
// stack check, or recursion_depth).
inline constexpr const char *PROGRAM_LIMIT_EXCEEDED = "54000";
inline constexpr const char *STACK_DEPTH_EXCEEDED = "54001";

// " (limit json_depth)": the tail every message over a limit ends with.
std::string named(const char *name);

// True when `v` nests at most `limit` levels deep.  Otherwise false, and
// *where (if given) gets `root` followed by the path of the first array or
// object past the limit, shortened after a few steps ("$.a[0][0]...").
bool within_depth(const json &v, size_t limit, const std::string &root = "$",
				  std::string *where = nullptr);

// Throws Error{54000} when `v` nests deeper than json_depth:
//   "<what> nests deeper than 512 levels of arrays and objects at $.a[0]...
//    (limit json_depth)"
void check_json_depth(const json &v, const std::string &what);

// Throws what compile() throws for a definition deeper than json_depth:
// Error{54000} "invalid definition at $.States.A.Parameters.a...: nests
// deeper than 512 levels of arrays and objects (limit json_depth)".  A store
// that must serialize a definition before compiling it calls this first.
void check_definition_depth(const json &definition);

// The host's stack check: returns nonzero when the stack is nearly out.
// NULL (the default) checks only recursion_depth.
void set_stack_check(int (*too_deep)(void));

// One level of recursion: counts the levels of this thread and asks the
// host's stack check; throws Error{54001} when either says stop.  Put one at
// the top of every function of the core that recurses over its input.
class RecursionGuard {
  public:
	RecursionGuard();
	~RecursionGuard();
	RecursionGuard(const RecursionGuard &) = delete;
	RecursionGuard &operator=(const RecursionGuard &) = delete;
};

}  // namespace genroc::limits
