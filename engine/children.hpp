// children.hpp — composition: child instances for Parallel branches, Map
// items and genroc:call (a fan-out parks the parent and creates its
// children in the same transaction; the child that ends last wakes the
// parent in the transaction that ends it), and parking on a genroc:event.
// Semantics: the comment at the top of extension/sql/65_children.sql.
#pragma once

#include <cstdint>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc._fan_out(p_parent, p_out): creates the children of a fan-out
// outcome (kind 'parallel', 'map' or 'call') and starts as many as may run
// (none while a retry back-off holds them: tick).  The caller (the step
// writer) holds the row lock.  Returns the parent's status (a call that
// cannot start goes on through Retry and Catch at once).
std::string fan_out(Port &port, int64_t parent, const json &out);

// genroc._child_ended(p_child): a child ended (succeeded, failed,
// cancelled): its parent locked, the end counted in the parent's fan-out,
// and the parent goes on, unless that parent's loop runs further up this
// call (it sees the new counts itself).
void child_ended(Port &port, int64_t child);

// genroc._advance_children(p_parent): fails the fan-out when its failures
// say so, starts pending children while there is room, resumes the parent
// when every child has ended.  A loop, not recursion, over the children.
// The caller holds the parent's row lock.
void advance_children(Port &port, int64_t parent);

// genroc._cancel_children(p_parent, p_cause): cancels the live children of
// the parent's current fan-out (its failure, a sync call's timeout).
void cancel_children(Port &port, int64_t parent, const std::string &cause);

// genroc._park_event(p_instance, p_out): a genroc:event task waits for its
// event, or takes the first kept one of that name at once.  Returns the new
// status.
std::string park_event(Port &port, int64_t instance, const json &out);

}  // namespace genroc::engine
