// steps.hpp — the step writer: where an interpreter answer becomes the
// instance row (apply_step).  Each outcome kind has one row
// writer (engine/steps.cpp) that says every column it leaves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// A report's hand-back (complete_and_claim, fail_and_claim): the worker
// that may take the next task at once, and the queues it serves.
struct Handback {
	std::string worker;
	std::vector<std::string> queues;
};

// What a worker may take back at once (handback_room): the lease it
// takes a task under, and of its queues those where nothing but the row
// decides.  None: it is not registered, stopped or draining.
struct HandbackRoom {
	std::optional<int64_t> lease_ms;
	std::vector<std::string> open;	// no limit stands in the way
	// queue -> its global_concurrency: a hand-back there needs the
	// queue's other running tasks fewer (handback_lease counts them)
	std::vector<std::pair<std::string, int64_t>> counted;
};

// The hand-back's check, once for both stores and for both report paths
// (apply_step's, and a batch's set-wise statement on PostgreSQL,
// engine/many.cpp): the worker is registered, not stopped and
// not draining (its lease duration), and each of hb.queues with no
// rate_limit or partition_rate_limit (those count starts in a window:
// claim decides) is open, or counted with a global_concurrency.
HandbackRoom handback_room(Port &port, const Handback &hb);

// The lease (ms) under which hb.worker may take instance `id`'s next task
// at once, or none: the row before the step is leased to hb.worker and in
// one of hb.queues, handback_room leaves its queue open, or counted and
// the queue's other running tasks are fewer than its global_concurrency
// (no queue lock needed: this instance counts as running before and
// after, so what other claimers count does not change).  The caller holds
// the row lock.
std::optional<int64_t> handback_lease(Port &port, int64_t id, const Handback &hb);

// What an outcome leaves in the instance's position (STEP_STOP): every
// column, so that each writer below says all of them.  Times are offsets
// in ms from the operation's clock; "kept" leaves the column as it is.
struct Stop {
	std::string status;
	std::optional<std::string> state;
	std::optional<json> state_input, task_input;  // null: none
	std::optional<std::string> resource;
	std::optional<int64_t> eligible_in;	 // kept when null
	std::optional<std::string> lease_owner;
	bool new_epoch = false;
	std::optional<int64_t> lease_in;
	std::optional<json> retry_counts;
	std::optional<int64_t> attempt, interruptions;	// kept when null
	bool only_once = false;
	std::optional<int64_t> timeout_s, timeout_in, heartbeat_s;
	std::optional<std::string> wait_kind;
	std::optional<int64_t> wait_until;	// ms since the epoch
	std::optional<std::string> activity, activity_token;
	bool ended = false;	 // output, error, cause, ended_at written
	std::optional<json> output;
	std::optional<std::string> error, cause;
	std::optional<json> fanout;  // a fan-out's bookkeeping (kept when null)
};

// Writes the stop (the one statement STEP_STOP, the only wide UPDATE of
// the instance row); the lease epoch the row has then.
int64_t write_stop(Port &port, int64_t id, const Stop &s);

// The step writer: runs one interpreter step for a locked instance (the
// engine's ask, engine/ask.hpp) and records where it stopped; returns the
// new status.  request: the op and its fields (input / state, state_input,
// result | error + cause, retry_counts; the ask adds now and the context);
// first: the log row that led to this step ({"event", "state", "detail"})
// or null; first_text: that row as JSON text instead (start's 'started',
// whose input is logged as the caller wrote it).  The caller holds the row
// lock.
// Semantics (the outcome -> the row):
//   every step clears the lease, the deadlines, the wait and the activity
//   task -> handler:/genroc: resources: status 'ready', eligible_at = now +
//          delay_ms (a retry back-off; claim skips the row until then, no
//          tick needed); activity: resources: status 'waiting', wait_kind
//          'activity', a new token, eligible_at = now + delay_ms
//          (claim_activity skips it until then), timeout_at = eligible_at +
//          TimeoutSeconds.  Either way: retry_counts from the answer,
//          attempt = their sum, interruptions = 0 (a new attempt).  A
//          .waitForTaskToken task (the answer has "token"): status 'ready'
//          with activity_token = that token.
//   callback (its handler returned) -> status 'waiting', wait_kind
//          'callback', the token kept, heartbeat_at = now + HeartbeatSeconds,
//          timeout_at kept (from the claim) or now + TimeoutSeconds; first's
//          'task_succeeded' logged as 'task_submitted'
//   wait -> status 'waiting', wait_kind 'timer', wait_until = until_ms
//   parallel / map / call -> the fan-out (engine/children.cpp): status
//          'waiting', wait_kind 'children', the children created here
//   succeeded / failed -> that status, output or error + cause, ended_at; a
//          failed one keeps state and state_input of the state it failed in
//   variables: written when the answer carries them (an Assign ran)
//   log: first when given, one 'entered' row per state entered, then one
//   row for the outcome ('task_scheduled', 'wait_started', 'succeeded',
//   'failed')
//   a wake-up for the workers (NOTIFY genroc on PostgreSQL, no payload)
//   when a task is ready at once
//   handback (complete_and_claim, fail_and_claim): a handler task ready at
//   once that this worker may take (handback_lease, asked only then) is
//   leased to it in the same update, as claim leases it (status 'running',
//   a new epoch, lease_expires = now + its lease_duration, timeout_at from
//   now), claim's 'task_started' row follows 'task_scheduled', no wake-up;
//   returns 'running'
std::string apply_step(Port &port, int64_t instance, const json &request, const json &first = json(),
					   const Handback *handback = nullptr, const std::string *first_text = nullptr);

// genroc._fail_task(p_instance, p_error, p_cause): a task fails with an
// engine error (timeouts, interruptions) through the interpreter, so Retry
// and Catch decide as for any error: its 'task_failed' row, then the step.
std::string fail_task(Port &port, int64_t instance, const std::optional<std::string> &error,
					  const std::optional<std::string> &cause);

// A running task lost its worker (the lease lapsed: tick; the worker gave it
// back: release, worker_stop; or registered again after a crash:
// worker_register); the caller holds the row lock.
// Semantics:
//   'task_interrupted' logged {reason, worker, epoch, interruptions, counted};
//   a release on purpose ('released by worker', 'worker stopped') is not
//   counted towards genroc.Interrupted
//   OnlyOnce task → task_failed only_once.interrupted (never handed out again)
//   the 5th counted interruption of one attempt → task_failed
//   genroc.Interrupted (counted on the row too)
//   otherwise → status 'ready', eligible_at = now, interruptions + 1 when
//   counted, the lease dropped (the epoch stays), a wake-up for the workers
std::string interrupt(Port &port, int64_t instance, const std::string &reason);

}  // namespace genroc::engine
