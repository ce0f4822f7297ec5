// instance_actions.hpp — which operator actions an instance takes now: the
// one rule the console's buttons and the bulk route share.
//
// The store stays the judge (genroc.cancel, retry, resume, redrive, emit refuse with
// RC008, RC009, 22023); this rule answers the same from an instance's JSON
// without a write, so the console shows only what the API would accept and
// a bulk action skips, with the store's reason, what it would refuse.
//
// Glossary
//   cancel   a live instance (not succeeded, failed or cancelled)
//   retry    a failed top-level instance: its failed state runs again
//   resume   as retry, and that state is a Task (resume goes on after it)
//   redrive  a failed or cancelled top-level instance: it goes on where it
//            stopped, a Map or Parallel rerunning only what did not succeed
//   emit     a live instance that waits for an event (its name is the
//            instance's "activity"): delivered at once.  The API also keeps
//            an event for a later wait; the console offers only delivery.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace genroc {

// Every action name, in the order the console shows them.
const std::vector<std::string> &action_names();

// Why `action` does not apply to `inst` (an instance as get_instance shows
// it; `state_type` the ASL Type of the state it stops in, "" when unknown),
// as the store would say it; "" when it applies.
std::string action_refusal(const std::string &action, const nlohmann::json &inst, const std::string &state_type);

// The actions that apply, in action_names() order.
std::vector<std::string> instance_actions(const nlohmann::json &inst, const std::string &state_type);

}  // namespace genroc
