// sqlite_store.hpp — the SQLite store's entry point: the engine on one file.
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

// sqlite_process_setup() (store.hpp): called once per process before the
// first open.

}  // namespace genroc
