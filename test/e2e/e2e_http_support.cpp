// e2e_http_support.cpp — per-test databases and subprocesses (see the header).
#include "e2e_http_support.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace genroc::e2e {
namespace {

std::atomic<int> g_counter{0};

std::string quote_ident(const std::string &s) {
	std::string q = "\"";
	for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
	return q + "\"";
}

std::string slurp(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	std::stringstream b;
	b << in.rdbuf();
	return b.str();
}

}  // namespace

std::string env(const char *name) {
	const char *v = std::getenv(name);
	return v ? v : "";
}


void TestDatabase::create(const std::string &kind, std::string &skip) {
	const int n = g_counter++;
	const std::string tag = std::to_string(getpid()) + "_" + std::to_string(n);
	if (kind == "sqlite") {
		auto dir = std::filesystem::temp_directory_path();
		sqlite_path_ = (dir / ("genroc-e2e-http-" + tag + ".db")).string();
		std::filesystem::remove(sqlite_path_);
		url_ = sqlite_path_;
		return;
	}
	const std::string url = env("GENROC_TEST_PG_URL");
	if (url.empty()) {
		if (env("GENROC_TEST_REQUIRE_PG") == "1")
			throw std::runtime_error("GENROC_TEST_PG_URL is not set but GENROC_TEST_REQUIRE_PG=1");
		skip = "GENROC_TEST_PG_URL is not set";
		return;
	}
	std::string tmpl = env("GENROC_TEST_TEMPLATE");
	if (tmpl.empty()) tmpl = "genroc_template";
	pg_admin_url_ = with_database(url, "postgres");
	pg_db_ = "genroc_e2e_http_" + tag;
	pg_exec(pg_admin_url_, "DROP DATABASE IF EXISTS " + quote_ident(pg_db_) + " WITH (FORCE)");
	pg_exec(pg_admin_url_, "CREATE DATABASE " + quote_ident(pg_db_) + " TEMPLATE " + quote_ident(tmpl));
	url_ = with_database(url, pg_db_);
}

void TestDatabase::drop() {
	if (!sqlite_path_.empty()) {
		for (const char *suffix : {"", "-wal", "-shm"}) std::filesystem::remove(sqlite_path_ + suffix);
		// and the worker-id locks the SQLite store keeps beside the file
		// (<file>-worker-<hash>.lock), one per worker id that registered
		const std::filesystem::path db(sqlite_path_);
		const std::string locks = db.filename().string() + "-worker-";
		std::error_code ec;
		for (const auto &f : std::filesystem::directory_iterator(db.parent_path(), ec)) {
			const std::string name = f.path().filename().string();
			if (name.rfind(locks, 0) == 0 && f.path().extension() == ".lock") std::filesystem::remove(f.path(), ec);
		}
		sqlite_path_.clear();
	}
	if (!pg_db_.empty()) {
		try {
			pg_exec(pg_admin_url_, "DROP DATABASE IF EXISTS " + quote_ident(pg_db_) + " WITH (FORCE)");
		} catch (const std::exception &e) {
			ADD_FAILURE() << e.what();
		}
		pg_db_.clear();
	}
}

Output run(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env_add,
		   int timeout_s) {
	const int n = g_counter++;
	auto dir = std::filesystem::temp_directory_path();
	const std::string out_path = (dir / ("genroc-e2e-out-" + std::to_string(getpid()) + "-" + std::to_string(n))).string();
	const std::string err_path = out_path + ".err";

	pid_t pid = spawn(argv, out_path, err_path, env_add);

	Output o;
	int status = 0;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid) break;
		if (std::chrono::steady_clock::now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			o.err = "(timed out after " + std::to_string(timeout_s) + "s)\n";
			status = -1;
			break;
		}
		// Polling the child's exit, not a timing assertion.
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	if (status != -1 && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
	o.out = slurp(out_path);
	o.err += slurp(err_path);
	std::filesystem::remove(out_path);
	std::filesystem::remove(err_path);
	return o;
}

pid_t spawn(const std::vector<std::string> &argv, const std::string &out_path, const std::string &err_path,
			const std::map<std::string, std::string> &env_add) {
	std::vector<char *> args;
	for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);
	pid_t pid = fork();
	if (pid < 0) throw std::runtime_error("fork failed");
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = err_path == out_path ? out : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || out < 0 || err < 0) _exit(127);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		for (const auto &[k, v] : env_add) setenv(k.c_str(), v.c_str(), 1);
		execv(args[0], args.data());
		_exit(127);
	}
	return pid;
}

pid_t spawn_logged(const std::vector<std::string> &argv, const std::string &log_path) {
	return spawn(argv, log_path, log_path, {});
}

std::filesystem::path test_dir(const std::string &prefix) {
	std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
	for (char &ch : name)
		if (ch == '/') ch = '-';
	auto dir = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()) + "-" + name);
	std::filesystem::create_directories(dir);
	return dir;
}

}  // namespace genroc::e2e
