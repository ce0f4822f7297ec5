// claim.cpp — genroc.claim (engine/claim.hpp), once for both stores: the
// argument checks, the heartbeat, the worker's concurrency, the fast path
// (one statement: CLAIM_TAKE), and with queue limits the room they leave
// (genroc._claim_room's semantics) and the partitioned choice
// (genroc._claim_partitioned's), both in 55_queues.sql's comments.
#include "claim.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "admin.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

// What the queue limits leave of a claim.
struct Room {
	std::vector<std::string> open;	// the queues to claim from, by name
	std::optional<int64_t> bound;	// the batch's bound (none: no bound)
	std::set<std::string> rated;	// a start of any task counts (rate_limit)
	// queue -> (partition_rate_limit, its period in ms): a start of a task
	// with a partition_key counts
	std::map<std::string, std::pair<int64_t, int64_t>> partition_rated;
};

std::string json_array(const std::vector<std::string> &v) {
	return json(v).dump(-1, ' ', false, json::error_handler_t::replace);
}

// genroc._claim_room: for each queue with a global_concurrency or a
// rate_limit, under its lock (taken in name order), its room; a queue
// without room is left out, the batch takes at most the smallest room.
// Start rows older than a rate-limited queue's longest period go.
Room room(Port &port, const std::vector<std::string> &queues, int64_t now) {
	Room out;
	for (const std::string &q : std::set<std::string>(queues.begin(), queues.end())) {
		const QueueSettings s = queue_settings(port, q);
		if (s.rate || s.partition_rate)
			port.exec(Stmt::CLAIM_PRUNE_STARTS,
					  {q, now, std::max(s.period_ms.value_or(0), s.partition_period_ms.value_or(0))});
		if (s.global == 0 && !s.rate) {
			out.open.push_back(q);
		} else {
			port.exec(Stmt::CLAIM_LOCK_QUEUE, {q});
			std::optional<int64_t> left;
			if (s.global > 0) left = s.global - port.query(Stmt::CLAIM_RUNNING, {q}).at(0).i64(0);
			if (s.rate) {
				const int64_t r =
					*s.rate - port.query(Stmt::CLAIM_STARTS, {q, now, s.period_ms.value_or(0)}).at(0).i64(0);
				left = left ? std::min(*left, r) : r;
			}
			if (!left || *left <= 0) continue;
			out.open.push_back(q);
			out.bound = out.bound ? std::min(*out.bound, *left) : *left;
			if (s.rate) out.rated.insert(q);
		}
		if (s.partition_rate) out.partition_rated[q] = {*s.partition_rate, s.partition_period_ms.value_or(0)};
	}
	return out;
}

// genroc._claim_partitioned: the ready tasks of the open queues in claim
// order, read in chunks; a task of a partition-limited queue with a
// partition_key is taken only while its partition has room (counted the
// first time the claim meets it, under its rate lock; a partition whose
// lock another claimer holds is passed over).  Each taken row locked.  At
// most n ids.
std::vector<int64_t> partitioned(Port &port, const Room &r, int64_t now, int64_t n) {
	std::vector<int64_t> ids;
	if (n < 1) return ids;
	const int64_t chunk = std::max<int64_t>(4 * n, 64);
	std::map<std::pair<std::string, std::string>, int64_t> left;
	json full = json::array();	// partitions without room: [queue, key]
	bool read_before = false;
	int64_t last_priority = 0, last_eligible = 0, last_id = 0;
	const std::string open = json_array(r.open);
	for (;;) {
		const Rows rows =
			port.query(Stmt::CLAIM_CHUNK, {JsonText{open}, now, chunk, read_before, last_priority, last_eligible,
										   last_id, JsonText{full.dump(-1, ' ', false, json::error_handler_t::replace)}});
		for (const Row &c : rows) {
			const int64_t id = c.i64(0);
			const std::string queue = c.text(1);
			const std::optional<std::string> key = c.otext(2);
			read_before = true;
			last_priority = c.i64(3);
			last_eligible = c.i64(4);
			last_id = id;
			const auto limit = r.partition_rated.find(queue);
			std::map<std::pair<std::string, std::string>, int64_t>::iterator it;
			if (key && limit != r.partition_rated.end()) {
				const auto mark = std::make_pair(queue, *key);
				it = left.find(mark);
				if (it == left.end()) {
					int64_t have = 0;
					if (port.query(Stmt::CLAIM_TRY_PARTITION, {queue, *key}).at(0).boolean(0))
						have = limit->second.first -
							   port.query(Stmt::CLAIM_PARTITION_STARTS, {queue, *key, now, limit->second.second})
								   .at(0)
								   .i64(0);
					it = left.emplace(mark, have).first;
					if (have <= 0) full.push_back({queue, *key});
				}
				if (it->second <= 0) continue;
			}
			if (port.query(Stmt::CLAIM_LOCK_ROW, {id, now}).empty()) continue;
			ids.push_back(id);
			if (key && limit != r.partition_rated.end()) {
				if (--it->second == 0) full.push_back({queue, *key});
			}
			if (static_cast<int64_t>(ids.size()) >= n) return ids;
		}
		if (static_cast<int64_t>(rows.size()) < chunk) return ids;
	}
}

// The leased rows (CLAIM_TAKE, CLAIM_TAKE_IDS) as claim returns them; the
// starts the limits count recorded; SQLite's log rows and stored values.
void claim_leased(Port &port, Rows rows, const std::string &worker, int64_t now, int64_t lease, const Room *limits,
			Claimed &out) {
	const bool lite = port.dialect() == Dialect::sqlite;
	// SQLite's RETURNING has no order: claim order (priority, eligible_at, id)
	if (lite)
		std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
			return std::make_tuple(a.i64(10), a.i64(11), a.i64(0)) < std::make_tuple(b.i64(10), b.i64(11), b.i64(0));
		});
	const int64_t expires_us = lite ? (now + lease) * 1000 : now + lease;
	bool only_once = false;
	out.tasks.reserve(rows.size());
	for (const Row &r : rows) {
		HandedBack t;
		t.instance_id = r.i64(0);
		t.epoch = r.i64(1);
		t.state = r.otext(2);
		t.resource = r.otext(3);
		t.only_once = r.boolean(5);
		t.timeout_s = r.oi64(6);
		t.attempt = r.i64(7);
		t.lease_expires_us = expires_us;
		t.queue = r.text(8);
		if (lite) port.exec(Stmt::CLAIM_LOG, {t.instance_id, now, t.state, t.attempt, t.epoch, worker});
		task_input(port, r, 4, t);
		if (limits && (limits->rated.count(t.queue) || (!r.is_null(9) && limits->partition_rated.count(t.queue))))
			port.exec(Stmt::CLAIM_START_ROW, {t.queue, r.otext(9), now});
		only_once = only_once || t.only_once;
		out.tasks.push_back(std::move(t));
	}
	// the claim of an OnlyOnce task must be on disk before its handler runs
	if (only_once) port.exec(Stmt::FLUSH_COMMIT, {"only_once_claim"});
}

}  // namespace

int64_t new_epoch(int64_t previous) {
	thread_local uint64_t drawn[64];
	thread_local int left = 0;
	for (;;) {
		if (left == 0) {
			if (RAND_bytes(reinterpret_cast<unsigned char *>(drawn), sizeof drawn) != 1)
				throw Error("XX000", "could not generate a random lease epoch");
			left = static_cast<int>(sizeof drawn / sizeof drawn[0]);
		}
		const uint64_t bits = drawn[--left];
		drawn[left] = 0;
		const auto epoch = static_cast<int64_t>(bits & 0x7FFFFFFFFFFFFFFFULL);
		if (epoch != 0 && epoch != previous) return epoch;
	}
}

Claimed claim(Port &port, const std::optional<std::string> &worker,
			  const std::optional<std::vector<std::string>> &queues, std::optional<int64_t> n, int64_t now_us) {
	Claimed out;
	// a bad argument: the worker's role is checked first (_check_worker)
	if (!queues || !n || *n < 1) {
		port.exec(Stmt::CHECK_WORKER, {worker});
		port.exec(Stmt::FLUSH_COMMIT, {"progress"});
		if (!queues) raise(Msg::ARG_NULL, {"p_queues"});
		if (!n) raise(Msg::ARG_NULL, {"p_n"});
		raise(Msg::CLAIM_N_AT_LEAST, {std::to_string(*n)});
	}
	const int64_t now = port.dialect() == Dialect::postgres ? now_us : now_us / 1000;
	// the heartbeat, on the live worker's row (locked by the update); none
	// updated: genroc._live_worker says why (22004, RC006)
	Rows hb = worker ? port.query(Stmt::CLAIM_HEARTBEAT, {*worker, now}) : Rows{};
	if (hb.empty()) {
		port.exec(Stmt::CHECK_WORKER, {worker});
		live_worker(port, worker);
		raise(Msg::WORKER_NOT_REGISTERED, {worker.value_or("")});	// not reached
	}
	const Row &w = hb[0];
	// another role's worker: the caller must be an admin (42501 otherwise)
	if (w.boolean(0)) port.exec(Stmt::CHECK_WORKER, {*worker});
	if (port.dialect() == Dialect::sqlite) port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	// a draining worker takes nothing more (worker_drain)
	if (w.boolean(1)) return out;
	int64_t take = *n;
	if (!w.is_null(2)) take = std::min(take, w.i64(2) - port.query(Stmt::CLAIM_HELD, {*worker}).at(0).i64(0));
	if (take <= 0) return out;
	const int64_t lease = w.i64(3);
	if (!w.boolean(4)) {
		// no queue row sets a limit: every queue is open, one statement
		claim_leased(port, port.query(Stmt::CLAIM_TAKE, {*worker, JsonText{json_array(*queues)}, take, now, lease}),
			   *worker, now, lease, nullptr, out);
		out.end = out.tasks.empty() ? Claimed::End::none_ready : Claimed::End::took;
		return out;
	}
	const Room limits = room(port, *queues, now);
	if (limits.bound) take = std::min(take, *limits.bound);
	if (limits.partition_rated.empty()) {
		claim_leased(port, port.query(Stmt::CLAIM_TAKE, {*worker, JsonText{json_array(limits.open)}, take, now, lease}),
			   *worker, now, lease, &limits, out);
	} else {
		const std::vector<int64_t> ids = partitioned(port, limits, now, take);
		if (!ids.empty())
			claim_leased(port, port.query(Stmt::CLAIM_TAKE_IDS, {*worker, JsonText{json(ids).dump()}, now, lease}), *worker,
				   now, lease, &limits, out);
	}
	return out;
}

}  // namespace genroc::engine
