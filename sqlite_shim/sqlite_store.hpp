// sqlite_store.hpp — the SQLite shim's entry point: the engine on one file.
#pragma once

#include <memory>
#include <string>

#include "store.hpp"

namespace genroc {

// Opens (creating it and its schema when missing) the SQLite database at
// `path` in WAL mode and returns the Store that runs the engine on it.
std::unique_ptr<Store> open_sqlite_store(const std::string &path);

}  // namespace genroc
