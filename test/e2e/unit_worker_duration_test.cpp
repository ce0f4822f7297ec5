// unit_worker_duration_test.cpp — flag durations, the command line, error classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "cli.hpp"
#include "config.hpp"
#include "duration.hpp"
#include "size.hpp"
#include "stop.hpp"
#include "store.hpp"

namespace genroc {
namespace {

TEST(Duration, ParsesTheDocumentedForms) {
	EXPECT_EQ(parse_duration("10s"), Millis(10'000));
	EXPECT_EQ(parse_duration("500ms"), Millis(500));
	EXPECT_EQ(parse_duration("720h"), Millis(720LL * 3'600'000));
	EXPECT_EQ(parse_duration("1h30m"), Millis(5'400'000));
	EXPECT_EQ(parse_duration("1.5s"), Millis(1'500));
	EXPECT_EQ(parse_duration("7d"), Millis(7LL * 86'400'000));
	EXPECT_EQ(parse_duration("2m3s4ms"), Millis(123'004));
	EXPECT_EQ(parse_duration("0"), Millis(0));
	EXPECT_EQ(parse_duration("0s"), Millis(0));
}

TEST(Duration, RefusesWhatIsNotADuration) {
	for (const char *bad : {"", "10", "-1s", "10x", "s", "1h30", "1.2.3s", " 10s", "10s ", "1e3s", "ms",
							"10S", "99999999999999999999d"})
		EXPECT_FALSE(parse_duration(bad).has_value()) << "accepted \"" << bad << "\"";
}

TEST(Duration, FormatsBackToTheSameValue) {
	EXPECT_EQ(format_duration(Millis(1'500)), "1500ms");
	EXPECT_EQ(format_duration(Millis(5'400'000)), "1h30m");
	EXPECT_EQ(format_duration(Millis(10'000)), "10s");
	EXPECT_EQ(format_duration(Millis(0)), "0s");
	for (int64_t ms : {1LL, 999LL, 60'000LL, 90'061'000LL, 2'592'000'000LL})
		EXPECT_EQ(parse_duration(format_duration(Millis(ms))), Millis(ms)) << ms;
}

TEST(Size, ParsesBytesAndBinaryUnits) {
	EXPECT_EQ(parse_size("512"), 512);
	EXPECT_EQ(parse_size("0"), 0);
	EXPECT_EQ(parse_size("512B"), 512);
	EXPECT_EQ(parse_size("64KB"), 64 * 1024);
	EXPECT_EQ(parse_size("64kb"), 64 * 1024);
	EXPECT_EQ(parse_size("64kB"), 64 * 1024);
	EXPECT_EQ(parse_size("1MB"), 1024 * 1024);
	EXPECT_EQ(parse_size("2GB"), int64_t{2} << 30);
}

TEST(Size, RefusesWhatIsNotASize) {
	for (const char *bad : {"", "MB", "-1", "1.5MB", "1 MB", " 1MB", "1MB ", "1TB", "1M", "1K", "1e3",
							"+5", "99999999999999999999", "9007199254740993"})
		EXPECT_FALSE(parse_size(bad).has_value()) << "accepted \"" << bad << "\"";
}

// parse_command_line with an argv built from strings.
int parse(std::vector<std::string> args, Config &cfg) {
	args.insert(args.begin(), "genroc");
	std::vector<const char *> argv;
	for (auto &a : args) argv.push_back(a.c_str());
	return parse_command_line(static_cast<int>(argv.size()), argv.data(), cfg);
}

class CommandLine : public ::testing::Test {
  protected:
	void SetUp() override {
		for (const char *v : {"GENROC_WORKER_ID", "GENROC_LEASE_DURATION", "GENROC_CONCURRENCY", "GENROC_QUEUE",
							  "GENROC_DATABASE", "GENROC_MANUAL_TICK", "GENROC_LOG_PAYLOADS", "GENROC_LOG_PAYLOAD_MAX",
							  "GENROC_LOG_RETENTION", "GENROC_INSTANCE_RETENTION"})
			::unsetenv(v);
	}
	void TearDown() override { SetUp(); }
};

TEST_F(CommandLine, DefaultsMatchTheProductionGuide) {
	Config cfg;
	ASSERT_EQ(parse({"worker"}, cfg), -1);
	EXPECT_EQ(cfg.command, "worker");
	EXPECT_EQ(cfg.database, "./genroc.db");
	EXPECT_EQ(cfg.lease_duration, Millis(10'000));
	EXPECT_EQ(cfg.stale_after, Millis(30'000));
	EXPECT_EQ(cfg.shutdown_grace, Millis(15'000));
	EXPECT_EQ(cfg.tick_interval, Millis(1'000));
	EXPECT_EQ(cfg.concurrency, 16);
	EXPECT_EQ(cfg.listen, "127.0.0.1:8448");
	EXPECT_FALSE(cfg.manual_tick);
	EXPECT_EQ(cfg.worker_id, default_worker_id(cfg, store_identity("./genroc.db")));
	EXPECT_EQ(worker_queues(cfg, {}), std::vector<std::string>{"default"});
}

// The default worker id: the host name and a suffix that one command line
// keeps at every restart, and that another store or another set of served
// queues changes (docs/cli.md, the flag table: `--worker-id`).
TEST_F(CommandLine, DefaultWorkerIdIsTheHostAndASuffixPerStoreAndQueues) {
	auto id = [](std::vector<std::string> args) {
		Config cfg;
		EXPECT_EQ(parse(args, cfg), -1);
		return cfg.worker_id;
	};
	const std::string a = id({"worker", "--database", "/tmp/a.db"});
	ASSERT_EQ(a.size(), host_name().size() + 9) << a;
	EXPECT_EQ(a.rfind(host_name() + "-", 0), 0u) << a;
	EXPECT_EQ(a.find_first_not_of("0123456789abcdef", host_name().size() + 1), std::string::npos) << a;
	// stable: the same command line, the same file however it is spelled
	EXPECT_EQ(id({"worker", "--database", "/tmp/a.db"}), a);
	EXPECT_EQ(id({"worker", "--database", "/tmp/./x/../a.db"}), a);
	EXPECT_EQ(id({"worker", "--database", "/tmp/a.db", "--concurrency", "3", "--lease-duration", "5s"}), a);
	// another store, command, region, queue set or --exclusive: another id
	const std::vector<std::string> others = {
		id({"worker", "--database", "/tmp/b.db"}),
		id({"serve", "--database", "/tmp/a.db"}),
		id({"worker", "--database", "/tmp/a.db", "--region", "eu"}),
		id({"worker", "--database", "/tmp/a.db", "--queue", "gpu"}),
		id({"worker", "--database", "/tmp/a.db", "--queue", "gpu", "--exclusive"}),
		id({"worker", "--database", "postgresql://app@db1:5432/app"}),
		id({"worker", "--database", "postgresql://app@db2:5432/app"}),
		id({"worker", "--database", "postgresql://app@db1:5432/other"})};
	for (size_t i = 0; i < others.size(); i++) {
		EXPECT_NE(others[i], a) << i;
		for (size_t j = 0; j < i; j++) EXPECT_NE(others[i], others[j]) << i << " " << j;
	}
	// the queue set, not how it is written; PostgreSQL: not the password
	EXPECT_EQ(id({"worker", "--database", "/tmp/a.db", "--queue", "io,gpu", "--queue", "gpu"}),
			  id({"worker", "--database", "/tmp/a.db", "--queue", "gpu", "--queue", "io"}));
	EXPECT_EQ(id({"worker", "--database", "postgresql://app:old@db1:5432/app?sslmode=require"}),
			  id({"worker", "--database", "postgresql://app:new@db1:5432/app"}));
	EXPECT_EQ(id({"worker", "--database", "host=db1 port=5432 dbname=app user=app"}),
			  id({"worker", "--database", "postgresql://app@db1:5432/app"}));
	// the flag and the variable still win
	EXPECT_EQ(id({"worker", "--database", "/tmp/a.db", "--worker-id", "w-flag"}), "w-flag");
}

TEST_F(CommandLine, BadDurationIsAUsageErrorNamingTheFlag) {
	Config cfg;
	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse({"worker", "--lease-duration", "10"}, cfg), kExitUsage);
	std::string err = ::testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("--lease-duration"), std::string::npos) << err;
	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse({"serve", "--shutdown-grace", "soon"}, cfg), kExitUsage);
	err = ::testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("--shutdown-grace"), std::string::npos) << err;
}

TEST_F(CommandLine, UnknownFlagOrCommandIsAUsageError) {
	Config cfg;
	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse({"worker", "--no-such-flag"}, cfg), kExitUsage);
	EXPECT_EQ(parse({"frobnicate"}, cfg), kExitUsage);
	EXPECT_EQ(parse({}, cfg), kExitUsage);
	EXPECT_EQ(parse({"worker", "--log-mode", "yaml"}, cfg), kExitUsage);
	EXPECT_EQ(parse({"worker", "--concurrency", "0"}, cfg), kExitUsage);
	EXPECT_EQ(parse({"worker", "--exclusive"}, cfg), kExitUsage);
	EXPECT_EQ(parse({"serve", "--listen", "nowhere"}, cfg), kExitUsage);
	EXPECT_EQ(parse({"run"}, cfg), kExitUsage);	// FILE is required
	::testing::internal::GetCapturedStderr();
}

TEST_F(CommandLine, EnvironmentVariablesFillFlagsAndFlagsWin) {
	::setenv("GENROC_LEASE_DURATION", "1500ms", 1);
	::setenv("GENROC_CONCURRENCY", "3", 1);
	::setenv("GENROC_QUEUE", "gpu,io", 1);
	::setenv("GENROC_MANUAL_TICK", "true", 1);
	Config cfg;
	ASSERT_EQ(parse({"worker"}, cfg), -1);
	EXPECT_EQ(cfg.lease_duration, Millis(1'500));
	EXPECT_EQ(cfg.concurrency, 3);
	EXPECT_EQ(cfg.queues, (std::vector<std::string>{"gpu", "io"}));
	EXPECT_TRUE(cfg.manual_tick);
	Config cfg2;
	ASSERT_EQ(parse({"worker", "--lease-duration", "2s", "--concurrency", "5"}, cfg2), -1);
	EXPECT_EQ(cfg2.lease_duration, Millis(2'000));
	EXPECT_EQ(cfg2.concurrency, 5);
}

TEST_F(CommandLine, WorkerIdFromEnvironmentWinsOverFlagAndHostName) {
	Config cfg;
	ASSERT_EQ(parse({"worker", "--worker-id", "w-flag"}, cfg), -1);
	EXPECT_EQ(cfg.worker_id, "w-flag");
	::setenv("GENROC_WORKER_ID", "w-env", 1);
	Config cfg2;
	ASSERT_EQ(parse({"worker", "--worker-id", "w-flag"}, cfg2), -1);
	EXPECT_EQ(cfg2.worker_id, "w-env");
}

TEST_F(CommandLine, QueuesIncludeHandlerQueuesAndRegion) {
	Config cfg;
	ASSERT_EQ(parse({"worker", "--queue", "gpu", "--queue", "io", "--region", "eu"}, cfg), -1);
	EXPECT_EQ(worker_queues(cfg, {"ansible"}),
			  (std::vector<std::string>{"ansible.eu", "default.eu", "gpu.eu", "io.eu"}));
	Config cfg2;
	ASSERT_EQ(parse({"worker", "--queue", "gpu", "--exclusive"}, cfg2), -1);
	EXPECT_EQ(worker_queues(cfg2, {}), std::vector<std::string>{"gpu"});
}

TEST_F(CommandLine, DurabilityAndCommitDelay) {
	Config cfg;
	ASSERT_EQ(parse({"worker"}, cfg), -1);
	EXPECT_EQ(cfg.durability, "essential");
	EXPECT_EQ(cfg.pg_commit_delay, -1);
	Config cfg2;
	ASSERT_EQ(parse({"serve", "--durability", "strict", "--pg-commit-delay", "250"}, cfg2), -1);
	EXPECT_EQ(cfg2.durability, "strict");
	EXPECT_EQ(cfg2.pg_commit_delay, 250);
	Config cfg3;
	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse({"worker", "--durability", "paranoid"}, cfg3), kExitUsage);
	std::string err = ::testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("--durability"), std::string::npos) << err;
	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse({"worker", "--pg-commit-delay", "200000"}, cfg3), kExitUsage);
	err = ::testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("--pg-commit-delay"), std::string::npos) << err;
}

TEST_F(CommandLine, LogAndRetentionFlags) {
	Config cfg;
	ASSERT_EQ(parse({"worker"}, cfg), -1);
	EXPECT_TRUE(cfg.log_payloads);
	EXPECT_EQ(cfg.log_payload_max, 1024 * 1024);
	EXPECT_EQ(cfg.log_retention, Millis(7LL * 86'400'000));
	EXPECT_EQ(cfg.instance_retention, Millis(0));
	Config cfg2;
	ASSERT_EQ(parse({"serve", "--log-payloads=false", "--log-payload-max", "64KB", "--log-retention", "0",
					 "--instance-retention", "720h"},
					cfg2),
			  -1);
	EXPECT_FALSE(cfg2.log_payloads);
	EXPECT_EQ(cfg2.log_payload_max, 64 * 1024);
	EXPECT_EQ(cfg2.log_retention, Millis(0));
	EXPECT_EQ(cfg2.instance_retention, Millis(720LL * 3'600'000));
	Config cfg3;
	ASSERT_EQ(parse({"api", "--log-payloads"}, cfg3), -1);
	EXPECT_TRUE(cfg3.log_payloads);
	// from the environment, for every command
	::setenv("GENROC_LOG_PAYLOADS", "false", 1);
	::setenv("GENROC_LOG_PAYLOAD_MAX", "512", 1);
	::setenv("GENROC_INSTANCE_RETENTION", "30d", 1);
	Config cfg4;
	ASSERT_EQ(parse({"run", "x.json"}, cfg4), -1);
	EXPECT_FALSE(cfg4.log_payloads);
	EXPECT_EQ(cfg4.log_payload_max, 512);
	EXPECT_EQ(cfg4.instance_retention, Millis(30LL * 86'400'000));
}

TEST_F(CommandLine, BadSizeOrRetentionIsAUsageErrorNamingTheFlag) {
	const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
		{{"worker", "--log-payload-max", "1.5MB"}, "--log-payload-max"},
		{{"worker", "--log-payload-max", "lots"}, "--log-payload-max"},
		{{"worker", "--log-payload-max", "4GB"}, "--log-payload-max"},
		{{"serve", "--log-retention", "7"}, "--log-retention"},
		{{"serve", "--log-retention", "500ms"}, "--log-retention"},
		{{"run", "x.json", "--instance-retention=-1d"}, "--instance-retention"},
		{{"worker", "--instance-retention", "100000d"}, "--instance-retention"},
		{{"worker", "--log-payloads=maybe"}, "--log-payloads"},
	};
	for (const auto &[args, flag] : cases) {
		Config cfg;
		::testing::internal::CaptureStderr();
		EXPECT_EQ(parse(args, cfg), kExitUsage) << args.back();
		std::string err = ::testing::internal::GetCapturedStderr();
		EXPECT_NE(err.find(flag), std::string::npos) << err;
	}
}

// The HTTP server's limits (docs/http-api.md "HTTP server limits"): defaults, values,
// and a one-line usage error naming the flag for a value out of range.
TEST_F(CommandLine, HttpLimitsTakeValuesAndRefuseNonsense) {
	Config cfg;
	ASSERT_EQ(parse({"api"}, cfg), -1);
	EXPECT_EQ(cfg.http_max_connections, 256);
	EXPECT_EQ(cfg.http_request_timeout, Millis(30'000));
	Config cfg2;
	ASSERT_EQ(parse({"serve", "--http-max-connections", "1000", "--http-request-timeout", "2m"}, cfg2), -1);
	EXPECT_EQ(cfg2.http_max_connections, 1000);
	EXPECT_EQ(cfg2.http_request_timeout, Millis(120'000));
	const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
		{{"api", "--http-max-connections", "0"}, "--http-max-connections: must be a whole number from 1 to 100000"},
		{{"api", "--http-max-connections", "99999999999999999999"}, "--http-max-connections"},
		{{"serve", "--http-max-connections", "12x"}, "--http-max-connections"},
		{{"api", "--http-request-timeout", "50ms"}, "--http-request-timeout: must be a duration from 100ms to 1h"},
		{{"api", "--http-request-timeout", "soon"}, "--http-request-timeout"},
	};
	for (const auto &[args, message] : cases) {
		Config c;
		::testing::internal::CaptureStderr();
		EXPECT_EQ(parse(args, c), kExitUsage) << args.back();
		std::string err = ::testing::internal::GetCapturedStderr();
		EXPECT_NE(err.find(message), std::string::npos) << err;
		EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	}
}

TEST_F(CommandLine, RunTakesFileInputNameAndJson) {
	Config cfg;
	ASSERT_EQ(parse({"run", "x/order.json", "--input", "{\"a\":1}", "--name", "n", "--json"}, cfg), -1);
	EXPECT_EQ(cfg.command, "run");
	EXPECT_EQ(cfg.run_file, "x/order.json");
	EXPECT_EQ(cfg.run_input, "{\"a\":1}");
	EXPECT_EQ(cfg.run_name, "n");
	EXPECT_TRUE(cfg.run_json);
}

}  // namespace
}  // namespace genroc

// Which errors the worker waits out (an outage) and which it reports again
// at once (a lost race), and which end the report.
TEST(Errors, TransientAndConflictClasses) {
	EXPECT_TRUE(genroc::is_transient(genroc::Error("08006", "connection failure")));
	EXPECT_TRUE(genroc::is_transient(genroc::Error("57P01", "admin shutdown")));
	EXPECT_FALSE(genroc::is_transient(genroc::Error("40P01", "deadlock detected")));
	EXPECT_TRUE(genroc::is_conflict(genroc::Error("40P01", "deadlock detected")));
	EXPECT_TRUE(genroc::is_conflict(genroc::Error("40001", "could not serialize access")));
	EXPECT_FALSE(genroc::is_conflict(genroc::Error("RC004", "lease lost")));
	EXPECT_FALSE(genroc::is_conflict(genroc::Error("08006", "connection failure")));
}
