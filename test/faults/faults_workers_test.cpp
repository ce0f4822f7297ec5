// faults_workers_test.cpp — worker processes die, freeze and stop under load,
// on both stores (real `genroc worker` processes sharing a PostgreSQL
// database or a SQLite file):
//   - kill -9 of workers in rounds, each restarted at once with its own id;
//   - a worker frozen (SIGSTOP) past its lease: its late reports refused, its
//     OnlyOnce effect recorded once;
//   - SIGTERM under load: running tasks finish within the grace or are
//     released by it.
// After each: the invariants (invariants.hpp).
//
// Hook for the "fencing" work (take-back timing after a
// restart by id): KillNineRounds restarts each worker by id and only asserts
// that the work ends within a generous bound; the timing test belongs beside
// it, in its own file (CMakeLists.txt, FAULTS_FENCING_SOURCES).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault_support.hpp"

namespace genroc::faults {
namespace {

using json = nlohmann::json;

class Workers : public FaultTest {};

std::string kill_rounds_name(const ::testing::TestParamInfo<std::string> &p) { return p.param; }

TEST_P(Workers, KillNineRoundsWithRestartsByIdLoseNothing) {
	fault_handlers();
	store()->define("fan", json::parse(kFanJob));
	const int n_workers = 3, rounds = scaled(4, 15);
	std::vector<std::string> ids;
	for (int i = 0; i < n_workers; i++) ids.push_back("kill-w" + std::to_string(i + 1));
	for (auto &id : ids) procs_.push_back(worker(id, {"--concurrency", "4"}));

	// Steps sleep 0.3s so a kill usually cuts running commands.
	Load load(db_url_, "fan", json{{"sleep", 0.3}}, 2, 40ms);
	ASSERT_TRUE(eventually([&] { return load.acks() >= 10; }, 60s)) << "the load did not get going";
	for (int r = 0; r < rounds; r++) {
		std::this_thread::sleep_for(1500ms);
		size_t k = r % n_workers;
		procs_[k]->signal(SIGKILL);
		ASSERT_TRUE(procs_[k]->wait(10s).has_value());
		// The same id again, at once: it waits for the dead one's heartbeat
		// to go stale (--stale-after), then takes its work back.
		procs_[k] = worker(ids[k], {"--concurrency", "4"});
	}
	load.stop();
	std::fprintf(stderr, "kill rounds (%s): %d rounds, %d starts acknowledged, %d refused\n", GetParam().c_str(),
				 rounds, load.acks(), load.errors());
	settle_and_check({load.acknowledged(), true, effects(), true}, 120s);
	for (auto &p : procs_) EXPECT_TRUE(p->running()) << "a worker exited:\n" << p->log();

	// Every instance ended well or in the one failure a cut OnlyOnce task
	// may end in.
	auto bad = query_rows(db_url_,
						  "SELECT id, status, coalesce(error, '') FROM {I} WHERE parent_id IS NULL AND status <> "
						  "'succeeded' AND NOT (status = 'failed' AND error = 'only_once.interrupted')");
	for (auto &r : bad) ADD_FAILURE() << "instance " << r[0] << " ended " << r[1] << " " << r[2];
}

// A worker frozen past its lease: another worker takes over; when the frozen
// one thaws, its reports for a plain task and for an OnlyOnce task are
// refused (lease lost) and change nothing; the OnlyOnce effect happened once.
TEST_P(Workers, FrozenPastItsLeaseItsLateReportsAreRefused) {
	auto step = script("step.sh", "cat >/dev/null\nsleep 3\necho '{\"by\":\"'\"$E2E_WHO\"'\"}'");
	auto record = script("record.sh", "cat >/dev/null\necho \"$GENROC_INSTANCE_ID $GENROC_STATE\" >> "
									  "\"$E2E_DIR/effects.log\"\nsleep 3\necho '{}'");
	handlers_ = handlers_file({{"step", step}, {"record", record}});
	auto s = store();
	s->define("plain", json::parse(R"({"StartAt":"Work","States":{
		"Work":{"Type":"Task","Resource":"handler:step","End":true}}})"));
	s->define("once", json::parse(R"({"StartAt":"Once","States":{
		"Once":{"Type":"Task","Resource":"handler:record","OnlyOnce":true,"End":true}}})"));
	int64_t plain = s->start("plain", json::object(), json::object()).instance_id;
	int64_t once = s->start("once", json::object(), json::object()).instance_id;

	procs_.push_back(worker("zombie"));
	auto leased_to_zombie = [&](int64_t id) {
		auto i = s->get_instance(id);
		return i.value("status", "") == "running";
	};
	ASSERT_TRUE(eventually([&] { return leased_to_zombie(plain) && leased_to_zombie(once); }, 30s));
	ASSERT_TRUE(eventually([&] { return read_lines(effects()).size() == 1; }, 30s));
	procs_[0]->signal(SIGSTOP);

	procs_.push_back(worker("rescuer"));
	json p = wait_status(plain, {"succeeded", "failed"}, 60s);
	json o = wait_status(once, {"succeeded", "failed"}, 60s);
	EXPECT_EQ(p.value("status", ""), "succeeded") << p.dump();
	EXPECT_EQ(p["output"].value("by", ""), "rescuer") << p.dump();
	EXPECT_EQ(o.value("status", ""), "failed") << o.dump();
	EXPECT_EQ(o.value("error", ""), "only_once.interrupted") << o.dump();

	// Thawed: both late reports are refused and logged, nothing changes.
	procs_[0]->signal(SIGCONT);
	auto refusals = [&] {
		int n = 0;
		for (auto &l : warnings_in(procs_[0]->log()))
			if (l.find("lease lost") != std::string::npos) n++;
		return n;
	};
	EXPECT_TRUE(eventually([&] { return refusals() == 2; }, 30s)) << procs_[0]->log();
	EXPECT_EQ(s->get_instance(plain)["output"].value("by", ""), "rescuer");
	EXPECT_EQ(s->get_instance(once).value("status", ""), "failed");
	EXPECT_EQ(read_lines(effects()).size(), 1u);
	expect_invariants({{plain, once}, true, effects(), true});
}

// SIGTERM while a worker runs short and long tasks under load: the short
// ones finish and are reported within the grace, the long ones are stopped
// and their leases released before it exits 0; another worker finishes them.
TEST_P(Workers, SigtermUnderLoadFinishesOrReleasesWithinTheGrace) {
	// "long" tasks sleep 60s until the fast file exists.
	auto step = script("step.sh", R"SH(input=$(cat)
case "$input" in *'"long":true'*) [ -e "$E2E_DIR/fast" ] || sleep 60 ;; *) sleep 0.3 ;; esac
echo '{"done":true}')SH");
	auto record = script("record.sh", "cat >/dev/null\necho \"$GENROC_INSTANCE_ID $GENROC_STATE\" >> "
									  "\"$E2E_DIR/effects.log\"\necho '{}'");
	handlers_ = handlers_file({{"step", step}, {"record", record}});
	store()->define("job", json::parse(kJob));
	procs_.push_back(worker("drained", {"--concurrency", "8", "--shutdown-grace", "3s"}));
	Load shorts(db_url_, "job", json::object(), 1, 50ms);
	std::set<int64_t> longs;
	{
		auto s = store();
		for (int i = 0; i < 3; i++) longs.insert(s->start("job", json{{"long", true}}, json::object()).instance_id);
	}
	auto running_by = [&](const std::string &w) {
		return std::stoll(query_rows(db_url_, "SELECT count(*) FROM {I} WHERE status = 'running' AND lease_owner = '" +
												  w + "'")[0][0]);
	};
	ASSERT_TRUE(eventually([&] { return shorts.acks() >= 10 && running_by("drained") >= 4; }, 60s));
	auto t0 = std::chrono::steady_clock::now();
	procs_[0]->signal(SIGTERM);
	auto st = procs_[0]->wait(30s);
	auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
	shorts.stop();
	ASSERT_TRUE(st.has_value()) << "the worker did not exit within 30s of SIGTERM:\n" << procs_[0]->log();
	EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << procs_[0]->log();
	std::fprintf(stderr, "SIGTERM drain (%s): exited after %lld ms (grace 3s)\n", GetParam().c_str(),
				 static_cast<long long>(took.count()));
	// Nothing is left leased to it.
	EXPECT_EQ(running_by("drained"), 0);
	// The long tasks were released, not left to lapse: logged as interrupted
	// by it (release) and ready or taken again.
	for (int64_t id : longs) {
		auto h = store()->history(id);
		bool released = false;
		for (auto &e : h)
			if (e.value("event", "") == "task_interrupted" && e["detail"].is_object() &&
				e["detail"].value("worker", "") == "drained")
				released = true;
		EXPECT_TRUE(released) << "instance " << id << ": " << h.dump();
	}

	::close(::open((dir_ + "/fast").c_str(), O_CREAT | O_WRONLY, 0644));
	procs_.push_back(worker("after"));
	settle_and_check({shorts.acknowledged(), true, effects(), true}, 60s);
	for (int64_t id : longs) EXPECT_EQ(store()->get_instance(id).value("status", ""), "succeeded");
}

INSTANTIATE_TEST_SUITE_P(Stores, Workers, ::testing::Values("postgres", "sqlite"), kill_rounds_name);

}  // namespace
}  // namespace genroc::faults
