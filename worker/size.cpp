// size.cpp — parse the flag sizes (see size.hpp).
#include "size.hpp"

#include <cctype>

namespace genroc {

std::optional<int64_t> parse_size(const std::string &text) {
	size_t i = 0;
	int64_t number = 0;
	while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
		number = number * 10 + (text[i] - '0');
		if (number > (int64_t{1} << 53)) return std::nullopt;
		++i;
	}
	if (i == 0) return std::nullopt;  // no digits: empty, a sign, a unit alone
	std::string unit;
	for (; i < text.size(); ++i) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
	int64_t scale;
	if (unit.empty() || unit == "B") scale = 1;
	else if (unit == "KB") scale = int64_t{1} << 10;
	else if (unit == "MB") scale = int64_t{1} << 20;
	else if (unit == "GB") scale = int64_t{1} << 30;
	else return std::nullopt;
	if (number > (int64_t{1} << 53) / scale) return std::nullopt;
	return number * scale;
}

}  // namespace genroc
