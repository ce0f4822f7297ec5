// claim.hpp — genroc.claim: a worker leases the ready tasks of its queues
// (extension/sql/50_workers.sql declares it and writes its semantics; the
// queue limits' semantics are in 55_queues.sql above claim_wake).  Written
// once over the port: the PostgreSQL entry points (extension/claim.c,
// genroc.claim and genroc.claim_wait's rounds) and the SQLite store call it.
//
// Glossary
//   fast path     no queue row sets a limit anywhere: one statement chooses,
//                 locks, leases and logs the tasks (CLAIM_TAKE)
//   room          what queue limits leave of a claim (genroc._claim_room's
//                 semantics): the open queues and the batch's bound
//   partitioned   an open queue has a partition_rate_limit: the tasks are
//                 chosen one by one, each partition counted as it is met
//                 (genroc._claim_partitioned's semantics), then leased
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"
#include "report.hpp"

namespace genroc::engine {

struct Claimed {
	// what the claim came to: claim_wait waits again only on none_ready
	enum class End {
		took,		 // the fast path leased tasks
		none_ready,	 // the fast path found no ready task
		other		 // a queue limit decided, or the worker may take nothing now
	};
	std::vector<HandedBack> tasks;	// in claim order
	End end = End::other;
};

// genroc.claim(p_worker, p_queues, p_n) at now_us (microseconds since the
// Unix epoch: genroc.now() for claim, the clock for each round of
// claim_wait; SQLite its store's clock): up to n ready tasks of the queues
// leased to the worker, each with a new lease epoch and a task_started log
// row; an OnlyOnce task's claim flushed.  Errors, in order: 42501 for
// another role's worker (an admin may claim for it), 22004 for a null
// p_queues or p_n, 22023 for p_n < 1, then 22004 for a null worker and
// RC006 for one not registered or stopped.
Claimed claim(Port &port, const std::optional<std::string> &worker,
			  const std::optional<std::vector<std::string>> &queues, std::optional<int64_t> n, int64_t now_us);

// A new lease epoch, the rule of both stores' statements (PostgreSQL's
// genroc._fencing_epoch, SQLite's genroc_new_epoch): random in 1 .. 2^63-1
// and not `previous`.  A counter would hand the same epoch out again after a
// crash took an unflushed claim (at essential a claim commits without a
// flush; a sequence's advance is logged the same way), and a worker still
// holding the lost lease could then report with it; a random one comes back
// with probability 2^-63.  The bytes come from OpenSSL's generator
// (PostgreSQL's pg_strong_random is the same), drawn 64 epochs at a time per
// thread (one draw cost a claim's task as much as a log row's index entry),
// each handed out once; a backend's buffer is filled after its fork.
int64_t new_epoch(int64_t previous);

}  // namespace genroc::engine
