// unit_write_turns_test.cpp — the order of WriteTurns (sqlite_db.hpp): FIFO
// within a lane, round-robin between lanes, and a waiter that gives up leaves
// its queue.  Threads queue one at a time (the test waits until each is seen
// waiting before starting the next), so the expected order is exact; no
// timing is asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sqlite_db.hpp"

using genroc::sqlite::WriteTurns;
using namespace std::chrono_literals;

namespace {

constexpr unsigned kGeneral = 0, kWorker = 1;

struct Order {
	std::mutex m;
	std::vector<std::string> seen;
};

// Starts a writer of lane that records name when its turn comes, then waits
// until it is queued.
void queue_writer(WriteTurns &turns, std::vector<std::thread> &threads, Order &order, unsigned lane,
				  const std::string &name) {
	const size_t before = turns.waiting(lane);
	threads.emplace_back([&turns, &order, lane, name] {
		ASSERT_TRUE(turns.acquire(lane, 60s));
		{
			std::lock_guard<std::mutex> g(order.m);
			order.seen.push_back(name);
		}
		turns.release();
	});
	while (turns.waiting(lane) == before) std::this_thread::yield();
}

}  // namespace

TEST(WriteTurns, AFreeTurnIsTakenAtOnceAndHeldUntilReleased) {
	WriteTurns turns;
	ASSERT_TRUE(turns.acquire(kGeneral, 0ms));
	EXPECT_FALSE(turns.acquire(kWorker, 1ms));	 // held: gives up
	EXPECT_EQ(turns.waiting(kWorker), 0u);		 // and left its queue
	turns.release();
	EXPECT_TRUE(turns.acquire(kWorker, 0ms));
	turns.release();
}

TEST(WriteTurns, TurnsGoRoundTheLanesFirstComeFirstServedWithinEach) {
	WriteTurns turns;
	Order order;
	std::vector<std::thread> threads;
	ASSERT_TRUE(turns.acquire(kGeneral, 0ms));	// an API write holds the file
	// four API writers queue, then two of the worker's
	for (int i = 1; i <= 4; ++i) queue_writer(turns, threads, order, kGeneral, "api" + std::to_string(i));
	for (int i = 1; i <= 2; ++i) queue_writer(turns, threads, order, kWorker, "worker" + std::to_string(i));
	turns.release();
	for (auto &t : threads) t.join();
	// arrival order (a plain FIFO) would be api1..api4, worker1, worker2
	EXPECT_EQ(order.seen, (std::vector<std::string>{"worker1", "api1", "worker2", "api2", "api3", "api4"}));
}

TEST(WriteTurns, AWaiterThatGaveUpIsSkipped) {
	WriteTurns turns;
	Order order;
	std::vector<std::thread> threads;
	ASSERT_TRUE(turns.acquire(kWorker, 0ms));
	queue_writer(turns, threads, order, kGeneral, "api1");
	// a worker writer that gives up while the turn is held: it queued
	// behind nobody of its lane and leaves that queue
	std::thread quitter([&] { EXPECT_FALSE(turns.acquire(kWorker, 1ms)); });
	quitter.join();
	EXPECT_EQ(turns.waiting(kWorker), 0u);
	queue_writer(turns, threads, order, kWorker, "worker1");
	queue_writer(turns, threads, order, kGeneral, "api2");
	turns.release();  // the worker lane had the turn: the API's comes next
	for (auto &t : threads) t.join();
	EXPECT_EQ(order.seen, (std::vector<std::string>{"api1", "worker1", "api2"}));
	// everyone released: the turn is free
	EXPECT_TRUE(turns.acquire(kGeneral, 0ms));
	turns.release();
}
