// report_calls.cpp — the never-throwing C calls (engine_calls.h) of a
// worker's report of a task (engine/report.hpp) over PgPort.
#include <cstdlib>

#include "engine_port.hpp"
#include "report.hpp"

using namespace genroc::engine;

namespace {

std::optional<int64_t> opt_id(int has, int64_t id) { return has ? std::optional<int64_t>(id) : std::nullopt; }

void fill(const ReportResult &r, GenrocReportResult *out) {
	out->status = dup(r.status);
	if (!r.next) return;
	out->has_next = 1;
	fill_task(*r.next, &out->next);
}

}  // namespace

extern "C" void genroc_engine_free_report(GenrocReportResult *r) {
	if (!r) return;
	std::free(r->status);
	free_task(&r->next);
	std::memset(r, 0, sizeof *r);
}

extern "C" int genroc_engine_complete(int has_instance, int64_t instance, int has_epoch, int64_t epoch,
									  const char *output, char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(complete(port, opt_id(has_instance, instance), opt_id(has_epoch, epoch), arg(output)));
	});
}

extern "C" int genroc_engine_fail(int has_instance, int64_t instance, int has_epoch, int64_t epoch, const char *error,
								  const char *cause, char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(fail(port, opt_id(has_instance, instance), opt_id(has_epoch, epoch), arg(error), arg(cause)));
	});
}

extern "C" int genroc_engine_complete_and_claim(int has_instance, int64_t instance, int has_epoch, int64_t epoch,
												const char *output, const char *worker, int has_queues,
												const char *const *queues, int nqueues, GenrocReportResult *out,
												GenrocEngineError *err) {
	std::memset(out, 0, sizeof *out);
	const int ok = guarded(err, [&] {
		PgPort port(false);
		fill(complete_and_claim(port, opt_id(has_instance, instance), opt_id(has_epoch, epoch), arg(output),
								arg(worker), opt_queues(has_queues, queues, nqueues)),
			 out);
	});
	if (!ok) genroc_engine_free_report(out);
	return ok;
}

extern "C" int genroc_engine_fail_and_claim(int has_instance, int64_t instance, int has_epoch, int64_t epoch,
											const char *error, const char *cause, const char *worker,
											int has_queues, const char *const *queues, int nqueues,
											GenrocReportResult *out, GenrocEngineError *err) {
	std::memset(out, 0, sizeof *out);
	const int ok = guarded(err, [&] {
		PgPort port(false);
		fill(fail_and_claim(port, opt_id(has_instance, instance), opt_id(has_epoch, epoch), arg(error), arg(cause),
							arg(worker), opt_queues(has_queues, queues, nqueues)),
			 out);
	});
	if (!ok) genroc_engine_free_report(out);
	return ok;
}
