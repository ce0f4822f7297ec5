// port.hpp — how the engine reaches its tables: statements by id, their
// parameters, their rows, a savepoint, and the few things only the store's
// host knows (its clock, its canonical JSON).  One adapter per store:
// PostgreSQL (extension/engine_port.hpp over SPI, extension/engine_spi.c) and SQLite
// (store/sqlite/sqlite_port.cpp over sqlite3 statements).  The engine's
// operations (engine/engine.hpp) are written once against this class.
//
// Glossary
//   statement  a row of statements.def: an id and its text per dialect;
//              prepared once per backend / per connection by the adapter
//   param      a value bound to $n / ?n: null, int64, double, text, bool or
//              JSON text (jsonb in PostgreSQL, TEXT in SQLite); a null keeps
//              its kind, which fixes the parameter's type in PostgreSQL's
//              plan (the first call's kinds are the statement's types).
//              PostgreSQL also takes arrays (bigint[], text[], jsonb[] and
//              tid[]: Param::ints, texts, jsons, tids), which a set-wise
//              statement unnests; their elements are viewed, not copied,
//              and live as long as the call.  Only statements with no
//              SQLite text take them, run where dialect() is postgres
//   native     a store's own value (Row::native: PostgreSQL's Datum of a
//              jsonb or a tid), handed back to the same store as it is
//   row        a result row, its columns read by index as text, int64,
//              double or bool
//   savepoint  a scope whose failure is undone alone, the rest of the
//              transaction going on (PL/pgSQL's EXCEPTION block)
//
// Errors: every failure is a genroc::Error (engine::Error) with the
// SQLSTATE, message, detail and hint the store gave; the PostgreSQL entry
// points turn it back into ereport with the same fields.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "asl.hpp"

namespace genroc::engine {

using Error = genroc::Error;

enum class Stmt : int {
#define GENROC_STMT(id, pg, lite) id,
#include "statements.def"
#undef GENROC_STMT
};

enum class Dialect { postgres, sqlite };

struct StatementText {
	const char *id;
	const char *postgres;  // nullptr: nothing to do in that dialect
	const char *sqlite;
};
// The row of statements.def for a statement.
const StatementText &statement_text(Stmt s);
// How many statements there are (adapters size their caches by it).
int statement_count();

// A JSON value passed as its text.
struct JsonText {
	std::string text;
};

class Param {
  public:
	enum class Kind : uint8_t { i64, f64, text, boolean, json, i64_array, text_array, json_array, tid_array };

	Param(std::nullptr_t) : kind_(Kind::text), null_(true) {}
	Param(int64_t v) : kind_(Kind::i64), i_(v) {}
	Param(int v) : kind_(Kind::i64), i_(v) {}
	Param(double v) : kind_(Kind::f64), d_(v) {}
	Param(bool v) : kind_(Kind::boolean), i_(v ? 1 : 0) {}
	Param(std::string v) : kind_(Kind::text), s_(std::move(v)) {}
	Param(const char *v) : kind_(Kind::text), s_(v) {}
	Param(JsonText v) : kind_(Kind::json), s_(std::move(v.text)) {}
	template <typename T>
	Param(const std::optional<T> &v) : Param(v ? Param(*v) : Param::null(Param(T{}).kind())) {}

	// A null of the given kind.
	static Param null(Kind k) {
		Param p(nullptr);
		p.kind_ = k;
		return p;
	}
	// Arrays (PostgreSQL only), their elements viewed for the call.  jsons:
	// element k is natives[k] when that is not null (a store's own value),
	// else texts[k]; tids: natives only (a row version a statement read).
	static Param ints(const std::vector<int64_t> &v) {
		Param p = null(Kind::i64_array);
		p.null_ = false;
		p.ints_ = &v;
		return p;
	}
	static Param texts(const std::vector<std::string> &v) {
		Param p = null(Kind::text_array);
		p.null_ = false;
		p.texts_ = &v;
		return p;
	}
	static Param jsons(const std::vector<std::string> &texts, const std::vector<const void *> &natives) {
		Param p = null(Kind::json_array);
		p.null_ = false;
		p.texts_ = &texts;
		p.natives_ = &natives;
		return p;
	}
	static Param tids(const std::vector<const void *> &natives) {
		Param p = null(Kind::tid_array);
		p.null_ = false;
		p.natives_ = &natives;
		return p;
	}

	Kind kind() const { return kind_; }
	bool is_null() const { return null_; }
	int64_t i64() const { return i_; }
	double f64() const { return d_; }
	bool boolean() const { return i_ != 0; }
	const std::string &text() const { return s_; }	// text and json
	// an array's elements (null when the kind has none of them)
	const std::vector<int64_t> *ints() const { return ints_; }
	const std::vector<std::string> *texts() const { return texts_; }
	const std::vector<const void *> *natives() const { return natives_; }
	bool is_array() const { return kind_ >= Kind::i64_array; }

  private:
	Kind kind_;
	bool null_ = false;
	int64_t i_ = 0;
	double d_ = 0;
	std::string s_;
	const std::vector<int64_t> *ints_ = nullptr;
	const std::vector<std::string> *texts_ = nullptr;
	const std::vector<const void *> *natives_ = nullptr;
};

using Params = std::initializer_list<Param>;

// One result row, its columns read by index (NULL kept).  A column comes
// as the store gave it: text, or an integer or a boolean the store had as
// one (no text round trip; its text is made when asked: decimal, "t" / "f"
// as PostgreSQL writes a bool).  A store may also hand over its own value
// of a column (native(): PostgreSQL's jsonb Datum, for a result its entry
// point passes on as it is).
class Row {
  public:
	struct Cell {
		enum class Kind : uint8_t { null, text, integer, boolean };
		Kind kind = Kind::null;
		bool has_text = false;	// s holds the column's text
		int64_t i = 0;			// integer, boolean (0 or 1)
		std::string s;
		const void *native = nullptr;

		static Cell integer(int64_t v) {
			Cell c;
			c.kind = Kind::integer;
			c.i = v;
			return c;
		}
		static Cell boolean(bool v) {
			Cell c = integer(v ? 1 : 0);
			c.kind = Kind::boolean;
			return c;
		}
		static Cell text(std::string s) {
			Cell c;
			c.kind = Kind::text;
			c.has_text = true;
			c.s = std::move(s);
			return c;
		}
	};
	explicit Row(std::vector<std::optional<std::string>> cells);
	explicit Row(std::vector<Cell> cells) : cells_(std::move(cells)) {}
	int size() const { return static_cast<int>(cells_.size()); }
	bool is_null(int col) const { return cell(col).kind == Cell::Kind::null; }
	// A NULL column is an error for these four (read is_null first).
	const std::string &text(int col) const;
	int64_t i64(int col) const;
	double f64(int col) const;
	bool boolean(int col) const;  // t/true/1 or f/false/0
	std::optional<std::string> otext(int col) const {
		return is_null(col) ? std::nullopt : std::optional<std::string>(text(col));
	}
	std::optional<int64_t> oi64(int col) const {
		return is_null(col) ? std::nullopt : std::optional<int64_t>(i64(col));
	}
	// The store's own value of the column, or nullptr (see above).
	const void *native(int col) const { return cell(col).native; }

  private:
	const Cell &cell(int col) const;
	mutable std::vector<Cell> cells_;  // mutable: text made when asked
};

using Rows = std::vector<Row>;

class Port {
  public:
	virtual ~Port() = default;
	virtual Dialect dialect() const = 0;

	// Runs a statement and returns its rows.
	virtual Rows query(Stmt s, Params params) = 0;
	// Runs a statement whose rows are not wanted; the rows it changed.
	virtual int64_t exec(Stmt s, Params params) = 0;

	// The operation's clock: genroc.now() (the test clock when set, else the
	// transaction's start) in PostgreSQL, the store's clock in SQLite; ms.
	virtual int64_t now_ms() = 0;
	// The store's canonical text of a JSON text (jsonb's output in
	// PostgreSQL, sorted keys in SQLite): the same content, the same text.
	// 22P02 when it is not JSON; 54000 past the depth limit.
	virtual std::string canonical_json(const std::string &text) = 0;
	// The role the operation acts for (PostgreSQL: genroc._caller(), the
	// session's current role; an oid), nullopt in a store without roles.
	virtual std::optional<int64_t> caller_role() { return std::nullopt; }
	// The JSON text of a store's own JSON value (see native above; only a
	// store that hands such values over has any).
	virtual std::string native_json_text(const void *native) {
		(void)native;
		throw Error("XX000", "engine: this store has no values of its own");
	}

	// A savepoint for the scope of the object: release() keeps what ran in
	// it; leaving the scope otherwise (an exception) rolls it back, and the
	// transaction goes on.  A caller that catches the error inside the scope
	// calls rollback() before it runs another statement.
	class Savepoint {
	  public:
		explicit Savepoint(Port &port) : port_(port) { port_.savepoint_begin(); }
		~Savepoint() {
			if (open_) port_.savepoint_rollback();
		}
		void release() {
			open_ = false;
			port_.savepoint_release();
		}
		void rollback() {
			if (open_) {
				open_ = false;
				port_.savepoint_rollback();
			}
		}
		Savepoint(const Savepoint &) = delete;
		Savepoint &operator=(const Savepoint &) = delete;

	  private:
		Port &port_;
		bool open_ = true;
	};

  protected:
	virtual void savepoint_begin() = 0;
	virtual void savepoint_release() = 0;
	virtual void savepoint_rollback() noexcept = 0;
};

}  // namespace genroc::engine
