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
//   interrupt check  a function the host sets (the PostgreSQL module sets one
//                    that reads InterruptPending and its cancel/die flags,
//                    without CHECK_FOR_INTERRUPTS); the budget asks it every
//                    kPollTicks ticks and throws Interrupted when it says so
//   step budget      what one step may do over data, every expression,
//                    intrinsic and path of it together: step_work units of
//                    work (an item visited, a comparison, an evaluation step)
//                    and step_bytes bytes of strings, arrays and objects
//                    built; per thread, opened by BudgetScope (asl::step,
//                    jsonata::evaluate when called alone)
//   tick             a unit of the poll clock: work counts one per unit, a
//                    string of n bytes 1 + n/256, a value the caller gave
//                    (touch) one per node without charging the budget
#pragma once

#include <cstddef>
#include <cstdint>
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

// The host asked the interpreter to stop (a query cancel, a statement
// timeout, a backend's termination): SQLSTATE 57014.  Never turned into an
// instance's error: every catch of the core lets it through to the C ABI,
// whose caller asks the host to raise its own error.
struct Interrupted : Error {
	Interrupted();
};

// A step did more work or built more bytes than step_work / step_bytes
// allow: SQLSTATE 54000 where it reaches a caller; JSONata turns it into
// L0001, an intrinsic into States.IntrinsicFailure, a state into
// States.Runtime.
struct BudgetExceeded : Error {
	explicit BudgetExceeded(const std::string &message);
};

// The host's interrupt check: returns nonzero when the host wants the
// interpreter to stop.  It must not raise an error or longjmp.  NULL (the
// default): never asked.
void set_interrupt_check(int (*pending)(void));

// Ticks between two questions to the interrupt check (and two checks of the
// budget).  A tick is a small piece of work (well under a microsecond), so
// the host is asked many times per millisecond at most and at least every
// few milliseconds.
inline constexpr uint64_t kPollTicks = 1024;
// What an item of an array or an entry of an object counts in bytes (about
// the size of a JSONata value or a JSON node and its slot).
inline constexpr uint64_t kItemBytes = 80;

struct Budget {
	uint64_t ticks = 0;				 // the poll clock
	uint64_t next_poll = kPollTicks;  // settle() when ticks reach it
	uint64_t work = 0;				 // charged in the open scope
	uint64_t bytes = 0;
	int open = 0;					 // nested BudgetScopes

	// `units` of work over data.
	void count_work(uint64_t units) {
		work += units;
		if ((ticks += units) >= next_poll)
			settle();
	}
	// `n` bytes built (a string's bytes, kItemBytes per item).
	void count_bytes(uint64_t n) {
		bytes += n;
		if ((ticks += 1 + (n >> 8)) >= next_poll)
			settle();
	}
	// Work over what the caller gave (converting the input, writing the
	// answer): only the poll clock moves.
	void touch(uint64_t units) {
		if ((ticks += units) >= next_poll)
			settle();
	}
	// Asks the host, checks the budget (inside a scope) and sets the next
	// poll; throws Interrupted or BudgetExceeded.
	void settle();
};

// This thread's budget.
Budget &budget();
inline void count_work(uint64_t units) { budget().count_work(units); }
inline void count_bytes(uint64_t n) { budget().count_bytes(n); }
inline void touch(uint64_t units) { budget().touch(units); }

// One step's budget: the outermost scope of a thread starts the counts at
// zero; nested scopes (an expression inside a step) share it.
class BudgetScope {
  public:
	BudgetScope();
	~BudgetScope();
	BudgetScope(const BudgetScope &) = delete;
	BudgetScope &operator=(const BudgetScope &) = delete;
};

}  // namespace genroc::limits
