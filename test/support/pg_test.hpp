// pg_test.hpp — what every PostgreSQL-backed test suite needs: a URL pointed
// at another database, and one statement run on a server.
#pragma once

#include <string>

namespace genroc::test {

// The URL with its database part replaced: postgresql://user@host:port/DB?opts
std::string with_database(const std::string &url, const std::string &db);

// The URL as the login role that docs/security.md "Roles and ownership" says `genroc
// <need>` connects as, with exactly those capabilities:
//   worker  genroc_worker
//   serve   genroc_worker, genroc_user, genroc_operator
//   api     genroc_user, genroc_operator, and genroc_worker for the
//           /api/activities routes
//   admin   genroc_admin (queue configuration, the token routes, retention)
//   none    no genroc role (what a start refuses)
// The role (genroc_e2e_<need>) is made when absent, through `url`, which must
// be a superuser's; roles are cluster-wide, so a second test binary finds it.
// Tests keep the superuser URL for setup and checks.  Anything but a
// postgresql:// URL (a SQLite file) comes back as it is.
std::string binary_url(const std::string &url, const std::string &need);

// Runs one statement against a PostgreSQL URL; throws std::runtime_error with
// the server's message.  Notices ("... does not exist, skipping") are dropped.
void pg_exec(const std::string &url, const std::string &sql);

}  // namespace genroc::test
