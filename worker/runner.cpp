// runner.cpp — the worker loop (see runner.hpp for the threads and the call chain).
#include "runner.hpp"

#include "limits.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>

#include "log.hpp"
#include "metrics.hpp"
#include "queue_health.hpp"

namespace genroc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a restart retries a holder proven alive before it gives up: the
// server ends a killed client's session a moment after the kill.
constexpr Millis kAliveGrace{2'000};

int64_t steady_ms() {
	return std::chrono::duration_cast<Millis>(Clock::now().time_since_epoch()).count();
}

json error_fields(const Error &e) { return {{"sqlstate", e.sqlstate}, {"error", e.what()}}; }

}  // namespace

struct Runner::Slot {
	Task task;
	Clock::time_point claimed_at;		 // genroc_step_duration_seconds
	CancelToken cancel;
	std::atomic<bool> finished{false};	 // its thread has nothing left to do
	std::atomic<bool> abandoned{false};	 // stopped unreported: release its lease
	std::atomic<bool> lost{false};		 // renew no longer returns it
	// A success its batch of reports did not take (Reports): run_task
	// sends it alone before anything else.
	std::optional<TaskResult> unreported;
};

// The task threads, kept for the next task.  A thread made and ended per
// task cost the process more CPU than a task that does nothing (creating
// it, mapping and unmapping its stack, and the TLB flushes the unmapping
// sends to the other cores, PostgreSQL's included).  At most
// `active` threads run handlers (--concurrency); a slot runs on an idle
// thread, or on a new one when no idle thread is free and fewer than
// `active` threads are at work; else it waits in the queue (a prefetched
// task).  Each queued slot that may start is handed to one thread by a
// ticket (State::tickets): an idle thread woken for a slot holds one until
// it takes the slot, so the next slot of the same claim sees that thread
// taken and goes to another idle thread or a new one.  Counting only the
// threads waiting (which change when a woken thread runs, later) handed
// every slot of a claimed batch to the same one idle thread, and the rest
// waited for a running task to end while places were free.
// A thread that waits for its report's commit steps aside (step_aside):
// it no longer counts, and the next queued slot starts on an idle or new
// thread (never more than `most` threads in all: --concurrency +
// --prefetch); after its report it counts again (step_back, which waits
// for a place when it has a handed-back task to run).  Threads end only at
// stop().  Their state is shared with them, so a thread left running a
// handler that ignores cancel (stop(true)) can still end after the Runner.
class Runner::Threads {
  public:
	Threads(std::function<void(std::shared_ptr<Slot>)> run, int active, int most)
		: st_(std::make_shared<State>()), most_(std::max(active, most)) {
		st_->run = std::move(run);
		st_->max_active = active;
	}
	~Threads() { stop(false); }

	void start(std::shared_ptr<Slot> slot) {
		std::lock_guard<std::mutex> g(st_->m);
		st_->queue.push_back(std::move(slot));
		dispatch();
	}

	// The calling task thread waits for something other than a handler
	// (its report's commit): its place goes to a thread stepping back with
	// a handed-back task, else to the next queued slot.
	void step_aside() {
		std::lock_guard<std::mutex> g(st_->m);
		--st_->active;
		dispatch();
	}
	// The same thread again, after step_aside: with a task to run (`run`)
	// it waits for a place (those stepping back go before queued slots not
	// yet handed to a thread); without, it only counts again until it
	// returns to its loop.
	void step_back(bool run) {
		std::unique_lock<std::mutex> g(st_->m);
		if (run && !place_free(*st_) && !st_->stopping) {
			++st_->back_waiting;
			st_->back.wait(g, [&] { return place_free(*st_) || st_->stopping; });
			--st_->back_waiting;
		}
		++st_->active;
		dispatch();	 // a place may be left for a queued slot
	}

	// Ends the threads once the queue is empty: joined, or (`detach`) left
	// to end on their own, for a handler still running past the grace.
	void stop(bool detach) {
		{
			std::lock_guard<std::mutex> g(st_->m);
			st_->stopping = true;
			// prefetched tasks no thread took (their leases were released):
			// a detached thread must not start one after the Runner is gone
			if (detach) st_->queue.clear();
		}
		st_->cv.notify_all();
		st_->back.notify_all();
		for (auto &t : threads_) {
			if (!t.joinable()) continue;
			if (detach) t.detach();
			else t.join();
		}
		threads_.clear();
	}

  private:
	struct State {
		std::function<void(std::shared_ptr<Slot>)> run;
		std::mutex m;
		std::condition_variable cv;	   // idle threads: a ticket was given
		std::condition_variable back;  // step_back: a place is free
		std::deque<std::shared_ptr<Slot>> queue;
		int idle = 0;		   // waiting for a ticket (a new thread counts from its making)
		int tickets = 0;	   // queued slots handed to an idle thread that has not taken one yet
		int active = 0;		   // took a slot and did not step aside
		int back_waiting = 0;  // in step_back, waiting for a place
		int max_active = 1;
		bool stopping = false;
	};
	// A place nobody is on the way to: the tickets given are places taken.
	static bool place_free(const State &st) { return st.active + st.tickets < st.max_active; }
	// Queued slots that may start now and have no thread yet (none while
	// one stepping back waits for a place: it goes first).
	static int startable(const State &st) {
		if (st.stopping || st.back_waiting > 0) return 0;
		const int waiting = static_cast<int>(st.queue.size()) - st.tickets;
		const int places = st.max_active - st.active - st.tickets;
		return std::max(0, std::min(waiting, places));
	}
	// Under st.m: gives tickets to idle threads with none, for the slots
	// that may start; returns how many slots are still without a thread.
	// `self`: the calling thread is idle and about to wait, so the first
	// ticket is its own (no wake-up needed).
	static int hand_out(State &st, bool self) {
		int n = startable(st);
		for (; n > 0 && st.idle > st.tickets; --n) {
			++st.tickets;
			if (self) self = false;
			else st.cv.notify_one();
		}
		return n;
	}
	// Under st_->m, after a place was freed or a slot queued: who may go.
	void dispatch() {
		if (st_->stopping) {
			st_->cv.notify_all();
			return;
		}
		if (st_->back_waiting > 0) {
			if (place_free(*st_)) st_->back.notify_one();
			return;
		}
		// the slots no idle thread is free for: a new thread each, while
		// there may be more
		for (int n = hand_out(*st_, false); n > 0 && static_cast<int>(threads_.size()) < most_; --n) {
			++st_->idle;
			++st_->tickets;
			threads_.emplace_back(loop, st_);
		}
	}
	static void loop(std::shared_ptr<State> st) {
		std::unique_lock<std::mutex> g(st->m);
		for (;;) {
			// idle counted already: by dispatch when it made this thread, or
			// below when its last slot ended
			st->cv.wait(g, [&] { return st->tickets > 0 || st->stopping; });
			--st->idle;
			// stopping: the slots left are taken whatever the count (run_task
			// runs no handler then), and the thread ends when none is left
			if (st->stopping) {
				if (st->queue.empty()) return;
			} else {
				--st->tickets;
				if (st->queue.empty()) {  // not expected: a ticket is a queued slot
					++st->idle;
					continue;
				}
			}
			auto slot = std::move(st->queue.front());
			st->queue.pop_front();
			++st->active;
			g.unlock();
			st->run(std::move(slot));
			g.lock();
			--st->active;
			++st->idle;
			// its place: to one stepping back first, else to the next queued
			// slot (this thread's own ticket, then idle ones')
			if (st->back_waiting > 0) {
				if (place_free(*st)) st->back.notify_one();
			} else if (!st->stopping) {
				hand_out(*st, true);
			}
		}
	}
	std::shared_ptr<State> st_;
	const int most_;
	std::vector<std::thread> threads_;
};

// Stores for the task threads, opened on demand and kept for reuse.
class Runner::Pool {
  public:
	explicit Pool(StoreFactory open) : open_(std::move(open)) {}
	std::unique_ptr<Store> take() {
		{
			std::lock_guard<std::mutex> g(m_);
			if (!free_.empty()) {
				auto s = std::move(free_.back());
				free_.pop_back();
				return s;
			}
		}
		return open_();
	}
	void give(std::unique_ptr<Store> s) {
		if (!s) return;
		std::lock_guard<std::mutex> g(m_);
		free_.push_back(std::move(s));
	}

  private:
	StoreFactory open_;
	std::mutex m_;
	std::vector<std::unique_ptr<Store>> free_;
};

// Successful reports, many per transaction (one commit, one WAL flush, for
// many tasks), by group commit, and
// without a thread waiting for each: a task thread queues its report
// (queue) and is free for its next task at once.  When no batch is in the
// database, the queuing thread sends every queued report in one
// Store::complete_many (with the hand-back; a batch of one is
// complete_and_claim), and keeps sending what gathered meanwhile until the
// queue is empty; so one batch is in flight, batches grow with the load,
// and a lone report waits for nobody.  Until its batch is in the database
// a slot stays held (not finished: its lease is renewed, want_claim counts
// it); then Runner::settle ends it or starts the task handed back in it.
// One batch in flight, not two: bench/binary.sh (20,000 one-task jobs,
// --concurrency 16) gave 2,909-2,958 jobs/s at 411 us of server CPU each
// with one, and 2,386-2,473 at 558-589 us with two (smaller batches); with
// the reports queued, two senders again lost (11,109-11,174 against
// 11,954-12,657 jobs/s, --prefetch 100).  A batch takes at most half of
// concurrency + prefetch reports: the server holds a worker to that many
// leases, and a report's lease ends only at its batch's commit, so with all
// of them in one batch the loop could not claim until that batch ended;
// with halves, the first half's commit lets it claim while the second is in
// the database (bench/binary.sh, N=30000 --prefetch 100, four turns each:
// median 12,594 -> 13,917 jobs/s).  A
// report that a batch did not take (the batch failed as a whole: the
// database away, a conflict, a result over a limit; or this report's lease
// lost) goes back to a task thread, which sends it alone and handles its
// error as any report's, so one report's error never becomes another's.
// Before, each task thread waited for its batch: two thread wake-ups per
// task (most of the binary's CPU per task was then the scheduler's).
struct Runner::ReportEntry {
	std::shared_ptr<Slot> slot;
	Store::Completion c;
};

class Runner::Reports {
  public:
	explicit Reports(Runner &runner) : r_(runner) {}

	using Entry = ReportEntry;

	// Called on a task thread (in its run_task).
	void queue(std::shared_ptr<Slot> slot, json output) {
		std::unique_lock<std::mutex> g(m_);
		const Task &t = slot->task;
		queued_.push_back({slot, {t.instance_id, t.epoch, std::move(output)}});
		if (sending_) return;  // the sender takes it with the next batch
		sending_ = true;
		g.unlock();
		// while this thread sends, a held task may run in its place
		r_.threads_->step_aside();
		for (;;) {
			std::vector<Entry> batch;
			g.lock();
			if (queued_.empty()) {
				sending_ = false;
				break;
			}
			// at most half the leases the worker may hold (see above)
			const size_t most = static_cast<size_t>(std::max(1, (r_.opt_.concurrency + r_.opt_.prefetch) / 2));
			if (queued_.size() <= most) {
				batch.swap(queued_);
			} else {
				batch.assign(std::make_move_iterator(queued_.begin()), std::make_move_iterator(queued_.begin() + most));
				queued_.erase(queued_.begin(), queued_.begin() + most);
			}
			g.unlock();
			r_.settle(batch, flush(batch));
		}
		g.unlock();
		r_.threads_->step_back(false);
	}

  private:
	// One outcome per entry; nullopt: not known, send it alone.
	std::vector<std::optional<Store::Outcome>> flush(std::vector<Entry> &batch) {
		std::vector<std::optional<Store::Outcome>> out(batch.size());
		// the outputs lent to the call, not copied, and given back after it
		// (a report sent alone later needs its own)
		std::vector<Store::Completion> reports;
		reports.reserve(batch.size());
		for (Entry &x : batch) reports.push_back(std::move(x.c));
		std::unique_ptr<Store> store;
		try {
			store = r_.pool_->take();
			if (batch.size() == 1) {
				out[0] = store->complete_one(reports[0], r_.opt_.worker_id, r_.opt_.queues);
			} else {
				auto outcomes = store->complete_many(reports, r_.opt_.worker_id, r_.opt_.queues);
				if (outcomes.size() == batch.size()) {	// else not what was asked: each alone
					for (size_t i = 0; i < batch.size(); i++) out[i] = std::move(outcomes[i]);
					metrics::reports_batched(static_cast<int>(batch.size()));
				}
			}
			r_.pool_->give(std::move(store));
		} catch (const std::exception &e) {
			r_.pool_->give(std::move(store));  // it reconnects on its next call
			log::debug("reports failed together; each is sent alone", {{"reports", batch.size()}, {"error", e.what()}});
		}
		for (size_t i = 0; i < batch.size(); i++) batch[i].c = std::move(reports[i]);
		return out;
	}

	Runner &r_;
	std::mutex m_;
	std::vector<Entry> queued_;
	bool sending_ = false;	// a batch is in the database
};

Runner::Runner(WorkerOptions options, const HandlerRegistry &handlers, StoreFactory open_store)
	: opt_(std::move(options)), handlers_(handlers), open_store_(std::move(open_store)),
	  pool_(std::make_unique<Pool>(open_store_)),
	  reports_(std::make_unique<Reports>(*this)),
	  threads_(std::make_unique<Threads>([this](std::shared_ptr<Slot> slot) { run_task(std::move(slot)); },
										 opt_.concurrency, opt_.concurrency + opt_.prefetch)) {}

Runner::~Runner() {
	renewer_stop_.request();
	if (renewer_.joinable()) renewer_.join();
	for (auto &[_, s] : slots_) s->cancel.cancel();
	threads_->stop(false);
}

int64_t Runner::lease_age_ms() const {
	int64_t last = last_renew_ms_.load();
	return last < 0 ? -1 : steady_ms() - last;
}

// Claim now?  Without prefetch: when a slot is free.  With it: when a
// thread is idle (the local queue is empty: latency), or when half the
// prefetch is used (`held` counts the running and the waiting tasks).
bool Runner::want_claim(int held) const {
	const int room = opt_.concurrency + opt_.prefetch - held;
	if (room <= 0) return false;
	return held < opt_.concurrency || room >= std::max(1, opt_.prefetch / 2);
}

int Runner::running() const {
	std::lock_guard<std::mutex> g(m_);
	return running_locked();
}

int Runner::running_locked() const {
	int n = 0;
	for (auto &[_, s] : slots_)
		if (!s->finished) ++n;
	return n;
}

// Two workers on one host both default to the host name: the second is
// refused as id in use, and this hint says what to do.
std::string Runner::id_in_use_hint() const {
	return "Each worker needs an id of its own, stable across its restarts: start this one with --worker-id (or "
		   "GENROC_WORKER_ID), e.g. --worker-id " +
		   opt_.worker_id + "-2; the default (the host name and a suffix per store, command and --queue/--region/"
							"--exclusive) is the same for two such workers of one host on one store.";
}

bool Runner::register_worker(Store &store, const StopFlag &stop, bool first) {
	// Milliseconds: the one unit both PostgreSQL's interval input and the
	// shim read the same way.
	auto ms = [](Millis d) { return std::to_string(d.count()) + "ms"; };
	json options = {{"host", opt_.host},
					{"lease_duration", ms(opt_.lease_duration)},
					{"stale_after", ms(opt_.stale_after)},
					{"queues", opt_.queues},
					// the leases it may hold: claim never hands it more
					{"concurrency", opt_.concurrency + opt_.prefetch}};
	// --pooled, or the store found a transaction pooler in front of the
	// database: the session it records would be a pool's, not this process's.
	if (opt_.pooled || store.pooled()) options["pooled"] = true;
	const auto t0 = Clock::now();
	bool warned_in_use = false, warned_db = false;
	Backoff backoff;
	while (!stop.requested()) {
		try {
			json r = store.worker_register(opt_.worker_id, options);
			last_renew_ms_ = steady_ms();
			log::info(first ? "worker registered" : "worker registered again",
					  {{"worker", opt_.worker_id},
					   {"reclaimed", r.is_object() && r.contains("reclaimed") ? r["reclaimed"] : json(0)}});
			return true;
		} catch (const Error &e) {
			if (e.sqlstate == sqlstate::WORKER_ID_IN_USE) {
				// Proven alive: the holder's database session (or, on SQLite,
				// its lock file) is still held.  A previous life killed a
				// moment ago may still be closing its connection on the
				// server side, so a short grace, then give up: this is a
				// second live worker with the same id.
				if (Clock::now() - t0 >= std::min(opt_.stale_after, kAliveGrace)) {
					log::error("worker id in use by a live worker; giving up",
							   {{"worker", opt_.worker_id}, {"error", e.what()}, {"hint", id_in_use_hint()}});
					return false;
				}
				stop.wait_for(Millis(100));
			} else if (e.sqlstate == sqlstate::WORKER_LIVENESS_UNKNOWN) {
				// The engine cannot tell (a pooled registration): the holder
				// may be this worker's previous life that crashed without
				// worker_stop; its heartbeat goes stale after stale_after, so
				// waiting that long tells a restart from a second worker.
				if (Clock::now() - t0 >= opt_.stale_after) {
					log::error("worker id in use by a live worker; giving up",
							   {{"worker", opt_.worker_id}, {"error", e.what()}, {"hint", id_in_use_hint()}});
					return false;
				}
				if (!warned_in_use)
					log::warn("worker id in use; retrying until stale-after has passed",
							  {{"worker", opt_.worker_id},
							   {"stale_after", format_duration(opt_.stale_after)},
							   {"error", e.what()}});
				warned_in_use = true;
				stop.wait_for(std::clamp(opt_.stale_after / 10, Millis(100), Millis(1'000)));
			} else if (is_transient(e)) {
				if (!warned_db) log::warn("database unreachable; retrying", error_fields(e));
				warned_db = true;
				stop.wait_for(backoff.next());
			} else {
				log::error("cannot register the worker", error_fields(e));
				return false;
			}
		}
	}
	return false;
}

void Runner::renew_loop() {
	std::unique_ptr<Store> store;
	const Millis every = std::max(opt_.lease_duration / 3, Millis(50));
	while (!renewer_stop_.wait_for(every)) {
		std::vector<int64_t> ids;
		{
			std::lock_guard<std::mutex> g(m_);
			for (auto &[_, s] : slots_)
				if (!s->finished && !s->lost) ids.push_back(s->task.instance_id);
		}
		try {
			if (!store) store = open_store_();
			// Proves this worker alive (so its id is not taken over while it
			// waits for work), and says whether it was asked to drain.
			if (store->worker_heartbeat(opt_.worker_id).value("drain", false)) note_drain("heartbeat");
			if (!ids.empty()) {
				auto kept = store->renew(opt_.worker_id, ids);
				std::sort(kept.begin(), kept.end());
				std::lock_guard<std::mutex> g(m_);
				for (auto &[_, s] : slots_) {
					const int64_t id = s->task.instance_id;
					if (s->finished || s->lost || std::binary_search(kept.begin(), kept.end(), id) ||
						std::find(ids.begin(), ids.end(), id) == ids.end())
						continue;
					// Keep running it: the handler's result is refused
					// later (RC004) and logged there as "lease lost".
					s->lost = true;
					log::debug("lease not renewed", {{"instance", id}});
				}
			}
			last_renew_ms_ = steady_ms();
		} catch (const Error &e) {
			metrics::database_error(e.sqlstate);
			if (e.sqlstate == sqlstate::WORKER_NOT_REGISTERED) need_register_ = true;
			else if (!is_transient(e)) log::warn("renew failed", error_fields(e));
		} catch (const std::exception &e) {
			log::warn("renew failed", {{"error", e.what()}});
		}
	}
}

// The metrics and the debug line of a task reported (taken by the store).
void Runner::note_reported(const Slot &slot, const TaskResult &result, const std::string &status) {
	const Task &t = slot.task;
	const bool ok = result.kind == TaskResult::Kind::succeeded;
	if (ok)
		metrics::task_succeeded(t.queue);
	else
		metrics::task_failed(t.queue);
	metrics::step_seconds(t.queue, std::chrono::duration<double>(Clock::now() - slot.claimed_at).count());
	// One line per task at debug; info gets the periodic summary
	// (summarize()), so a Map of thousands is not thousands of lines.
	if (log::enabled(log::Level::debug)) {
		json f = {{"instance", t.instance_id}, {"state", t.state}, {"status", status}};
		if (!ok) {
			f["error"] = result.error;
			f["cause"] = result.cause;
		}
		log::debug(ok ? "task succeeded" : "task failed", f);
	}
	(ok ? tasks_succeeded_ : tasks_failed_)++;
}

// A batch of reports is in the database (Reports): each slot ends, runs the
// task handed back to it, or, when its report was not taken, goes to a task
// thread that sends it alone (run_task, `unreported`).
void Runner::settle(std::vector<ReportEntry> &batch, std::vector<std::optional<Store::Outcome>> outcomes) {
	bool ended = false;
	for (size_t i = 0; i < batch.size(); i++) {
		Slot &slot = *batch[i].slot;
		std::optional<Store::Outcome> &o = outcomes[i];
		if (!o || !o->sqlstate.empty()) {
			slot.unreported = TaskResult::success(std::move(batch[i].c.output));
			threads_->start(batch[i].slot);
			continue;
		}
		note_reported(slot, TaskResult::success(nullptr), o->status);
		std::lock_guard<std::mutex> g(m_);
		if (o->next) {
			metrics::task_claimed(o->next->queue, o->next->attempt);
			log::debug("claimed", {{"instance", o->next->instance_id}, {"epoch", o->next->epoch},
								   {"state", o->next->state}, {"handed_back", true}});
			slot.task = std::move(*o->next);
			slot.claimed_at = Clock::now();
			slot.lost = false;
			threads_->start(batch[i].slot);
		} else {
			slot.finished = true;
			ended = true;
		}
	}
	if (ended) slots_cv_.notify_all();
}

std::optional<Task> Runner::report(Slot &slot, const TaskResult &result_in) {
	const Task &t = slot.task;
	TaskResult result = result_in;
	bool ok = result.kind == TaskResult::Kind::succeeded;
	Backoff backoff;
	bool warned = false;
	for (;;) {
		std::unique_ptr<Store> store;
		try {
			// While running, the report may hand back the instance's next
			// task (no claim round trip); while draining it takes none.
			Store::Report rep;
			store = pool_->take();
			if (stopping_ || drain_requested_)
				rep.status = ok ? store->complete(t.instance_id, t.epoch, result.output)
								: store->fail(t.instance_id, t.epoch, result.error, result.cause);
			else
				rep = ok ? store->complete_and_claim(t.instance_id, t.epoch, result.output, opt_.worker_id,
													 opt_.queues)
						 : store->fail_and_claim(t.instance_id, t.epoch, result.error, result.cause,
												 opt_.worker_id, opt_.queues);
			pool_->give(std::move(store));
			if (!ok && result.error == "genroc.HandlerMissing" && rep.status == "ready") {
				metrics::task_failed(t.queue);
				metrics::step_seconds(t.queue,
									  std::chrono::duration<double>(Clock::now() - slot.claimed_at).count());
				// genroc made the handler's queue and moved the task there
				// (genroc._handler_missing): it waits for a worker with it
				log::info("no handler here; the task waits in its handler's queue for a worker that has it",
						  {{"instance", t.instance_id}, {"resource", t.resource}});
				return std::nullopt;
			}
			note_reported(slot, result, rep.status);
			return std::move(rep.next);
		} catch (const Error &e) {
			pool_->give(std::move(store));	// it reconnects on its next call
			if (e.sqlstate == sqlstate::LEASE_LOST || e.sqlstate == sqlstate::INSTANCE_ENDED) {
				// Another worker holds (or finished) the instance now; this
				// result must not overwrite its run.
				metrics::lease_lost(t.queue);
				log::warn("lease lost", {{"instance", t.instance_id}, {"epoch", t.epoch},
										 {"state", t.state}, {"error", e.what()}});
				return std::nullopt;
			}
			if (ok && e.sqlstate == limits::PROGRAM_LIMIT_EXCEEDED) {
				// The store refuses this result (over a limit, e.g. nested too
				// deep): sending it again would be refused again, and the task
				// would run again after its lease lapses, forever.  Report the
				// task failed instead, so Retry and Catch decide.
				log::warn("task result over a limit; reporting the task failed",
						  {{"instance", t.instance_id}, {"error", e.what()}});
				ok = false;
				result.kind = TaskResult::Kind::failed;
				result.error = "States.DataLimitExceeded";
				result.cause = e.what();
				continue;
			}
			metrics::database_error(e.sqlstate);
			if (is_conflict(e)) {
				// e.g. a deadlock with a cancel of its parent: nothing was
				// written; report again (the cancel may win: lease lost)
				log::info("task result hit a conflict; reporting again",
						  {{"instance", t.instance_id}, {"sqlstate", e.sqlstate}});
			} else if (!is_transient(e) && !is_busy(e)) {
				log::error("cannot report the task result",
						   {{"instance", t.instance_id}, {"sqlstate", e.sqlstate}, {"error", e.what()}});
				return std::nullopt;
			} else {
				// Away or busy (a SQLite file another process holds past
				// busy_timeout, a full disk): dropping the result would run
				// the task again once its lease lapses.
				if (!warned)
					log::warn(is_busy(e) ? "database busy; holding the task result"
										 : "database unreachable; holding the task result",
							  {{"instance", t.instance_id}, {"sqlstate", e.sqlstate}, {"error", e.what()}});
				warned = true;
			}
		} catch (const std::exception &e) {
			log::error("cannot report the task result", {{"instance", t.instance_id}, {"error", e.what()}});
			return std::nullopt;
		}
		// Shutdown grace over while the database is away: give up; the
		// lease is released (or lapses) and the task runs again elsewhere.
		if (slot.cancel.wait_until(Clock::now() + backoff.next())) {
			slot.abandoned = true;
			return std::nullopt;
		}
	}
}

void Runner::run_task(std::shared_ptr<Slot> slot) {
	// slot->task is written only under m_ (the renewer and drain read its
	// id), here or by settle: a task handed back by the report runs next in
	// this slot.
	const Task &t = slot->task;
	// A success its batch did not take: sent alone first, whatever else.
	std::optional<TaskResult> r = std::exchange(slot->unreported, std::nullopt);
	// A prefetched task that waited for a thread: not run once the worker is
	// stopping (drain() releases its lease at once) or its lease was lost
	// while it waited (another worker may hold it now).
	const StopFlag *stop = stop_flag_;
	if (!r && (stopping_ || drain_requested_ || (stop && stop->requested()))) slot->abandoned = true;
	const bool run = r || (!slot->abandoned && !slot->lost);
	while (run) {
		if (!r) {
			TaskContext ctx;
			ctx.instance_id = t.instance_id;
			ctx.state = t.state;
			ctx.resource = t.resource;
			ctx.attempt = t.attempt;
			if (t.timeout_s && *t.timeout_s > 0) ctx.timeout = std::chrono::seconds(*t.timeout_s);
			ctx.cancel = &slot->cancel;
			if (log::enabled(log::Level::debug))
				log::debug("task started", {{"instance", t.instance_id}, {"state", t.state},
											{"resource", t.resource}, {"attempt", t.attempt}});
			r = handlers_.run(t.resource, t.input, ctx);
			if (r->kind == TaskResult::Kind::abandoned) {
				slot->abandoned = true;
				log::info("task stopped at shutdown", {{"instance", t.instance_id}, {"state", t.state}});
				break;
			}
			// A success goes with the next batch of reports, and this
			// thread on to its next task; the batch ends the slot or runs
			// the task handed back in it (settle).  While draining, each
			// report goes alone and takes no next task.
			if (r->kind == TaskResult::Kind::succeeded && !stopping_ && !drain_requested_) {
				reports_->queue(std::move(slot), std::move(r->output));
				return;
			}
		}
		// while the report waits for its commit, a held task may run
		threads_->step_aside();
		std::optional<Task> next;
		try {
			next = report(*slot, *r);
		} catch (...) {
			threads_->step_back(false);	 // counted again, whatever escaped
			throw;
		}
		threads_->step_back(next.has_value());
		r.reset();
		if (!next) break;
		metrics::task_claimed(next->queue, next->attempt);
		{
			std::lock_guard<std::mutex> g(m_);
			slot->task = std::move(*next);
			slot->claimed_at = Clock::now();
			slot->lost = false;
		}
		log::debug("claimed", {{"instance", t.instance_id}, {"epoch", t.epoch}, {"state", t.state},
							   {"handed_back", true}});
	}
	{
		std::lock_guard<std::mutex> g(m_);
		slot->finished = true;
	}
	slots_cv_.notify_all();
}

void Runner::reap() {
	std::lock_guard<std::mutex> g(m_);
	for (auto it = slots_.begin(); it != slots_.end();) {
		if (it->second->finished && !it->second->abandoned)
			it = slots_.erase(it);
		else
			++it;
	}
}

void Runner::drain() {
	stopping_ = true;
	const auto deadline = Clock::now() + opt_.shutdown_grace;
	int n = running();
	if (n > 0)
		log::info("shutting down: waiting for running tasks",
				  {{"running", n}, {"shutdown_grace", format_duration(opt_.shutdown_grace)}});
	auto all_finished = [&] {
		for (auto &[_, s] : slots_)
			if (!s->finished) return false;
		return true;
	};
	{
		std::unique_lock<std::mutex> g(m_);
		slots_cv_.wait_until(g, deadline, all_finished);
		if (!all_finished()) {
			std::vector<int64_t> ids;
			for (auto &[_, s] : slots_)
				if (!s->finished) ids.push_back(s->task.instance_id);
			log::warn("shutdown grace over; stopping the tasks still running", {{"instances", ids}});
			// Command handlers are killed (their whole process group) before
			// the leases go back, so no task ever runs here and elsewhere at once.
			for (auto &[_, s] : slots_) s->cancel.cancel();
			slots_cv_.wait_for(g, std::chrono::seconds(5), all_finished);
		}
	}
	std::vector<int64_t> release;
	{
		std::lock_guard<std::mutex> g(m_);
		for (auto &[_, s] : slots_)
			if (!s->finished || s->abandoned) release.push_back(s->task.instance_id);
	}
	auto with_retry = [&](const char *what, const std::function<void(Store &)> &fn) {
		Backoff backoff(Millis(1'000));
		const auto give_up = Clock::now() + std::chrono::seconds(5);
		for (;;) {
			std::unique_ptr<Store> store;
			try {
				store = pool_->take();
				fn(*store);
				pool_->give(std::move(store));
				return;
			} catch (const Error &e) {
				pool_->give(std::move(store));
				if (!is_transient(e) || Clock::now() >= give_up) {
					log::warn(std::string("shutdown: ") + what + " failed", error_fields(e));
					return;
				}
			} catch (const std::exception &e) {
				log::warn(std::string("shutdown: ") + what + " failed", {{"error", e.what()}});
				return;
			}
			std::this_thread::sleep_for(backoff.next());
		}
	};
	if (!release.empty()) {
		with_retry("release", [&](Store &s) { s.release(opt_.worker_id, release); });
		log::info("released leases", {{"instances", release}});
	}
	renewer_stop_.request();
	if (renewer_.joinable()) renewer_.join();
	if (registered_) with_retry("worker_stop", [&](Store &s) { s.worker_stop(opt_.worker_id); });

	bool all_ended;
	{
		std::lock_guard<std::mutex> g(m_);
		all_ended = all_finished();
		slots_.clear();
	}
	// An in-process handler that ignores cancel: its result will be refused
	// (its lease was released); the process is about to exit.
	threads_->stop(!all_ended);
}

// worker_drain asked this worker to drain: the loop claims nothing more
// and ends as at SIGTERM (drain(): running tasks get --shutdown-grace).
void Runner::note_drain(const char *how) {
	if (drain_requested_.exchange(true)) return;
	log::info("drain requested: claiming nothing more, stopping when the running tasks end",
			  {{"worker", opt_.worker_id}, {"running", running()}, {"noticed_by", how}});
}

// The info line that stands for the per-task debug lines: tasks reported
// since the last summary, and in all; nothing when nothing happened.
void Runner::summarize() {
	const int64_t ok = tasks_succeeded_.load(), failed = tasks_failed_.load();
	if (ok == summarized_succeeded_ && failed == summarized_failed_) return;
	log::info("tasks done", {{"succeeded", ok - summarized_succeeded_},
							 {"failed", failed - summarized_failed_},
							 {"running", running()},
							 {"total_succeeded", ok},
							 {"total_failed", failed}});
	summarized_succeeded_ = ok;
	summarized_failed_ = failed;
}

// A ready task that no live worker serves waits forever; without this
// warning the only clue is an empty WORKERS column in `genctl queues`.  The same
// list says whether a queue this worker serves has a rate_limit or a
// partition_rate_limit, so an idle worker asks claim_wake only then (one
// statement fewer per wait otherwise).
void Runner::look_at_queues(Store &store, bool warn) {
	json list;
	try {
		list = store.list_queues();
	} catch (const Error &e) {
		if (is_transient(e)) throw;
		log::debug("cannot list queues", error_fields(e));	// a role without it: no warning, no harm
		return;
	}
	bool rated = false;
	auto limited = [](const json &q, const char *limit) { return q.contains(limit) && !q[limit].is_null(); };
	for (const auto &q : list)
		if (q.is_object() && (limited(q, "rate_limit") || limited(q, "partition_rate_limit")) &&
			std::find(opt_.queues.begin(), opt_.queues.end(), q.value("name", std::string())) != opt_.queues.end())
			rated = true;
	rate_limited_ = rated;
	if (!warn) return;
	for (const auto &q : unserved_queues(list))
		log::warn("ready tasks that no live worker serves",
				  {{"queue", q.value("name", json())}, {"depth", q.value("depth", json())}, {"hint", unserved_hint(q)}});
}

int Runner::run(const StopFlag &stop) {
	stop_flag_ = &stop;
	std::unique_ptr<Store> store;
	Backoff backoff;
	bool outage = false;
	auto note_error = [&](const Error &e) {
		metrics::database_error(e.sqlstate);
		if (e.sqlstate == sqlstate::WORKER_NOT_REGISTERED) {
			need_register_ = true;
		} else if (is_transient(e) || is_busy(e)) {
			if (!outage) log::warn(is_busy(e) ? "database busy; retrying" : "database unreachable; retrying",
								   error_fields(e));
			outage = true;
		} else {
			log::error("worker loop error", error_fields(e));
		}
		stop.wait_for(backoff.next());
	};

	// Open and register; a database that is not up yet is waited for (many
	// workers may start together with it).
	while (!store) {
		if (stop.requested()) return 0;
		try {
			store = open_store_();
		} catch (const Error &e) {
			if (!is_transient(e)) {
				log::error("cannot open the store", error_fields(e));
				return 1;
			}
			note_error(e);
		} catch (const std::exception &e) {
			log::error("cannot open the store", {{"error", e.what()}});
			return 1;
		}
	}
	// genroc.tickers names this worker's ticks by its id
	store->set_ticked_by("genroc worker " + opt_.worker_id);
	metrics::serve_queues(opt_.queues);
	if (!register_worker(*store, stop, true)) return stop.requested() ? 0 : 1;
	registered_ = true;
	log::info("worker started", {{"worker", opt_.worker_id},
								 {"queues", opt_.queues},
								 {"concurrency", opt_.concurrency},
								 {"lease_duration", format_duration(opt_.lease_duration)},
								 {"handlers", handlers_.names()},
								 {"manual_tick", opt_.manual_tick}});
	renewer_ = std::thread(&Runner::renew_loop, this);

	int exit_code = 0;
	auto next_tick = Clock::now();
	auto next_unserved_check = Clock::now();
	auto next_summary = Clock::now() + opt_.summary_interval;
	while (!stop.requested() && !drain_requested_) {
		reap();
		try {
			if (need_register_) {
				if (!register_worker(*store, stop, false)) {
					// The id may now belong to another live worker: never
					// mark that one stopped on the way out.
					registered_ = false;
					exit_code = stop.requested() ? 0 : 1;
					break;
				}
				need_register_ = false;
			}
			if (!opt_.manual_tick && Clock::now() >= next_tick) {
				const json done = store->tick(1000);
				if (done.value("pruned_log_rows", 0) > 0 || done.value("pruned_instances", 0) > 0)
					log::debug("pruned", {{"log_rows", done.value("pruned_log_rows", 0)},
										  {"instances", done.value("pruned_instances", 0)}});
				next_tick = Clock::now() + opt_.tick_interval;
			}
			if (opt_.summary_interval.count() > 0 && Clock::now() >= next_summary) {
				next_summary = Clock::now() + opt_.summary_interval;
				summarize();
			}
			if (Clock::now() >= next_unserved_check) {
				const bool warn = opt_.unserved_check.count() > 0;
				next_unserved_check = Clock::now() + (warn ? opt_.unserved_check : Millis(60'000));
				look_at_queues(*store, warn);
			}
			// With --prefetch, up to concurrency + prefetch tasks are held;
			// the next claim waits until half the prefetch is used (one
			// bigger claim, not one per task done) unless a thread is idle.
			const int held = running();
			const int free_slots = want_claim(held) ? opt_.concurrency + opt_.prefetch - held : 0;
			size_t got = 0;
			if (free_slots > 0) {
				// OnlyOnce: claim() returns only after its transaction
				// committed, and at --durability essential and above the
				// engine flushes the commit of a claim that hands out an
				// OnlyOnce task.  So the record that the task
				// started is on disk before its handler runs below, and a
				// crash can never lead to a second run.
				const auto claim_start = Clock::now();
				auto tasks = store->claim(opt_.worker_id, opt_.queues, free_slots);
				const auto claimed_at = Clock::now();
				metrics::claim_seconds(std::chrono::duration<double>(claimed_at - claim_start).count());
				got = tasks.size();
				for (auto &t : tasks) {
					metrics::task_claimed(t.queue, t.attempt);
					auto slot = std::make_shared<Slot>();
					slot->claimed_at = claimed_at;
					slot->task = std::move(t);
					log::debug("claimed", {{"instance", slot->task.instance_id},
										   {"epoch", slot->task.epoch},
										   {"state", slot->task.state}});
					std::lock_guard<std::mutex> g(m_);
					slots_[next_slot_++] = slot;
					threads_->start(slot);
				}
			}
			if (outage) {
				log::info("database reachable again");
				metrics::database_reconnected();
			}
			outage = false;
			backoff.reset();
			if (free_slots > 0 && static_cast<int>(got) == free_slots) continue;	// maybe more

			// Wait for work (LISTEN), a free slot, the next tick, a rate
			// window that opens (claim_wake) or the poll backstop, whichever
			// comes first; short slices keep stop prompt.
			auto until = Clock::now() + opt_.poll_interval;
			if (!opt_.manual_tick) until = std::min(until, next_tick);
			if (free_slots > 0 && rate_limited_) {
				if (auto wake = store->claim_wake(opt_.queues))
					until = std::min(until, Clock::now() + Millis(std::max<int64_t>(*wake, 1)));
			}
			while (!stop.requested() && !drain_requested_ && Clock::now() < until) {
				auto slice = std::min(std::chrono::duration_cast<Millis>(until - Clock::now()), Millis(200));
				if (slice.count() <= 0) break;
				if (!want_claim(running())) {
					// the predicate, not a bare wait: a task that ended
					// between the count above and this wait is not missed
					std::unique_lock<std::mutex> g(m_);
					if (slots_cv_.wait_for(g, slice, [&] { return want_claim(running_locked()); })) break;
					continue;
				}
				// A slot came free while this loop waited: claim at once.
				if (free_slots - static_cast<int>(got) <= 0) break;
				if (store->wait_for_work(static_cast<int>(slice.count()))) {
					// NOTIFY genroc_drain is only a wake-up (anyone may send
					// one): whether this worker is to drain is read from the
					// database, where only worker_drain's callers write it.
					if (store->drain_woken()) {
						log::debug("woken by genroc_drain: asking the database", {{"worker", opt_.worker_id}});
						if (store->worker_heartbeat(opt_.worker_id).value("drain", false)) note_drain("notification");
					}
					break;
				}
			}
		} catch (const Error &e) {
			note_error(e);
		} catch (const std::exception &e) {
			log::error("worker loop error", {{"error", e.what()}});
			stop.wait_for(backoff.next());
		}
	}
	drain();
	summarize();
	log::info("worker stopped", {{"worker", opt_.worker_id}});
	return exit_code;
}

}  // namespace genroc
