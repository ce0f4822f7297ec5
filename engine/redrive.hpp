// redrive.hpp — genroc.redrive: a stopped instance goes on from where it
// stopped, a Map or Parallel rerunning only its unsuccessful children.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc.redrive(p_instance): a failed (timed out included) or cancelled
// top-level instance continues from the state it stopped in, with the input
// that state had; its definition version stays.
//
// Semantics:
//   - a Map or Parallel state that stopped on its children (they failed, or
//     the instance was cancelled while they ran) waits on the same children
//     again: the succeeded ones keep their outputs and are not run again;
//     each one that failed or was cancelled after it started is redriven the
//     same way (recursively), each one that never started starts with its
//     item's input (within MaxConcurrency, as a fan-out starts them); when
//     all have ended the outputs are put together in their order as usual
//   - any other state is entered again with its input (its Retry counts
//     start over); an instance cancelled before its first state starts
//   - the instance's log gets 'redriven' ({"redrive_count": n, ...}); the
//     number of such rows is the instance's redrive count
// RC003 when there is no such instance, RC009 when it is running, waiting,
// succeeded, or part of another instance (the message names its top one);
// 42501 when the caller may not act on it.  Returns the new status.
//
// client_token (1 to 64 characters, 22023 otherwise): the same token as one
// of the instance's last 10 redrives answers its status now and redrives
// nothing (a retried request); the 'redriven' row keeps it.
std::string redrive(Port &port, std::optional<int64_t> instance,
					const std::optional<std::string> &client_token = std::nullopt);

}  // namespace genroc::engine
