// engine_port.cpp — the engine's operations of the first areas as the C
// functions the module's entry points call (engine_calls.h), over PgPort
// (engine_port.hpp).
#include "admin.hpp"
#include "callbacks.hpp"
#include "aliases.hpp"
#include "engine.hpp"
#include "engine/metrics.hpp"
#include "objects.hpp"
#include "tokens.hpp"
#include "redrive.hpp"
#include "engine_port.hpp"

namespace genroc::engine {

namespace {

// The workers' host in PostgreSQL: a holder's liveness is its session's
// (WORKER_FOR_REGISTER asks genroc._session_alive), and the statements
// record the session and the durability themselves.
class PgWorkerHost final : public WorkerHost {
  public:
	std::optional<bool> holder_alive(const std::string &, const Row &held) override {
		return held.is_null(4) ? std::nullopt : std::optional<bool>(held.boolean(4));
	}
	std::optional<int64_t> session(bool) override { return std::nullopt; }
	std::string durability() override { return {}; }
};

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
		PgWorkerHost host;
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
		worker_stop(port, arg(worker));
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
		*json = dup(queue_set(port, arg(name), arg(options)));
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
			o.name = dup(q.name);
			fill_settings(q.settings, &o.settings);
			if (!o.settings.kind) o.settings.kind = dup("unconfigured");
			o.workers = static_cast<char **>(std::calloc(q.workers.size() + 1, sizeof(char *)));
			if (!o.workers) throw std::bad_alloc();
			for (const auto &w : q.workers) o.workers[o.nworkers++] = dup(w);
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
		free_settings(&rows[k].settings);
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

extern "C" void genroc_engine_free(void *p) { std::free(p); }

extern "C" void genroc_engine_error_free(GenrocEngineError *err) {
	std::free(err->message);
	std::free(err->detail);
	std::free(err->hint);
	err->message = err->detail = err->hint = nullptr;
}
