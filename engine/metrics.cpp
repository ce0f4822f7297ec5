// metrics.cpp — genroc.queue_stats, metrics and tickers (engine/metrics.hpp),
// once for both stores.
#include "metrics.hpp"

#include <algorithm>
#include <map>

#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

std::string json_str(const std::string &s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

// The statuses an instance can have, by name: metrics' "instances" has each.
const char *const kStatuses[] = {"cancelled", "failed", "queued", "ready", "running", "succeeded", "waiting"};

}  // namespace

std::vector<QueueStat> queue_stats(Port &port) {
	std::vector<QueueStat> out;
	for (const Row &r : port.query(Stmt::QUEUE_STATS, {port.now_ms()}))
		out.push_back({r.text(0), r.i64(1), r.text(2), r.i64(3), r.i64(4), r.i64(5)});
	return out;
}

std::string metrics(Port &port, std::optional<int64_t> max_definitions) {
	if (!max_definitions) raise(Msg::ARG_NULL, {"p_max_definitions"});
	if (*max_definitions < 0 || *max_definitions > 1000)
		raise(Msg::METRICS_MAX_DEFINITIONS, {std::to_string(*max_definitions)});
	const int64_t now = port.now_ms();

	// Who asks: whether the caller counts and names every instance (an
	// operator), counts every one (a worker too), and its role for the
	// others' rows.  SQLite's file owner is an operator.
	const Row who = port.query(Stmt::METRICS_WHO, {}).at(0);
	const int64_t role = who.i64(0);
	const bool every = who.boolean(1), all = who.boolean(2);

	// Instances by definition name, status and whether the caller may name
	// them, by name then status (the store's collation).
	std::map<std::string, int64_t> by_status;
	for (const char *s : kStatuses) by_status[s] = 0;
	std::vector<std::string> names;							  // named ones, in the statement's order
	std::map<std::string, std::vector<std::pair<std::string, int64_t>>> named;  // name -> (status, n)
	for (const Row &r : port.query(Stmt::METRICS_COUNTS, {role, every, all})) {
		const std::string &name = r.text(0), &status = r.text(1);
		const int64_t n = r.i64(3);
		if (auto it = by_status.find(status); it != by_status.end()) it->second += n;
		if (!r.boolean(2)) continue;
		auto [it, fresh] = named.try_emplace(name);
		if (fresh) names.push_back(name);
		it->second.emplace_back(status, n);
	}
	// The definitions with the most instances, then by name.
	std::vector<std::pair<int64_t, size_t>> rank;  // (-total, position)
	for (size_t k = 0; k < names.size(); k++) {
		int64_t total = 0;
		for (const auto &sn : named[names[k]]) total += sn.second;
		rank.emplace_back(-total, k);
	}
	std::sort(rank.begin(), rank.end());
	std::vector<bool> shown(names.size(), false);
	int64_t omitted = 0;
	for (size_t k = 0; k < rank.size(); k++) {
		if (static_cast<int64_t>(k) < *max_definitions) shown[rank[k].second] = true;
		else omitted++;
	}

	std::string out = "{\"instances\": [";
	bool first = true;
	for (const auto &[status, n] : by_status) {
		out += (first ? "" : ", ") + std::string("{\"count\": ") + std::to_string(n) + ", \"status\": " +
			   json_str(status) + "}";
		first = false;
	}
	out += "], \"by_definition\": [";
	first = true;
	for (size_t k = 0; k < names.size(); k++) {
		if (!shown[k]) continue;
		for (const auto &[status, n] : named[names[k]]) {
			out += (first ? "" : ", ") + std::string("{\"count\": ") + std::to_string(n) +
				   ", \"status\": " + json_str(status) + ", \"definition\": " + json_str(names[k]) + "}";
			first = false;
		}
	}
	out += "], \"definitions_omitted\": " + std::to_string(omitted) + ", \"queues\": [";
	first = true;
	for (const QueueStat &q : queue_stats(port)) {
		// oldest_ready_s spliced as the store wrote it: the same number
		out += (first ? "" : ", ") + std::string("{\"queue\": ") + json_str(q.queue) +
			   ", \"ready\": " + std::to_string(q.ready) + ", \"queued\": " + std::to_string(q.queued) +
			   ", \"running\": " + std::to_string(q.running) + ", \"workers\": " + std::to_string(q.workers) +
			   ", \"oldest_ready_s\": " + q.oldest_ready_s + "}";
		first = false;
	}
	const int64_t workers = port.query(Stmt::WORKERS_ALIVE, {now}).at(0).i64(0);
	out += "], \"workers_alive\": " + std::to_string(workers);
	// stored large values, unused ones among them (an SQLite file opened
	// read-only before it had the table has none)
	int64_t objects = 0, bytes = 0, unused = 0;
	if (port.query(Stmt::OBJECTS_PRESENT, {}).at(0).boolean(0)) {
		const Row o = port.query(Stmt::OBJECTS_FIGURES, {}).at(0);
		objects = o.i64(0);
		bytes = o.i64(1);
		unused = o.i64(2);
	}
	out += ", \"objects\": {\"count\": " + std::to_string(objects) + ", \"bytes\": " + std::to_string(bytes) +
		   ", \"unused\": " + std::to_string(unused) + "}}";
	return out;
}

std::vector<Ticker> tickers(Port &port) {
	std::vector<Ticker> out;
	for (const Row &r : port.query(Stmt::TICKERS, {port.now_ms()}))
		out.push_back({r.text(0), r.text(1), r.text(2), r.i64(3), r.i64(4), r.i64(5), r.i64(6)});
	return out;
}

}  // namespace genroc::engine
