// sqlite_store.hpp — the SQLite shim's entry point: the engine on one file.
#pragma once

#include <memory>
#include <string>

#include "store.hpp"

namespace genroc {

// Opens (creating it, mode 0600, and its schema when missing) the SQLite
// database at `path` in WAL mode and returns the Store that runs the engine
// on it.  read_only: opens an existing file for reading only (it may be
// read-only on disk); its schema must be this version's; a write through
// the store is 25006.  lane: its writes' lane in the file's write turns
// (sqlite_db.hpp, WriteTurns).
std::unique_ptr<Store> open_sqlite_store(const std::string &path, bool read_only = false,
										 WriteLane lane = WriteLane::general);

// For a process whose SQLite use is genroc's alone (the genroc binary, the
// benchmark), called before its first open: turns off SQLite's memory
// statistics (SQLITE_CONFIG_MEMSTATUS), which take a process-wide mutex on
// every allocation SQLite makes.  A library embedding the shim in another
// program does not call it (the setting is the whole process's).  False
// when SQLite was already initialized (the setting then stays as it was).
bool sqlite_process_setup();

}  // namespace genroc
