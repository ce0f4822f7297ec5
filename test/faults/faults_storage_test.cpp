// faults_storage_test.cpp — the disk fails under the SQLite store and under
// a worker's handlers:
//   - the SQLite file on a full disk (a small tmpfs mounted here): `genroc
//     api` answers errors with a SQLSTATE, the worker on the same file stays
//     up, and once the disk has room again everything goes on; nothing
//     acknowledged is lost, PRAGMA integrity_check is ok;
//   - the handlers' scratch space (TMPDIR) full: the task fails with the
//     command's message, the worker goes on;
//   - write and fsync errors injected into SQLite's calls with libfiu
//     (fiu-run / fiu-ctrl, Debian's fiu-utils): clean error answers and exit
//     codes, never a crash, nothing acknowledged lost, the file intact.
// Mounting needs root (CAP_SYS_ADMIN) and libfiu its package: without them
// the test prints a SKIP line saying so.
#include <httplib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "fault_support.hpp"

namespace genroc::faults {
namespace {

using json = nlohmann::json;

// A tmpfs of `size` mounted on a new folder; unmounted when destroyed.
class Tmpfs {
  public:
	explicit Tmpfs(const std::string &size) {
		char tmpl[] = "/tmp/genroc-faults-disk.XXXXXX";
		if (!::mkdtemp(tmpl)) {
			error_ = std::string("mkdtemp: ") + std::strerror(errno);
			return;
		}
		dir_ = tmpl;
		if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size + ",mode=0777").c_str()) != 0) {
			error_ = "cannot mount a tmpfs (" + std::string(std::strerror(errno)) + "; needs root)";
			::rmdir(dir_.c_str());
			return;
		}
		mounted_ = true;
	}
	~Tmpfs() {
		if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
		if (!dir_.empty()) ::rmdir(dir_.c_str());
	}
	bool ok() const { return mounted_; }
	const std::string &error() const { return error_; }
	const std::string &dir() const { return dir_; }
	// Room again: the same mount, bigger.
	bool grow(const std::string &size) {
		return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT, ("size=" + size + ",mode=0777").c_str()) == 0;
	}

  private:
	std::string dir_, error_;
	bool mounted_ = false;
};

std::string fiu_run() {
	for (const char *p : {"/usr/bin/fiu-run", "/usr/local/bin/fiu-run"})
		if (::access(p, X_OK) == 0) return p;
	return "";
}

// fiu-ctrl on a process started with fiu-run.
bool fiu_ctrl(pid_t pid, const std::vector<std::string> &commands) {
	std::string cmd = "fiu-ctrl";
	for (auto &c : commands) cmd += " -c '" + c + "'";
	cmd += " " + std::to_string(pid) + " >/dev/null 2>&1";
	return std::system(cmd.c_str()) == 0;
}

class Storage : public FaultBase {
  protected:
	// `genroc api` on db_url_, optionally under `prefix` (fiu-run -x).
	// `genroc api` on a port the kernel picks (up() reads it from the log).
	std::unique_ptr<Proc> api(const std::vector<std::string> &prefix = {}) {
		std::vector<std::string> argv = prefix;
		for (std::string a : {e2e_worker::genroc_bin(), std::string("api"), std::string("--database"), db_url_,
							  std::string("--listen"), std::string("127.0.0.1:0")})
			argv.push_back(a);
		return std::make_unique<Proc>(argv, std::map<std::string, std::string>{},
									  dir_ + "/api." + std::to_string(procs_.size()) + ".log");
	}
	static bool healthy(int port) {
		httplib::Client c("127.0.0.1", port);
		auto r = c.Get("/healthz");
		return r && r->status == 200;
	}
	// Up (*port: where it listens), or ended (no point waiting then).
	bool up(int *port, Proc &p) {
		return eventually(
				   [&] {
					   *port = e2e_worker::port_in_log(p, "HTTP API listening");
					   return (*port > 0 && healthy(*port)) || !p.running();
				   },
				   30s) &&
			   p.running();
	}
	// POST /api/instances: the id when acknowledged (2xx); else checks the
	// answer is a clean error (a 5xx with a SQLSTATE and a message) and
	// returns 0.  *sqlstate gets the error's SQLSTATE.
	static int64_t start(httplib::Client &c, const json &input, std::string *sqlstate = nullptr,
						 int *status = nullptr) {
		auto r = c.Post("/api/instances", json{{"definition", "job"}, {"input", input}}.dump(), "application/json");
		if (!r) {
			ADD_FAILURE() << "no answer from the API: " << httplib::to_string(r.error());
			return 0;
		}
		if (status) *status = r->status;
		if (r->status / 100 == 2) return json::parse(r->body).at("instance_id").get<int64_t>();
		json body = json::parse(r->body, nullptr, false);
		EXPECT_GE(r->status, 500) << r->body;
		EXPECT_TRUE(body.is_object() && body["error"].is_object() && body["error"]["sqlstate"].is_string() &&
					!body["error"].value("message", "").empty())
			<< "not a clean error answer: " << r->status << " " << r->body;
		if (sqlstate && body.is_object() && body["error"].is_object())
			*sqlstate = body["error"].value("sqlstate", "");
		return 0;
	}
	void integrity_ok() {
		auto rows = query_rows(db_url_, "PRAGMA integrity_check");
		ASSERT_FALSE(rows.empty());
		EXPECT_EQ(rows[0][0], "ok");
	}
	void define_job() {
		fault_handlers();
		store()->define("job", json::parse(kJob));
	}
};

TEST_F(Storage, SqliteFileOnAFullDiskAnswersErrorsAndLosesNothing) {
	Tmpfs disk("2m");
	if (!disk.ok()) GTEST_SKIP() << "SKIP: " << disk.error();
	db_url_ = disk.dir() + "/genroc.db";
	define_job();
	procs_.push_back(worker("full-w1"));
	int port = 0;
	procs_.push_back(api());
	ASSERT_TRUE(up(&port, *procs_[1])) << procs_[1]->log();

	// Starts with a 2 KB input until the disk is full, and some more; their
	// first tasks take 0.5s, so the worker reports onto the full disk too.
	httplib::Client c("127.0.0.1", port);
	const json input = {{"sleep", 0.5}, {"pad", std::string(2048, 'x')}};
	std::set<int64_t> acked;
	std::map<std::string, int> refused;
	int n_refused = 0;
	for (int i = 0; i < 3000 && n_refused < 20 && !HasFailure(); i++) {
		std::string st;
		int status = 0;
		int64_t id = start(c, input, &st, &status);
		if (id) {
			acked.insert(id);
		} else {
			// A full disk is 53100 (disk_full, class 53): 503, try again.
			if (st == "53100") {
				EXPECT_EQ(status, 503) << "disk full answered " << status;
			}
			refused[st + " " + std::to_string(status)]++;
			n_refused++;
			std::this_thread::sleep_for(100ms);	// the full disk lasts a while
		}
	}
	ASSERT_FALSE(HasFailure());
	std::string summary;
	for (auto &[k, v] : refused) summary += k + "=" + std::to_string(v) + " ";
	std::fprintf(stderr, "full disk: %zu starts acknowledged, refused: %s\n", acked.size(), summary.c_str());
	ASSERT_FALSE(refused.empty()) << "the disk never filled";
	EXPECT_TRUE(refused.count("53100 503")) << "no start refused as disk full (53100, 503): " << summary;
	EXPECT_FALSE(acked.empty());
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a process exited on the full disk:\n" << p->log();

	// Room again: the same processes go on.
	ASSERT_TRUE(disk.grow("64m"));
	int64_t after = 0;
	EXPECT_TRUE(eventually([&] { return (after = start(c, json::object())) != 0; }, 30s));
	if (after) acked.insert(after);
	settle_and_check({acked, true, effects(), true}, 90s);
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a process exited:\n" << p->log();
	// A report refused by the full disk is not held (today: logged, and the
	// task runs again once its lease lapses), so a cut OnlyOnce task may end
	// in only_once.interrupted; nothing else fails.
	auto bad = query_rows(db_url_,
						  "SELECT id, status, coalesce(error, '') FROM {I} WHERE status <> 'succeeded' AND NOT "
						  "(status = 'failed' AND error = 'only_once.interrupted')");
	for (auto &r : bad) ADD_FAILURE() << "instance " << r[0] << " ended " << r[1] << " " << r[2];
	procs_.clear();
	integrity_ok();
}

TEST_F(Storage, HandlersScratchSpaceFullFailsTheTaskCleanly) {
	Tmpfs scratch("256k");
	if (!scratch.ok()) GTEST_SKIP() << "SKIP: " << scratch.error();
	db_url_ = dir_ + "/genroc.db";
	auto tool = script("scratch.sh", R"SH(cat >/dev/null
f=$(mktemp) && head -c 65536 /dev/zero > "$f" || { rm -f "$f"; exit 1; }
rm -f "$f"
echo '{"scratch":"ok"}')SH");
	handlers_ = handlers_file({{"scratch", tool}});
	auto s = store();
	s->define("scratchy", json::parse(R"({"StartAt":"Use","States":{
		"Use":{"Type":"Task","Resource":"handler:scratch","End":true}}})"));
	// Fill it.
	{
		std::ofstream fill(scratch.dir() + "/filler", std::ios::binary);
		std::string block(4096, 'f');
		for (int i = 0; i < 1024 && fill.write(block.data(), block.size()); i++) {
		}
	}
	procs_.push_back(worker("scratch-w1", {}, {{"TMPDIR", scratch.dir()}}));
	int64_t full = s->start("scratchy", json::object(), json::object()).instance_id;
	json f = wait_status(full, {"succeeded", "failed"}, 60s);
	EXPECT_EQ(f.value("status", ""), "failed") << f.dump();
	EXPECT_EQ(f.value("error", ""), "States.TaskFailed") << f.dump();
	EXPECT_NE(f.value("cause", "").find("No space left on device"), std::string::npos) << f.dump();

	// Room again: the same worker runs the next one.
	::unlink((scratch.dir() + "/filler").c_str());
	int64_t room = s->start("scratchy", json::object(), json::object()).instance_id;
	json r = wait_status(room, {"succeeded", "failed"}, 60s);
	EXPECT_EQ(r.value("status", ""), "succeeded") << r.dump();
	EXPECT_TRUE(procs_[0]->running()) << procs_[0]->log();
	for (auto &l : warnings_in(procs_[0]->log())) ADD_FAILURE() << "worker log: " << l;
	expect_invariants({{full, room}, true, "", true});
}

// `genroc api` whose writes and syncs fail at random (libfiu, switched on
// once it is up): every answer is an acknowledged start or a clean error;
// switched off, the same process goes on; the file is intact and holds every
// acknowledged start.
TEST_F(Storage, InjectedWriteAndFsyncErrorsAreReportedAndLoseNothing) {
	const std::string fiu = fiu_run();
	if (fiu.empty()) GTEST_SKIP() << "SKIP: fiu-run not installed (Debian package fiu-utils, scripts/deps.sh)";
	db_url_ = dir_ + "/genroc.db";
	define_job();
	int port = 0;
	procs_.push_back(api({fiu, "-x"}));
	ASSERT_TRUE(up(&port, *procs_[0])) << procs_[0]->log();
	const pid_t pid = procs_[0]->pid();
	const std::vector<std::string> points = {"posix/io/rw/pwrite", "posix/io/sync/fdatasync", "posix/io/sync/fsync"};
	std::vector<std::string> on, off;
	for (auto &p : points) {
		on.push_back("enable_random name=" + p + ",probability=" + (p.find("sync") != std::string::npos ? "0.3" : "0.05"));
		off.push_back("disable name=" + p);
	}
	ASSERT_TRUE(fiu_ctrl(pid, on)) << "fiu-ctrl could not reach the api";

	httplib::Client c("127.0.0.1", port);
	std::set<int64_t> acked;
	std::map<std::string, int> refused;
	const int n = scaled(150, 1000);
	for (int i = 0; i < n && !HasFailure(); i++) {
		std::string st;
		int64_t id = start(c, json{{"i", i}}, &st);
		if (id) acked.insert(id);
		else refused[st]++;
	}
	ASSERT_FALSE(HasFailure());
	std::string summary;
	for (auto &[k, v] : refused) summary += k + "=" + std::to_string(v) + " ";
	std::fprintf(stderr, "injected I/O errors: %zu starts acknowledged, refused: %s\n", acked.size(), summary.c_str());
	EXPECT_FALSE(refused.empty()) << "no injected error reached an answer";
	ASSERT_TRUE(procs_[0]->running()) << "the api died under I/O errors:\n" << procs_[0]->log();

	ASSERT_TRUE(fiu_ctrl(pid, off));
	int64_t after = 0;
	EXPECT_TRUE(eventually([&] { return (after = start(c, json::object())) != 0; }, 30s)) << procs_[0]->log();
	if (after) acked.insert(after);
	// Killed, not stopped: libfiu's control thread does not block SIGTERM, so
	// SIGTERM would end the process there anyway; a kill is the harder case
	// for the file.
	procs_[0]->signal(SIGKILL);
	ASSERT_TRUE(procs_[0]->wait(30s).has_value());
	procs_.clear();
	integrity_ok();
	expect_invariants({acked, true, "", true});
	// A worker then runs every one of them.
	procs_.push_back(worker("after-fiu"));
	settle_and_check({acked, true, effects(), true}, 90s);
}

// `genroc run` with write and sync errors from the start: each run ends with
// an exit code and a message (never a signal), and the file stays intact.  A
// report refused by an injected error is not held: that task runs again
// after its lease (10s) lapses, so a run may take that long.
TEST_F(Storage, GenrocRunUnderInjectedErrorsExitsCleanly) {
	const std::string fiu = fiu_run();
	if (fiu.empty()) GTEST_SKIP() << "SKIP: fiu-run not installed (Debian package fiu-utils, scripts/deps.sh)";
	db_url_ = dir_ + "/genroc.db";
	const std::string example = e2e_worker::source_dir() + "/examples/order.json";
	store();	// the file and its schema, so the checks below have a file to read
	int ok = 0, failed = 0;
	const int runs = scaled(4, 30);
	for (int i = 0; i < runs; i++) {
		Proc p({fiu, "-x", "-c", "enable_random name=posix/io/rw/pwrite,probability=0.02", "-c",
				"enable_random name=posix/io/sync/fdatasync,probability=0.2", "-c",
				"enable_random name=posix/io/sync/fsync,probability=0.2", e2e_worker::genroc_bin(), "run", example,
				"--database", db_url_, "--input", R"({"items":[{"sku":"a","qty":2}]})"},
			   {}, dir_ + "/run." + std::to_string(i) + ".log");
		auto st = p.wait(60s);
		ASSERT_TRUE(st.has_value()) << "genroc run did not end:\n" << p.log();
		ASSERT_TRUE(WIFEXITED(*st)) << "genroc run died of signal " << WTERMSIG(*st) << ":\n" << p.log();
		if (WEXITSTATUS(*st) == 0) {
			ok++;
		} else {
			failed++;
			EXPECT_FALSE(p.log().empty()) << "exit " << WEXITSTATUS(*st) << " without a message";
		}
	}
	std::fprintf(stderr, "genroc run under injected errors: %d succeeded, %d exited non-zero\n", ok, failed);
	integrity_ok();
	expect_invariants({{}, true, "", true});
}

}  // namespace
}  // namespace genroc::faults
