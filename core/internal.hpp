// internal.hpp — what the core's modules share and nobody else sees: the
// runtime failure that turns into an ASL error outcome, the JSONPath engine,
// and the intrinsic functions.
//
// Glossary
//   Failure        an ASL runtime error ("States.Runtime", ...) raised while a
//                  state processes its data; step() turns it into an outcome
//                  (or hands it to the state's Retry/Catch).  Never escapes
//                  step().
//   definite path  a path that names at most one node (no wildcard, slice,
//                  filter or deep scan); it yields that node or nothing.
//   reference path a definite path of names and indices only, rooted at `$`:
//                  the only kind ResultPath may use, since it must name one
//                  place to write.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "asl.hpp"
#include "limits.hpp"

namespace genroc::asl::detail {

inline constexpr const char *ERR_RUNTIME = "States.Runtime";
inline constexpr const char *ERR_INTRINSIC = "States.IntrinsicFailure";
inline constexpr const char *ERR_RESULT_PATH = "States.ResultPathMatchFailure";
inline constexpr const char *ERR_NO_CHOICE = "States.NoChoiceMatched";
inline constexpr const char *ERR_QUERY = "States.QueryEvaluationError";

// An ASL runtime error with its error name and cause.
struct Failure : std::runtime_error {
	Failure(std::string error, const std::string &cause)
		: std::runtime_error(cause), error(std::move(error)) {}
	std::string error;
};

// A path that does not parse; the message says why (without the location,
// which the caller knows and adds).
struct SyntaxError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// A path or an intrinsic call over one of the limits of limits.def; the
// message names the limit.  compile() turns it into Error{54000} with the
// location, as it turns a SyntaxError into RC001.
struct LimitExceeded : SyntaxError {
	using SyntaxError::SyntaxError;
};

// ---------------------------------------------------------------- JSONPath

struct FilterExpr;

struct Segment {
	enum Kind { Name, Index, Wildcard, Slice, DeepName, DeepWildcard, Filter, Union } kind = Name;
	std::string name;				 // Name, DeepName
	int64_t index = 0;				 // Index (negative counts from the end)
	std::optional<int64_t> start;	 // Slice
	std::optional<int64_t> end;		 // Slice
	int64_t step = 1;				 // Slice
	std::shared_ptr<const FilterExpr> filter;
	std::vector<json> members;	// Union: indices (numbers) and names (strings), in order
};

// The bytes of the variable name that starts at s[pos] (Unicode's
// identifier rule, UAX #31: an XID_Start code point or "_", then XID_Continue
// ones; unicode_id.cpp), 0 when none does; its length in code points in
// *chars.
size_t variable_name_at(const std::string &s, size_t pos, size_t *chars = nullptr);

// While one lives (on this thread), a path may start at the reserved
// variable $states followed by one of `fields` (a JSONPath state's Assign:
// "input", "context", and "result" or "errorOutput" where there is one);
// anywhere else a path that starts at $states is a SyntaxError.
class StatesFields {
  public:
	explicit StatesFields(std::vector<std::string> fields);
	~StatesFields();
	StatesFields(const StatesFields &) = delete;
	StatesFields &operator=(const StatesFields &) = delete;
	// The innermost scope of this thread, or null.
	static StatesFields *current();
	const std::vector<std::string> &fields() const { return fields_; }
	// Whether a path parsed in this scope read $states.
	bool used = false;

  private:
	std::vector<std::string> fields_;
	StatesFields *outer_;
};

class Path {
  public:
	// Parses `$...` or `$$...`; throws SyntaxError.
	static Path parse(const std::string &text);

	const std::string &text() const { return text_; }
	bool is_context() const { return context_; }
	// `$name...`: a path into the variable `name` (Assign); "" otherwise
	const std::string &variable() const { return variable_; }
	bool is_definite() const { return definite_; }
	// Only names and indices, rooted at `$` (not `$$`); with
	// `allow_variable`, rooted at a variable too (`$name.a[0]`).
	bool is_reference(bool allow_variable = false) const;
	bool is_root() const { return segments_.empty(); }

	// Selects from `input` (or from `context` for a `$$` path).  A definite
	// path yields its node or nothing; any other path yields the array of
	// every node it matches (possibly empty).
	std::optional<json> select(const json &input, const json &context,
							   const json *vars = nullptr) const;
	std::optional<json> select(const json &root) const;

	// Writes `value` at this reference path inside `target`, creating the
	// missing objects on the way.  False when the path cannot be applied
	// (it goes through a value that is not an object/array, or an index
	// outside the array).
	bool assign(json &target, json value) const;

	const std::vector<Segment> &segments() const { return segments_; }

  private:
	std::string text_;
	bool context_ = false;
	std::string variable_;
	bool definite_ = true;
	std::vector<Segment> segments_;
	friend Path parse_path_prefix(const std::string &, size_t &, const std::string &);
};

// Parses a path that must end exactly at the end of `text`, starting at `pos`
// (used by filters and intrinsic arguments, which embed paths).
Path parse_path_prefix(const std::string &text, size_t &pos, const std::string &stop_chars);

// ---------------------------------------------------------------- Intrinsics

struct Call;

// One argument of an intrinsic call.
struct Arg {
	enum Kind { Literal, PathRef, Nested } kind = Literal;
	json literal;			// Literal
	std::string raw;		// Literal string: its text with escapes kept (for Format)
	bool is_string = false; // Literal came from a quoted string
	std::shared_ptr<const Path> path;
	std::shared_ptr<const Call> call;
};

struct Call {
	std::string name;  // e.g. "States.Format"
	std::vector<Arg> args;
};

// Parses "States.Name(args...)"; checks the function exists and the count of
// arguments (and literal arguments where their type is known).  Throws
// SyntaxError.
std::shared_ptr<const Call> parse_intrinsic(const std::string &text);

// Evaluates a call; throws Failure{States.IntrinsicFailure} for bad arguments
// and Failure{States.Runtime} for a path that selects nothing.
json eval_intrinsic(const Call &call, const json &input, const json &context,
					const json *vars = nullptr);

// ---------------------------------------------------------------- helpers

// A uniformly random integer in [0, bound] from OpenSSL's generator (no
// process-global state of our own).  Throws Failure when the generator fails.
uint64_t random_below_inclusive(uint64_t bound);

}  // namespace genroc::asl::detail
