// engine_port.cpp — the port over SPI (engine_spi.h), and the engine's operations
// as the C functions the module's entry points call (engine_calls.h).
//
// Each PostgreSQL call goes through engine_spi.c, which catches PostgreSQL's
// error inside PG_TRY and returns it; here it becomes a genroc::Error with
// the same SQLSTATE, message, detail and hint.  The C functions at the
// bottom catch every exception and hand it back as a GenrocEngineError, so
// neither a longjmp nor a C++ exception crosses between the two languages.
#include <cstdlib>
#include <cstring>
#include <new>

#include "admin.hpp"
#include "callbacks.hpp"
#include "aliases.hpp"
#include "engine.hpp"
#include "engine/metrics.hpp"
#include "objects.hpp"
#include "tokens.hpp"
#include "redrive.hpp"
#include "engine_calls.h"
#include "errors.hpp"
#include "engine_spi.h"

namespace genroc::engine {

namespace {

[[noreturn]] void rethrow(const GenrocPgError &e) {
	throw Error(e.sqlstate, e.message ? e.message : "PostgreSQL failed", e.detail ? e.detail : "",
				e.hint ? e.hint : "");
}

class PgPort final : public Port {
  public:
	// read_only: the entry point is STABLE (SPI's read_only)
	explicit PgPort(bool read_only) : read_only_(read_only) {}
	Dialect dialect() const override { return Dialect::postgres; }

	Rows query(Stmt s, Params params) override { return run(s, params, true).second; }
	int64_t exec(Stmt s, Params params) override {
		if (!statement_text(s).postgres) return 0;
		return run(s, params, false).first;
	}

	int64_t now_ms() override {
		int64_t ms = 0;
		GenrocPgError e{};
		if (!genroc_pg_now_ms(&ms, &e)) rethrow(e);
		return ms;
	}

	std::string canonical_json(const std::string &text) override {
		char *out = nullptr;
		GenrocPgError e{};
		if (!genroc_pg_canonical_json(text.c_str(), &out, &e)) rethrow(e);
		return out;	 // palloc'd: freed with the SPI call's memory
	}

  protected:
	void savepoint_begin() override {
		GenrocPgError e{};
		if (!genroc_pg_savepoint_begin(&e)) rethrow(e);
	}
	void savepoint_release() override {
		GenrocPgError e{};
		if (!genroc_pg_savepoint_release(&e)) rethrow(e);
	}
	void savepoint_rollback() noexcept override {
		GenrocPgError e{};
		// a failed rollback leaves the transaction aborted: the entry point's
		// error ends it
		(void)genroc_pg_savepoint_rollback(&e);
	}

  private:
	std::pair<int64_t, Rows> run(Stmt s, Params params, bool want_rows) {
		const StatementText &t = statement_text(s);
		if (!t.postgres) throw Error("XX000", std::string("engine: statement ") + t.id + " has no PostgreSQL text");
		std::vector<GenrocPgParam> ps;
		ps.reserve(params.size());
		for (const Param &p : params) {
			GenrocPgParam g{};
			g.kind = static_cast<int>(p.kind());
			g.is_null = p.is_null();
			g.i = p.i64();
			g.d = p.f64();
			g.text = p.text().c_str();
			g.len = p.text().size();
			ps.push_back(g);
		}
		GenrocPgRows rows{};
		GenrocPgError e{};
		if (!genroc_pg_run(static_cast<int>(s), statement_count(), t.postgres, static_cast<int>(ps.size()),
						   ps.data(), read_only_, want_rows, &rows, &e))
			rethrow(e);
		Rows out;
		try {
			out.reserve(rows.nrows);
			for (int r = 0; r < rows.nrows; r++) {
				std::vector<std::optional<std::string>> cells;
				cells.reserve(rows.ncols);
				for (int k = 0; k < rows.ncols; k++) {
					const char *c = rows.cells[r * rows.ncols + k];
					cells.push_back(c ? std::optional<std::string>(c) : std::nullopt);
				}
				out.emplace_back(std::move(cells));
			}
		} catch (...) {
			genroc_pg_rows_free(&rows);
			throw;
		}
		genroc_pg_rows_free(&rows);
		return {rows.processed, std::move(out)};
	}

	bool read_only_;
};

static_assert(static_cast<int>(Param::Kind::i64) == GENROC_PG_INT8);
static_assert(static_cast<int>(Param::Kind::f64) == GENROC_PG_FLOAT8);
static_assert(static_cast<int>(Param::Kind::text) == GENROC_PG_TEXT);
static_assert(static_cast<int>(Param::Kind::boolean) == GENROC_PG_BOOL);
static_assert(static_cast<int>(Param::Kind::json) == GENROC_PG_JSONB);

char *dup(const std::string &s) {
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (!p) throw std::bad_alloc();
	std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}


void fail(GenrocEngineError *err, const char *sqlstate, const char *message, const std::string &detail = {},
		  const std::string &hint = {}) noexcept {
	std::memset(err, 0, sizeof *err);
	std::strncpy(err->sqlstate, sqlstate, 5);
	err->sqlstate[5] = '\0';
	err->message = strdup(message);
	if (!detail.empty()) err->detail = strdup(detail.c_str());
	if (!hint.empty()) err->hint = strdup(hint.c_str());
}

// Runs body; every exception becomes *err (and 0).
template <typename F>
int guarded(GenrocEngineError *err, F body) noexcept {
	try {
		body();
		return 1;
	} catch (const Error &e) {
		fail(err, e.sqlstate.size() == 5 ? e.sqlstate.c_str() : "XX000", e.what(), e.detail, e.hint);
	} catch (const std::bad_alloc &) {
		fail(err, "53200", "out of memory in the genroc engine");
	} catch (const std::exception &e) {
		fail(err, "XX000", e.what());
	} catch (...) {
		fail(err, "XX000", "unknown exception in the genroc engine");
	}
	return 0;
}

std::optional<std::string> arg(const char *s) { return s ? std::optional<std::string>(s) : std::nullopt; }

// The workers' host in PostgreSQL: the lapse path is genroc._interrupt's,
// a holder's liveness its session's (WORKER_FOR_REGISTER asks
// genroc._session_alive), and the statements record the session and the
// durability themselves.
class PgWorkerHost final : public WorkerHost {
  public:
	explicit PgWorkerHost(Port &port) : port_(port) {}
	void interrupt(int64_t instance, const std::string &reason) override {
		port_.exec(Stmt::INTERRUPT, {instance, reason});
	}
	std::optional<bool> holder_alive(const std::string &, const Row &held) override {
		return held.is_null(4) ? std::nullopt : std::optional<bool>(held.boolean(4));
	}
	std::optional<int64_t> session(bool) override { return std::nullopt; }
	std::string durability() override { return {}; }

  private:
	Port &port_;
};

// The queues' host in PostgreSQL: partition slots and routing are still
// PL/pgSQL's (genroc._fill_slots, genroc._reroute_handler).
class PgQueueHost final : public QueueHost {
  public:
	explicit PgQueueHost(Port &port) : port_(port) {}
	void fill_slots(const std::string &queue, const std::string &partition) override {
		port_.exec(Stmt::FILL_SLOTS, {queue, partition});
	}
	void reroute_handler(const std::string &handler) override { port_.exec(Stmt::REROUTE_HANDLER, {handler}); }

  private:
	Port &port_;
};

char *dup_or_null(const std::optional<std::string> &s) { return s ? dup(*s) : nullptr; }

}  // namespace

}  // namespace genroc::engine

using namespace genroc::engine;

extern "C" int genroc_engine_define(const char *name, const char *definition, int as_written, GenrocDefined *out,
									GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		Defined d = define(port, arg(name), arg(definition), as_written != 0);
		out->name = dup(d.name);
		out->version = d.version;
		out->is_new = d.is_new;
	});
}

extern "C" int genroc_engine_list_definitions(GenrocDefinitionRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	const int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = list_definitions(port);
		auto *out = static_cast<GenrocDefinitionRow *>(std::calloc(list.size() + 1, sizeof(GenrocDefinitionRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &d : list) {
			out[*n].name = dup(d.name);
			out[*n].version = d.version;
			out[*n].created_us = d.created_us;
			(*n)++;
		}
	});
	if (!ok) {
		for (int k = 0; k < *n; k++) std::free((*rows)[k].name);
		std::free(*rows);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" int genroc_engine_get_definition(const char *name, int has_version, int64_t version, char **json,
											GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(get_definition(port, arg(name), has_version ? std::optional<int64_t>(version) : std::nullopt));
	});
}

extern "C" int genroc_engine_token_create(const char *name, const char *const *permissions, int npermissions,
										  const char *created_by, const char *secret, char **json,
										  GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		std::optional<std::vector<std::optional<std::string>>> perms;
		if (permissions) {
			perms.emplace();
			for (int k = 0; k < npermissions; k++) perms->push_back(arg(permissions[k]));
		}
		*json = dup(token_create(port, arg(name), perms, arg(created_by), arg(secret)));
	});
}

extern "C" int genroc_engine_token_verify(const char *token, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		if (auto j = token_verify(port, arg(token))) *json = dup(*j);
	});
}

extern "C" int genroc_engine_token_list(char ***rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = token_list(port);
		auto **out = static_cast<char **>(std::calloc(list.size() + 1, sizeof(char *)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &t : list) out[(*n)++] = dup(t);
	});
	if (!ok) {
		for (int k = 0; k < *n; k++) std::free((*rows)[k]);
		std::free(*rows);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" int genroc_engine_token_revoke(const char *id, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		token_revoke(port, arg(id));
	});
}

extern "C" int genroc_engine_queue_stats(GenrocQueueStatRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = queue_stats(port);
		auto *out = static_cast<GenrocQueueStatRow *>(std::calloc(list.size() + 1, sizeof(GenrocQueueStatRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &q : list) {
			GenrocQueueStatRow &r = out[*n];
			r.queue = dup(q.queue);
			(*n)++;
			r.ready = q.ready;
			r.oldest_ready_s = std::strtod(q.oldest_ready_s.c_str(), nullptr);
			r.queued = q.queued;
			r.running = q.running;
			r.workers = q.workers;
		}
	});
	if (!ok) {
		genroc_engine_free_queue_stats(*rows, *n);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" void genroc_engine_free_queue_stats(GenrocQueueStatRow *rows, int n) {
	for (int k = 0; rows && k < n; k++) std::free(rows[k].queue);
	std::free(rows);
}

extern "C" int genroc_engine_metrics(int has_max, int64_t max_definitions, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(metrics(port, has_max ? std::optional<int64_t>(max_definitions) : std::nullopt));
	});
}

extern "C" int genroc_engine_tickers(GenrocTickerRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = tickers(port);
		auto *out = static_cast<GenrocTickerRow *>(std::calloc(list.size() + 1, sizeof(GenrocTickerRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &t : list) {
			GenrocTickerRow &r = out[*n];
			(*n)++;
			r.ticked_by = dup(t.ticked_by);
			r.kind = dup(t.kind);
			r.role = dup(t.role);
			r.first_tick_us = t.first_tick_us;
			r.last_tick_us = t.last_tick_us;
			r.ago_ms = t.ago_ms;
			r.ticks = t.ticks;
		}
	});
	if (!ok) {
		genroc_engine_free_tickers(*rows, *n);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" void genroc_engine_free_tickers(GenrocTickerRow *rows, int n) {
	for (int k = 0; rows && k < n; k++) {
		std::free(rows[k].ticked_by);
		std::free(rows[k].kind);
		std::free(rows[k].role);
	}
	std::free(rows);
}

extern "C" int genroc_engine_get_object(const char *ref, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(get_object(port, arg(ref)));
	});
}

extern "C" int genroc_engine_worker_register(const char *worker, const char *options, char **json,
											 GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		PgWorkerHost host(port);
		*json = dup(worker_register(port, host, arg(worker), arg(options)));
	});
}

extern "C" int genroc_engine_worker_heartbeat(const char *worker, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(worker_heartbeat(port, arg(worker)));
	});
}

extern "C" int genroc_engine_worker_drain(const char *worker, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(worker_drain(port, arg(worker)));
	});
}

extern "C" int genroc_engine_worker_stop(const char *worker, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		PgWorkerHost host(port);
		worker_stop(port, host, arg(worker));
	});
}

extern "C" int genroc_engine_list_workers(GenrocWorkerRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	const int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = list_workers(port);
		auto *out = static_cast<GenrocWorkerRow *>(std::calloc(list.size() + 1, sizeof(GenrocWorkerRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &w : list) {
			GenrocWorkerRow &o = out[*n];
			(*n)++;	 // counted first: a failure below frees what this row holds
			o.worker = dup(w.worker);
			o.host = dup(w.host);
			o.durability = dup(w.durability);
			o.queues = static_cast<char **>(std::calloc(w.queues.size() + 1, sizeof(char *)));
			if (!o.queues) throw std::bad_alloc();
			for (const auto &q : w.queues) o.queues[o.nqueues++] = dup(q);
			o.has_concurrency = w.concurrency.has_value();
			o.concurrency = w.concurrency.value_or(0);
			o.lease_duration_ms = w.lease_duration_ms;
			o.stale_after_ms = w.stale_after_ms;
			o.started_us = w.started_us;
			o.heartbeat_us = w.heartbeat_us;
			o.has_stopped = w.stopped_us.has_value();
			o.stopped_us = w.stopped_us.value_or(0);
			o.live = w.live;
			o.running = w.running;
			o.draining = w.draining;
		}
	});
	if (!ok) {
		genroc_engine_free_workers(*rows, *n);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" void genroc_engine_free_workers(GenrocWorkerRow *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) {
		std::free(rows[k].worker);
		std::free(rows[k].host);
		std::free(rows[k].durability);
		for (int q = 0; q < rows[k].nqueues; q++) std::free(rows[k].queues[q]);
		std::free(rows[k].queues);
	}
	std::free(rows);
}

extern "C" int genroc_engine_queue_set(const char *name, const char *options, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		PgQueueHost host(port);
		*json = dup(queue_set(port, host, arg(name), arg(options)));
	});
}

extern "C" int genroc_engine_queue_drop(const char *name, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		queue_drop(port, arg(name));
	});
}

extern "C" int genroc_engine_list_queues(GenrocQueueRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	const int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = list_queues(port);
		auto *out = static_cast<GenrocQueueRow *>(std::calloc(list.size() + 1, sizeof(GenrocQueueRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &q : list) {
			GenrocQueueRow &o = out[*n];
			(*n)++;	 // counted first: a failure below frees what this row holds
			const QueueSettings &s = q.settings;
			o.name = dup(q.name);
			o.kind = dup(s.kind.value_or("unconfigured"));
			o.handler = dup_or_null(s.handler);
			o.match = dup_or_null(s.match);
			o.workers = static_cast<char **>(std::calloc(q.workers.size() + 1, sizeof(char *)));
			if (!o.workers) throw std::bad_alloc();
			for (const auto &w : q.workers) o.workers[o.nworkers++] = dup(w);
			o.global_concurrency = s.global;
			o.partition_concurrency = s.partition;
			o.has_rate = s.rate.has_value();
			o.rate_limit = s.rate.value_or(0);
			o.rate_period_ms = s.period_ms.value_or(0);
			o.has_partition_rate = s.partition_rate.has_value();
			o.partition_rate_limit = s.partition_rate.value_or(0);
			o.partition_rate_period_ms = s.partition_period_ms.value_or(0);
			o.depth = q.depth;
			o.queued = q.queued;
			o.running = q.running;
			o.has_oldest_ready = q.oldest_ready_us.has_value();
			o.oldest_ready_us = q.oldest_ready_us.value_or(0);
		}
	});
	if (!ok) {
		genroc_engine_free_queues(*rows, *n);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" void genroc_engine_free_queues(GenrocQueueRow *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) {
		std::free(rows[k].name);
		std::free(rows[k].kind);
		std::free(rows[k].handler);
		std::free(rows[k].match);
		for (int w = 0; w < rows[k].nworkers; w++) std::free(rows[k].workers[w]);
		std::free(rows[k].workers);
	}
	std::free(rows);
}

extern "C" int genroc_engine_task_token_succeed(const char *token, const char *output, char **status,
												GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(task_token_succeed(port, arg(token), arg(output)));
	});
}

extern "C" int genroc_engine_task_token_fail(const char *token, const char *error, const char *cause, char **status,
											 GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(task_token_fail(port, arg(token), arg(error), arg(cause)));
	});
}

extern "C" int genroc_engine_task_token_heartbeat(const char *token, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		task_token_heartbeat(port, arg(token));
	});
}

extern "C" int genroc_engine_redrive(int has_instance, int64_t instance, const char *client_token, char **status,
									 GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(redrive(port, has_instance ? std::optional<int64_t>(instance) : std::nullopt, arg(client_token)));
	});
}

extern "C" int genroc_engine_alias_set(const char *name, const char *alias, const char *routing,
									   const char *description, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(alias_set(port, arg(name), arg(alias), arg(routing), arg(description)));
	});
}

extern "C" int genroc_engine_alias_drop(const char *name, const char *alias, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		alias_drop(port, arg(name), arg(alias));
	});
}

extern "C" int genroc_engine_get_alias(const char *name, const char *alias, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(get_alias(port, arg(name), arg(alias)));
	});
}

extern "C" int genroc_engine_list_aliases(const char *name, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(list_aliases(port, arg(name)));
	});
}

extern "C" int genroc_engine_undefine(const char *name, int has_version, int64_t version, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		undefine(port, arg(name), has_version ? std::optional<int64_t>(version) : std::nullopt);
	});
}

extern "C" int genroc_engine_start_version(const char *name, int has_version, int64_t version, const char *alias,
										   int *out, GenrocEngineError *err) {
	*out = 0;
	return guarded(err, [&] {
		PgPort port(false);
		if (!name) raise(Msg::ARG_NULL, {"p_definition"});
		*out = start_version(port, name, has_version ? std::optional<int64_t>(version) : std::nullopt, arg(alias));
	});
}

extern "C" void genroc_engine_free(void *p) { std::free(p); }

extern "C" void genroc_engine_error_free(GenrocEngineError *err) {
	std::free(err->message);
	std::free(err->detail);
	std::free(err->hint);
	err->message = err->detail = err->hint = nullptr;
}
