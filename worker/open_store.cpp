// open_store.cpp — --database decides the store: a PostgreSQL URL or
// conninfo, else a SQLite file path.
#include <filesystem>
#include <memory>
#include <string>

#include "sqlite_store.hpp"
#include "store.hpp"

namespace genroc {

// True for what libpq would take: a postgres:// or postgresql:// URL, or a
// keyword=value conninfo string (no file name contains '=' in practice).
static bool is_postgres(const std::string &database) {
	return database.rfind("postgres://", 0) == 0 || database.rfind("postgresql://", 0) == 0 ||
		   database.find('=') != std::string::npos;
}

std::unique_ptr<Store> open_store(const std::string &database, bool read_only, WriteLane lane, bool pooled) {
	const std::string db = database.empty() ? "./genroc.db" : database;
	if (is_postgres(db)) return open_pg_store(db, pooled);
	// a file not there yet is made (0600, with its schema) as by any other
	// command: a reading command on it then answers as on an empty store
	return open_sqlite_store(db, read_only && std::filesystem::exists(db), lane);
}

}  // namespace genroc
