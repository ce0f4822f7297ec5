// run_cmd.hpp — `genroc run FILE`: define, start, and run one instance to its
// end in this process, showing its progress state by state.
#pragma once

#include "config.hpp"
#include "handlers.hpp"
#include "stop.hpp"

namespace genroc {

// Registers the definition in config.run_file (named after the file's stem
// unless config.run_name), starts it with config.run_input, runs its tasks
// here with `handlers` (an in-process worker: leases, renewals and tick as
// anywhere else) until it ends, printing progress on stderr and the result
// on stdout (with run_json, the last stdout line is
// {"status","output","error","cause"}).  Returns 0 when it succeeded, 1 when
// it failed or was cancelled, 2 when the file, the input or the definition
// was refused (nothing started), 130 when `stop` interrupted it (the
// instance stays in the database and continues on the next worker).
int run_file(const Config &config, const HandlerRegistry &handlers, const StopFlag &stop);

}  // namespace genroc
