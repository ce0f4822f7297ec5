// jsonata.hpp — a JSONata evaluator (https://jsonata.org), the query language
// of ASL states with "QueryLanguage": "JSONata".  Pure like the rest of the
// core: the clock ($now, $millis) and the variables come from the caller.
//
// An expression is compiled once (lexer, Pratt parser, then the path rewrite
// JSONata's reference implementation does) and evaluated any number of times,
// from any thread: a compiled Expression is immutable.
//
// Glossary
//   sequence    JSONata's result of a path: a list that is flattened into the
//               paths that use it and collapses to its only item when it has
//               one (an array built with [...] does neither)
//   undefined   "no value" (a path that matched nothing); evaluate() answers
//               std::nullopt for it
//   code        JSONata's error code: S0xxx a syntax error, T0xxx a type
//               error, D0xxx a dynamic error (as the reference implementation
//               numbers them), plus genroc's L0001 (a limit of limits.def)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace genroc::jsonata {

using json = nlohmann::json;

// A syntax or evaluation error with JSONata's code and the character offset
// in the expression where it was found (0 when not known).
struct JsonataError : std::runtime_error {
	JsonataError(std::string code, const std::string &message, size_t position = 0)
		: std::runtime_error(message), code(std::move(code)), position(position) {}
	std::string code;
	size_t position;
};

namespace detail {
struct Node;
}

class Expression {
  public:
	const std::string &text() const { return text_; }
	const detail::Node &root() const { return *root_; }

  private:
	std::string text_;
	std::shared_ptr<const detail::Node> root_;
	friend std::shared_ptr<const Expression> compile(const std::string &text);
};
using ExpressionPtr = std::shared_ptr<const Expression>;

// Parses an expression; throws JsonataError (an S0xxx code, or L0001 for an
// expression longer than jsonata_length or nested deeper than jsonata_depth).
ExpressionPtr compile(const std::string &text);

struct Environment {
	int64_t now_ms = 0;			   // $now() and $millis()
	std::map<std::string, json> vars;  // $name -> value (name without the $)
};

// Evaluates `expr` with `input` as its context ($ and $$; nullptr: no input).
// Throws JsonataError (T/D codes, or L0001 over a limit: evaluation steps,
// sequence length, call depth, regex subject length, string size).
std::optional<json> evaluate(const Expression &expr, const json *input, const Environment &env);

// JavaScript's rendering of a number (what $string gives): 1e+21, 0.1, 100.
std::string format_number(double d);

}  // namespace genroc::jsonata
