// queue_health.hpp — queues with ready tasks that no live worker serves
// (docs/sql-api.md "Queues and routing"): genctl queues, GET /api/queues and the
// worker's log warn about them.  Pure: reads list_queues' rows.
#pragma once

#include <string>
#include <vector>

#include "store.hpp"

namespace genroc {

// The rows of list_queues (either store) whose `depth` (ready tasks) is
// above 0 while `workers` (live workers serving the queue) is empty.
inline json unserved_queues(const json &list) {
	json out = json::array();
	if (!list.is_array()) return out;
	for (const auto &q : list) {
		const json depth = q.value("depth", json(0));
		const json workers = q.value("workers", json::array());
		if (depth.is_number_integer() && depth.get<int64_t>() > 0 && (workers.is_null() || workers.empty()))
			out.push_back(q);
	}
	return out;
}

// What to do about an unserved queue, for people: who would serve it.
inline std::string unserved_hint(const json &q) {
	const std::string name = q.value("name", std::string());
	const json handler = q.value("handler", json());
	if (handler.is_string())
		return "start a worker whose handlers file has the handler \"" + handler.get<std::string>() +
			   "\" (it serves the handler's queue)";
	const auto dot = name.find('.');
	if (dot != std::string::npos)
		return "start a worker with --region " + name.substr(dot + 1) + " that serves \"" + name.substr(0, dot) +
			   "\" (--queue " + name.substr(0, dot) + " unless it is default, a tenant's or a handler's queue)";
	return "start a worker with --queue " + name + " (default and tenant queues are served unless --exclusive)";
}

}  // namespace genroc
