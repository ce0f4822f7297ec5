// metrics.hpp — GET /metrics: the process's counters and the database's
// figures in Prometheus' text exposition format 0.0.4 (docs/operations.md "Metrics").
//
// Two kinds of series:
//   this process   counters and histograms kept in memory since start (tasks
//                  claimed / succeeded / failed / retried and lease losses
//                  per queue, claim and step durations, database errors and
//                  reconnects): prometheus-cpp's Registry, Debian's
//                  prometheus-cpp-dev (core only; no HTTP of its own)
//   the database   gauges read at each scrape from genroc.metrics() and
//                  genroc.tickers() (instances by status and definition,
//                  queue depth and age, live workers, who ticks): the same
//                  figures from every process of one database
// Both are written by prometheus-cpp's TextSerializer (HELP and TYPE lines,
// label values escaped).
//
// Cardinality: the queue label takes the queues this process claimed from
// (process series) or the queues genroc.queue_stats lists (configured, served
// or in use); the definition label at most kMaxDefinitions definitions (those
// with the most instances; genroc_instance_definitions_omitted counts the
// rest); status, kind and class are fixed sets.
#pragma once

#include <string>
#include <vector>

#include "asl.hpp"

namespace genroc::metrics {

inline constexpr const char *kContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr int kMaxDefinitions = 50;

// Counters of this process (thread-safe).
// The task series of these queues at 0, before the first task (a worker's
// queues: a rate over a series that appears late misses its first step).
void serve_queues(const std::vector<std::string> &queues);
void task_claimed(const std::string &queue, int attempt);	// attempt > 0 also counts a retry
void task_succeeded(const std::string &queue);
void task_failed(const std::string &queue);
void lease_lost(const std::string &queue);
void claim_seconds(double seconds);
// One complete_many call of the worker that carried `reports` results.
void reports_batched(int reports);
void step_seconds(const std::string &queue, double seconds);
// A database error seen by the worker loop or an HTTP request: counted by
// SQLSTATE class when the class says the database (or the way to it) failed
// rather than the request: 08, 40, 53, 55, 57, 58, XX.  True when counted.
bool database_error(const std::string &sqlstate);
// The database answered again after a connection error.
void database_reconnected();

// The exposition text.  snapshot: genroc.metrics() (null: the database did
// not answer; its gauges are left out and genroc_database_up is 0);
// tickers: genroc.tickers() (null: left out); with_definitions: false
// leaves out the series labelled with definition names (a listener without
// authentication).
std::string render(const json &snapshot, const json &tickers, bool with_definitions);

}  // namespace genroc::metrics
