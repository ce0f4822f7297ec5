// worker_locks.cpp — the workers' lock files (worker_locks.hpp).
#include "worker_locks.hpp"

#include <openssl/evp.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "digest.hpp"

namespace genroc {

class WorkerLocks::Host final : public EngineStore::WorkerHost {
  public:
	Host(WorkerLocks &locks, const std::string &worker, const std::string &durability)
		: locks_(locks), worker_(worker), durability_(durability), lock_(locks.try_lock(worker)) {}
	~Host() override {
		if (lock_.fd >= 0) ::close(lock_.fd);
	}
	std::optional<bool> holder_alive(const std::string &, const engine::Row &held) override {
		if (lock_.state == State::held_by_other || lock_.state == State::own) return true;
		if (held.is_null(3) || lock_.state == State::unknown) return std::nullopt;
		return false;
	}
	std::optional<int64_t> session(bool pooled) override {
		pooled_ = pooled;
		if (pooled || (lock_.state != State::taken && lock_.state != State::own)) return std::nullopt;
		return static_cast<int64_t>(::getpid());
	}
	std::string durability() override { return durability_; }
	void registered() override {
		if (pooled_) {
			locks_.release(worker_);
		} else if (lock_.fd >= 0) {
			locks_.held_[worker_] = lock_.fd;
			lock_.fd = -1;
		}
	}

  private:
	WorkerLocks &locks_;
	std::string worker_, durability_;
	Try lock_;
	bool pooled_ = false;
};

WorkerLocks::~WorkerLocks() {
	for (auto &[_, fd] : held_) ::close(fd);
}

std::unique_ptr<EngineStore::WorkerHost> WorkerLocks::host(const std::string &worker, const std::string &durability) {
	return std::make_unique<Host>(*this, worker, durability);
}

void WorkerLocks::release(const std::string &worker) {
	auto it = held_.find(worker);
	if (it == held_.end()) return;
	::close(it->second);
	held_.erase(it);
}

std::string WorkerLocks::path(const std::string &worker) const {
	if (db_path_.empty() || db_path_ == ":memory:" || db_path_.rfind("file:", 0) == 0) return "";
	const std::optional<std::string> h = digest_hex(EVP_sha256(), worker);
	if (!h) throw Error("XX000", "sha256: the digest failed");
	return db_path_ + "-worker-" + h->substr(0, 32) + ".lock";
}

WorkerLocks::Try WorkerLocks::try_lock(const std::string &worker) {
	Try t;
	if (held_.count(worker)) {
		t.state = State::own;  // this store's registration, alive
		return t;
	}
	const std::string p = path(worker);
	if (p.empty()) return t;
	// 0600 and never through a link: another user who could open it could
	// flock it and keep the worker from starting again.  One left by an
	// older version (0644) is made 0600 when it is ours.
	int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) return t;
	struct stat st;
	if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		::close(fd);
		return t;
	}
	if (st.st_uid == ::geteuid() && (st.st_mode & 077)) ::fchmod(fd, 0600);
	if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
		t.state = State::taken;
		t.fd = fd;
		return t;
	}
	const int err = errno;
	::close(fd);
	if (err == EWOULDBLOCK) t.state = State::held_by_other;
	return t;
}

}  // namespace genroc
