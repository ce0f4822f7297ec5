// sqlite_port.hpp — the engine's port (engine/port.hpp) over one SQLite
// connection: the statements' SQLite texts, prepared once per connection
// (the Db's statement cache), inside the store's open transaction.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

#include "port.hpp"
#include "sqlite_db.hpp"

namespace genroc::sqlite {

// A store function an engine statement calls (the SQLite texts of
// statements.def name them; the store registers them on its connection):
// it keeps its error here, and the port throws it again, SQLSTATE and all,
// from the statement that called it (SQLite's own error has a message only).
void keep_host_error(std::exception_ptr e) noexcept;

class SqlitePort final : public engine::Port {
  public:
	// now_ms: the operation's clock (the store's, read once per transaction)
	SqlitePort(Db &db, int64_t now_ms) : db_(db), now_ms_(now_ms) {}

	engine::Dialect dialect() const override { return engine::Dialect::sqlite; }
	engine::Rows query(engine::Stmt s, engine::Params params) override;
	int64_t exec(engine::Stmt s, engine::Params params) override;
	int64_t now_ms() override { return now_ms_; }
	// Sorted keys, no spaces (nlohmann's dump): what the store has always
	// stored, so the same content is the same text.
	std::string canonical_json(const std::string &text) override;

	// A statement without SQLite text, whose answer is the store's own state
	// (its settings, its process, a time option's parse, a commit's flush):
	// the store answers its rows; std::nullopt for any other statement.
	using StoreCalls = std::function<std::optional<engine::Rows>(engine::Stmt, engine::Params)>;
	void set_store_calls(StoreCalls calls) { store_calls_ = std::move(calls); }

  protected:
	void savepoint_begin() override;
	void savepoint_release() override;
	void savepoint_rollback() noexcept override;

  private:
	Db &db_;
	int64_t now_ms_;
	int savepoints_ = 0;
	StoreCalls store_calls_;
};

}  // namespace genroc::sqlite
