// engine_store.hpp — a Store that runs the engine (engine/) in its own
// process: each method is one transaction of the concrete store, a port on
// it, the engine's operation, and its result in the Store's types.  The
// concrete store (store/sqlite/: SqliteStore) supplies the transactions and
// what is its own (the workers' host, the clock, how a commit is flushed);
// the settings PostgreSQL keeps per session (durability, log options, the
// ticker's name) are kept here, per store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "admin.hpp"
#include "port.hpp"
#include "report.hpp"
#include "store.hpp"

namespace genroc {

class EngineStore : public Store {
  public:
	// Definitions and aliases (engine/definitions.cpp, engine/aliases.cpp)
	DefineResult define(const std::string &name, const json &definition,
						const std::optional<std::string> &source = std::nullopt) override;
	json list_definitions() override;
	json get_definition(const std::string &name, std::optional<int> version) override;
	void undefine(const std::string &name, std::optional<int> version) override;
	json alias_set(const std::string &name, const std::string &alias, const json &routing,
				   const std::optional<std::string> &description) override;
	void alias_drop(const std::string &name, const std::string &alias) override;
	json get_alias(const std::string &name, const std::string &alias) override;
	json list_aliases(const std::string &name) override;

	// Instances (engine/start.cpp, control.cpp, redrive.cpp, instances.cpp, objects.cpp)
	StartResult start(const std::string &definition, const json &input, const json &options) override;
	std::vector<StartResult> start_many(const std::string &definition, const json &inputs,
										const json &options) override;
	std::string cancel(int64_t id, const std::optional<std::string> &error,
					   const std::optional<std::string> &cause) override;
	std::string retry(int64_t id) override;
	std::string resume(int64_t id, const json &output) override;
	std::string redrive(int64_t id, const std::optional<std::string> &client_token) override;
	json get_instance(int64_t id, bool refs) override;
	json list_instances(const json &filter) override;
	json history(int64_t id, bool refs) override;
	json get_object(const std::string &ref) override;

	// Workers and leases (engine/workers.cpp, claim.cpp, control.cpp, report.cpp, many.cpp)
	json worker_register(const std::string &worker, const json &options) override;
	json worker_heartbeat(const std::string &worker) override;
	json worker_drain(const std::string &worker) override;
	void worker_stop(const std::string &worker) override;
	json list_workers() override;
	std::optional<int64_t> claim_wake(const std::vector<std::string> &queues) override;
	std::vector<Task> claim(const std::string &worker, const std::vector<std::string> &queues, int n) override;
	std::vector<int64_t> renew(const std::string &worker, const std::vector<int64_t> &instance_ids) override;
	void release(const std::string &worker, const std::vector<int64_t> &instance_ids) override;
	std::string complete(int64_t id, int64_t epoch, const json &output) override;
	std::string fail(int64_t id, int64_t epoch, const std::string &error, const std::string &cause) override;
	Report complete_and_claim(int64_t id, int64_t epoch, const json &output, const std::string &worker,
							  const std::vector<std::string> &queues) override;
	Report fail_and_claim(int64_t id, int64_t epoch, const std::string &error, const std::string &cause,
						  const std::string &worker, const std::vector<std::string> &queues) override;
	std::vector<Outcome> complete_many(const std::vector<Completion> &reports, const std::string &worker,
									   const std::vector<std::string> &queues) override;

	// Activities and events (engine/control.cpp, callbacks.cpp)
	std::vector<ActivityTask> claim_activity(const std::string &activity, const std::string &worker, int n) override;
	std::string activity_succeed(const std::string &token, const json &output) override;
	std::string activity_fail(const std::string &token, const std::string &error, const std::string &cause) override;
	void activity_heartbeat(const std::string &token) override;
	std::string emit(int64_t id, const std::string &name, const json &payload) override;

	// Queues, tokens, roles, figures (engine/queues.cpp, tokens.cpp, metrics.cpp)
	json queue_set(const std::string &name, const json &options) override;
	void queue_drop(const std::string &name) override;
	json list_queues() override;
	json token_create(const std::string &name, const std::vector<std::string> &permissions,
					  const std::string &created_by, const std::optional<std::string> &token_text) override;
	json token_verify(const std::string &token) override;
	json token_list() override;
	void token_revoke(const std::string &id) override;
	json capabilities() override;
	json metrics(int max_definitions) override;
	json tickers() override;

	// Time and retention (engine/tick.cpp, retention.cpp) and this store's settings
	json tick(int limit) override;
	json prune(int64_t log_retention_ms, int64_t instance_retention_ms, int limit) override;
	void set_ticked_by(const std::string &name) override { ticked_by_ = name; }
	void set_log_options(const LogOptions &options) override { log_options_ = options; }
	void set_durability(DurabilityLevel level) override { level_ = level; }
	DurabilityLevel durability() override { return level_; }

	// The workers' host (engine::WorkerHost) for one worker_register of a
	// worker, inside its transaction (worker_host).  registered(): the
	// engine's registration returned; what the host took to tell the
	// worker's liveness is kept then, and let go when the host ends without.
	class WorkerHost : public engine::WorkerHost {
	  public:
		virtual void registered() {}
	};

  protected:
	// Why a commit may have to reach the disk (genroc._flush_commit's classes).
	enum class Commit { outside, only_once_claim, only_once_report, terminal, progress };

	// Whether a commit of class c is flushed before it is confirmed at this
	// store's level (as genroc._flush_commit maps them).
	bool flushes(Commit c) const;

	// What the concrete store supplies.  run_write: body in one write
	// transaction whose commit is of class c; run_read: body in one read
	// snapshot.  Each rolls back on any exception, so an error changes
	// nothing (as a failed SQL function); the port's clock is fixed for the
	// transaction, and the statements only the store answers (its own state) reach it.
	using Body = std::function<void(engine::Port &)>;
	virtual void run_write(Commit c, const Body &body) = 0;
	virtual void run_read(const Body &body) = 0;

	virtual std::unique_ptr<WorkerHost> worker_host(const std::string &worker) = 0;
	// After worker_stop committed: the id is free.
	virtual void worker_stopped(const std::string &) {}

	// The statements without SQLite text, whose answer is this store's own
	// state: the settings kept here (retention, who ticks), a time option's
	// parse, a commit found inside the transaction to be of a class that may
	// need a flush (flush_on_commit); std::nullopt for any other.  The
	// concrete store's port hands them here.
	std::optional<engine::Rows> store_answer(engine::Stmt s, engine::Params params);
	virtual void flush_on_commit(Commit c) = 0;

	// The engine's task handed to a worker as the Store's Task.
	static Task task_of(engine::HandedBack b);

	DurabilityLevel level_ = DurabilityLevel::essential;
	LogOptions log_options_;
	std::string ticked_by_;	 // set_ticked_by

  private:
	template <typename F>
	auto write(Commit c, F &&f) -> std::invoke_result_t<F, engine::Port &> {
		using R = std::invoke_result_t<F, engine::Port &>;
		if constexpr (std::is_void_v<R>) {
			run_write(c, [&f](engine::Port &port) { f(port); });
		} else {
			std::optional<R> r;
			run_write(c, [&f, &r](engine::Port &port) { r.emplace(f(port)); });
			return std::move(*r);
		}
	}
	template <typename F>
	auto read(F &&f) -> std::invoke_result_t<F, engine::Port &> {
		std::optional<std::invoke_result_t<F, engine::Port &>> r;
		run_read([&f, &r](engine::Port &port) { r.emplace(f(port)); });
		return std::move(*r);
	}
	static Report report_of(engine::ReportResult r);
};

}  // namespace genroc
