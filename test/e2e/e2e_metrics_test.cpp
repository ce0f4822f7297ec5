// e2e_metrics_test.cpp — GET /metrics of real genroc processes (docs/operations.md
// "Metrics"): scraped before and after work runs (successes, a failure with
// a retry), the counters and gauges checked for the amounts they moved,
// every scrape checked as Prometheus text format 0.0.4 by the parser here
// (and by promtool when Debian's prometheus package is installed); who
// ticks in /healthz and `genctl tickers`; on PostgreSQL (`genroc api` and a
// `genroc worker --metrics-listen`) and on SQLite (`genroc serve --auth`).
#include <signal.h>
#include <sys/wait.h>

#include <httplib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_worker_support.hpp"

namespace genroc::e2e_worker {
namespace {

// Series "name{labels as sent}" -> value, from a scrape checked against the
// text format 0.0.4 and Prometheus' naming rules as genroc follows them:
// every line a HELP, a TYPE or a sample; a family's HELP and TYPE once each,
// before its samples; names [a-zA-Z_:][a-zA-Z0-9_:]* with the genroc_
// prefix, counters ending in _total, no series twice; label values quoted
// with only \\, \" and \n escaped; histogram buckets cumulative, the
// le="+Inf" bucket equal to _count.  A violation is an error naming the line.
using Series = std::map<std::string, double>;

Series parse_exposition(const std::string &text, std::string &error) {
	static const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
	static const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");
	Series out;
	std::map<std::string, std::string> types;	 // family -> type
	std::set<std::string> helped, sampled;
	std::map<std::string, std::pair<double, double>> last_bucket;	// histogram series -> (le, count)
	std::map<std::string, double> counts;							// histogram series -> _count
	std::istringstream in(text);
	std::string line;
	int n = 0;
	auto fail = [&](const std::string &why) {
		error = "line " + std::to_string(n) + " \"" + line + "\": " + why;
		return Series{};
	};
	if (text.empty() || text.back() != '\n') {
		error = "the text does not end with a newline";
		return {};
	}
	while (std::getline(in, line)) {
		++n;
		if (line.empty()) return fail("empty line");
		if (line[0] == '#') {
			std::istringstream ls(line);
			std::string hash, kw, name;
			ls >> hash >> kw >> name;
			if (kw != "HELP" && kw != "TYPE") return fail("a comment that is neither HELP nor TYPE");
			if (!std::regex_match(name, kName)) return fail("bad metric name");
			if (name.rfind("genroc_", 0) != 0) return fail("no genroc_ prefix");
			if (sampled.count(name)) return fail("HELP or TYPE after the family's samples");
			if (kw == "HELP") {
				if (!helped.insert(name).second) return fail("second HELP");
			} else {
				std::string type;
				ls >> type;
				static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
				if (!kTypes.count(type)) return fail("unknown type");
				if (types.count(name)) return fail("second TYPE");
				if (type == "counter" && (name.size() < 6 || name.substr(name.size() - 6) != "_total"))
					return fail("a counter's name must end in _total");
				types[name] = type;
			}
			continue;
		}
		// name{labels} value
		size_t i = 0;
		while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
		const std::string name = line.substr(0, i);
		if (!std::regex_match(name, kName)) return fail("bad sample name");
		std::string family = name;
		std::string suffix;
		for (const char *s : {"_bucket", "_sum", "_count"}) {
			const std::string sf = s;
			if (name.size() > sf.size() && name.substr(name.size() - sf.size()) == sf &&
				types.count(name.substr(0, name.size() - sf.size())) &&
				types[name.substr(0, name.size() - sf.size())] == "histogram") {
				family = name.substr(0, name.size() - sf.size());
				suffix = sf;
			}
		}
		if (!types.count(family)) return fail("a sample before its TYPE");
		sampled.insert(family);
		std::string labels, le, others;
		if (i < line.size() && line[i] == '{') {
			size_t j = i + 1;
			bool first = true;
			while (j < line.size() && line[j] != '}') {
				if (!first) {
					if (line[j] != ',') return fail("labels not separated by a comma");
					++j;
				}
				first = false;
				size_t eq = line.find('=', j);
				if (eq == std::string::npos) return fail("a label without =");
				const std::string lname = line.substr(j, eq - j);
				if (!std::regex_match(lname, kLabelName)) return fail("bad label name");
				if (eq + 1 >= line.size() || line[eq + 1] != '"') return fail("a label value not quoted");
				std::string value;
				size_t k = eq + 2;
				for (; k < line.size() && line[k] != '"'; ++k) {
					if (line[k] == '\\') {
						++k;
						if (k >= line.size() || (line[k] != '\\' && line[k] != '"' && line[k] != 'n'))
							return fail("a bad escape in a label value");
					}
					value += line[k];
				}
				if (k >= line.size()) return fail("an unterminated label value");
				if (lname == "le")
					le = value;
				else
					others += lname + "=" + value + ",";
				j = k + 1;
			}
			if (j >= line.size()) return fail("unterminated labels");
			labels = line.substr(i, j + 1 - i);
			i = j + 1;
		}
		if (i >= line.size() || line[i] != ' ') return fail("no space before the value");
		const std::string vtext = line.substr(i + 1);
		double v = 0;
		if (vtext == "+Inf")
			v = INFINITY;
		else if (vtext == "-Inf")
			v = -INFINITY;
		else if (vtext == "NaN")
			v = NAN;
		else {
			char *end = nullptr;
			v = std::strtod(vtext.c_str(), &end);
			if (vtext.empty() || *end != '\0') return fail("the value is not a number");
		}
		if (!out.emplace(name + labels, v).second) return fail("the same series twice");
		if (suffix == "_bucket") {
			if (le.empty()) return fail("a bucket without le");
			const double bound = le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
			auto &prev = last_bucket[family + "{" + others];
			if (bound <= prev.first && !(prev.first == 0 && prev.second == 0)) return fail("buckets out of order");
			if (v < prev.second) return fail("buckets not cumulative");
			prev = {bound, v};
		}
		if (suffix == "_count") counts[family + "{" + others] = v;
	}
	// _count and _sum may come before or after the buckets (prometheus-cpp
	// writes them first)
	for (auto &[series, v] : counts) {
		auto it = last_bucket.find(series);
		if (it == last_bucket.end() || !std::isinf(it->second.first) || it->second.second != v) {
			error = series + "}: _count differs from the +Inf bucket";
			return {};
		}
	}
	for (auto &[family, type] : types)
		if (!helped.count(family)) {
			error = family + " has a TYPE but no HELP";
			return {};
		}
	return out;
}

double value(const Series &s, const std::string &series) {
	auto it = s.find(series);
	return it == s.end() ? NAN : it->second;
}

bool has_family(const Series &s, const std::string &prefix) {
	for (auto &[k, v] : s)
		if (k.rfind(prefix, 0) == 0) return true;
	return false;
}

// promtool's own check, where Debian's prometheus package is installed.
void promtool_check(const std::string &dir, const std::string &text) {
	if (std::system("command -v promtool >/dev/null 2>&1") != 0) return;	 // absent: the parser above only
	const std::string path = dir + "/scrape.txt";
	std::ofstream(path) << text;
	const std::string cmd = "promtool check metrics < " + path + " > " + dir + "/promtool.out 2>&1";
	const int rc = std::system(cmd.c_str());
	std::ifstream f(dir + "/promtool.out");
	std::stringstream ss;
	ss << f.rdbuf();
	EXPECT_EQ(rc, 0) << "promtool check metrics: " << ss.str();
}

class Metrics : public WorkerTest {
  protected:
	// A definition that succeeds (a built-in, no handler file), and one
	// whose task fails once with Boom and is retried once, then fails.
	static json ok_def() {
		return {{"StartAt", "A"}, {"States", {{"A", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"End", true}}}}}};
	}
	static json flaky_def() {
		return {{"StartAt", "A"},
				{"States",
				 {{"A",
				   {{"Type", "Task"},
					{"Resource", "genroc:fail"},
					{"Parameters", {{"Error", "Boom"}, {"Cause", "on purpose"}}},
					{"Retry", json::array({{{"ErrorEquals", {"Boom"}}, {"MaxAttempts", 1}, {"IntervalSeconds", 1}}})},
					{"End", true}}}}}};
	}

	// A checked scrape of GET /metrics; fails the test on a bad text.
	Series scrape(int port, const std::string &token = "") {
		httplib::Client http("127.0.0.1", port);
		httplib::Headers h;
		if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
		auto r = http.Get("/metrics", h);
		if (!r) {
			ADD_FAILURE() << "no answer from /metrics on port " << port;
			return {};
		}
		EXPECT_EQ(r->status, 200) << r->body;
		EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
		std::string error;
		Series s = parse_exposition(r->body, error);
		EXPECT_TRUE(error.empty()) << error << "\n" << r->body;
		promtool_check(dir_, r->body);
		last_text_ = r->body;
		return s;
	}

	// Polls the scrape until `pred` holds (a report is counted just after
	// the engine took it, so the instance may end a moment before).
	Series scrape_until(int port, const std::function<bool(const Series &)> &pred, const std::string &token = "") {
		Series s;
		eventually(
			[&] {
				s = scrape(port, token);
				return pred(s);
			},
			20s);
		return s;
	}

	// The binary keeps ticking: genroc_last_tick_age_seconds{kind="binary"}
	// drops between two scrapes (a newer tick), within a generous wait.
	bool tick_age_drops(int port, const std::string &token = "") {
		const std::string series = R"(genroc_last_tick_age_seconds{kind="binary"})";
		double prev = NAN;
		return eventually(
			[&] {
				const double age = value(scrape(port, token), series);
				const bool dropped = age < prev;
				prev = age;
				return dropped;
			},
			20s);
	}

	std::string last_text_;
};

TEST_F(Metrics, PostgresCountersAndGaugesMoveAsWorkRuns) {
	use_postgres();
	if (IsSkipped() || HasFatalFailure()) return;
	// the API, no worker yet: two tasks wait in the default queue
	// --metrics-cache 0: each scrape reads the database, so the figures
	// move as work runs (the cache has a test of its own below)
	auto api = std::make_unique<Proc>(
		std::vector<std::string>{genroc_bin(), "api", "--database", binary_url(db_url_, "api"), "--listen", "127.0.0.1:0",
								 "--metrics-cache", "0"},
		std::map<std::string, std::string>{}, dir_ + "/api.log");
	int api_port = 0;
	ASSERT_TRUE(eventually([&] { return (api_port = port_in_log(*api, "HTTP API listening")) > 0; }, 20s)) << api->log();
	httplib::Client http("127.0.0.1", api_port);
	for (auto &[name, def] : {std::pair{"ok", ok_def()}, std::pair{"flaky", flaky_def()}}) {
		auto r = http.Post("/api/definitions", json{{"name", name}, {"definition", def}}.dump(), "application/json");
		ASSERT_TRUE(r);
		ASSERT_EQ(r->status, 201) << r->body;
	}
	std::vector<int64_t> ids;
	auto start = [&](const std::string &def) {
		auto r = http.Post("/api/instances", json{{"definition", def}}.dump(), "application/json");
		ASSERT_TRUE(r);
		ASSERT_EQ(r->status, 201) << r->body;
		ids.push_back(json::parse(r->body)["instance_id"].get<int64_t>());
	};
	start("ok");
	start("ok");
	Series a = scrape(api_port);
	EXPECT_EQ(value(a, "genroc_database_up"), 1);
	EXPECT_EQ(value(a, R"(genroc_queue_ready_tasks{queue="default"})"), 2) << last_text_;
	EXPECT_GE(value(a, R"(genroc_queue_oldest_ready_age_seconds{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(a, R"(genroc_queue_running_tasks{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(a, R"(genroc_instances{status="ready"})"), 2) << last_text_;
	EXPECT_EQ(value(a, R"(genroc_instances_by_definition{definition="ok",status="ready"})"), 2) << last_text_;
	EXPECT_EQ(value(a, "genroc_instance_definitions_omitted"), 0) << last_text_;
	EXPECT_EQ(value(a, "genroc_workers_alive"), 0) << last_text_;
	EXPECT_FALSE(has_family(a, "genroc_last_tick_age_seconds{kind=\"binary\"}")) << last_text_;

	// a worker with its metrics listener takes them
	auto w = worker("wm", {"--metrics-listen", "127.0.0.1:0", "--metrics-cache", "0"});
	int wport = 0;
	ASSERT_TRUE(eventually([&] { return (wport = port_in_log(*w, "metrics listening")) > 0; }, 20s)) << w->log();
	for (int64_t id : ids) EXPECT_EQ(wait_status(id, {"succeeded", "failed"}, 30s)["status"], "succeeded") << w->log();
	const Series before = scrape_until(
		wport, [](const Series &s) { return value(s, R"(genroc_tasks_succeeded_total{queue="default"})") == 2; });
	EXPECT_EQ(value(before, R"(genroc_tasks_claimed_total{queue="default"})"), 2) << last_text_;
	EXPECT_EQ(value(before, R"(genroc_tasks_failed_total{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(before, R"(genroc_tasks_retried_total{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(before, R"(genroc_lease_losses_total{queue="default"})"), 0) << last_text_;
	// the worker's listener has no authentication: no definition names
	EXPECT_FALSE(has_family(before, "genroc_instances_by_definition")) << last_text_;
	EXPECT_EQ(value(before, R"(genroc_instances{status="succeeded"})"), 2) << last_text_;

	// one more success, and a failure retried once
	ids.clear();
	start("ok");
	start("flaky");
	EXPECT_EQ(wait_status(ids[0], {"succeeded", "failed"}, 30s)["status"], "succeeded") << w->log();
	EXPECT_EQ(wait_status(ids[1], {"succeeded", "failed"}, 30s)["status"], "failed") << w->log();
	const Series after = scrape_until(
		wport, [](const Series &s) { return value(s, R"(genroc_tasks_failed_total{queue="default"})") == 2; });
	auto moved = [&](const std::string &series) { return value(after, series) - value(before, series); };
	EXPECT_EQ(moved(R"(genroc_tasks_claimed_total{queue="default"})"), 3) << last_text_;
	EXPECT_EQ(moved(R"(genroc_tasks_succeeded_total{queue="default"})"), 1) << last_text_;
	EXPECT_EQ(moved(R"(genroc_tasks_failed_total{queue="default"})"), 2) << last_text_;
	EXPECT_EQ(moved(R"(genroc_tasks_retried_total{queue="default"})"), 1) << last_text_;
	EXPECT_EQ(moved(R"(genroc_lease_losses_total{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(moved(R"(genroc_step_duration_seconds_count{queue="default"})"), 3) << last_text_;
	EXPECT_GE(moved("genroc_claim_duration_seconds_count"), 2) << last_text_;	// empty claims count too
	EXPECT_GT(value(after, "genroc_claim_duration_seconds_sum"), 0) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_instances{status="succeeded"})"), 3) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_instances{status="failed"})"), 1) << last_text_;
	EXPECT_EQ(value(after, "genroc_database_reconnects_total"), 0) << last_text_;

	// the API's view of the same database: the queue empty, the worker
	// alive and serving it, a binary ticking, definitions by name
	Series b = scrape(api_port);
	EXPECT_EQ(value(b, R"(genroc_queue_ready_tasks{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(b, R"(genroc_queue_oldest_ready_age_seconds{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(b, R"(genroc_queue_workers{queue="default"})"), 1) << last_text_;
	EXPECT_EQ(value(b, "genroc_workers_alive"), 1) << last_text_;
	EXPECT_EQ(value(b, R"(genroc_instances_by_definition{definition="ok",status="succeeded"})"), 3) << last_text_;
	EXPECT_EQ(value(b, R"(genroc_instances_by_definition{definition="flaky",status="failed"})"), 1) << last_text_;
	// a binary ticks: the age of its last tick is there, and drops again
	// (a newer tick) in a later scrape
	EXPECT_GE(value(b, R"(genroc_last_tick_age_seconds{kind="binary"})"), 0) << last_text_;
	EXPECT_TRUE(tick_age_drops(api_port)) << last_text_;
	// the API process claims nothing: its task counters have no series
	EXPECT_FALSE(has_family(b, "genroc_tasks_claimed_total{")) << last_text_;

	// who ticks: /healthz (no --auth: by name) and genctl
	httplib::Client wh("127.0.0.1", wport);
	auto health = wh.Get("/healthz");
	ASSERT_TRUE(health);
	json hz = json::parse(health->body);
	ASSERT_TRUE(hz["ticking"].is_array()) << hz.dump();
	bool seen = false;
	for (auto &t : hz["ticking"]) seen = seen || (t["kind"] == "binary" && t["ticked_by"] == "genroc worker wm");
	EXPECT_TRUE(seen) << hz.dump();
	auto tickers = store()->tickers();
	seen = false;
	for (auto &t : tickers) seen = seen || (t["kind"] == "binary" && t["ticked_by"] == "genroc worker wm");
	EXPECT_TRUE(seen) << tickers.dump();
	const std::string out = dir_ + "/genctl.out";
	const std::string cmd = std::string(GENCTL_PATH) + " --database '" + db_url_ + "' tickers > " + out + " 2>&1";
	ASSERT_EQ(std::system(cmd.c_str()), 0);
	std::ifstream f(out);
	std::stringstream ss;
	ss << f.rdbuf();
	EXPECT_NE(ss.str().find("genroc worker wm"), std::string::npos) << ss.str();
	EXPECT_NE(ss.str().find("binary"), std::string::npos) << ss.str();

	// only /healthz and /metrics on the metrics listener
	auto none = wh.Get("/api/instances");
	ASSERT_TRUE(none);
	EXPECT_EQ(none->status, 404);

	w->signal(SIGTERM);
	EXPECT_EQ(exit_code(w->wait(15s)), 0) << w->log();
	api->signal(SIGTERM);
	EXPECT_EQ(exit_code(api->wait(15s)), 0) << api->log();
}

TEST_F(Metrics, SqliteServeWithAuthNeedsAReaderAndCounts) {
	const std::string db = dir_ + "/m.db";
	// a reader token for Prometheus, an operator token for the work
	auto token = [&](const std::string &name, const std::string &perm) {
		const std::string out = dir_ + "/" + name + ".token";
		const std::string cmd = genroc_bin() + " token create --database " + db + " --name " + name +
								" --permissions " + perm + " > " + out + " 2>/dev/null";
		EXPECT_EQ(std::system(cmd.c_str()), 0);
		auto lines = read_lines(out);
		return lines.empty() ? std::string() : lines.back();
	};
	const std::string reader = token("prom", "reader"), op = token("ops", "operator"), wk = token("wk", "worker");
	auto srv = std::make_unique<Proc>(
		std::vector<std::string>{genroc_bin(), "serve", "--database", db, "--worker-id", "sq", "--listen",
								 "127.0.0.1:0", "--auth", "--tick-interval", "200ms", "--poll-interval", "200ms",
								 "--metrics-cache", "0"},
		std::map<std::string, std::string>{{"GENROC_WORKER_ID", "sq"}}, dir_ + "/serve.log");
	int port = 0;
	ASSERT_TRUE(eventually([&] { return (port = port_in_log(*srv, "HTTP API listening")) > 0; }, 20s)) << srv->log();
	httplib::Client http("127.0.0.1", port);

	// who may scrape: a credential with reader (operator, admin); not none, not worker
	auto none = http.Get("/metrics");
	ASSERT_TRUE(none);
	EXPECT_EQ(none->status, 401) << none->body;
	auto as_worker = http.Get("/metrics", httplib::Headers{{"Authorization", "Bearer " + wk}});
	ASSERT_TRUE(as_worker);
	EXPECT_EQ(as_worker->status, 403) << as_worker->body;
	// serve listens before its worker thread has registered: wait for it
	Series before;
	ASSERT_TRUE(eventually(
		[&] {
			before = scrape(port, reader);
			return value(before, "genroc_workers_alive") == 1;
		},
		20s))
		<< last_text_;
	EXPECT_EQ(value(before, R"(genroc_tasks_claimed_total{queue="default"})"), 0) << last_text_;
	// with --auth, /healthz (open) says who ticks without naming them
	auto health = http.Get("/healthz");
	ASSERT_TRUE(health);
	json hz = json::parse(health->body);
	ASSERT_TRUE(eventually(
		[&] {
			hz = json::parse(http.Get("/healthz")->body);
			return hz["ticking"].is_array() && !hz["ticking"].empty();
		},
		10s))
		<< hz.dump();
	EXPECT_EQ(hz["ticking"][0]["kind"], "binary") << hz.dump();
	EXPECT_FALSE(hz["ticking"][0].contains("ticked_by")) << hz.dump();

	httplib::Headers auth{{"Authorization", "Bearer " + op}};
	for (auto &[name, def] : {std::pair{"ok", ok_def()}, std::pair{"flaky", flaky_def()}})
		ASSERT_EQ(http.Post("/api/definitions", auth, json{{"name", name}, {"definition", def}}.dump(), "application/json")->status, 201);
	for (const char *def : {"ok", "ok", "flaky"})
		ASSERT_EQ(http.Post("/api/instances", auth, json{{"definition", def}}.dump(), "application/json")->status, 201);
	const Series after = scrape_until(
		port,
		[](const Series &s) {
			return value(s, R"(genroc_tasks_failed_total{queue="default"})") == 2 &&
				   value(s, R"(genroc_instances{status="failed"})") == 1;
		},
		reader);
	EXPECT_EQ(value(after, R"(genroc_tasks_claimed_total{queue="default"})"), 4) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_tasks_succeeded_total{queue="default"})"), 2) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_tasks_retried_total{queue="default"})"), 1) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_step_duration_seconds_count{queue="default"})"), 4) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_instances{status="succeeded"})"), 2) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_instances_by_definition{definition="flaky",status="failed"})"), 1) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_queue_ready_tasks{queue="default"})"), 0) << last_text_;
	EXPECT_EQ(value(after, R"(genroc_queue_workers{queue="default"})"), 1) << last_text_;
	EXPECT_GE(value(after, R"(genroc_last_tick_age_seconds{kind="binary"})"), 0) << last_text_;
	EXPECT_TRUE(tick_age_drops(port, reader)) << last_text_;

	srv->signal(SIGTERM);
	EXPECT_EQ(exit_code(srv->wait(15s)), 0) << srv->log();
}

// A worker with many tasks at once reports them in batches
// (genroc.complete_many, Runner::Reports): every task is reported once and
// taken, the next task of a workflow is handed back through the batch, and
// the batch counters say how many results went together.
class BatchedReports : public Metrics, public ::testing::WithParamInterface<std::string> {
  protected:
	// n instances of each definition, {"i": 0..n-1} as inputs, by start_many.
	static std::vector<int64_t> start_each(Store &s, const std::vector<std::string> &defs, int n) {
		json inputs = json::array();
		for (int i = 0; i < n; i++) inputs.push_back({{"i", i}});
		std::vector<int64_t> ids;
		for (const auto &def : defs)
			for (auto &r : s.start_many(def, inputs, json::object())) ids.push_back(r.instance_id);
		return ids;
	}
	// Every instance succeeded, each of its tasks reported once: `tasks`
	// task_succeeded rows for an instance of that definition.
	// The worker's metrics once `tasks` tasks succeeded: each claimed and
	// reported once, no lease lost.
	Series scrape_when_done(int wport, int tasks) {
		const Series m = scrape_until(wport, [&](const Series &s) {
			return value(s, R"(genroc_tasks_succeeded_total{queue="default"})") >= tasks;
		});
		EXPECT_EQ(value(m, R"(genroc_tasks_succeeded_total{queue="default"})"), tasks) << last_text_;
		EXPECT_EQ(value(m, R"(genroc_tasks_claimed_total{queue="default"})"), tasks) << last_text_;
		EXPECT_EQ(value(m, R"(genroc_lease_losses_total{queue="default"})"), 0) << last_text_;
		return m;
	}
	void expect_each_reported_once(const std::vector<int64_t> &ids, const std::function<int(const json &)> &tasks) {
		auto s = store();
		for (int64_t id : ids) {
			json inst = s->get_instance(id);
			ASSERT_EQ(inst["status"], "succeeded") << inst.dump();
			int reported = 0;
			for (const auto &e : s->history(id)) reported += e["event"] == "task_succeeded";
			EXPECT_EQ(reported, tasks(inst)) << s->history(id).dump();
		}
	}
};

TEST_P(BatchedReports, AWorkerReportsManyTasksTogether) {
	use_store(GetParam());
	if (IsSkipped() || HasFatalFailure()) return;
	const json two = {{"StartAt", "A"},
					  {"States",
					   {{"A", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"Next", "B"}}},
						{"B", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"End", true}}}}}};
	const int n = 400;
	std::vector<int64_t> ids;
	{
		auto s = store();
		s->define("ok", ok_def());
		s->define("two", two);
		ids = start_each(*s, {"ok", "two"}, n);
	}
	auto w = worker("wb", {"--concurrency", "16", "--metrics-listen", "127.0.0.1:0"});
	const int tasks = 3 * n;
	int wport = 0;
	ASSERT_TRUE(eventually([&] { return (wport = port_in_log(*w, "metrics listening")) > 0; }, 20s)) << w->log();
	const Series m = scrape_when_done(wport, tasks);
	const double batches = value(m, "genroc_report_batches_total");
	const double batched = value(m, "genroc_reports_batched_total");
	EXPECT_GT(batches, 0) << last_text_;	// 16 tasks of one claim end together
	EXPECT_GE(batched, 2 * batches) << last_text_;
	EXPECT_LE(batched, tasks) << last_text_;
	expect_each_reported_once(ids, [](const json &inst) { return inst["definition"] == "two" ? 2 : 1; });
	w->signal(SIGTERM);
	EXPECT_EQ(exit_code(w->wait(15s)), 0) << w->log();
}

// --prefetch: the worker claims beyond its free threads (claims of more than
// --concurrency), registers concurrency + prefetch as its lease cap, and
// still runs every task once.  The handler holds every task until the test
// releases it (the file "release"): while the 4 threads are held, the
// worker holds 44 leases, which only claims beyond the free threads give.
TEST_P(BatchedReports, APrefetchingWorkerClaimsAheadAndRunsEachTaskOnce) {
	use_store(GetParam());
	if (IsSkipped() || HasFatalFailure()) return;
	const int n = 300;
	const std::string hold = script("hold.sh", R"SH(cat >/dev/null
echo "$E2E_WHO $GENROC_INSTANCE_ID $GENROC_STATE $$" >> "$E2E_DIR/runs.log"
i=0
while [ ! -e "$E2E_DIR/release" ] && [ $i -lt 3000 ]; do sleep 0.05; i=$((i+1)); done
echo '{}')SH");
	handlers_ = handlers_file({{"hold", hold}});
	std::vector<int64_t> ids;
	{
		auto s = store();
		s->define("held", {{"StartAt", "A"}, {"States", {{"A", {{"Type", "Task"}, {"Resource", "handler:hold"}, {"End", true}}}}}});
		ids = start_each(*s, {"held"}, n);
	}
	auto w = worker("wp", {"--concurrency", "4", "--prefetch", "40", "--metrics-listen", "127.0.0.1:0"});
	int wport = 0;
	ASSERT_TRUE(eventually([&] { return (wport = port_in_log(*w, "metrics listening")) > 0; }, 20s)) << w->log();
	// the event: 44 tasks leased to the worker while its 4 threads are held
	auto running = [&] {
		const json m = store()->metrics(0);
		for (auto &q : m.at("queues"))
			if (q.at("queue") == "default") return q.at("running").get<int>();
		return -1;
	};
	int seen = 0;
	EXPECT_TRUE(eventually([&] { return (seen = running()) == 44; }, 30s))
		<< seen << " running: " << store()->metrics(0).dump() << "\n" << w->log();
	std::ofstream(dir_ + "/release").put('\n');
	const Series m = scrape_when_done(wport, n);
	const double claims = value(m, "genroc_claim_duration_seconds_count");
	EXPECT_GT(claims, 0) << last_text_;
	auto s = store();
	bool registered = false;
	for (auto &wk : s->list_workers())
		if (wk.value("worker", "") == "wp") {
			registered = true;
			EXPECT_EQ(wk.value("concurrency", 0), 44) << wk.dump();
		}
	EXPECT_TRUE(registered);
	expect_each_reported_once(ids, [](const json &) { return 1; });
	w->signal(SIGTERM);
	EXPECT_EQ(exit_code(w->wait(15s)), 0) << w->log();
}

// A fresh process on a fresh database: every series a dashboard or an
// alert needs is there at 0 (every instance status, the database errors of
// each class), and genroc_build_info names this build's version.  Then the
// cache: with --metrics-cache 1m a second scrape is served the first
// answer (the database is not read again); with 0 each scrape reads it.
class FreshMetrics : public Metrics, public ::testing::WithParamInterface<std::string> {
  protected:
	std::unique_ptr<Proc> api(const std::string &cache) {
		const std::string url = GetParam() == "postgres" ? binary_url(db_url_, "api") : db_url_;
		return std::make_unique<Proc>(
			std::vector<std::string>{genroc_bin(), "api", "--database", url, "--listen", "127.0.0.1:0",
									 "--metrics-cache", cache},
			std::map<std::string, std::string>{}, dir_ + "/api-cache-" + cache + ".log");
	}
	static std::string version() {
		std::ifstream f(source_dir() + "/genroc.control");
		std::string line;
		while (std::getline(f, line)) {
			std::smatch m;
			if (std::regex_match(line, m, std::regex(R"(default_version\s*=\s*'([^']*)'\s*)"))) return m[1];
		}
		return "(no default_version in genroc.control)";
	}
};

TEST_P(FreshMetrics, EverySeriesIsThereAtZeroAndTheCacheServesRepeatedScrapes) {
	use_store(GetParam());
	if (IsSkipped() || HasFatalFailure()) return;
	{
		auto s = store();	 // SQLite: the file made; both: one definition, no instance
		s->define("ok", ok_def());
	}
	auto a = api("1m");
	int port = 0;
	ASSERT_TRUE(eventually([&] { return (port = port_in_log(*a, "HTTP API listening")) > 0; }, 20s)) << a->log();
	const Series m = scrape(port);
	EXPECT_EQ(value(m, "genroc_database_up"), 1) << last_text_;
	for (const char *st : {"queued", "ready", "running", "waiting", "succeeded", "failed", "cancelled"})
		EXPECT_EQ(value(m, std::string("genroc_instances{status=\"") + st + "\"}"), 0) << st << "\n" << last_text_;
	for (const char *cls : {"08", "40", "53", "55", "57", "58", "XX"})
		EXPECT_EQ(value(m, std::string("genroc_database_errors_total{class=\"") + cls + "\"}"), 0)
			<< cls << "\n" << last_text_;
	EXPECT_EQ(value(m, "genroc_build_info{version=\"" + version() + "\"}"), 1) << last_text_;

	// one instance ready now; the cached answer (1m) still says 0
	store()->start("ok", json::object(), json::object());
	const Series cached = scrape(port);
	EXPECT_EQ(value(cached, R"(genroc_instances{status="ready"})"), 0) << last_text_;
	EXPECT_EQ(value(cached, "genroc_build_info{version=\"" + version() + "\"}"), 1) << last_text_;
	// without the cache the database is read at each scrape
	auto b = api("0");
	int bport = 0;
	ASSERT_TRUE(eventually([&] { return (bport = port_in_log(*b, "HTTP API listening")) > 0; }, 20s)) << b->log();
	EXPECT_EQ(value(scrape(bport), R"(genroc_instances{status="ready"})"), 1) << last_text_;
	store()->start("ok", json::object(), json::object());
	EXPECT_EQ(value(scrape(bport), R"(genroc_instances{status="ready"})"), 2) << last_text_;
	a->signal(SIGTERM);
	EXPECT_EQ(exit_code(a->wait(15s)), 0) << a->log();
	b->signal(SIGTERM);
	EXPECT_EQ(exit_code(b->wait(15s)), 0) << b->log();
}

INSTANTIATE_TEST_SUITE_P(Stores, FreshMetrics, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

INSTANTIATE_TEST_SUITE_P(Stores, BatchedReports, ::testing::Values("postgres", "sqlite"),
						 [](const auto &info) { return info.param; });

// The parser refuses what Prometheus would: it is what the tests above lean on.
TEST(MetricsParser, RefusesBadExpositionText) {
	const std::string good =
		"# HELP genroc_x_total X.\n# TYPE genroc_x_total counter\ngenroc_x_total{queue=\"a\\\"b\\\\c\\n\"} 3\n"
		"# HELP genroc_h H.\n# TYPE genroc_h histogram\ngenroc_h_bucket{le=\"1\"} 1\ngenroc_h_bucket{le=\"+Inf\"} 2\n"
		"genroc_h_sum 1.5\ngenroc_h_count 2\n";
	std::string error;
	Series s = parse_exposition(good, error);
	EXPECT_TRUE(error.empty()) << error;
	EXPECT_EQ(value(s, "genroc_x_total{queue=\"a\\\"b\\\\c\\n\"}"), 3);
	for (const std::string &bad : {
			 std::string("genroc_x_total 1\n"),											   // no TYPE
			 std::string("# HELP genroc_x X.\n# TYPE genroc_x counter\ngenroc_x 1\n"),	   // counter without _total
			 std::string("# HELP other_g G.\n# TYPE other_g gauge\nother_g 1\n"),		   // no prefix
			 std::string("# HELP genroc_g G.\n# TYPE genroc_g gauge\ngenroc_g{a=\"x\\t\"} 1\n"),  // bad escape
			 std::string("# HELP genroc_g G.\n# TYPE genroc_g gauge\ngenroc_g{a=x} 1\n"),	   // unquoted
			 std::string("# HELP genroc_g G.\n# TYPE genroc_g gauge\ngenroc_g 1\ngenroc_g 2\n"),  // twice
			 std::string("# HELP genroc_g G.\n# TYPE genroc_g gauge\ngenroc_g one\n"),		   // not a number
			 std::string("# TYPE genroc_g gauge\ngenroc_g 1\n"),							   // no HELP
			 std::string("# HELP genroc_h H.\n# TYPE genroc_h histogram\ngenroc_h_bucket{le=\"1\"} 2\n"
						 "genroc_h_bucket{le=\"+Inf\"} 1\ngenroc_h_sum 1\ngenroc_h_count 1\n"),  // not cumulative
			 std::string("# HELP genroc_g G.\n# TYPE genroc_g gauge\ngenroc_g 1"),			   // no final newline
			 std::string("# HELP genroc_h H.\n# TYPE genroc_h histogram\ngenroc_h_count 3\ngenroc_h_sum 1\n"
						 "genroc_h_bucket{le=\"+Inf\"} 2\n"),  // _count is not the +Inf bucket
		 }) {
		error.clear();
		parse_exposition(bad, error);
		EXPECT_FALSE(error.empty()) << "accepted: " << bad;
	}
}

}  // namespace
}  // namespace genroc::e2e_worker
