// jsonpath.cpp — the JSONPath dialect of ASL: parsing, selection, and
// writing at a reference path.
//
// Supported: `$` (or `$$` for the context object), `.name`, `['name']` /
// `["name"]`, `[n]` (negative from the end), `[*]` and `.*`, slices
// `[a:b]` / `[a:b:step]` (step > 0), unions `[0,1]` / `['a','b']`, deep scan
// `..name` / `..*`, and filters
// `[?(expr)]` where expr combines comparisons (== != < <= > >=) of `@...`,
// `$...` and literals with &&, ||, ! and parentheses; a lone operand tests
// existence.  Any other syntax is refused at define time.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>

#include "internal.hpp"

namespace genroc::asl::detail {

// A filter expression tree.
struct FilterExpr {
	enum Kind { Or, And, Not, Compare, Exists } kind = Exists;
	std::vector<std::shared_ptr<const FilterExpr>> kids;  // Or, And, Not
	std::string op;										  // Compare
	// Operands of Compare (both) and Exists (left only).
	struct Operand {
		enum Kind { Current, Root, Literal } kind = Literal;
		std::vector<Segment> segments;	// Current, Root
		json literal;
	} left, right;
};

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

struct PathParser {
	const std::string &s;
	size_t p;
	std::string stop;  // characters that end a dot-name (besides . and [)
	size_t depth = 0;  // filter nesting: parentheses, ! and filters inside filters

	[[noreturn]] void fail(const std::string &why) const {
		throw SyntaxError(why + " at offset " + std::to_string(p));
	}
	bool at_end() const { return p >= s.size(); }
	char peek() const { return at_end() ? '\0' : s[p]; }
	void skip_space() {
		while (!at_end() && is_space(s[p]))
			p++;
	}
	bool eat(char c) {
		if (peek() == c) {
			p++;
			return true;
		}
		return false;
	}
	void expect(char c) {
		skip_space();
		if (!eat(c))
			fail(std::string("expected '") + c + "'");
	}

	bool name_char(char c) const {
		if (c == '.' || c == '[' || c == ']' || c == '\'' || c == '"' || c == '(' || c == ')' ||
			c == '*' || c == '?' || c == ',' || c == '@' || is_space(c))
			return false;
		return stop.find(c) == std::string::npos;
	}

	std::string dot_name() {
		const size_t first = p;
		while (!at_end() && name_char(s[p]))
			p++;
		if (p == first)
			fail("expected a field name");
		return s.substr(first, p - first);
	}

	std::string quoted() {
		const char q = s[p++];
		std::string out;
		while (true) {
			if (at_end())
				fail("unterminated quoted name");
			char c = s[p++];
			if (c == q)
				return out;
			if (c == '\\') {
				if (at_end())
					fail("unterminated quoted name");
				c = s[p++];
			}
			out += c;
		}
	}

	bool integer(int64_t &out) {
		skip_space();
		const size_t first = p;
		if (peek() == '-')
			p++;
		const size_t digits_at = p;
		while (!at_end() && s[p] >= '0' && s[p] <= '9')
			p++;
		if (p == digits_at) {
			p = first;
			return false;
		}
		if (p - digits_at > 15)
			fail("index too large");
		out = std::strtoll(s.c_str() + first, nullptr, 10);
		return true;
	}

	// Segments until the end of the text or a character that cannot continue
	// a path.  `definite` is cleared by any segment that can match many.
	void segments(std::vector<Segment> &out, bool &definite) {
		while (!at_end()) {
			const char c = s[p];
			if (c == '.') {
				p++;
				Segment seg;
				if (eat('.')) {
					definite = false;
					if (eat('*')) {
						seg.kind = Segment::DeepWildcard;
					} else {
						seg.kind = Segment::DeepName;
						seg.name = peek() == '[' ? bracket_name() : dot_name();
					}
				} else if (eat('*')) {
					seg.kind = Segment::Wildcard;
					definite = false;
				} else {
					seg.kind = Segment::Name;
					seg.name = dot_name();
				}
				out.push_back(std::move(seg));
			} else if (c == '[') {
				out.push_back(bracket(definite));
			} else {
				return;
			}
		}
	}

	// `['name']` after `..`
	std::string bracket_name() {
		p++;
		skip_space();
		if (peek() != '\'' && peek() != '"')
			fail("expected a quoted name");
		std::string name = quoted();
		expect(']');
		return name;
	}

	Segment bracket(bool &definite) {
		p++;  // '['
		skip_space();
		Segment seg;
		if (peek() == '\'' || peek() == '"') {
			seg.kind = Segment::Name;
			seg.name = quoted();
			skip_space();
			if (peek() == ',') {
				seg.kind = Segment::Union;
				seg.members.push_back(seg.name);
				seg.name.clear();
				union_rest(seg, definite);
			}
		} else if (eat('*')) {
			seg.kind = Segment::Wildcard;
			definite = false;
		} else if (peek() == '(') {
			script(seg);
		} else if (peek() == '?') {
			p++;
			skip_space();
			if (!eat('('))
				fail("expected '(' after '?'");
			seg.kind = Segment::Filter;
			seg.filter = expr();
			expect(')');
			definite = false;
		} else {
			int64_t a = 0;
			const bool has_a = integer(a);
			skip_space();
			if (peek() == ':') {
				seg.kind = Segment::Slice;
				definite = false;
				if (has_a)
					seg.start = a;
				p++;
				int64_t b = 0;
				if (integer(b))
					seg.end = b;
				skip_space();
				if (eat(':')) {
					int64_t st = 1;
					if (integer(st)) {
						if (st <= 0)
							fail("slice step must be positive");
						seg.step = st;
					}
				}
			} else if (has_a && peek() == ',') {
				seg.kind = Segment::Union;
				seg.members.push_back(a);
				union_rest(seg, definite);
			} else if (has_a) {
				seg.kind = Segment::Index;
				seg.index = a;
			} else {
				fail("expected an index, a quoted name, '*', a slice or a filter");
			}
		}
		expect(']');
		return seg;
	}

	// A script expression `[(@.length - k)]` (AWS accepts it, as Jayway's
	// JSONPath does): the k-th item from the end, an index like `[-k]`.
	// Only this form: @.length, then optionally + or - a whole number.
	void script(Segment &seg) {
		p++;  // '('
		skip_space();
		if (s.compare(p, 8, "@.length") != 0)
			fail("a script expression must be (@.length - n)");
		p += 8;
		skip_space();
		int64_t k = 0;
		if (peek() == '-' || peek() == '+') {
			const bool minus = s[p++] == '-';
			skip_space();
			if (peek() == '-' || !integer(k))
				fail("expected a whole number after @.length " + std::string(minus ? "-" : "+"));
			if (!minus)
				k = -k;
		}
		skip_space();
		if (!eat(')'))
			fail("expected ')' to end the script expression");
		skip_space();
		seg.kind = Segment::Index;
		// @.length + n (n >= 0) is past the end: an index no array reaches
		seg.index = k > 0 ? -k : std::numeric_limits<int64_t>::max();
	}

	// `[a,b,...]` after its first member: more indices or quoted names.
	void union_rest(Segment &seg, bool &definite) {
		definite = false;
		while (true) {
			skip_space();
			if (!eat(','))
				return;
			skip_space();
			if (seg.members.size() >= kMaxUnionMembers)
				fail("a union has at most " + std::to_string(kMaxUnionMembers) + " members");
			int64_t k = 0;
			if (peek() == '\'' || peek() == '"')
				seg.members.push_back(quoted());
			else if (integer(k))
				seg.members.push_back(k);
			else
				fail("expected an index or a quoted name in a union");
		}
	}
	static constexpr size_t kMaxUnionMembers = 256;

	// ---- filter expressions
	// `a || b || c` is one Or of three (not nested pairs), so a long chain
	// costs no recursion when it is parsed or evaluated.
	std::shared_ptr<const FilterExpr> expr() {
		auto first = conj();
		skip_space();
		if (s.compare(p, 2, "||") != 0)
			return first;
		auto e = std::make_shared<FilterExpr>();
		e->kind = FilterExpr::Or;
		e->kids.push_back(first);
		while (s.compare(p, 2, "||") == 0) {
			p += 2;
			e->kids.push_back(conj());
			skip_space();
		}
		return e;
	}
	std::shared_ptr<const FilterExpr> conj() {
		auto first = unary();
		skip_space();
		if (s.compare(p, 2, "&&") != 0)
			return first;
		auto e = std::make_shared<FilterExpr>();
		e->kind = FilterExpr::And;
		e->kids.push_back(first);
		while (s.compare(p, 2, "&&") == 0) {
			p += 2;
			e->kids.push_back(unary());
			skip_space();
		}
		return e;
	}
	// Every nesting of a filter (parentheses, !, a filter inside a filter's
	// path) passes here: the one place that counts it.
	struct Nest {
		PathParser &pp;
		explicit Nest(PathParser &pp) : pp(pp) {
			if (pp.depth >= limits::FILTER_DEPTH)
				throw LimitExceeded("the filter nests deeper than " +
									std::to_string(limits::FILTER_DEPTH) + " levels at offset " +
									std::to_string(pp.p) + limits::named("filter_depth"));
			pp.depth++;
		}
		~Nest() { pp.depth--; }
	};
	std::shared_ptr<const FilterExpr> unary() {
		Nest nest(*this);
		skip_space();
		if (peek() == '!' && s.compare(p, 2, "!=") != 0) {
			p++;
			auto e = std::make_shared<FilterExpr>();
			e->kind = FilterExpr::Not;
			e->kids = {unary()};
			return e;
		}
		if (eat('(')) {
			auto inner = expr();
			expect(')');
			return inner;
		}
		auto e = std::make_shared<FilterExpr>();
		e->left = operand();
		skip_space();
		static const char *ops[] = {"==", "!=", "<=", ">=", "<", ">"};
		for (const char *op : ops) {
			const size_t n = std::char_traits<char>::length(op);
			if (s.compare(p, n, op) == 0) {
				p += n;
				e->kind = FilterExpr::Compare;
				e->op = op;
				e->right = operand();
				return e;
			}
		}
		e->kind = FilterExpr::Exists;
		if (e->left.kind == FilterExpr::Operand::Literal)
			fail("a filter needs a comparison or a path");
		return e;
	}
	FilterExpr::Operand operand() {
		skip_space();
		FilterExpr::Operand o;
		const std::string saved = stop;
		stop = "=!<>&|";
		bool definite = true;
		if (eat('@')) {
			o.kind = FilterExpr::Operand::Current;
			segments(o.segments, definite);
		} else if (eat('$')) {
			o.kind = FilterExpr::Operand::Root;
			segments(o.segments, definite);
		} else if (peek() == '\'' || peek() == '"') {
			o.literal = quoted();
		} else if (s.compare(p, 4, "true") == 0) {
			p += 4;
			o.literal = true;
		} else if (s.compare(p, 5, "false") == 0) {
			p += 5;
			o.literal = false;
		} else if (s.compare(p, 4, "null") == 0) {
			p += 4;
			o.literal = nullptr;
		} else {
			// A JSON number (parsed by the JSON parser: no locale, no "inf").
			const size_t first = p;
			while (!at_end() && (std::isdigit(static_cast<unsigned char>(s[p])) || s[p] == '-' ||
								 s[p] == '+' || s[p] == '.' || s[p] == 'e' || s[p] == 'E'))
				p++;
			o.literal = json::parse(s.substr(first, p - first), nullptr, false);
			if (p == first || o.literal.is_discarded() || !o.literal.is_number()) {
				p = first;
				fail("expected an operand");
			}
		}
		if (!definite)
			fail("a filter operand must be a definite path");
		stop = saved;
		return o;
	}
};

namespace {

thread_local StatesFields *t_states_fields = nullptr;

// $states in a JSONPath path: only where a StatesFields scope allows it, and
// only into one of its fields.
void check_states_path(const std::vector<Segment> &segs) {
	StatesFields *scope = StatesFields::current();
	if (!scope)
		throw SyntaxError("$states is reserved: a JSONPath state may read it only in Assign");
	const auto &fields = scope->fields();
	std::string names;
	for (const auto &f : fields)
		names += (names.empty() ? "" : ", ") + f;
	if (segs.empty() || segs.front().kind != Segment::Name ||
		std::find(fields.begin(), fields.end(), segs.front().name) == fields.end())
		throw SyntaxError("$states here must be followed by one of its fields: " + names);
	scope->used = true;
}

[[noreturn]] void path_too_long(size_t length) {
	throw LimitExceeded("the path has " + std::to_string(length) + " characters, more than " +
						std::to_string(limits::PATH_LENGTH) + limits::named("path_length"));
}

}  // namespace

Path parse_path_prefix(const std::string &text, size_t &pos, const std::string &stop_chars) {
	PathParser pp{text, pos, stop_chars};
	Path path;
	if (pp.peek() != '$')
		pp.fail("a path starts with '$'");
	pp.p++;
	path.context_ = pp.eat('$');
	// `$name`: a variable (Assign), then the usual segments inside its value
	if (!path.context_) {
		const size_t n = variable_name_at(pp.s, pp.p);
		path.variable_ = pp.s.substr(pp.p, n);
		pp.p += n;
	}
	pp.segments(path.segments_, path.definite_);
	if (path.variable_ == "states")
		check_states_path(path.segments_);
	if (pp.p - pos > limits::PATH_LENGTH)
		path_too_long(pp.p - pos);
	path.text_ = text.substr(pos, pp.p - pos);
	pos = pp.p;
	return path;
}

StatesFields::StatesFields(std::vector<std::string> fields)
	: fields_(std::move(fields)), outer_(t_states_fields) {
	t_states_fields = this;
}

StatesFields::~StatesFields() { t_states_fields = outer_; }

StatesFields *StatesFields::current() { return t_states_fields; }

Path Path::parse(const std::string &text) {
	if (text.size() > limits::PATH_LENGTH)
		path_too_long(text.size());
	size_t pos = 0;
	Path path = parse_path_prefix(text, pos, "");
	if (pos != text.size())
		throw SyntaxError("unexpected '" + text.substr(pos, 1) + "' at offset " +
						  std::to_string(pos));
	return path;
}

bool Path::is_reference(bool allow_variable) const {
	if (context_ || (!variable_.empty() && !allow_variable))
		return false;
	return std::all_of(segments_.begin(), segments_.end(), [](const Segment &s) {
		return s.kind == Segment::Name || s.kind == Segment::Index;
	});
}

namespace {

void walk(const json &node, const std::vector<Segment> &segs, size_t i, const json &root,
		  std::vector<const json *> &out);

// The node a definite relative path names, or null.
const json *resolve(const json &node, const std::vector<Segment> &segs, const json &root) {
	std::vector<const json *> found;
	walk(node, segs, 0, root, found);
	return found.empty() ? nullptr : found.front();
}

bool number_less(const json &a, const json &b) {
	if (a.is_number_integer() && b.is_number_integer()) {
		if (a.is_number_unsigned() || b.is_number_unsigned()) {
			// Mixed signs: a negative signed value is below any unsigned one.
			if (a.is_number_unsigned() && b.is_number_unsigned())
				return a.get<uint64_t>() < b.get<uint64_t>();
			if (a.is_number_unsigned())
				return b.get<int64_t>() >= 0 && a.get<uint64_t>() < b.get<uint64_t>();
			return a.get<int64_t>() < 0 || a.get<uint64_t>() < b.get<uint64_t>();
		}
		return a.get<int64_t>() < b.get<int64_t>();
	}
	return a.get<double>() < b.get<double>();
}

bool filter_true(const FilterExpr &e, const json &current, const json &root) {
	limits::RecursionGuard guard;
	auto value = [&](const FilterExpr::Operand &o) -> const json * {
		switch (o.kind) {
		case FilterExpr::Operand::Current:
			return resolve(current, o.segments, root);
		case FilterExpr::Operand::Root:
			return resolve(root, o.segments, root);
		case FilterExpr::Operand::Literal:
			return &o.literal;
		}
		return nullptr;
	};
	switch (e.kind) {
	case FilterExpr::Or:
		return std::any_of(e.kids.begin(), e.kids.end(),
						   [&](const auto &k) { return filter_true(*k, current, root); });
	case FilterExpr::And:
		return std::all_of(e.kids.begin(), e.kids.end(),
						   [&](const auto &k) { return filter_true(*k, current, root); });
	case FilterExpr::Not:
		return !filter_true(*e.kids[0], current, root);
	case FilterExpr::Exists:
		return value(e.left) != nullptr;
	case FilterExpr::Compare: {
		const json *a = value(e.left);
		const json *b = value(e.right);
		if (!a || !b)
			return false;
		if (e.op == "==")
			return *a == *b;
		if (e.op == "!=")
			return *a != *b;
		bool lt, gt;
		if (a->is_number() && b->is_number()) {
			lt = number_less(*a, *b);
			gt = number_less(*b, *a);
		} else if (a->is_string() && b->is_string()) {
			lt = a->get_ref<const std::string &>() < b->get_ref<const std::string &>();
			gt = b->get_ref<const std::string &>() < a->get_ref<const std::string &>();
		} else {
			return false;  // ordering across types is not defined
		}
		if (e.op == "<")
			return lt;
		if (e.op == ">")
			return gt;
		if (e.op == "<=")
			return !gt;
		return !lt;	 // ">="
	}
	}
	return false;
}

// Python-style slice bounds.
void slice_bounds(const Segment &seg, int64_t n, int64_t &from, int64_t &to) {
	auto norm = [n](int64_t v) { return v < 0 ? std::max<int64_t>(0, v + n) : std::min(v, n); };
	from = seg.start ? norm(*seg.start) : 0;
	to = seg.end ? norm(*seg.end) : n;
}

void deep(const json &node, const std::vector<Segment> &segs, size_t i, const json &root,
		  std::vector<const json *> &out) {
	limits::RecursionGuard guard;
	limits::count_work(1);
	const Segment &seg = segs[i];
	if (seg.kind == Segment::DeepName) {
		if (node.is_object()) {
			auto it = node.find(seg.name);
			if (it != node.end())
				walk(*it, segs, i + 1, root, out);
		}
	} else {  // DeepWildcard: every child of this node
		if (node.is_structured())
			for (const auto &child : node)
				walk(child, segs, i + 1, root, out);
	}
	if (node.is_structured())
		for (const auto &child : node)
			deep(child, segs, i, root, out);
}

void walk(const json &node, const std::vector<Segment> &segs, size_t i, const json &root,
		  std::vector<const json *> &out) {
	limits::count_work(1);	// a node visited (the step's budget, the host's interrupts)
	if (i == segs.size()) {
		out.push_back(&node);
		return;
	}
	limits::RecursionGuard guard;
	const Segment &seg = segs[i];
	switch (seg.kind) {
	case Segment::Name:
		if (node.is_object()) {
			auto it = node.find(seg.name);
			if (it != node.end())
				walk(*it, segs, i + 1, root, out);
		}
		return;
	case Segment::Index:
		if (node.is_array()) {
			const int64_t n = static_cast<int64_t>(node.size());
			const int64_t k = seg.index < 0 ? seg.index + n : seg.index;
			if (k >= 0 && k < n)
				walk(node[static_cast<size_t>(k)], segs, i + 1, root, out);
		}
		return;
	case Segment::Wildcard:
		if (node.is_structured())
			for (const auto &child : node)
				walk(child, segs, i + 1, root, out);
		return;
	case Segment::Slice:
		if (node.is_array()) {
			int64_t from, to;
			slice_bounds(seg, static_cast<int64_t>(node.size()), from, to);
			for (int64_t k = from; k < to; k += seg.step)
				walk(node[static_cast<size_t>(k)], segs, i + 1, root, out);
		}
		return;
	case Segment::Union:
		for (const json &m : seg.members) {
			if (m.is_string()) {
				if (node.is_object()) {
					auto it = node.find(m.get_ref<const std::string &>());
					if (it != node.end())
						walk(*it, segs, i + 1, root, out);
				}
			} else if (node.is_array()) {
				const int64_t n = static_cast<int64_t>(node.size());
				const int64_t k = m.get<int64_t>() < 0 ? m.get<int64_t>() + n : m.get<int64_t>();
				if (k >= 0 && k < n)
					walk(node[static_cast<size_t>(k)], segs, i + 1, root, out);
			}
		}
		return;
	case Segment::DeepName:
	case Segment::DeepWildcard:
		deep(node, segs, i, root, out);
		return;
	case Segment::Filter:
		if (node.is_array()) {
			for (const auto &child : node)
				if (filter_true(*seg.filter, child, root))
					walk(child, segs, i + 1, root, out);
		} else if (node.is_object() && filter_true(*seg.filter, node, root)) {
			walk(node, segs, i + 1, root, out);
		}
		return;
	}
}

}  // namespace

std::optional<json> Path::select(const json &root) const {
	std::vector<const json *> found;
	walk(root, segments_, 0, root, found);
	if (definite_) {
		if (found.empty())
			return std::nullopt;
		return *found.front();
	}
	json all = json::array();
	limits::count_bytes(found.size() * limits::kItemBytes);
	for (const json *j : found)
		all.push_back(*j);
	return all;
}

std::optional<json> Path::select(const json &input, const json &context, const json *vars) const {
	if (!variable_.empty()) {
		if (!vars || !vars->is_object())
			return std::nullopt;
		auto it = vars->find(variable_);
		if (it == vars->end())
			return std::nullopt;
		return select(*it);
	}
	return select(context_ ? context : input);
}

bool Path::assign(json &target, json value) const {
	json *cur = &target;
	for (const Segment &seg : segments_) {
		if (seg.kind == Segment::Name) {
			if (!cur->is_object())
				return false;
			// A missing field on the way becomes an empty object; an existing
			// one is used as it is (a scalar there makes the next step fail).
			const bool missing = !cur->contains(seg.name);
			cur = &(*cur)[seg.name];
			if (missing && &seg != &segments_.back())
				*cur = json::object();
		} else if (seg.kind == Segment::Index) {
			if (!cur->is_array())
				return false;
			const int64_t n = static_cast<int64_t>(cur->size());
			const int64_t k = seg.index < 0 ? seg.index + n : seg.index;
			if (k < 0 || k >= n)
				return false;
			cur = &(*cur)[static_cast<size_t>(k)];
		} else {
			return false;
		}
	}
	*cur = std::move(value);
	return true;
}

}  // namespace genroc::asl::detail
