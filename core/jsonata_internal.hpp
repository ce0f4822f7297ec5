// jsonata_internal.hpp — what jsonata.cpp (parser, evaluator) and
// jsonata_lib.cpp (the function library) share: the value type, the syntax
// tree and the evaluation context.
//
// Glossary
//   Value     a JSONata value: undefined, null, boolean, number, string,
//             array (with the reference's flags: sequence, keep_singleton,
//             cons, outer), object (insertion-ordered), or function
//   Frame     one scope of variables; frames belong to the evaluation
//             (Context::frames), so closures that refer to their own frame
//             make no reference cycle
#pragma once

#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jsonata.hpp"
#include "limits.hpp"

namespace genroc::jsonata::detail {

struct Value;
struct ArrayV;
struct ObjectV;
struct Function;
struct Regex;  // a compiled regular expression (jsonata_regex.cpp)
using RegexP = std::shared_ptr<const Regex>;

struct Value {
	enum Kind : uint8_t { Undef, Null, Bool, Num, Str, Arr, Obj, Fn } k = Undef;
	bool b = false;
	double n = 0;
	std::shared_ptr<const std::string> s;
	std::shared_ptr<ArrayV> a;
	std::shared_ptr<ObjectV> o;
	std::shared_ptr<Function> f;

	bool undef() const { return k == Undef; }
	static Value null() { Value v; v.k = Null; return v; }
	static Value boolean(bool x) { Value v; v.k = Bool; v.b = x; return v; }
	static Value number(double x) { Value v; v.k = Num; v.n = x; return v; }
	static Value string(std::string x) {
		genroc::limits::count_bytes(x.size() + 32);
		Value v; v.k = Str; v.s = std::make_shared<const std::string>(std::move(x)); return v;
	}
	static Value array(bool sequence = false);
	static Value object();
	const std::string &str() const { return *s; }
};

struct ArrayV {
	std::vector<Value> items;
	bool sequence = false;
	bool keep_singleton = false;
	bool cons = false;
	bool outer = false;
	// a stream of tuples (the focus @ and index # bindings, the parent %):
	// each item an object of "@" (the context) and the variables bound so
	// far; never collapsed to its only item
	bool tuple_stream = false;
};

struct ObjectV {
	std::vector<std::pair<std::string, Value>> entries;
	std::unordered_map<std::string, size_t> index;
	const Value *get(const std::string &key) const {
		auto it = index.find(key);
		return it == index.end() ? nullptr : &entries[it->second].second;
	}
	// `key` by value: it may be a key of this very object
	void set(std::string key, Value v) {
		auto it = index.find(key);
		if (it != index.end()) {
			entries[it->second].second = std::move(v);
			return;
		}
		genroc::limits::count_bytes(key.size() + 2 * genroc::limits::kItemBytes);
		index.emplace(key, entries.size());
		entries.emplace_back(std::move(key), std::move(v));
	}
};

inline Value Value::array(bool sequence) {
	genroc::limits::count_bytes(64);
	Value v; v.k = Arr; v.a = std::make_shared<ArrayV>(); v.a->sequence = sequence; return v;
}
inline Value Value::object() {
	genroc::limits::count_bytes(64);
	Value v; v.k = Obj; v.o = std::make_shared<ObjectV>(); return v; }

// ------------------------------------------------------------------ syntax tree

struct Node;
using NodeP = std::shared_ptr<Node>;

// A parent (%) reference: which step's input it names.  Shared between the
// % node and the step that binds it (its label may be merged with another
// slot's), as the reference's rewrite shares its slot objects.
struct Slot {
	std::string label;	// the variable the tuple binds ("!0", "!1", ...)
	int level = 1;		// how many steps up it still has to climb
};
using SlotP = std::shared_ptr<Slot>;

struct Param;  // a parameter of a function signature (jsonata.cpp)

struct SortTerm {
	bool descending = false;
	NodeP expr;
};

struct Node {
	enum Type {
		Path, Name, String, Number, Literal, Regex, Variable, Wildcard, Descendant,
		Binary, Negate, ArrayCons, ObjectCons, Condition, Coalesce, Block, Bind,
		Call, Lambda, Apply, Sort, Placeholder, Transform, EndMarker,
		Parent,		// %: the input of an earlier step
		IndexStage	// #$var after a step's predicates (str = the variable)
	} type = Literal;
	size_t pos = 0;
	std::string str;	  // Name, String, Variable (without $), Binary operator, Regex pattern
	std::string flags;	  // Regex flags
	double num = 0;		  // Number
	Value value;		  // Literal (true/false/null), Number, String
	NodeP lhs, rhs;		  // Binary, Bind, Apply, Sort (lhs), Condition (cond=lhs)
	NodeP then_, else_;	  // Condition; Transform: then_ = update, else_ = delete
	std::vector<NodeP> items;	// Path steps, ArrayCons items, Block, Call args, Lambda params
	std::vector<std::pair<NodeP, NodeP>> pairs;	 // ObjectCons
	std::shared_ptr<std::vector<std::pair<NodeP, NodeP>>> group;	// a { } after a step
	std::vector<NodeP> predicate;  // filters of an expression outside a path
	std::vector<NodeP> stages;	   // filters of a step of a path
	std::vector<SortTerm> terms;   // Sort
	std::vector<std::string> params;  // Lambda
	bool keep_array = false;		  // [] after it
	bool keep_singleton_array = false;	// Path
	bool consarray = false;				// ArrayCons first/last step of a path
	bool partial = false;				// Call with a ? argument
	RegexP re;			// Regex, compiled once
	// the focus (@$v) and index (#$i) bindings, the parent operator (%)
	std::string focus;	// a step's @$v (without $)
	std::string index;	// a step's #$i (without $) when it has no predicates
	bool tuple = false;	// a step that makes a tuple stream; a path that answers one
	SlotP slot;			// Parent
	SlotP ancestor;		// a step whose input a % names
	bool seeking = false;	// the reference's seekingParent is set
	std::vector<SlotP> seeking_parent;
	// Lambda
	std::shared_ptr<std::vector<Param>> signature;	// <...> when given
	bool thunk = false;	// a tail call, run by apply's loop
};

// ------------------------------------------------------------------ evaluation

struct Frame {
	std::unordered_map<std::string, Value> vars;
	Frame *parent = nullptr;
	const Value *lookup(const std::string &name) const {
		for (const Frame *f = this; f; f = f->parent) {
			auto it = f->vars.find(name);
			if (it != f->vars.end())
				return &it->second;
		}
		return nullptr;
	}
};

struct Context;
using Args = std::vector<Value>;
using BuiltinFn = Value (*)(Context &, Args &, const Value &input);

struct Builtin {
	const char *name;
	const char *signature;	// the reference's signature syntax, e.g. "<s-nn?:s>"
	BuiltinFn fn;
};

struct Function {
	enum Kind { Lambda, Native, Partial, Regex, Chain } kind = Lambda;
	const Node *lambda = nullptr;	// Lambda
	Frame *env = nullptr;			// Lambda: its closure
	Value input;					// Lambda: the context where it was defined
	const Builtin *native = nullptr;	// Native
	Value proc;						// Partial: the function; Chain: the first
	Value second;					// Chain: the second
	std::vector<Value> args;		// Partial: the bound arguments
	std::vector<bool> holes;		// Partial: true where a ? stands
	RegexP re;						// Regex
	std::string pattern;			// Regex (for messages)
	size_t arity() const;
};

struct Context {
	int64_t now_ms = 0;
	genroc::limits::Budget *budget = &genroc::limits::budget();	 // this thread's
	uint64_t steps = 0;
	size_t call_depth = 0;
	std::vector<std::unique_ptr<Frame>> frames;
	Frame *call_env = nullptr;	// the scope of the call being made ($eval's)
	std::vector<std::shared_ptr<const Node>> evaluated;	// $eval's trees, alive with their lambdas
	// A scope lives until the evaluation ends (a closure may hold it): its
	// bytes count against the step's, so no loop of calls grows them unseen.
	Frame *new_frame(Frame *parent) {
		genroc::limits::count_bytes(sizeof(Frame) + 2 * genroc::limits::kItemBytes);
		frames.push_back(std::make_unique<Frame>());
		frames.back()->parent = parent;
		return frames.back().get();
	}
};

[[noreturn]] void fail(const std::string &code, const std::string &message, size_t pos = 0);
void put_utf8(std::string &out, uint32_t cp);

// Evaluation, exposed to the library for the higher-order functions.
Value apply(Context &cx, const Value &proc, Args args, const Value &input, size_t pos = 0);
bool is_function(const Value &v);
bool truthy(const Value &v);	  // $boolean, undefined -> false
Value boolean_of(const Value &v);  // $boolean: undefined stays undefined
bool deep_equal(const Value &a, const Value &b);
// A hash that agrees with deep_equal: equal values hash alike (an object's
// entries in any order; 0 and -0).
size_t hash_value(const Value &v);
Value from_json(const json &j);
std::optional<json> to_json(const Value &v);
std::string stringify(const Value &v, bool pretty);	// JSON.stringify as $string does
std::string number_to_string(double d);				// $string of a number
Value make_sequence(std::vector<Value> items);
void seq_push(Value &seq, Value v);	 // push, growing within the sequence limit
Value append(const Value &a, const Value &b);	// $append
Value flatten_sequence(Value v);	 // collapse as evaluate() does at the end
size_t utf8_length(const std::string &s);
std::vector<std::string> utf8_chars(const std::string &s);
void check_regex_subject(const std::string &s);
void count_step(Context &cx);

// A loop over data: `n` items visited (work), or copied / built into a new
// array (work, and kItemBytes each against the step's bytes).
inline void count_visits(size_t n) { genroc::limits::count_work(n); }
inline void count_items(size_t n) {
	genroc::limits::Budget &b = genroc::limits::budget();
	b.count_work(n);
	b.count_bytes(n * genroc::limits::kItemBytes);
}

// Regular expressions (jsonata_regex.cpp): JavaScript's syntax on PCRE2,
// compiled once per literal; a search's work counts against the
// expression's steps (jsonata_steps) and its memory is bounded, so a
// pattern that backtracks without end (/(a+)+$/ on a run of a's) stops with
// L0001 instead of holding the thread or overflowing the stack.
// nullptr and `error` set (PCRE2's message) when the pattern is invalid.
RegexP compile_regex(const std::string &pattern, const std::string &flags, std::string &error);

// One match: byte offsets of the whole match (group 0) and of each group.
struct RegexMatch {
	static constexpr size_t npos = static_cast<size_t>(-1);
	std::vector<size_t> ov;	 // start, end per group; npos for a group that took no part
	size_t groups() const { return ov.size() / 2; }	 // group 0 included
	bool matched(size_t i) const { return ov[2 * i] != npos; }
	size_t start(size_t i) const { return ov[2 * i]; }
	size_t end(size_t i) const { return ov[2 * i + 1]; }
	std::string group(const std::string &s, size_t i) const;  // "" when unmatched
};

// The searches of one regular expression in one subject (at most
// jsonata_regex_subject bytes): the subject checked once, the match data
// reused.
class RegexSearch {
public:
	RegexSearch(Context &cx, const Regex &re, const std::string &s);
	~RegexSearch();
	RegexSearch(const RegexSearch &) = delete;
	RegexSearch &operator=(const RegexSearch &) = delete;
	// The first match at or after byte `from` (a character's start).
	bool find(size_t from, RegexMatch &m);

private:
	struct State;
	const std::string &s_;
	std::unique_ptr<State> st_;
	const Regex &re_;
	bool valid_ = true;
};

Value regex_match_object(const RegexMatch &m, const std::string &subject);

const Builtin *find_builtin(const std::string &name);

// $eval(expr[, context]) (jsonata.cpp: it parses and evaluates in the
// caller's scope, under the same steps, call depth and bytes)
Value f_eval(Context &cx, Args &args, const Value &input);
Value native_function(const Builtin *b);

}  // namespace genroc::jsonata::detail
