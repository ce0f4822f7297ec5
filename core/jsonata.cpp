// jsonata.cpp — JSONata's lexer, Pratt parser, the path rewrite and the
// evaluator, following the semantics of the reference implementation (the
// `jsonata` npm package): sequences and their flattening, singleton
// collapse, predicates, grouping, ~>, closures, partial application.
//
// Every recursive function holds a limits::RecursionGuard (whose Error is
// turned into JsonataError L0001 at the API), and evaluation counts its
// steps (jsonata_steps) and nested calls (jsonata_call_depth).

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "jsonata_internal.hpp"
#include "limits.hpp"

namespace genroc::jsonata {

using namespace detail;
namespace lim = genroc::limits;

namespace detail {

void fail(const std::string &code, const std::string &message, size_t pos) {
	throw JsonataError(code, message, pos);
}

void count_step(Context &cx) {
	cx.budget->count_work(1);
	if (++cx.steps > lim::JSONATA_STEPS)
		fail("L0001", "the expression took more than " + std::to_string(lim::JSONATA_STEPS) +
						  " evaluation steps" + lim::named("jsonata_steps"));
}

// A code point as UTF-8 (the lexer's escapes, the library's case mapping).
void put_utf8(std::string &out, uint32_t cp) {
	if (cp < 0x80) {
		out += static_cast<char>(cp);
	} else if (cp < 0x800) {
		out += static_cast<char>(0xC0 | (cp >> 6));
		out += static_cast<char>(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		out += static_cast<char>(0xE0 | (cp >> 12));
		out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
		out += static_cast<char>(0x80 | (cp & 0x3F));
	} else {
		out += static_cast<char>(0xF0 | (cp >> 18));
		out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
		out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
		out += static_cast<char>(0x80 | (cp & 0x3F));
	}
}

}  // namespace detail

namespace {

// ------------------------------------------------------------------ lexer

struct Token {
	enum Kind { End, Op, Name, Var, Str, Num, Val, Regex } kind = End;
	std::string text;	// Op symbol, Name, Var (without $), Str value, Regex pattern
	std::string flags;
	double num = 0;
	Value value;
	size_t pos = 0;
};

const char *const kOps[] = {"..", ":=", "!=", ">=", "<=", "**", "~>", "?:", "??",
							".", "[", "]", "{", "}", "(", ")", ",", "@", "#", ";", ":",
							"?", "+", "-", "*", "/", "%", "|", "=", "<", ">", "^", "&", "!", "~"};

class Lexer {
  public:
	explicit Lexer(const std::string &s) : s_(s) {}

	Token next(bool prefix) {
		skip_space();
		Token t;
		t.pos = i_;
		if (i_ >= s_.size())
			return t;
		char c = s_[i_];
		if (prefix && c == '/')
			return regex(t);
		if (c == '"' || c == '\'')
			return string(t, c);
		if (std::isdigit(static_cast<unsigned char>(c)) ||
			(c == '-' && false))
			return number(t);
		if (c == '`') {
			size_t end = s_.find('`', i_ + 1);
			if (end == std::string::npos)
				fail("S0105", "Quoted property name must be terminated with a backquote (`)", i_);
			t.kind = Token::Name;
			t.text = s_.substr(i_ + 1, end - i_ - 1);
			i_ = end + 1;
			return t;
		}
		for (const char *op : kOps) {
			size_t n = std::strlen(op);
			if (s_.compare(i_, n, op) == 0) {
				// "..." is not an operator; ".." before a digit is.
				t.kind = Token::Op;
				t.text = op;
				i_ += n;
				return t;
			}
		}
		// a name: up to an operator character or space
		size_t start = i_;
		bool var = c == '$';
		if (var)
			i_++;
		while (i_ < s_.size()) {
			unsigned char ch = static_cast<unsigned char>(s_[i_]);
			if (std::isspace(ch) || std::strchr("\"'.[]{}()@#,;:?+-*/%|=<>^&!~`", ch))
				break;
			i_++;
		}
		std::string word = s_.substr(start + (var ? 1 : 0), i_ - start - (var ? 1 : 0));
		if (var) {
			t.kind = Token::Var;
			t.text = word;
			return t;
		}
		if (word == "and" || word == "or" || word == "in") {
			t.kind = Token::Op;
			t.text = word;
			return t;
		}
		if (word == "true" || word == "false" || word == "null") {
			t.kind = Token::Val;
			t.value = word == "null" ? Value::null() : Value::boolean(word == "true");
			t.text = word;
			return t;
		}
		if (word.empty())
			fail("S0204", "Unknown operator: " + std::string(1, c), i_);
		t.kind = Token::Name;
		t.text = word;
		return t;
	}

  private:
	void skip_space() {
		for (;;) {
			while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
				i_++;
			if (s_.compare(i_, 2, "/*") == 0) {
				size_t end = s_.find("*/", i_ + 2);
				if (end == std::string::npos)
					fail("S0106", "Comment has no closing tag", i_);
				i_ = end + 2;
				continue;
			}
			break;
		}
	}

	Token regex(Token &t) {
		size_t j = i_ + 1;
		int depth = 0;
		while (j < s_.size()) {
			char c = s_[j];
			if (c == '\\') {
				j += 2;
				continue;
			}
			if (c == '[')
				depth = 1;
			else if (c == ']')
				depth = 0;
			else if (c == '/' && depth == 0)
				break;
			j++;
		}
		if (j >= s_.size())
			fail("S0302", "No terminating / in regular expression", i_);
		t.text = s_.substr(i_ + 1, j - i_ - 1);
		if (t.text.empty())
			fail("S0301", "Empty regular expressions are not allowed", i_);
		j++;
		size_t f = j;
		while (j < s_.size() && (s_[j] == 'i' || s_[j] == 'm'))
			j++;
		t.flags = s_.substr(f, j - f);
		t.kind = Token::Regex;
		i_ = j;
		return t;
	}


	uint32_t hex4(size_t at) {
		if (at + 4 > s_.size())
			fail("S0104", "The escape sequence \\u must be followed by 4 hex digits", at);
		uint32_t v = 0;
		for (size_t k = 0; k < 4; k++) {
			char c = s_[at + k];
			v <<= 4;
			if (c >= '0' && c <= '9') v |= c - '0';
			else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
			else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
			else fail("S0104", "The escape sequence \\u must be followed by 4 hex digits", at);
		}
		return v;
	}

	Token string(Token &t, char quote) {
		std::string out;
		size_t j = i_ + 1;
		for (;;) {
			if (j >= s_.size())
				fail("S0101", "String literal must be terminated by a matching quote", i_);
			char c = s_[j];
			if (c == quote) {
				j++;
				break;
			}
			if (c == '\\') {
				if (j + 1 >= s_.size())
					fail("S0101", "String literal must be terminated by a matching quote", i_);
				char e = s_[j + 1];
				j += 2;
				switch (e) {
				case '"': out += '"'; break;
				case '\\': out += '\\'; break;
				case '/': out += '/'; break;
				case 'b': out += '\b'; break;
				case 'f': out += '\f'; break;
				case 'n': out += '\n'; break;
				case 'r': out += '\r'; break;
				case 't': out += '\t'; break;
				case 'u': {
					uint32_t cp = hex4(j);
					j += 4;
					if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(j, 2, "\\u") == 0) {
						uint32_t lo = hex4(j + 2);
						if (lo >= 0xDC00 && lo < 0xE000) {
							cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
							j += 6;
						}
					}
					detail::put_utf8(out, cp);
					break;
				}
				default:
					fail("S0103", std::string("Unsupported escape sequence: \\") + e, j - 2);
				}
				continue;
			}
			out += c;
			j++;
		}
		t.kind = Token::Str;
		t.text = out;
		t.value = Value::string(out);
		i_ = j;
		return t;
	}

	Token number(Token &t) {
		size_t j = i_;
		auto digits = [&] {
			while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j])))
				j++;
		};
		if (s_[j] == '0')
			j++;
		else
			digits();
		if (j + 1 < s_.size() && s_[j] == '.' && std::isdigit(static_cast<unsigned char>(s_[j + 1]))) {
			j++;
			digits();
		}
		if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
			size_t k = j + 1;
			if (k < s_.size() && (s_[k] == '+' || s_[k] == '-'))
				k++;
			if (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) {
				j = k;
				digits();
			}
		}
		std::string text = s_.substr(i_, j - i_);
		double d = std::strtod(text.c_str(), nullptr);
		if (!std::isfinite(d))
			fail("S0102", "Number out of range: " + text, i_);
		t.kind = Token::Num;
		t.num = d;
		t.text = text;
		i_ = j;
		return t;
	}

	const std::string &s_;
	size_t i_ = 0;
};

}  // namespace

// ------------------------------------------------------------------ signatures
// The reference's signature syntax: b boolean, n number, s string, l null,
// a array (a<x> of x), o object, f function (f<...> its own signature), j any
// JSON, x anything, u = (bnsl); ? optional, + one or more, - the context when
// absent; after ':' the result's type (not checked, as in the reference).

namespace detail {

struct Param {
	std::string types;	// letters
	std::string sub;	// array subtype letters
	bool optional = false, variadic = false, context = false;
};

}  // namespace detail

namespace {

std::vector<Param> parse_signature(const std::string &sig, size_t pos = 0) {
	std::vector<Param> out;
	size_t i = 1;	// past '<'
	auto bad = [&](const char *code, const std::string &why) {
		fail(code, why + " (signature " + sig + ")", pos);
	};
	while (i < sig.size() && sig[i] != '>' && sig[i] != ':') {
		Param p;
		char c = sig[i];
		if (c == '(') {
			size_t end = sig.find(')', i);
			if (end == std::string::npos)
				bad("S0401", "A choice group in a function signature must end with )");
			p.types = sig.substr(i + 1, end - i - 1);
			if (p.types.find('<') != std::string::npos)
				bad("S0402", "Choice groups containing parameterized types are not supported");
			i = end + 1;
		} else if (c == '<') {
			bad("S0401", "Type parameters can only be applied to functions and arrays");
		} else {
			if (!std::strchr("bnslaofjxu", c))
				bad("S0401", std::string("Unknown type ") + c + " in a function signature");
			p.types = std::string(1, c);
			i++;
			if (i < sig.size() && sig[i] == '<') {
				if (c != 'a' && c != 'f')
					bad("S0401", "Type parameters can only be applied to functions and arrays");
				size_t start = i;
				int depth = 0;
				do {
					if (sig[i] == '<') depth++;
					else if (sig[i] == '>') depth--;
					i++;
				} while (depth > 0 && i < sig.size());
				if (depth > 0)
					bad("S0401", "A type parameter in a function signature must end with >");
				if (c == 'a')
					p.sub = sig.substr(start + 1, i - start - 2);
			}
		}
		while (i < sig.size() && (sig[i] == '?' || sig[i] == '+' || sig[i] == '-')) {
			if (sig[i] == '?') p.optional = true;
			if (sig[i] == '+') p.variadic = true;
			if (sig[i] == '-') p.context = true;
			i++;
		}
		std::string expanded;
		for (char t : p.types) {
			if (t == 'j') expanded += "bnsloa";
			else if (t == 'u') expanded += "bnsl";
			else if (t == 'x') expanded += "bnsloaf";
			else expanded += t;
		}
		p.types = expanded;
		out.push_back(p);
	}
	return out;
}

}  // namespace

namespace {

// ------------------------------------------------------------------ parser

int binding_power(const std::string &op) {
	static const std::unordered_map<std::string, int> bp = {
		// terminals (] } ) , ; : .. |) bind nothing, as in the reference
		{".", 75}, {"[", 80}, {"{", 70}, {"(", 80}, {"@", 80}, {"#", 80}, {"?", 20}, {"+", 50}, {"-", 50},
		{"*", 60}, {"/", 60}, {"%", 60}, {"=", 40}, {"<", 40}, {">", 40},
		{"^", 40}, {"**", 60}, {":=", 10}, {"!=", 40}, {"<=", 40}, {">=", 40},
		{"~>", 40}, {"?:", 40}, {"??", 40}, {"and", 30}, {"or", 25}, {"in", 40}, {"&", 50},
		{"!", 0}, {"~", 0}};
	auto it = bp.find(op);
	return it == bp.end() ? 0 : it->second;
}

NodeP make(Node::Type type, size_t pos) {
	auto n = std::make_shared<Node>();
	n->type = type;
	n->pos = pos;
	return n;
}

class Parser {
  public:
	explicit Parser(const std::string &text) : lex_(text) { advance(true); }

	NodeP parse_all() {
		NodeP e = expression(0);
		if (tok_.kind != Token::End)
			fail("S0201", "Syntax error: " + describe(tok_), tok_.pos);
		return e;
	}

  private:
	static std::string describe(const Token &t) {
		if (t.kind == Token::End)
			return "(end)";
		return t.text;
	}

	bool is_op(const char *op) const { return tok_.kind == Token::Op && tok_.text == op; }

	void advance(bool prefix = false) {
		tok_ = lex_.next(prefix);
		// lexed (as the reference lexes them) but no operator of the grammar
		if (tok_.kind == Token::Op && (tok_.text == "!" || tok_.text == "~"))
			fail("S0204", "Unknown operator: " + tok_.text, tok_.pos);
	}

	void expect(const char *op, bool prefix = false) {
		if (!is_op(op)) {
			if (tok_.kind == Token::End)
				fail("S0203", std::string("Expected ") + op + " before end of expression", tok_.pos);
			fail("S0202", std::string("Expected ") + op + ", got " + describe(tok_), tok_.pos);
		}
		advance(prefix);
	}

	// Whether the current token ends an expression (its left binding power).
	int lbp() const {
		if (tok_.kind == Token::Op)
			return binding_power(tok_.text);
		return 0;
	}

	NodeP expression(int rbp) {
		lim::RecursionGuard guard;
		if (++depth_ > lim::JSONATA_DEPTH)
			fail("L0001", "the expression nests deeper than " + std::to_string(lim::JSONATA_DEPTH) +
							  " levels" + lim::named("jsonata_depth"),
				 tok_.pos);
		Token t = tok_;
		advance();
		NodeP left = nud(t);
		while (rbp < lbp()) {
			Token op = tok_;
			advance(true);
			left = led(op, left);
		}
		depth_--;
		return left;
	}

	NodeP nud(const Token &t) {
		switch (t.kind) {
		case Token::End:
			// the reference parses on and refuses the end in its rewrite
			// (S0207) unless a missing closer is found first (S0203)
			return make(Node::EndMarker, t.pos);
		case Token::Name: {
			auto n = make(Node::Name, t.pos);
			n->str = t.text;
			return n;
		}
		case Token::Var: {
			auto n = make(Node::Variable, t.pos);
			n->str = t.text;
			return n;
		}
		case Token::Str: {
			auto n = make(Node::String, t.pos);
			n->str = t.text;
			n->value = t.value;
			return n;
		}
		case Token::Num: {
			auto n = make(Node::Number, t.pos);
			n->num = t.num;
			n->value = Value::number(t.num);
			return n;
		}
		case Token::Val: {
			auto n = make(Node::Literal, t.pos);
			n->value = t.value;
			n->str = t.text;
			return n;
		}
		case Token::Regex: {
			auto n = make(Node::Regex, t.pos);
			n->str = t.text;
			n->flags = t.flags;
			std::string error;
			n->re = compile_regex(t.text, t.flags, error);
			if (!n->re)
				fail("S0303", "Invalid regular expression /" + t.text + "/: " + error, t.pos);
			return n;
		}
		case Token::Op:
			break;
		}
		const std::string &op = t.text;
		if (op == "and" || op == "or" || op == "in") {
			auto n = make(Node::Name, t.pos);
			n->str = op;
			return n;
		}
		if (op == "-") {
			auto n = make(Node::Negate, t.pos);
			n->lhs = expression(70);
			return n;
		}
		if (op == "*")
			return make(Node::Wildcard, t.pos);
		if (op == "**")
			return make(Node::Descendant, t.pos);
		if (op == "%")
			return make(Node::Parent, t.pos);
		if (op == "(") {
			auto n = make(Node::Block, t.pos);
			while (!is_op(")")) {
				n->items.push_back(expression(0));
				if (!is_op(";"))
					break;
				advance(true);
			}
			expect(")");
			return n;
		}
		if (op == "[") {
			auto n = make(Node::ArrayCons, t.pos);
			if (!is_op("]")) {
				for (;;) {
					NodeP item = expression(0);
					if (is_op("..")) {
						size_t p = tok_.pos;
						advance(true);
						auto r = make(Node::Binary, p);
						r->str = "..";
						r->lhs = item;
						r->rhs = expression(0);
						item = r;
					}
					n->items.push_back(item);
					if (!is_op(","))
						break;
					advance(true);
				}
			}
			expect("]");
			return n;
		}
		if (op == "{") {
			auto n = make(Node::ObjectCons, t.pos);
			parse_pairs(n->pairs);
			return n;
		}
		if (op == "|") {
			auto n = make(Node::Transform, t.pos);
			n->lhs = expression(0);
			expect("|", true);
			n->then_ = expression(0);
			if (is_op(",")) {
				advance(true);
				n->else_ = expression(0);
			}
			expect("|");
			return n;
		}
		if (op == "?")
			return make(Node::Placeholder, t.pos);
		fail("S0211", "The symbol " + op + " cannot be used as a unary operator", t.pos);
	}

	void parse_pairs(std::vector<std::pair<NodeP, NodeP>> &pairs) {
		if (!is_op("}")) {
			for (;;) {
				NodeP k = expression(0);
				expect(":", true);
				NodeP v = expression(0);
				pairs.emplace_back(k, v);
				if (!is_op(","))
					break;
				advance(true);
			}
		}
		expect("}");
	}

	NodeP led(const Token &t, NodeP left) {
		const std::string &op = t.text;
		if (op == "(") {
			if (left->type == Node::Name && (left->str == "function" || left->str == "λ"))
				return lambda(t, left);
			auto n = make(Node::Call, t.pos);
			n->lhs = left;
			if (!is_op(")")) {
				for (;;) {
					NodeP a = expression(0);
					if (a->type == Node::Placeholder)
						n->partial = true;
					n->items.push_back(a);
					if (!is_op(","))
						break;
					advance(true);
				}
			}
			expect(")");
			return n;
		}
		if (op == "[") {
			if (is_op("]")) {
				Node *step = left.get();
				while (step->type == Node::Binary && step->str == "[")
					step = step->lhs.get();
				step->keep_array = true;
				advance();
				return left;
			}
			auto n = make(Node::Binary, t.pos);
			n->str = "[";
			n->lhs = left;
			n->rhs = expression(0);
			expect("]");
			return n;
		}
		if (op == "{") {
			auto n = make(Node::Binary, t.pos);
			n->str = "{";
			n->lhs = left;
			auto obj = make(Node::ObjectCons, t.pos);
			parse_pairs(obj->pairs);
			n->rhs = obj;
			return n;
		}
		if (op == "?") {
			auto n = make(Node::Condition, t.pos);
			n->lhs = left;
			n->then_ = expression(0);
			if (is_op(":")) {
				advance(true);
				n->else_ = expression(0);
			}
			return n;
		}
		if (op == "?:" || op == "??") {
			auto n = make(op == "?:" ? Node::Condition : Node::Coalesce, t.pos);
			n->lhs = left;
			n->then_ = left;
			n->else_ = expression(0);
			return n;
		}
		if (op == ":=") {
			if (left->type != Node::Variable)
				fail("S0212", "The left side of := must be a variable name (start with $)", t.pos);
			auto n = make(Node::Bind, t.pos);
			n->lhs = left;
			n->rhs = expression(binding_power(":=") - 1);
			return n;
		}
		if (op == "^") {
			auto n = make(Node::Sort, t.pos);
			n->lhs = left;
			expect("(");
			for (;;) {
				SortTerm term;
				if (is_op("<")) {
					advance(true);
				} else if (is_op(">")) {
					term.descending = true;
					advance(true);
				}
				term.expr = expression(0);
				n->terms.push_back(term);
				if (!is_op(","))
					break;
				advance(true);
			}
			expect(")");
			return n;
		}
		if (op == "@" || op == "#") {
			auto n = make(Node::Binary, t.pos);
			n->str = op;
			n->lhs = left;
			n->rhs = expression(binding_power(op));
			if (n->rhs->type != Node::Variable)
				fail("S0214", "The right side of " + op + " must be a variable name (start with $)",
					 n->rhs->pos);
			return n;
		}
		static const char *const binary[] = {".", "+", "-", "*", "/", "%", "=", "!=", "<", "<=",
											 ">", ">=", "&", "and", "or", "in", "~>"};
		for (const char *b : binary) {
			if (op == b) {
				auto n = make(op == "~>" ? Node::Apply : Node::Binary, t.pos);
				n->str = op;
				n->lhs = left;
				n->rhs = expression(binding_power(op));
				return n;
			}
		}
		fail("S0201", "Syntax error: " + op, t.pos);
	}

	NodeP lambda(const Token &t, NodeP) {
		auto n = make(Node::Lambda, t.pos);
		if (!is_op(")")) {
			for (;;) {
				if (tok_.kind != Token::Var)
					fail("S0208", "Parameter " + describe(tok_) +
									  " of function definition must be a variable name (start with $)",
						 tok_.pos);
				n->params.push_back(tok_.text);
				advance();
				if (!is_op(","))
					break;
				advance(true);
			}
		}
		expect(")");
		if (is_op("<")) {
			// a signature: its tokens' text, checked at each call
			size_t at = tok_.pos;
			std::string sig;
			int depth = 0;
			do {
				if (tok_.kind == Token::End)
					fail("S0203", "Expected > before end of expression", tok_.pos);
				if (is_op("<"))
					depth++;
				else if (is_op(">"))
					depth--;
				sig += tok_.text;
				advance();
			} while (depth > 0);
			n->signature = std::make_shared<std::vector<Param>>(parse_signature(sig, at));
		}
		expect("{", true);
		n->lhs = expression(0);
		expect("}");
		return n;
	}

	Lexer lex_;
	Token tok_;
	size_t depth_ = 0;
};

// ------------------------------------------------------------------ rewrite
// The reference's processAST: paths become lists of steps, predicates and
// group-by attach to steps, @ and # mark the steps that make tuple streams,
// and each % is resolved to the step whose input it names (that step then
// binds its input under the %'s label in the tuples it makes).

class Rewriter {
  public:
	NodeP top(const NodeP &e) {
		NodeP r = process(e);
		if (r->type == Node::Parent || r->seeking)
			fail("S0217", "The parent operator % cannot be used here: no step before it has an input to name",
				 r->pos);
		return r;
	}

  private:
	int next_label_ = 0;

	// a % looking for its step: climbs back over `node` (a step)
	SlotP seek_parent(Node &node, SlotP slot) {
		lim::RecursionGuard guard;
		switch (node.type) {
		case Node::Name:
		case Node::Wildcard:
			if (--slot->level == 0) {
				if (node.ancestor)	// one tuple variable for both
					slot->label = node.ancestor->label;
				node.ancestor = slot;
				node.tuple = true;
			}
			break;
		case Node::Parent:
			slot->level++;
			break;
		case Node::Block:
			if (!node.items.empty()) {
				node.tuple = true;
				slot = seek_parent(*node.items.back(), slot);
			}
			break;
		case Node::Path: {
			node.tuple = true;
			size_t i = node.items.size();
			slot = seek_parent(*node.items[--i], slot);
			while (slot->level > 0 && i > 0)
				slot = seek_parent(*node.items[--i], slot);
			break;
		}
		default:
			fail("S0217", "The parent operator % cannot name the input of this expression", node.pos);
		}
		return slot;
	}

	static void push_ancestry(Node &result, const Node &value) {
		if (!value.seeking && value.type != Node::Parent)
			return;
		std::vector<SlotP> slots = value.seeking_parent;
		if (value.type == Node::Parent)
			slots.push_back(value.slot);
		result.seeking = true;
		for (auto &s : slots)
			result.seeking_parent.push_back(s);
	}

	void resolve_ancestry(Node &path) {
		Node &last = *path.items.back();
		std::vector<SlotP> slots = last.seeking_parent;
		if (last.type == Node::Parent)
			slots.push_back(last.slot);
		for (SlotP slot : slots) {
			long index = static_cast<long>(path.items.size()) - 2;
			while (slot->level > 0) {
				if (index < 0) {
					path.seeking = true;
					path.seeking_parent.push_back(slot);
					break;
				}
				Node *step = path.items[static_cast<size_t>(index--)].get();
				// contiguous steps that bind the focus count as one
				while (index >= 0 && !step->focus.empty() &&
					   !path.items[static_cast<size_t>(index)]->focus.empty())
					step = path.items[static_cast<size_t>(index--)].get();
				slot = seek_parent(*step, slot);
			}
		}
	}

	// The reference's tail-call rewrite: a call in tail position becomes a
	// thunk that the caller's apply runs in a loop (constant stack).
	static NodeP tail_call(const NodeP &e) {
		if (e->type == Node::Call && !e->partial && e->predicate.empty() && !e->group) {
			auto thunk = make(Node::Lambda, e->pos);
			thunk->thunk = true;
			thunk->lhs = e;
			return thunk;
		}
		if (e->type == Node::Condition) {
			if (e->then_ && e->then_ != e->lhs)
				e->then_ = tail_call(e->then_);
			if (e->else_)
				e->else_ = tail_call(e->else_);
		} else if (e->type == Node::Block && !e->items.empty()) {
			e->items.back() = tail_call(e->items.back());
		}
		return e;
	}

	void process_all(Node &parent, std::vector<NodeP> &v) {
		for (auto &x : v) {
			x = process(x);
			push_ancestry(parent, *x);
		}
	}

	// As the reference: a [] on the expression stays on what it became.
	NodeP process(const NodeP &e) {
		bool keep = e->keep_array;
		NodeP r = process_node(e);
		if (keep)
			r->keep_array = true;
		return r;
	}

	NodeP process_node(const NodeP &e) {
		lim::RecursionGuard guard;
		NodeP result = e;
		switch (e->type) {
		case Node::EndMarker:
			fail("S0207", "Unexpected end of expression", e->pos);
		case Node::Parent:
			e->slot = std::make_shared<Slot>();
			e->slot->label = "!" + std::to_string(next_label_++);
			break;
		case Node::Binary:
			if (e->str == ".")
				return path(e);
			if (e->str == "[") {
				result = process(e->lhs);
				Node *step = result.get();
				bool stages = false;
				if (result->type == Node::Path) {
					step = result->items.back().get();
					stages = true;
				}
				if (step->group)
					fail("S0209", "A predicate cannot follow a grouping expression in a step", e->pos);
				NodeP pred = process(e->rhs);
				if (pred->seeking) {
					for (auto &slot : pred->seeking_parent) {
						if (slot->level == 1)
							seek_parent(*step, slot);
						else
							slot->level--;
					}
					push_ancestry(*step, *pred);
				}
				(stages ? step->stages : step->predicate).push_back(pred);
				return result;
			}
			if (e->str == "{") {
				result = process(e->lhs);
				if (result->group)
					fail("S0210", "Each step can only have one grouping expression", e->pos);
				auto g = std::make_shared<std::vector<std::pair<NodeP, NodeP>>>();
				for (auto &p : e->rhs->pairs)
					g->emplace_back(process(p.first), process(p.second));
				result->group = g;
				return result;
			}
			if (e->str == "@") {
				result = process(e->lhs);
				Node *step = result.get();
				if (result->type == Node::Path)
					step = result->items.back().get();
				if (!step->stages.empty() || !step->predicate.empty())
					fail("S0215", "A context variable binding must precede any predicates on a step",
						 e->pos);
				if (step->type == Node::Sort)
					fail("S0216", "A context variable binding must precede the 'order-by' clause on a step",
						 e->pos);
				if (e->keep_array)
					step->keep_array = true;
				step->focus = e->rhs->str;
				step->tuple = true;
				return result;
			}
			if (e->str == "#") {
				result = process(e->lhs);
				Node *step = result.get();
				if (result->type == Node::Path) {
					step = result->items.back().get();
				} else {
					NodeP p = make(Node::Path, e->pos);
					p->items.push_back(result);
					result = p;
					if (!step->predicate.empty()) {
						step->stages = std::move(step->predicate);
						step->predicate.clear();
					}
				}
				if (step->stages.empty()) {
					step->index = e->rhs->str;
				} else {
					auto st = make(Node::IndexStage, e->pos);
					st->str = e->rhs->str;
					step->stages.push_back(st);
				}
				step->tuple = true;
				if (e->keep_array)
					result->keep_array = true;
				return result;
			}
			e->lhs = process(e->lhs);
			push_ancestry(*e, *e->lhs);
			e->rhs = process(e->rhs);
			push_ancestry(*e, *e->rhs);
			break;
		case Node::Name: {
			result = make(Node::Path, e->pos);
			result->items.push_back(e);
			if (e->keep_array)
				result->keep_singleton_array = true;
			return result;
		}
		case Node::Negate:
			e->lhs = process(e->lhs);
			if (e->lhs->type == Node::Number) {
				auto n = make(Node::Number, e->pos);
				n->num = -e->lhs->num;
				n->value = Value::number(n->num);
				n->keep_array = e->keep_array;
				return n;
			}
			push_ancestry(*e, *e->lhs);
			break;
		case Node::ArrayCons:
		case Node::Block:
			process_all(*e, e->items);
			if (e->type == Node::Block)
				for (auto &x : e->items)
					if (x->consarray || (x->type == Node::Path && x->items[0]->consarray))
						e->consarray = true;
			break;
		case Node::ObjectCons:
			for (auto &p : e->pairs) {
				p.first = process(p.first);
				push_ancestry(*e, *p.first);
				p.second = process(p.second);
				push_ancestry(*e, *p.second);
			}
			break;
		case Node::Condition:
		case Node::Coalesce: {
			bool same = e->then_ == e->lhs;	 // ?: and ?? test and give the same operand
			e->lhs = process(e->lhs);
			push_ancestry(*e, *e->lhs);
			if (e->then_) {
				e->then_ = same ? e->lhs : process(e->then_);
				if (!same)
					push_ancestry(*e, *e->then_);
			}
			if (e->else_) {
				e->else_ = process(e->else_);
				push_ancestry(*e, *e->else_);
			}
			break;
		}
		case Node::Bind:
			e->lhs = process(e->lhs);
			e->rhs = process(e->rhs);
			push_ancestry(*e, *e->rhs);
			break;
		case Node::Apply:
			e->lhs = process(e->lhs);
			e->rhs = process(e->rhs);
			break;
		case Node::Call:
			process_all(*e, e->items);
			e->lhs = process(e->lhs);
			break;
		case Node::Lambda:
			e->lhs = tail_call(process(e->lhs));
			break;
		case Node::Transform:
			e->lhs = process(e->lhs);
			e->then_ = process(e->then_);
			if (e->else_)
				e->else_ = process(e->else_);
			break;
		case Node::Sort: {
			result = process(e->lhs);
			if (result->type != Node::Path) {
				NodeP p = make(Node::Path, e->pos);
				p->items.push_back(result);
				result = p;
			}
			auto s = make(Node::Sort, e->pos);
			s->terms = e->terms;
			for (auto &t : s->terms) {
				t.expr = process(t.expr);
				push_ancestry(*s, *t.expr);
			}
			result->items.push_back(s);
			resolve_ancestry(*result);
			return result;
		}
		default:
			break;
		}
		return result;
	}

	NodeP path(const NodeP &e) {
		NodeP lstep = process(e->lhs);
		NodeP result;
		if (lstep->type == Node::Path) {
			result = lstep;
		} else {
			result = make(Node::Path, e->pos);
			result->items.push_back(lstep);
		}
		if (lstep->type == Node::Parent) {
			result->seeking = true;
			result->seeking_parent = {lstep->slot};
		}
		NodeP rest = process(e->rhs);
		if (rest->type == Node::Path) {
			for (auto &s : rest->items)
				result->items.push_back(s);
		} else {
			if (!rest->predicate.empty()) {
				rest->stages = std::move(rest->predicate);
				rest->predicate.clear();
			}
			result->items.push_back(rest);
		}
		for (auto &step : result->items) {
			if (step->type == Node::Number || step->type == Node::Literal)
				fail("S0213", "The literal value " +
								  (step->type == Node::Number ? format_number(step->num) : step->str) +
								  " cannot be used as a step within a path expression",
					 step->pos);
			if (step->type == Node::String)
				step->type = Node::Name;
		}
		for (auto &step : result->items)
			if (step->keep_array)
				result->keep_singleton_array = true;
		if (result->items.front()->type == Node::ArrayCons)
			result->items.front()->consarray = true;
		if (result->items.back()->type == Node::ArrayCons)
			result->items.back()->consarray = true;
		resolve_ancestry(*result);
		return result;
	}
};

// ------------------------------------------------------------------ values

bool is_array(const Value &v) { return v.k == Value::Arr; }
bool is_sequence(const Value &v) { return v.k == Value::Arr && v.a->sequence; }

Value seq_of(const Value &v) {
	Value s = Value::array(true);
	if (!v.undef())
		s.a->items.push_back(v);
	return s;
}

void validate_args(const std::vector<Param> &params, const std::string &name, Args &args,
				   const Value &input, size_t pos);

// ------------------------------------------------------------------ evaluator

class Evaluator {
  public:
	explicit Evaluator(Context &cx) : cx_(cx) {}

	Value eval(const Node &e, const Value &input, Frame *env) {
		lim::RecursionGuard guard;
		count_step(cx_);
		Value result;
		switch (e.type) {
		case Node::Path: result = path(e, input, env); break;
		case Node::Binary: result = binary(e, input, env); break;
		case Node::Negate: {
			Value v = eval(*e.lhs, input, env);
			if (v.undef())
				break;
			if (v.k != Value::Num)
				fail("D1002", "Cannot negate a non-numeric value: " + stringify(v, false), e.pos);
			if (!std::isfinite(v.n))
				fail("D1001", "Number out of range: null", e.pos);
			result = Value::number(-v.n);
			break;
		}
		case Node::ArrayCons: result = array_cons(e, input, env); break;
		case Node::ObjectCons: result = group(e.pairs, input, env, e.pos); break;
		case Node::Name: result = lookup(input, e.str); break;
		case Node::String:
		case Node::Number:
		case Node::Literal: result = e.value; break;
		case Node::Wildcard: result = wildcard(input); break;
		case Node::Descendant: result = descendants(input); break;
		case Node::Condition: {
			Value c = eval(*e.lhs, input, env);
			if (truthy(c))
				result = e.then_.get() == e.lhs.get() ? c : eval(*e.then_, input, env);
			else if (e.else_)
				result = eval(*e.else_, input, env);
			break;
		}
		case Node::Coalesce: {
			Value c = eval(*e.lhs, input, env);
			result = !c.undef() ? c : eval(*e.else_, input, env);
			break;
		}
		case Node::Block: {
			Frame *f = cx_.new_frame(env);
			for (auto &x : e.items)
				result = eval(*x, input, f);
			break;
		}
		case Node::Bind: {
			Value v = eval(*e.rhs, input, env);
			env->vars[e.lhs->str] = v;
			result = v;
			break;
		}
		case Node::Regex: {
			result.k = Value::Fn;
			result.f = std::make_shared<Function>();
			result.f->kind = Function::Regex;
			result.f->re = e.re;
			result.f->pattern = e.str;
			break;
		}
		case Node::Variable: result = variable(e, input, env); break;
		case Node::Call: result = call(e, input, env, nullptr); break;
		case Node::Lambda: {
			result.k = Value::Fn;
			result.f = std::make_shared<Function>();
			result.f->kind = Function::Lambda;
			result.f->lambda = &e;
			result.f->env = env;
			result.f->input = input;
			break;
		}
		case Node::Apply: result = apply_op(e, input, env); break;
		case Node::Sort: result = sort(e, input, env); break;
		case Node::Transform: result = transform(e, input, env); break;
		case Node::Parent:
			if (const Value *v = env->lookup(e.slot->label))
				result = *v;
			break;
		case Node::Placeholder:
		case Node::EndMarker:
		case Node::IndexStage:
			fail("S0201", "Syntax error: ?", e.pos);
		}
		for (auto &p : e.predicate)
			result = filter(*p, result, env);
		if (e.type != Node::Path && e.group)
			result = group(*e.group, result, env, e.pos);
		if (is_sequence(result) && !result.a->tuple_stream) {
			if (e.keep_array)
				result.a->keep_singleton = true;
			if (result.a->items.empty())
				result = Value();
			else if (result.a->items.size() == 1 && !result.a->keep_singleton)
				result = Value(result.a->items[0]);
		}
		return result;
	}

	// A call: the function applied, then the tail calls it answers (thunks)
	// run in this loop, so a tail recursion runs in constant stack and call
	// depth.
	Value apply_fn(const Value &proc, Args args, const Value &input, size_t pos) {
		lim::RecursionGuard guard;
		if (++cx_.call_depth > lim::JSONATA_CALL_DEPTH)
			fail("U1001", "Stack overflow error: function calls nest deeper than " +
							  std::to_string(lim::JSONATA_CALL_DEPTH) +
							  " levels; consider rewriting the recursion as tail-recursive" +
							  lim::named("jsonata_call_depth"),
				 pos);
		struct Leave {
			size_t &d;
			~Leave() { d--; }
		} leave{cx_.call_depth};
		Value result = apply_inner(proc, std::move(args), input, pos);
		while (result.k == Value::Fn && result.f->kind == Function::Lambda &&
			   result.f->lambda->thunk) {
			count_step(cx_);
			const Node &callee = *result.f->lambda->lhs;	// the Call in tail position
			Frame *tenv = result.f->env;
			Value tin = result.f->input;
			Value next = eval(*callee.lhs, tin, tenv);
			Args targs;
			for (auto &a : callee.items)
				targs.push_back(eval(*a, tin, tenv));
			if (next.k != Value::Fn)
				fail("T1006", "Attempted to invoke a non-function", callee.pos);
			struct Restore {
				Frame *&slot;
				Frame *was;
				~Restore() { slot = was; }
			} restore{cx_.call_env, cx_.call_env};
			cx_.call_env = tenv;
			result = apply_inner(next, std::move(targs), input, callee.pos);
		}
		return result;
	}

	Value apply_inner(const Value &proc, Args args, const Value &input, size_t pos) {
		if (proc.k != Value::Fn)
			fail("T1006", "Attempted to invoke a non-function", pos);
		Function &f = *proc.f;
		switch (f.kind) {
		case Function::Lambda: {
			if (f.lambda->type == Node::Transform)
				return run_transform(*f.lambda, args.empty() ? Value() : args[0], f.env);
			if (f.lambda->signature)
				validate_args(*f.lambda->signature, "lambda", args, input, pos);
			Frame *fr = cx_.new_frame(f.env);
			for (size_t i = 0; i < f.lambda->params.size(); i++)
				fr->vars[f.lambda->params[i]] = i < args.size() ? args[i] : Value();
			return eval(*f.lambda->lhs, f.input, fr);
		}
		case Function::Native:
			return call_native(*f.native, args, input, pos);
		case Function::Partial: {
			Args full;
			size_t k = 0;
			for (size_t i = 0; i < f.args.size(); i++) {
				if (f.holes[i])
					full.push_back(k < args.size() ? args[k++] : Value());
				else
					full.push_back(f.args[i]);
			}
			const Value &target = f.proc;
			if (target.k == Value::Fn && target.f->kind == Function::Lambda &&
				target.f->lambda->type == Node::Lambda) {
				// the reference's partial application of a lambda makes a new
				// lambda of the same body, without the signature
				const Function &l = *target.f;
				Frame *fr = cx_.new_frame(l.env);
				for (size_t i = 0; i < l.lambda->params.size(); i++)
					fr->vars[l.lambda->params[i]] = i < full.size() ? full[i] : Value();
				return eval(*l.lambda->lhs, l.input, fr);
			}
			return apply_fn(target, std::move(full), input, pos);
		}
		case Function::Chain: {
			Value mid = apply_fn(f.proc, std::move(args), input, pos);
			return apply_fn(f.second, {mid}, input, pos);
		}
		case Function::Regex: {
			if (args.empty() || args[0].k != Value::Str)
				return Value();
			const std::string &s = args[0].str();
			RegexSearch search(cx_, *f.re, s);
			RegexMatch m;
			if (!search.find(0, m))
				return Value();
			return regex_match_object(m, s);
		}
		}
		return Value();
	}

  private:
	Value variable(const Node &e, const Value &input, Frame *env) {
		if (e.str.empty()) {
			if (is_array(input) && input.a->outer && !input.a->items.empty())
				return input.a->items[0];
			return input;
		}
		if (const Value *v = env->lookup(e.str))
			return *v;
		if (const Builtin *b = find_builtin(e.str))
			return native_function(b);
		return Value();
	}

	static Value lookup(const Value &input, const std::string &key) {
		if (input.k == Value::Arr) {
			Value out = Value::array(true);
			count_items(input.a->items.size());
			for (const auto &item : input.a->items) {
				Value r = lookup(item, key);
				if (r.undef())
					continue;
				if (r.k == Value::Arr)
					for (auto &x : r.a->items)
						out.a->items.push_back(x);
				else
					out.a->items.push_back(r);
			}
			return out;
		}
		if (input.k == Value::Obj) {
			if (const Value *v = input.o->get(key))
				return *v;
		}
		return Value();
	}

	Value path(const Node &e, const Value &input, Frame *env) {
		Value seq;
		if (is_array(input) && e.items[0]->type != Node::Variable) {
			seq = input;
		} else {
			// no input is a sequence of one undefined: {"a": 1}.a still
			// builds its object
			seq = Value::array(true);
			seq.a->items.push_back(input);
		}
		Value result;
		bool tuples = false;
		Value bindings;	 // the tuple stream, once a step makes one
		for (size_t i = 0; i < e.items.size(); i++) {
			const Node &step = *e.items[i];
			if (step.tuple)
				tuples = true;
			if (i == 0 && step.consarray)
				result = eval(step, seq, env);
			else if (tuples)
				bindings = tuple_step(step, seq, bindings, env);
			else
				result = eval_step(step, seq, env, i + 1 == e.items.size());
			if (!tuples && (result.undef() || (is_array(result) && result.a->items.empty())))
				break;
			if (step.focus.empty())
				seq = result;
		}
		if (tuples) {
			if (e.tuple) {
				// the tuples carry a % of an enclosing path: keep them
				result = bindings;
			} else {
				result = Value::array(true);
				if (!bindings.undef()) {
					count_items(bindings.a->items.size());
					for (auto &t : bindings.a->items)
						if (t.k == Value::Obj)
							if (const Value *v = t.o->get("@"))
								seq_push(result, *v);
				}
			}
		}
		if (e.keep_singleton_array) {
			if (is_array(result) && result.a->cons && !result.a->sequence) {
				Value s = Value::array(true);
				s.a->items.push_back(result);
				result = s;
			}
			if (is_array(result)) {
				// copy before flagging: the array may be shared with the input
				auto copy = std::make_shared<ArrayV>(*result.a);
				copy->keep_singleton = true;
				result.a = copy;
			} else if (!result.undef()) {
				Value s = seq_of(result);
				s.a->keep_singleton = true;
				result = s;
			}
		}
		if (e.group)
			result = group(*e.group, tuples ? bindings : result, env, e.pos);
		return result;
	}

	// A scope with a tuple's bindings (its "@" too, which no name reaches).
	Frame *tuple_frame(Frame *env, const Value &tuple) {
		Frame *f = cx_.new_frame(env);
		count_items(tuple.o->entries.size());
		for (auto &[k, v] : tuple.o->entries)
			f->vars[k] = v;
		return f;
	}

	static Value tuple_stream() {
		Value s = Value::array(true);
		s.a->tuple_stream = true;
		return s;
	}

	static Value copy_tuple(const Value &t) {
		Value c = Value::object();
		count_items(t.o->entries.size());
		for (auto &[k, v] : t.o->entries)
			c.o->set(k, v);
		return c;
	}

	// A step of a path once it binds @, # or %: from each tuple of the
	// stream so far, one tuple per item the step finds, with the step's
	// bindings added.
	Value tuple_step(const Node &step, const Value &input, Value bindings, Frame *env) {
		if (step.type == Node::Sort) {
			Value r;
			if (!bindings.undef()) {
				r = sort(step, bindings, env);
			} else {
				Value sorted = sort(step, input, env);
				r = tuple_stream();
				for (size_t i = 0; i < sorted.a->items.size(); i++) {
					Value t = Value::object();
					t.o->set("@", sorted.a->items[i]);
					if (!step.index.empty())
						t.o->set(step.index, Value::number(static_cast<double>(i)));
					seq_push(r, t);
				}
			}
			return stages(step, r, env);
		}
		Value result = tuple_stream();
		if (bindings.undef()) {
			bindings = tuple_stream();
			if (is_array(input)) {
				count_items(input.a->items.size());
				for (auto &item : input.a->items) {
					Value t = Value::object();
					t.o->set("@", item);
					bindings.a->items.push_back(t);
				}
			}
		}
		for (auto &tuple : bindings.a->items) {
			if (tuple.k != Value::Obj)
				continue;
			const Value *at = tuple.o->get("@");
			Value context = at ? *at : Value();
			Value res = eval(step, context, tuple_frame(env, tuple));
			if (res.undef())
				continue;
			Value seq = is_array(res) ? res : seq_of(res);
			for (size_t b = 0; b < seq.a->items.size(); b++) {
				Value t = copy_tuple(tuple);
				const Value &x = seq.a->items[b];
				if (seq.a->tuple_stream && x.k == Value::Obj) {
					for (auto &[k, v] : x.o->entries)
						t.o->set(k, v);
				} else {
					if (!step.focus.empty()) {
						t.o->set(step.focus, x);
						t.o->set("@", context);
					} else {
						t.o->set("@", x);
					}
					if (!step.index.empty())
						t.o->set(step.index, Value::number(static_cast<double>(b)));
					if (step.ancestor)
						t.o->set(step.ancestor->label, context);
				}
				seq_push(result, t);
			}
		}
		return stages(step, result, env);
	}

	// A tuple step's predicates and #$i after them, on the whole stream.
	Value stages(const Node &step, Value r, Frame *env) {
		for (auto &s : step.stages) {
			if (s->type == Node::IndexStage) {
				if (!is_array(r))
					continue;
				for (size_t i = 0; i < r.a->items.size(); i++)
					if (r.a->items[i].k == Value::Obj) {
						Value t = copy_tuple(r.a->items[i]);
						t.o->set(s->str, Value::number(static_cast<double>(i)));
						r.a->items[i] = t;
					}
			} else {
				r = filter(*s, r, env);
			}
		}
		return r;
	}

	Value eval_step(const Node &step, const Value &input, Frame *env, bool last) {
		if (step.type == Node::Sort) {
			Value r = sort(step, input, env);
			for (auto &s : step.stages)
				r = filter(*s, r, env);
			return r;
		}
		std::vector<Value> results;
		if (!is_array(input))	// the reference iterates a non-array as empty
			return Value::array(true);
		for (const auto &item : input.a->items) {
			Value r = eval(step, item, env);
			for (auto &s : step.stages)
				r = filter(*s, r, env);
			if (!r.undef())
				results.push_back(r);
		}
		if (last && results.size() == 1 && is_array(results[0]) && !results[0].a->sequence)
			return results[0];
		Value out = Value::array(true);
		for (auto &r : results) {
			if (!is_array(r) || r.a->cons) {
				seq_push(out, r);
			} else {
				for (auto &x : r.a->items)
					seq_push(out, x);
			}
		}
		return out;
	}

	Value filter(const Node &pred, const Value &input, Frame *env) {
		Value results = Value::array(true);
		bool tuples = is_array(input) && input.a->tuple_stream;
		results.a->tuple_stream = tuples;
		if (input.undef()) {
			// the reference still runs the predicate once, on undefined (its
			// errors show); whatever it selects is undefined
			if (pred.type != Node::Number)
				(void)eval(pred, Value(), env);
			return results;
		}
		Value in = is_array(input) ? input : seq_of(input);
		const auto &items = in.a->items;
		count_items(items.size());
		if (pred.type == Node::Number) {
			double idx = std::floor(pred.num);
			if (idx < 0)
				idx += static_cast<double>(items.size());
			if (idx >= 0 && idx < static_cast<double>(items.size())) {
				const Value &item = items[static_cast<size_t>(idx)];
				if (is_array(item))
					return item;
				results.a->items.push_back(item);
			}
			return results;
		}
		for (size_t i = 0; i < items.size(); i++) {
			Value r;
			if (tuples && items[i].k == Value::Obj) {
				const Value *at = items[i].o->get("@");
				r = eval(pred, at ? *at : Value(), tuple_frame(env, items[i]));
			} else {
				r = eval(pred, items[i], env);
			}
			bool numbers = r.k == Value::Num;
			if (r.k == Value::Arr && !r.a->items.empty()) {
				numbers = true;
				for (auto &x : r.a->items)
					if (x.k != Value::Num)
						numbers = false;
			}
			if (numbers) {
				auto check = [&](double d) {
					double ii = std::floor(d);
					if (ii < 0)
						ii += static_cast<double>(items.size());
					if (ii == static_cast<double>(i))
						results.a->items.push_back(items[i]);
				};
				if (r.k == Value::Num)
					check(r.n);
				else
					for (auto &x : r.a->items)
						check(x.n);
			} else if (truthy(r)) {
				results.a->items.push_back(items[i]);
			}
		}
		return results;
	}

	Value wildcard(const Value &input) {
		Value results = Value::array(true);
		Value in = input;
		if (is_array(in) && in.a->outer && !in.a->items.empty())
			in = in.a->items[0];
		auto take = [&](const Value &v) {
			if (is_array(v))
				flatten_into(v, results);
			else
				seq_push(results, v);
		};
		if (in.k == Value::Obj) {
			for (auto &[k, v] : in.o->entries)
				take(v);
		} else if (in.k == Value::Arr) {	// a JavaScript array is an object keyed by index
			for (auto &v : in.a->items)
				take(v);
		}
		return results;
	}

	void flatten_into(const Value &v, Value &out) {
		lim::RecursionGuard guard;
		for (auto &x : v.a->items) {
			if (is_array(x))
				flatten_into(x, out);
			else
				seq_push(out, x);
		}
	}

	void recurse_desc(const Value &v, Value &out) {
		lim::RecursionGuard guard;
		if (!is_array(v))
			seq_push(out, v);
		if (is_array(v)) {
			for (auto &x : v.a->items)
				recurse_desc(x, out);
		} else if (v.k == Value::Obj) {
			for (auto &[k, x] : v.o->entries)
				recurse_desc(x, out);
		}
	}

	Value descendants(const Value &input) {
		if (input.undef())
			return Value();
		Value out = Value::array(true);
		recurse_desc(input, out);
		if (out.a->items.size() == 1)
			return out.a->items[0];
		return out;
	}

	Value array_cons(const Node &e, const Value &input, Frame *env) {
		Value result = Value::array(false);
		for (auto &item : e.items) {
			Value v = eval(*item, input, env);
			if (v.undef())
				continue;
			if (item->type == Node::ArrayCons) {
				seq_push(result, v);
			} else if (is_array(v)) {
				for (auto &x : v.a->items)
					seq_push(result, x);
			} else {
				seq_push(result, v);
			}
		}
		if (e.consarray)
			result.a->cons = true;
		return result;
	}

	Value group(const std::vector<std::pair<NodeP, NodeP>> &pairs, const Value &input, Frame *env,
				size_t pos) {
		struct Entry {
			Value data;
			size_t index;
			bool own = false;	// data is an array made here: append in place
		};
		std::vector<std::string> order;
		std::unordered_map<std::string, Entry> groups;
		Value in = is_array(input) ? input : seq_of(input);
		std::vector<Value> items = in.a->items;
		count_items(items.size());
		if (items.empty())
			items.push_back(Value());
		bool reduce = is_array(input) && input.a->tuple_stream;
		for (auto &item : items) {
			Frame *ienv = env;
			Value ctx = item;
			if (reduce && item.k == Value::Obj) {
				ienv = tuple_frame(env, item);
				const Value *at = item.o->get("@");
				ctx = at ? *at : Value();
			}
			for (size_t pi = 0; pi < pairs.size(); pi++) {
				Value key = eval(*pairs[pi].first, ctx, ienv);
				if (key.undef())
					continue;
				if (key.k != Value::Str)
					fail("T1003",
						 "Key in object structure must evaluate to a string; got: " +
							 stringify(key, false),
						 pos);
				auto it = groups.find(key.str());
				if (it != groups.end()) {
					if (it->second.index != pi)
						fail("D1009", "Multiple key definitions evaluate to same key: " + key.str(),
							 pos);
					// What append() answers, without copying the group's items
					// each time (quadratic in the group's size).
					Entry &en = it->second;
					if (en.own && !item.undef()) {
						if (item.k == Value::Arr)
							for (auto &x : item.a->items)
								seq_push(en.data, x);
						else
							seq_push(en.data, item);
					} else {
						en.data = append(en.data, item);
						en.own = en.data.k == Value::Arr && en.data.a.use_count() == 1;
					}
				} else {
					groups.emplace(key.str(), Entry{item, pi});
					order.push_back(key.str());
				}
			}
		}
		Value result = Value::object();
		for (auto &k : order) {
			Entry &en = groups[k];
			Value v;
			if (reduce) {
				// the group's tuples as one: each variable the $append of its values
				Value merged;
				if (en.data.k == Value::Obj) {
					merged = en.data;
				} else if (is_array(en.data) && !en.data.a->items.empty()) {
					merged = copy_tuple(en.data.a->items[0]);
					for (size_t ti = 1; ti < en.data.a->items.size(); ti++) {
						const Value &t = en.data.a->items[ti];
						if (t.k != Value::Obj)
							continue;
						for (auto &[tk, tv] : t.o->entries) {
							const Value *cur = merged.o->get(tk);
							merged.o->set(tk, append(cur ? *cur : Value(), tv));
						}
					}
				}
				Value ctx;
				Frame *genv = cx_.new_frame(env);
				if (merged.k == Value::Obj)
					for (auto &[tk, tv] : merged.o->entries) {
						if (tk == "@")
							ctx = tv;
						else
							genv->vars[tk] = tv;
					}
				v = eval(*pairs[en.index].second, ctx, genv);
			} else {
				v = eval(*pairs[en.index].second, en.data, env);
			}
			if (!v.undef())
				result.o->set(k, v);
		}
		return result;
	}

	Value binary(const Node &e, const Value &input, Frame *env) {
		const std::string &op = e.str;
		Value lhs = eval(*e.lhs, input, env);
		if (op == "and")
			return Value::boolean(truthy(lhs) && truthy(eval(*e.rhs, input, env)));
		if (op == "or")
			return Value::boolean(truthy(lhs) || truthy(eval(*e.rhs, input, env)));
		Value rhs = eval(*e.rhs, input, env);
		char c0 = op[0];
		if (op.size() == 1 && std::strchr("+-*/%", c0)) {
			if (!lhs.undef() && lhs.k != Value::Num)
				fail("T2001", "The left side of the " + op + " operator must evaluate to a number",
					 e.pos);
			if (!rhs.undef() && rhs.k != Value::Num)
				fail("T2002", "The right side of the " + op + " operator must evaluate to a number",
					 e.pos);
			// a result past a double (1/0) is kept (as the reference does: it
			// is null in JSON); using it in arithmetic is D1001
			if ((!lhs.undef() && !std::isfinite(lhs.n)) || (!rhs.undef() && !std::isfinite(rhs.n)))
				fail("D1001", "Number out of range: null", e.pos);
			if (lhs.undef() || rhs.undef())
				return Value();
			double r = 0;
			switch (c0) {
			case '+': r = lhs.n + rhs.n; break;
			case '-': r = lhs.n - rhs.n; break;
			case '*': r = lhs.n * rhs.n; break;
			case '/': r = lhs.n / rhs.n; break;
			case '%': r = std::fmod(lhs.n, rhs.n); break;
			}
			return Value::number(r);
		}
		if (op == "=" || op == "!=") {
			if (lhs.undef() || rhs.undef())
				return Value::boolean(false);
			bool eq = deep_equal(lhs, rhs);
			return Value::boolean(op == "=" ? eq : !eq);
		}
		if (op == "<" || op == "<=" || op == ">" || op == ">=") {
			auto comparable = [](const Value &v) {
				return v.undef() || v.k == Value::Str || v.k == Value::Num;
			};
			if (!comparable(lhs) || !comparable(rhs))
				fail("T2010",
					 "The expressions either side of operator " + op +
						 " must evaluate to numeric or string values",
					 e.pos);
			if (lhs.undef() || rhs.undef())
				return Value();
			if (lhs.k != rhs.k)
				fail("T2009",
					 "The values " + stringify(lhs, false) + " and " + stringify(rhs, false) +
						 " either side of operator " + op + " must be of the same data type",
					 e.pos);
			int cmp = lhs.k == Value::Num ? (lhs.n < rhs.n ? -1 : lhs.n > rhs.n ? 1 : 0)
										  : lhs.str().compare(rhs.str());
			bool r = op == "<" ? cmp < 0 : op == "<=" ? cmp <= 0 : op == ">" ? cmp > 0 : cmp >= 0;
			return Value::boolean(r);
		}
		if (op == "&") {
			std::string s = (lhs.undef() ? "" : to_string_fn(lhs, e.pos)) +
							(rhs.undef() ? "" : to_string_fn(rhs, e.pos));
			if (s.size() > lim::JSONATA_STRING)
				fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) +
								  " bytes" + lim::named("jsonata_string"),
					 e.pos);
			return Value::string(std::move(s));
		}
		if (op == "..") {
			auto integer = [](const Value &v) {
				return v.k == Value::Num && std::floor(v.n) == v.n;
			};
			if (!lhs.undef() && !integer(lhs))
				fail("T2003", "The left side of the range operator (..) must evaluate to an integer",
					 e.pos);
			if (!rhs.undef() && !integer(rhs))
				fail("T2004",
					 "The right side of the range operator (..) must evaluate to an integer", e.pos);
			if (lhs.undef() || rhs.undef() || lhs.n > rhs.n)
				return Value();
			double size = rhs.n - lhs.n + 1;
			if (size > 1e7)
				fail("D2014",
					 "The size of the sequence allocated by the range operator (..) must not "
					 "exceed 1e7.  Attempted to allocate " +
						 format_number(size) + ".",
					 e.pos);
			if (size > static_cast<double>(lim::JSONATA_SEQUENCE))
				fail("L0001", "a range of " + format_number(size) + " items is longer than " +
								  std::to_string(lim::JSONATA_SEQUENCE) +
								  lim::named("jsonata_sequence"),
					 e.pos);
			Value out = Value::array(true);
			count_items(static_cast<size_t>(size));
			out.a->items.reserve(static_cast<size_t>(size));
			for (double d = lhs.n; d <= rhs.n; d++)
				out.a->items.push_back(Value::number(d));
			return out;
		}
		if (op == "in") {
			if (lhs.undef() || rhs.undef())
				return Value::boolean(false);
			auto same = [&](const Value &x) {
				if (x.k != lhs.k)
					return false;
				switch (x.k) {
				case Value::Null: return true;
				case Value::Bool: return x.b == lhs.b;
				case Value::Num: return x.n == lhs.n;
				case Value::Str: return x.str() == lhs.str();
				case Value::Arr: return x.a == lhs.a;
				case Value::Obj: return x.o == lhs.o;
				case Value::Fn: return x.f == lhs.f;
				default: return false;
				}
			};
			if (is_array(rhs)) {
				count_visits(rhs.a->items.size());
				for (auto &x : rhs.a->items)
					if (same(x))
						return Value::boolean(true);
				return Value::boolean(false);
			}
			return Value::boolean(same(rhs));
		}
		fail("S0201", "Syntax error: " + op, e.pos);
	}

	static std::string to_string_fn(const Value &v, size_t pos) {
		if (v.k == Value::Str)
			return v.str();
		if (v.k == Value::Fn)
			return "";
		if (v.k == Value::Num && !std::isfinite(v.n))
			fail("D3001", "Attempting to invoke string function on Infinity or NaN", pos);
		return stringify(v, false);
	}

	Value call(const Node &e, const Value &input, Frame *env, const Value *applyto) {
		Value proc = eval(*e.lhs, input, env);
		// a name that is a variable or a function without its $: the hint
		if (proc.undef() && e.lhs->type == Node::Path && !e.lhs->items.empty() &&
			e.lhs->items[0]->type == Node::Name &&
			(env->lookup(e.lhs->items[0]->str) || find_builtin(e.lhs->items[0]->str)))
			fail(e.partial ? "T1007" : "T1005",
				 std::string("Attempted to ") + (e.partial ? "partially apply" : "invoke") +
					 " a non-function. Did you mean $" + e.lhs->items[0]->str + "?",
				 e.pos);
		Args args;
		std::vector<bool> holes;
		if (applyto) {
			args.push_back(*applyto);
			holes.push_back(false);
		}
		for (auto &a : e.items) {
			if (a->type == Node::Placeholder) {
				args.push_back(Value());
				holes.push_back(true);
			} else {
				args.push_back(eval(*a, input, env));
				holes.push_back(false);
			}
		}
		if (e.partial) {
			if (proc.k != Value::Fn)
				fail("T1008", "Attempted to partially apply a non-function", e.pos);
			Value r;
			r.k = Value::Fn;
			r.f = std::make_shared<Function>();
			r.f->kind = Function::Partial;
			r.f->proc = proc;
			r.f->args = std::move(args);
			r.f->holes = std::move(holes);
			return r;
		}
		if (proc.k != Value::Fn)
			fail("T1006", "Attempted to invoke a non-function", e.pos);
		struct Restore {
			Frame *&slot;
			Frame *was;
			~Restore() { slot = was; }
		} restore{cx_.call_env, cx_.call_env};
		cx_.call_env = env;
		return apply_fn(proc, std::move(args), input, e.pos);
	}

	Value apply_op(const Node &e, const Value &input, Frame *env) {
		if (e.rhs->type == Node::Call) {
			Value ctx = eval(*e.lhs, input, env);
			return call(*e.rhs, input, env, &ctx);
		}
		Value lhs = eval(*e.lhs, input, env);
		Value fn = eval(*e.rhs, input, env);
		if (fn.k != Value::Fn)
			fail("T2006", "The right side of the function application operator ~> must be a function",
				 e.pos);
		if (lhs.k == Value::Fn) {
			Value r;
			r.k = Value::Fn;
			r.f = std::make_shared<Function>();
			r.f->kind = Function::Chain;
			r.f->proc = lhs;
			r.f->second = fn;
			return r;
		}
		return apply_fn(fn, {lhs}, Value(), e.pos);
	}

	Value sort(const Node &e, const Value &input, Frame *env) {
		Value in = is_array(input) ? input : seq_of(input);
		std::vector<Value> items = in.a->items;
		count_items(2 * items.size());	// the copy and the answer
		bool tuples = in.a->tuple_stream;
		if (items.size() <= 1) {
			Value out = Value::array(true);
			out.a->items = items;
			out.a->tuple_stream = tuples;
			return out;
		}
		// keys per item per term, evaluated once
		std::vector<std::vector<Value>> keys(items.size());
		for (size_t i = 0; i < items.size(); i++) {
			Value ctx = items[i];
			Frame *ienv = env;
			if (tuples && ctx.k == Value::Obj) {
				ienv = tuple_frame(env, ctx);
				const Value *at = ctx.o->get("@");
				ctx = at ? *at : Value();
			}
			for (auto &t : e.terms)
				keys[i].push_back(eval(*t.expr, ctx, ienv));
		}
		// (the reference's merge sort answers a plain array: a sorted tuple
		// stream of more than one tuple is no longer flagged as one)
		std::vector<size_t> idx(items.size());
		for (size_t i = 0; i < idx.size(); i++)
			idx[i] = i;
		auto greater = [&](size_t a, size_t b) -> bool {	 // the reference's comparator: a > b
			cx_.budget->count_work(1);
			for (size_t t = 0; t < e.terms.size(); t++) {
				const Value &aa = keys[a][t];
				const Value &bb = keys[b][t];
				if (aa.undef() && bb.undef())
					continue;
				if (aa.undef())
					return true;
				if (bb.undef())
					return false;
				auto ok = [](const Value &v) { return v.k == Value::Num || v.k == Value::Str; };
				if (!ok(aa) || !ok(bb))
					fail("T2008",
						 "The expressions within an order-by clause must evaluate to numeric or "
						 "string values",
						 e.pos);
				if (aa.k != bb.k)
					fail("T2007",
						 "Type mismatch when comparing values " + stringify(aa, false) + " and " +
							 stringify(bb, false) + " in order-by clause",
						 e.pos);
				int cmp = aa.k == Value::Num ? (aa.n < bb.n ? -1 : aa.n > bb.n ? 1 : 0)
											 : aa.str().compare(bb.str());
				if (cmp == 0)
					continue;
				bool gt = cmp > 0;
				return e.terms[t].descending ? !gt : gt;
			}
			return false;
		};
		std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return greater(b, a); });
		Value out = Value::array(true);
		for (size_t i : idx)
			out.a->items.push_back(items[i]);
		return out;
	}

	Value deep_copy(const Value &v) {
		lim::RecursionGuard guard;
		if (v.k == Value::Arr) {
			Value r = Value::array(v.a->sequence);
			r.a->cons = v.a->cons;
			count_items(v.a->items.size());
			for (auto &x : v.a->items)
				r.a->items.push_back(deep_copy(x));
			return r;
		}
		if (v.k == Value::Obj) {
			Value r = Value::object();
			for (auto &[k, x] : v.o->entries)
				r.o->set(k, deep_copy(x));
			return r;
		}
		return v;
	}

	// |pattern|update[, delete]| is a function of one argument (an object
	// or array): a copy of it with the update merged into every match and
	// the delete keys removed.
	Value transform(const Node &e, const Value &input, Frame *env) {
		Value r;
		r.k = Value::Fn;
		r.f = std::make_shared<Function>();
		r.f->kind = Function::Lambda;
		r.f->lambda = &e;
		r.f->env = env;
		r.f->input = input;
		return r;
	}

	Value run_transform(const Node &e, const Value &obj, Frame *env) {
		if (obj.undef())
			return Value();
		Value result = deep_copy(obj);
		Value matches = eval(*e.lhs, result, env);
		if (matches.undef())
			return result;
		Value ms = is_array(matches) ? matches : seq_of(matches);
		for (auto &m : ms.a->items) {
			if (m.k != Value::Obj)
				continue;
			Value upd = eval(*e.then_, m, env);
			if (!upd.undef()) {
				if (upd.k != Value::Obj)
					fail("T2011",
						 "The insert/update clause of the transform expression must evaluate to an "
						 "object: " + stringify(upd, false),
						 e.pos);
				for (auto &[k, v] : upd.o->entries)
					m.o->set(k, v);
			}
			if (e.else_) {
				Value del = eval(*e.else_, m, env);
				if (del.undef())
					continue;
				Value ds = is_array(del) ? del : seq_of(del);
				for (auto &d : ds.a->items)
					if (d.k != Value::Str)
						fail("T2012",
							 "The delete clause of the transform expression must evaluate to a "
							 "string or array of strings: " + stringify(del, false),
							 e.pos);
				auto &en = m.o->entries;
				// A set of the names: n entries and m names are n + m, not n * m.
				std::unordered_set<std::string> drop;
				count_visits(ds.a->items.size() + en.size());
				for (auto &d : ds.a->items)
					drop.insert(d.str());
				std::vector<std::pair<std::string, Value>> kept;
				for (auto &p : en)
					if (!drop.count(p.first))
						kept.push_back(p);
				m.o->entries.clear();
				m.o->index.clear();
				for (auto &p : kept)
					m.o->set(p.first, p.second);
			}
		}
		return result;
	}

	Value call_native(const Builtin &b, Args &args, const Value &input, size_t pos);

	Context &cx_;
	friend Value detail::apply(Context &, const Value &, Args, const Value &, size_t);
};

char symbol_of(const Value &v) {
	switch (v.k) {
	case Value::Undef: return 'm';
	case Value::Null: return 'l';
	case Value::Bool: return 'b';
	case Value::Num: return 'n';
	case Value::Str: return 's';
	case Value::Arr: return 'a';
	case Value::Obj: return 'o';
	case Value::Fn: return 'f';
	}
	return 'm';
}

const std::vector<Param> &signature_of(const Builtin &b) {
	static std::unordered_map<const Builtin *, std::vector<Param>> cache;
	static std::mutex mu;
	std::lock_guard<std::mutex> lock(mu);
	auto it = cache.find(&b);
	if (it == cache.end())
		it = cache.emplace(&b, parse_signature(b.signature)).first;
	return it->second;
}

bool type_ok(const Param &p, char s) {
	return s == 'm' || p.types.find(s) != std::string::npos || p.types == "a";
}

// Whether `args` fit `params` (the reference matches a regex over the
// arguments' type letters; undefined fits any type).  *bad_at gets the
// index of the first argument that does not fit.
bool fits(const std::vector<Param> &params, size_t from, const Args &args, size_t *bad_at) {
	size_t ai = 0;
	for (size_t pi = from; pi < params.size(); pi++) {
		const Param &p = params[pi];
		size_t count = 0;
		while (ai < args.size() && type_ok(p, symbol_of(args[ai]))) {
			ai++;
			count++;
			if (!p.variadic)
				break;
		}
		if (count == 0 && !p.optional) {
			*bad_at = ai;
			return false;
		}
	}
	*bad_at = ai;
	return ai == args.size();
}

void validate_args(const std::vector<Param> &params, const std::string &name, Args &args,
				   const Value &input, size_t pos) {
	const char *n = name.c_str();
	size_t bad = 0;
	if (!fits(params, 0, args, &bad)) {
		size_t bad2 = 0;
		if (!params.empty() && params[0].context && fits(params, 1, args, &bad2)) {
			if (!type_ok(params[0], symbol_of(input)))
				fail("T0411", "Context value is not a compatible type with argument 1 of function " +
								  name,
					 pos);
			args.insert(args.begin(), input);
		} else {
			fail("T0410", "Argument " + std::to_string(bad + 1) + " of function " + n +
							  " does not match function signature",
				 pos);
		}
	}
	// arrays: the item types, and a non-array where an array goes wrapped
	size_t ai = 0;
	for (size_t pi = 0; pi < params.size() && ai < args.size(); pi++) {
		const Param &p = params[pi];
		size_t count = 0;
		while (ai < args.size() && type_ok(p, symbol_of(args[ai]))) {
			Value &a = args[ai];
			char s = symbol_of(a);
			if (p.types == "a" && s != 'm') {
				if (!p.sub.empty()) {
					bool ok = true;
					if (s != 'a') {
						ok = p.sub.find(s) != std::string::npos;
					} else if (!a.a->items.empty()) {
						char first = symbol_of(a.a->items[0]);
						ok = first == p.sub[0];
						for (auto &x : a.a->items)
							ok = ok && symbol_of(x) == first;
					}
					if (!ok)
						fail("T0412", "Argument " + std::to_string(ai + 1) + " of function " +
										  n + " must be an array of " + p.sub,
							 pos);
				}
				if (s != 'a') {
					Value w = Value::array(false);
					w.a->items.push_back(a);
					a = w;
				}
			}
			ai++;
			count++;
			if (!p.variadic)
				break;
		}
	}
}

Value Evaluator::call_native(const Builtin &b, Args &args, const Value &input, size_t pos) {
	validate_args(signature_of(b), b.name, args, input, pos);
	try {
		return b.fn(cx_, args, input);
	} catch (JsonataError &e) {
		if (e.position == 0)
			e.position = pos;
		throw;
	}
}

}  // namespace

// ------------------------------------------------------------------ shared helpers

namespace detail {

size_t Function::arity() const {
	switch (kind) {
	case Lambda: return lambda->type == Node::Lambda ? lambda->params.size() : 1;
	case Native: {	// the reference counts a native's parameters without defaults
		size_t n = 0;
		for (auto &p : signature_of(*native))
			n += p.optional ? 0 : 1;
		return n;
	}
	case Partial: {
		size_t n = 0;
		for (bool h : holes)
			n += h;
		return n;
	}
	default: return 1;
	}
}

Value apply(Context &cx, const Value &proc, Args args, const Value &input, size_t pos) {
	Evaluator ev(cx);
	return ev.apply_fn(proc, std::move(args), input, pos);
}

// $eval(expr[, context]): the text parsed (under jsonata_length and
// jsonata_depth) and evaluated in the caller's scope, its steps, call depth
// and bytes counted with the caller's.  A syntax error is D3120, an error of
// the evaluation D3121, as in the reference; a limit stays L0001 / U1001.
Value f_eval(Context &cx, Args &args, const Value &input) {
	if (args.empty() || args[0].undef())
		return Value();
	if (args[0].k != Value::Str)
		fail("T0410", "Argument 1 of function eval does not match function signature");
	const std::string &text = args[0].str();
	Value in = input;
	if (args.size() > 1 && !args[1].undef()) {
		in = args[1];
		if (in.k == Value::Arr && !in.a->sequence) {
			Value w = Value::array(true);
			w.a->items.push_back(in);
			w.a->outer = true;
			in = w;
		}
	}
	if (text.size() > lim::JSONATA_LENGTH)
		fail("L0001", "the expression given to $eval is " + std::to_string(text.size()) +
						  " characters long, more than " + std::to_string(lim::JSONATA_LENGTH) +
						  lim::named("jsonata_length"));
	NodeP root;
	try {
		Parser p(text);
		root = Rewriter().top(p.parse_all());
	} catch (const JsonataError &e) {
		if (e.code == "L0001")
			throw;
		fail("D3120", std::string("Syntax error in expression passed to function eval: ") + e.what());
	}
	// the tree lives until the evaluation ends: its bytes, about a node
	// per two characters, count against the step's
	lim::count_bytes(sizeof(Node) * (1 + text.size() / 2));
	cx.evaluated.push_back(root);
	Frame *env = cx.call_env ? cx.call_env : nullptr;
	if (!env)
		env = cx.frames.empty() ? cx.new_frame(nullptr) : cx.frames.front().get();
	try {
		Evaluator ev(cx);
		return ev.eval(*root, in, env);
	} catch (const JsonataError &e) {
		if (e.code == "L0001" || e.code == "U1001")
			throw;
		fail("D3121", std::string("Dynamic error evaluating the expression passed to function eval: ") +
						  e.what());
	}
}

bool is_function(const Value &v) { return v.k == Value::Fn; }

bool truthy(const Value &v) {
	Value b = boolean_of(v);
	return b.k == Value::Bool && b.b;
}

Value boolean_of(const Value &v) {
	switch (v.k) {
	case Value::Undef: return Value();
	case Value::Arr: {
		auto &it = v.a->items;
		if (it.size() == 1)
			return boolean_of(it[0]);
		for (auto &x : it)
			if (truthy(x))
				return Value::boolean(true);
		return Value::boolean(false);
	}
	case Value::Str: return Value::boolean(!v.str().empty());
	case Value::Num: return Value::boolean(v.n != 0);
	case Value::Obj: return Value::boolean(!v.o->entries.empty());
	case Value::Bool: return Value::boolean(v.b);
	default: return Value::boolean(false);
	}
}

bool deep_equal(const Value &a, const Value &b) {
	lim::RecursionGuard guard;
	lim::count_work(1);
	if (a.k != b.k)
		return false;
	switch (a.k) {
	case Value::Undef:
	case Value::Null: return true;
	case Value::Bool: return a.b == b.b;
	case Value::Num: return a.n == b.n;
	case Value::Str: return a.str() == b.str();
	case Value::Arr:
		if (a.a->items.size() != b.a->items.size())
			return false;
		for (size_t i = 0; i < a.a->items.size(); i++)
			if (!deep_equal(a.a->items[i], b.a->items[i]))
				return false;
		return true;
	case Value::Obj:
		if (a.o->entries.size() != b.o->entries.size())
			return false;
		for (auto &[k, x] : a.o->entries) {
			const Value *y = b.o->get(k);
			if (!y || !deep_equal(x, *y))
				return false;
		}
		return true;
	case Value::Fn: return a.f == b.f;
	}
	return false;
}

size_t hash_value(const Value &v) {
	lim::RecursionGuard guard;
	lim::count_work(1);
	auto mix = [](size_t h, size_t x) {
		return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
	};
	switch (v.k) {
	case Value::Undef: return 0x51;
	case Value::Null: return 0x52;
	case Value::Bool: return v.b ? 0x53 : 0x54;
	case Value::Num: return std::hash<double>()(v.n);	 // 0 and -0 alike
	case Value::Str: return std::hash<std::string>()(v.str());
	case Value::Arr: {
		size_t h = mix(0x55, v.a->items.size());
		for (auto &x : v.a->items)
			h = mix(h, hash_value(x));
		return h;
	}
	case Value::Obj: {
		size_t h = 0x56;  // a sum: the entries' order does not matter
		for (auto &[k, x] : v.o->entries)
			h += mix(std::hash<std::string>()(k), hash_value(x));
		return h;
	}
	case Value::Fn: return std::hash<const void *>()(v.f.get());
	}
	return 0;
}

// The caller's data (the input, the variables) is not charged to the step's
// budget: it was not built by the step; only the poll clock moves.
Value from_json(const json &j) {
	lim::RecursionGuard guard;
	lim::touch(1);
	switch (j.type()) {
	case json::value_t::null: return Value::null();
	case json::value_t::boolean: return Value::boolean(j.get<bool>());
	case json::value_t::number_integer:
	case json::value_t::number_unsigned:
	case json::value_t::number_float: return Value::number(j.get<double>());
	case json::value_t::string: {
		Value v;
		v.k = Value::Str;
		v.s = std::make_shared<const std::string>(j.get_ref<const std::string &>());
		return v;
	}
	case json::value_t::array: {
		Value v;
		v.k = Value::Arr;
		v.a = std::make_shared<ArrayV>();
		v.a->items.reserve(j.size());
		for (auto &x : j)
			v.a->items.push_back(from_json(x));
		return v;
	}
	case json::value_t::object: {
		Value v;
		v.k = Value::Obj;
		v.o = std::make_shared<ObjectV>();
		v.o->entries.reserve(j.size());
		for (auto it = j.begin(); it != j.end(); ++it) {
			v.o->index.emplace(it.key(), v.o->entries.size());
			v.o->entries.emplace_back(it.key(), from_json(it.value()));
		}
		return v;
	}
	default: return Value();
	}
}

std::optional<json> to_json(const Value &v) {
	lim::RecursionGuard guard;
	lim::touch(1);
	switch (v.k) {
	case Value::Undef: return std::nullopt;
	case Value::Null: return json(nullptr);
	case Value::Bool: return json(v.b);
	case Value::Num:
		if (!std::isfinite(v.n))
			return json(nullptr);
		if (std::floor(v.n) == v.n && std::fabs(v.n) < 9007199254740992.0)
			return json(static_cast<int64_t>(v.n));
		return json(v.n);
	case Value::Str: return json(v.str());
	case Value::Arr: {
		json out = json::array();
		for (auto &x : v.a->items) {
			auto j = to_json(x);
			// JSON.stringify writes a function or undefined in an array as null
			out.push_back(j ? *j : json(nullptr));
		}
		return out;
	}
	case Value::Obj: {
		json out = json::object();
		for (auto &[k, x] : v.o->entries) {
			if (x.k == Value::Fn || x.undef())
				continue;
			auto j = to_json(x);
			if (j)
				out[k] = *j;
		}
		return out;
	}
	case Value::Fn: return std::nullopt;
	}
	return std::nullopt;
}

namespace {
void quote(std::string &out, const std::string &s) {
	out += '"';
	for (unsigned char c : s) {
		switch (c) {
		case '"': out += "\\\""; break;
		case '\\': out += "\\\\"; break;
		case '\b': out += "\\b"; break;
		case '\f': out += "\\f"; break;
		case '\n': out += "\\n"; break;
		case '\r': out += "\\r"; break;
		case '\t': out += "\\t"; break;
		default:
			if (c < 0x20) {
				char buf[8];
				std::snprintf(buf, sizeof buf, "\\u%04x", c);
				out += buf;
			} else {
				out += static_cast<char>(c);
			}
		}
	}
	out += '"';
}

void stringify_into(std::string &out, const Value &v, bool pretty, int indent) {
	lim::RecursionGuard guard;
	lim::count_work(1);
	if (out.size() > lim::JSONATA_STRING)
		fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
						  lim::named("jsonata_string"));
	auto nl = [&](int level) {
		if (pretty) {
			out += '\n';
			out.append(static_cast<size_t>(level) * 2, ' ');
		}
	};
	switch (v.k) {
	case Value::Undef:
	case Value::Null: out += "null"; break;
	case Value::Bool: out += v.b ? "true" : "false"; break;
	case Value::Num:
		if (!std::isfinite(v.n))	// as the reference's $string
			fail("D1001", "Number out of range: null");
		out += number_to_string(v.n);
		break;
	case Value::Str: quote(out, v.str()); break;
	case Value::Fn: out += "\"\""; break;
	case Value::Arr: {
		if (v.a->items.empty()) {
			out += "[]";
			break;
		}
		out += '[';
		bool first = true;
		for (auto &x : v.a->items) {
			if (!first)
				out += ',';
			first = false;
			nl(indent + 1);
			stringify_into(out, x, pretty, indent + 1);
		}
		nl(indent);
		out += ']';
		break;
	}
	case Value::Obj: {
		bool any = false;
		for (auto &[k, x] : v.o->entries) {
			if (x.undef())
				continue;
			out += any ? "," : "{";
			any = true;
			nl(indent + 1);
			quote(out, k);
			out += pretty ? ": " : ":";
			stringify_into(out, x, pretty, indent + 1);
		}
		if (!any) {
			out += "{}";
			break;
		}
		nl(indent);
		out += '}';
		break;
	}
	}
}
}  // namespace

std::string stringify(const Value &v, bool pretty) {
	std::string out;
	stringify_into(out, v, pretty, 0);
	return out;
}

std::string number_to_string(double d) {
	// Number(d.toPrecision(15)), as the reference's $string does
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.14e", d);
	return format_number(std::strtod(buf, nullptr));
}

Value make_sequence(std::vector<Value> items) {
	count_visits(items.size());
	Value s = Value::array(true);
	s.a->items = std::move(items);
	return s;
}

void seq_push(Value &seq, Value v) {
	if (seq.a->items.size() >= lim::JSONATA_SEQUENCE)
		fail("L0001", "an array grew past " + std::to_string(lim::JSONATA_SEQUENCE) + " items" +
						  lim::named("jsonata_sequence"));
	count_items(1);
	seq.a->items.push_back(std::move(v));
}

Value append(const Value &a, const Value &b) {
	if (a.undef())
		return b;
	if (b.undef())
		return a;
	Value out = Value::array(true);
	if (a.k == Value::Arr) {
		count_items(a.a->items.size());
		out.a->items = a.a->items;
		out.a->sequence = a.a->sequence;
	} else {
		out.a->items.push_back(a);
	}
	if (b.k == Value::Arr)
		for (auto &x : b.a->items)
			seq_push(out, x);
	else
		seq_push(out, b);
	if (a.k == Value::Arr && !a.a->sequence)
		out.a->sequence = false;
	return out;
}

Value flatten_sequence(Value v) {
	if (v.k == Value::Arr && v.a->sequence) {
		if (v.a->items.empty())
			return Value();
		if (v.a->items.size() == 1 && !v.a->keep_singleton)
			return v.a->items[0];
	}
	return v;
}

size_t utf8_length(const std::string &s) {
	size_t n = 0;
	for (unsigned char c : s)
		if ((c & 0xC0) != 0x80)
			n++;
	return n;
}

std::vector<std::string> utf8_chars(const std::string &s) {
	std::vector<std::string> out;
	for (size_t i = 0; i < s.size();) {
		size_t len = 1;
		unsigned char c = static_cast<unsigned char>(s[i]);
		if (c >= 0xF0) len = 4;
		else if (c >= 0xE0) len = 3;
		else if (c >= 0xC0) len = 2;
		len = std::min(len, s.size() - i);
		lim::count_bytes(sizeof(std::string));	// a string per character: polled, counted
		out.push_back(s.substr(i, len));
		i += len;
	}
	return out;
}

}  // namespace detail

std::string format_number(double d) {
	if (std::isnan(d))
		return "NaN";
	if (std::isinf(d))
		return d > 0 ? "Infinity" : "-Infinity";
	if (d == 0)
		return "0";
	char buf[64];
	auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
	std::string sci(buf, r.ptr);
	bool neg = sci[0] == '-';
	if (neg)
		sci.erase(0, 1);
	size_t epos = sci.find('e');
	std::string mant = sci.substr(0, epos);
	int exp = std::atoi(sci.c_str() + epos + 1);
	std::string digits;
	for (char c : mant)
		if (c != '.')
			digits += c;
	int k = static_cast<int>(digits.size());
	int n = exp + 1;
	std::string out;
	if (k <= n && n <= 21) {
		out = digits + std::string(static_cast<size_t>(n - k), '0');
	} else if (0 < n && n <= 21) {
		out = digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
	} else if (-6 < n && n <= 0) {
		out = "0." + std::string(static_cast<size_t>(-n), '0') + digits;
	} else {
		out = digits.substr(0, 1);
		if (k > 1)
			out += "." + digits.substr(1);
		out += "e";
		out += (n - 1 >= 0) ? "+" : "-";
		out += std::to_string(std::abs(n - 1));
	}
	return neg ? "-" + out : out;
}

ExpressionPtr compile(const std::string &text) {
	if (text.size() > lim::JSONATA_LENGTH)
		fail("L0001", "the expression is " + std::to_string(text.size()) +
						  " characters long, more than " + std::to_string(lim::JSONATA_LENGTH) +
						  lim::named("jsonata_length"));
	auto e = std::make_shared<Expression>();
	e->text_ = text;
	try {
		Parser p(text);
		e->root_ = Rewriter().top(p.parse_all());
	} catch (const Error &err) {	// RecursionGuard
		fail("L0001", err.what());
	}
	return e;
}

std::optional<json> evaluate(const Expression &expr, const json *input, const Environment &env) {
	lim::BudgetScope budget;  // the step's, when a step evaluates it
	Context cx;
	cx.now_ms = env.now_ms;
	try {
		Value in;
		if (input) {
			in = from_json(*input);
			if (in.k == Value::Arr) {
				Value w = Value::array(true);
				w.a->items.push_back(in);
				w.a->outer = true;
				in = w;
			}
		}
		Frame *root = cx.new_frame(nullptr);
		root->vars["$"] = in;
		for (auto &[k, v] : env.vars)
			root->vars[k] = from_json(v);
		Evaluator ev(cx);
		Value r = ev.eval(expr.root(), in, root);
		r = flatten_sequence(r);
		return to_json(r);
	} catch (const lim::Interrupted &) {
		throw;	// the host's, not the expression's
	} catch (const Error &err) {	// RecursionGuard, the step's budget
		fail("L0001", err.what());
	}
}

}  // namespace genroc::jsonata
