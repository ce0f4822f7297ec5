// control_calls.cpp — the never-throwing C calls (engine_calls.h) of the
// instance control, events and leases (engine/control.hpp) over PgPort.
#include <cstdlib>

#include "control.hpp"
#include "engine_port.hpp"

using namespace genroc::engine;

namespace {

std::optional<int64_t> opt_id(int has, int64_t id) { return has ? std::optional<int64_t>(id) : std::nullopt; }

std::optional<std::vector<int64_t>> opt_ids(int has, const int64_t *ids, int n) {
	if (!has) return std::nullopt;
	return std::vector<int64_t>(ids, ids + n);
}

}  // namespace

extern "C" int genroc_engine_cancel(int has_instance, int64_t instance, const char *error, const char *cause,
									char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(cancel(port, opt_id(has_instance, instance), arg(error), arg(cause)));
	});
}

extern "C" int genroc_engine_cancel_tree(int64_t instance, const char *cause, const char *children_cause,
										 const char *error, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		cancel_tree(port, instance, arg(cause), arg(children_cause), arg(error));
	});
}

extern "C" int genroc_engine_run_again(int has_instance, int64_t instance, const char *output, char **status,
									   GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(run_again(port, opt_id(has_instance, instance), arg(output)));
	});
}

extern "C" int genroc_engine_emit(int has_instance, int64_t instance, const char *name, const char *payload,
								  char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(emit(port, opt_id(has_instance, instance), arg(name), arg(payload)));
	});
}

extern "C" int genroc_engine_deliver_event(int64_t instance, const char *name, const char *payload, char **status,
										   GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(deliver_event(port, instance, name, payload));
	});
}

extern "C" int genroc_engine_renew(const char *worker, int has_instances, const int64_t *instances, int n,
								   int64_t **kept, int *nkept, GenrocEngineError *err) {
	*kept = nullptr;
	*nkept = 0;
	return guarded(err, [&] {
		PgPort port(false);
		const std::vector<int64_t> ids = renew(port, arg(worker), opt_ids(has_instances, instances, n));
		auto *out = static_cast<int64_t *>(std::malloc((ids.size() + 1) * sizeof(int64_t)));
		if (!out) throw std::bad_alloc();
		for (size_t k = 0; k < ids.size(); k++) out[k] = ids[k];
		*kept = out;
		*nkept = static_cast<int>(ids.size());
	});
}

extern "C" int genroc_engine_release(const char *worker, int has_instances, const int64_t *instances, int n,
									 int64_t *released, GenrocEngineError *err) {
	*released = 0;
	return guarded(err, [&] {
		PgPort port(false);
		*released = release(port, arg(worker), opt_ids(has_instances, instances, n));
	});
}

extern "C" void genroc_engine_free_activity_claims(GenrocActivityClaim *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) {
		std::free(rows[k].token);
		std::free(rows[k].activity);
		std::free(rows[k].input);
	}
	std::free(rows);
}

extern "C" int genroc_engine_claim_activity(const char *activity, const char *worker, int has_n, int64_t n,
											GenrocActivityClaim **rows, int *nrows, GenrocEngineError *err) {
	*rows = nullptr;
	*nrows = 0;
	const int ok = guarded(err, [&] {
		PgPort port(false);
		auto list = claim_activity(port, arg(activity), arg(worker), has_n ? std::optional<int64_t>(n) : std::nullopt);
		auto *out = static_cast<GenrocActivityClaim *>(std::calloc(list.size() + 1, sizeof(GenrocActivityClaim)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &c : list) {
			GenrocActivityClaim &o = out[*nrows];
			(*nrows)++;	 // counted first: a failure below frees what this row holds
			o.token = dup(c.token);
			o.instance_id = c.instance_id;
			o.activity = dup(c.activity);
			o.input = dup(c.input);
			o.has_heartbeat_s = c.heartbeat_s.has_value();
			o.heartbeat_s = c.heartbeat_s.value_or(0);
			o.has_timeout_s = c.timeout_s.has_value();
			o.timeout_s = c.timeout_s.value_or(0);
		}
	});
	if (!ok) {
		genroc_engine_free_activity_claims(*rows, *nrows);
		*rows = nullptr;
		*nrows = 0;
	}
	return ok;
}

extern "C" int genroc_engine_claim_wake(int has_queues, const char *const *queues, int n, int *has_wake,
										int64_t *wake, GenrocEngineError *err) {
	*has_wake = 0;
	*wake = 0;
	return guarded(err, [&] {
		PgPort port(true);
		std::optional<std::vector<std::string>> qs;
		if (has_queues) {
			qs.emplace();
			for (int k = 0; k < n; k++)
				if (queues[k]) qs->push_back(queues[k]);
		}
		if (auto w = claim_wake(port, qs)) {
			*has_wake = 1;
			*wake = *w;
		}
	});
}
