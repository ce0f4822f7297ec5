// e2e_worker_support.cpp — see e2e_worker_support.hpp.
#include "e2e_worker_support.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "handlers.hpp"

extern char **environ;

namespace genroc::e2e_worker {

namespace fs = std::filesystem;

namespace {

std::string env(const char *name) {
	const char *v = std::getenv(name);
	return v ? v : "";
}

// Stops the cluster this binary started once all tests ran.
class StopServer : public ::testing::Environment {
  public:
	void TearDown() override { PgServer::get().stop(); }
};
[[maybe_unused]] ::testing::Environment *const g_env = ::testing::AddGlobalTestEnvironment(new StopServer);

std::atomic<int> g_counter{0};

}  // namespace

std::string genroc_bin() { return GENROC_BIN; }
std::string source_dir() { return GENROC_SOURCE_DIR; }


// ------------------------------------------------------------------ PgServer

PgServer &PgServer::get() {
	static PgServer s;
	if (!s.started_) {
		s.started_ = true;
		s.start();
	}
	return s;
}

void PgServer::start() {
	std::string url = env("GENROC_TEST_PG_URL"), tmpl = env("GENROC_TEST_TEMPLATE");
	if (!url.empty() && !tmpl.empty()) {
		admin_url_ = with_database(url, "postgres");
		template_ = tmpl;
		return;
	}
	// A cluster of our own (test/pgcluster.sh prints `export NAME='value'` lines).
	std::string cmd = "bash '" + source_dir() + "/test/pgcluster.sh' start 2>/dev/null";
	FILE *p = ::popen(cmd.c_str(), "r");
	if (!p) {
		skip_ = "cannot run test/pgcluster.sh";
		return;
	}
	std::map<std::string, std::string> vars;
	char line[4096];
	while (std::fgets(line, sizeof line, p)) {
		std::string l = line;
		if (l.rfind("export ", 0) != 0) continue;
		auto eq = l.find('=');
		std::string k = l.substr(7, eq - 7), v = l.substr(eq + 1);
		while (!v.empty() && (v.back() == '\n' || v.back() == '\'')) v.pop_back();
		if (!v.empty() && v.front() == '\'') v.erase(0, 1);
		vars[k] = v;
	}
	int rc = ::pclose(p);
	if (rc != 0 || vars["GENROC_TEST_PG_URL"].empty()) {
		skip_ = "test/pgcluster.sh could not start PostgreSQL";
		return;
	}
	cluster_dir_ = vars["GENROC_PGDIR"];
	admin_url_ = with_database(vars["GENROC_TEST_PG_URL"], "postgres");
	template_ = "genroc_e2e_worker_template";
	try {
		pg_exec(admin_url_, "CREATE DATABASE " + template_);
		pg_exec(with_database(admin_url_, template_), "CREATE EXTENSION genroc");
	} catch (const std::exception &e) {
		skip_ = std::string("the genroc extension is not installed (make install): ") + e.what();
	}
}

void PgServer::stop() {
	if (cluster_dir_.empty()) return;
	std::string cmd = "bash '" + source_dir() + "/test/pgcluster.sh' stop '" + cluster_dir_ + "' >/dev/null 2>&1";
	int ignored = std::system(cmd.c_str());
	(void)ignored;
	cluster_dir_.clear();
}

// ------------------------------------------------------------------ Proc

Proc::Proc(const std::vector<std::string> &argv, const std::map<std::string, std::string> &extra_env,
		   const std::string &log_path)
	: log_path_(log_path) {
	std::vector<std::string> env_store;
	for (char **e = environ; *e; ++e) {
		std::string kv = *e;
		auto eq = kv.find('=');
		if (extra_env.count(kv.substr(0, eq))) continue;
		env_store.push_back(kv);
	}
	for (auto &[k, v] : extra_env) env_store.push_back(k + "=" + v);
	std::vector<char *> envp, args;
	for (auto &s : env_store) envp.push_back(s.data());
	envp.push_back(nullptr);
	std::vector<std::string> argv_store = argv;
	for (auto &s : argv_store) args.push_back(s.data());
	args.push_back(nullptr);
	int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0) throw std::runtime_error("cannot open " + log_path);
	pid_ = ::fork();
	if (pid_ == 0) {
		int devnull = ::open("/dev/null", O_RDONLY);
		::dup2(devnull, 0);
		::dup2(log_fd, 1);
		::dup2(log_fd, 2);
		::execve(args[0], args.data(), envp.data());
		::_exit(127);
	}
	::close(log_fd);
	if (pid_ < 0) throw std::runtime_error("fork failed");
}

Proc::~Proc() {
	if (!status_) {
		::kill(pid_, SIGCONT);
		::kill(pid_, SIGKILL);
		wait(5s);
	}
}

void Proc::signal(int sig) { ::kill(pid_, sig); }

std::optional<int> Proc::wait(std::chrono::milliseconds timeout) {
	if (status_) return status_;
	auto deadline = std::chrono::steady_clock::now() + timeout;
	do {
		int st = 0;
		pid_t r = ::waitpid(pid_, &st, WNOHANG);
		if (r == pid_) {
			status_ = st;
			return status_;
		}
		std::this_thread::sleep_for(20ms);
	} while (std::chrono::steady_clock::now() < deadline);
	return std::nullopt;
}

bool Proc::running() { return !wait(0ms).has_value(); }

int exit_code(std::optional<int> status) { return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1; }

std::string Proc::log() const {
	std::ifstream in(log_path_);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

// ------------------------------------------------------------------ helpers

bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds timeout) {
	auto deadline = std::chrono::steady_clock::now() + timeout;
	for (;;) {
		if (pred()) return true;
		if (std::chrono::steady_clock::now() >= deadline) return false;
		std::this_thread::sleep_for(50ms);
	}
}

std::vector<std::string> read_lines(const std::string &path) {
	std::vector<std::string> out;
	std::ifstream in(path);
	for (std::string l; std::getline(in, l);)
		if (!l.empty()) out.push_back(l);
	return out;
}

// ------------------------------------------------------------------ WorkerTest

void WorkerTest::SetUp() {
	char tmpl[] = "/tmp/genroc-e2e-worker.XXXXXX";
	ASSERT_NE(::mkdtemp(tmpl), nullptr);
	dir_ = tmpl;
	// The cluster runs as "postgres" when the tests run as root; nothing here
	// is read by it, but the handler scripts run as us.
	::chmod(dir_.c_str(), 0755);
}

void WorkerTest::use_postgres() {
	auto &pg = PgServer::get();
	if (pg.admin_url().empty() || !pg.skip_reason().empty()) {
		if (env("GENROC_TEST_REQUIRE_PG") == "1") FAIL() << "PostgreSQL required: " << pg.skip_reason();
		GTEST_SKIP() << pg.skip_reason();
	}
	db_name_ = "e2e_worker_" + std::to_string(::getpid()) + "_" + std::to_string(g_counter++);
	pg_exec(pg.admin_url(), "CREATE DATABASE " + db_name_ + " TEMPLATE " + pg.template_db());
	db_url_ = with_database(pg.admin_url(), db_name_);
}

int port_in_log(const Proc &p, const std::string &message) {
	const std::string log = p.log();
	auto at = log.find(message);
	if (at == std::string::npos) return 0;
	at = log.find("listen=127.0.0.1:", at);
	return at == std::string::npos ? 0 : std::atoi(log.c_str() + at + 17);
}

void WorkerTest::use_store(const std::string &store) {
	if (store == "postgres") use_postgres();
	else db_url_ = dir_ + "/genroc.db";
}

void WorkerTest::TearDown() {
	procs_.clear();	// SIGKILL whatever still runs
	// Handler commands record their pid; their groups must not outlive the test.
	for (auto &l : read_lines(dir_ + "/runs.log")) {
		std::istringstream is(l);
		std::string who, inst, state;
		pid_t pid = 0;
		if (is >> who >> inst >> state >> pid && pid > 0) ::kill(-pid, SIGKILL);
	}
	if (!db_name_.empty()) {
		try {
			pg_exec(PgServer::get().admin_url(), "DROP DATABASE IF EXISTS " + db_name_ + " WITH (FORCE)");
		} catch (const std::exception &) {
		}
	}
	if (!HasFailure() && env("GENROC_TEST_KEEP") != "1") fs::remove_all(dir_);
	else std::fprintf(stderr, "logs kept in %s\n", dir_.c_str());
}

std::string WorkerTest::script(const std::string &name, const std::string &body) {
	std::string path = dir_ + "/" + name;
	std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
	::chmod(path.c_str(), 0755);
	return path;
}

std::string WorkerTest::handlers_file(const std::map<std::string, std::string> &scripts) {
	json h = json::object();
	for (auto &[name, path] : scripts) h[name] = {{"command", {path}}, {"sha256", sha256_file(path)}};
	std::string path = dir_ + "/handlers.json";
	std::ofstream(path) << json{{"handlers", h}}.dump(2);
	return path;
}

void WorkerTest::standard_handlers() {
	auto step = script("step.sh", R"SH(input=$(cat)
runs="$E2E_DIR/runs.log"
before=$(grep -c " $GENROC_STATE " "$runs" 2>/dev/null || true)
echo "$E2E_WHO $GENROC_INSTANCE_ID $GENROC_STATE $$" >> "$runs"
secs=$(printf '%s' "$input" | sed -n 's/.*"sleep":\([0-9.]*\).*/\1/p')
case "$input" in *'"sleep_once":true'*) [ "${before:-0}" -gt 0 ] && secs="" ;; esac
[ -n "$secs" ] && sleep "$secs"
printf '{"who":"%s","state":"%s"}\n' "$E2E_WHO" "$GENROC_STATE")SH");
	auto record = script("record.sh", R"SH(cat >/dev/null
echo "$E2E_WHO $GENROC_INSTANCE_ID" >> "$E2E_DIR/effects.log"
echo '{"recorded":true}')SH");
	handlers_ = handlers_file({{"step", step}, {"record", record}});
}

std::unique_ptr<Proc> WorkerTest::worker(const std::string &id, const std::vector<std::string> &extra,
										 std::map<std::string, std::string> env_add) {
	// the binary as a role with genroc_worker only (docs/security.md "Roles and
	// ownership"); writing queues (a queues config, a handler's queue) takes
	// genroc_admin
	bool configures = std::find(extra.begin(), extra.end(), "--queues-config") != extra.end() ||
					  env_add.count("GENROC_QUEUES_CONFIG");
	if (!handlers_.empty()) {
		std::ifstream in(handlers_);
		json h = json::parse(in, nullptr, false);
		if (h.is_object() && h.contains("handlers"))
			for (auto &[name, handler] : h["handlers"].items()) configures = configures || handler.contains("queue");
	}
	return worker_at(binary_url(db_url_, configures ? "admin" : "worker"), id, extra, std::move(env_add));
}

std::unique_ptr<Proc> WorkerTest::worker_at(const std::string &url, const std::string &id,
											const std::vector<std::string> &extra,
											std::map<std::string, std::string> env_add) {
	std::vector<std::string> argv = {genroc_bin(),		 "worker",			  "--database",	  url,
									 "--worker-id",		 id,				  "--lease-duration", "2s",
									 "--stale-after",	 "3s",				  "--tick-interval", "200ms",
									 "--poll-interval", "200ms",			  "--log-level",	  "debug"};
	if (!handlers_.empty()) {
		argv.push_back("--handlers");
		argv.push_back(handlers_);
	}
	argv.insert(argv.end(), extra.begin(), extra.end());
	env_add["E2E_WHO"] = id;
	env_add["E2E_DIR"] = dir_;
	env_add["GENROC_WORKER_ID"] = id;	// it would win over --worker-id
	return std::make_unique<Proc>(argv, env_add, dir_ + "/" + id + "." + std::to_string(procs_.size()) + ".log");
}

std::unique_ptr<Store> WorkerTest::store() { return open_store(db_url_); }

json WorkerTest::wait_status(int64_t id, const std::vector<std::string> &statuses, std::chrono::milliseconds timeout) {
	auto s = store();
	json inst;
	eventually(
		[&] {
			inst = s->get_instance(id);
			for (auto &st : statuses)
				if (inst.value("status", "") == st) return true;
			return false;
		},
		timeout);
	return inst;
}

}  // namespace genroc::e2e_worker
