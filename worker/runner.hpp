// runner.hpp — the worker loop: register, claim, run, renew, report, tick,
// and drain on shutdown (the leases given back, the running tasks finished).
//
// Threads
//   the loop       registers, claims up to the free slots, ticks, waits for
//                  work (LISTEN on PostgreSQL, with polling as the backstop)
//   the renewer    every lease_duration/3 renews all running leases in one
//                  call (or heartbeats when there are none) and records when
//                  it last succeeded, for /healthz lease_age_ms
//   task threads   one per running task, kept for the next task when it
//                  ends (Runner::Threads): runs the handler, then reports
//                  with the lease epoch the claim gave it: a success is
//                  queued (Runner::Reports) and the thread moves on, the
//                  queued ones going in one complete_many per batch, one
//                  batch in the database at a time, sent by the thread that
//                  found none there; a failure, or any report while
//                  draining, is sent by its own thread (complete()/fail())
// A Store is one connection and not thread-safe: the loop and the renewer
// each open their own, the task threads share a pool of them.
//
// Call chain: Runner::run -> Store::worker_register / claim / renew /
// complete / fail / tick / release / worker_stop -> genroc.* SQL functions
// (PgStore) or the SQLite shim.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "duration.hpp"
#include "handlers.hpp"
#include "stop.hpp"
#include "store.hpp"

namespace genroc {

using StoreFactory = std::function<std::unique_ptr<Store>()>;

struct WorkerOptions {
	std::string worker_id;
	std::string host;						// shown to a second claimant of the id
	Millis lease_duration{10'000};
	Millis stale_after{30'000};
	Millis shutdown_grace{15'000};
	int concurrency = 16;
	// Tasks claimed beyond the free slots, held leased (and renewed) in the
	// worker until a slot frees: bigger claims, fewer round trips.
	// 0: claim only what the free slots run now.
	int prefetch = 0;
	std::vector<std::string> queues;		// final list, handler queues included
	bool manual_tick = false;
	bool pooled = false;					// registered "pooled": liveness by heartbeat only
	Millis tick_interval{1'000};
	Millis poll_interval{1'000};
	// How often the loop looks for queues with ready tasks that no live
	// worker serves, and warns about each (0: never).
	Millis unserved_check{60'000};
	// How often the tasks done since the last summary are logged at info
	// (each task's own line is at debug); 0: never, but at stop.
	Millis summary_interval{60'000};
};

class Runner {
  public:
	Runner(WorkerOptions options, const HandlerRegistry &handlers, StoreFactory open_store);
	~Runner();
	Runner(const Runner &) = delete;
	Runner &operator=(const Runner &) = delete;

	// Runs until `stop` is requested, then drains and returns the exit code:
	// 0 after a clean stop, 1 when a live worker holds the worker id (its
	// session or lock proves it; or, when that cannot tell, it stays held
	// past stale_after), or registration fails for good.  Transient database
	// errors never end it: it waits them out with back-off.
	int run(const StopFlag &stop);

	// Milliseconds since the leases were last renewed (or the worker
	// registered); -1 before registration.
	int64_t lease_age_ms() const;

	// For genroc run and tests: how many tasks run right now.
	int running() const;

  private:
	struct Slot;
	bool register_worker(Store &store, const StopFlag &stop, bool first);
	void renew_loop();
	void run_task(std::shared_ptr<Slot> slot);
	// Reports the result; the instance's next task when the store handed it
	// back to this worker (Store::complete_and_claim), to run in the same slot.
	std::optional<Task> report(Slot &slot, const TaskResult &result);
	void note_reported(const Slot &slot, const TaskResult &result, const std::string &status);
	class Reports;
	struct ReportEntry;
	void settle(std::vector<ReportEntry> &batch, std::vector<std::optional<Store::Outcome>> outcomes);
	int running_locked() const;	// running(), m_ held
	bool want_claim(int held) const;	// claim now, `held` tasks running or waiting?
	void reap();
	void drain();
	// Reads list_queues: warns about unserved queues (when `warn`) and
	// notes whether a queue this worker serves has a rate_limit or a
	// partition_rate_limit.
	void look_at_queues(Store &store, bool warn);
	// A served queue has a rate_limit or a partition_rate_limit
	// (look_at_queues): before waiting, ask claim_wake when a window opens.  True until the first look.
	bool rate_limited_ = true;
	std::string id_in_use_hint() const;
	void summarize();

	class Pool;
	class Threads;

	WorkerOptions opt_;
	const HandlerRegistry &handlers_;
	StoreFactory open_store_;
	std::unique_ptr<Pool> pool_;
	std::unique_ptr<Reports> reports_;	// successful reports, batched (uses pool_)

	mutable std::mutex m_;
	std::condition_variable slots_cv_;				// a task finished
	// By claim number, not instance id: the next task of an instance can be
	// claimed while the thread that reported the previous one still ends.
	std::map<uint64_t, std::shared_ptr<Slot>> slots_;
	uint64_t next_slot_ = 0;
	std::atomic<int64_t> last_renew_ms_{-1};		// steady clock, ms
	StopFlag renewer_stop_;
	std::thread renewer_;
	std::atomic<bool> need_register_{false};
	// worker_drain asked this worker to drain (its heartbeat says so, read
	// on the renew thread's turn or when a NOTIFY genroc_drain woke the
	// loop): claim nothing more, finish, stop
	std::atomic<bool> drain_requested_{false};
	void note_drain(const char *how);
	std::atomic<bool> stopping_{false};	// draining: reports take no next task
	std::atomic<const StopFlag *> stop_flag_{nullptr};	 // run()'s, for the task threads
	bool registered_ = false;	// the id is ours: worker_stop it at the end
	std::atomic<int64_t> tasks_succeeded_{0}, tasks_failed_{0};	// reported, in all
	int64_t summarized_succeeded_ = 0, summarized_failed_ = 0;	// as of the last summary (the loop's)
	// Last: destroyed first, so the task threads end before the state they use.
	std::unique_ptr<Threads> threads_;
};

}  // namespace genroc
