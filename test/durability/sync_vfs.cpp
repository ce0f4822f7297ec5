// sync_vfs.cpp — the hooked VFS of sync_vfs.hpp.
#include "sync_vfs.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace genroc::durability_test {
namespace {

sqlite3_vfs *g_real_vfs = nullptr;
sqlite3_vfs g_vfs;
SyncHooks g_hooks;

// One patched copy of each method table the real VFS hands out.
struct Patched {
	const sqlite3_io_methods *orig;
	sqlite3_io_methods methods;
};
std::mutex g_patched_mutex;
std::vector<std::unique_ptr<Patched>> g_patched;
std::map<const sqlite3_file *, std::string> g_paths;

int hooked_sync(sqlite3_file *f, int flags) {
	const Patched *p = nullptr;
	std::string path;
	{
		std::lock_guard<std::mutex> lock(g_patched_mutex);
		for (auto &q : g_patched)
			if (&q->methods == f->pMethods) p = q.get();
		auto it = g_paths.find(f);
		if (it != g_paths.end()) path = it->second;
	}
	int rc = p->orig->xSync(f, flags);
	if (rc == SQLITE_OK && g_hooks.after_sync) g_hooks.after_sync(f, p->orig, path);
	return rc;
}

int hooked_open(sqlite3_vfs *, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
	int rc = g_real_vfs->xOpen(g_real_vfs, name, file, flags, out_flags);
	if (rc != SQLITE_OK || file->pMethods == nullptr) return rc;
	std::lock_guard<std::mutex> lock(g_patched_mutex);
	Patched *found = nullptr;
	for (auto &p : g_patched)
		if (p->orig == file->pMethods) found = p.get();
	if (!found) {
		auto p = std::make_unique<Patched>();
		p->orig = file->pMethods;
		p->methods = *file->pMethods;
		p->methods.xSync = hooked_sync;
		found = p.get();
		g_patched.push_back(std::move(p));
	}
	file->pMethods = &found->methods;
	g_paths[file] = name ? name : "";	// a file object's memory may come back for another file
	return rc;
}

int hooked_delete(sqlite3_vfs *, const char *name, int sync_dir) {
	int rc = g_real_vfs->xDelete(g_real_vfs, name, sync_dir);
	if (g_hooks.after_delete) g_hooks.after_delete(name ? name : "");
	return rc;
}

}  // namespace

void install_sync_vfs(SyncHooks hooks) {
	static std::once_flag once;
	std::call_once(once, [&] {
		g_hooks = std::move(hooks);
		g_real_vfs = sqlite3_vfs_find(nullptr);
		g_vfs = *g_real_vfs;
		g_vfs.zName = "genroc-sync-hooked";
		g_vfs.pNext = nullptr;
		g_vfs.xOpen = hooked_open;
		g_vfs.xDelete = hooked_delete;
		if (sqlite3_vfs_register(&g_vfs, 1) != SQLITE_OK) throw std::runtime_error("cannot register the hooked VFS");
	});
}

}  // namespace genroc::durability_test
