// control.hpp — an instance's control from outside (genroc.cancel, retry,
// resume; extension/sql/40_instances.sql), its events (genroc.emit;
// 68_events.sql) and the leases a worker holds (genroc.renew, release;
// 50_workers.sql), written once over the port (engine/control.cpp).  The
// PostgreSQL entry points are extension/control.c; the SQLite store calls
// the same functions.
//
// The step writer, children, partition slots and routing, the log and the
// lapse path are the engine's, called in-process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// genroc.cancel(p_instance, p_error, p_cause): a live instance ends as
// 'cancelled' with error p_error (default genroc.Cancelled, at most 256
// characters) and cause p_cause (default "cancelled by request", at most
// 32768); its lease, timer and activity token are dropped, its live
// descendants cancelled (cancel_tree), its partition slot handed on, and a
// child's end counted in its parent's fan-out (a failed child).  RC003 for
// no such instance, RC008 for an ended one, 42501 when the caller may not
// act on it.  Lock order: the live descendants deepest first, the instance
// last (a child that ends locks itself, then its parent); a deadlock is
// retried, up to 5 times.  Returns "cancelled".
std::string cancel(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &error,
				   const std::optional<std::string> &cause);

// genroc._cancel_tree(p_instance, p_cause, p_children_cause, p_error): the
// instance and each live descendant, children first, end as 'cancelled'
// (the descendants with children_cause when given, and genroc.Cancelled);
// an ended one is left as it is.  Wakes no parent, hands on no partition
// slot: the caller decides what the end means (genroc.cancel; a fan-out
// that failed, genroc._cancel_children).
void cancel_tree(Port &port, int64_t instance, const std::optional<std::string> &cause,
				 const std::optional<std::string> &children_cause = std::nullopt,
				 const std::optional<std::string> &error = std::nullopt);

// genroc.retry(p_instance) (output nullopt) and genroc.resume(p_instance,
// p_output) (genroc._run_again): a failed top-level instance again, its
// definition version kept.  retry enters the state it failed in with the
// input that state had (its Retry counts start over); resume goes on after
// that state, a Task (22023 otherwise), as if it had returned output (JSON
// text).  RC009 when it is not failed or is a child (the message names its
// top instance).  Error, cause, output and ended_at are cleared, the queue
// routed again with today's queues, the log gets 'retried' / 'resumed',
// and the step runs now or after the instance got its partition's slot
// (genroc._admit).  Returns the new status.
std::string run_again(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &output);

// genroc.emit(p_instance, p_name, p_payload): the payload (JSON text;
// nullopt is JSON null) goes to the instance's genroc:event wait of that
// name ("delivered": the state goes on in this transaction), or is kept for
// its next wait of that name ("kept").  RC003 for no such instance, RC008
// for an ended one, 22023 for an empty name, 54000 past the depth limit.
std::string emit(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &name,
				 const std::optional<std::string> &payload);

// genroc._deliver_event(p_instance, p_name, p_payload): the instance waits
// for that event (its row locked by the caller): the 'event_received' log
// row, then its state goes on with the payload (JSON text) as the task's
// result.  Returns the new status.
std::string deliver_event(Port &port, int64_t instance, const std::string &name, const std::string &payload);

// genroc.renew(p_worker, p_instances): the leases the worker holds among
// the instances (running, leased to it; expired or not: until tick sees a
// lapse nobody else can hold them) extended to now + its lease_duration;
// their ids in ascending order, the others left out.  Counts as a
// heartbeat.  RC006 for a worker not registered or stopped; 42501 when the
// caller may not act for it.
std::vector<int64_t> renew(Port &port, const std::optional<std::string> &worker,
						   const std::optional<std::vector<int64_t>> &instances);

// genroc.release(p_worker, p_instances): the leases the worker holds among
// the instances given back at once, as a lapse (engine::interrupt; an
// OnlyOnce task fails with only_once.interrupted); the others are ignored.
// Returns how many it gave back.  RC006, 42501 as renew.
int64_t release(Port &port, const std::optional<std::string> &worker,
				const std::optional<std::vector<int64_t>> &instances);

// An activity task claim_activity hands out.
struct ActivityClaim {
	std::string token;
	int64_t instance_id = 0;
	std::string activity;
	std::string input;	// JSON text (a stored value loaded)
	std::optional<int64_t> heartbeat_s, timeout_s;
};

// genroc.claim_activity(p_activity, p_worker, p_n): up to n tasks parked
// at activity NAME (waiting, wait_kind 'activity') not yet handed out,
// their retry back-off passed (eligible_at <= now), in the order priority,
// eligible_at, id; rows another transaction is claiming are skipped (FOR
// UPDATE SKIP LOCKED), not waited for.  Each is marked as handed out to
// the worker (never again; its token stays valid), its heartbeat clock
// started (heartbeat_at = now + HeartbeatSeconds) and logged
// ('activity_claimed').  p_worker is the outside program's name; it need
// not be a registered genroc worker.  22004 for a NULL argument, 22023 for
// n < 1; 42501 when the caller may not act for a registered worker of
// that id.
std::vector<ActivityClaim> claim_activity(Port &port, const std::optional<std::string> &activity,
										  const std::optional<std::string> &worker, std::optional<int64_t> n);

// genroc.claim_wake(p_queues): milliseconds until a full window of these
// queues that holds back a ready task (a queue's rate_limit, a partition's
// partition_rate_limit) has room again, when its limit-th newest start
// leaves it; nullopt when none does.  A window that opens while another
// limit still holds the task back wakes the worker early: its claim takes
// nothing and it asks again.  22004 for NULL queues.
std::optional<int64_t> claim_wake(Port &port, const std::optional<std::vector<std::string>> &queues);

}  // namespace genroc::engine
