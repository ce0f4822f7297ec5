// stop.cpp — stop flag, the signal thread, transient errors, back-off.
#include "stop.hpp"

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace genroc {

void StopFlag::request() {
	{
		std::lock_guard<std::mutex> g(m_);
		flag_ = true;
	}
	cv_.notify_all();
}

bool StopFlag::wait_for(Millis d) const {
	std::unique_lock<std::mutex> g(m_);
	return cv_.wait_for(g, d, [&] { return flag_.load(); });
}

void install_signal_thread(std::function<void(int)> on_signal) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, nullptr);
	// A handler that exits without reading its stdin must not kill us.
	signal(SIGPIPE, SIG_IGN);
	std::thread([set, on_signal = std::move(on_signal)] {
		for (;;) {
			int sig = 0;
			if (sigwait(&set, &sig) == 0) on_signal(sig);
		}
	}).detach();
}

bool is_transient(const Error &e) {
	return e.sqlstate.rfind("08", 0) == 0 || e.sqlstate == "57P01" || e.sqlstate == "57P03";
}

bool is_conflict(const Error &e) { return e.sqlstate == "40P01" || e.sqlstate == "40001"; }

bool is_busy(const Error &e) {
	return e.sqlstate == "55P03" || e.sqlstate == "58030" || e.sqlstate.rfind("53", 0) == 0;
}

Backoff::Backoff(Millis cap, Millis base) : cap_(cap), base_(base) {}

Millis Backoff::next() {
	// seeded at the first wait: a Backoff is made for every report, and
	// most never wait (a std::random_device and a seeding cost more than
	// the report's own work in the binary on SQLite)
	if (!rng_) rng_.emplace(std::random_device{}());
	int64_t d = base_.count();
	for (int i = 0; i < attempt_ && d < cap_.count(); ++i) d *= 2;
	if (d > cap_.count()) d = cap_.count();
	++attempt_;
	std::uniform_int_distribution<int64_t> pick(d / 2, d);
	return Millis(pick(*rng_));
}

}  // namespace genroc
