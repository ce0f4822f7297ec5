// leases_test.cpp — workers and leases: epochs (RC004), renew, lapse,
// the interruption bound, OnlyOnce, release, worker ids (RC005, RC006),
// reclaim on re-register.
#include "fixture.hpp"

#include <algorithm>
#include <set>
#include <thread>

namespace genroc::conformance {

namespace {
json one_task(bool only_once = false) {
	json t = {{"Type", "Task"}, {"Resource", "handler:h"}, {"End", true}};
	if (only_once) t["OnlyOnce"] = true;
	return {{"StartAt", "T"}, {"States", {{"T", t}}}};
}
}  // namespace

TEST_P(StoreTest, LapsedLeaseMakesTheTaskReadyAgainWithANewEpoch) {
	define("job", one_task());
	worker("w1", {{"lease_duration", "5s"}});
	worker("w2");
	int64_t id = start("job");
	Task first = claim_one("w1");
	EXPECT_EQ(first.lease_expires, time_at(5));
	at(4.999);
	EXPECT_EQ(store().tick(100).at("lapsed"), 0);
	at(5);
	EXPECT_EQ(store().tick(100).at("lapsed"), 1);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "ready");
	EXPECT_EQ(inst.at("interruptions"), 1);

	Task second = claim_one("w2");
	EXPECT_EQ(second.instance_id, id);
	EXPECT_NE(second.epoch, first.epoch);
	EXPECT_GT(second.epoch, 0);
	EXPECT_EQ(second.attempt, 0);  // an interruption is not a retry
	// The paused first worker wakes up: its report is refused, nothing changes.
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(id, first.epoch, {{"from", "w1"}}));
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().fail(id, first.epoch, "Boom", ""));
	EXPECT_EQ(status(id), "running");
	EXPECT_EQ(store().complete(id, second.epoch, {{"from", "w2"}}), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json({{"from", "w2"}}));
}

// The fencing token is not a counter: a claim that a crash rolled back must
// never be handed out again, and a counter would repeat it (the crash itself
// is test/durability/fencing_test.cpp).  Every claim of one instance gets a
// positive epoch no earlier claim of it had, and not the previous one plus 1.
TEST_P(StoreTest, EveryClaimHandsOutAnEpochNeverSeenBefore) {
	define("flaky", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h",
		"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":30,"IntervalSeconds":1,"BackoffRate":1}],
		"End":true}}})"));
	worker("w1", {{"lease_duration", "1h"}});
	int64_t id = start("flaky");
	std::set<int64_t> seen;
	int64_t previous = 0;
	int consecutive = 0;
	for (int i = 0; i < 20; i++) {
		Task t = claim_one("w1");
		ASSERT_EQ(t.instance_id, id);
		EXPECT_GT(t.epoch, 0);
		EXPECT_TRUE(seen.insert(t.epoch).second) << "epoch " << t.epoch << " handed out twice";
		EXPECT_EQ(instance(id).at("lease_epoch"), t.epoch);
		if (t.epoch == previous + 1) consecutive++;
		previous = t.epoch;
		EXPECT_EQ(store().fail(id, t.epoch, "Again", ""), "ready");
		// the reported lease's epoch is refused like any stale one
		EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(id, t.epoch, "late"));
		at(2 * (i + 1));
	}
	EXPECT_LT(consecutive, 19) << "the epochs count up one by one";
}

TEST_P(StoreTest, RenewExtendsOnlyTheLeasesTheWorkerHolds) {
	define("job", one_task());
	worker("w1", {{"lease_duration", "10s"}});
	worker("w2");
	int64_t a = start("job");
	int64_t b = start("job");
	Task ta = claim_one("w1");
	Task tb = claim_one("w2");
	EXPECT_EQ(ta.instance_id, a);
	EXPECT_EQ(tb.instance_id, b);
	at(8);
	auto kept = store().renew("w1", {a, b, 424242});
	EXPECT_EQ(kept, std::vector<int64_t>{a});
	EXPECT_EQ(instance(a).at("lease_expires"), time_at(18));
	at(15);
	json counts = store().tick(100);
	EXPECT_EQ(counts.at("lapsed"), 1);  // b (w2 never renewed), not a
	EXPECT_EQ(status(a), "running");
	EXPECT_EQ(status(b), "ready");
	EXPECT_TRUE(store().renew("w2", {b}).empty());
}

TEST_P(StoreTest, RepeatedInterruptionsEndInGenrocInterrupted) {
	define("job", one_task());
	worker("w1", {{"lease_duration", "1s"}});
	int64_t id = start("job");
	for (int i = 1; i <= 4; i++) {
		claim_one("w1");
		at(i);
		store().tick(100);
		EXPECT_EQ(status(id), "ready") << "after interruption " << i;
	}
	claim_one("w1");
	at(5);
	store().tick(100);
	json inst = instance(id);
	EXPECT_EQ(inst.at("status"), "failed");
	EXPECT_EQ(inst.at("error"), "genroc.Interrupted");
	EXPECT_EQ(inst.at("interruptions"), 5);  // the failed instance shows why
}

// A release on purpose (a drain at SIGTERM, worker_stop) is not a
// crash: six rolling restarts during one task do not end it
// genroc.Interrupted; a lapse still counts.
TEST_P(StoreTest, ReleasesOnPurposeAreNotCountedAsInterruptions) {
	define("job", one_task());
	worker("w1");
	int64_t id = start("job");
	for (int i = 1; i <= 6; i++) {
		claim_one("w1");
		if (i % 2) {
			store().release("w1", {id});
		} else {
			store().worker_stop("w1");
			worker("w1");
		}
		EXPECT_EQ(status(id), "ready") << "after release " << i;
	}
	EXPECT_EQ(instance(id).at("interruptions"), 0);
	json last;
	for (auto &e : store().history(id))
		if (e.at("event") == "task_interrupted") last = e;
	EXPECT_EQ(last.at("detail").at("counted"), false);
	EXPECT_EQ(last.at("detail").at("interruptions"), 0);
	// a lapse counts
	store().worker_stop("w1");
	worker("w1", {{"lease_duration", "1s"}});
	claim_one("w1");
	at(10);
	store().tick(100);
	EXPECT_EQ(status(id), "ready");
	EXPECT_EQ(instance(id).at("interruptions"), 1);
}

TEST_P(StoreTest, OnlyOnceLapseFailsWithOnlyOnceInterruptedSeenByCatch) {
	json def = one_task(true);
	def["States"]["T"].erase("End");
	def["States"]["T"]["Next"] = "Done";
	def["States"]["T"]["Catch"] = json::parse(R"([{"ErrorEquals": ["only_once.interrupted"], "ResultPath": "$.lost", "Next": "Lost"}])");
	def["States"]["Done"] = {{"Type", "Succeed"}};
	def["States"]["Lost"] = {{"Type", "Fail"}, {"Error", "Lost"}};
	define("once", def);
	define("once_plain", one_task(true));
	worker("w1", {{"lease_duration", "5s"}});

	int64_t caught = start("once");
	Task t = claim_one("w1");
	EXPECT_TRUE(t.only_once);
	at(5);
	store().tick(100);
	EXPECT_EQ(status(caught), "failed");
	EXPECT_EQ(instance(caught).at("error"), "Lost");
	// Never handed out again.
	EXPECT_TRUE(store().claim("w1", {"default"}, 10).empty());

	int64_t plain = start("once_plain");
	claim_one("w1");
	at(10);
	store().tick(100);
	EXPECT_EQ(instance(plain).at("error"), "only_once.interrupted");
}

TEST_P(StoreTest, ReleaseGivesTasksBackAtOnceExceptOnlyOnce) {
	define("job", one_task());
	define("once", one_task(true));
	worker("w1");
	worker("w2");
	int64_t normal = start("job");
	int64_t once = start("once");
	auto tasks = store().claim("w1", {"default"}, 2);
	ASSERT_EQ(tasks.size(), 2u);
	// w2 cannot release what it does not hold.
	store().release("w2", {normal, once});
	EXPECT_EQ(status(normal), "running");
	store().release("w1", {normal, once});
	EXPECT_EQ(status(normal), "ready");
	EXPECT_EQ(status(once), "failed");
	EXPECT_EQ(instance(once).at("error"), "only_once.interrupted");
	Task again = claim_one("w2");
	EXPECT_EQ(again.instance_id, normal);
	for (auto &t : tasks)
		if (t.instance_id == normal) {
			EXPECT_NE(again.epoch, t.epoch);
		}
}

TEST_P(StoreTest, LiveWorkerIdIsRefusedNamingItsHost) {
	store().worker_register("w1", {{"host", "alpha"}, {"stale_after", "30s"}});
	at(29);
	EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("w1", {{"host", "beta"}}));
	// A heartbeat keeps it alive.
	store().worker_heartbeat("w1");
	at(58);
	EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("w1", {{"host", "beta"}}));
	// Stale after 30s without a heartbeat: the id can be taken.
	at(59);
	json r = store().worker_register("w1", {{"host", "beta"}});
	EXPECT_EQ(r.at("worker"), "w1");
	EXPECT_EQ(r.at("reclaimed"), 0);
	// A stopped worker's id is free at once.
	store().worker_stop("w1");
	EXPECT_NO_THROW(store().worker_register("w1", {{"host", "gamma"}}));
	json workers = store().list_workers();
	ASSERT_EQ(workers.size(), 1u);
	EXPECT_EQ(workers[0].at("host"), "gamma");
	EXPECT_EQ(workers[0].at("live"), true);
	EXPECT_EQ(workers[0].at("worker"), "w1");
	EXPECT_EQ(workers[0].at("heartbeat_at"), time_at(59));
	EXPECT_EQ(workers[0].at("started_at"), time_at(59));
	EXPECT_TRUE(workers[0].at("stopped_at").is_null());
}

TEST_P(StoreTest, TheRegistryShowsEachWorkersDurabilityLevel) {
	// What a worker's commits flush is the level of the session (store) that
	// registered it; genctl workers shows it.
	store().worker_register("default-level", {{"host", "a"}});
	store().set_durability(DurabilityLevel::strict);
	store().worker_register("strict-level", {{"host", "b"}});
	json workers = store().list_workers();
	ASSERT_EQ(workers.size(), 2u);
	EXPECT_EQ(workers[0].at("worker"), "default-level");
	EXPECT_EQ(workers[0].at("durability"), "essential");
	EXPECT_EQ(workers[1].at("durability"), "strict");
	// registering again records the level in force now
	store().set_durability(DurabilityLevel::none);
	store().worker_stop("strict-level");
	store().worker_register("strict-level", {{"host", "b"}});
	EXPECT_EQ(store().list_workers()[1].at("durability"), "none");
}

TEST_P(StoreTest, ReRegisteringTakesBackTheInstancesStillLeasedToThatId) {
	define("job", one_task());
	worker("w1", {{"lease_duration", "120s"}, {"stale_after", "30s"}});
	int64_t a = start("job");
	int64_t b = start("job");
	auto tasks = store().claim("w1", {"default"}, 2);
	ASSERT_EQ(tasks.size(), 2u);
	// The worker crashed; it comes back after stale-after, long before its
	// leases would lapse.
	at(31);
	json r = store().worker_register("w1", {{"lease_duration", "120s"}});
	EXPECT_EQ(r.at("reclaimed"), 2);
	EXPECT_EQ(status(a), "ready");
	EXPECT_EQ(status(b), "ready");
	auto again = store().claim("w1", {"default"}, 2);
	ASSERT_EQ(again.size(), 2u);
	for (auto &t : again)
		for (auto &old : tasks)
			if (old.instance_id == t.instance_id) {
				EXPECT_NE(t.epoch, old.epoch);
			}
}

// Whether the holder of an id is alive is told by something only
// a live holder keeps (PostgreSQL: its session; SQLite: its lock file), not
// by its heartbeat alone.  A holder whose connection (store) is gone is dead
// at once, even with a fresh heartbeat: its id and work are taken back.
TEST_P(StoreTest, AHolderWhoseConnectionIsGoneIsTakenOverAtOnce) {
	define("job", one_task());
	int64_t id = start("job");
	Task held;
	{
		auto holder = open_another();
		holder->worker_register("w1", {{"host", "alpha"}, {"lease_duration", "60s"}, {"stale_after", "30s"}});
		auto t = holder->claim("w1", {"default"}, 1);
		ASSERT_EQ(t.size(), 1u);
		held = t[0];
		// alive: refused at once, naming its host
		EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("w1", {{"host", "beta"}}));
	}  // the holder's process "dies": its connection closes
	at(1);	// heartbeat 1s old, stale only after 30s
	// PostgreSQL ends the closed session's backend a moment later: a real
	// event, waited for (bounded), not a clock.
	json r;
	for (int i = 0; i < 100; i++) {
		try {
			r = store().worker_register("w1", {{"host", "beta"}});
			break;
		} catch (const Error &e) {
			ASSERT_EQ(e.sqlstate, sqlstate::WORKER_ID_IN_USE) << e.what();
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
	}
	ASSERT_TRUE(r.is_object()) << "the dead holder was never taken over";
	EXPECT_EQ(r.at("reclaimed"), 1);
	EXPECT_EQ(status(id), "ready");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(id, held.epoch, "late"));
	EXPECT_EQ(claim_one("w1").instance_id, id);
	// and the new holder is alive in turn
	auto other = open_another();
	EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "beta", other->worker_register("w1", {{"host", "gamma"}}));
}

// "pooled": the connection is not the worker's own (a transaction pooler),
// so nothing tells whether it is alive until its heartbeat is stale: RC010,
// also after its connection is gone, until the test clock reaches
// stale-after, then taken over.
TEST_P(StoreTest, APooledHolderCannotBeToldDeadUntilItIsStale) {
	{
		auto holder = open_another();
		holder->worker_register("wp", {{"host", "alpha"}, {"stale_after", "30s"}, {"pooled", true}});
		// the same connection holds an id of its own (not pooled): its
		// take-over below is the sign that this connection is gone
		holder->worker_register("wn", {{"host", "alpha"}, {"stale_after", "30s"}});
		EXPECT_RAISES(sqlstate::WORKER_LIVENESS_UNKNOWN, "alpha", store().worker_register("wp", {{"host", "beta"}}));
		EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("wn", {{"host", "beta"}}));
	}  // the holder's process "dies": its connection closes
	at(10);
	// PostgreSQL ends the closed session's backend a moment later: waited
	// for (bounded) through the id whose session is recorded
	json taken;
	for (int i = 0; i < 200 && !taken.is_object(); i++) {
		try {
			taken = store().worker_register("wn", {{"host", "beta"}});
		} catch (const Error &e) {
			ASSERT_EQ(e.sqlstate, sqlstate::WORKER_ID_IN_USE) << e.what();
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
	}
	ASSERT_TRUE(taken.is_object()) << "the closed holder's session never ended";
	// its session is gone, and still the pooled id cannot be told dead: no
	// session was recorded for it; only its heartbeat's age tells
	EXPECT_RAISES(sqlstate::WORKER_LIVENESS_UNKNOWN, "alpha", store().worker_register("wp", {{"host", "beta"}}));
	at(29.999);	 // heartbeat at 0, stale-after 30s: still fresh
	EXPECT_RAISES(sqlstate::WORKER_LIVENESS_UNKNOWN, "alpha", store().worker_register("wp", {{"host", "beta"}}));
	at(30);
	EXPECT_EQ(store().worker_register("wp", {{"host", "beta"}}).at("reclaimed"), 0);
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "pooled", store().worker_register("wq", {{"pooled", "yes"}}));
}

TEST_P(StoreTest, UnknownOrStoppedWorkerIsRC006) {
	define("job", one_task());
	start("job");
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "ghost", store().claim("ghost", {"default"}, 1));
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "", store().worker_heartbeat("ghost"));
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "", store().renew("ghost", {1}));
	worker("w1");
	Task t = claim_one("w1");
	store().worker_stop("w1");
	// Stopping released the lease: the task is ready for another worker.
	EXPECT_EQ(status(t.instance_id), "ready");
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "w1", store().claim("w1", {"default"}, 1));
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "", store().worker_stop("w1"));
}

TEST_P(StoreTest, WorkerOptionsAreChecked) {
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "colour", store().worker_register("w", {{"colour", "red"}}));
	EXPECT_RAISES(sqlstate::INVALID_DATETIME_FORMAT, "lease_duration",
				  store().worker_register("w", {{"lease_duration", "soon"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "concurrency", store().worker_register("w", {{"concurrency", 0}}));
	// a duration under a microsecond is not positive (it would be stored as 0)
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "lease_duration",
				  store().worker_register("w", {{"lease_duration", "0.0000001s"}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "stale_after",
				  store().worker_register("w", {{"stale_after", 1e-300}}));
	EXPECT_RAISES(sqlstate::INVALID_PARAMETER_VALUE, "queues", store().worker_register("w", {{"queues", json::array()}}));
	EXPECT_TRUE(store().list_workers().empty());
	// Durations: seconds as a number, or a number with a unit.
	store().worker_register("w", {{"lease_duration", 1.5}, {"stale_after", "2m"}});
	json w = store().list_workers().at(0);
	EXPECT_EQ(w.at("lease_duration_ms"), 1500);
	EXPECT_EQ(w.at("stale_after_ms"), 120000);
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// Several connections claim at the same time: every task goes to exactly
// one of them (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one writer at a
// time, BEGIN IMMEDIATE).
TEST_P(StoreTest, ConcurrentClaimersNeverGetTheSameInstance) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	constexpr int kTasks = 40, kClaimers = 4;
	for (int i = 0; i < kTasks; i++) start("job");
	std::vector<std::unique_ptr<Store>> stores;
	for (int c = 0; c < kClaimers; c++) {
		stores.push_back(open_another());
		stores.back()->worker_register("w" + std::to_string(c), json::object());
	}
	std::vector<std::vector<int64_t>> got(kClaimers);
	std::vector<std::string> errors(kClaimers);
	std::vector<std::thread> threads;
	for (int c = 0; c < kClaimers; c++)
		threads.emplace_back([&, c] {
			try {
				for (;;) {
					auto tasks = stores[c]->claim("w" + std::to_string(c), {"default"}, 3);
					if (tasks.empty()) break;
					for (auto &t : tasks) got[c].push_back(t.instance_id);
				}
			} catch (const std::exception &e) {
				errors[c] = e.what();
			}
		});
	for (auto &t : threads) t.join();
	std::set<int64_t> all;
	size_t total = 0;
	for (int c = 0; c < kClaimers; c++) {
		EXPECT_EQ(errors[c], "") << "claimer " << c;
		total += got[c].size();
		all.insert(got[c].begin(), got[c].end());
	}
	EXPECT_EQ(total, static_cast<size_t>(kTasks));
	EXPECT_EQ(all.size(), static_cast<size_t>(kTasks));
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// The interruption bound counts lapses of one attempt: a retry starts over.
TEST_P(StoreTest, InterruptionsAreCountedPerAttempt) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true,
	  "Retry":[{"ErrorEquals":["Again"],"IntervalSeconds":1,"MaxAttempts":1}]}}})"));
	worker("w1", {{"lease_duration", "1s"}});
	int64_t id = start("job");
	double now = 0;
	for (int i = 0; i < 4; i++) {
		claim_one("w1");
		now += 1;
		at(now);
		store().tick(100);
	}
	EXPECT_EQ(instance(id).at("interruptions"), 4);
	Task t = claim_one("w1");
	EXPECT_EQ(t.resource, "genroc:noop");
	store().fail(id, t.epoch, "Again", "");
	EXPECT_EQ(instance(id).at("interruptions"), 0);
	now += 1;
	at(now);
	for (int i = 0; i < 4; i++) {
		claim_one("w1");
		now += 1;
		at(now);
		store().tick(100);
		EXPECT_EQ(status(id), "ready");
	}
	t = claim_one("w1");
	EXPECT_EQ(t.attempt, 1);
	EXPECT_EQ(store().complete(id, t.epoch, "done"), "succeeded");
}

// renew and claim count as heartbeats: a worker that renews stays live.
TEST_P(StoreTest, RenewAndClaimKeepTheWorkerAlive) {
	define("job", json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"handler:h","End":true}}})"));
	worker("w1", {{"host", "alpha"}, {"stale_after", "30s"}, {"lease_duration", "20s"}});
	start("job");
	at(20);
	Task t = claim_one("w1");
	at(45);
	EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("w1", {{"host", "beta"}}));
	EXPECT_EQ(store().renew("w1", {t.instance_id}), std::vector<int64_t>{t.instance_id});
	at(70);
	EXPECT_RAISES(sqlstate::WORKER_ID_IN_USE, "alpha", store().worker_register("w1", {{"host", "beta"}}));
	// A parked activity has no lease: complete() with any epoch is refused.
	define("act", json::parse(R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:x","End":true}}})"));
	int64_t act = start("act");
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(act, 0, json::object()));
	EXPECT_RAISES(sqlstate::LEASE_LOST, "", store().complete(act, 1, json::object()));
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// worker_drain: the drained worker is handed nothing more and its heartbeat
// says drain, while the other keeps claiming; the running task it holds is
// its to finish; list_workers shows it draining until it stops; a new
// registration of the id starts afresh.
TEST_P(StoreTest, ADrainedWorkerClaimsNothingMoreAndFinishesWhatItHolds) {
	define("job", one_task());
	worker("w1");
	worker("w2");
	int64_t a = start("job");
	int64_t b = start("job");
	Task held = claim_one("w1");
	EXPECT_EQ(held.instance_id, a);
	EXPECT_EQ(store().worker_heartbeat("w1"), json({{"drain", false}}));

	json r = store().worker_drain("w1");
	EXPECT_EQ(r, json({{"worker", "w1"}, {"draining", true}, {"running", 1}}));
	EXPECT_EQ(store().worker_drain("w1").at("draining"), true);	// asked again: the same
	EXPECT_EQ(store().worker_heartbeat("w1"), json({{"drain", true}}));
	EXPECT_EQ(store().worker_heartbeat("w2"), json({{"drain", false}}));
	EXPECT_TRUE(store().claim("w1", {"default"}, 5).empty());
	auto draining = [&](const std::string &id) {
		for (const auto &w : store().list_workers())
			if (w.at("worker") == id) return w.at("draining").get<bool>();
		ADD_FAILURE() << "no worker " << id;
		return false;
	};
	EXPECT_TRUE(draining("w1"));
	EXPECT_FALSE(draining("w2"));
	Task other = claim_one("w2");
	EXPECT_EQ(other.instance_id, b);
	// its running task is still its own to report
	EXPECT_EQ(store().renew("w1", {a}), std::vector<int64_t>({a}));
	EXPECT_EQ(store().complete(a, held.epoch, {{"done", true}}), "succeeded");
	store().worker_stop("w1");
	EXPECT_FALSE(draining("w1"));
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "w1", store().worker_drain("w1"));
	EXPECT_RAISES(sqlstate::WORKER_NOT_REGISTERED, "ghost", store().worker_drain("ghost"));
	// registered again: not draining, it claims
	worker("w1");
	EXPECT_FALSE(draining("w1"));
	start("job");
	EXPECT_EQ(store().claim("w1", {"default"}, 5).size(), 1u);
}

}  // namespace genroc::conformance
