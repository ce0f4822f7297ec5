// time.cpp — RFC 3339 timestamps <-> milliseconds since the epoch.
//
// Written out by hand (civil-date arithmetic) rather than with <ctime> or a
// time-zone library: the interpreter must not depend on the process's TZ,
// locale or tz database, and gmtime/timegm differ between platforms for
// dates before 1970 or after 2038.

#include <cstdint>
#include <cstdio>
#include <regex>
#include <string>

#include "asl.hpp"

namespace genroc::asl {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = static_cast<unsigned>(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The inverse of days_from_civil.
void civil_from_days(int64_t z, int64_t &y, unsigned &m, unsigned &d) {
	z += 719468;
	const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	const unsigned doe = static_cast<unsigned>(z - era * 146097);
	const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = static_cast<int64_t>(yoe) + era * 400;
	const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	const unsigned mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int64_t y, unsigned m) {
	static const unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

// Reads exactly `n` digits at `p`; false if any is not a digit.
bool digits(const std::string &s, size_t p, size_t n, int64_t &out) {
	if (p + n > s.size())
		return false;
	out = 0;
	for (size_t i = 0; i < n; i++) {
		const char c = s[p + i];
		if (c < '0' || c > '9')
			return false;
		out = out * 10 + (c - '0');
	}
	return true;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

std::string format_time(int64_t epoch_ms) {
	const int64_t days = floor_div(epoch_ms, 86400000);
	int64_t ms_of_day = epoch_ms - days * 86400000;
	int64_t y;
	unsigned m, d;
	civil_from_days(days, y, m, d);
	const int hh = static_cast<int>(ms_of_day / 3600000);
	ms_of_day %= 3600000;
	const int mi = static_cast<int>(ms_of_day / 60000);
	ms_of_day %= 60000;
	const int ss = static_cast<int>(ms_of_day / 1000);
	const int ms = static_cast<int>(ms_of_day % 1000);
	char buf[64];
	std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ",
				  static_cast<long long>(y), m, d, hh, mi, ss, ms);
	return buf;
}

// Accepts RFC 3339 date-times: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM),
// 'T' and 'Z' in either case.  Fractions beyond milliseconds are truncated
// (genroc keeps milliseconds everywhere).  A leap second (:60) is accepted,
// as RFC 3339 allows, and counts as the first second of the next minute.
bool parse_time(const std::string &s, int64_t &epoch_ms) {
	int64_t y, mo, d, h, mi, sec;
	if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, mo) ||
		s[7] != '-' || !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't') ||
		!digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
		!digits(s, 17, 2, sec))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, static_cast<unsigned>(mo)) || h > 23 ||
		mi > 59 || sec > 60)
		return false;
	size_t p = 19;
	int64_t frac_ms = 0;
	if (p < s.size() && s[p] == '.') {
		p++;
		const size_t first = p;
		int64_t scale = 100;
		while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
			frac_ms += (s[p] - '0') * scale;
			scale /= 10;
			p++;
		}
		if (p == first)
			return false;
	}
	int64_t offset_min = 0;
	if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
		p++;
	} else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
		const int sign = s[p] == '-' ? -1 : 1;
		int64_t oh, om;
		if (!digits(s, p + 1, 2, oh) || p + 3 >= s.size() || s[p + 3] != ':' ||
			!digits(s, p + 4, 2, om) || oh > 23 || om > 59)
			return false;
		offset_min = sign * (oh * 60 + om);
		p += 6;
	} else {
		return false;
	}
	if (p != s.size())
		return false;
	const int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
	epoch_ms = ((days * 24 + h) * 60 + mi - offset_min) * 60000 + sec * 1000 + frac_ms;
	return true;
}

// asl.hpp: the forms; a text of a timestamp's size only (std::regex recurses
// per character).
bool parse_timestamptz(const std::string &text, int64_t &ms) {
	static const std::regex re(
		R"(^\s*(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?\s*(?:([Zz])|([+-]\d{2})(?::?(\d{2}))?)?\s*$)");
	std::smatch m;
	// the longest form with spaces around is well under 64
	if (text.size() > 64 || !std::regex_match(text, m, re)) return false;
	std::string rfc = m[1].str() + "T" + (m[2].matched ? m[2].str() : "00:00") + (m[3].matched ? m[3].str() : ":00");
	if (m[5].matched)
		rfc += m[5].str() + ":" + (m[6].matched ? m[6].str() : "00");
	else
		rfc += "Z";
	return parse_time(rfc, ms);
}

}  // namespace genroc::asl
