// jsonata_regex.cpp — JSONata's regular expressions (/…/im literals, and
// $match, $contains, $split, $replace with them) on PCRE2, with JavaScript's
// syntax and bounded time and memory.
//
// Why PCRE2, and its interpreter rather than its JIT
//   JSONata's regular expressions are JavaScript's, back-references and
//   lookarounds included, which rules out RE2.  PCRE2's interpreter
//   (pcre2_match) keeps its backtracking state in frames on the heap since
//   10.30, so no subject and no pattern makes it recurse on the C stack (the
//   reason std::regex went: it recursed once per character of the subject
//   and overflowed a PostgreSQL backend's stack); its memory is bounded by a
//   heap limit and a depth limit, its work by the callout below.  The JIT
//   would match faster, but it wants executable memory in every process
//   that evaluates an expression (a PostgreSQL backend among them), a
//   compile per expression that is mostly run once, and a stack of its own
//   to size; a JSONata subject is at most jsonata_regex_subject bytes, where
//   the interpreter's speed is enough.
//
// JavaScript's syntax on PCRE2 (js_to_pcre2 rewrites the pattern; the
//   options in compile_regex do the rest)
//   .          [^\n\r\u2028\u2029], JavaScript's line terminators
//   ^ $ (m)    at the start / end of the subject or next to a line
//              terminator (lookarounds); without m, $ is the end only
//   \s \S      JavaScript's white space (ASCII and Unicode's spaces, U+FEFF);
//              \S inside a character class stays PCRE2's (ASCII) \S
//   \v         U+000B (PCRE2's \v is a class)
//   \uHHHH \xHH \U  as JavaScript (PCRE2_ALT_BSUX)
//   \<letter>  JavaScript's identity escape where JavaScript gives the letter
//              no meaning (\a \e \h \z \Q \K \p … match the letter; \k only
//              where the pattern names a group)
//   [ in a class  a literal [ (no POSIX [:alpha:] classes)
//   [] [^]     match nothing / any character (PCRE2_ALLOW_EMPTY_CLASS)
//   \1 before its group is set  matches the empty string
//              (PCRE2_MATCH_UNSET_BACKREF)
//
// Bounds (a limit ends the expression with L0001, never the process)
//   work     PCRE2_AUTO_CALLOUT puts a callout before each item of the
//            pattern; each charges the expression's jsonata_steps with the
//            work since the one before (count_work: 1, the characters the
//            match moved, and what the next item may scan before it fails
//            without a callout: a repetition's least count, a
//            back-reference's text), and ends the match when they run out.
//            pcre2's match limit (backtracking points per start position)
//            is set to the same budget.
//   memory   jsonata_regex_memory bytes of backtracking frames (PCRE2's heap
//            limit; its depth limit follows from it)
//   subject  jsonata_regex_subject bytes: what PCRE2 does once per search
//            (a start position's scan for a required character) and the
//            match's index in characters are linear in the subject, and a
//            $match may search once per character

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "jsonata_internal.hpp"
#include "limits.hpp"

namespace genroc::jsonata::detail {
namespace lim = genroc::limits;

namespace {

// PCRE2's heap for one match's backtracking frames (jsonata_regex_memory),
// and how deep they may nest: a frame is at least 128 bytes (plus 16 per
// capture group), so the heap limit is the one that ends a match.
constexpr uint32_t REGEX_HEAP_KIB = static_cast<uint32_t>(lim::JSONATA_REGEX_MEMORY / 1024);
constexpr uint32_t REGEX_DEPTH = static_cast<uint32_t>(lim::JSONATA_REGEX_MEMORY / 128);

// JavaScript's \s beyond PCRE2's (ASCII) \s, as PCRE2_ALT_BSUX escapes.
constexpr const char *kJsSpaces =
	"\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
constexpr const char *kLineTerminators = "\\n\\r\\u2028\\u2029";

bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Does the pattern name a group ((?<name>…)), which makes \k a back-reference?
bool names_a_group(const std::string &p) {
	for (size_t i = 0; i + 3 < p.size(); i++)
		if (p.compare(i, 3, "(?<") == 0 && p[i + 3] != '=' && p[i + 3] != '!')
			return true;
	return false;
}

// The pattern with JavaScript's meaning in PCRE2's syntax (see the header).
std::string js_to_pcre2(const std::string &p, bool multiline) {
	const bool named = names_a_group(p);
	std::string out;
	out.reserve(p.size() + 16);
	bool in_class = false;
	for (size_t i = 0; i < p.size(); i++) {
		const char c = p[i];
		if (c == '\\') {
			if (i + 1 >= p.size()) {
				out += "\\\\";	// a trailing backslash: PCRE2 refuses it too, cleanly
				break;
			}
			const char e = p[++i];
			switch (e) {
			case 's':
				if (in_class)
					out += std::string("\\s") + kJsSpaces;
				else
					out += std::string("[\\s") + kJsSpaces + "]";
				break;
			case 'S':
				out += in_class ? std::string("\\S") : std::string("[^\\s") + kJsSpaces + "]";
				break;
			case 'v': out += "\\x0b"; break;
			case 'd': case 'D': case 'w': case 'W': case 'f': case 'n': case 'r': case 't':
			case 'u': case 'x':
				out += '\\';
				out += e;
				break;
			case 'b':
				out += "\\b";  // a word boundary, in a class a backspace, as in JavaScript
				break;
			case 'B':
				out += in_class ? "B" : "\\B";
				break;
			case 'c':
				if (i + 1 < p.size() && ascii_alpha(p[i + 1])) {
					out += "\\c";
					out += p[++i];
				} else {
					out += "\\\\c";	 // JavaScript: a backslash and a c
				}
				break;
			case 'k':
				out += named && !in_class ? "\\k" : "k";
				break;
			default:
				if (e >= '0' && e <= '9') {
					out += '\\';
					out += e;
				} else if (ascii_alpha(e)) {
					out += e;  // an identity escape: the letter itself
				} else {
					out += '\\';  // a backslash before anything else is that character
					out += e;
				}
			}
			continue;
		}
		if (in_class) {
			if (c == ']')
				in_class = false;
			if (c == '[')
				out += "\\[";
			else
				out += c;
			continue;
		}
		switch (c) {
		case '[':
			in_class = true;
			out += c;
			if (i + 1 < p.size() && p[i + 1] == '^')
				out += p[++i];
			// JavaScript: [] and [^] (PCRE2_ALLOW_EMPTY_CLASS); a ] right
			// after [ or [^ ends the class at once.
			if (i + 1 < p.size() && p[i + 1] == ']') {
				out += p[++i];
				in_class = false;
			}
			break;
		case '.': out += std::string("[^") + kLineTerminators + "]"; break;
		case '^':
			out += multiline ? std::string("(?:^|(?<=[") + kLineTerminators + "]))" : "^";
			break;
		case '$':
			out += multiline ? std::string("(?:$|(?=[") + kLineTerminators + "]))" : "$";
			break;
		default: out += c;
		}
	}
	return out;
}

pcre2_code *compile_one(const std::string &pattern, uint32_t options, std::string &error) {
	pcre2_compile_context *cc = pcre2_compile_context_create(nullptr);
	if (!cc) {
		error = "out of memory";
		return nullptr;
	}
	// Nesting is bounded as the expression's (compiling recurses per level).
	pcre2_set_parens_nest_limit(cc, static_cast<uint32_t>(lim::JSONATA_DEPTH));
	int code = 0;
	PCRE2_SIZE offset = 0;
	pcre2_code *re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
								   options, &code, &offset, cc);
	pcre2_compile_context_free(cc);
	if (!re) {
		PCRE2_UCHAR buf[256];
		if (pcre2_get_error_message(code, buf, sizeof buf) < 0)
			std::strcpy(reinterpret_cast<char *>(buf), "invalid pattern");
		error = reinterpret_cast<const char *>(buf);
	}
	return re;
}

// A valid UTF-8 string (what PCRE2_UTF takes without a check per match).
bool valid_utf8(const std::string &s) {
	const auto *p = reinterpret_cast<const unsigned char *>(s.data());
	const size_t n = s.size();
	for (size_t i = 0; i < n;) {
		const unsigned c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp;
		if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
		else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
		else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
		else return false;
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3F);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		i += len;
	}
	return true;
}

}  // namespace

struct Regex {
	std::string pattern;			   // translated to PCRE2's syntax
	pcre2_code *code = nullptr;		   // PCRE2_UTF
	pcre2_code *invalid_utf = nullptr;  // the same with PCRE2_MATCH_INVALID_UTF
	Regex() = default;
	Regex(const Regex &) = delete;
	Regex &operator=(const Regex &) = delete;
	~Regex() {
		pcre2_code_free(code);
		pcre2_code_free(invalid_utf);
	}
};

RegexP compile_regex(const std::string &pattern, const std::string &flags, std::string &error) {
	const bool multiline = flags.find('m') != std::string::npos;
	uint32_t options = PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_DOLLAR_ENDONLY |
					   PCRE2_MATCH_UNSET_BACKREF | PCRE2_NEVER_BACKSLASH_C | PCRE2_AUTO_CALLOUT;
	if (flags.find('i') != std::string::npos)
		options |= PCRE2_CASELESS;
	const std::string translated = js_to_pcre2(pattern, multiline);
	// The pattern itself must be valid UTF-8 (a lone surrogate's \uD800 in
	// the expression's text is not): PCRE2 says so as a compile error.
	auto re = std::make_shared<Regex>();
	re->pattern = translated;
	re->code = compile_one(translated, options, error);
	if (!re->code)
		return nullptr;
	re->invalid_utf = compile_one(translated, options | PCRE2_MATCH_INVALID_UTF, error);
	if (!re->invalid_utf)
		return nullptr;
	return re;
}

// ------------------------------------------------------------------ matching

namespace {

// What the callout counts (see the header): the expression's steps.
struct Work {
	Context *cx;
	const std::string *pattern;	 // the translated pattern the callouts point into
	size_t last = 0;			 // where the previous callout was
	size_t weight = 1;			 // the cost of a character for the item after it
	bool over = false;
	// The step's budget or the host's interrupt check stopped the match
	// (limits::count_work threw in the callout): thrown again once PCRE2
	// has returned, never through its C frames.
	std::exception_ptr stopped;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The least count of an item's quantifier {m}, {m,} or {m,n} (possessive
// or lazy too), 1 without one.
size_t least_count(const char *item, size_t len) {
	while (len > 0 && (item[len - 1] == '+' || item[len - 1] == '?'))
		len--;
	if (len < 3 || item[len - 1] != '}')
		return 1;
	size_t open = len - 1;
	while (open > 0 && item[open - 1] != '{' && len - open < 16)
		open--;
	if (open == 0 || item[open - 1] != '{' || !is_digit(item[open]))
		return 1;
	size_t m = 0;
	for (size_t i = open; i < len - 1 && is_digit(item[i]); i++)
		m = m * 10 + static_cast<size_t>(item[i] - '0');
	return m;
}

// A callout runs before every item of the pattern and charges the steps
// the matcher took since the one before: 1, plus the characters it moved
// (what a repetition that matched scanned), plus what the next item may
// scan before it fails without a callout in between: a repetition's least
// count, a back-reference's text.  So the work between two callouts is
// what they charge, and a pattern cannot hide a long scan behind a step.
int count_work(pcre2_callout_block *cb, void *data) {
	auto *w = static_cast<Work *>(data);
	const size_t pos = cb->current_position;
	// A character costs more in a long class ([…] of many ranges): the
	// item's length in the pattern weighs each character it tests.
	size_t charge = 1 + (pos > w->last ? pos - w->last : w->last - pos) * w->weight;
	w->last = pos;
	w->weight = 1;
	if (cb->pattern_position < w->pattern->size()) {
		const char *item = w->pattern->data() + cb->pattern_position;
		const size_t len = std::min(cb->next_item_length, w->pattern->size() - cb->pattern_position);
		w->weight = 1 + len / 16;
		size_t each = w->weight;
		const bool backref = (len >= 2 && item[0] == '\\' && (is_digit(item[1]) || item[1] == 'k')) ||
							 (len >= 4 && std::memcmp(item, "(?P=", 4) == 0);
		if (backref) {
			// The longest text a group holds now (the reference's, at most).
			for (uint32_t i = 1; i < cb->capture_top; i++) {
				const PCRE2_SIZE a = cb->offset_vector[2 * i], b = cb->offset_vector[2 * i + 1];
				if (a != PCRE2_UNSET && b != PCRE2_UNSET && b > a)
					each = std::max<size_t>(each, b - a);
			}
			charge += cb->capture_top;
		}
		charge += each * least_count(item, len);
	}
	w->cx->steps += charge;
	// the same work counts against the step's budget, and asks the host
	// for a pending cancel every few thousand characters moved
	try {
		lim::count_work(charge);
	} catch (...) {
		w->stopped = std::current_exception();
		return PCRE2_ERROR_CALLOUT;
	}
	if (w->cx->steps > lim::JSONATA_STEPS) {
		w->over = true;
		return PCRE2_ERROR_CALLOUT;	 // abandons the match; no C++ exception through PCRE2
	}
	return 0;
}

[[noreturn]] void too_many_steps() {
	fail("L0001", "a regular expression took more than " + std::to_string(lim::JSONATA_STEPS) +
					  " steps (the pattern backtracks too much on this string)" +
					  lim::named("jsonata_steps"));
}

[[noreturn]] void too_much_memory() {
	fail("L0001", "a regular expression needed more than " +
					  std::to_string(lim::JSONATA_REGEX_MEMORY) +
					  " bytes to remember where to backtrack (the pattern backtracks too deeply on this string)" +
					  lim::named("jsonata_regex_memory"));
}

}  // namespace

void check_regex_subject(const std::string &s) {
	if (s.size() > lim::JSONATA_REGEX_SUBJECT)
		fail("L0001", "a regular expression was run on a string of " + std::to_string(s.size()) +
						  " bytes, more than " + std::to_string(lim::JSONATA_REGEX_SUBJECT) +
						  lim::named("jsonata_regex_subject"));
}

struct RegexSearch::State {
	pcre2_match_context *mc = nullptr;
	pcre2_match_data *md = nullptr;
	Work work;
	~State() {
		pcre2_match_data_free(md);
		pcre2_match_context_free(mc);
	}
};

RegexSearch::RegexSearch(Context &cx, const Regex &re, const std::string &s)
	: s_(s), st_(std::make_unique<State>()), re_(re) {
	check_regex_subject(s);
	// A subject that is not valid UTF-8 (a lone surrogate's escape made it)
	// goes to the variant whose invalid sequences match nothing; a valid
	// one is checked here once, not by PCRE2 on every match.
	valid_ = valid_utf8(s);
	st_->work.cx = &cx;
	st_->work.pattern = &re.pattern;
	st_->mc = pcre2_match_context_create(nullptr);
	st_->md = pcre2_match_data_create_from_pattern(re.code, nullptr);
	if (!st_->mc || !st_->md)
		throw std::bad_alloc();
	pcre2_set_callout(st_->mc, count_work, &st_->work);
	pcre2_set_heap_limit(st_->mc, REGEX_HEAP_KIB);
	pcre2_set_depth_limit(st_->mc, REGEX_DEPTH);
}

RegexSearch::~RegexSearch() = default;

bool RegexSearch::find(size_t from, RegexMatch &m) {
	Context &cx = *st_->work.cx;
	if (cx.steps >= lim::JSONATA_STEPS)
		too_many_steps();
	// pcre2's own count of backtracking points (per start position) is a
	// second bound under the callout's.
	pcre2_set_match_limit(st_->mc, static_cast<uint32_t>(std::min<uint64_t>(
									   lim::JSONATA_STEPS - cx.steps, UINT32_MAX)));
	st_->work.last = from;
	st_->work.weight = 1;
	st_->work.over = false;
	st_->work.stopped = nullptr;
	const int rc = pcre2_match(valid_ ? re_.code : re_.invalid_utf, reinterpret_cast<PCRE2_SPTR>(s_.data()), s_.size(), from,
							   valid_ ? PCRE2_NO_UTF_CHECK : 0, st_->md, st_->mc);
	if (st_->work.stopped)
		std::rethrow_exception(st_->work.stopped);
	if (rc == PCRE2_ERROR_NOMATCH)
		return false;
	if (st_->work.over || rc == PCRE2_ERROR_MATCHLIMIT)
		too_many_steps();
	if (rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_NOMEMORY)
		too_much_memory();
	if (rc < 0) {
		PCRE2_UCHAR buf[256];
		if (pcre2_get_error_message(rc, buf, sizeof buf) < 0)
			std::strcpy(reinterpret_cast<char *>(buf), "unknown error");
		fail("D3137", std::string("a regular expression failed: ") +
						  reinterpret_cast<const char *>(buf));
	}
	const uint32_t pairs = pcre2_get_ovector_count(st_->md);
	const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(st_->md);
	m.ov.assign(ov, ov + 2 * pairs);
	for (auto &o : m.ov)
		if (o == PCRE2_UNSET)
			o = RegexMatch::npos;
	// \K could put a match's start after its end; JavaScript has none.
	if (m.ov[1] < m.ov[0])
		m.ov[1] = m.ov[0];
	return true;
}

std::string RegexMatch::group(const std::string &s, size_t i) const {
	return matched(i) ? s.substr(start(i), end(i) - start(i)) : std::string();
}

Value regex_match_object(const RegexMatch &m, const std::string &subject) {
	Value o = Value::object();
	o.o->set("match", Value::string(m.group(subject, 0)));
	o.o->set("index", Value::number(static_cast<double>(utf8_length(subject.substr(0, m.start(0))))));
	Value groups = Value::array(false);
	for (size_t i = 1; i < m.groups(); i++)
		groups.a->items.push_back(Value::string(m.group(subject, i)));
	o.o->set("groups", groups);
	return o;
}

}  // namespace genroc::jsonata::detail
