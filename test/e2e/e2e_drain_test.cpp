// e2e_drain_test.cpp — `genctl workers drain ID` on a real
// `genroc worker` (both stores).  The drained worker stops claiming, lets
// its running task finish and exits 0; the other keeps working; `genctl
// workers` shows "draining" meanwhile and "stopped" after.  A NOTIFY on
// genroc_drain from any role only wakes a worker (PostgreSQL).
//
// Bounds are generous (a loaded machine); nothing asserts a duration.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

class Drain : public EachStoreWorkerTest {
  protected:
	// `genctl --database DB ARGS`: {exit code, stdout and stderr}.  As the
	// test's own role (an operator's rights: it owns the workers' database).
	std::pair<int, std::string> genctl(const std::string &args) {
		const std::string out = dir_ + "/genctl.out";
		const std::string cmd = "timeout 60 '" + std::string(GENCTL_PATH) + "' --database '" + db_url_ + "' " + args +
								" >'" + out + "' 2>&1";
		int st = std::system(cmd.c_str());
		std::ifstream in(out);
		std::stringstream ss;
		ss << in.rdbuf();
		return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ss.str()};
	}
	json worker_row(const std::string &id) {
		for (const auto &w : store()->list_workers())
			if (w.at("worker") == id) return w;
		return json::object();
	}
	// The STATE cell of the worker's line in `genctl workers`.
	std::string state_shown(const std::string &id) {
		auto [rc, text] = genctl("workers");
		std::istringstream is(text);
		std::string line;
		while (std::getline(is, line)) {
			std::istringstream cells(line);
			std::string who, host, state;
			cells >> who >> host >> state;
			if (who == id) return state;
		}
		return "(no line for " + id + " in: " + text + ")";
	}
};

json one_step(const json &params) {
	return {{"StartAt", "Step"},
			{"States",
			 {{"Step", {{"Type", "Task"}, {"Resource", "handler:step"}, {"Parameters", params}, {"Next", "Done"}}},
			  {"Done", {{"Type", "Succeed"}}}}}};
}

TEST_P(Drain, TheDrainedWorkerFinishesItsTaskAndExitsWhileTheOtherKeepsWorking) {
	// The held task's handler runs until the test releases it (the file
	// "release"): it is running while the test looks, by construction.  It
	// says it started by the file "held".  (Bounded: a test that fails
	// before the release leaves no handler behind for long.)
	const std::string release = dir_ + "/release", held = dir_ + "/held";
	const std::string hold = script("hold.sh", R"SH(cat >/dev/null
echo "$E2E_WHO $GENROC_INSTANCE_ID $GENROC_STATE $$" >> "$E2E_DIR/runs.log"
: > "$E2E_DIR/held"
i=0
while [ ! -e "$E2E_DIR/release" ] && [ $i -lt 3000 ]; do sleep 0.05; i=$((i+1)); done
printf '{"who":"%s","state":"%s"}\n' "$E2E_WHO" "$GENROC_STATE")SH");
	handlers_ = handlers_file({{"step", dir_ + "/step.sh"}, {"record", dir_ + "/record.sh"}, {"hold", hold}});
	auto exists = [](const std::string &path) { return std::ifstream(path).good(); };
	auto a = worker("wa", {"--shutdown-grace", "60s"});
	auto b = worker("wb", {"--shutdown-grace", "60s"});
	ASSERT_TRUE(eventually([&] { return worker_row("wa").value("live", false) && worker_row("wb").value("live", false); },
						   30s))
		<< a->log() << b->log();
	EXPECT_EQ(state_shown("wa"), "live");

	auto s = store();
	s->define("slow", {{"StartAt", "Step"},
					   {"States",
						{{"Step", {{"Type", "Task"}, {"Resource", "handler:hold"}, {"Next", "Done"}}},
						 {"Done", {{"Type", "Succeed"}}}}}});
	s->define("quick", one_step(json::object()));
	const int64_t slow = s->start("slow", json::object(), json::object()).instance_id;
	std::string holder;
	ASSERT_TRUE(eventually(
		[&] {
			json i = s->get_instance(slow);
			if (i.value("status", "") != "running") return false;
			holder = i.value("lease_owner", "");
			return !holder.empty();
		},
		30s))
		<< s->get_instance(slow).dump();
	ASSERT_TRUE(eventually([&] { return exists(held); }, 30s)) << "the held handler never started";
	const std::string other = holder == "wa" ? "wb" : "wa";
	Proc &drained = holder == "wa" ? *a : *b;
	Proc &keeps = holder == "wa" ? *b : *a;

	auto [rc, said] = genctl("workers drain " + holder);
	ASSERT_EQ(rc, 0) << said;
	EXPECT_NE(said.find("draining"), std::string::npos) << said;
	EXPECT_EQ(worker_row(holder).value("draining", false), true) << worker_row(holder).dump();
	// shown while its task still runs (held until released; the drain waits for it)
	EXPECT_EQ(state_shown(holder), "draining");
	EXPECT_EQ(state_shown(other), "live");

	// new work goes to the other worker only
	std::vector<int64_t> quick;
	for (int i = 0; i < 3; i++) quick.push_back(s->start("quick", json::object(), json::object()).instance_id);
	for (int64_t id : quick) {
		json i = wait_status(id, {"succeeded", "failed"}, 60s);
		ASSERT_EQ(i.value("status", ""), "succeeded") << i.dump() << keeps.log();
		EXPECT_EQ(i.at("output").at("who"), other) << i.dump();
	}
	// the drained worker waits for its running task: still there, still
	// draining, until the handler is released
	EXPECT_TRUE(drained.running()) << drained.log();
	EXPECT_EQ(s->get_instance(slow).value("status", ""), "running");
	EXPECT_EQ(state_shown(holder), "draining");
	std::ofstream(release).put('\n');
	// the held task was finished by its worker, which then exited 0
	json done = wait_status(slow, {"succeeded", "failed"}, 60s);
	ASSERT_EQ(done.value("status", ""), "succeeded") << done.dump() << drained.log();
	EXPECT_EQ(done.at("output").at("who"), holder);
	EXPECT_EQ(done.value("interruptions", -1), 0) << done.dump();
	auto st = drained.wait(60s);
	ASSERT_TRUE(st.has_value()) << drained.log();
	EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << drained.log();
	EXPECT_NE(drained.log().find("drain requested"), std::string::npos) << drained.log();
	EXPECT_EQ(state_shown(holder), "stopped");
	EXPECT_TRUE(keeps.running()) << keeps.log();
	EXPECT_EQ(state_shown(other), "live");

	// and it still works alone
	const int64_t after = s->start("quick", json::object(), json::object()).instance_id;
	json last = wait_status(after, {"succeeded", "failed"}, 60s);
	EXPECT_EQ(last.value("status", ""), "succeeded") << last.dump() << keeps.log();
	EXPECT_EQ(last.at("output").at("who"), other);

	// a worker that is not there: RC006, exit 1
	auto [bad_rc, bad] = genctl("workers drain ghost");
	EXPECT_EQ(bad_rc, 1) << bad;
	EXPECT_NE(bad.find("RC006"), std::string::npos) << bad;
}

// A NOTIFY is a wake-up, never a command: anyone who can connect may send
// one, on any channel, with any payload.  A role with no genroc rights at
// all names the worker on genroc_drain (and sends one with no payload): the
// worker, woken, reads its drain request from the database, finds none, and
// keeps claiming and running tasks.  A drain asked through genroc (genctl
// workers drain, worker_drain) still stops it.
TEST_P(Drain, ANotifyFromAnyRoleOnlyWakesTheWorker) {
	if (GetParam() != "postgres") GTEST_SKIP() << "notifications are PostgreSQL's";
	auto w = worker("wn", {"--shutdown-grace", "60s"});
	ASSERT_TRUE(eventually([&] { return worker_row("wn").value("live", false); }, 30s)) << w->log();
	auto s = store();
	s->define("quick", one_step(json::object()));
	json first = wait_status(s->start("quick", json::object(), json::object()).instance_id, {"succeeded", "failed"}, 60s);
	ASSERT_EQ(first.value("status", ""), "succeeded") << first.dump() << w->log();

	const std::string role = "e2e_nobody_" + db_name_;
	pg_exec(PgServer::get().admin_url(), "CREATE ROLE " + role + " LOGIN");
	struct DropRole {
		std::string role;
		~DropRole() {
			try {
				pg_exec(PgServer::get().admin_url(), "DROP ROLE IF EXISTS " + role);
			} catch (const std::exception &) {
			}
		}
	} drop{role};
	std::string nobody = db_url_;
	nobody.replace(nobody.find("://") + 3, nobody.find('@') - nobody.find("://") - 3, role);
	// Sent again at each look, so one sent before the worker listened
	// cannot make the test pass or fail by chance.
	ASSERT_TRUE(eventually(
		[&] {
			pg_exec(nobody, "NOTIFY genroc_drain, 'wn'");
			pg_exec(nobody, "NOTIFY genroc_drain");
			pg_exec(nobody, "SELECT pg_notify('genroc', 'wn')");
			return w->log().find("woken by genroc_drain") != std::string::npos;
		},
		30s))
		<< w->log();

	// still serving: a task started after the notifications runs on it
	json later = wait_status(s->start("quick", json::object(), json::object()).instance_id, {"succeeded", "failed"}, 60s);
	ASSERT_EQ(later.value("status", ""), "succeeded") << later.dump() << w->log();
	EXPECT_EQ(later.at("output").at("who"), "wn") << later.dump();
	EXPECT_TRUE(w->running()) << w->log();
	EXPECT_EQ(worker_row("wn").value("draining", true), false) << worker_row("wn").dump();
	EXPECT_EQ(w->log().find("drain requested"), std::string::npos) << w->log();

	// a drain asked through genroc stops it
	auto [rc, said] = genctl("workers drain wn");
	ASSERT_EQ(rc, 0) << said;
	auto st = w->wait(60s);
	ASSERT_TRUE(st.has_value()) << w->log();
	EXPECT_EQ(exit_code(st), 0) << w->log();
	EXPECT_NE(w->log().find("drain requested"), std::string::npos) << w->log();
	EXPECT_EQ(state_shown("wn"), "stopped");
}

INSTANTIATE_TEST_SUITE_P(Stores, Drain, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

}  // namespace
}  // namespace genroc::e2e_worker
