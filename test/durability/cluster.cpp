// cluster.cpp — see cluster.hpp.
#include "cluster.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

namespace genroc::durability_test {

std::string shell(const std::string &cmd, int *status) {
	std::string out;
	FILE *p = ::popen(cmd.c_str(), "r");
	if (!p) {
		if (status) *status = -1;
		return out;
	}
	std::array<char, 4096> buf;
	size_t n;
	while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
	int rc = ::pclose(p);
	if (status) *status = rc;
	return out;
}

static std::string source_dir() { return GENROC_SOURCE_DIR; }

// initdb and pg_ctl refuse root; pgcluster.sh makes "postgres" own the
// cluster then, and so must every pg_ctl here.
static std::string as_owner() { return ::geteuid() == 0 ? "runuser -u postgres -- " : ""; }

OwnCluster::OwnCluster(const std::string &extra_conf) {
	int rc = 0;
	std::string env;
	// A port taken between pgcluster.sh's check and the server's bind (tests
	// run in parallel): try again on another port.
	for (int attempt = 0; attempt < 3; attempt++) {
		env = shell("bash '" + source_dir() + "/test/pgcluster.sh' start 2>&1", &rc);
		if (rc == 0 || env.find("Address already in use") == std::string::npos) break;
	}
	if (rc != 0) {
		error_ = "test/pgcluster.sh could not start PostgreSQL: " + env;
		return;
	}
	std::smatch m;
	std::string port;
	if (std::regex_search(env, m, std::regex("GENROC_PGDIR='([^']*)'"))) dir_ = m[1];
	if (std::regex_search(env, m, std::regex("GENROC_PGDATA='([^']*)'"))) data_ = m[1];
	if (std::regex_search(env, m, std::regex("PGPORT='([0-9]+)'"))) port = m[1];
	if (dir_.empty() || data_.empty() || port.empty()) {
		error_ = "cannot read test/pgcluster.sh output: " + env;
		return;
	}
	{
		std::ofstream conf(data_ + "/postgresql.conf", std::ios::app);
		conf << "\n# durability tests\n" << extra_conf << "\n";
	}
	if (!pg_ctl("restart -m fast")) {
		error_ = "PostgreSQL did not restart with the test settings; see " + dir_ + "/server.log";
		return;
	}
	url_ = "postgresql://postgres@127.0.0.1:" + port + "/genroc_test";
	const std::string admin = "postgresql://postgres@127.0.0.1:" + port + "/postgres";
	std::string out = shell("psql -X -q -v ON_ERROR_STOP=1 '" + admin + "' -c 'CREATE DATABASE genroc_test' 2>&1 && "
							"psql -X -q -v ON_ERROR_STOP=1 '" + url_ + "' -c 'CREATE EXTENSION genroc' 2>&1",
							&rc);
	if (rc != 0) error_ = "cannot create the test database with the extension: " + out;
}

OwnCluster::~OwnCluster() {
	if (!dir_.empty()) shell("bash '" + source_dir() + "/test/pgcluster.sh' stop '" + dir_ + "' >/dev/null 2>&1");
}

bool OwnCluster::pg_ctl(const std::string &args) {
	int rc = 0;
	shell(as_owner() + "\"${PGBIN:-$(pg_config --bindir)}/pg_ctl\" -D '" + data_ + "' -l '" + dir_ +
			  "/server.log' -w -t 60 " + args + " >/dev/null 2>&1",
		  &rc);
	return rc == 0;
}

bool OwnCluster::crash() { return pg_ctl("stop -m immediate"); }
bool OwnCluster::start_again() { return pg_ctl("start"); }

}  // namespace genroc::durability_test
