// sqlite_port_test.cpp — the engine's port on SQLite (store/sqlite/sqlite_port.cpp):
// a savepoint undoes its own scope and the transaction goes on, a statement
// a dialect has no text for does nothing there, and a refusal keeps its
// SQLSTATE.  (PostgreSQL's savepoints: specs/define_race.spec.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sqlite_port.hpp"
#include "sqlite_store.hpp"

namespace genroc {
namespace {

using engine::JsonText;
using engine::Port;
using engine::Stmt;

TEST(SqlitePort, ASavepointUndoesItsScopeAloneAndTheTransactionGoesOn) {
	const std::string path =
		(std::filesystem::temp_directory_path() / ("genroc-sqlite-port-" + std::to_string(getpid()) + ".db")).string();
	for (const char *s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
	open_sqlite_store(path);  // the schema
	{
		sqlite::Db db(path);
		db.begin_immediate(sqlite::Durability::normal);
		sqlite::SqlitePort port(db, 1000);
		auto insert = [&](const char *name, int version, const char *text) {
			port.exec(Stmt::DEFINITION_INSERT, {name, version, JsonText{text}, "hash", nullptr, int64_t(1000)});
		};
		insert("a", 1, "{}");
		// refused under a savepoint: 23505, only the savepoint's work undone
		try {
			Port::Savepoint sp(port);
			insert("b", 1, "[1]");
			insert("a", 2, "{}");  // UNIQUE (name, definition)
			ADD_FAILURE() << "the duplicate was stored";
		} catch (const Error &e) {
			EXPECT_EQ(e.sqlstate, "23505");
		}
		// left without release: rolled back; released: kept
		{
			Port::Savepoint sp(port);
			insert("c", 1, "{}");
		}
		{
			Port::Savepoint outer(port);
			insert("d", 1, "{}");
			{
				Port::Savepoint inner(port);
				insert("e", 1, "{}");
				inner.rollback();
			}
			outer.release();
		}
		// nothing to do on SQLite: no text, no statement
		EXPECT_EQ(port.exec(Stmt::LOCK_DEFINE, {"a"}), 0);
		EXPECT_THROW(port.query(Stmt::LOCK_DEFINE, {"a"}), Error);
		db.commit();
	}
	sqlite::Db db(path);
	sqlite::SqlitePort port(db, 0);
	std::vector<std::string> names;
	for (const auto &r : port.query(Stmt::DEFINITIONS_NEWEST, {})) names.push_back(r.text(0));
	EXPECT_EQ(names, (std::vector<std::string>{"a", "d"}));
	for (const char *s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

// A row's cells as the ports hand them back (engine/port.hpp): an integer or
// a boolean as a value, its text made when asked (decimal; t or f, as
// PostgreSQL writes a boolean); a text read as an integer or a boolean.
TEST(PortRow, CellsReadAsTextIntegerAndBoolean) {
	using Cell = engine::Row::Cell;
	int stored = 0;
	Cell native = Cell::text("{\"a\": 1}");
	native.native = &stored;
	engine::Row r({Cell::integer(-42), Cell::boolean(true), Cell::boolean(false), Cell::text("17"), Cell::text("t"),
				   Cell{}, Cell::integer(1), Cell::text("x"), native});
	EXPECT_EQ(r.size(), 9);
	EXPECT_EQ(r.i64(0), -42);
	EXPECT_EQ(r.text(0), "-42");
	EXPECT_EQ(r.f64(0), -42.0);
	EXPECT_TRUE(r.boolean(1));
	EXPECT_EQ(r.text(1), "t");
	EXPECT_FALSE(r.boolean(2));
	EXPECT_EQ(r.text(2), "f");
	EXPECT_EQ(r.i64(3), 17);
	EXPECT_TRUE(r.boolean(4));
	EXPECT_TRUE(r.is_null(5));
	EXPECT_EQ(r.otext(5), std::nullopt);
	EXPECT_EQ(r.oi64(5), std::nullopt);
	EXPECT_THROW(r.text(5), Error);
	EXPECT_TRUE(r.boolean(6));	// an integer 0 or 1 reads as a boolean (SQLite's)
	EXPECT_THROW(r.i64(7), Error);
	EXPECT_THROW(r.boolean(7), Error);
	EXPECT_THROW(r.text(9), Error);	 // no such column
	EXPECT_EQ(r.native(8), &stored);
	EXPECT_EQ(r.native(0), nullptr);
	EXPECT_EQ(r.text(8), "{\"a\": 1}");
}

}  // namespace
}  // namespace genroc
