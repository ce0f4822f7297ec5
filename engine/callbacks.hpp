// callbacks.hpp — results sent by a task token, once for both stores: an
// activity's (activity:NAME, handed out by claim_activity) and a
// .waitForTaskToken task's (its handler returned; the result that counts
// comes by the token its input carried as $$.Task.Token).
//
// Semantics (both kinds):
//   a token is valid from the task's scheduling (a callback task) or
//   parking (an activity) until a result, a timeout or heartbeat timeout
//   recorded by tick, a retry (the next attempt has a token of its own) or
//   cancel; used once.  A result that arrives after a deadline but before
//   tick has recorded it is accepted.  Whether an activity was claimed
//   does not matter (a token passed on with $$.Task.Token works the same).
//   Otherwise RC007, whose message leaves the token out (a credential).
//   A callback task's result is accepted while its handler still runs or
//   waits to be claimed too (the handler may pass the token on before it
//   returns): the task ends with it, and the handler's late report finds
//   its lease gone (RC004).
#pragma once

#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc.activity_succeed(p_token, p_output): the task goes on with the
// output (JSON text) as its result (ResultSelector, ResultPath, OutputPath,
// Next) in this transaction; returns the instance's new status.
std::string task_token_succeed(Port &port, const std::optional<std::string> &token,
							   const std::optional<std::string> &output);

// genroc.activity_fail(p_token, p_error, p_cause): Retry and Catch decide
// in this transaction; returns the new status.
std::string task_token_fail(Port &port, const std::optional<std::string> &token,
							const std::optional<std::string> &error, const std::optional<std::string> &cause);

// genroc.activity_heartbeat(p_token): pushes the heartbeat deadline to now
// + HeartbeatSeconds (no effect on a task without HeartbeatSeconds;
// TimeoutSeconds still counts).
void task_token_heartbeat(Port &port, const std::optional<std::string> &token);

}  // namespace genroc::engine
