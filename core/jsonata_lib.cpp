// jsonata_lib.cpp — JSONata's function library ($string ... $sift), as the
// reference implementation defines each function (signature, undefined in,
// error codes), and the functions AWS Step Functions adds: $partition,
// $range, $hash, $random (with an optional seed), $uuid, $parse.
//
// Strings are UTF-8; lengths and positions count code points (the
// reference counts code points too, through its stringToArray).

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <regex>

#include "asl.hpp"
#include "internal.hpp"
#include "jsonata_internal.hpp"
#include "jsonata_picture.hpp"
#include "limits.hpp"

namespace genroc::jsonata::detail {

namespace lim = genroc::limits;

namespace {

using V = Value;

bool is_arr(const V &v) { return v.k == V::Arr; }

const std::vector<V> &items(const V &v) {
	static const std::vector<V> none;
	return v.k == V::Arr ? v.a->items : none;
}

V arg(Args &a, size_t i) { return i < a.size() ? a[i] : V(); }

std::string join_chars(const std::vector<std::string> &chars, size_t from, size_t to) {
	std::string out;
	for (size_t i = from; i < to && i < chars.size(); i++)
		out += chars[i];
	return out;
}

void check_size(const std::string &s) {
	if (s.size() > lim::JSONATA_STRING)
		fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
						  lim::named("jsonata_string"));
}

// The arguments a higher-order function passes: value, then index and the
// array only when the function takes them.
Args hof_args(const V &fn, const V &a1, const V &a2, const V &a3) {
	// a function argument that evaluated to nothing ($map(xs, nope))
	if (fn.k != V::Fn || !fn.f)
		fail("T1006", "Attempted to invoke a non-function");
	Args out{a1};
	size_t n = fn.f->arity();
	if (n >= 2)
		out.push_back(a2);
	if (n >= 3)
		out.push_back(a3);
	return out;
}

// ------------------------------------------------------------------ aggregates

V f_sum(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	double t = 0;
	count_visits(items(a[0]).size());
	for (auto &x : items(a[0]))
		t += x.n;
	return V::number(t);
}

V f_count(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V::number(0);
	return V::number(static_cast<double>(items(a[0]).size()));
}

V f_max(Context &, Args &a, const V &) {
	if (a[0].undef() || items(a[0]).empty())
		return V();
	double m = -INFINITY;
	count_visits(items(a[0]).size());
	for (auto &x : items(a[0]))
		m = std::max(m, x.n);
	return V::number(m);
}

V f_min(Context &, Args &a, const V &) {
	if (a[0].undef() || items(a[0]).empty())
		return V();
	double m = INFINITY;
	count_visits(items(a[0]).size());
	for (auto &x : items(a[0]))
		m = std::min(m, x.n);
	return V::number(m);
}

V f_average(Context &, Args &a, const V &) {
	if (a[0].undef() || items(a[0]).empty())
		return V();
	double t = 0;
	count_visits(items(a[0]).size());
	for (auto &x : items(a[0]))
		t += x.n;
	return V::number(t / static_cast<double>(items(a[0]).size()));
}

// ------------------------------------------------------------------ strings


V f_string(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (a[0].k == V::Str)
		return a[0];
	if (a[0].k == V::Fn)
		return V::string("");
	if (a[0].k == V::Num && !std::isfinite(a[0].n))
		fail("D3001", "Attempting to invoke string function on Infinity or NaN");
	bool pretty = arg(a, 1).k == V::Bool && arg(a, 1).b;
	return V::string(stringify(a[0], pretty));
}

V f_substring(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	auto chars = utf8_chars(a[0].str());
	double len = static_cast<double>(chars.size());
	double start = std::trunc(a[1].n);
	if (len + start < 0)
		start = 0;
	auto clamp = [&](double x) {
		if (x < 0)
			x = std::max(0.0, len + x);
		return static_cast<size_t>(std::min(x, len));
	};
	V l = arg(a, 2);
	if (!l.undef()) {
		if (l.n <= 0)
			return V::string("");
		double end = start >= 0 ? start + l.n : len + start + l.n;
		size_t s = clamp(start), e = clamp(std::trunc(end));
		return V::string(s < e ? join_chars(chars, s, e) : "");
	}
	return V::string(join_chars(chars, clamp(start), chars.size()));
}

V f_substring_before(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (a[1].undef())
		return a[0];
	size_t p = a[0].str().find(a[1].str());
	return p == std::string::npos ? a[0] : V::string(a[0].str().substr(0, p));
}

V f_substring_after(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (a[1].undef())
		return a[0];
	size_t p = a[0].str().find(a[1].str());
	return p == std::string::npos ? a[0] : V::string(a[0].str().substr(p + a[1].str().size()));
}

// Case mapping of ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic (what
// JavaScript's toUpperCase / toLowerCase do there; other scripts unchanged).
uint32_t decode_cp(const std::string &ch) {
	uint32_t cp = static_cast<unsigned char>(ch[0]);
	if (ch.size() == 2) cp = ((cp & 0x1F) << 6) | (ch[1] & 0x3F);
	else if (ch.size() == 3) cp = ((cp & 0x0F) << 12) | ((ch[1] & 0x3F) << 6) | (ch[2] & 0x3F);
	else if (ch.size() == 4) cp = ((cp & 0x07) << 18) | ((ch[1] & 0x3F) << 12) | ((ch[2] & 0x3F) << 6) | (ch[3] & 0x3F);
	return cp;
}

bool latin_ext_pair(uint32_t cp) {	// U+0100-U+017F: upper even, lower odd, with a shifted run
	return (cp >= 0x100 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177);
}

uint32_t to_upper(uint32_t c) {
	if (c >= 'a' && c <= 'z') return c - 32;
	if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
	if (c == 0xFF) return 0x178;
	if (c == 0xB5) return 0x39C;
	if (latin_ext_pair(c) && (c & 1)) return c - 1;
	if (c >= 0x139 && c <= 0x148 && !(c & 1)) return c - 1;
	if (c >= 0x179 && c <= 0x17E && !(c & 1)) return c - 1;
	if (c == 0x131) return 'I';
	if (c == 0x17F) return 'S';
	if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
	if (c == 0x3C2) return 0x3A3;
	if (c >= 0x3AC && c <= 0x3AF) return c == 0x3AC ? 0x386 : c - 37;
	if (c >= 0x430 && c <= 0x44F) return c - 32;
	if (c >= 0x450 && c <= 0x45F) return c - 80;
	return c;
}

uint32_t to_lower(uint32_t c) {
	if (c >= 'A' && c <= 'Z') return c + 32;
	if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
	if (c == 0x178) return 0xFF;
	if (latin_ext_pair(c) && !(c & 1) && c != 0x130) return c + 1;
	if (c == 0x130) return 'i';
	if (c >= 0x139 && c <= 0x148 && (c & 1)) return c + 1;
	if (c >= 0x179 && c <= 0x17E && (c & 1)) return c + 1;
	if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
	if (c == 0x386) return 0x3AC;
	if (c >= 0x388 && c <= 0x38A) return c + 37;
	if (c >= 0x410 && c <= 0x42F) return c + 32;
	if (c >= 0x400 && c <= 0x40F) return c + 80;
	return c;
}

V map_case(Args &a, bool upper) {
	if (a[0].undef())
		return V();
	std::string out;
	for (const auto &ch : utf8_chars(a[0].str())) {
		uint32_t cp = decode_cp(ch);
		if (upper && cp == 0xDF) {
			out += "SS";
			continue;
		}
		put_utf8(out, upper ? to_upper(cp) : to_lower(cp));
	}
	return V::string(out);
}

V f_lowercase(Context &, Args &a, const V &) { return map_case(a, false); }
V f_uppercase(Context &, Args &a, const V &) { return map_case(a, true); }

V f_length(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	return V::number(static_cast<double>(utf8_length(a[0].str())));
}

V f_trim(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	std::string out;
	bool space = false;
	for (char c : a[0].str()) {
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = true;
			continue;
		}
		if (space)
			out += ' ';
		space = false;
		out += c;
	}
	if (space)
		out += ' ';
	if (!out.empty() && out.front() == ' ')
		out.erase(0, 1);
	if (!out.empty() && out.back() == ' ')
		out.pop_back();
	return V::string(out);
}

V f_pad(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	std::string ch = arg(a, 2).undef() || arg(a, 2).str().empty() ? " " : arg(a, 2).str();
	double w = std::trunc(a[1].n);
	size_t size = static_cast<size_t>(std::min(std::fabs(w), 1e9));
	auto chars = utf8_chars(a[0].str());
	if (size <= chars.size())
		return a[0];
	size_t n = size - chars.size();
	if (n > lim::JSONATA_STRING)
		check_size(std::string(lim::JSONATA_STRING + 1, ' '));
	auto pc = utf8_chars(ch);
	std::string padding;
	for (size_t i = 0; i < n; i++)
		padding += pc[i % pc.size()];
	check_size(padding);
	return V::string(w < 0 ? padding + a[0].str() : a[0].str() + padding);
}

struct Match {
	size_t start, len;	 // bytes
	RegexMatch m;
};

// Every match of `re` in `s`, as the reference's matcher walks them: after
// the first, a zero-length match is an error (D1004).  The engine's work
// counts against the expression's steps (RegexSearch).
std::vector<Match> all_matches(Context &cx, const Regex &re, const std::string &s, size_t limit) {
	std::vector<Match> out;
	RegexSearch search(cx, re, s);
	size_t pos = 0;
	while (out.size() < limit) {
		RegexMatch m;
		if (!search.find(pos, m))
			break;
		size_t start = m.start(0);
		size_t len = m.end(0) - start;
		if (!out.empty() && len == 0)
			fail("D1004", "Regular expression matches zero length string");
		out.push_back({start, len, std::move(m)});
		pos = start + len;
		if (pos >= s.size())
			break;
	}
	return out;
}

V match_object(const Match &mt, const std::string &s) {
	V o = V::object();
	o.o->set("match", V::string(s.substr(mt.start, mt.len)));
	o.o->set("index", V::number(static_cast<double>(utf8_length(s.substr(0, mt.start)))));
	V groups = V::array(false);
	for (size_t i = 1; i < mt.m.groups(); i++)
		groups.a->items.push_back(mt.m.matched(i) ? V::string(mt.m.group(s, i)) : V());
	o.o->set("groups", groups);
	return o;
}

const Regex &regex_of(const V &v) { return *v.f->re; }

bool is_regex(const V &v) { return v.k == V::Fn && v.f->kind == Function::Regex; }

V f_contains(Context &cx, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (a[1].k == V::Str)
		return V::boolean(a[0].str().find(a[1].str()) != std::string::npos);
	if (!is_regex(a[1]))
		fail("T0410", "Argument 2 of function contains does not match function signature");
	return V::boolean(!all_matches(cx, regex_of(a[1]), a[0].str(), 1).empty());
}

V f_split(Context &cx, Args &a, const V &) {
	if (a[0].undef())
		return V();
	V lim_v = arg(a, 2);
	if (!lim_v.undef() && lim_v.n < 0)
		fail("D3020", "Third argument of split function must evaluate to a positive number");
	size_t limit = lim_v.undef() ? SIZE_MAX : static_cast<size_t>(lim_v.n);
	const std::string &s = a[0].str();
	V out = V::array(false);
	std::vector<std::string> parts;
	if (a[1].k == V::Str) {
		const std::string &sep = a[1].str();
		if (sep.empty()) {
			parts = utf8_chars(s);
		} else {
			size_t pos = 0;
			for (;;) {
				size_t p = s.find(sep, pos);
				if (p == std::string::npos) {
					parts.push_back(s.substr(pos));
					break;
				}
				parts.push_back(s.substr(pos, p - pos));
				pos = p + sep.size();
			}
		}
	} else if (is_regex(a[1])) {
		size_t pos = 0;
		for (auto &m : all_matches(cx, regex_of(a[1]), s, SIZE_MAX)) {
			parts.push_back(s.substr(pos, m.start - pos));
			pos = m.start + m.len;
		}
		parts.push_back(s.substr(pos));
	} else {
		fail("T0410", "Argument 2 of function split does not match function signature");
	}
	for (size_t i = 0; i < parts.size() && i < limit; i++)
		seq_push(out, V::string(parts[i]));
	return out;
}

V f_join(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	std::string sep = arg(a, 1).undef() ? "" : arg(a, 1).str();
	std::string out;
	bool first = true;
	count_visits(items(a[0]).size());
	for (auto &x : items(a[0])) {
		if (!first)
			out += sep;
		first = false;
		out += x.str();
		check_size(out);
	}
	return V::string(out);
}

V f_match(Context &cx, Args &a, const V &) {
	if (a[0].undef())
		return V();
	V l = arg(a, 2);
	if (!l.undef() && l.n < 0)
		fail("D3040", "Third argument of match function must evaluate to a positive number");
	if (!is_regex(a[1]))
		fail("T0410", "Argument 2 of function match does not match function signature");
	size_t limit = l.undef() ? SIZE_MAX : static_cast<size_t>(l.n);
	V out = V::array(true);
	for (auto &m : all_matches(cx, regex_of(a[1]), a[0].str(), limit))
		seq_push(out, match_object(m, a[0].str()));
	return out;
}

std::string substitute(const std::string &rep, const V &mobj) {
	const auto &groups = mobj.o->get("groups")->a->items;
	std::string out;
	size_t position = 0;
	size_t index = rep.find('$', position);
	while (index != std::string::npos && position < rep.size()) {
		out += rep.substr(position, index - position);
		position = index + 1;
		char d = position < rep.size() ? rep[position] : '\0';
		if (d == '$') {
			out += '$';
			position++;
		} else if (d == '0') {
			out += mobj.o->get("match")->str();
			position++;
		} else {
			size_t max_digits = groups.empty()
									? 1
									: static_cast<size_t>(std::floor(std::log10(static_cast<double>(groups.size())))) + 1;
			auto parse = [&](size_t n) -> long {
				std::string t = rep.substr(position, n);
				size_t k = 0;
				while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k])))
					k++;
				if (k == 0)
					return -1;
				return std::stol(t.substr(0, k));
			};
			long g = parse(max_digits);
			if (max_digits > 1 && g > static_cast<long>(groups.size()))
				g = parse(max_digits - 1);
			if (g >= 0) {
				if (!groups.empty() && g >= 1 && static_cast<size_t>(g) <= groups.size()) {
					const V &sub = groups[static_cast<size_t>(g) - 1];
					if (sub.k == V::Str)
						out += sub.str();
				}
				position += std::to_string(g).size();
			} else {
				out += '$';
			}
		}
		index = rep.find('$', position);
	}
	if (position < rep.size())
		out += rep.substr(position);
	return out;
}

V f_replace(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	if (a[1].k == V::Str && a[1].str().empty())
		fail("D3010", "Second argument of replace function cannot be an empty string");
	V l = arg(a, 3);
	if (!l.undef() && l.n < 0)
		fail("D3011", "Fourth argument of replace function must evaluate to a positive number");
	size_t limit = l.undef() ? SIZE_MAX : static_cast<size_t>(l.n);
	const std::string &s = a[0].str();
	std::string out;
	size_t position = 0;
	if (a[1].k == V::Str) {
		const std::string &pat = a[1].str();
		std::string rep = a[2].k == V::Str ? a[2].str() : "";
		size_t count = 0;
		size_t idx = s.find(pat, position);
		while (idx != std::string::npos && count < limit) {
			out += s.substr(position, idx - position);
			out += rep;
			check_size(out);
			position = idx + pat.size();
			count++;
			idx = s.find(pat, position);
		}
		out += s.substr(position);
		return V::string(out);
	}
	if (!is_regex(a[1]))
		fail("T0410", "Argument 2 of function replace does not match function signature");
	for (auto &m : all_matches(cx, regex_of(a[1]), s, limit)) {
		out += s.substr(position, m.start - position);
		V mobj = match_object(m, s);
		if (a[2].k == V::Str) {
			out += substitute(a[2].str(), mobj);
		} else {
			V r = apply(cx, a[2], {mobj}, input);
			if (r.k != V::Str)
				fail("D3012", "Attempted to replace a matched string with a non-string value");
			out += r.str();
		}
		check_size(out);
		position = m.start + m.len;
	}
	out += s.substr(position);
	return V::string(out);
}

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The reference encodes the string's UTF-16 units as bytes ("binary",
// Latin-1: each unit's low byte), and decodes bytes back to U+0000-U+00FF.
std::string latin1_bytes(const std::string &utf8) {
	std::string out;
	for (const auto &ch : utf8_chars(utf8)) {
		uint32_t cp = static_cast<unsigned char>(ch[0]);
		if (ch.size() == 2) cp = ((cp & 0x1F) << 6) | (ch[1] & 0x3F);
		else if (ch.size() == 3) cp = ((cp & 0x0F) << 12) | ((ch[1] & 0x3F) << 6) | (ch[2] & 0x3F);
		else if (ch.size() == 4) cp = ((cp & 0x07) << 18) | ((ch[1] & 0x3F) << 12) | ((ch[2] & 0x3F) << 6) | (ch[3] & 0x3F);
		if (cp > 0xFFFF) {
			cp -= 0x10000;
			out += static_cast<char>((0xD800 + (cp >> 10)) & 0xFF);
			out += static_cast<char>((0xDC00 + (cp & 0x3FF)) & 0xFF);
		} else {
			out += static_cast<char>(cp & 0xFF);
		}
	}
	return out;
}

std::string latin1_to_utf8(const std::string &bytes) {
	std::string out;
	for (unsigned char c : bytes) {
		if (c < 0x80) {
			out += static_cast<char>(c);
		} else {
			out += static_cast<char>(0xC0 | (c >> 6));
			out += static_cast<char>(0x80 | (c & 0x3F));
		}
	}
	return out;
}

V f_base64encode(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	const std::string s = latin1_bytes(a[0].str());
	std::string out;
	size_t i = 0;
	while (i + 2 < s.size()) {
		uint32_t n = (static_cast<unsigned char>(s[i]) << 16) |
					 (static_cast<unsigned char>(s[i + 1]) << 8) | static_cast<unsigned char>(s[i + 2]);
		out += kB64[n >> 18];
		out += kB64[(n >> 12) & 63];
		out += kB64[(n >> 6) & 63];
		out += kB64[n & 63];
		i += 3;
	}
	if (i + 1 == s.size()) {
		uint32_t n = static_cast<unsigned char>(s[i]) << 16;
		out += kB64[n >> 18];
		out += kB64[(n >> 12) & 63];
		out += "==";
	} else if (i + 2 == s.size()) {
		uint32_t n = (static_cast<unsigned char>(s[i]) << 16) | (static_cast<unsigned char>(s[i + 1]) << 8);
		out += kB64[n >> 18];
		out += kB64[(n >> 12) & 63];
		out += kB64[(n >> 6) & 63];
		out += '=';
	}
	return V::string(out);
}

V f_base64decode(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	std::string out;
	uint32_t buf = 0;
	int bits = 0;
	for (char c : a[0].str()) {
		const char *p = std::strchr(kB64, c);
		if (c == '=' || !p || c == '\0')
			continue;
		buf = (buf << 6) | static_cast<uint32_t>(p - kB64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out += static_cast<char>((buf >> bits) & 0xFF);
		}
	}
	return V::string(latin1_to_utf8(out));
}

V url_encode(Args &a, const char *keep) {
	if (a[0].undef())
		return V();
	std::string out;
	for (unsigned char c : a[0].str()) {
		if (std::isalnum(c) || std::strchr(keep, c)) {
			out += static_cast<char>(c);
		} else {
			char b[4];
			std::snprintf(b, sizeof b, "%%%02X", c);
			out += b;
		}
	}
	return V::string(out);
}

V f_encode_url_component(Context &, Args &a, const V &) { return url_encode(a, "-_.!~*'()"); }
V f_encode_url(Context &, Args &a, const V &) { return url_encode(a, "-_.!~*'();,/?:@&=+$#"); }

V url_decode(Args &a, const char *name, const char *reserved) {
	if (a[0].undef())
		return V();
	const std::string &s = a[0].str();
	std::string out;
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] != '%') {
			out += s[i];
			continue;
		}
		if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
			!std::isxdigit(static_cast<unsigned char>(s[i + 2])))
			fail("D3140", std::string("Malformed URL passed to $") + name + "(): " + s);
		char c = static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
		if (reserved && c && std::strchr(reserved, c))
			out += s.substr(i, 3);
		else
			out += c;
		i += 2;
	}
	return V::string(out);
}

V f_decode_url_component(Context &, Args &a, const V &) {
	return url_decode(a, "decodeUrlComponent", nullptr);
}
V f_decode_url(Context &, Args &a, const V &) { return url_decode(a, "decodeUrl", ";,/?:@&=+$#"); }

V f_format_base(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	double radix = arg(a, 1).undef() ? 10 : arg(a, 1).n;
	if (radix < 2 || radix > 36)
		fail("D3100", "The radix of the formatBase function must be between 2 and 36.  It was given " +
						  format_number(radix));
	Args r{a[0]};
	double v = std::nearbyint(a[0].n);	 // round half to even, as $round
	bool neg = v < 0;
	v = std::fabs(v);
	int base = static_cast<int>(radix);
	std::string digits;
	if (v == 0)
		digits = "0";
	while (v >= 1) {
		double q = std::floor(v / base);
		int d = static_cast<int>(v - q * base);
		digits += "0123456789abcdefghijklmnopqrstuvwxyz"[d];
		v = q;
	}
	std::reverse(digits.begin(), digits.end());
	return V::string(neg ? "-" + digits : digits);
}

// ------------------------------------------------------------------ numbers

V f_number(Context &, Args &a, const V &) {
	const V &x = a[0];
	if (x.undef())
		return V();
	if (x.k == V::Num)
		return x;
	if (x.k == V::Bool)
		return V::number(x.b ? 1 : 0);
	if (x.k == V::Str) {
		static const std::regex dec("^-?[0-9]+(\\.[0-9]+)?([Ee][-+]?[0-9]+)?$");
		static const std::regex other("^(0[xX][0-9A-Fa-f]+)|(0[oO][0-7]+)|(0[bB][0-1]+)$");
		const std::string &s = x.str();
		if (s.size() < 400 && std::regex_match(s, dec)) {
			double d = std::strtod(s.c_str(), nullptr);
			if (std::isfinite(d))
				return V::number(d);
		}
		if (s.size() < 400 && std::regex_match(s, other)) {
			int base = (s[1] == 'x' || s[1] == 'X') ? 16 : (s[1] == 'o' || s[1] == 'O') ? 8 : 2;
			double d = 0;
			for (size_t i = 2; i < s.size(); i++)
				d = d * base + static_cast<double>(std::stoi(s.substr(i, 1), nullptr, 16));
			return V::number(d);
		}
	}
	fail("D3030", "Unable to cast value to a number: " + stringify(x, false));
}

V f_floor(Context &, Args &a, const V &) { return a[0].undef() ? V() : V::number(std::floor(a[0].n)); }
V f_ceil(Context &, Args &a, const V &) { return a[0].undef() ? V() : V::number(std::ceil(a[0].n)); }
V f_abs(Context &, Args &a, const V &) { return a[0].undef() ? V() : V::number(std::fabs(a[0].n)); }

V f_sqrt(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (a[0].n < 0)
		fail("D3060", "The sqrt function cannot be applied to a negative number: " +
						  format_number(a[0].n));
	return V::number(std::sqrt(a[0].n));
}

V f_power(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	double r = std::pow(a[0].n, a[1].n);
	if (!std::isfinite(r))
		fail("D3061", "The power function has resulted in a value that cannot be represented as a "
					  "JSON number: base=" + format_number(a[0].n) + ", exponent=" + format_number(a[1].n));
	return V::number(r);
}

// JavaScript's "+(mantissa + 'e' + exponent)" shift of the reference's $round.
double shift(double x, int by) {
	std::string s = format_number(x);
	size_t e = s.find('e');
	int exp = by;
	if (e != std::string::npos) {
		exp += std::atoi(s.c_str() + e + 1);
		s = s.substr(0, e);
	}
	return std::strtod((s + "e" + std::to_string(exp)).c_str(), nullptr);
}

V f_round(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	double x = a[0].n;
	int prec = arg(a, 1).undef() ? 0 : static_cast<int>(std::trunc(arg(a, 1).n));
	if (prec)
		x = shift(x, prec);
	double r = std::floor(x + 0.5);
	double diff = r - x;
	if (std::fabs(diff) == 0.5 && std::fabs(std::fmod(r, 2)) == 1)
		r -= 1;
	if (prec)
		r = shift(r, -prec);
	if (r == 0)
		r = 0;	// no -0
	return V::number(r);
}

double unit_random() {
	uint64_t bits = asl::detail::random_below_inclusive((1ULL << 53) - 1);
	return static_cast<double>(bits) / 9007199254740992.0;
}

// $random([seed]): AWS's form takes a seed; the same seed gives the same
// number (genroc's generator: mt19937_64 seeded with the integer part).
V f_random(Context &, Args &a, const V &) {
	if (!arg(a, 0).undef()) {
		std::mt19937_64 gen(static_cast<uint64_t>(static_cast<int64_t>(std::trunc(a[0].n))));
		return V::number(static_cast<double>(gen() >> 11) / 9007199254740992.0);
	}
	return V::number(unit_random());
}

// ------------------------------------------------------------------ booleans

V f_boolean(Context &, Args &a, const V &) { return boolean_of(a[0]); }

V f_not(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	return V::boolean(!truthy(a[0]));
}

V f_exists(Context &, Args &a, const V &) { return V::boolean(!arg(a, 0).undef()); }

// ------------------------------------------------------------------ higher-order

V f_map(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	V out = V::array(true);
	const auto &xs = items(a[0]);
	count_visits(xs.size());
	for (size_t i = 0; i < xs.size(); i++) {
		V r = apply(cx, a[1], hof_args(a[1], xs[i], V::number(static_cast<double>(i)), a[0]), input);
		if (!r.undef())
			seq_push(out, r);
	}
	return out;
}

V f_filter(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	V out = V::array(true);
	const auto &xs = items(a[0]);
	count_visits(xs.size());
	for (size_t i = 0; i < xs.size(); i++) {
		V r = apply(cx, a[1], hof_args(a[1], xs[i], V::number(static_cast<double>(i)), a[0]), input);
		if (truthy(r))
			seq_push(out, xs[i]);
	}
	return out;
}

V f_single(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	bool found = false;
	V result;
	const auto &xs = items(a[0]);
	count_visits(xs.size());
	for (size_t i = 0; i < xs.size(); i++) {
		bool pos = true;
		if (!arg(a, 1).undef())
			pos = truthy(apply(cx, a[1], hof_args(a[1], xs[i], V::number(static_cast<double>(i)), a[0]), input));
		if (pos) {
			if (found)
				fail("D3138", "The $single() function expected exactly 1 matching result.  Instead it matched more.");
			found = true;
			result = xs[i];
		}
	}
	if (!found)
		fail("D3139", "The $single() function expected exactly 1 matching result.  Instead it matched 0.");
	return result;
}

V f_reduce(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	if (a[1].k != V::Fn || !a[1].f)
		fail("T1006", "Attempted to invoke a non-function");
	size_t arity = a[1].f->arity();
	if (arity < 2)
		fail("D3050", "The second argument of reduce function must be a function with at least two arguments");
	const auto &xs = items(a[0]);
	V result;
	size_t i = 0;
	if (arg(a, 2).undef() && !xs.empty()) {
		result = xs[0];
		i = 1;
	} else {
		result = arg(a, 2);
	}
	count_visits(xs.size());
	for (; i < xs.size(); i++) {
		Args args{result, xs[i]};
		if (arity >= 3)
			args.push_back(V::number(static_cast<double>(i)));
		if (arity >= 4)
			args.push_back(a[0]);
		result = apply(cx, a[1], args, input);
	}
	return result;
}

V f_zip(Context &, Args &a, const V &) {
	V out = V::array(false);
	size_t n = SIZE_MAX;
	for (auto &x : a)
		n = std::min(n, items(x).size());
	if (a.empty())
		n = 0;
	count_items(a.size() * (n == SIZE_MAX ? 0 : n));
	for (size_t i = 0; i < n; i++) {
		V t = V::array(false);
		for (auto &x : a)
			t.a->items.push_back(items(x)[i]);
		seq_push(out, t);
	}
	return out;
}

V f_sift(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	V out = V::object();
	count_visits(a[0].o->entries.size());
	for (auto &[k, v] : a[0].o->entries)
		if (truthy(apply(cx, a[1], hof_args(a[1], v, V::string(k), a[0]), input)))
			out.o->set(k, v);
	if (out.o->entries.empty())
		return V();
	return out;
}

V f_each(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	V out = V::array(true);
	count_visits(a[0].o->entries.size());
	for (auto &[k, v] : a[0].o->entries) {
		V r = apply(cx, a[1], hof_args(a[1], v, V::string(k), a[0]), input);
		if (!r.undef())
			seq_push(out, r);
	}
	return out;
}

// ------------------------------------------------------------------ objects and arrays

V keys_of(const V &x) {
	V out = V::array(true);
	if (x.k == V::Arr) {
		V merged = V::object();
		for (auto &it : x.a->items)
			for (auto &k : items(keys_of(it)))
				merged.o->set(k.str(), V::boolean(true));
		return keys_of(merged);
	}
	if (x.k == V::Obj) {
		count_items(x.o->entries.size());
		for (auto &[k, v] : x.o->entries)
			out.a->items.push_back(V::string(k));
	}
	return out;
}

V f_keys(Context &, Args &a, const V &) { return keys_of(a[0]); }

// Appends `r` to `out` as $append would (an array's items one by one,
// nothing for undefined), without copying `out`.
void push_flat(V &out, const V &r) {
	if (r.undef())
		return;
	if (r.k == V::Arr)
		for (auto &y : r.a->items)
			seq_push(out, y);
	else
		seq_push(out, r);
}

V lookup_of(const V &x, const std::string &key) {
	if (x.k == V::Arr) {
		V out = V::array(true);
		count_visits(x.a->items.size());
		for (auto &it : x.a->items)
			push_flat(out, lookup_of(it, key));
		return out;
	}
	if (x.k == V::Obj)
		if (const V *v = x.o->get(key))
			return *v;
	return V();
}

V f_lookup(Context &, Args &a, const V &) {
	if (a[1].undef())
		return V();
	return lookup_of(a[0], a[1].str());
}

V f_append(Context &, Args &a, const V &) { return append(arg(a, 0), arg(a, 1)); }

V spread_of(const V &x) {
	if (x.k == V::Arr) {
		// What append(out, ...) answers each time, without copying out each
		// time (quadratic in the items).
		V out = V::array(true);
		count_visits(x.a->items.size());
		for (auto &it : x.a->items)
			push_flat(out, spread_of(it));
		return out;
	}
	if (x.k == V::Obj) {
		V out = V::array(true);
		for (auto &[k, v] : x.o->entries) {
			V o = V::object();
			o.o->set(k, v);
			seq_push(out, o);
		}
		return out;
	}
	return x;
}

V f_spread(Context &, Args &a, const V &) { return spread_of(a[0]); }

V f_merge(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	V out = V::object();
	count_visits(items(a[0]).size());
	for (auto &o : items(a[0]))
		for (auto &[k, v] : o.o->entries)
			out.o->set(k, v);
	return out;
}

V f_reverse(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (items(a[0]).size() <= 1)
		return a[0];
	V out = V::array(false);
	count_items(items(a[0]).size());
	out.a->items.assign(items(a[0]).rbegin(), items(a[0]).rend());
	return out;
}

V f_error(Context &, Args &a, const V &) {
	fail("D3137", arg(a, 0).undef() ? "$error() function evaluated" : arg(a, 0).str());
}

V f_assert(Context &, Args &a, const V &) {
	if (!(a[0].k == V::Bool && a[0].b))
		fail("D3141", arg(a, 1).undef() ? "$assert() statement failed" : arg(a, 1).str());
	return V();
}

V f_type(Context &, Args &a, const V &) {
	switch (arg(a, 0).k) {
	case V::Undef: return V();
	case V::Null: return V::string("null");
	case V::Bool: return V::string("boolean");
	case V::Num: return V::string("number");
	case V::Str: return V::string("string");
	case V::Arr: return V::string("array");
	case V::Obj: return V::string("object");
	case V::Fn: return V::string("function");
	}
	return V();
}

// The reference's merge sort: comp(a, b) true means a goes after b.
void msort(std::vector<V> &xs, const std::function<bool(const V &, const V &)> &comp) {
	lim::RecursionGuard guard;
	if (xs.size() <= 1)
		return;
	size_t mid = xs.size() / 2;
	// The halves are copies freed at once: work, not bytes kept.
	lim::count_work(xs.size());
	std::vector<V> l(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(mid));
	std::vector<V> r(xs.begin() + static_cast<std::ptrdiff_t>(mid), xs.end());
	msort(l, comp);
	msort(r, comp);
	size_t i = 0, j = 0, k = 0;
	while (i < l.size() && j < r.size()) {
		if (comp(l[i], r[j]))
			xs[k++] = r[j++];
		else
			xs[k++] = l[i++];
	}
	while (i < l.size())
		xs[k++] = l[i++];
	while (j < r.size())
		xs[k++] = r[j++];
}

V f_sort(Context &cx, Args &a, const V &input) {
	if (a[0].undef())
		return V();
	if (items(a[0]).size() <= 1)
		return a[0];
	std::vector<V> xs = items(a[0]);
	count_items(xs.size());
	if (arg(a, 1).undef()) {
		bool nums = true, strs = true;
		for (auto &x : xs) {
			nums = nums && x.k == V::Num;
			strs = strs && x.k == V::Str;
		}
		if (!nums && !strs)
			fail("D3070", "The single argument form of the sort function can only be applied to an "
						  "array of strings or an array of numbers.  Use the second argument to "
						  "specify a comparison function");
		msort(xs, [&](const V &x, const V &y) { return nums ? x.n > y.n : x.str() > y.str(); });
	} else {
		V fn = a[1];
		msort(xs, [&](const V &x, const V &y) { return truthy(apply(cx, fn, {x, y}, input)); });
	}
	V out = V::array(false);
	out.a->items = std::move(xs);
	return out;
}

V f_shuffle(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (items(a[0]).size() <= 1)
		return a[0];
	V out = V::array(false);
	count_items(items(a[0]).size());
	out.a->items = items(a[0]);
	auto &xs = out.a->items;
	for (size_t i = xs.size() - 1; i > 0; i--) {
		lim::count_work(1);	 // a draw of random bytes each: the loop is polled
		std::swap(xs[i], xs[asl::detail::random_below_inclusive(i)]);
	}
	return out;
}

V f_distinct(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (!is_arr(a[0]) || items(a[0]).size() <= 1)
		return a[0];
	V out = V::array(a[0].a->sequence);
	count_items(items(a[0]).size());
	// Items kept, by hash: an item is compared (deep_equal, as before) only
	// with the kept ones of its hash, which are all those it can equal.
	std::unordered_map<size_t, std::vector<size_t>> kept;
	for (auto &x : items(a[0])) {
		auto &same_hash = kept[hash_value(x)];
		bool seen = false;
		for (size_t i : same_hash)
			if (deep_equal(x, out.a->items[i])) {
				seen = true;
				break;
			}
		if (!seen) {
			same_hash.push_back(out.a->items.size());
			out.a->items.push_back(x);
		}
	}
	return out;
}

V clone_of(const V &x) {
	lim::RecursionGuard guard;
	if (x.k == V::Arr) {
		V r = V::array(x.a->sequence);
		count_items(x.a->items.size());
		for (auto &y : x.a->items)
			r.a->items.push_back(clone_of(y));
		return r;
	}
	if (x.k == V::Obj) {
		V r = V::object();
		for (auto &[k, y] : x.o->entries)
			r.o->set(k, clone_of(y));
		return r;
	}
	return x;
}

V f_clone(Context &, Args &a, const V &) { return a[0].undef() ? V() : clone_of(a[0]); }

// ------------------------------------------------------------------ date and time

// ISO 8601 as the reference's $toMillis accepts it without a picture:
// YYYY[-MM[-DD]][THH:MM:SS[.fff]][Z|±HH[:]MM]; no offset means UTC.
bool parse_iso(const std::string &s, double &ms) {
	static const std::regex re(
		"^(\\d{4})(?:-([01]\\d))?(?:-([0-3]\\d))?(?:T([0-2]\\d):([0-5]\\d):([0-5]\\d)(?:\\.(\\d+))?)?"
		"(Z|[+-][0-2]\\d:?[0-5]\\d)?$");
	std::smatch m;
	if (s.size() > 64 || !std::regex_match(s, m, re))
		return false;
	auto num = [&](int i, int def) { return m[i].matched ? std::stoi(m.str(i)) : def; };
	int64_t y = num(1, 1970), mo = num(2, 1), d = num(3, 1);
	if (mo < 1 || mo > 12 || d < 1 || d > 31)
		return false;
	// days from civil (Howard Hinnant)
	y -= mo <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;
	double t = static_cast<double>(days) * 86400000.0;
	t += (num(4, 0) * 3600.0 + num(5, 0) * 60.0 + num(6, 0)) * 1000.0;
	if (m[7].matched) {
		std::string f = m.str(7) + "000";
		t += std::stoi(f.substr(0, 3));
	}
	if (m[8].matched && m.str(8) != "Z") {
		std::string z = m.str(8);
		int sign = z[0] == '-' ? -1 : 1;
		int hh = std::stoi(z.substr(1, 2));
		int mm = std::stoi(z.substr(z.size() - 2));
		t -= sign * (hh * 60 + mm) * 60000.0;
	}
	ms = t;
	return true;
}

V f_to_millis(Context &cx, Args &a, const V &) {
	if (a[0].undef())
		return V();
	if (!arg(a, 1).undef()) {
		auto ms = parse_date_time(cx, a[0].str(), a[1].str(), cx.now_ms);
		if (!ms)
			return V();
		return std::isnan(*ms) ? V::null() : V::number(*ms);
	}
	double ms;
	if (!parse_iso(a[0].str(), ms))
		fail("D3110", "The argument of the toMillis function must be an ISO 8601 formatted timestamp. Given " +
						  a[0].str());
	return V::number(ms);
}

// $fromMillis and $now: an ISO 8601 timestamp, or the picture's, in UTC or
// the time zone given.
V date_time(Context &cx, double ms, const V &picture, const V &zone) {
	return V::string(format_date_time(cx, ms, picture.undef() ? nullptr : &picture.str(),
									  zone.undef() ? nullptr : &zone.str()));
}

V f_from_millis(Context &cx, Args &a, const V &) {
	if (a[0].undef())
		return V();
	return date_time(cx, a[0].n, arg(a, 1), arg(a, 2));
}

V f_now(Context &cx, Args &a, const V &) {
	return date_time(cx, static_cast<double>(cx.now_ms), arg(a, 0), arg(a, 1));
}

V f_millis(Context &cx, Args &, const V &) { return V::number(static_cast<double>(cx.now_ms)); }

// ------------------------------------------------------------------ AWS's additions

V f_partition(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	double size = a[1].n;
	if (!(size >= 1) || std::floor(size) != size)
		fail("D3137", "The chunk size of $partition must be a positive integer");
	V out = V::array(false);
	const auto &xs = items(a[0]);
	size_t n = static_cast<size_t>(std::min(size, 1e9));
	count_items(xs.size());
	for (size_t i = 0; i < xs.size(); i += n) {
		V chunk = V::array(false);
		for (size_t j = i; j < xs.size() && j < i + n; j++)
			chunk.a->items.push_back(xs[j]);
		seq_push(out, chunk);
	}
	return out;
}

V f_range(Context &, Args &a, const V &) {
	double start = a[0].n, end = a[1].n, step = a[2].n;
	if (a[0].undef() || a[1].undef() || a[2].undef())
		return V();
	for (double d : {start, end, step})
		if (std::floor(d) != d)
			fail("D3137", "The arguments of $range must be integers");
	if (step == 0)
		fail("D3137", "The step of $range must not be 0");
	V out = V::array(false);
	for (double d = start; step > 0 ? d <= end : d >= end; d += step)
		seq_push(out, V::number(d));
	return out;
}

V f_hash(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	std::string alg = arg(a, 1).undef() ? "SHA-256" : a[1].str();
	const EVP_MD *md = alg == "MD5"		  ? EVP_md5()
					   : alg == "SHA-1"	  ? EVP_sha1()
					   : alg == "SHA-256" ? EVP_sha256()
					   : alg == "SHA-384" ? EVP_sha384()
					   : alg == "SHA-512" ? EVP_sha512()
										  : nullptr;
	if (!md)
		fail("D3137", "$hash: the algorithm " + alg +
						  " is not one of MD5, SHA-1, SHA-256, SHA-384, SHA-512");
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	const std::string &s = a[0].str();
	if (EVP_Digest(s.data(), s.size(), digest, &len, md, nullptr) != 1)
		fail("D3137", "$hash: the digest failed");
	std::string out;
	char b[3];
	for (unsigned i = 0; i < len; i++) {
		std::snprintf(b, sizeof b, "%02x", digest[i]);
		out += b;
	}
	return V::string(out);
}

V f_uuid(Context &, Args &, const V &) {
	unsigned char b[16];
	for (auto &x : b)
		x = static_cast<unsigned char>(asl::detail::random_below_inclusive(255));
	b[6] = (b[6] & 0x0F) | 0x40;
	b[8] = (b[8] & 0x3F) | 0x80;
	char out[37];
	std::snprintf(out, sizeof out,
				  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
				  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
				  b[15]);
	return V::string(out);
}

V f_parse(Context &, Args &a, const V &) {
	if (a[0].undef())
		return V();
	json j = json::parse(a[0].str(), nullptr, false);
	if (j.is_discarded())
		fail("D3137", "$parse: the argument is not valid JSON");
	if (!lim::within_depth(j, lim::JSON_DEPTH))
		fail("L0001", "$parse: the JSON nests deeper than " + std::to_string(lim::JSON_DEPTH) +
						  " levels" + lim::named("json_depth"));
	return from_json(j);
}

const Builtin kBuiltins[] = {
	{"sum", "<a<n>:n>", f_sum},
	{"count", "<a:n>", f_count},
	{"max", "<a<n>:n>", f_max},
	{"min", "<a<n>:n>", f_min},
	{"average", "<a<n>:n>", f_average},
	{"string", "<x-b?:s>", f_string},
	{"substring", "<s-nn?:s>", f_substring},
	{"substringBefore", "<s-s:s>", f_substring_before},
	{"substringAfter", "<s-s:s>", f_substring_after},
	{"lowercase", "<s-:s>", f_lowercase},
	{"uppercase", "<s-:s>", f_uppercase},
	{"length", "<s-:n>", f_length},
	{"trim", "<s-:s>", f_trim},
	{"pad", "<s-ns?:s>", f_pad},
	{"match", "<s-f<s:o>n?:a<o>>", f_match},
	{"contains", "<s-(sf):b>", f_contains},
	{"replace", "<s-(sf)(sf)n?:s>", f_replace},
	{"split", "<s-(sf)n?:a<s>>", f_split},
	{"join", "<a<s>s?:s>", f_join},
	{"formatBase", "<n-n?:s>", f_format_base},
	{"formatNumber", "<n-so?:s>", f_format_number},
	{"formatInteger", "<n-s:s>", f_format_integer},
	{"parseInteger", "<s-s:n>", f_parse_integer},
	{"number", "<(nsb)-:n>", f_number},
	{"floor", "<n-:n>", f_floor},
	{"ceil", "<n-:n>", f_ceil},
	{"round", "<n-n?:n>", f_round},
	{"abs", "<n-:n>", f_abs},
	{"sqrt", "<n-:n>", f_sqrt},
	{"power", "<n-n:n>", f_power},
	{"random", "<n?:n>", f_random},
	{"boolean", "<x-:b>", f_boolean},
	{"not", "<x-:b>", f_not},
	{"map", "<af>", f_map},
	{"zip", "<a+>", f_zip},
	{"filter", "<af>", f_filter},
	{"single", "<af?>", f_single},
	{"reduce", "<afj?:j>", f_reduce},
	{"sift", "<o-f?:o>", f_sift},
	{"keys", "<x-:a<s>>", f_keys},
	{"lookup", "<x-s:x>", f_lookup},
	{"append", "<xx:a>", f_append},
	{"exists", "<x:b>", f_exists},
	{"spread", "<x-:a<o>>", f_spread},
	{"merge", "<a<o>:o>", f_merge},
	{"reverse", "<a:a>", f_reverse},
	{"each", "<o-f:a>", f_each},
	{"error", "<s?:x>", f_error},
	{"assert", "<bs?:x>", f_assert},
	{"type", "<x:s>", f_type},
	{"sort", "<af?:a>", f_sort},
	{"shuffle", "<a:a>", f_shuffle},
	{"distinct", "<x:x>", f_distinct},
	{"base64encode", "<s-:s>", f_base64encode},
	{"base64decode", "<s-:s>", f_base64decode},
	{"encodeUrlComponent", "<s-:s>", f_encode_url_component},
	{"encodeUrl", "<s-:s>", f_encode_url},
	{"decodeUrlComponent", "<s-:s>", f_decode_url_component},
	{"decodeUrl", "<s-:s>", f_decode_url},
	{"toMillis", "<s-s?:n>", f_to_millis},
	{"fromMillis", "<n-s?s?:s>", f_from_millis},
	{"clone", "<(oa)-:o>", f_clone},
	{"now", "<s?s?:s>", f_now},
	{"millis", "<:n>", f_millis},
	{"partition", "<an:a>", f_partition},
	{"range", "<nnn:a>", f_range},
	{"hash", "<s-s?:s>", f_hash},
	{"uuid", "<:s>", f_uuid},
	{"parse", "<s-:j>", f_parse},
};

}  // namespace

const Builtin *find_builtin(const std::string &name) {
	for (const auto &b : kBuiltins)
		if (name == b.name)
			return &b;
	return nullptr;
}

Value native_function(const Builtin *b) {
	Value v;
	v.k = Value::Fn;
	v.f = std::make_shared<Function>();
	v.f->kind = Function::Native;
	v.f->native = b;
	return v;
}

}  // namespace genroc::jsonata::detail
