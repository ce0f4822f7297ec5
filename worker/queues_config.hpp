// queues_config.hpp — the queues a worker configures and serves at start
// (docs/sql-api.md "Queues and routing").
//
// Queues are operator configuration kept in the database (genroc.queue_set),
// shared by every server.  At start a worker writes what its files say:
// every entry of --queues-config, and a handler queue for each handler of
// its handlers file that names a `queue`; then it works out the queues it
// serves.  A conflict (a tenant's queue name used for another kind, a
// handler given two queues) stops it before it claims anything.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "store.hpp"

namespace genroc {

// One entry of a queues config file: a name and queue_set's options.
struct QueueEntry {
	std::string name;
	json options;
};

// Reads a queues config file:
//   {"queues": {"gpu": {"kind": "routed", "match": {"definitions": ["ml-*"]},
//                       "global_concurrency": 2}, ...}}
// Keys are queue names, values queue_set's options (checked by queue_set).
// Throws std::runtime_error naming the file and the fault.
std::vector<QueueEntry> load_queues_config(const std::string &path);

// Writes the entries (queue_set, in name order), then the handler queues
// (handler name, queue name) that the entries do not already configure
// as that handler's queue; an entry that gives the queue another kind or
// handler is refused.  An existing handler queue for the same handler is
// left as it is (an operator may have set its limits).  Then returns the
// queues this worker serves: worker_queues() with the queue of each of its
// handlers (`handler_names`: the handler queues configured in the database,
// whoever configured them, the ones its handlers file names, and the queue
// named after each handler unless that name is another queue's) plus,
// unless --exclusive, the tenant queues (each <queue>.<region> with
// --region).  Throws std::runtime_error or genroc::Error with the reason.
std::vector<std::string> sync_queues(Store &store, const Config &cfg, const std::vector<QueueEntry> &entries,
									 const std::vector<std::pair<std::string, std::string>> &handler_queues,
									 const std::vector<std::string> &handler_names);

// The queues configured in the database (list_queues, kind "handler") for
// one of these handler names, sorted.
std::vector<std::string> configured_handler_queues(Store &store, const std::vector<std::string> &handler_names);
// The same over a list_queues() answer already read.
std::vector<std::string> configured_handler_queues(const json &queues, const std::vector<std::string> &handler_names);

}  // namespace genroc
