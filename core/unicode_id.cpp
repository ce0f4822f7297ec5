// unicode_id.cpp — the identifier rule of ASL variable names.
//
// Unicode's identifier rule (UAX #31): a name starts with an XID_Start code
// point (a letter of any script, or "_") and goes on with XID_Continue code
// points (letters, combining marks, digits, "_").  ASL variable names use it.
#include <cstdint>
#include <string>

#include "internal.hpp"

namespace genroc::asl::detail {

namespace {

struct Range {
	uint32_t first, last;
};

// kStart and kContinue: scripts/gen-unicode-id.py writes them.
#include "unicode_id_tables.inc"

template <size_t N>
bool in(const Range (&rs)[N], uint32_t cp) {
	size_t lo = 0, hi = N;
	while (lo < hi) {
		const size_t mid = (lo + hi) / 2;
		if (cp < rs[mid].first)
			hi = mid;
		else if (cp > rs[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

// The code point at s[i] and its length in bytes; 0 bytes for bytes that
// are not UTF-8 (an overlong form, a surrogate, past U+10FFFF, cut short).
uint32_t decode(const std::string &s, size_t i, size_t &len) {
	const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned char c = b(i);
	len = 0;
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return len = 1, c;
	if ((c & 0xE0) == 0xC0)
		n = 2, cp = c & 0x1F;
	else if ((c & 0xF0) == 0xE0)
		n = 3, cp = c & 0x0F;
	else if ((c & 0xF8) == 0xF0)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (i + n > s.size())
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((b(i + k) & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (b(i + k) & 0x3F);
	}
	static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	len = n;
	return cp;
}

}  // namespace

size_t variable_name_at(const std::string &s, size_t pos, size_t *chars) {
	size_t i = pos, n = 0;
	while (i < s.size()) {
		size_t len;
		const uint32_t cp = decode(s, i, len);
		if (len == 0 || !(n == 0 ? in(kStart, cp) : in(kContinue, cp)))
			break;
		i += len;
		n++;
	}
	if (chars)
		*chars = n;
	return i - pos;
}

}  // namespace genroc::asl::detail
