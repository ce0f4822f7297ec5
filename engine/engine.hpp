// engine.hpp — the API operations, written once over the port (port.hpp):
// the PostgreSQL entry points (extension/definitions.c through engine_port.cpp) and the
// SQLite store (store/sqlite/sqlite_store.cpp through sqlite_port.cpp) call
// these same functions.  Each names the SQL function it is.
//
// Arguments are what the SQL function receives (std::nullopt for NULL);
// each operation runs inside the caller's transaction and leaves commit and
// rollback to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// ---- definitions (extension/sql/30_definitions.sql) --------------------

struct Defined {
	std::string name;
	int version = 0;
	bool is_new = false;
};

// genroc.define(p_name, p_definition): validates an ASL definition (JSON
// text) and stores it as a new version of `name` unless a stored version
// has the same content (canonical text).  as_written: the text is the
// caller's own writing (genroc.define(text, text)), kept as the version's
// source; else the source is NULL (the caller passed jsonb).
Defined define(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &definition,
			   bool as_written);

struct DefinitionSummary {
	std::string name;
	int version = 0;
	int64_t created_us = 0;	 // microseconds since the Unix epoch
};

// genroc.list_definitions(): the newest version of every definition the
// caller may read, by name.
std::vector<DefinitionSummary> list_definitions(Port &port);

// genroc.get_definition(p_name, p_version): one stored definition as JSON
// text, {name, version, definition, source, created_at}, and deleted_at
// when the name or that version was deleted (genroc.undefine); RC002 when
// there is none.  The definition's stored text is copied in as it is (no parse).
std::string get_definition(Port &port, const std::optional<std::string> &name, std::optional<int64_t> version);

// ---- shared checks -----------------------------------------------------

// genroc._check_name: at most max characters (code points), no control
// character (U+0001-U+001F, U+007F-U+009F); 22023 naming the field.
void check_name(const std::string &value, const std::string &field, size_t max = 200);

// ISO-8601 UTC with milliseconds of microseconds since the epoch: every
// timestamp genroc writes as text (the interpreter's format).
std::string iso_us(int64_t us);

// A JSON text that reached the engine from a store or a caller (a jsonb
// argument, a column, a statement's answer), parsed.  PostgreSQL's jsonb
// keeps numbers of any size; one beyond a double's range is 54000 naming
// `what` (JSON_NUMBER_RANGE), not an exception of the JSON library; text that
// is not JSON is 22P02.  Every such parse in engine/ and its C calls goes
// through here.
json parse_json(const std::string &text, const std::string &what);

}  // namespace genroc::engine
