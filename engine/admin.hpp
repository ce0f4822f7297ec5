// admin.hpp — the queues and workers administration, written once over the
// port: genroc.worker_register, worker_heartbeat, worker_drain, worker_stop,
// list_workers (extension/sql/50_workers.sql declares them; engine/workers.cpp),
// genroc.queue_set, queue_drop, list_queues (55_queues.sql; engine/queues.cpp),
// and the option bags they read (engine/options.cpp).  The PostgreSQL entry
// points are extension/admin.c; the SQLite store calls the same functions.
//
// What only the store's host knows (whether the process that registered a
// worker id is alive: a PostgreSQL session, a SQLite lock file) comes
// through WorkerHost; partition slots and routing are engine/admission.cpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// ---- option bags (genroc._check_options, _int_option, _text_option,
// _duration; extension/sql/20_core.sql, 40_instances.sql) -----------------

// A JSON text parsed as an option bag (NULL: {}), its depth bounded.
json parse_options(Port &port, const std::optional<std::string> &text, const std::string &what);
// An option's value as the store shows it in a message (jsonb's text in
// PostgreSQL).
std::string shown(Port &port, const json &value);
// An object whose keys are all in allowed; 22023 naming the first unknown
// key in key order.
void check_options(Port &port, const json &bag, const std::vector<std::string> &allowed, const std::string &what);
// A JSON number without a fraction, in int range; 22023.
int int_option(Port &port, const json &value, const std::string &option);
// A non-empty JSON string; 22023.
std::string text_option(Port &port, const json &value, const std::string &option);

// A duration: a JSON number of seconds, or "<number><unit>" with unit ms,
// s, m, h or d.  22007 when it is neither; 22023 under a microsecond or
// past 36500 days.
struct Duration {
	std::string interval;  // PostgreSQL's interval text of it ("1.5 minutes")
	int64_t ms = 0;		   // SQLite's: milliseconds, at least 1
};
Duration duration_option(Port &port, const json &value, const std::string &option);

// ---- workers (extension/sql/50_workers.sql) -----------------------------

class WorkerHost {
  public:
	virtual ~WorkerHost() = default;
	// Whether the process that registered a worker id, whose heartbeat is
	// fresh, is alive: true (RC005), false (it died: its id is taken over),
	// nullopt (the store cannot tell: RC010).  held: WORKER_FOR_REGISTER's row.
	virtual std::optional<bool> holder_alive(const std::string &worker, const Row &held) = 0;
	// The session recorded for a registration (SQLite: this process, when it
	// holds the worker's lock; PostgreSQL's statement records the backend
	// itself): nullopt for none.  Called once, after the holder check.
	virtual std::optional<int64_t> session(bool pooled) = 0;
	// The store's durability, recorded on the worker (PostgreSQL's statement
	// asks genroc.durability() itself).
	virtual std::string durability() = 0;
};

// genroc._live_worker(p_worker): a registered, not stopped worker, its row
// locked; 22004 for NULL, RC006 otherwise.
void live_worker(Port &port, const std::optional<std::string> &worker);

// genroc.worker_register(p_worker, p_options): {"worker", "reclaimed"} as
// JSON text.
std::string worker_register(Port &port, WorkerHost &host, const std::optional<std::string> &worker,
							const std::optional<std::string> &options);
// genroc.worker_heartbeat(p_worker): {"drain": bool} as JSON text.
std::string worker_heartbeat(Port &port, const std::optional<std::string> &worker);
// genroc.worker_drain(p_worker): {"worker", "draining", "running"}.
std::string worker_drain(Port &port, const std::optional<std::string> &worker);
// genroc.worker_stop(p_worker)
void worker_stop(Port &port, const std::optional<std::string> &worker);

struct WorkerRow {
	std::string worker, host;
	std::vector<std::string> queues;
	std::optional<int64_t> concurrency;
	int64_t lease_duration_ms = 0, stale_after_ms = 0;
	int64_t started_us = 0, heartbeat_us = 0;  // microseconds since the Unix epoch
	std::optional<int64_t> stopped_us;
	bool live = false;
	int64_t running = 0;
	std::string durability;
	bool draining = false;
};
// genroc.list_workers(): every worker the caller may see, by id.
std::vector<WorkerRow> list_workers(Port &port);

// ---- queues (extension/sql/55_queues.sql) -------------------------------


// genroc._queue_settings: a queue name's effective settings: its own row,
// for <q>.<region> the row of q (kind "region"), else none (no kind); an
// option its row leaves NULL from the default queue, then built in.
struct QueueSettings {
	std::optional<std::string> kind;
	std::optional<std::string> handler, match;	// its own row's (match: JSON text)
	int64_t global = 0, partition = 1;
	std::optional<int64_t> rate, period_ms, partition_rate, partition_period_ms;
};
QueueSettings queue_settings(Port &port, const std::string &queue);

struct QueueRow {
	std::string name;
	QueueSettings settings;
	int64_t depth = 0, queued = 0, running = 0;
	std::vector<std::string> workers;		// live workers serving it, by id
	std::optional<int64_t> oldest_ready_us;	// microseconds since the Unix epoch
};

// genroc.queue_set(p_name, p_options): the queue as list_queues shows it,
// as JSON text (oldest_ready_at in ISO-8601).
std::string queue_set(Port &port, const std::optional<std::string> &name,
					  const std::optional<std::string> &options);
// genroc.queue_drop(p_name)
void queue_drop(Port &port, const std::optional<std::string> &name);
// genroc.list_queues(): every queue configured, served or in use, by name.
std::vector<QueueRow> list_queues(Port &port);
// One row of list_queues as JSON text (queue_set's answer).
std::string queue_row_json(const QueueRow &row);

}  // namespace genroc::engine
