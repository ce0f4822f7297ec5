// tick.hpp — genroc.tick: everything time does, once for both stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc.tick(p_limit): kinds in this order, each at most `limit` rows
// (oldest deadline first, then id; FOR UPDATE SKIP LOCKED, so concurrent
// ticks share the work: the in-database ticker and any number of workers
// may tick at once):
//   timeouts    a running handler task past its claim + TimeoutSeconds, a
//               parked activity or event wait past its parking +
//               TimeoutSeconds, a .waitForTaskToken task waiting for its
//               token past its claim + TimeoutSeconds, or a sync call past
//               its child's start + TimeoutSeconds (the child is cancelled
//               first): task_failed States.Timeout
//   heartbeats  a claimed activity, or a task waiting for its token, past
//               its heartbeat deadline: task_failed States.HeartbeatTimeout
//   lapsed      a running task whose lease expired: engine::interrupt
//   timers      a Wait whose time has come: timer_fired; and a retried
//               Parallel or Map whose back-off is over: its children start
//   run_at      a delayed start whose time has come: the first step (or
//               'queued' for a partition slot, genroc._admit)
//   pruning     prune_rows (engine/retention.hpp) with the caller's
//               retention settings, `limit` of each kind; only when the
//               caller administers genroc (a worker's session settings never
//               delete other roles' rows)
//   objects     stored values unused for the object grace (by the pruning);
//               a role that does not administer genroc collects too, with a
//               grace of at least one hour whatever its session sets
// Retry back-off needs no tick: the row is ready with a later eligible_at.
// Then who ticked is recorded (genroc.tickers; rows not ticked for 7 days
// are deleted).  22004 for a null limit, 22023 below 1.  Returns
// {"timeouts", "heartbeats", "lapsed", "timers", "run_at",
// "pruned_log_rows", "pruned_instances", "collected_objects"} as JSON text.
std::string tick(Port &port, std::optional<int64_t> limit);

}  // namespace genroc::engine
