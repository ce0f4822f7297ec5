// pg_test.cpp — see pg_test.hpp.
#include "pg_test.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <stdexcept>

namespace genroc::test {

std::string with_database(const std::string &url, const std::string &db) {
	auto scheme = url.find("://");
	if (scheme == std::string::npos) throw std::runtime_error("not a postgresql:// URL: " + url);
	auto slash = url.find('/', scheme + 3);
	auto query = url.find('?', scheme + 3);
	std::string head = url.substr(0, std::min(slash, query));
	std::string tail = query == std::string::npos ? "" : url.substr(query);
	return head + "/" + db + tail;
}

std::string binary_url(const std::string &url, const std::string &need) {
	if (url.rfind("postgresql://", 0) != 0 && url.rfind("postgres://", 0) != 0) return url;
	std::string groups;
	if (need == "worker") groups = "genroc_worker";
	else if (need == "serve" || need == "api") groups = "genroc_worker, genroc_user, genroc_operator";
	else if (need == "admin") groups = "genroc_admin";
	else if (need == "none") groups = "";
	else throw std::runtime_error("binary_url: unknown need " + need);
	const std::string role = "genroc_e2e_" + need;
	// Two test binaries may make it at once: the loser's error is harmless.
	pg_exec(url, "DO $$ BEGIN CREATE ROLE " + role + " LOGIN" + (groups.empty() ? "" : " IN ROLE " + groups) +
					 "; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$");
	auto scheme = url.find("://");
	if (scheme == std::string::npos) throw std::runtime_error("not a postgresql:// URL: " + url);
	auto at = url.find('@', scheme + 3);
	auto slash = url.find('/', scheme + 3);
	if (at == std::string::npos || at > slash) return url.substr(0, scheme + 3) + role + "@" + url.substr(scheme + 3);
	return url.substr(0, scheme + 3) + role + url.substr(at);
}

void pg_exec(const std::string &url, const std::string &sql) {
	PGconn *c = PQconnectdb(url.c_str());
	std::string err;
	if (PQstatus(c) != CONNECTION_OK) {
		err = PQerrorMessage(c);
	} else {
		PQsetNoticeProcessor(c, [](void *, const char *) {}, nullptr);
		PGresult *r = PQexec(c, sql.c_str());
		if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
			err = PQresultErrorMessage(r);
		PQclear(r);
	}
	PQfinish(c);
	if (!err.empty()) throw std::runtime_error(sql + ": " + err);
}

}  // namespace genroc::test
