// json_guard.cpp — the depth and number check on JSON text (json_guard.hpp).
#include "json_guard.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "asl.hpp"

namespace genroc {

namespace {

// One open container on the way down: an object's current key, or an
// array's current index.
struct Frame {
	bool object = false;
	bool expect_key = false;  // an object: the next string is a key
	std::string key;
	size_t index = 0;
};

// "input.x[3]" for the innermost value; "the body" at the top.
std::string path_of(const std::vector<Frame> &stack, size_t levels) {
	std::string path;
	for (size_t i = 0; i < stack.size() && i < levels; ++i) {
		const Frame &f = stack[i];
		if (f.object) {
			if (!path.empty()) path += '.';
			path += f.key;
		} else {
			path += "[" + std::to_string(f.index) + "]";
		}
	}
	return path;
}

}  // namespace

std::string shown(std::string_view text, size_t max) {
	static const char hex[] = "0123456789ABCDEF";
	std::string out;
	for (size_t i = 0; i < text.size(); ++i) {
		if (out.size() >= max) {
			out += "...";
			break;
		}
		auto c = static_cast<unsigned char>(text[i]);
		if (c < 0x20 || c == 0x7f) {
			out += '%';
			out += hex[c >> 4];
			out += hex[c & 15];
		} else {
			out += static_cast<char>(c);
		}
	}
	return out;
}

void check_json_text(std::string_view text, const std::string &what, size_t max_depth) {
	std::vector<Frame> stack;
	const size_t n = text.size();
	size_t i = 0;
	while (i < n) {
		const char c = text[i];
		if (c == '"') {
			size_t j = i + 1;
			while (j < n && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
			if (!stack.empty() && stack.back().object && stack.back().expect_key) {
				stack.back().key = shown(text.substr(i + 1, std::min(j, n) - i - 1), 64);
				stack.back().expect_key = false;
			}
			i = j + 1;
		} else if (c == '{' || c == '[') {
			if (stack.size() >= max_depth) {
				std::string where = stack.empty() || path_of(stack, 1).empty()
										? std::string("the value")
										: "field \"" + path_of(stack, 1) + "\"";
				throw Error("54000", what + ": " + where + " nests deeper than the limit of " +
										 std::to_string(max_depth) + " levels");
			}
			Frame f;
			f.object = c == '{';
			f.expect_key = f.object;
			stack.push_back(std::move(f));
			++i;
		} else if (c == '}' || c == ']') {
			if (!stack.empty()) stack.pop_back();
			++i;
		} else if (c == ',') {
			if (!stack.empty()) {
				if (stack.back().object)
					stack.back().expect_key = true;
				else
					++stack.back().index;
			}
			++i;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			size_t j = i;
			while (j < n && (text[j] == '-' || text[j] == '+' || text[j] == '.' || text[j] == 'e' ||
							 text[j] == 'E' || (text[j] >= '0' && text[j] <= '9')))
				++j;
			// What the parser does with the token: a double, unless it fits
			// a 64-bit integer.  Infinite is what nlohmann refuses (its
			// "number overflow"); underflow to 0 it accepts, and so do we.
			const std::string token(text.substr(i, j - i));
			errno = 0;
			const double v = std::strtod(token.c_str(), nullptr);
			if (std::isinf(v)) {
				std::string field = path_of(stack, stack.size());
				throw Error("22003", what + ": " + (field.empty() ? std::string("the value") : "field \"" + field + "\"") +
										 " holds the number " + shown(token, 40) +
										 ", beyond the range of a double (about 1.8e308)");
			}
			i = j;
		} else {
			++i;
		}
	}
}

nlohmann::json parse_json_text(std::string_view text, const std::string &what) {
	check_json_text(text, what);
	try {
		return nlohmann::json::parse(text);
	} catch (const nlohmann::json::exception &e) {
		std::string why = e.what();
		auto close = why.find("] ");
		if (close != std::string::npos) why = why.substr(close + 2);
		throw Error("22P02", what + " is not valid JSON: " + shown(why));
	}
}

std::string read_text_file(const std::string &path) {
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot read it: " + std::strerror(errno));
	if (S_ISDIR(st.st_mode)) throw std::runtime_error(path + ": is a directory, not a file");
	std::ifstream in(path, std::ios::binary);
	if (!in) throw std::runtime_error(path + ": cannot read it: " + std::strerror(errno));
	std::stringstream buf;
	buf << in.rdbuf();
	if (in.bad()) throw std::runtime_error(path + ": cannot read it");
	return buf.str();
}

std::string json_argument_text(const std::string &arg, const std::string &flag) {
	if (arg == "-") {
		std::stringstream buf;
		buf << std::cin.rdbuf();
		if (std::cin.bad()) throw std::runtime_error(flag + " -: cannot read standard input");
		return buf.str();
	}
	if (!arg.empty() && arg[0] == '@') {
		if (arg.size() == 1) throw std::runtime_error(flag + " @: give a file name after the @");
		try {
			return read_text_file(arg.substr(1));
		} catch (const std::exception &e) {
			throw std::runtime_error(flag + " " + e.what());
		}
	}
	return arg;
}

}  // namespace genroc
