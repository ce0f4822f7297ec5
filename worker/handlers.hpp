// handlers.hpp — what runs a task: the built-ins, operator-configured command
// handlers (a handlers file), and in-process handlers an embedding program
// registers itself.  This is the public C++ API for embedding:
//
//   genroc::HandlerRegistry reg = genroc::HandlerRegistry::with_builtins();
//   reg.add("resize", [](const genroc::json &in, const genroc::TaskContext &ctx) {
//       return genroc::TaskResult::success({{"ok", true}});
//   });
//   // a Task with "Resource": "handler:resize" now runs that function.
//
// Glossary
//   resource   the Task's "Resource": "handler:NAME" or "genroc:noop|fail|sleep"
//   handler    what runs one resource; it returns a TaskResult
//   cancel     the worker's shutdown grace ran out: a handler stops at once and
//              its result is not reported (the lease is released instead)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "asl.hpp"

namespace genroc {

// A flag a handler polls or waits on; set once, never cleared.
class CancelToken {
  public:
	void cancel();
	bool cancelled() const { return flag_.load(); }
	// Waits until `deadline` or cancel(); true when cancelled.
	bool wait_until(std::chrono::steady_clock::time_point deadline) const;

  private:
	std::atomic<bool> flag_{false};
	mutable std::mutex m_;
	mutable std::condition_variable cv_;
};

struct TaskContext {
	int64_t instance_id = 0;
	std::string state;
	std::string resource;
	int attempt = 0;
	// The task's time limit (the handler's timeout, or TimeoutSeconds when
	// shorter); nullopt when neither sets one.
	std::optional<std::chrono::milliseconds> timeout;
	const CancelToken *cancel = nullptr;
};

// What a handler answers.  abandoned: it stopped on cancel and nothing is
// reported (the worker releases the lease so another worker runs it again).
struct TaskResult {
	enum class Kind { succeeded, failed, abandoned } kind = Kind::succeeded;
	json output;
	std::string error;
	std::string cause;

	static TaskResult success(json output) { return {Kind::succeeded, std::move(output), {}, {}}; }
	static TaskResult failure(std::string error, std::string cause) {
		return {Kind::failed, nullptr, std::move(error), std::move(cause)};
	}
	static TaskResult abandon() { return {Kind::abandoned, nullptr, {}, {}}; }
};

using Handler = std::function<TaskResult(const json &input, const TaskContext &ctx)>;

// One entry of a handlers file.
struct CommandSpec {
	std::string name;
	std::vector<std::string> argv;	// argv[0] resolved to an absolute path
	std::string sha256;				// lowercase hex of argv[0]'s content
	std::optional<std::chrono::milliseconds> timeout;
	std::string queue;				// empty: the instance's own queue
};

// Runs a command handler once: argv with `input` as JSON on stdin, in a
// process group of its own, killed (the whole group) at `timeout` or on
// `cancel`.  Exit 0 with JSON (or nothing) on stdout succeeds; anything else
// fails with Error/Cause from a JSON object on stdout, else
// States.TaskFailed and the tail of stderr.  Never throws for the
// command's own faults (cannot exec, bad output): those are failures.
TaskResult run_command(const CommandSpec &spec, const json &input, const TaskContext &ctx);

// Lowercase hex sha256 of a file; throws std::runtime_error naming the path.
std::string sha256_file(const std::string &path);

class HandlerRegistry {
  public:
	// A registry holding genroc:noop, genroc:fail and genroc:sleep.
	static HandlerRegistry with_builtins();

	// Registers (or replaces) the in-process handler for "handler:NAME".
	// queue: the queue this worker must serve for it (empty: none extra).
	void add(const std::string &name, Handler handler, const std::string &queue = "");

	// Loads a handlers file (see docs/handlers.md "The handlers file"): resolves each command,
	// hashes its executable and refuses (std::runtime_error naming the handler
	// and the file) a missing file, bad JSON, an unknown key, or a sha256 that
	// does not match.
	void load_file(const std::string &path);

	// The handler for a Task's resource, or nullptr.
	const Handler *find(const std::string &resource) const;

	// The extra queues the handlers ask this worker to serve, sorted, unique.
	std::vector<std::string> queues() const;
	// Names of the registered "handler:NAME" handlers (for the startup log).
	std::vector<std::string> names() const;
	// (handler NAME, queue) for each handler with a queue of its own, by name.
	std::vector<std::pair<std::string, std::string>> handler_queues() const;

	// Runs `resource` (the built-in or handler) and maps a missing handler to
	// genroc.HandlerMissing and an exception thrown by an in-process handler
	// to States.TaskFailed with its message.
	TaskResult run(const std::string &resource, const json &input, const TaskContext &ctx) const;

  private:
	struct Entry {
		Handler handler;
		std::string queue;
	};
	std::map<std::string, Entry> by_resource_;	// keyed by the full resource text
};

}  // namespace genroc
