// pg_test.hpp — what every PostgreSQL-backed test suite needs: a URL pointed
// at another database, and one statement run on a server.
#pragma once

#include <string>

namespace genroc::test {

// The URL with its database part replaced: postgresql://user@host:port/DB?opts
std::string with_database(const std::string &url, const std::string &db);

// Runs one statement against a PostgreSQL URL; throws std::runtime_error with
// the server's message.  Notices ("... does not exist, skipping") are dropped.
void pg_exec(const std::string &url, const std::string &sql);

}  // namespace genroc::test
