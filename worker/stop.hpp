// stop.hpp — how a genroc process learns it must stop, and retry pacing.
//
// SIGTERM and SIGINT are blocked in every thread and taken by one thread
// with sigwait(), so no handler runs at an arbitrary point of the program,
// and a blocking call elsewhere is never interrupted half-way.  Child
// processes (command handlers) unblock them again before exec.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "asl.hpp"
#include "duration.hpp"

namespace genroc {

// Set once; waiters wake at once.
class StopFlag {
  public:
	void request();
	bool requested() const { return flag_.load(); }
	// Sleeps up to d; true when stop was (or is) requested.
	bool wait_for(Millis d) const;

  private:
	std::atomic<bool> flag_{false};
	mutable std::mutex m_;
	mutable std::condition_variable cv_;
};

// Blocks SIGTERM, SIGINT (and ignores SIGPIPE) process-wide and starts the
// thread that calls on_signal(signo) for each one that arrives.  Call it in
// main() before any other thread exists, so every thread inherits the mask.
void install_signal_thread(std::function<void(int)> on_signal);

// Errors worth waiting out: the connection is gone (SQLSTATE class 08), or
// the server is shutting down / starting up (57P01, 57P03).
bool is_transient(const Error &e);
// The transaction lost a race and did nothing (deadlock, serialization
// failure): the same call again may succeed.
bool is_conflict(const Error &e);
// The database is there but cannot take the call now: a lock wait ran out
// (55P03: another process held a SQLite file's write lock past busy_timeout,
// or PostgreSQL's lock_timeout), resources ran out (class 53: disk full, too
// many connections; a full disk on SQLite too), an I/O error (58030).  The
// same call may succeed later; nothing was written.
bool is_busy(const Error &e);

// Capped exponential back-off with jitter: 100ms, 200ms, ... up to `cap`,
// each wait drawn in [d/2, d] so that many workers that lost the same
// database do not come back in lockstep.
class Backoff {
  public:
	explicit Backoff(Millis cap = Millis(10'000), Millis base = Millis(100));
	Millis next();
	void reset() { attempt_ = 0; }
	int attempts() const { return attempt_; }

  private:
	Millis cap_, base_;
	int attempt_ = 0;
	std::optional<std::mt19937_64> rng_;	 // seeded by the first next()
};

}  // namespace genroc
