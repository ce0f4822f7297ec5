// cli.hpp — the genroc command line: `serve`, `worker`, `api`, `run FILE`.
//
// Call chain: main() -> genroc_main() -> parse_command_line() (CLI11, flags
// and GENROC_* variables) -> one of run_worker_command() (worker, serve: a
// Runner, plus the HTTP API for serve), run_api_command() (api),
// run_file() (run_cmd.hpp) or run_token_create() (`token create`: one
// Store::token_create, the text printed once).
#pragma once

#include "config.hpp"
#include "runner.hpp"
#include "store_factory.hpp"

namespace genroc {

// Exit codes of the binary.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;	// a runtime failure, or `run`: the instance failed
inline constexpr int kExitUsage = 2;	// bad flags or configuration; nothing was run

// Fills `config` from argv and the environment.  Returns -1 to go on, or
// the exit code to leave with (0 after --help, kExitUsage on an error, whose
// message names the flag and is already printed on stderr).
int parse_command_line(int argc, const char *const *argv, Config &config);

// store_factory(): store_factory.hpp.

// The whole program.
int genroc_main(int argc, const char *const *argv);

}  // namespace genroc
