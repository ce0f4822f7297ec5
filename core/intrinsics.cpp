// intrinsics.cpp — ASL intrinsic functions (States.Format, States.Hash, ...)
// used as values of `.$` keys in Parameters and ResultSelector.
//
// A call is parsed once, at define time (unknown function, wrong number of
// arguments or a literal of the wrong type is a definition error); it is
// evaluated at run time, where a bad argument is States.IntrinsicFailure,
// an error the state's Catch can handle.

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cctype>
#include <climits>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "digest.hpp"
#include "internal.hpp"

namespace genroc::asl::detail {

namespace {

// Argument kinds: 's' string, 'i' integer, 'n' number, 'b' boolean,
// 'a' array, 'o' object, '*' anything.  `rest` types the arguments after
// the listed ones (0: none allowed).
struct Signature {
	const char *name;
	const char *args;
	size_t min_args;
	char rest;
};

const Signature signatures[] = {
	{"States.Format", "s", 1, '*'},
	{"States.StringToJson", "s", 1, 0},
	{"States.JsonToString", "*", 1, 0},
	{"States.Array", "", 0, '*'},
	{"States.ArrayPartition", "ai", 2, 0},
	{"States.ArrayContains", "a*", 2, 0},
	{"States.ArrayRange", "iii", 3, 0},
	{"States.ArrayGetItem", "ai", 2, 0},
	{"States.ArrayLength", "a", 1, 0},
	{"States.ArrayUnique", "a", 1, 0},
	{"States.Base64Encode", "s", 1, 0},
	{"States.Base64Decode", "s", 1, 0},
	{"States.Hash", "ss", 2, 0},
	{"States.JsonMerge", "oob", 3, 0},
	{"States.MathRandom", "iii", 2, 0},
	{"States.MathAdd", "nn", 2, 0},
	{"States.StringSplit", "ss", 2, 0},
	{"States.UUID", "", 0, 0},
};

const Signature *find_signature(const std::string &name) {
	for (const auto &s : signatures)
		if (name == s.name)
			return &s;
	return nullptr;
}

size_t max_args(const Signature &sig) {
	return sig.rest ? SIZE_MAX : std::char_traits<char>::length(sig.args);
}

char arg_type(const Signature &sig, size_t i) {
	const size_t listed = std::char_traits<char>::length(sig.args);
	return i < listed ? sig.args[i] : sig.rest;
}

// A whole number that fits int64 (an integral float too: 2.0 counts).
bool is_integral(const json &v) {
	if (v.is_number_unsigned())
		return v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
	if (v.is_number_integer())
		return true;
	if (v.is_number_float()) {
		const double d = v.get<double>();
		return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15;
	}
	return false;
}

bool type_fits(char t, const json &v) {
	switch (t) {
	case 's':
		return v.is_string();
	case 'i':
		return is_integral(v);
	case 'n':
		return v.is_number();
	case 'b':
		return v.is_boolean();
	case 'a':
		return v.is_array();
	case 'o':
		return v.is_object();
	default:
		return true;
	}
}

const char *type_name(char t) {
	switch (t) {
	case 's':
		return "a string";
	case 'i':
		return "an integer";
	case 'n':
		return "a number";
	case 'b':
		return "a boolean";
	case 'a':
		return "an array";
	case 'o':
		return "an object";
	default:
		return "a value";
	}
}

const char *const hash_algorithms[] = {"MD5", "SHA-1", "SHA-256", "SHA-384", "SHA-512"};

// ---------------------------------------------------------------- parsing

struct CallParser {
	const std::string &s;
	size_t p = 0;
	size_t depth = 0;  // calls open around the one being parsed

	[[noreturn]] void fail(const std::string &why) const {
		throw SyntaxError(why + " at offset " + std::to_string(p));
	}
	void skip_space() {
		while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r'))
			p++;
	}
	char peek() const { return p < s.size() ? s[p] : '\0'; }

	std::shared_ptr<const Call> call() {
		if (depth >= limits::INTRINSIC_DEPTH)
			throw LimitExceeded("intrinsic calls nest deeper than " +
								std::to_string(limits::INTRINSIC_DEPTH) + " levels at offset " +
								std::to_string(p) + limits::named("intrinsic_depth"));
		depth++;
		auto c = call_body();
		depth--;
		return c;
	}

	std::shared_ptr<const Call> call_body() {
		const size_t first = p;
		while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '.'))
			p++;
		auto c = std::make_shared<Call>();
		c->name = s.substr(first, p - first);
		const Signature *sig = find_signature(c->name);
		if (!sig) {
			p = first;
			fail("unknown intrinsic function \"" + c->name + "\"");
		}
		skip_space();
		if (peek() != '(')
			fail("expected '(' after " + c->name);
		p++;
		skip_space();
		if (peek() == ')') {
			p++;
		} else {
			while (true) {
				skip_space();
				c->args.push_back(arg());
				skip_space();
				if (peek() == ',') {
					p++;
					continue;
				}
				if (peek() == ')') {
					p++;
					break;
				}
				fail("expected ',' or ')' in the arguments of " + c->name);
			}
		}
		if (c->args.size() < sig->min_args || c->args.size() > max_args(*sig))
			throw SyntaxError(c->name + " takes " +
							  (sig->min_args == max_args(*sig)
								   ? std::to_string(sig->min_args)
								   : sig->rest ? "at least " + std::to_string(sig->min_args)
											   : std::to_string(sig->min_args) + " to " +
													 std::to_string(max_args(*sig))) +
							  " argument(s), not " + std::to_string(c->args.size()));
		for (size_t i = 0; i < c->args.size(); i++) {
			const Arg &a = c->args[i];
			const char t = arg_type(*sig, i);
			if (a.kind == Arg::Literal && !type_fits(t, a.literal))
				throw SyntaxError(c->name + ": argument " + std::to_string(i + 1) + " must be " +
								  type_name(t));
		}
		if (c->name == "States.Hash" && c->args[1].kind == Arg::Literal) {
			const auto &alg = c->args[1].literal.get_ref<const std::string &>();
			bool known = false;
			for (const char *h : hash_algorithms)
				known = known || alg == h;
			if (!known)
				throw SyntaxError("States.Hash: unknown algorithm \"" + alg +
								  "\" (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)");
		}
		return c;
	}

	Arg arg() {
		Arg a;
		const char c = peek();
		if (c == '\'') {
			p++;
			a.kind = Arg::Literal;
			a.is_string = true;
			std::string value;
			const size_t first = p;
			while (true) {
				if (p >= s.size())
					fail("unterminated string");
				char ch = s[p++];
				if (ch == '\'')
					break;
				if (ch == '\\') {
					if (p >= s.size())
						fail("unterminated string");
					ch = s[p++];
					// AWS escapes only its reserved characters; \" and the like are refused.
					if (ch != '\'' && ch != '{' && ch != '}' && ch != '\\')
						fail("a backslash in a string may escape only ' { } or \\");
				}
				value += ch;
			}
			a.raw = s.substr(first, p - 1 - first);
			a.literal = value;
		} else if (c == '$') {
			a.kind = Arg::PathRef;
			size_t pos = p;
			a.path = std::make_shared<Path>(parse_path_prefix(s, pos, ""));
			p = pos;
		} else if (s.compare(p, 7, "States.") == 0) {
			a.kind = Arg::Nested;
			a.call = call();
		} else if (s.compare(p, 4, "true") == 0 || s.compare(p, 5, "false") == 0 ||
				   s.compare(p, 4, "null") == 0) {
			a.kind = Arg::Literal;
			const size_t n = s[p] == 'f' ? 5 : 4;
			a.literal = json::parse(s.substr(p, n));
			p += n;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			const size_t first = p;
			p++;
			while (p < s.size() && (std::isdigit(static_cast<unsigned char>(s[p])) || s[p] == '.' ||
									s[p] == 'e' || s[p] == 'E' || s[p] == '+' || s[p] == '-'))
				p++;
			a.kind = Arg::Literal;
			a.literal = json::parse(s.substr(first, p - first), nullptr, false);
			if (a.literal.is_discarded()) {
				p = first;
				fail("bad number");
			}
		} else {
			fail("expected an argument (a 'string', a number, true, false, null, a path or a "
				 "function call)");
		}
		return a;
	}
};

// ---------------------------------------------------------------- helpers

[[noreturn]] void intrinsic_fail(const std::string &fn, const std::string &why) {
	throw Failure(ERR_INTRINSIC, fn + ": " + why);
}

int64_t as_int(const json &v) {
	return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
}

bool valid_utf8(const std::string &s) {
	size_t i = 0;
	while (i < s.size()) {
		const unsigned char c = static_cast<unsigned char>(s[i]);
		size_t n;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			n = 1;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + n >= s.size())	// truncated sequence
			return false;
		for (size_t k = 1; k <= n; k++) {
			const unsigned char cc = static_cast<unsigned char>(s[i + k]);
			if ((cc & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (cc & 0x3F);
		}
		// overlong forms, surrogates and values past U+10FFFF
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
			(cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return false;
		i += n + 1;
	}
	return true;
}

// Splits UTF-8 text into code points (as byte strings).
std::vector<std::string> code_points(const std::string &s) {
	std::vector<std::string> out;
	for (size_t i = 0; i < s.size();) {
		const unsigned char c = static_cast<unsigned char>(s[i]);
		size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
		n = std::min(n, s.size() - i);
		out.push_back(s.substr(i, n));
		i += n;
	}
	return out;
}

const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const std::string &in) {
	std::string out;
	out.reserve((in.size() + 2) / 3 * 4);
	size_t i = 0;
	for (; i + 2 < in.size(); i += 3) {
		const uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
						   (static_cast<unsigned char>(in[i + 1]) << 8) |
						   static_cast<unsigned char>(in[i + 2]);
		out += b64chars[(v >> 18) & 63];
		out += b64chars[(v >> 12) & 63];
		out += b64chars[(v >> 6) & 63];
		out += b64chars[v & 63];
	}
	if (i + 1 == in.size()) {
		const uint32_t v = static_cast<unsigned char>(in[i]) << 16;
		out += b64chars[(v >> 18) & 63];
		out += b64chars[(v >> 12) & 63];
		out += "==";
	} else if (i + 2 == in.size()) {
		const uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
						   (static_cast<unsigned char>(in[i + 1]) << 8);
		out += b64chars[(v >> 18) & 63];
		out += b64chars[(v >> 12) & 63];
		out += b64chars[(v >> 6) & 63];
		out += '=';
	}
	return out;
}

// Strict decoding: the standard alphabet, padded to a multiple of 4.
bool base64_decode(const std::string &in, std::string &out) {
	if (in.size() % 4 != 0)
		return false;
	auto val = [](char c) -> int {
		if (c >= 'A' && c <= 'Z')
			return c - 'A';
		if (c >= 'a' && c <= 'z')
			return c - 'a' + 26;
		if (c >= '0' && c <= '9')
			return c - '0' + 52;
		if (c == '+')
			return 62;
		if (c == '/')
			return 63;
		return -1;
	};
	out.clear();
	for (size_t i = 0; i < in.size(); i += 4) {
		const bool last = i + 4 == in.size();
		int v[4];
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			const char c = in[i + static_cast<size_t>(k)];
			if (c == '=' && last && k >= 2) {
				v[k] = 0;
				pad++;
			} else {
				if (pad)  // data after padding
					return false;
				v[k] = val(c);
				if (v[k] < 0)
					return false;
			}
		}
		const uint32_t w = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
						   (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
		out += static_cast<char>((w >> 16) & 0xFF);
		if (pad < 2)
			out += static_cast<char>((w >> 8) & 0xFF);
		if (pad < 1)
			out += static_cast<char>(w & 0xFF);
	}
	return true;
}

std::string hex_digest(const std::string &fn, const std::string &alg, const std::string &data) {
	const EVP_MD *md = alg == "MD5"		  ? EVP_md5()
					   : alg == "SHA-1"	  ? EVP_sha1()
					   : alg == "SHA-256" ? EVP_sha256()
					   : alg == "SHA-384" ? EVP_sha384()
					   : alg == "SHA-512" ? EVP_sha512()
										  : nullptr;
	if (!md)
		intrinsic_fail(fn, "unknown algorithm \"" + alg +
							   "\" (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)");
	auto out = digest_hex(md, data);
	if (!out)
		intrinsic_fail(fn, "the digest failed");
	return *out;
}

std::string uuid_v4() {
	unsigned char b[16];
	if (RAND_bytes(b, sizeof b) != 1)
		throw Failure(ERR_INTRINSIC, "States.UUID: no random bytes available");
	b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
	b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
	static const char hex[] = "0123456789abcdef";
	std::string out;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out += '-';
		out += hex[b[i] >> 4];
		out += hex[b[i] & 15];
	}
	return out;
}

// Text of one States.Format argument: a string as it is, anything else as
// its JSON text (AWS formats an object or an array as JSON too).
std::string format_arg(const json &v) {
	if (v.is_string())
		return v.get<std::string>();
	std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
	limits::count_bytes(text.size());
	return text;
}

json deep_merge(json a, const json &b) {
	limits::RecursionGuard guard;
	limits::count_work(b.size());
	for (auto it = b.begin(); it != b.end(); ++it) {
		auto mine = a.find(it.key());
		if (mine != a.end() && mine->is_object() && it->is_object())
			*mine = deep_merge(*mine, *it);
		else
			a[it.key()] = *it;
	}
	return a;
}

// A hash that agrees with json's ==: equal values hash alike (a number by
// its value as a double, as == compares an integer with a float).  An
// unsigned number past INT64_MAX is == to the negative integer of the same
// bits too, which no hash can follow: *odd is set, and the caller compares
// without hashing.
size_t hash_json(const json &v, bool *odd) {
	limits::RecursionGuard guard;
	limits::count_work(1);
	auto mix = [](size_t h, size_t x) {
		return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
	};
	switch (v.type()) {
	case json::value_t::null: return 0x61;
	case json::value_t::boolean: return v.get<bool>() ? 0x62 : 0x63;
	case json::value_t::number_unsigned:
		if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
			*odd = true;
		return std::hash<double>()(v.get<double>());
	case json::value_t::number_integer:
	case json::value_t::number_float: return std::hash<double>()(v.get<double>());
	case json::value_t::string: return std::hash<std::string>()(v.get_ref<const std::string &>());
	case json::value_t::array:
	case json::value_t::object: {	// an object's keys are in order
		size_t h = mix(v.is_array() ? 0x64 : 0x65, v.size());
		for (auto it = v.begin(); it != v.end(); ++it) {
			if (v.is_object())
				h = mix(h, std::hash<std::string>()(it.key()));
			h = mix(h, hash_json(*it, odd));
		}
		return h;
	}
	default: return 0x66;
	}
}

// States.ArrayUnique: the first of each run of equal (==) items, in order.
json array_unique(const json &items) {
	json out = json::array();
	limits::count_work(items.size());
	limits::count_bytes(items.size() * limits::kItemBytes);
	std::vector<size_t> hashes;
	hashes.reserve(items.size());
	bool odd = false;
	for (const auto &item : items)
		hashes.push_back(hash_json(item, &odd));
	if (odd) {	// as == compares, one by one (each comparison counted)
		for (const auto &item : items) {
			bool seen = false;
			for (const auto &kept : out) {
				limits::count_work(1);
				if (kept == item) {
					seen = true;
					break;
				}
			}
			if (!seen)
				out.push_back(item);
		}
		return out;
	}
	std::unordered_map<size_t, std::vector<size_t>> kept;	 // hash -> indices in out
	for (size_t i = 0; i < items.size(); i++) {
		auto &same_hash = kept[hashes[i]];
		bool seen = false;
		for (size_t k : same_hash) {
			limits::count_work(1);
			if (out[k] == items[i]) {
				seen = true;
				break;
			}
		}
		if (!seen) {
			same_hash.push_back(out.size());
			out.push_back(items[i]);
		}
	}
	return out;
}

// What an intrinsic's answer counts against the step's bytes: its text, or
// kItemBytes per item (one level; the items were counted where made).
void count_answer(const json &v) {
	if (v.is_string())
		limits::count_bytes(v.get_ref<const std::string &>().size() + 32);
	else if (v.is_structured())
		limits::count_bytes(v.size() * limits::kItemBytes + 64);
}

json eval_call(const Call &call, const json &input, const json &context, const json *vars);

}  // namespace

// The step's budget ends an intrinsic as the intrinsic's own failure.
json eval_intrinsic(const Call &call, const json &input, const json &context, const json *vars) {
	try {
		json out = eval_call(call, input, context, vars);
		count_answer(out);
		return out;
	} catch (const limits::BudgetExceeded &e) {
		intrinsic_fail(call.name, e.what());
	}
}

uint64_t random_below_inclusive(uint64_t bound) {
	auto draw = []() {
		uint64_t r = 0;
		if (RAND_bytes(reinterpret_cast<unsigned char *>(&r), sizeof r) != 1)
			throw Failure(ERR_RUNTIME, "no random bytes available");
		return r;
	};
	if (bound == UINT64_MAX)
		return draw();
	const uint64_t range = bound + 1;
	const uint64_t limit = UINT64_MAX - UINT64_MAX % range;	// rejection keeps it uniform
	uint64_t r;
	do
		r = draw();
	while (r >= limit);
	return r % range;
}

std::shared_ptr<const Call> parse_intrinsic(const std::string &text) {
	CallParser cp{text};
	cp.skip_space();
	auto call = cp.call();
	cp.skip_space();
	if (cp.p != text.size())
		cp.fail("unexpected text after the call");
	return call;
}

namespace {

json eval_call(const Call &call, const json &input, const json &context, const json *vars) {
	limits::RecursionGuard guard;
	const Signature &sig = *find_signature(call.name);
	const std::string &fn = call.name;
	std::vector<json> v;
	v.reserve(call.args.size());
	for (size_t i = 0; i < call.args.size(); i++) {
		const Arg &a = call.args[i];
		if (a.kind == Arg::Literal) {
			v.push_back(a.literal);
		} else if (a.kind == Arg::PathRef) {
			auto got = a.path->select(input, context, vars);
			if (!got)
				throw Failure(ERR_RUNTIME, fn + ": the path " + a.path->text() +
											   " selects nothing in the " +
											   (a.path->is_context() ? "context object"
												: a.path->variable().empty() ? "input"
																			 : "variables"));
			v.push_back(std::move(*got));
		} else {
			v.push_back(eval_intrinsic(*a.call, input, context, vars));
		}
		const char t = arg_type(sig, i);
		if (!type_fits(t, v.back()))
			intrinsic_fail(fn, "argument " + std::to_string(i + 1) + " must be " + type_name(t) +
								   ", not " + v.back().type_name());
	}

	if (fn == "States.Format") {
		// With a literal template the escapes are still in `raw`; a template
		// from a path is read with the same escape rules.
		const std::string &tpl =
			call.args[0].kind == Arg::Literal ? call.args[0].raw : v[0].get_ref<const std::string &>();
		std::string out;
		size_t next = 1;
		limits::count_work(1 + tpl.size() / 64);
		for (size_t i = 0; i < tpl.size(); i++) {
			const char c = tpl[i];
			if (c == '\\' && i + 1 < tpl.size()) {
				out += tpl[++i];
			} else if (c == '{') {
				if (i + 1 >= tpl.size() || tpl[i + 1] != '}')
					intrinsic_fail(fn, "a '{' must be followed by '}' or escaped as '\\{'");
				if (next >= v.size())
					intrinsic_fail(fn, "the template has more {} placeholders than arguments");
				out += format_arg(v[next++]);
				i++;
			} else if (c == '}') {
				intrinsic_fail(fn, "a lone '}' must be escaped as '\\}'");
			} else {
				out += c;
			}
		}
		if (next != v.size())
			intrinsic_fail(fn, "the template has fewer {} placeholders than arguments");
		return out;
	}
	if (fn == "States.StringToJson") {
		// AWS answers null for an empty or blank string rather than failing.
		const std::string &text = v[0].get_ref<const std::string &>();
		if (text.find_first_not_of(" \t\r\n") == std::string::npos)
			return nullptr;
		// The parse asks the poll clock once per value it makes.
		limits::count_bytes(text.size());
		json parsed = json::parse(
			text,
			[](int, json::parse_event_t, json &) {
				limits::touch(1);
				return true;
			},
			false);
		if (parsed.is_discarded())
			intrinsic_fail(fn, "the string is not valid JSON");
		// Parsing takes no recursion; using the value would.
		if (!limits::within_depth(parsed, limits::JSON_DEPTH))
			intrinsic_fail(fn, "the string nests deeper than " +
								   std::to_string(limits::JSON_DEPTH) +
								   " levels of arrays and objects" + limits::named("json_depth"));
		return parsed;
	}
	if (fn == "States.JsonToString")
		return v[0].dump(-1, ' ', false, json::error_handler_t::replace);
	if (fn == "States.Array")
		return json(v);
	if (fn == "States.ArrayPartition") {
		const int64_t size = as_int(v[1]);
		if (size <= 0)
			intrinsic_fail(fn, "the chunk size must be a positive integer");
		json out = json::array();
		limits::count_work(v[0].size());
		limits::count_bytes(v[0].size() * limits::kItemBytes);
		for (size_t i = 0; i < v[0].size(); i += static_cast<size_t>(size)) {
			json chunk = json::array();
			for (size_t k = i; k < v[0].size() && k < i + static_cast<size_t>(size); k++)
				chunk.push_back(v[0][k]);
			out.push_back(std::move(chunk));
		}
		return out;
	}
	if (fn == "States.ArrayContains") {
		limits::count_work(v[0].size());
		for (const auto &item : v[0])
			if (item == v[1])
				return true;
		return false;
	}
	if (fn == "States.ArrayRange") {
		const int64_t start = as_int(v[0]), end = as_int(v[1]), step = as_int(v[2]);
		if (step == 0)
			intrinsic_fail(fn, "the step must not be 0");
		json out = json::array();
		for (int64_t x = start; step > 0 ? x <= end : x >= end;) {
			if (out.size() >= 1000)
				intrinsic_fail(fn, "the range has more than 1000 items");
			out.push_back(x);
			if (__builtin_add_overflow(x, step, &x))
				break;	// past the int64 range, so past `end` too
		}
		return out;
	}
	if (fn == "States.ArrayGetItem") {
		const int64_t k = as_int(v[1]);
		if (k < 0 || static_cast<uint64_t>(k) >= v[0].size())
			intrinsic_fail(fn, "index " + std::to_string(k) + " is outside the array (size " +
								   std::to_string(v[0].size()) + ")");
		return v[0][static_cast<size_t>(k)];
	}
	if (fn == "States.ArrayLength")
		return v[0].size();
	if (fn == "States.ArrayUnique")
		return array_unique(v[0]);
	if (fn == "States.Base64Encode")
		return base64_encode(v[0].get_ref<const std::string &>());
	if (fn == "States.Base64Decode") {
		std::string out;
		if (!base64_decode(v[0].get_ref<const std::string &>(), out))
			intrinsic_fail(fn, "the string is not valid base64");
		// The result must be JSON text; PostgreSQL's jsonb also refuses NUL.
		if (!valid_utf8(out) || out.find('\0') != std::string::npos)
			intrinsic_fail(fn, "the decoded bytes are not UTF-8 text");
		return out;
	}
	if (fn == "States.Hash")
		return hex_digest(fn, v[1].get<std::string>(), v[0].get_ref<const std::string &>());
	if (fn == "States.JsonMerge") {
		if (v[2].get<bool>())
			return deep_merge(v[0], v[1]);
		json out = v[0];
		limits::count_work(v[1].size());
		for (auto it = v[1].begin(); it != v[1].end(); ++it)
			out[it.key()] = *it;
		return out;
	}
	if (fn == "States.MathRandom") {
		const int64_t start = as_int(v[0]), end = as_int(v[1]);
		if (end <= start)
			intrinsic_fail(fn, "the end must be greater than the start");
		const uint64_t span = static_cast<uint64_t>(end) - static_cast<uint64_t>(start) - 1;
		if (v.size() == 3) {
			// A seed makes the draw reproducible, as the ASL spec intends.
			std::mt19937_64 gen(static_cast<uint64_t>(as_int(v[2])));
			std::uniform_int_distribution<uint64_t> dist(0, span);
			return static_cast<int64_t>(static_cast<uint64_t>(start) + dist(gen));
		}
		return static_cast<int64_t>(static_cast<uint64_t>(start) + random_below_inclusive(span));
	}
	if (fn == "States.MathAdd") {
		// AWS rounds each argument to a whole number first, halves upwards
		// (1.5 -> 2, -1.5 -> -1, -0.5 -> 0), then adds: the sum is always an integer.
		int64_t a[2];
		for (int i = 0; i < 2; i++) {
			if (is_integral(v[i])) {
				a[i] = as_int(v[i]);
				continue;
			}
			const double r = std::floor(v[i].get<double>() + 0.5);
			if (!(r > -9.0e18 && r < 9.0e18))
				intrinsic_fail(fn, "argument " + std::to_string(i + 1) + " is out of range");
			a[i] = static_cast<int64_t>(r);
		}
		int64_t sum;
		if (__builtin_add_overflow(a[0], a[1], &sum))
			intrinsic_fail(fn, "the sum is out of range");
		return sum;
	}
	if (fn == "States.StringSplit") {
		// A set of the delimiters: n characters and m delimiters are n + m
		// lookups, not n * m comparisons.
		const auto delim_list = code_points(v[1].get_ref<const std::string &>());
		const std::unordered_set<std::string> delims(delim_list.begin(), delim_list.end());
		json out = json::array();
		std::string token;
		const auto cps = code_points(v[0].get_ref<const std::string &>());
		limits::count_work(cps.size() + delim_list.size());
		limits::count_bytes(cps.size() * 32);	// the code points, one string each
		for (const auto &cp : cps) {
			const bool is_delim = delims.count(cp) != 0;
			if (is_delim) {
				if (!token.empty())
					out.push_back(token);
				token.clear();
			} else {
				token += cp;
			}
		}
		if (!token.empty())
			out.push_back(token);
		return out;
	}
	if (fn == "States.UUID")
		return uuid_v4();
	// Unreachable: the parser accepts only the functions handled above.
	intrinsic_fail(fn, "unknown function");
}

}  // namespace

}  // namespace genroc::asl::detail
