// jsonata_picture.cpp — JSONata's picture strings, as the reference
// implementation (the `jsonata` npm package) reads them: integer pictures
// ($formatInteger, $parseInteger: "#,##0", "000;o", "w", "Ww", "I", "A"),
// decimal-format pictures ($formatNumber: grouping, exponent, percent,
// per-mille, the options object) and date-time pictures ($fromMillis, $now,
// $toMillis: "[Y0001]-[M01]-[D01]", "[h]:[m01][P]", names, ordinals, words,
// "[Z]", "[z]"), with the time zone argument.
//
// Written here rather than on ICU.  ICU (libicu) has time zones, number
// formats and spelled-out numbers, but not the XPath picture grammar: the
// parser and every rule of the reference (its English words with "and",
// its ordinal suffixes, its week numbering, its rounding through $round)
// would still be ours, and ICU's own spell-out and formats answer
// differently ("one hundred twenty-three", locale grouping).  What ICU would
// add is the time zone database, and the system's tzdata gives that
// directly: a zone is a small TZif file (RFC 8536) read on first use and
// kept (a few KB per zone, a mutex-guarded cache per process).  ICU costs
// every PostgreSQL backend that loads the extension the mapping of ~30 MB
// of libicudata and ICU's own initialisation on first call, and ties the
// extension to an ICU soname; this file costs nothing at load.
//
// The reference's quirks are kept where an answer depends on them (the
// picture's corner cases, a "±HHMM" zone read by parseInt, hours floored:
// "-0530" is -6 h + -30 min, as the reference answers); an IANA name
// ("Europe/Paris"), where the reference answers "NaN", is genroc's
// extension: the zone's offset at that instant from the system's tzdata.
//
// Strings are handled as UTF-16, as JavaScript does, where the reference's
// positions count UTF-16 units (substring, indexOf), and as code points
// where it walks code points (the digit families of a picture).
//
// Bounds: a picture is at most jsonata_picture characters (L0001); every
// call charges its picture and its answer to the step's work; a roman
// numeral or a string longer than jsonata_string is refused (L0001);
// $toMillis matches through the bounded regular expressions of
// jsonata_regex.cpp.
//
// Glossary
//   integer format  an analysed integer picture: decimal (digits of one
//                   Unicode digit family, '#', grouping separators),
//                   letters (a, A), roman (i, I), words (w, W, Ww) or a
//                   sequence the reference does not support (D3130)
//   regular         grouping separators of one character at equal
//                   intervals: they repeat over the whole number
//   fragment        one component of a date (year, month, ISO week, ...)

#include "jsonata_picture.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "limits.hpp"

namespace genroc::jsonata::detail {

namespace lim = genroc::limits;

namespace {

using u16 = std::u16string;
constexpr size_t npos = u16::npos;
constexpr double kDay = 86400000.0;

// ------------------------------------------------------------------ strings

u16 to16(const std::string &s) {
	u16 out;
	out.reserve(s.size());
	for (size_t i = 0; i < s.size();) {
		unsigned char c = static_cast<unsigned char>(s[i]);
		uint32_t cp;
		size_t len;
		if (c < 0x80) { cp = c; len = 1; }
		else if (c >= 0xF0) { cp = c & 0x07; len = 4; }
		else if (c >= 0xE0) { cp = c & 0x0F; len = 3; }
		else if (c >= 0xC0) { cp = c & 0x1F; len = 2; }
		else { cp = 0xFFFD; len = 1; }
		if (len > 1) {
			if (i + len > s.size()) { cp = 0xFFFD; len = s.size() - i; }
			else
				for (size_t k = 1; k < len; k++)
					cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
		}
		i += len;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			out += static_cast<char16_t>(0xD800 + (cp >> 10));
			out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
		} else {
			out += static_cast<char16_t>(cp);
		}
	}
	return out;
}

std::string to8(const u16 &s) {
	std::string out;
	out.reserve(s.size());
	for (size_t i = 0; i < s.size(); i++) {
		uint32_t cp = s[i];
		if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] < 0xE000) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (s[i + 1] - 0xDC00);
			i++;
		} else if (cp >= 0xD800 && cp < 0xE000) {
			cp = 0xFFFD;
		}
		put_utf8(out, cp);
	}
	return out;
}

u16 from_cp(uint32_t cp) {
	u16 out;
	if (cp >= 0x10000) {
		cp -= 0x10000;
		out += static_cast<char16_t>(0xD800 + (cp >> 10));
		out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
	} else {
		out += static_cast<char16_t>(cp);
	}
	return out;
}

// The code points of `s` (JavaScript's stringToArray).
std::vector<uint32_t> code_points(const u16 &s) {
	std::vector<uint32_t> out;
	for (size_t i = 0; i < s.size(); i++) {
		uint32_t cp = s[i];
		if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] < 0xE000) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (s[i + 1] - 0xDC00);
			i++;
		}
		out.push_back(cp);
	}
	return out;
}

u16 ascii(const char *s) {
	u16 out;
	for (; *s; s++)
		out += static_cast<char16_t>(*s);
	return out;
}

// String.prototype.substring: clamped, swapped when start > end.
u16 substring(const u16 &s, double a, double b = 1e300) {
	double n = static_cast<double>(s.size());
	a = std::isnan(a) ? 0 : std::clamp(a, 0.0, n);
	b = std::isnan(b) ? 0 : std::clamp(b, 0.0, n);
	if (a > b)
		std::swap(a, b);
	return s.substr(static_cast<size_t>(a), static_cast<size_t>(b - a));
}

// Array/String.prototype.slice: negative positions count from the end.
u16 slice(const u16 &s, double a, double b = 1e300) {
	double n = static_cast<double>(s.size());
	auto at = [&](double x) { return x < 0 ? std::max(n + x, 0.0) : std::min(x, n); };
	a = at(a);
	b = at(b);
	return a < b ? s.substr(static_cast<size_t>(a), static_cast<size_t>(b - a)) : u16();
}

// String.prototype.substr(start, length).
u16 substr(const u16 &s, double start, double length = 1e300) {
	double n = static_cast<double>(s.size());
	if (start < 0)
		start = std::max(n + start, 0.0);
	start = std::min(start, n);
	double len = std::clamp(length, 0.0, n - start);
	return s.substr(static_cast<size_t>(start), static_cast<size_t>(len));
}

double index_of(const u16 &s, const u16 &t, double from = 0) {
	size_t f = static_cast<size_t>(std::clamp(from, 0.0, static_cast<double>(s.size())));
	size_t p = s.find(t, f);
	return p == npos ? -1 : static_cast<double>(p);
}

double last_index_of(const u16 &s, const u16 &t) {
	size_t p = s.rfind(t);
	return p == npos ? -1 : static_cast<double>(p);
}

// String.prototype.charAt, as a one-unit string ("" out of range).
u16 char_at(const u16 &s, double i) {
	if (i < 0 || i >= static_cast<double>(s.size()))
		return u16();
	return u16(1, s[static_cast<size_t>(i)]);
}

// String.prototype.split with a string separator.
std::vector<u16> split(const u16 &s, const u16 &sep) {
	std::vector<u16> out;
	if (sep.empty()) {
		for (char16_t c : s)
			out.emplace_back(1, c);
		return out;
	}
	size_t from = 0;
	for (;;) {
		size_t p = s.find(sep, from);
		if (p == npos) {
			out.push_back(s.substr(from));
			return out;
		}
		out.push_back(s.substr(from, p - from));
		from = p + sep.size();
	}
}

u16 replace_all(const u16 &s, const u16 &from, const u16 &to) {
	auto parts = split(s, from);
	u16 out;
	for (size_t i = 0; i < parts.size(); i++) {
		if (i)
			out += to;
		out += parts[i];
	}
	return out;
}

bool js_space(char16_t c) {
	return c == 9 || c == 10 || c == 11 || c == 12 || c == 13 || c == 32 || c == 0xA0 || c == 0x1680 ||
		   (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
		   c == 0x3000 || c == 0xFEFF;
}

u16 upper(u16 s) {
	for (auto &c : s)
		if (c >= 'a' && c <= 'z')
			c = static_cast<char16_t>(c - 32);
	return s;
}
u16 lower(u16 s) {
	for (auto &c : s)
		if (c >= 'A' && c <= 'Z')
			c = static_cast<char16_t>(c + 32);
	return s;
}

// JavaScript's Number#toString.
u16 num16(double d) { return to16(format_number(d)); }

// parseInt(s) without a radix: white space, a sign, "0x" for hexadecimal,
// then digits; NaN when there are none.
double parse_int(const u16 &s) {
	size_t i = 0;
	while (i < s.size() && js_space(s[i]))
		i++;
	double sign = 1;
	if (i < s.size() && (s[i] == '+' || s[i] == '-'))
		sign = s[i++] == '-' ? -1 : 1;
	int radix = 10;
	if (i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		radix = 16;
		i += 2;
	}
	std::string digits;
	for (; i < s.size(); i++) {
		char16_t c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
		if (d >= radix)
			break;
		digits += static_cast<char>(c);
	}
	if (digits.empty())
		return NAN;
	if (radix == 10)
		return sign * std::strtod(digits.c_str(), nullptr);
	double v = 0;
	for (char c : digits)
		v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	return sign * v;
}

// parseFloat of "0.ddd".
double parse_float(const u16 &s) {
	std::string t = to8(s);
	char *end = nullptr;
	double v = std::strtod(t.c_str(), &end);
	return end == t.c_str() ? NAN : v;
}

void check_picture(const std::string &picture) {
	size_t n = utf8_length(picture);
	if (n > lim::JSONATA_PICTURE)
		fail("L0001", "a picture string is longer than " + std::to_string(lim::JSONATA_PICTURE) +
						  " characters" + lim::named("jsonata_picture"));
	lim::count_work(1 + n);
}

Value answer(const u16 &s) {
	std::string out = to8(s);
	if (out.size() > lim::JSONATA_STRING)
		fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
						  lim::named("jsonata_string"));
	lim::count_work(1 + out.size() / 16);
	return Value::string(std::move(out));
}

// $round(x, precision): half to even, shifted through the decimal text as
// the reference does.
double shift_exponent(double x, int by) {
	std::string s = format_number(x);
	size_t e = s.find('e');
	std::string mant = e == std::string::npos ? s : s.substr(0, e);
	long exp = e == std::string::npos ? 0 : std::strtol(s.c_str() + e + 1, nullptr, 10);
	return std::strtod((mant + "e" + std::to_string(exp + by)).c_str(), nullptr);
}

double round_half_even(double x, int precision) {
	if (precision)
		x = shift_exponent(x, precision);
	double r = std::floor(x + 0.5);
	if (std::fabs(r - x) == 0.5 && std::fabs(std::fmod(r, 2)) == 1)
		r -= 1;
	if (precision)
		r = shift_exponent(r, -precision);
	return r == 0 ? 0 : r;
}

// ------------------------------------------------------------------ integer pictures

enum Primary { kDecimal, kLetters, kRoman, kWords, kSequence };
enum Case { kNone, kUpper, kLower, kTitle };

struct Sep {
	double position;
	u16 ch;
};

struct IntFormat {
	Primary primary = kDecimal;
	Case tcase = kLower;
	bool ordinal = false;
	uint32_t zero = 0x30;
	double mandatory = 0;
	double optional = 0;
	bool regular = false;
	Sep rsep{0, u16()};		  // regular: the interval and the character
	std::vector<Sep> seps;	  // not regular: each separator, right to left
	u16 token;				  // a sequence's picture
	double parse_width = 0;	  // digits to read when another number follows
};

// The first code point of each Unicode decimal digit family the reference
// knows.
const uint32_t kDigitFamilies[] = {
	0x30, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
	0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
	0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10};

[[noreturn]] void sequence_unsupported(const u16 &token) {
	fail("D3130", "Formatting or parsing an integer as a sequence starting with \"" + to8(token) +
					  "\" is not supported by this implementation");
}

// The interval of regular grouping separators, 0 when they are not.
double regular_interval(const std::vector<Sep> &seps, bool same_char) {
	if (seps.empty())
		return 0;
	if (same_char)
		for (auto &s : seps)
			if (s.ch != seps[0].ch)
				return 0;
	auto gcd = [](double a, double b) {
		while (b != 0) {
			double t = std::fmod(a, b);
			a = b;
			b = t;
		}
		return a;
	};
	double factor = seps[0].position;
	for (size_t i = 1; i < seps.size(); i++)
		factor = gcd(factor, seps[i].position);
	for (size_t i = 1; i <= seps.size(); i++) {
		bool found = false;
		for (auto &s : seps)
			found = found || s.position == static_cast<double>(i) * factor;
		if (!found)
			return 0;
	}
	return factor;
}

IntFormat analyse_integer(const u16 &picture) {
	IntFormat f;
	size_t semi = picture.rfind(u';');
	u16 primary = semi == npos ? picture : picture.substr(0, semi);
	if (semi != npos && semi + 1 < picture.size() && picture[semi + 1] == 'o')
		f.ordinal = true;
	if (primary == u"A" || primary == u"a") {
		f.primary = kLetters;
		f.tcase = primary == u"A" ? kUpper : kLower;
	} else if (primary == u"I" || primary == u"i") {
		f.primary = kRoman;
		f.tcase = primary == u"I" ? kUpper : kLower;
	} else if (primary == u"W" || primary == u"Ww" || primary == u"w") {
		f.primary = kWords;
		f.tcase = primary == u"W" ? kUpper : primary == u"Ww" ? kTitle : kLower;
	} else {
		auto cps = code_points(primary);
		std::reverse(cps.begin(), cps.end());
		int64_t zero = -1;
		double position = 0;
		for (uint32_t cp : cps) {
			bool digit = false;
			for (uint32_t family : kDigitFamilies)
				if (cp >= family && cp <= family + 9) {
					digit = true;
					f.mandatory++;
					position++;
					if (zero < 0)
						zero = family;
					else if (zero != family)
						fail("D3131", "In a decimal digit pattern, all digits must be from the same decimal group");
					break;
				}
			if (digit)
				continue;
			if (cp == '#') {
				position++;
				f.optional++;
			} else {
				f.seps.push_back({position, from_cp(cp)});
			}
		}
		if (f.mandatory > 0) {
			f.primary = kDecimal;
			f.zero = static_cast<uint32_t>(zero);
			double r = regular_interval(f.seps, true);
			if (r > 0) {
				f.regular = true;
				f.rsep = {r, f.seps[0].ch};
			}
		} else {
			f.primary = kSequence;
			f.token = primary;
		}
	}
	return f;
}

const char *const kFew[] = {"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
							"Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen",
							"Eighteen", "Nineteen"};
const char *const kOrdinals[] = {"Zeroth", "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh",
								 "Eighth", "Ninth", "Tenth", "Eleventh", "Twelfth", "Thirteenth", "Fourteenth",
								 "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth"};
const char *const kDecades[] = {"Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety", "Hundred"};
const char *const kMagnitudes[] = {"Thousand", "Million", "Billion", "Trillion"};

// English words as the reference spells them ("one hundred and one",
// "three thousand, seven hundred and thirty-first").
std::string words(double num, bool prev, bool ord) {
	lim::RecursionGuard guard;
	lim::count_work(1);
	std::string w;
	if (num <= 19) {
		int i = static_cast<int>(num);
		w = std::string(prev ? " and " : "") + (num == i && i >= 0 ? (ord ? kOrdinals[i] : kFew[i]) : "undefined");
	} else if (num < 100) {
		double tens = std::floor(num / 10), rem = std::fmod(num, 10);
		w = std::string(prev ? " and " : "") + kDecades[static_cast<int>(tens) - 2];
		if (rem > 0)
			w += "-" + words(rem, false, ord);
		else if (ord)
			w = w.substr(0, w.size() - 1) + "ieth";
	} else if (num < 1000) {
		double hundreds = std::floor(num / 100), rem = std::fmod(num, 100);
		w = std::string(prev ? ", " : "") + kFew[static_cast<int>(hundreds)] + " Hundred";
		if (rem > 0)
			w += words(rem, true, ord);
		else if (ord)
			w += "th";
	} else {
		int mag = static_cast<int>(std::floor(std::log10(num) / 3));
		mag = std::min(mag, 4);
		double factor = std::pow(10, mag * 3);
		double mant = std::floor(num / factor);
		double rem = num - mant * factor;
		w = std::string(prev ? ", " : "") + words(mant, false, false) + " " + kMagnitudes[mag - 1];
		if (rem > 0)
			w += words(rem, true, ord);
		else if (ord)
			w += "th";
	}
	return w;
}

u16 format_int(double value, const IntFormat &f) {
	if (!std::isfinite(value))	// no JSON value is one; JavaScript's text
		return num16(value);
	bool negative = value < 0;
	value = std::fabs(value);
	u16 s;
	switch (f.primary) {
	case kLetters: {
		char16_t a = f.tcase == kUpper ? 'A' : 'a';
		while (value > 0) {
			lim::count_work(1);
			s.insert(s.begin(), static_cast<char16_t>(a + static_cast<int>(std::fmod(value - 1, 26))));
			value = std::floor((value - 1) / 26);
		}
		break;
	}
	case kRoman: {
		static const std::pair<int, const char *> numerals[] = {
			{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"}, {90, "xc"}, {50, "l"},
			{40, "xl"},	 {10, "x"},	  {9, "ix"},  {5, "v"},	  {4, "iv"},  {1, "i"}};
		if (value / 1000 > static_cast<double>(lim::JSONATA_STRING))
			fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
							  lim::named("jsonata_string"));
		std::string r;
		for (auto &[n, text] : numerals) {
			double count = std::floor(value / n);
			if (count >= 1) {
				lim::count_work(static_cast<uint64_t>(count));
				lim::count_bytes(static_cast<uint64_t>(count) * std::strlen(text));
				for (double k = 0; k < count; k++)
					r += text;
				value -= count * n;
			}
		}
		s = ascii(r.c_str());
		if (f.tcase == kUpper)
			s = upper(s);
		break;
	}
	case kWords: {
		s = to16(words(value, false, f.ordinal));
		if (f.tcase == kUpper)
			s = upper(s);
		else if (f.tcase == kLower)
			s = lower(s);
		break;
	}
	case kDecimal: {
		s = num16(value);
		double pad = f.mandatory - static_cast<double>(s.size());
		if (pad > 0) {
			if (pad > static_cast<double>(lim::JSONATA_STRING))
				fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
								  lim::named("jsonata_string"));
			s = u16(static_cast<size_t>(pad), u'0') + s;
		}
		if (f.zero != 0x30) {
			u16 mapped;
			for (uint32_t cp : code_points(s))
				mapped += from_cp(cp + f.zero - 0x30);
			s = mapped;
		}
		if (f.regular) {
			double len = static_cast<double>(s.size());
			double n = std::floor((len - 1) / f.rsep.position);
			for (double ii = n; ii > 0; ii--) {
				double pos = static_cast<double>(s.size()) - ii * f.rsep.position;
				s = substr(s, 0, pos) + f.rsep.ch + substr(s, pos);
			}
		} else {
			for (auto it = f.seps.rbegin(); it != f.seps.rend(); ++it) {
				double pos = static_cast<double>(s.size()) - it->position;
				s = substr(s, 0, pos) + it->ch + substr(s, pos);
			}
		}
		if (f.ordinal && !s.empty()) {
			char16_t last = s.back();
			const char *suffix = last == '1' ? "st" : last == '2' ? "nd" : last == '3' ? "rd" : nullptr;
			if (!suffix || (s.size() > 1 && s[s.size() - 2] == '1'))
				suffix = "th";
			s += ascii(suffix);
		}
		break;
	}
	case kSequence:
		sequence_unsupported(f.token);
	}
	if (negative)
		s = u"-" + s;
	return s;
}

// ------------------------------------------------------------------ parsing integers

// The words and their values, in the reference's order (its regular
// expression tries them in this order).
const std::vector<std::pair<std::string, double>> &word_values() {
	static const std::vector<std::pair<std::string, double>> table = [] {
		std::vector<std::pair<std::string, double>> t;
		auto add = [&](std::string w, double v) {
			for (auto &c : w)
				c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
			for (auto &e : t)
				if (e.first == w) {
					e.second = v;
					return;
				}
			t.emplace_back(w, v);
		};
		for (int i = 0; i < 20; i++)
			add(kFew[i], i);
		for (int i = 0; i < 20; i++)
			add(kOrdinals[i], i);
		for (int i = 0; i < 9; i++) {
			std::string w = kDecades[i];
			add(w, (i + 2) * 10);
			add(w.substr(0, w.size() - 1) + "ieth", (i + 2) * 10);
		}
		add("hundredth", 100);
		for (int i = 0; i < 4; i++) {
			double v = std::pow(10, (i + 1) * 3);
			add(kMagnitudes[i], v);
			add(std::string(kMagnitudes[i]) + "th", v);
		}
		return t;
	}();
	return table;
}

double word_value(const u16 &w) {
	std::string k = to8(w);
	for (auto &[word, v] : word_values())
		if (word == k)
			return v;
	return NAN;
}

double words_to_number(const u16 &text) {
	// split on ", ", " and ", a space, a backslash or a hyphen
	std::vector<u16> parts;
	size_t from = 0, i = 0;
	while (i < text.size()) {
		size_t len = 0;
		if (text[i] == ',' && i + 1 < text.size() && js_space(text[i + 1]))
			len = 2;
		else if (js_space(text[i]) && i + 4 < text.size() && text.compare(i + 1, 3, u"and") == 0 && js_space(text[i + 4]))
			len = 5;
		else if (js_space(text[i]) || text[i] == '\\' || text[i] == '-')
			len = 1;
		if (len) {
			parts.push_back(text.substr(from, i - from));
			i += len;
			from = i;
		} else {
			i++;
		}
	}
	parts.push_back(text.substr(from));
	std::vector<double> segs{0};
	for (auto &p : parts) {
		lim::count_work(1);
		double v = word_value(p);
		if (v < 100) {
			double top = segs.back();
			segs.pop_back();
			if (top >= 1000) {
				segs.push_back(top);
				top = 0;
			}
			segs.push_back(top + v);
		} else {
			double top = segs.back();
			segs.back() = top * v;
		}
	}
	double sum = 0;
	for (double s : segs)
		sum += s;
	return sum;
}

double parse_int_format(const u16 &value, const IntFormat &f) {
	switch (f.primary) {
	case kLetters: {
		double a = f.tcase == kUpper ? 'A' : 'a', d = 0;
		for (size_t i = 0; i < value.size(); i++)
			d += (value[value.size() - i - 1] - a + 1) * std::pow(26, static_cast<double>(i));
		return d;
	}
	case kRoman: {
		u16 r = f.tcase == kUpper ? value : upper(value);
		double decimal = 0, max = 1;
		for (size_t i = r.size(); i-- > 0;) {
			double v;
			switch (r[i]) {
			case 'M': v = 1000; break;
			case 'D': v = 500; break;
			case 'C': v = 100; break;
			case 'L': v = 50; break;
			case 'X': v = 10; break;
			case 'V': v = 5; break;
			case 'I': v = 1; break;
			default: return NAN;
			}
			if (v < max) {
				decimal -= v;
			} else {
				max = v;
				decimal += v;
			}
		}
		return decimal;
	}
	case kWords:
		return words_to_number(lower(value));
	case kDecimal: {
		u16 digits = value;
		if (f.ordinal)
			digits = substring(digits, 0, static_cast<double>(digits.size()) - 2);
		if (f.regular) {
			digits = replace_all(digits, u",", u"");
		} else {
			for (auto &s : f.seps)
				digits = replace_all(digits, s.ch, u"");
		}
		if (f.zero != 0x30) {
			u16 mapped;
			for (char16_t c : digits)
				mapped += from_cp(static_cast<uint32_t>(c) - f.zero + 0x30);
			digits = mapped;
		}
		return parse_int(digits);
	}
	case kSequence:
		break;
	}
	sequence_unsupported(f.token);
}

// The regular expression (JavaScript syntax) that reads one integer.
std::string int_regex(const IntFormat &f) {
	switch (f.primary) {
	case kLetters:
		return f.tcase == kUpper ? "[A-Z]+" : "[a-z]+";
	case kRoman:
		return f.tcase == kUpper ? "[MDCLXVI]+" : "[mdclxvi]+";
	case kWords: {
		std::string r = "(?:";
		for (auto &[w, v] : word_values())
			r += w + "|";
		return r + "and|[\\-, ])+";
	}
	case kDecimal: {
		std::string r = "[0-9]";
		r += f.parse_width ? "{" + format_number(f.parse_width) + "}" : "+";
		if (f.ordinal)
			r += "(?:th|st|nd|rd)";
		return r;
	}
	case kSequence:
		break;
	}
	sequence_unsupported(f.token);
}

// ------------------------------------------------------------------ dates

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const int64_t yoe = y - era * 400;
	const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t &y, int &m, int &d) {
	z += 719468;
	const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	const int64_t doe = z - era * 146097;
	const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	const int64_t mp = (5 * doy + 2) / 153;
	d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
	m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
	y += m <= 2;
}

// JavaScript's Date.UTC: NaN in, NaN out; a year 0..99 is 1900..1999; the
// month and the day may run over; NaN outside ±8.64e15.
double date_utc(double y, double mo, double d = 1, double h = 0, double mi = 0, double s = 0, double ms = 0) {
	for (double x : {y, mo, d, h, mi, s, ms})
		if (!std::isfinite(x))
			return NAN;
	y = std::trunc(y);
	if (y >= 0 && y <= 99)
		y += 1900;
	mo = std::trunc(mo);
	double ym = y + std::floor(mo / 12);
	double mn = mo - std::floor(mo / 12) * 12;
	if (std::fabs(ym) > 400000 || std::fabs(d) > 1e9 || std::fabs(h) > 1e12 || std::fabs(mi) > 1e14 ||
		std::fabs(s) > 1e16 || std::fabs(ms) > 1e18)
		return NAN;
	double days = static_cast<double>(days_from_civil(static_cast<int64_t>(ym), static_cast<int64_t>(mn) + 1, 1)) +
				  std::trunc(d) - 1;
	double t = days * kDay + std::trunc(h) * 3600000 + std::trunc(mi) * 60000 + std::trunc(s) * 1000 + std::trunc(ms);
	return std::fabs(t) > 8.64e15 ? NAN : t;
}

struct Civil {
	double t;  // ms since the epoch (already shifted to the zone)
	int64_t year;
	int month;	// 1..12
	int day;	// 1..31
	int weekday;	// 0 Sunday .. 6
	int hour, minute, second, ms;
};

Civil civil(double t) {
	Civil c{};
	c.t = t;
	int64_t ti = static_cast<int64_t>(t);
	int64_t days = ti >= 0 ? ti / 86400000 : -((-ti + 86400000 - 1) / 86400000);
	int64_t rest = ti - days * 86400000;
	civil_from_days(days, c.year, c.month, c.day);
	c.weekday = static_cast<int>(((days % 7) + 11) % 7);
	c.hour = static_cast<int>(rest / 3600000);
	c.minute = static_cast<int>(rest / 60000 % 60);
	c.second = static_cast<int>(rest / 1000 % 60);
	c.ms = static_cast<int>(rest % 1000);
	return c;
}

int weekday_of(double t) {
	int64_t days = static_cast<int64_t>(std::floor(t / kDay));
	return static_cast<int>(((days % 7) + 11) % 7);
}

// The start of the first week of a year (month 0) or a month: the week
// (Monday first) that holds its first Thursday.
double start_of_first_week(double year, double month) {
	double first = date_utc(year, month);
	if (std::isnan(first))
		return NAN;
	int dow = weekday_of(first);
	if (dow == 0)
		dow = 7;
	return dow > 4 ? first + (8 - dow) * kDay : first - (dow - 1) * kDay;
}

double delta_weeks(double start, double end) { return (end - start) / (kDay * 7) + 1; }

struct Fragment {
	enum { Undef, Num, Str } k = Undef;
	double n = 0;
	u16 s;
};

Fragment num_fragment(double n) {
	Fragment f;
	f.k = Fragment::Num;
	f.n = n;
	return f;
}

Fragment fragment(const Civil &c, char16_t component) {
	double y = static_cast<double>(c.year);
	double m0 = c.month - 1;
	switch (component) {
	case 'Y': return num_fragment(y);
	case 'M': return num_fragment(c.month);
	case 'D': return num_fragment(c.day);
	case 'd': return num_fragment((date_utc(y, m0, c.day) - date_utc(y, 0)) / kDay + 1);
	case 'F': return num_fragment(c.weekday == 0 ? 7 : c.weekday);
	case 'W': {
		double start = start_of_first_week(y, 0);
		double today = date_utc(y, m0, c.day);
		double week = delta_weeks(start, today);
		if (week > 52) {
			if (today >= start_of_first_week(y + 1, 0))
				week = 1;
		} else if (week < 1) {
			week = delta_weeks(start_of_first_week(y - 1, 0), today);
		}
		return num_fragment(std::floor(week));
	}
	case 'w': {
		double start = start_of_first_week(y, m0);
		double today = date_utc(y, m0, c.day);
		double week = delta_weeks(start, today);
		if (week > 4) {
			double ny = m0 == 11 ? y + 1 : y, nm = m0 == 11 ? 0 : m0 + 1;
			if (today >= start_of_first_week(ny, nm))
				week = 1;
		} else if (week < 1) {
			double py = m0 == 0 ? y - 1 : y, pm = m0 == 0 ? 11 : m0 - 1;
			week = delta_weeks(start_of_first_week(py, pm), today);
		}
		return num_fragment(std::floor(week));
	}
	case 'X': {
		double start = start_of_first_week(y, 0), end = start_of_first_week(y + 1, 0);
		return num_fragment(c.t < start ? y - 1 : c.t >= end ? y + 1 : y);
	}
	case 'x': {
		double start = start_of_first_week(y, m0);
		double ny = m0 == 11 ? y + 1 : y, nm = m0 == 11 ? 0 : m0 + 1;
		double end = start_of_first_week(ny, nm);
		double pm = m0 == 0 ? 11 : m0 - 1;
		return num_fragment(c.t < start ? pm + 1 : c.t >= end ? nm + 1 : m0 + 1);
	}
	case 'H': return num_fragment(c.hour);
	case 'h': return num_fragment(c.hour % 12 == 0 ? 12 : c.hour % 12);
	case 'P': {
		Fragment f;
		f.k = Fragment::Str;
		f.s = c.hour >= 12 ? u"pm" : u"am";
		return f;
	}
	case 'm': return num_fragment(c.minute);
	case 's': return num_fragment(c.second);
	case 'f': return num_fragment(c.ms);
	case 'C':
	case 'E': {
		Fragment f;
		f.k = Fragment::Str;
		f.s = u"ISO";
		return f;
	}
	default: return Fragment();
	}
}

const char *const kDays[] = {"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
const char *const kMonths[] = {"January", "February", "March", "April", "May", "June", "July",
							   "August", "September", "October", "November", "December"};

struct Part {
	bool literal = true;
	u16 text;				 // a literal
	char16_t component = 0;	 // a marker
	u16 pres1, pres2;
	Case names = kNone;
	bool has_width = false;
	bool has_min = false, has_max = false;
	double wmin = 0, wmax = 0;	// NaN when not a number
	bool has_int = false;
	IntFormat fmt;
	double n = -1;	// the year's digits
};

bool in(char16_t c, const char *set) { return c && std::strchr(set, static_cast<char>(c)) && c < 128; }

const char *default_presentation(char16_t c) {
	switch (c) {
	case 'Y': case 'M': case 'D': case 'd': case 'W': case 'w': case 'X': case 'x': case 'H': case 'h': case 'f':
		return "1";
	case 'F': case 'P': case 'C': case 'E':
		return "n";
	case 'm': case 's':
		return "01";
	case 'Z': case 'z':
		return "01:01";
	default:
		return nullptr;
	}
}

std::vector<Part> analyse_date_time(const u16 &picture) {
	std::vector<Part> spec;
	auto add_literal = [&](size_t start, size_t end) {
		if (end > start) {
			Part p;
			p.text = replace_all(picture.substr(start, end - start), u"]]", u"]");
			spec.push_back(std::move(p));
		}
	};
	size_t start = 0, pos = 0;
	while (pos < picture.size()) {
		if (picture[pos] == '[') {
			if (pos + 1 < picture.size() && picture[pos + 1] == '[') {
				add_literal(start, pos);
				Part p;
				p.text = u"[";
				spec.push_back(std::move(p));
				pos += 2;
				start = pos;
				continue;
			}
			add_literal(start, pos);
			start = pos;
			pos = picture.find(u']', start);
			if (pos == npos)
				fail("D3135", "No matching closing bracket ']' in date/time picture string");
			u16 marker;
			for (char16_t c : picture.substr(start + 1, pos - start - 1))
				if (!js_space(c))
					marker += c;
			Part def;
			def.literal = false;
			def.component = marker.empty() ? 0 : marker[0];
			double comma = last_index_of(marker, u",");
			u16 pres;
			if (comma != -1) {
				u16 width = substring(marker, comma + 1);
				double dash = index_of(width, u"-");
				auto parse_width = [](const u16 &w, bool &has, double &v) {
					if (w == u"*")
						return;
					has = true;
					v = parse_int(w);
				};
				def.has_width = true;
				if (dash == -1) {
					parse_width(width, def.has_min, def.wmin);
				} else {
					parse_width(substring(width, 0, dash), def.has_min, def.wmin);
					parse_width(substring(width, dash + 1), def.has_max, def.wmax);
				}
				pres = substring(marker, 1, comma);
			} else {
				pres = substring(marker, 1);
			}
			if (pres.size() == 1) {
				def.pres1 = pres;
			} else if (pres.size() > 1) {
				char16_t last = pres.back();
				if (last == 'a' || last == 't' || last == 'c' || last == 'o') {
					def.pres2 = u16(1, last);
					def.pres1 = pres.substr(0, pres.size() - 1);
				} else {
					def.pres1 = pres;
				}
			} else {
				const char *d = default_presentation(def.component);
				if (!d)
					fail("D3132", "Unknown component specifier " + to8(u16(def.component ? 1 : 0, def.component)) +
									  " in date/time picture string");
				def.pres1 = ascii(d);
			}
			if (def.pres1[0] == 'n') {
				def.names = kLower;
			} else if (def.pres1[0] == 'N') {
				def.names = def.pres1.size() > 1 && def.pres1[1] == 'n' ? kTitle : kUpper;
			} else if (in(def.component, "YMDdFWwXxHhmsf")) {
				u16 pattern = def.pres1;
				if (!def.pres2.empty())
					pattern += u";" + def.pres2;
				def.fmt = analyse_integer(pattern);
				def.has_int = true;
				if (def.has_width && def.has_min && def.fmt.mandatory < def.wmin)
					def.fmt.mandatory = def.wmin;
				if (def.component == 'Y') {
					def.n = -1;
					if (def.has_width && def.has_max) {
						def.n = def.wmax;
						def.fmt.mandatory = def.n;
					} else {
						double w = def.fmt.mandatory + def.fmt.optional;
						if (w >= 2)
							def.n = w;
					}
				}
				if (!spec.empty() && spec.back().has_int)
					spec.back().fmt.parse_width = spec.back().fmt.mandatory;
			}
			if (def.component == 'Z' || def.component == 'z') {
				def.fmt = analyse_integer(def.pres1);
				def.has_int = true;
			}
			spec.push_back(std::move(def));
			start = pos + 1;
		}
		pos++;
	}
	add_literal(start, pos);
	return spec;
}

u16 fragment_text(const Fragment &f) {
	switch (f.k) {
	case Fragment::Num: return num16(f.n);
	case Fragment::Str: return f.s;
	default: return u"undefined";
	}
}

u16 format_component(const Civil &c, const Part &p, double oh, double om) {
	Fragment v = fragment(c, p.component);
	char16_t comp = p.component;
	if (in(comp, "YMDdFWwXxHhms")) {
		double n = v.n;
		if (comp == 'Y' && !(p.n == -1))
			n = std::fmod(n, std::pow(10, p.n));
		if (p.names != kNone) {
			u16 name;
			if (comp == 'M' || comp == 'x') {
				int i = static_cast<int>(n) - 1;
				name = i >= 0 && i < 12 ? ascii(kMonths[i]) : u"undefined";
			} else if (comp == 'F') {
				int i = static_cast<int>(n);
				name = i >= 0 && i < 8 ? ascii(kDays[i]) : u"undefined";
			} else {
				fail("D3133", "The 'name' modifier can only be applied to months and days in the date/time "
							  "picture string, not " + to8(u16(1, comp)));
			}
			if (p.names == kUpper)
				name = upper(name);
			else if (p.names == kLower)
				name = lower(name);
			if (p.has_width && p.has_max && static_cast<double>(name.size()) > p.wmax)
				name = substring(name, 0, p.wmax);
			return name;
		}
		if (!std::isfinite(n))
			return num16(n);
		return format_int(n, p.fmt);
	}
	if (comp == 'f')
		return format_int(v.n, p.fmt);
	if (comp == 'Z' || comp == 'z') {
		double offset = oh * 100 + om;
		u16 s;
		if (p.fmt.regular) {
			s = format_int(offset, p.fmt);
		} else {
			double digits = p.fmt.mandatory;
			if (digits == 1 || digits == 2) {
				s = format_int(oh, p.fmt);
				if (om != 0) {
					IntFormat two = analyse_integer(u"00");
					s += u":" + format_int(std::floor(om), two);
				}
			} else if (digits == 3 || digits == 4) {
				s = format_int(offset, p.fmt);
			} else {
				fail("D3134", "The timezone integer format specifier cannot have more than four digits");
			}
		}
		if (offset >= 0)
			s = u"+" + s;
		if (comp == 'z')
			s = u"GMT" + s;
		if (offset == 0 && p.pres2 == u"t")
			s = u"Z";
		return s;
	}
	if (comp == 'P') {
		u16 s = v.s;
		if (p.names == kUpper)
			s = upper(s);
		return s;
	}
	return fragment_text(v);
}

// ------------------------------------------------------------------ time zones

struct Zone {
	std::vector<int64_t> transitions;  // UTC seconds
	std::vector<uint8_t> index;		   // the type after each transition
	std::vector<int32_t> offsets;	   // UT offset of each type, seconds
	// the POSIX TZ rule after the last transition
	bool has_rule = false;
	int32_t std_offset = 0, dst_offset = 0;
	bool has_dst = false;
	struct Rule {
		char kind = 'M';  // 'J' (1..365, no Feb 29), 'D' (0..365), 'M'
		int a = 0, b = 0, c = 0;
		int32_t time = 7200;
	} start, end;
};

std::mutex zone_mutex;
std::string zone_dir = "/usr/share/zoneinfo";
std::unordered_map<std::string, std::shared_ptr<const Zone>> zone_cache;
constexpr size_t kZoneCacheMax = 1024;

// A name of the tz database: letters, digits, "/_+-", no ".." nor a
// leading "/".
bool zone_name_ok(const std::string &name) {
	if (name.empty() || name.size() > 64 || name[0] == '/' || name.back() == '/')
		return false;
	for (size_t i = 0; i < name.size(); i++) {
		char c = name[i];
		if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '+' || c == '-'))
			return false;
		if (c == '/' && name[i + 1] == '/')
			return false;
	}
	return true;
}

// "[+-]hh[:mm[:ss]]" at p; false when there is none.
bool posix_time(const std::string &s, size_t &p, int32_t &out) {
	int sign = 1;
	if (p < s.size() && (s[p] == '+' || s[p] == '-'))
		sign = s[p++] == '-' ? -1 : 1;
	if (p >= s.size() || !std::isdigit(static_cast<unsigned char>(s[p])))
		return false;
	int32_t parts[3] = {0, 0, 0};
	for (int k = 0; k < 3; k++) {
		int v = 0, n = 0;
		while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])) && n < 3) {
			v = v * 10 + (s[p++] - '0');
			n++;
		}
		parts[k] = v;
		if (k < 2 && p < s.size() && s[p] == ':' && p + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[p + 1])))
			p++;
		else
			break;
	}
	out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
	return true;
}

bool posix_name(const std::string &s, size_t &p) {
	if (p < s.size() && s[p] == '<') {
		size_t q = s.find('>', p);
		if (q == std::string::npos)
			return false;
		p = q + 1;
		return true;
	}
	size_t from = p;
	while (p < s.size() && std::isalpha(static_cast<unsigned char>(s[p])))
		p++;
	return p - from >= 3;
}

bool posix_rule(const std::string &s, size_t &p, Zone::Rule &r) {
	auto num = [&](int &out) {
		if (p >= s.size() || !std::isdigit(static_cast<unsigned char>(s[p])))
			return false;
		out = 0;
		while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])))
			out = out * 10 + (s[p++] - '0');
		return true;
	};
	if (p < s.size() && s[p] == 'M') {
		p++;
		r.kind = 'M';
		if (!num(r.a) || p >= s.size() || s[p++] != '.' || !num(r.b) || p >= s.size() || s[p++] != '.' || !num(r.c))
			return false;
	} else if (p < s.size() && s[p] == 'J') {
		p++;
		r.kind = 'J';
		if (!num(r.a))
			return false;
	} else {
		r.kind = 'D';
		if (!num(r.a))
			return false;
	}
	r.time = 7200;
	if (p < s.size() && s[p] == '/') {
		p++;
		if (!posix_time(s, p, r.time))
			return false;
	}
	return true;
}

void parse_posix(const std::string &tz, Zone &z) {
	size_t p = 0;
	int32_t off;
	if (!posix_name(tz, p) || !posix_time(tz, p, off))
		return;
	z.std_offset = -off;
	z.has_rule = true;
	if (p >= tz.size())
		return;
	if (!posix_name(tz, p))
		return;
	z.dst_offset = z.std_offset + 3600;
	if (p < tz.size() && tz[p] != ',') {
		if (!posix_time(tz, p, off))
			return;
		z.dst_offset = -off;
	}
	if (p < tz.size() && tz[p] == ',') {
		p++;
		if (!posix_rule(tz, p, z.start) || p >= tz.size() || tz[p++] != ',' || !posix_rule(tz, p, z.end))
			return;
		z.has_dst = true;
	}
}

int64_t be(const unsigned char *p, int n) {
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	if (n == 4)
		return static_cast<int32_t>(static_cast<uint32_t>(v));
	return static_cast<int64_t>(v);
}

// A TZif file (RFC 8536), its 64-bit part when there is one.
std::shared_ptr<const Zone> read_zone(const std::string &path) {
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nullptr;
	std::string data;
	char buf[8192];
	ssize_t n;
	while ((n = ::read(fd, buf, sizeof buf)) > 0 && data.size() < (1 << 20))
		data.append(buf, static_cast<size_t>(n));
	::close(fd);
	auto u = reinterpret_cast<const unsigned char *>(data.data());
	size_t size = data.size();
	if (size < 44 || std::memcmp(u, "TZif", 4) != 0)
		return nullptr;
	auto counts = [&](size_t at, int64_t c[6]) {
		for (int i = 0; i < 6; i++)
			c[i] = be(u + at + 20 + 4 * i, 4);
	};
	int64_t c[6];	// isut, isstd, leap, time, type, char
	counts(0, c);
	size_t at = 44;
	int tsize = 4;
	if (u[4] >= '2') {
		size_t v1 = static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
		at = 44 + v1;
		if (at + 44 > size || std::memcmp(u + at, "TZif", 4) != 0)
			return nullptr;
		counts(at, c);
		at += 44;
		tsize = 8;
	}
	for (int i = 0; i < 6; i++)
		if (c[i] < 0 || c[i] > 100000)
			return nullptr;
	size_t need = static_cast<size_t>(c[3] * (tsize + 1) + c[4] * 6 + c[5] + c[2] * (tsize + 4) + c[1] + c[0]);
	if (at + need > size || c[4] == 0)
		return nullptr;
	auto z = std::make_shared<Zone>();
	const unsigned char *p = u + at;
	for (int64_t i = 0; i < c[3]; i++)
		z->transitions.push_back(be(p + i * tsize, tsize));
	p += c[3] * tsize;
	for (int64_t i = 0; i < c[3]; i++)
		z->index.push_back(std::min<uint8_t>(p[i], static_cast<uint8_t>(c[4] - 1)));
	p += c[3];
	for (int64_t i = 0; i < c[4]; i++)
		z->offsets.push_back(static_cast<int32_t>(be(p + i * 6, 4)));
	if (tsize == 8) {
		size_t footer = at + need;
		if (footer < size && u[footer] == '\n') {
			size_t end = data.find('\n', footer + 1);
			if (end != std::string::npos)
				parse_posix(data.substr(footer + 1, end - footer - 1), *z);
		}
	}
	return z;
}

// The UTC seconds at which a POSIX rule's change happens in `year`, the
// local time of the change read in `offset`.
int64_t rule_time(const Zone::Rule &r, int64_t year, int32_t offset) {
	int64_t day;
	if (r.kind == 'J') {
		day = days_from_civil(year, 1, 1) + r.a - 1;
		bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
		if (leap && r.a >= 60)
			day++;
	} else if (r.kind == 'D') {
		day = days_from_civil(year, 1, 1) + r.a;
	} else {
		int64_t first = days_from_civil(year, r.a, 1);
		int wd = static_cast<int>(((first % 7) + 11) % 7);
		int64_t d = first + ((r.c - wd) % 7 + 7) % 7 + 7 * (r.b - 1);
		if (r.b == 5) {
			int64_t next = r.a == 12 ? days_from_civil(year + 1, 1, 1) : days_from_civil(year, r.a + 1, 1);
			while (d >= next)
				d -= 7;
		}
		day = d;
	}
	return day * 86400 + r.time - offset;
}

int32_t zone_offset_at(const Zone &z, int64_t t) {
	if (z.transitions.empty() || t < z.transitions.front()) {
		if (z.transitions.empty() && z.has_rule && !z.has_dst)
			return z.std_offset;
		return z.offsets.front();
	}
	if (t >= z.transitions.back() && z.has_rule) {
		if (!z.has_dst)
			return z.std_offset;
		int64_t y;
		int m, d;
		int64_t local = t + z.std_offset;
		civil_from_days(local >= 0 ? local / 86400 : -((-local + 86399) / 86400), y, m, d);
		int64_t start = rule_time(z.start, y, z.std_offset);
		int64_t end = rule_time(z.end, y, z.dst_offset);
		bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
		return dst ? z.dst_offset : z.std_offset;
	}
	auto it = std::upper_bound(z.transitions.begin(), z.transitions.end(), t);
	size_t i = static_cast<size_t>(it - z.transitions.begin()) - 1;
	return z.offsets[z.index[i]];
}

std::shared_ptr<const Zone> find_zone(const std::string &name) {
	if (!zone_name_ok(name))
		return nullptr;
	std::lock_guard<std::mutex> lock(zone_mutex);
	auto it = zone_cache.find(name);
	if (it != zone_cache.end())
		return it->second;
	auto z = read_zone(zone_dir + "/" + name);
	if (zone_cache.size() < kZoneCacheMax)
		zone_cache.emplace(name, z);
	return z;
}

// The offset the time zone argument gives at `millis`: the reference's
// parseInt of "±HHMM" (hours floored, minutes the remainder), or an IANA
// zone's offset (in whole minutes, the seconds of an offset such as
// Amsterdam's +00:19:32 of 1906 in `extra_ms`).
void zone_hours_minutes(const std::string &tz, double millis, double &oh, double &om, double &extra_ms) {
	double offset = parse_int(to16(tz));
	if (!std::isnan(offset)) {
		oh = std::floor(offset / 100);
		om = std::fmod(offset, 100);
		return;
	}
	int32_t seconds;
	if (!std::isfinite(millis) || !picture::zone_offset(tz, static_cast<int64_t>(std::floor(millis)), seconds))
		fail("D3137", "The time zone " + tz + " is neither ±HHMM nor a time zone of the IANA database");
	int32_t minutes = seconds / 60;
	oh = minutes / 60;
	om = minutes % 60;
	extra_ms = (seconds % 60) * 1000.0;
}

}  // namespace

namespace picture {

bool zone_offset(const std::string &name, int64_t utc_ms, int32_t &offset_seconds) {
	auto z = find_zone(name);
	if (!z)
		return false;
	int64_t s = utc_ms >= 0 ? utc_ms / 1000 : -((-utc_ms + 999) / 1000);
	offset_seconds = zone_offset_at(*z, s);
	return true;
}

void set_zoneinfo_dir(const std::string &dir) {
	std::lock_guard<std::mutex> lock(zone_mutex);
	zone_dir = dir;
	zone_cache.clear();
}

}  // namespace picture

// ------------------------------------------------------------------ the functions

std::string format_date_time(Context &, double millis, const std::string *picture, const std::string *timezone) {
	double oh = 0, om = 0, extra_ms = 0;
	if (timezone)
		zone_hours_minutes(*timezone, millis, oh, om, extra_ms);
	static const u16 iso = u"[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]";
	if (picture)
		check_picture(*picture);
	std::vector<Part> spec = analyse_date_time(picture ? to16(*picture) : iso);
	double t = millis + (60 * oh + om) * 60 * 1000 + extra_ms;
	if (!std::isfinite(t) || std::fabs(t) > 8.64e15)
		fail("D3137", "Invalid time value");
	Civil c = civil(std::trunc(t));
	u16 out;
	for (auto &p : spec) {
		lim::count_work(1);
		out += p.literal ? p.text : format_component(c, p, oh, om);
		if (out.size() > lim::JSONATA_STRING)
			fail("L0001", "a string grew past " + std::to_string(lim::JSONATA_STRING) + " bytes" +
							  lim::named("jsonata_string"));
	}
	return to8(out);
}

std::optional<double> parse_date_time(Context &cx, const std::string &text, const std::string &picture,
									  int64_t now_ms) {
	check_picture(picture);
	std::vector<Part> spec = analyse_date_time(to16(picture));
	// one capture group per part, as the reference's regular expression
	std::string re = "^";
	std::vector<u16> seps(spec.size());
	for (size_t i = 0; i < spec.size(); i++) {
		const Part &p = spec[i];
		std::string r;
		if (p.literal) {
			for (char c : to8(p.text)) {
				if (std::strchr(".*+?^${}()|[]\\", c) && c)
					r += '\\';
				r += c;
			}
		} else if (p.component == 'Z' || p.component == 'z') {
			if (p.fmt.regular)
				seps[i] = p.fmt.rsep.ch;
			r = p.component == 'z' ? "GMT" : "";
			r += "[-+][0-9]+";
			if (!seps[i].empty())
				r += to8(seps[i]) + "[0-9]+";
		} else if (p.component == 'f') {
			r = "[0-9]+";
		} else if (p.has_int) {
			r = int_regex(p.fmt);
		} else {
			if (!(p.component == 'M' || p.component == 'x' || p.component == 'F' || p.component == 'P'))
				fail("D3133", "The 'name' modifier can only be applied to months and days in the date/time "
							  "picture string, not " + to8(u16(p.component ? 1 : 0, p.component)));
			r = "[a-zA-Z]+";
		}
		re += "(" + r + ")";
	}
	re += "$";
	std::string error;
	RegexP compiled = compile_regex(re, "i", error);
	if (!compiled)
		fail("D3137", "The date/time picture string makes an invalid pattern: " + error);
	RegexMatch m;
	{
		RegexSearch search(cx, *compiled, text);
		if (!search.find(0, m))
			return std::nullopt;
	}
	// the components read, by letter; present but undefined when a name
	// was not found
	std::map<char16_t, std::optional<double>> comps;
	for (size_t i = 0; i < spec.size(); i++) {
		const Part &p = spec[i];
		if (p.literal)
			continue;
		u16 value = to16(m.group(text, i + 1));
		std::optional<double> v;
		if (p.component == 'Z' || p.component == 'z') {
			if (p.component == 'z')
				value = substring(value, 3);
			double hours = 0, minutes = 0;
			if (!seps[i].empty()) {
				double at = index_of(value, seps[i]);
				hours = parse_int(substring(value, 0, at));
				minutes = parse_int(substring(value, at + 1));
			} else if (value.size() - 1 <= 2) {
				hours = parse_int(value);
			} else {
				hours = parse_int(substring(value, 0, 3));
				minutes = parse_int(substring(value, 3));
			}
			v = hours * 60 + minutes;
		} else if (p.component == 'f') {
			v = parse_float(u"0." + substring(value, 0, 3)) * 1000;
		} else if (p.has_int) {
			v = parse_int_format(value, p.fmt);
		} else if (p.component == 'M' || p.component == 'x') {
			// the last month of an abbreviation wins, as in the reference's table
			for (int k = 0; k < 12; k++) {
				u16 name = ascii(kMonths[k]);
				if (p.has_width && p.has_max && p.wmax != 0 && !std::isnan(p.wmax))
					name = substring(name, 0, p.wmax);
				if (name == value)
					v = k + 1;
			}
		} else if (p.component == 'F') {
			for (int k = 1; k < 8; k++) {
				u16 name = ascii(kDays[k]);
				if (p.has_width && p.has_max && p.wmax != 0 && !std::isnan(p.wmax))
					name = substring(name, 0, p.wmax);
				if (name == value)
					v = k;
			}
		} else if (p.component == 'P') {
			if (value == u"am" || value == u"AM")
				v = 0;
			else if (value == u"pm" || value == u"PM")
				v = 1;
		}
		comps[p.component] = v;
	}
	if (comps.empty())
		return std::nullopt;
	auto truthy = [&](char16_t c) {
		auto it = comps.find(c);
		return it != comps.end() && it->second && *it->second != 0 && !std::isnan(*it->second);
	};
	auto mask_of = [&](const char *letters) {
		int mask = 0;
		for (const char *l = letters; *l; l++)
			mask = (mask << 1) + (truthy(static_cast<char16_t>(*l)) ? 1 : 0);
		return mask;
	};
	auto is_type = [](int type, int mask) { return !(~type & mask) && (type & mask); };
	int dmask = mask_of("YXMxWwdD");
	bool dateA = is_type(161, dmask);
	bool dateB = !dateA && is_type(130, dmask);
	bool dateC = is_type(84, dmask);
	bool dateD = !dateC && is_type(72, dmask);
	int tmask = mask_of("PHhmsf");
	bool timeA = is_type(23, tmask);
	bool timeB = !timeA && is_type(47, tmask);
	std::string order = std::string(dateB ? "YD" : dateC ? "XxwF" : dateD ? "XWF" : "YMD") + (timeB ? "Phmsf" : "Hmsf");
	Civil now = civil(static_cast<double>(now_ms));
	bool start_specified = false, end_specified = false;
	auto get = [&](char16_t c) -> double {
		auto it = comps.find(c);
		return it != comps.end() && it->second ? *it->second : NAN;
	};
	auto defined = [&](char16_t c) {
		auto it = comps.find(c);
		return it != comps.end() && it->second.has_value();
	};
	for (char c : order) {
		char16_t part = static_cast<char16_t>(c);
		if (!defined(part)) {
			if (start_specified) {
				comps[part] = (c == 'M' || c == 'D' || c == 'd') ? 1 : 0;
				end_specified = true;
			} else {
				Fragment f = fragment(now, part);
				// $now's am/pm is a string: never the 1 of "pm" below
				comps[part] = f.k == Fragment::Num ? f.n : -1;
			}
		} else {
			start_specified = true;
			if (end_specified)
				fail("D3136", "The date/time picture string is missing specifiers required to parse the timestamp");
		}
	}
	double M = get('M');
	M = M > 0 ? M - 1 : 0;
	double D = get('D');
	if (dateB) {
		double derived = date_utc(get('Y'), 0) + (get('d') - 1) * kDay;
		if (std::isfinite(derived) && std::fabs(derived) <= 8.64e15) {
			Civil dc = civil(derived);
			M = dc.month - 1;
			D = dc.day;
		} else {
			M = D = NAN;
		}
	}
	if (dateC || dateD)
		fail("D3136", "The date/time picture string is missing specifiers required to parse the timestamp");
	double H = get('H');
	if (timeB) {
		double h = get('h');
		H = h == 12 ? 0 : h;
		if (get('P') == 1)
			H += 12;
	}
	double millis = date_utc(get('Y'), M, D, H, get('m'), get('s'), get('f'));
	double zone = truthy('Z') ? get('Z') : get('z');
	if (truthy('Z') || truthy('z'))
		millis -= zone * 60 * 1000;
	return millis;
}

Value f_format_integer(Context &, Args &a, const Value &) {
	if (a[0].undef())
		return Value();
	const std::string &picture = a[1].str();
	check_picture(picture);
	IntFormat f = analyse_integer(to16(picture));
	return answer(format_int(std::floor(a[0].n), f));
}

Value f_parse_integer(Context &, Args &a, const Value &) {
	if (a[0].undef())
		return Value();
	const std::string &picture = a[1].str();
	check_picture(picture);
	IntFormat f = analyse_integer(to16(picture));
	if (f.primary == kSequence)
		sequence_unsupported(f.token);
	check_regex_subject(a[0].str());
	double v = parse_int_format(to16(a[0].str()), f);
	return std::isnan(v) ? Value::null() : Value::number(v);
}

// ------------------------------------------------------------------ $formatNumber

namespace {

struct NumberParts {
	u16 prefix, suffix, active, mantissa, integer, fraction, picture;
	bool has_exponent = false;
	u16 exponent;
};

struct NumberPicture {
	std::vector<double> int_groups, frac_groups;
	double regular = 0;
	double min_int = 0, scaling = 0, min_frac = 0, max_frac = 0, min_exp = 0;
	u16 prefix, suffix, picture;
};

[[noreturn]] void number_error(const char *code) {
	static const std::map<std::string, const char *> messages = {
		{"D3081", "The sub-picture must not contain more than one instance of the 'decimal-separator' character"},
		{"D3082", "The sub-picture must not contain more than one instance of the 'percent' character"},
		{"D3083", "The sub-picture must not contain more than one instance of the 'per-mille' character"},
		{"D3084", "The sub-picture must not contain both a 'percent' and a 'per-mille' character"},
		{"D3085", "The mantissa part of a sub-picture must contain at least one character that is either an "
				  "'optional digit character' or a member of the 'decimal digit family'"},
		{"D3086", "The sub-picture must not contain a passive character that is preceded by an active character "
				  "and that is followed by another active character"},
		{"D3087", "The sub-picture must not contain a 'grouping-separator' character that appears adjacent to a "
				  "'decimal-separator' character"},
		{"D3088", "The sub-picture must not contain a 'grouping-separator' at the end of the integer part"},
		{"D3089", "The sub-picture must not contain two adjacent instances of the 'grouping-separator' character"},
		{"D3090", "The integer part of the sub-picture must not contain a member of the 'decimal digit family' "
				  "that is followed by an instance of the 'optional digit character'"},
		{"D3091", "The fractional part of the sub-picture must not contain an instance of the 'optional digit "
				  "character' that is followed by a member of the 'decimal digit family'"},
		{"D3092", "A sub-picture that contains a 'percent' or 'per-mille' character must not contain a character "
				  "treated as an 'exponent-separator'"},
		{"D3093", "The exponent part of the sub-picture must comprise only of one or more characters that are "
				  "members of the 'decimal digit family'"},
	};
	fail(code, messages.at(code));
}

// JavaScript's Number#toFixed of a non-negative number.
std::string to_fixed(double v, double dp) {
	if (dp > 100)
		fail("D3137", "$formatNumber: more than 100 fraction digits");
	if (v >= 1e21)
		return format_number(v);
	char buf[512];
	std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(dp), v);
	return buf;
}

}  // namespace

Value f_format_number(Context &, Args &a, const Value &) {
	if (a[0].undef())
		return Value();
	const double value = a[0].n;
	const std::string &picture8 = a[1].str();
	check_picture(picture8);
	std::map<std::string, u16> props = {
		{"decimal-separator", u"."}, {"grouping-separator", u","}, {"exponent-separator", u"e"},
		{"infinity", u"Infinity"},	 {"minus-sign", u"-"},		   {"NaN", u"NaN"},
		{"percent", u"%"},			 {"per-mille", u"\u2030"},	   {"zero-digit", u"0"},
		{"digit", u"#"},			 {"pattern-separator", u";"}};
	if (a.size() > 2 && a[2].k == Value::Obj) {
		for (auto &[k, v] : a[2].o->entries) {
			if (v.k != Value::Str)
				fail("D3137", "$formatNumber: the option " + k + " must be a string");
			if (v.str().size() > lim::JSONATA_PICTURE)
				fail("L0001", "$formatNumber: the option " + k + " is longer than " +
								  std::to_string(lim::JSONATA_PICTURE) + " characters" +
								  lim::named("jsonata_picture"));
			props[k] = to16(v.str());
		}
	}
	const u16 dec = props["decimal-separator"], grp = props["grouping-separator"],
			  exp = props["exponent-separator"], digit = props["digit"], patsep = props["pattern-separator"],
			  percent = props["percent"], permille = props["per-mille"], minus = props["minus-sign"],
			  zero = props["zero-digit"];
	if (zero.empty())
		fail("D3137", "$formatNumber: the option zero-digit must be a character");
	std::vector<u16> family;
	for (int i = 0; i < 10; i++)
		family.emplace_back(1, static_cast<char16_t>(zero[0] + i));
	auto in_family = [&](const u16 &c) { return std::find(family.begin(), family.end(), c) != family.end(); };
	auto active = [&](const u16 &c) { return in_family(c) || c == dec || c == exp || c == grp || c == digit || c == patsep; };
	auto count = [&](const u16 &s, bool with_digit) {
		double n = 0;
		for (char16_t ch : s) {
			u16 c(1, ch);
			if (in_family(c) || (with_digit && c == digit))
				n++;
		}
		return n;
	};
	const u16 picture = to16(picture8);
	std::vector<u16> subs = split(picture, patsep);
	if (subs.size() > 2)
		fail("D3080", "The picture string must only contain a maximum of two sub-pictures");

	std::vector<NumberParts> parts;
	for (const u16 &sub : subs) {
		NumberParts p;
		p.picture = sub;
		for (size_t i = 0; i < sub.size(); i++) {
			u16 c(1, sub[i]);
			if (active(c) && c != exp) {
				p.prefix = sub.substr(0, i);
				break;
			}
		}
		for (size_t i = sub.size(); i-- > 0;) {
			u16 c(1, sub[i]);
			if (active(c) && c != exp) {
				p.suffix = sub.substr(i + 1);
				break;
			}
		}
		double n = static_cast<double>(sub.size());
		p.active = substring(sub, static_cast<double>(p.prefix.size()), n - static_cast<double>(p.suffix.size()));
		double epos = index_of(sub, exp, static_cast<double>(p.prefix.size()));
		if (epos == -1 || epos > n - static_cast<double>(p.suffix.size())) {
			p.mantissa = p.active;
		} else {
			p.mantissa = substring(p.active, 0, epos);
			p.exponent = substring(p.active, epos + 1);
			p.has_exponent = true;
		}
		double dpos = index_of(p.mantissa, dec);
		if (dpos == -1) {
			p.integer = p.mantissa;
			p.fraction = p.suffix;
		} else {
			p.integer = substring(p.mantissa, 0, dpos);
			p.fraction = substring(p.mantissa, dpos + 1);
		}
		parts.push_back(std::move(p));
	}
	for (const NumberParts &p : parts) {
		const u16 &sub = p.picture;
		const char *error = nullptr;
		double dpos = index_of(sub, dec);
		if (dpos != last_index_of(sub, dec))
			error = "D3081";
		if (index_of(sub, percent) != last_index_of(sub, percent))
			error = "D3082";
		if (index_of(sub, permille) != last_index_of(sub, permille))
			error = "D3083";
		if (index_of(sub, percent) != -1 && index_of(sub, permille) != -1)
			error = "D3084";
		if (count(p.mantissa, true) == 0)
			error = "D3085";
		for (char16_t ch : p.active)
			if (!active(u16(1, ch)))
				error = "D3086";
		if (dpos != -1) {
			if (char_at(sub, dpos - 1) == grp || char_at(sub, dpos + 1) == grp)
				error = "D3087";
		} else if (char_at(p.integer, static_cast<double>(p.integer.size()) - 1) == grp) {
			error = "D3088";
		}
		if (index_of(sub, grp + grp) != -1)
			error = "D3089";
		double opt = index_of(p.integer, digit);
		if (opt != -1 && count(substring(p.integer, 0, opt), false) > 0)
			error = "D3090";
		opt = last_index_of(p.fraction, digit);
		if (opt != -1 && count(substring(p.fraction, opt), false) > 0)
			error = "D3091";
		if (p.has_exponent && !p.exponent.empty() && (index_of(sub, percent) != -1 || index_of(sub, permille) != -1))
			error = "D3092";
		if (p.has_exponent && (p.exponent.empty() || count(p.exponent, false) != static_cast<double>(p.exponent.size())))
			error = "D3093";
		if (error)
			number_error(error);
	}
	std::vector<NumberPicture> pics;
	for (const NumberParts &p : parts) {
		NumberPicture v;
		auto positions = [&](const u16 &part, bool to_left) {
			std::vector<double> out;
			double gp = index_of(part, grp);
			while (gp != -1) {
				lim::count_work(1);
				out.push_back(count(to_left ? substring(part, 0, gp) : substring(part, gp), true));
				gp = index_of(p.integer, grp, gp + 1);
			}
			return out;
		};
		v.int_groups = positions(p.integer, false);
		std::vector<Sep> seps;
		for (double g : v.int_groups)
			seps.push_back({g, u16()});
		v.regular = regular_interval(seps, false);
		v.frac_groups = positions(p.fraction, true);
		v.min_int = count(p.integer, false);
		v.scaling = v.min_int;
		v.min_frac = count(p.fraction, false);
		v.max_frac = count(p.fraction, true);
		if (v.min_int == 0 && v.max_frac == 0) {
			if (p.has_exponent)
				v.min_frac = v.max_frac = 1;
			else
				v.min_int = 1;
		}
		if (p.has_exponent && v.min_int == 0 && index_of(p.integer, digit) != -1)
			v.min_int = 1;
		if (v.min_int == 0 && v.min_frac == 0)
			v.min_frac = 1;
		v.min_exp = p.has_exponent ? count(p.exponent, false) : 0;
		v.prefix = p.prefix;
		v.suffix = p.suffix;
		v.picture = p.picture;
		pics.push_back(std::move(v));
	}
	if (pics.size() == 1) {
		pics.push_back(pics[0]);
		pics[1].prefix = minus + pics[1].prefix;
	}
	const NumberPicture &pic = value >= 0 ? pics[0] : pics[1];
	double adjusted = value;
	if (index_of(pic.picture, percent) != -1)
		adjusted = value * 100;
	else if (index_of(pic.picture, permille) != -1)
		adjusted = value * 1000;
	double mantissa = adjusted;
	bool has_exp = pic.min_exp != 0;
	double exponent = 0;
	if (has_exp && mantissa != 0 && std::isfinite(mantissa)) {
		double maxm = std::pow(10, pic.scaling), minm = std::pow(10, pic.scaling - 1);
		while (std::fabs(mantissa) < minm) {
			lim::count_work(1);
			mantissa *= 10;
			exponent -= 1;
		}
		while (std::fabs(mantissa) > maxm) {
			lim::count_work(1);
			mantissa /= 10;
			exponent += 1;
		}
	}
	double rounded = round_half_even(mantissa, static_cast<int>(pic.max_frac));
	auto make_string = [&](double v, double dp) {
		u16 s = to16(to_fixed(std::fabs(v), dp));
		if (zero != u"0")
			for (auto &c : s)
				if (c >= '0' && c <= '9')
					c = family[c - '0'][0];
		return s;
	};
	u16 s = make_string(rounded, pic.max_frac);
	size_t dot = s.find(u'.');
	if (dot == npos)
		s += dec;
	else
		s = s.substr(0, dot) + dec + s.substr(dot + 1);
	while (!s.empty() && char_at(s, 0) == zero)
		s = s.substr(1);
	while (!s.empty() && char_at(s, static_cast<double>(s.size()) - 1) == zero)
		s.pop_back();
	double dpos = index_of(s, dec);
	double pad_left = pic.min_int - dpos;
	double pad_right = pic.min_frac - (static_cast<double>(s.size()) - dpos - 1);
	auto zeros = [&](double n) {
		u16 z;
		for (double i = 0; i < n; i++)
			z += zero;
		return z;
	};
	s = (pad_left > 0 ? zeros(pad_left) : u16()) + s;
	s = s + (pad_right > 0 ? zeros(pad_right) : u16());
	dpos = index_of(s, dec);
	if (pic.regular > 0) {
		double groups = std::floor((dpos - 1) / pic.regular);
		for (double g = 1; g <= groups; g++) {
			lim::count_work(1);
			s = slice(s, 0, dpos - g * pic.regular) + grp + slice(s, dpos - g * pic.regular);
		}
	} else {
		for (double pos : pic.int_groups) {
			s = slice(s, 0, dpos - pos) + grp + slice(s, dpos - pos);
			dpos++;
		}
	}
	dpos = index_of(s, dec);
	for (double pos : pic.frac_groups)
		s = slice(s, 0, pos + dpos + 1) + grp + slice(s, pos + dpos + 1);
	dpos = index_of(s, dec);
	if (index_of(pic.picture, dec) == -1 || dpos == static_cast<double>(s.size()) - 1)
		s = substring(s, 0, static_cast<double>(s.size()) - 1);
	if (has_exp) {
		u16 se = make_string(exponent, 0);
		double pad = pic.min_exp - static_cast<double>(se.size());
		if (pad > 0)
			se = zeros(pad) + se;
		s = s + exp + (exponent < 0 ? minus : u16()) + se;
	}
	return answer(pic.prefix + s + pic.suffix);
}

}  // namespace genroc::jsonata::detail
