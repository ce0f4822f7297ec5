// duration.cpp — parse and print the flag durations (see duration.hpp).
#include "duration.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>

namespace genroc {

std::optional<Millis> parse_duration(const std::string &text) {
	if (text == "0") return Millis(0);
	if (text.empty()) return std::nullopt;
	// Sum in double milliseconds, then round: "1.5s" and "0.25h" are exact
	// enough, and overflow is caught before the cast.
	double total = 0;
	size_t i = 0;
	while (i < text.size()) {
		size_t start = i;
		bool dot = false;
		while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
								   (text[i] == '.' && !dot))) {
			if (text[i] == '.') dot = true;
			++i;
		}
		std::string number = text.substr(start, i - start);
		if (number.empty() || number == ".") return std::nullopt;
		size_t ustart = i;
		while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
		std::string unit = text.substr(ustart, i - ustart);
		double scale;
		if (unit == "ms") scale = 1;
		else if (unit == "s") scale = 1000;
		else if (unit == "m") scale = 60'000;
		else if (unit == "h") scale = 3'600'000;
		else if (unit == "d") scale = 86'400'000;
		else return std::nullopt;
		total += std::stod(number) * scale;
	}
	// About 292 million years of milliseconds fit in int64; refuse more.
	if (!std::isfinite(total) || total > 9.0e18) return std::nullopt;
	return Millis(static_cast<int64_t>(std::llround(total)));
}

std::string format_duration(Millis d) {
	int64_t ms = d.count();
	if (ms == 0) return "0s";
	std::string out;
	if (ms % 1000 != 0) return std::to_string(ms) + "ms";
	int64_t s = ms / 1000;
	const struct { int64_t size; const char *unit; } parts[] = {
		{86'400, "d"}, {3'600, "h"}, {60, "m"}, {1, "s"}};
	for (auto &p : parts) {
		if (s >= p.size) {
			out += std::to_string(s / p.size) + p.unit;
			s %= p.size;
		}
	}
	return out;
}

}  // namespace genroc
