// metrics.hpp — the figures for operators (extension/sql/75_metrics.sql
// declares the SQL functions): the queues (genroc.queue_stats), the
// database's part of GET /metrics (genroc.metrics), and who ticks
// (genroc.tickers), once for both stores.
//
// What a caller sees (PostgreSQL; SQLite's file owner sees everything):
// queue figures count every instance for a role with the worker or
// operator capability, else only the caller's own; metrics() names
// instances by definition by the instances view's rule (operators every
// one, other roles their own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

struct QueueStat {
	std::string queue;
	int64_t ready = 0;			 // ready to claim now
	std::string oldest_ready_s;	 // seconds since the oldest of them became ready (0 when none), as the store wrote it
	int64_t queued = 0;			 // waiting for a slot
	int64_t running = 0;
	int64_t workers = 0;  // live workers serving the queue
};

// genroc.queue_stats(): per queue configured, served by a live worker or
// holding a queued, ready or running instance, by name.
std::vector<QueueStat> queue_stats(Port &port);

// genroc.metrics(p_max_definitions) as JSON text: {instances: [{status,
// count}] (every status of the seven, 0 when none), by_definition:
// [{definition, status, count}] (the p_max_definitions definitions with the
// most instances, then by name), definitions_omitted, queues (queue_stats
// as objects), workers_alive, objects: {count, bytes, unused}}.  22004 for
// NULL, 22023 outside 0 .. 1000.
std::string metrics(Port &port, std::optional<int64_t> max_definitions);

struct Ticker {
	std::string ticked_by, kind, role;
	int64_t first_tick_us = 0, last_tick_us = 0;  // since the Unix epoch
	int64_t ago_ms = 0;
	int64_t ticks = 0;
};

// genroc.tickers(): who called genroc.tick in the last 7 days, newest first.
std::vector<Ticker> tickers(Port &port);

}  // namespace genroc::engine
