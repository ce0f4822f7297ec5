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
