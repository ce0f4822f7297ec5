// many_calls.cpp — the never-throwing C call (engine_calls.h) of
// genroc.complete_many (engine/many.hpp) over PgPort.
#include <cstdlib>

#include "engine_port.hpp"
#include "many.hpp"

using namespace genroc::engine;

namespace {

std::optional<std::vector<std::optional<int64_t>>> ids_of(const GenrocManyArray *a) {
	if (!a->has) return std::nullopt;
	std::vector<std::optional<int64_t>> out;
	out.reserve(a->n);
	for (int k = 0; k < a->n; k++)
		out.push_back(a->nulls && a->nulls[k] ? std::nullopt : std::optional<int64_t>(a->ids[k]));
	return out;
}

std::optional<std::vector<std::optional<std::string>>> texts_of(const GenrocManyArray *a) {
	if (!a->has) return std::nullopt;
	std::vector<std::optional<std::string>> out;
	out.reserve(a->n);
	for (int k = 0; k < a->n; k++) out.push_back(arg(a->texts[k]));
	return out;
}

}  // namespace

extern "C" void genroc_engine_free_many(GenrocManyRow *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) {
		std::free(rows[k].sqlstate);
		genroc_engine_free_report(&rows[k].next);
	}
	std::free(rows);
}

extern "C" int genroc_engine_complete_many(const GenrocManyArray *instances, const GenrocManyArray *epochs,
										   const GenrocManyArray *outputs, int multi_dim, const char *worker,
										   int has_queues, const char *const *queues, int nqueues,
										   GenrocManyRow **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	return guarded(err, [&] {
		PgPort port(false);
		ManyReports r;
		r.instances = ids_of(instances);
		r.epochs = ids_of(epochs);
		r.outputs = texts_of(outputs);
		r.first_instance = instances->lower;
		r.first_epoch = epochs->lower;
		r.first_output = outputs->lower;
		r.multi_dimensional = multi_dim != 0;
		std::optional<std::vector<std::string>> qs;
		if (has_queues) {
			qs.emplace();
			for (int i = 0; i < nqueues; i++)
				if (queues[i]) qs->emplace_back(queues[i]);
		}
		const std::vector<ManyOutcome> out = complete_many(port, r, arg(worker), qs);
		auto *got = static_cast<GenrocManyRow *>(std::calloc(out.size() ? out.size() : 1, sizeof(GenrocManyRow)));
		if (!got) throw std::bad_alloc();
		int filled = 0;
		try {
			for (const ManyOutcome &o : out) {
				GenrocManyRow &row = got[filled++];
				row.instance_id = o.instance_id;
				row.sqlstate = dup_or_null(o.sqlstate);
				row.next.status = dup_or_null(o.status);
				if (!o.next) continue;
				const HandedBack &t = *o.next;
				row.next.has_next = 1;
				row.next.instance_id = t.instance_id;
				row.next.epoch = t.epoch;
				row.next.state = dup_or_null(t.state);
				row.next.resource = dup_or_null(t.resource);
				row.next.input = dup(t.input);
				row.next.only_once = t.only_once;
				row.next.has_timeout_s = t.timeout_s.has_value();
				row.next.timeout_s = t.timeout_s.value_or(0);
				row.next.attempt = t.attempt;
				row.next.lease_expires_us = t.lease_expires_us;
				row.next.queue = dup(t.queue);
			}
		} catch (...) {
			genroc_engine_free_many(got, filled);
			throw;
		}
		*rows = got;
		*n = filled;
	});
}
