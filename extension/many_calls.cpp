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

// The outputs: an empty text for each (its value is the jsonb Datum, in
// ManyReports::native_outputs), nullopt for a NULL element.
std::optional<std::vector<std::optional<std::string>>> outputs_of(const GenrocManyArray *a, ManyReports &r) {
	if (!a->has) return std::nullopt;
	std::vector<std::optional<std::string>> out;
	out.reserve(a->n);
	r.native_outputs.reserve(a->n);
	r.shallow_outputs.reserve(a->n);
	for (int k = 0; k < a->n; k++) {
		const bool null = a->nulls && a->nulls[k];
		out.push_back(null ? std::nullopt : std::optional<std::string>(std::string()));
		r.native_outputs.push_back(null ? nullptr : a->jsonbs[k]);
		r.shallow_outputs.push_back(!null && a->shallow[k]);
	}
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
		r.outputs = outputs_of(outputs, r);
		r.first_instance = instances->lower;
		r.first_epoch = epochs->lower;
		r.first_output = outputs->lower;
		r.multi_dimensional = multi_dim != 0;
		const std::vector<ManyOutcome> out =
			complete_many(port, r, arg(worker), opt_queues(has_queues, queues, nqueues));
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
				row.next.has_next = 1;
				fill_task(*o.next, &row.next.next);
			}
		} catch (...) {
			genroc_engine_free_many(got, filled);
			throw;
		}
		*rows = got;
		*n = filled;
	});
}
