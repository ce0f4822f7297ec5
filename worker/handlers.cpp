// handlers.cpp — built-ins, the handlers file, and running a command handler
// as a child process (see handlers.hpp).
//
// A command runs in a process group of its own so that a timeout or a
// shutdown kills everything it started, not only its first process.  The
// worker is multi-threaded, so the child does only async-signal-safe work
// between fork() and exec(): everything it needs (argv, envp) is built first.
#include "handlers.hpp"

#include "limits.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include "duration.hpp"

extern char **environ;

namespace genroc {

// ---------------------------------------------------------------- CancelToken

void CancelToken::cancel() {
	{
		std::lock_guard<std::mutex> g(m_);
		flag_ = true;
	}
	cv_.notify_all();
}

bool CancelToken::wait_until(std::chrono::steady_clock::time_point deadline) const {
	std::unique_lock<std::mutex> g(m_);
	return cv_.wait_until(g, deadline, [&] { return flag_.load(); });
}

// ---------------------------------------------------------------- sha256

std::string sha256_file(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
	std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
	if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
		throw std::runtime_error("sha256: cannot initialise the digest");
	std::vector<char> buf(1 << 16);
	while (in) {
		in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
		if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
	}
	if (in.bad()) throw std::runtime_error("cannot read " + path);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_DigestFinal_ex(ctx.get(), md, &len);
	static const char hex[] = "0123456789abcdef";
	std::string out;
	for (unsigned i = 0; i < len; ++i) {
		out += hex[md[i] >> 4];
		out += hex[md[i] & 15];
	}
	return out;
}

// ---------------------------------------------------------------- run_command

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStdoutMax = 64u << 20;	// a result bigger than this is a fault
constexpr size_t kStderrTail = 4096;		// the Cause keeps the end of stderr

struct Fd {
	int fd = -1;
	Fd() = default;
	explicit Fd(int f) : fd(f) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	~Fd() { reset(); }
	void reset() {
		if (fd >= 0) ::close(fd);
		fd = -1;
	}
};

bool make_pipe(Fd &r, Fd &w) {
	int p[2];
	if (::pipe2(p, O_CLOEXEC) != 0) return false;
	r.fd = p[0];
	w.fd = p[1];
	return true;
}

std::string describe_status(int status) {
	if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
	if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
	return "ended with status " + std::to_string(status);
}

std::string trim(const std::string &s) {
	size_t b = s.find_first_not_of(" \t\r\n");
	if (b == std::string::npos) return "";
	size_t e = s.find_last_not_of(" \t\r\n");
	return s.substr(b, e - b + 1);
}

}  // namespace

TaskResult run_command(const CommandSpec &spec, const json &input, const TaskContext &ctx) {
	const std::string what = "handler " + spec.name;
	if (spec.argv.empty()) return TaskResult::failure("States.TaskFailed", what + " has no command");

	// Everything the child needs, built before fork().
	std::vector<std::string> env_store;
	for (char **e = environ; e && *e; ++e) {
		std::string kv = *e;
		if (kv.rfind("GENROC_INSTANCE_ID=", 0) == 0 || kv.rfind("GENROC_STATE=", 0) == 0 ||
			kv.rfind("GENROC_ATTEMPT=", 0) == 0)
			continue;
		env_store.push_back(std::move(kv));
	}
	// The handler may key its side effects on these (idempotency).
	env_store.push_back("GENROC_INSTANCE_ID=" + std::to_string(ctx.instance_id));
	env_store.push_back("GENROC_STATE=" + ctx.state);
	env_store.push_back("GENROC_ATTEMPT=" + std::to_string(ctx.attempt));
	std::vector<char *> envp, argv;
	for (auto &s : env_store) envp.push_back(s.data());
	envp.push_back(nullptr);
	std::vector<std::string> argv_store = spec.argv;
	for (auto &s : argv_store) argv.push_back(s.data());
	argv.push_back(nullptr);
	const std::string stdin_text = input.dump();

	Fd in_r, in_w, out_r, out_w, err_r, err_w, exec_r, exec_w;
	if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w) ||
		!make_pipe(exec_r, exec_w))
		return TaskResult::failure("States.TaskFailed",
								   what + ": cannot create pipes: " + std::strerror(errno));

	const pid_t parent = ::getpid();
	pid_t pid = ::fork();
	if (pid < 0)
		return TaskResult::failure("States.TaskFailed", what + ": fork failed: " + std::strerror(errno));
	if (pid == 0) {
		// Child: async-signal-safe calls only.
		::setpgid(0, 0);
		// A worker killed outright takes its command with it: the task runs
		// again elsewhere, and must not also go on running here.
		::prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (::getppid() != parent) ::_exit(127);
		sigset_t none;
		sigemptyset(&none);
		::sigprocmask(SIG_SETMASK, &none, nullptr);	// the worker blocks SIGTERM/SIGINT
		::signal(SIGPIPE, SIG_DFL);
		::signal(SIGTERM, SIG_DFL);
		::signal(SIGINT, SIG_DFL);
		::dup2(in_r.fd, 0);
		::dup2(out_w.fd, 1);
		::dup2(err_w.fd, 2);
		::execve(argv[0], argv.data(), envp.data());
		int e = errno;
		ssize_t ignored = ::write(exec_w.fd, &e, sizeof e);
		(void)ignored;
		::_exit(127);
	}
	// Parent.  Set the group here too: whichever of the two runs first wins
	// the race, and a kill(-pid) right after fork() must find the group.
	::setpgid(pid, pid);
	in_r.reset();
	out_w.reset();
	err_w.reset();
	exec_w.reset();

	// exec_r reads EOF when exec succeeded (CLOEXEC), or the child's errno.
	int exec_errno = 0;
	ssize_t n = ::read(exec_r.fd, &exec_errno, sizeof exec_errno);
	if (n == static_cast<ssize_t>(sizeof exec_errno)) {
		int status = 0;
		::waitpid(pid, &status, 0);
		return TaskResult::failure("States.TaskFailed", what + ": cannot run " + spec.argv[0] +
															": " + std::strerror(exec_errno));
	}

	// Writing to a command that exited without reading its input raises
	// SIGPIPE in this thread; block it here (whatever the embedding program
	// does with SIGPIPE) and take any pending one away before unblocking.
	sigset_t pipe_set, old_mask;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	struct RestoreMask {
		sigset_t set, old;
		~RestoreMask() {
			sigset_t pending;
			sigpending(&pending);
			if (sigismember(&pending, SIGPIPE) && !sigismember(&old, SIGPIPE)) {
				struct timespec zero = {0, 0};
				::sigtimedwait(&set, nullptr, &zero);
			}
			::pthread_sigmask(SIG_SETMASK, &old, nullptr);
		}
	} restore{pipe_set, old_mask};

	::fcntl(in_w.fd, F_SETFL, O_NONBLOCK);
	::fcntl(out_r.fd, F_SETFL, O_NONBLOCK);
	::fcntl(err_r.fd, F_SETFL, O_NONBLOCK);

	const auto started = Clock::now();
	std::optional<Clock::time_point> deadline;
	if (ctx.timeout) deadline = started + *ctx.timeout;

	std::string out, err;
	size_t written = 0;
	bool exited = false, too_big = false, timed_out = false, cancelled = false;
	if (stdin_text.empty()) in_w.reset();

	std::optional<Clock::time_point> ended_at;
	auto kill_group = [&] {
		::kill(-pid, SIGKILL);
		if (!ended_at) ended_at = Clock::now();
	};

	while (true) {
		// Has the child ended?  WNOWAIT keeps it a zombie, so its pid (and so
		// its group id) cannot be reused before the group is killed below.
		if (!exited) {
			siginfo_t si{};
			if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
				si.si_pid == pid) {
				exited = true;
				// Whatever it left behind in its group ends with it; otherwise a
				// grandchild holding stdout open would keep us reading forever.
				kill_group();
			}
		}
		if (out_r.fd < 0 && err_r.fd < 0 && exited) break;
		// A process that left the group (setsid) may hold the pipes open
		// after the command ended; stop reading after a moment.
		if (ended_at && Clock::now() - *ended_at > std::chrono::seconds(2)) break;
		if (!exited) {
			if (ctx.cancel && ctx.cancel->cancelled()) {
				cancelled = true;
				kill_group();
				exited = true;
				continue;
			}
			if (deadline && Clock::now() >= *deadline) {
				timed_out = true;
				kill_group();
				exited = true;
				continue;
			}
		}

		pollfd fds[3];
		int nfds = 0;
		int idx_in = -1, idx_out = -1, idx_err = -1;
		if (in_w.fd >= 0) { idx_in = nfds; fds[nfds++] = {in_w.fd, POLLOUT, 0}; }
		if (out_r.fd >= 0) { idx_out = nfds; fds[nfds++] = {out_r.fd, POLLIN, 0}; }
		if (err_r.fd >= 0) { idx_err = nfds; fds[nfds++] = {err_r.fd, POLLIN, 0}; }
		// Short slices: the child's exit, the deadline and cancel are checked
		// between them (there is no fd for those without a pidfd).
		int rc = ::poll(fds, static_cast<nfds_t>(nfds), nfds ? 20 : 0);
		if (nfds == 0) {
			if (!exited) {
				struct timespec ts = {0, 20'000'000};
				::nanosleep(&ts, nullptr);
			}
			continue;
		}
		if (rc < 0) {
			if (errno == EINTR) continue;
			kill_group();
			exited = true;
			break;
		}
		if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = ::write(in_w.fd, stdin_text.data() + written, stdin_text.size() - written);
			if (w > 0) written += static_cast<size_t>(w);
			// EPIPE: the command does not read its input; that is its business.
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_text.size())
				in_w.reset();
		}
		char buf[65536];
		if (idx_out >= 0 && (fds[idx_out].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t r = ::read(out_r.fd, buf, sizeof buf);
			if (r > 0) {
				out.append(buf, static_cast<size_t>(r));
				if (out.size() > kStdoutMax) {
					too_big = true;
					kill_group();
					exited = true;
					out_r.reset();
				}
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				out_r.reset();
			}
		}
		if (idx_err >= 0 && (fds[idx_err].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t r = ::read(err_r.fd, buf, sizeof buf);
			if (r > 0) {
				err.append(buf, static_cast<size_t>(r));
				if (err.size() > 2 * kStderrTail) err.erase(0, err.size() - kStderrTail);
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				err_r.reset();
			}
		}
	}
	int status = 0;
	while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}

	if (cancelled) return TaskResult::abandon();
	if (timed_out)
		return TaskResult::failure("States.Timeout",
								   what + " timed out after " + format_duration(*ctx.timeout));
	if (too_big)
		return TaskResult::failure("States.TaskFailed",
								   what + " wrote more than " + std::to_string(kStdoutMax >> 20) +
									   " MB to stdout");
	if (err.size() > kStderrTail) err.erase(0, err.size() - kStderrTail);

	const std::string body = trim(out);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (body.empty()) return TaskResult::success(nullptr);
		try {
			json output = json::parse(body);  // iterative; copies and dump() recurse
			try {
				limits::check_json_depth(output, what + "'s output");
			} catch (const Error &e) {
				return TaskResult::failure("States.DataLimitExceeded", e.what());
			}
			return TaskResult::success(std::move(output));
		} catch (const json::parse_error &e) {
			return TaskResult::failure("States.TaskFailed",
									   what + " succeeded but its stdout is not JSON: " + e.what());
		}
	}
	// A failure: Error/Cause from a JSON object on stdout when there is one.
	if (!body.empty()) {
		json j = json::parse(body, nullptr, false);
		if (!limits::within_depth(j, limits::JSON_DEPTH)) j = nullptr;  // read as no Error/Cause
		if (j.is_object() && j.contains("Error") && j["Error"].is_string()) {
			std::string cause;
			if (j.contains("Cause"))
				cause = j["Cause"].is_string() ? j["Cause"].get<std::string>() : j["Cause"].dump();
			return TaskResult::failure(j["Error"].get<std::string>(), cause);
		}
	}
	std::string cause = trim(err);
	if (cause.empty()) cause = what + ": " + describe_status(status);
	return TaskResult::failure("States.TaskFailed", cause);
}

// ---------------------------------------------------------------- built-ins

namespace {

TaskResult builtin_noop(const json &input, const TaskContext &) { return TaskResult::success(input); }

TaskResult builtin_fail(const json &input, const TaskContext &) {
	std::string error = "States.TaskFailed", cause;
	if (input.is_object()) {
		if (input.contains("Error") && input["Error"].is_string()) error = input["Error"];
		if (input.contains("Cause"))
			cause = input["Cause"].is_string() ? input["Cause"].get<std::string>() : input["Cause"].dump();
	}
	return TaskResult::failure(error, cause);
}

// Waits input.Seconds, then returns its input.  A shutdown whose grace runs
// out cancels the wait; a timeout shorter than the wait fails it.
TaskResult builtin_sleep(const json &input, const TaskContext &ctx) {
	if (!input.is_object() || !input.contains("Seconds") || !input["Seconds"].is_number() ||
		input["Seconds"].get<double>() < 0)
		return TaskResult::failure("States.TaskFailed",
								   "genroc:sleep needs a non-negative number \"Seconds\" in its input");
	auto want = std::chrono::milliseconds(
		static_cast<int64_t>(input["Seconds"].get<double>() * 1000.0));
	bool times_out = ctx.timeout && *ctx.timeout < want;
	auto deadline = Clock::now() + (times_out ? *ctx.timeout : want);
	static const CancelToken never;
	const CancelToken &cancel = ctx.cancel ? *ctx.cancel : never;
	if (cancel.wait_until(deadline)) return TaskResult::abandon();
	if (times_out)
		return TaskResult::failure("States.Timeout",
								   "genroc:sleep timed out after " + format_duration(*ctx.timeout));
	return TaskResult::success(input);
}

// A file's identity, to notice an executable replaced after it was hashed.
struct FileId {
	dev_t dev = 0;
	ino_t ino = 0;
	off_t size = 0;
	int64_t mtime_ns = 0;
	bool operator==(const FileId &) const = default;
};

std::optional<FileId> file_id(const std::string &path) {
	struct stat st;
	if (::stat(path.c_str(), &st) != 0) return std::nullopt;
	return FileId{st.st_dev, st.st_ino, st.st_size,
				  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

std::string resolve_executable(const std::string &cmd, const std::string &base_dir) {
	auto runnable = [](const std::string &p) {
		struct stat st;
		return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
	};
	if (cmd.empty()) return "";
	if (cmd[0] == '/') return runnable(cmd) ? cmd : "";
	if (cmd.find('/') != std::string::npos) {
		// Relative paths are relative to the handlers file, not to wherever
		// the worker happens to be started.
		std::string p = base_dir + "/" + cmd;
		char real[PATH_MAX];
		if (runnable(p) && ::realpath(p.c_str(), real)) return real;
		return "";
	}
	const char *path = std::getenv("PATH");
	std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
	size_t start = 0;
	while (start <= dirs.size()) {
		size_t end = dirs.find(':', start);
		if (end == std::string::npos) end = dirs.size();
		std::string dir = dirs.substr(start, end - start);
		if (!dir.empty() && runnable(dir + "/" + cmd)) return dir + "/" + cmd;
		start = end + 1;
	}
	return "";
}

}  // namespace

// ---------------------------------------------------------------- registry

HandlerRegistry HandlerRegistry::with_builtins() {
	HandlerRegistry r;
	r.by_resource_["genroc:noop"] = {builtin_noop, ""};
	r.by_resource_["genroc:fail"] = {builtin_fail, ""};
	r.by_resource_["genroc:sleep"] = {builtin_sleep, ""};
	return r;
}

void HandlerRegistry::add(const std::string &name, Handler handler, const std::string &queue) {
	if (name.empty()) throw std::invalid_argument("handler name must not be empty");
	by_resource_["handler:" + name] = {std::move(handler), queue};
}

void HandlerRegistry::load_file(const std::string &path) {
	std::ifstream in(path);
	if (!in) throw std::runtime_error("handlers file " + path + ": " + std::strerror(errno));
	json doc;
	try {
		doc = json::parse(in);
	} catch (const json::parse_error &e) {
		throw std::runtime_error("handlers file " + path + ": not JSON: " + e.what());
	}
	auto fault = [&](const std::string &where, const std::string &msg) {
		return std::runtime_error("handlers file " + path + ": " + where + ": " + msg);
	};
	if (!doc.is_object()) throw fault("$", "must be an object");
	for (auto &[k, v] : doc.items())
		if (k != "handlers") throw fault("$." + k, "unknown key");
	if (!doc.contains("handlers") || !doc["handlers"].is_object())
		throw fault("$.handlers", "must be an object of handler name -> {command, sha256, timeout, queue}");

	std::string base_dir = ".";
	if (auto slash = path.rfind('/'); slash != std::string::npos) base_dir = path.substr(0, slash);
	if (base_dir.empty()) base_dir = "/";

	for (auto &[name, h] : doc["handlers"].items()) {
		const std::string where = "handler \"" + name + "\"";
		if (name.empty()) throw fault("$.handlers", "a handler name must not be empty");
		if (!h.is_object()) throw fault(where, "must be an object");
		CommandSpec spec;
		spec.name = name;
		for (auto &[k, v] : h.items()) {
			if (k == "command") {
				if (!v.is_array() || v.empty()) throw fault(where, "command must be a non-empty array of strings");
				for (auto &a : v) {
					if (!a.is_string()) throw fault(where, "command must be a non-empty array of strings");
					spec.argv.push_back(a.get<std::string>());
				}
			} else if (k == "sha256") {
				if (!v.is_string()) throw fault(where, "sha256 must be a string of 64 hex digits");
				spec.sha256 = v.get<std::string>();
				std::transform(spec.sha256.begin(), spec.sha256.end(), spec.sha256.begin(),
							   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
				if (spec.sha256.size() != 64 ||
					spec.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
					throw fault(where, "sha256 must be a string of 64 hex digits");
			} else if (k == "timeout") {
				auto d = v.is_string() ? parse_duration(v.get<std::string>()) : std::nullopt;
				if (!d || d->count() <= 0)
					throw fault(where, "timeout must be a positive duration such as \"30s\"");
				spec.timeout = *d;
			} else if (k == "queue") {
				if (!v.is_string() || v.get<std::string>().empty())
					throw fault(where, "queue must be a non-empty string");
				spec.queue = v.get<std::string>();
			} else {
				throw fault(where, "unknown key \"" + k + "\"");
			}
		}
		if (spec.argv.empty()) throw fault(where, "command is required");
		if (spec.sha256.empty())
			throw fault(where, "sha256 is required (sha256sum of the executable)");
		std::string exe = resolve_executable(spec.argv[0], base_dir);
		if (exe.empty()) throw fault(where, "no executable file " + spec.argv[0]);
		spec.argv[0] = exe;
		std::string actual = sha256_file(exe);
		if (actual != spec.sha256)
			throw fault(where, "sha256 of " + exe + " is " + actual + ", the file says " + spec.sha256 +
								   "; refusing to run a changed executable");

		// Checked again before each run when the file looks different (a new
		// inode, size or mtime), so a binary swapped after start is refused too.
		auto id = std::make_shared<std::optional<FileId>>(file_id(exe));
		auto id_lock = std::make_shared<std::mutex>();
		Handler handler = [spec, id, id_lock](const json &input, const TaskContext &ctx) -> TaskResult {
			{
				std::lock_guard<std::mutex> g(*id_lock);
				auto now_id = file_id(spec.argv[0]);
				if (!now_id || !(*id) || !(**id == *now_id)) {
					std::string actual;
					try {
						actual = sha256_file(spec.argv[0]);
					} catch (const std::exception &e) {
						return TaskResult::failure("States.TaskFailed", "handler " + spec.name + ": " + e.what());
					}
					if (actual != spec.sha256)
						return TaskResult::failure(
							"States.TaskFailed", "handler " + spec.name + ": sha256 of " + spec.argv[0] +
													 " changed to " + actual + "; refusing to run it");
					*id = now_id;
				}
			}
			TaskContext c = ctx;
			if (spec.timeout && (!c.timeout || *spec.timeout < *c.timeout)) c.timeout = spec.timeout;
			return run_command(spec, input, c);
		};
		by_resource_["handler:" + name] = {std::move(handler), spec.queue};
	}
}

const Handler *HandlerRegistry::find(const std::string &resource) const {
	auto it = by_resource_.find(resource);
	return it == by_resource_.end() ? nullptr : &it->second.handler;
}

std::vector<std::string> HandlerRegistry::queues() const {
	std::set<std::string> qs;
	for (auto &[_, e] : by_resource_)
		if (!e.queue.empty()) qs.insert(e.queue);
	return {qs.begin(), qs.end()};
}

std::vector<std::pair<std::string, std::string>> HandlerRegistry::handler_queues() const {
	std::vector<std::pair<std::string, std::string>> out;
	for (auto &[r, e] : by_resource_)
		if (r.rfind("handler:", 0) == 0 && !e.queue.empty()) out.emplace_back(r.substr(8), e.queue);
	return out;
}

std::vector<std::string> HandlerRegistry::names() const {
	std::vector<std::string> out;
	for (auto &[r, _] : by_resource_)
		if (r.rfind("handler:", 0) == 0) out.push_back(r.substr(8));
	return out;
}

TaskResult HandlerRegistry::run(const std::string &resource, const json &input,
								const TaskContext &ctx) const {
	const Handler *h = find(resource);
	if (!h)
		return TaskResult::failure("genroc.HandlerMissing",
								   "this worker has no handler for \"" + resource + "\"");
	try {
		return (*h)(input, ctx);
	} catch (const std::exception &e) {
		return TaskResult::failure("States.TaskFailed", resource + ": " + e.what());
	}
}

}  // namespace genroc
