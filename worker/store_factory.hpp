// store_factory.hpp — how every command of the genroc binary (worker, serve,
// api, run, token) opens its stores: --database with --durability, the log
// options and --pg-commit-delay applied.  Below the command line (cli.cpp)
// and `genroc run` (run_cmd.cpp), which both use it.
#pragma once

#include "config.hpp"
#include "runner.hpp"

namespace genroc {

// Opens the --database store with --durability and --pg-commit-delay applied;
// lane: the worker's stores take WriteLane::worker (fair turns on SQLite).
StoreFactory store_factory(const Config &config, WriteLane lane = WriteLane::general);

}  // namespace genroc
