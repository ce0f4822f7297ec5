// options.cpp — the option bags of the API (genroc._check_options,
// _int_option, _text_option, _duration), once for both stores; their
// messages show a value as the store shows JSON (jsonb's text in
// PostgreSQL).
#include <cmath>
#include <cstdio>

#include "admin.hpp"
#include "errors.hpp"
#include "limits.hpp"

namespace genroc::engine {

json parse_options(Port &port, const std::optional<std::string> &text, const std::string &what) {
	if (!text) return json::object();
	json j = json::parse(*text, nullptr, false);
	if (j.is_discarded()) raise(Msg::JSON_SYNTAX);
	limits::check_json_depth(j, what);	// its values show up in messages
	(void)port;
	return j;
}

std::string shown(Port &port, const json &value) {
	return port.canonical_json(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

void check_options(Port &port, const json &bag, const std::vector<std::string> &allowed, const std::string &what) {
	(void)port;
	if (!bag.is_object()) raise(Msg::OPTIONS_NOT_OBJECT, {what});
	// nlohmann's objects iterate by key, as the extension's ORDER BY k
	for (auto &[k, v] : bag.items()) {
		if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
		std::string known;
		for (auto &a : allowed) known += (known.empty() ? "" : ", ") + a;
		raise(Msg::OPTION_UNKNOWN, {k, what}, {}, message_text(Msg::OPTION_UNKNOWN_HINT, {known}));
	}
}

int int_option(Port &port, const json &v, const std::string &option) {
	if (v.is_number_unsigned()) {
		if (v.get<uint64_t>() <= INT32_MAX) return static_cast<int>(v.get<uint64_t>());
	} else if (v.is_number_integer()) {
		const auto n = v.get<int64_t>();
		if (n >= INT32_MIN && n <= INT32_MAX) return static_cast<int>(n);
	} else if (v.is_number_float()) {
		const double d = v.get<double>();
		if (d == std::trunc(d) && d >= INT32_MIN && d <= INT32_MAX) return static_cast<int>(d);
	}
	raise(Msg::OPTION_NOT_INTEGER, {option, shown(port, v)});
}

std::string text_option(Port &port, const json &v, const std::string &option) {
	if (!v.is_string() || v.get<std::string>().empty()) raise(Msg::OPTION_NOT_TEXT, {option, shown(port, v)});
	return v.get<std::string>();
}

namespace {

// "<digits>[.<digits>]<unit>" with unit ms, s, m, h or d.
bool split_duration(const std::string &s, std::string &number, std::string &unit) {
	size_t k = 0;
	while (k < s.size() && s[k] >= '0' && s[k] <= '9') k++;
	if (k == 0) return false;
	if (k < s.size() && s[k] == '.') {
		const size_t dot = ++k;
		while (k < s.size() && s[k] >= '0' && s[k] <= '9') k++;
		if (k == dot) return false;
	}
	number = s.substr(0, k);
	unit = s.substr(k);
	return unit == "ms" || unit == "s" || unit == "m" || unit == "h" || unit == "d";
}

// A number of seconds in decimal, no exponent (the interval input takes
// no exponent; below the microsecond it rounds).
std::string decimal(double seconds) {
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.9f", seconds);
	std::string s(buf);
	while (!s.empty() && s.back() == '0') s.pop_back();
	if (!s.empty() && s.back() == '.') s.pop_back();
	return s;
}

}  // namespace

Duration duration_option(Port &port, const json &v, const std::string &option) {
	double seconds;
	Duration out;
	if (v.is_number()) {
		seconds = v.get<double>();
		out.interval = decimal(seconds) + " seconds";
	} else if (v.is_string()) {
		std::string number, unit;
		if (!split_duration(v.get<std::string>(), number, unit))
			raise(Msg::DURATION_INVALID, {option, shown(port, v)}, {}, message_text(Msg::DURATION_INVALID_HINT, {}));
		const double n = std::strtod(number.c_str(), nullptr);
		const double factor = unit == "ms" ? 0.001 : unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 86400;
		seconds = n * factor;
		out.interval = number + (unit == "ms"  ? " milliseconds"
								 : unit == "s" ? " seconds"
								 : unit == "m" ? " minutes"
								 : unit == "h" ? " hours"
											   : " days");
	} else {
		raise(Msg::DURATION_INVALID, {option, shown(port, v)});
	}
	// below the interval's microsecond it would be stored as zero
	if (!(seconds >= 0.000001)) raise(Msg::DURATION_NOT_POSITIVE, {option});
	if (seconds > 3153600000.0) raise(Msg::DURATION_TOO_LONG, {option});  // 36500 days
	// milliseconds: a positive duration is never stored as 0
	out.ms = std::max<int64_t>(1, std::llround(seconds * 1000.0));
	return out;
}

}  // namespace genroc::engine
