// engine.cpp — what every operation shares: the statements' table, rows,
// the errors by id, the identifier check, timestamps.
#include <cerrno>
#include <cstdlib>

#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

const StatementText kStatements[] = {
#define GENROC_STMT(id, pg, lite) {#id, pg, lite},
#include "statements.def"
#undef GENROC_STMT
};

struct MessageRow {
	const char *sqlstate;
	const char *text;
};

const MessageRow kMessages[] = {
#define GENROC_MESSAGE(id, code, text) {code, text},
#include "messages.def"
#undef GENROC_MESSAGE
};

[[noreturn]] void bad_column(int col, const char *why) {
	throw Error("XX000", "engine: result column " + std::to_string(col) + " " + why);
}

}  // namespace

const StatementText &statement_text(Stmt s) { return kStatements[static_cast<int>(s)]; }

int statement_count() { return static_cast<int>(sizeof kStatements / sizeof kStatements[0]); }

Row::Row(std::vector<std::optional<std::string>> cells) {
	cells_.resize(cells.size());
	for (size_t k = 0; k < cells.size(); k++)
		if (cells[k]) cells_[k] = Cell::text(std::move(*cells[k]));
}

const Row::Cell &Row::cell(int col) const {
	if (col < 0 || col >= size()) bad_column(col, "does not exist");
	return cells_[col];
}

const std::string &Row::text(int col) const {
	const Cell &c = cell(col);
	if (c.kind == Cell::Kind::null) bad_column(col, "is NULL");
	if (!c.has_text) {
		Cell &m = cells_[col];
		m.s = c.kind == Cell::Kind::boolean ? (c.i ? "t" : "f") : std::to_string(c.i);
		m.has_text = true;
	}
	return c.s;
}

int64_t Row::i64(int col) const {
	const Cell &c = cell(col);
	if (c.kind == Cell::Kind::integer) return c.i;
	const std::string &t = text(col);
	errno = 0;
	char *end = nullptr;
	long long v = std::strtoll(t.c_str(), &end, 10);
	if (errno != 0 || end == t.c_str() || *end != '\0') bad_column(col, "is not an integer");
	return v;
}

double Row::f64(int col) const {
	const Cell &c = cell(col);
	if (c.kind == Cell::Kind::integer) return static_cast<double>(c.i);
	const std::string &t = text(col);
	char *end = nullptr;
	double v = std::strtod(t.c_str(), &end);
	if (end == t.c_str() || *end != '\0') bad_column(col, "is not a number");
	return v;
}

bool Row::boolean(int col) const {
	const Cell &c = cell(col);
	if (c.kind == Cell::Kind::boolean || (c.kind == Cell::Kind::integer && (c.i == 0 || c.i == 1))) return c.i != 0;
	const std::string &t = text(col);
	if (t == "t" || t == "true" || t == "1") return true;
	if (t == "f" || t == "false" || t == "0") return false;
	bad_column(col, "is not a boolean");
}

const char *sqlstate_of(Msg m) { return kMessages[static_cast<int>(m)].sqlstate; }

std::string message_text(Msg m, std::initializer_list<std::string> args) {
	const std::string format = kMessages[static_cast<int>(m)].text;
	std::string out;
	auto arg = args.begin();
	for (size_t i = 0; i < format.size(); i++) {
		if (format[i] == '{' && i + 1 < format.size() && format[i + 1] == '}' && arg != args.end()) {
			out += *arg++;
			i++;
		} else {
			out += format[i];
		}
	}
	return out;
}

void raise(Msg m, std::initializer_list<std::string> args, std::string detail, std::string hint) {
	throw Error(sqlstate_of(m), message_text(m, args), std::move(detail), std::move(hint));
}

void check_name(const std::string &value, const std::string &field, size_t max) {
	size_t chars = 0;
	bool control = false;
	for (size_t i = 0; i < value.size(); i++) {
		const auto c = static_cast<unsigned char>(value[i]);
		if ((c & 0xC0) != 0x80) chars++;
		if (c < 0x20 || c == 0x7F) control = true;
		// U+0080-U+009F: C2 80 .. C2 9F
		if (c == 0xC2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) >= 0x80 &&
			static_cast<unsigned char>(value[i + 1]) <= 0x9F)
			control = true;
	}
	if (chars > max) raise(Msg::NAME_TOO_LONG, {field, std::to_string(max), std::to_string(chars)});
	if (control) raise(Msg::NAME_CONTROL, {field});
}

json parse_json(const std::string &text, const std::string &what) {
	try {
		return json::parse(text);
	} catch (const json::out_of_range &) {
		raise(Msg::JSON_NUMBER_RANGE, {what});
	} catch (const json::parse_error &) {
		raise(Msg::JSON_SYNTAX);
	}
}

std::string iso_us(int64_t us) {
	// floored to the millisecond (to_char's 'MS' truncates the same way)
	int64_t ms = us / 1000;
	if (us % 1000 < 0) ms--;
	return asl::format_time(ms);
}

}  // namespace genroc::engine
