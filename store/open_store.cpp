// open_store.cpp — --database decides the store: a PostgreSQL URL or
// conninfo, else a SQLite file path.
#include <libpq-fe.h>

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

std::string store_identity(const std::string &database) {
	const std::string db = database.empty() ? "./genroc.db" : database;
	if (is_postgres(db)) {
		// the server and database only: not the password (rotated without
		// renaming the worker), nor options such as sslmode
		char *err = nullptr;
		PQconninfoOption *opts = PQconninfoParse(db.c_str(), &err);
		if (!opts) {
			if (err) PQfreemem(err);
			return "postgresql " + db;	// libpq refuses it at connect; any stable text will do
		}
		std::string host, port, dbname, user;
		for (PQconninfoOption *o = opts; o->keyword; o++) {
			const std::string k = o->keyword, v = o->val ? o->val : "";
			if (k == "host" || k == "hostaddr") host = host.empty() ? v : host + "," + v;
			else if (k == "port") port = v;
			else if (k == "dbname") dbname = v;
			else if (k == "user") user = v;
		}
		PQconninfoFree(opts);
		return "postgresql " + user + "@" + host + ":" + port + "/" + dbname;
	}
	std::error_code ec;
	std::filesystem::path path = std::filesystem::weakly_canonical(std::filesystem::absolute(db, ec), ec);
	return "sqlite " + (ec ? db : path.string());
}

}  // namespace genroc
