// sqlite_db.cpp — the SQLite plumbing under the shim: open, prepare, bind,
// step, transactions, and SQLite result codes mapped to SQLSTATEs.
#include "sqlite_db.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace genroc::sqlite {

void raise(sqlite3 *db, int rc, std::string_view what) {
	std::string msg = std::string(what) + ": " +
					  (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	switch (rc & 0xff) {
		// Another process held the write lock for longer than busy_timeout.
		case SQLITE_BUSY:
		case SQLITE_LOCKED: throw Error("55P03", msg);
		case SQLITE_CANTOPEN:
		case SQLITE_NOTADB: throw Error("08006", msg);
		// The disk (or the file's size limit) is full: class 53, as
		// PostgreSQL's disk_full, so it is a 503 (try again) over HTTP.
		case SQLITE_FULL: throw Error("53100", msg);
		case SQLITE_IOERR:
		case SQLITE_CORRUPT: throw Error("58030", msg);
		case SQLITE_CONSTRAINT: throw Error("23505", msg);
		// The file (or its directory) cannot be written: a write through a
		// store opened on a read-only file.
		case SQLITE_READONLY: {
			const char *file = db ? sqlite3_db_filename(db, "main") : nullptr;
			throw Error("25006",
						"SQLite database \"" + std::string(file ? file : "") + "\" is read-only: " +
							(db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)),
						"",
						"Writing needs write permission on the file, its -wal and -shm files and its directory; "
						"reading commands (genctl instances, logs, definitions, workers, queues) open it read-only.");
		}
		default: throw Error("XX000", msg);
	}
}

bool WriteTurns::acquire(unsigned lane, std::chrono::milliseconds timeout) {
	std::unique_lock<std::mutex> g(m_);
	lane %= kLanes;
	if (!held_) {  // free, so no one waits
		held_ = true;
		last_ = lane;
		return true;
	}
	Waiter me;
	auto &queue = waiting_[lane];
	queue.push_back(&me);
	if (me.cv.wait_for(g, timeout, [&] { return me.granted; })) return true;
	// gave up: leave the queue, so no turn is handed to this waiter
	for (auto it = queue.begin(); it != queue.end(); ++it)
		if (*it == &me) {
			queue.erase(it);
			break;
		}
	return false;
}

void WriteTurns::release() {
	std::lock_guard<std::mutex> g(m_);
	for (unsigned i = 1; i <= kLanes; ++i) {
		const unsigned lane = (last_ + i) % kLanes;
		if (waiting_[lane].empty()) continue;
		Waiter *w = waiting_[lane].front();
		waiting_[lane].pop_front();
		w->granted = true;
		last_ = lane;
		// under the lock: the waiter (on its own stack) cannot return
		// before this notify is done
		w->cv.notify_one();
		return;
	}
	held_ = false;
}

size_t WriteTurns::waiting(unsigned lane) {
	std::lock_guard<std::mutex> g(m_);
	return waiting_[lane % kLanes].size();
}

std::shared_ptr<WriteTurns> WriteTurns::for_file(const std::string &path) {
	static std::mutex registry_mutex;
	static std::map<std::string, std::weak_ptr<WriteTurns>> registry;
	std::string key = path;
	// ":memory:" and URIs stay as written; a file is known by its real path.
	if (path != ":memory:" && path.rfind("file:", 0) != 0) {
		std::error_code ec;
		auto canonical = std::filesystem::weakly_canonical(path, ec);
		if (!ec) key = canonical.string();
	}
	std::lock_guard<std::mutex> g(registry_mutex);
	auto &slot = registry[key];
	auto turns = slot.lock();
	if (!turns) {
		turns = std::make_shared<WriteTurns>();
		slot = turns;
	}
	return turns;
}

// The name to give sqlite3_open_v2 for path, after the guards against a
// planted symbolic link.  The file holds inputs, outputs and token hashes;
// another user who may write its folder (a shared /tmp) could put a link
// there to a file of their choosing, which SQLite would follow: its
// creation then made the target (0644), or overwrote an empty victim.  So:
// - a path whose last component is a symbolic link is refused (42501,
//   naming the path), whether the link leads anywhere or not;
// - a missing file is created here, empty and mode 0600 (before the umask),
//   with O_EXCL | O_NOFOLLOW (a link planted meanwhile fails the create,
//   and is refused as above); SQLite would make it 0644, and makes the
//   -wal, -shm and journal files with the main file's mode (its unix VFS
//   copies it), so this one mode covers them all; it opens each of those
//   with O_NOFOLLOW itself;
// - a file already there keeps its mode (the owner's choice);
// - the folder part is resolved here (realpath: its links are the owner's
//   choice), and SQLite gets the resolved name with SQLITE_OPEN_NOFOLLOW,
//   which refuses a link anywhere in it: one swapped in at the last
//   component after the checks above.
// Names SQLite does not take as a file path (":memory:", "", a file: URI)
// are left alone.
static std::string guarded_name(const std::string &path, bool read_only) {
	if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return path;
	auto refuse = [&] {
		throw Error("42501", "SQLite database \"" + path + "\" is a symbolic link; genroc opens no database through one",
					"",
					"Give the path of the database file itself. A link in its place may have been put there by another "
					"user who may write that folder.");
	};
	struct stat st;
	if (::lstat(path.c_str(), &st) == 0) {
		if (S_ISLNK(st.st_mode)) refuse();
	} else if (errno == ENOENT && !read_only) {
		int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) ::close(fd);
		else if ((errno == EEXIST || errno == ELOOP) && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
			refuse();
		// any other failure, sqlite3_open_v2 reports
	}
	const auto slash = path.rfind('/');
	const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
	const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
	char resolved[PATH_MAX];
	if (base.empty() || !::realpath(dir.c_str(), resolved)) return path;  // SQLite reports what is wrong
	const std::string folder = resolved;
	return (folder == "/" ? "" : folder) + "/" + base;
}

// A file: URI of path with immutable=1 (RFC 3986 escapes for what a URI
// path cannot hold as itself).
static std::string immutable_uri(const std::string &path) {
	std::string uri = "file:";
	static const char *hex = "0123456789ABCDEF";
	for (unsigned char c : path) {
		if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
			uri += static_cast<char>(c);
		} else {
			uri += '%';
			uri += hex[c >> 4];
			uri += hex[c & 15];
		}
	}
	return uri + "?immutable=1";
}

Db::Db(const std::string &path, bool read_only, bool immutable, unsigned lane)
	: turns_(WriteTurns::for_file(path)), lane_(lane) {
	const std::string guarded = guarded_name(path, read_only);
	sqlite3 *h = nullptr;
	const std::string name = read_only && immutable ? immutable_uri(guarded) : guarded;
	const bool is_file = !(path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0);
	int rc = sqlite3_open_v2(name.c_str(), &h,
							 (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
								 SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0) |
								 (is_file ? SQLITE_OPEN_NOFOLLOW : 0),
							 nullptr);
	db_.reset(h);
	if (rc != SQLITE_OK && h && sqlite3_extended_errcode(h) == SQLITE_CANTOPEN_SYMLINK) {
		// a link swapped in after guarded_name looked
		db_.reset();
		throw Error("42501", "SQLite database \"" + path + "\" is a symbolic link; genroc opens no database through one");
	}
	if (rc != SQLITE_OK) raise(h, rc, "cannot open SQLite database \"" + path + "\"");
	// Several processes may share the file: wait for the writer instead of
	// failing at once.
	sqlite3_busy_timeout(h, kBusyTimeoutMs);
	sqlite3_extended_result_codes(h, 1);
#ifdef __APPLE__
	// On macOS fsync() returns before the drive has emptied its own cache;
	// F_FULLFSYNC waits for it (production guide, "Making sure data reach
	// the disk").
	exec("PRAGMA fullfsync=ON");
	exec("PRAGMA checkpoint_fullfsync=ON");
#endif
}

void Db::exec(const char *sql) {
	char *err = nullptr;
	int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err);
	if (rc != SQLITE_OK) {
		std::string m = err ? err : sqlite3_errstr(rc);
		sqlite3_free(err);
		// a read-only file: raise names it (it needs the handle)
		raise((rc & 0xff) == SQLITE_READONLY ? db_.get() : nullptr, rc, m);
	}
}

sqlite3_stmt *Db::prepare(const char *sql, StmtPtr &own) {
	auto it = cache_.find(sql);
	// a cached statement still stepping belongs to a Query further up the
	// stack (the same SQL run again inside its loop): this one gets its own
	if (it != cache_.end() && !sqlite3_stmt_busy(it->second.get())) return it->second.get();
	sqlite3_stmt *s = nullptr;
	int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
	if (rc != SQLITE_OK) raise(db_.get(), rc, "prepare");
	if (it != cache_.end()) {
		own.reset(s);
		return s;
	}
	cache_.emplace(sql, StmtPtr(s));
	return s;
}

void Db::begin_immediate(Durability d) {
	if (sync_ != d) {
		// NORMAL in WAL mode never corrupts the file; FULL also makes the
		// commit survive a power loss.  OFF is never used: a crash could corrupt
		// the file, which no durability level allows.
		exec(d == Durability::full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
		sync_ = d;
	}
	if (!turns_->acquire(lane_, std::chrono::milliseconds(kBusyTimeoutMs)))
		throw Error("55P03", "cannot begin a write: other writers of this process held the database for " +
								 std::to_string(kBusyTimeoutMs / 1000) + "s");
	my_turn_ = true;
	try {
		run_cached("BEGIN IMMEDIATE");
	} catch (...) {
		end_turn();
		throw;
	}
}

void Db::end_turn() noexcept {
	if (my_turn_) {
		my_turn_ = false;
		turns_->release();
	}
}

void Db::commit() {
	run_cached("COMMIT");
	end_turn();
}

// A statement without parameters or rows through the statement cache (BEGIN
// and COMMIT on every write: sqlite3_exec would compile them each time).
void Db::run_cached(const char *sql) {
	StmtPtr own;
	sqlite3_stmt *s = prepare(sql, own);
	const int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		try {
			raise(db_.get(), rc, sql);	// its message, before reset
		} catch (...) {
			sqlite3_reset(s);
			throw;
		}
	}
	sqlite3_reset(s);
}

void Db::sync_wal() {
	// In WAL mode the journal file is the WAL; every commit so far is in it,
	// in order, so one sync makes them all durable.
	sqlite3_file *wal = nullptr;
	int rc = sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc != SQLITE_OK) raise(db_.get(), rc, "cannot reach the WAL file to flush it");
	if (wal == nullptr || wal->pMethods == nullptr) return;	// nothing written yet
#ifdef __APPLE__
	const int flags = SQLITE_SYNC_FULL;
#else
	const int flags = SQLITE_SYNC_NORMAL;
#endif
	rc = wal->pMethods->xSync(wal, flags);
	if (rc != SQLITE_OK) raise(db_.get(), rc, "cannot flush the WAL file");
}

void Db::rollback() noexcept {
	if (!sqlite3_get_autocommit(db_.get())) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
	end_turn();
}

bool Query::next() {
	int rc = sqlite3_step(s_);
	if (rc == SQLITE_ROW) return true;
	if (rc == SQLITE_DONE) return false;
	raise(db_.handle(), rc, "SQLite statement failed");
}

void Query::run() {
	while (next()) {
	}
}

std::string Query::text(int col) const {
	const unsigned char *p = sqlite3_column_text(s_, col);
	int n = sqlite3_column_bytes(s_, col);
	return p ? std::string(reinterpret_cast<const char *>(p), n) : std::string();
}

json Query::js(int col) const {
	if (is_null(col)) return nullptr;
	return json::parse(text(col));
}

void Query::bind(int i, std::nullopt_t) { sqlite3_bind_null(s_, i); }
void Query::bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
void Query::bind(int i, const std::string &v) {
	sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

}  // namespace genroc::sqlite
