// sync_vfs.hpp — SQLite's default VFS with hooks on file syncs and deletes,
// for the durability tests: flush_test counts syncs (a commit was flushed iff
// a sync happened during it), fencing_test keeps each file as of its last
// sync (what a power cut may leave).  Files keep their real objects; only
// their method table is swapped for one whose xSync calls the hook.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>

namespace genroc::durability_test {

struct SyncHooks {
	// After a successful xSync of `file`, opened under `path`; `real` is the
	// file's own method table (to read what was synced).
	std::function<void(sqlite3_file *file, const sqlite3_io_methods *real, const std::string &path)> after_sync;
	// After xDelete of `path`.
	std::function<void(const std::string &path)> after_delete;
};

// Makes the hooked VFS the default, so the store's sqlite3_open_v2 uses it.
// Once per process: the first call's hooks stay.
void install_sync_vfs(SyncHooks hooks);

}  // namespace genroc::durability_test
