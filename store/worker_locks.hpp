// worker_locks.hpp — whether the process that registered a worker id is
// alive, for a store kept in a file of its own (the SQLite store): what a
// live PostgreSQL session tells the extension.
//
// A registered worker's store holds an exclusive flock() on a file beside
// the database, one per worker id; the kernel releases it when the process
// dies, however it dies.  So while the lock is held the worker is alive, and
// once it is free the process that held it is gone.  flock (not fcntl)
// because its locks belong to the open file: another store of the same
// process opening and closing the file leaves it held, and a second store of
// the same process asking for it is refused as another process would be.
// Nothing can be told for a database without a folder of its own
// (":memory:", a URI) or when the lock file cannot be opened there.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "engine_store.hpp"

namespace genroc {

class WorkerLocks {
  public:
	// The locks of the database file at db_path.
	explicit WorkerLocks(std::string db_path) : db_path_(std::move(db_path)) {}
	~WorkerLocks();
	WorkerLocks(const WorkerLocks &) = delete;
	WorkerLocks &operator=(const WorkerLocks &) = delete;

	// The workers' host of one registration (EngineStore::worker_host): it
	// tries the worker's lock before the registration reads the row; a
	// holder is alive when another process or this store holds the lock,
	// dead when it was free, unknown without a lock file or a recorded pid.
	// The registration keeps the lock it took (registered()), unless it
	// went through a pooler (the lock was only a probe of the old holder).
	// durability: the store's, recorded on the worker.
	std::unique_ptr<EngineStore::WorkerHost> host(const std::string &worker, const std::string &durability);

	// The worker stopped (or registered through a pooler): its lock is let go.
	void release(const std::string &worker);

  private:
	enum class State { taken, own, held_by_other, unknown };
	struct Try {
		State state = State::unknown;
		int fd = -1;  // set when this try took the lock
	};
	class Host;
	Try try_lock(const std::string &worker);
	std::string path(const std::string &worker) const;

	std::string db_path_;
	std::map<std::string, int> held_;  // worker id -> its locked file
};

}  // namespace genroc
