// cluster.hpp — a PostgreSQL cluster of the durability tests' own, made with
// test/pgcluster.sh and then given extra settings.  Owned by the test, so it
// may be crashed (pg_ctl stop -m immediate) and tuned (a WAL writer that does
// not flush on its own) without disturbing anyone else's tests.
#pragma once

#include <string>

namespace genroc::durability_test {

class OwnCluster {
  public:
	// Starts the cluster with `extra_conf` appended to postgresql.conf, and
	// creates database genroc_test with the extension.  On failure, ok() is
	// false and error() says why.
	explicit OwnCluster(const std::string &extra_conf);
	~OwnCluster();
	OwnCluster(const OwnCluster &) = delete;
	OwnCluster &operator=(const OwnCluster &) = delete;

	bool ok() const { return error_.empty(); }
	const std::string &error() const { return error_; }
	// postgresql://postgres@127.0.0.1:PORT/genroc_test
	const std::string &url() const { return url_; }

	// pg_ctl stop -m immediate: the server dies as in a crash (no checkpoint,
	// unflushed WAL lost as far as PostgreSQL is concerned).
	bool crash();
	// pg_ctl start, waiting until it accepts connections (after recovery).
	bool start_again();

  private:
	bool pg_ctl(const std::string &args);
	std::string dir_, data_, url_, error_;
};

// Runs a shell command; its stdout, and the exit status in *status.
std::string shell(const std::string &cmd, int *status = nullptr);

}  // namespace genroc::durability_test
