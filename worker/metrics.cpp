// metrics.cpp — the counters of this process and the exposition text
// (metrics.hpp says what is exposed and why the labels stay few).
#include "metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

// The version of this build (genroc.control's default_version, set by
// worker/CMakeLists.txt): the one the store checks the extension against.
#ifndef GENROC_EXTENSION_VERSION
#error "GENROC_EXTENSION_VERSION is set by worker/CMakeLists.txt"
#endif

namespace genroc::metrics {
namespace {

const char *const kVersion = GENROC_EXTENSION_VERSION;

using prometheus::BuildCounter;
using prometheus::BuildHistogram;
using prometheus::ClientMetric;
using prometheus::Counter;
using prometheus::Family;
using prometheus::Histogram;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The SQLSTATE classes genroc_database_errors_total counts (metrics.hpp).
const char *const kDatabaseErrorClasses[] = {"08", "40", "53", "55", "57", "58", "XX"};

// Every status an instance can have (10_tables.sql's CHECK): each has a
// genroc_instances series, 0 when no instance has it.
const char *const kStatuses[] = {"queued", "ready", "running", "waiting", "succeeded", "failed", "cancelled"};

// Claims take milliseconds; steps run a handler, seconds to an hour.
const Histogram::BucketBoundaries kClaimBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
												   0.1,	  0.25,	  0.5,	 1,	   2.5,	  5,	10};
const Histogram::BucketBoundaries kStepBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
												  2.5,	 5,	   10,	  30,	60,	 300,  900, 3600};

struct Process {
	std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
	Family<Counter> &claimed = BuildCounter()
								   .Name("genroc_tasks_claimed_total")
								   .Help("Tasks this process claimed, by queue.")
								   .Register(*registry);
	Family<Counter> &retried = BuildCounter()
								   .Name("genroc_tasks_retried_total")
								   .Help("Tasks this process claimed that run again after a failure (attempt 1 or more), by queue.")
								   .Register(*registry);
	Family<Counter> &succeeded = BuildCounter()
									 .Name("genroc_tasks_succeeded_total")
									 .Help("Task results this process reported as succeeded and the engine took, by queue.")
									 .Register(*registry);
	Family<Counter> &failed = BuildCounter()
								  .Name("genroc_tasks_failed_total")
								  .Help("Task results this process reported as failed and the engine took, by queue.")
								  .Register(*registry);
	Family<Counter> &lost = BuildCounter()
								.Name("genroc_lease_losses_total")
								.Help("Task results the engine refused because another worker holds the task now (RC004) or it ended, by queue.")
								.Register(*registry);
	Family<Histogram> &claim = BuildHistogram()
								   .Name("genroc_claim_duration_seconds")
								   .Help("Time of one claim call (genroc.claim), empty claims included.")
								   .Register(*registry);
	Family<Histogram> &step = BuildHistogram()
								  .Name("genroc_step_duration_seconds")
								  .Help("Time from a task's claim to its result taken by the engine (the handler's run and the report), by queue.")
								  .Register(*registry);
	Family<Counter> &db_errors = BuildCounter()
									 .Name("genroc_database_errors_total")
									 .Help("Errors from the database or the connection to it seen by this process's worker loop and HTTP requests, by SQLSTATE class.")
									 .Register(*registry);
	Family<Counter> &reconnects = BuildCounter()
									  .Name("genroc_database_reconnects_total")
									  .Help("Times the worker loop found the database again after losing it.")
									  .Register(*registry);
	Family<Counter> &batches = BuildCounter()
								   .Name("genroc_report_batches_total")
								   .Help("Calls that reported several task results in one transaction (genroc.complete_many).")
								   .Register(*registry);
	Family<Counter> &batched = BuildCounter()
								   .Name("genroc_reports_batched_total")
								   .Help("Task results reported in those calls (divided by genroc_report_batches_total: the mean batch).")
								   .Register(*registry);
	Counter &batches_all = batches.Add({});
	Counter &batched_all = batched.Add({});
	Histogram &claim_all = claim.Add({}, kClaimBuckets);
	Counter &reconnects_all = reconnects.Add({});
	std::mutex step_mu;
	std::map<std::string, Histogram *> steps;	// Family::Add takes the buckets anew each time

	// Every class at 0 from the start: a series that appears with its
	// first error is missed by rate() and by an alert on increase().
	Process() {
		for (const char *c : kDatabaseErrorClasses) db_errors.Add({{"class", c}});
	}
};
Process &process() {
	static Process p;
	return p;
}

ClientMetric gauge(double value, std::vector<ClientMetric::Label> labels = {}) {
	ClientMetric m;
	m.label = std::move(labels);
	m.gauge.value = value;
	return m;
}

MetricFamily family(const char *name, const char *help) {
	MetricFamily f;
	f.name = name;
	f.help = help;
	f.type = MetricType::Gauge;
	return f;
}

double number(const json &v, const char *key) {
	auto it = v.find(key);
	return it != v.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text(const json &v, const char *key) {
	auto it = v.find(key);
	return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void serve_queues(const std::vector<std::string> &queues) {
	Process &p = process();
	for (const auto &q : queues)
		for (Family<Counter> *f : {&p.claimed, &p.retried, &p.succeeded, &p.failed, &p.lost}) f->Add({{"queue", q}});
}

void task_claimed(const std::string &queue, int attempt) {
	process().claimed.Add({{"queue", queue}}).Increment();
	if (attempt > 0) process().retried.Add({{"queue", queue}}).Increment();
}
void task_succeeded(const std::string &queue) { process().succeeded.Add({{"queue", queue}}).Increment(); }
void task_failed(const std::string &queue) { process().failed.Add({{"queue", queue}}).Increment(); }
void lease_lost(const std::string &queue) { process().lost.Add({{"queue", queue}}).Increment(); }
void claim_seconds(double seconds) { process().claim_all.Observe(seconds); }
void reports_batched(int reports) {
	process().batches_all.Increment();
	process().batched_all.Increment(reports);
}

void step_seconds(const std::string &queue, double seconds) {
	Process &p = process();
	Histogram *h;
	{
		std::lock_guard<std::mutex> g(p.step_mu);
		auto &slot = p.steps[queue];
		if (!slot) slot = &p.step.Add({{"queue", queue}}, kStepBuckets);
		h = slot;
	}
	h->Observe(seconds);
}

bool database_error(const std::string &sqlstate) {
	if (sqlstate.size() != 5) return false;
	const std::string cls = sqlstate.substr(0, 2);
	for (const char *c : kDatabaseErrorClasses)
		if (cls == c) {
			process().db_errors.Add({{"class", cls}}).Increment();
			return true;
		}
	return false;
}

void database_reconnected() { process().reconnects_all.Increment(); }

std::string render(const json &snapshot, const json &tickers, bool with_definitions) {
	std::vector<MetricFamily> out = process().registry->Collect();

	MetricFamily build = family("genroc_build_info", "Always 1; the label says which genroc this process is (its version).");
	build.metric.push_back(gauge(1, {{"version", kVersion}}));
	out.push_back(std::move(build));

	MetricFamily up = family("genroc_database_up", "1 when the database answered this scrape's queries, else 0.");
	up.metric.push_back(gauge(snapshot.is_object() ? 1 : 0));
	out.push_back(std::move(up));

	if (snapshot.is_object()) {
		MetricFamily inst = family("genroc_instances", "Instances by status (every instance this process's role may read).");
		// every status, 0 when none has it (a series that vanishes reads as
		// "no data", not 0)
		std::map<std::string, double> by_status;
		for (const char *st : kStatuses) by_status[st] = 0;
		for (const auto &r : snapshot.value("instances", json::array()))
			by_status[text(r, "status")] = number(r, "count");
		for (const auto &[st, n] : by_status) inst.metric.push_back(gauge(n, {{"status", st}}));
		out.push_back(std::move(inst));
		if (with_definitions) {
			MetricFamily by = family("genroc_instances_by_definition",
									 "Instances by definition and status, for the 50 definitions with the most instances.");
			for (const auto &r : snapshot.value("by_definition", json::array()))
				by.metric.push_back(gauge(number(r, "count"),
										  {{"definition", text(r, "definition")}, {"status", text(r, "status")}}));
			out.push_back(std::move(by));
			MetricFamily omitted = family("genroc_instance_definitions_omitted",
										  "Definitions left out of genroc_instances_by_definition (beyond the 50 with the most instances).");
			omitted.metric.push_back(gauge(number(snapshot, "definitions_omitted")));
			out.push_back(std::move(omitted));
		}
		struct QueueGauge {
			const char *name, *help, *key;
		};
		static const QueueGauge kQueue[] = {
			{"genroc_queue_ready_tasks", "Tasks ready to claim now, by queue.", "ready"},
			{"genroc_queue_oldest_ready_age_seconds",
			 "Seconds since the oldest task ready to claim became ready, by queue (0 when none).", "oldest_ready_s"},
			{"genroc_queue_queued_tasks", "Tasks waiting for a partition slot, by queue.", "queued"},
			{"genroc_queue_running_tasks", "Tasks running (leased to a worker), by queue.", "running"},
			{"genroc_queue_workers", "Live workers serving the queue.", "workers"},
		};
		const json queues = snapshot.value("queues", json::array());
		for (const auto &g : kQueue) {
			MetricFamily f = family(g.name, g.help);
			for (const auto &q : queues) f.metric.push_back(gauge(number(q, g.key), {{"queue", text(q, "queue")}}));
			out.push_back(std::move(f));
		}
		MetricFamily alive = family("genroc_workers_alive", "Registered workers that are live (not stopped, heartbeat within their stale-after).");
		alive.metric.push_back(gauge(number(snapshot, "workers_alive")));
		out.push_back(std::move(alive));
		if (snapshot.contains("objects") && snapshot.at("objects").is_object()) {
			const json &o = snapshot.at("objects");
			for (auto [name, help, key] : {std::tuple{"genroc_objects", "Large values stored once (docs/operations.md \"Large values\").", "count"},
										   std::tuple{"genroc_object_bytes", "Bytes of the stored large values' JSON text.", "bytes"},
										   std::tuple{"genroc_objects_unused", "Stored large values no instance or log entry uses, waiting out --object-grace.", "unused"}}) {
				MetricFamily f = family(name, help);
				f.metric.push_back(gauge(number(o, key)));
				out.push_back(std::move(f));
			}
		}
	}

	if (tickers.is_array()) {
		// the newest tick of each kind: alert when the one you rely on ages
		std::map<std::string, double> age;
		for (const auto &t : tickers) {
			const std::string kind = text(t, "kind");
			const double s = number(t, "ago_ms") / 1000.0;
			auto it = age.find(kind);
			if (it == age.end() || s < it->second) age[kind] = s;
		}
		MetricFamily f = family("genroc_last_tick_age_seconds",
								"Seconds since genroc.tick() last ran, by who ran it: ticker (in the database), binary (a genroc worker), session (any other caller).");
		for (const auto &[kind, s] : age) f.metric.push_back(gauge(s, {{"kind", kind}}));
		out.push_back(std::move(f));
	}
	return prometheus::TextSerializer().Serialize(out);
}

}  // namespace genroc::metrics
