// claim_calls.cpp — the never-throwing C call (engine_calls.h) of
// genroc.claim (engine/claim.hpp) over PgPort; claim.c makes its rows.
#include <cstdlib>

#include "claim.hpp"
#include "engine_port.hpp"

using namespace genroc::engine;

extern "C" void genroc_engine_free_claim(GenrocClaimTask *tasks, int n) {
	for (int k = 0; tasks && k < n; k++) free_task(&tasks[k]);
	std::free(tasks);
}

extern "C" int genroc_engine_new_epoch(int64_t previous, int64_t *epoch, GenrocEngineError *err) {
	return guarded(err, [&] { *epoch = new_epoch(previous); });
}

extern "C" int genroc_engine_claim(const char *worker, int has_queues, const char *const *queues, int nqueues,
								   int has_n, int64_t n, int64_t now_us, GenrocClaimTask **tasks, int *ntasks,
								   int *end, GenrocEngineError *err) {
	*tasks = nullptr;
	*ntasks = 0;
	*end = GENROC_CLAIM_OTHER;
	const int ok = guarded(err, [&] {
		PgPort port(false);
		Claimed c = claim(port, arg(worker), opt_queues(has_queues, queues, nqueues), has_n ? std::optional<int64_t>(n) : std::nullopt, now_us);
		auto *out = static_cast<GenrocClaimTask *>(std::calloc(c.tasks.size() + 1, sizeof(GenrocClaimTask)));
		if (!out) throw std::bad_alloc();
		*tasks = out;
		for (const HandedBack &t : c.tasks) fill_task(t, &out[(*ntasks)++]);
		*end = c.end == Claimed::End::took		   ? GENROC_CLAIM_TOOK
			   : c.end == Claimed::End::none_ready ? GENROC_CLAIM_NONE_READY
												   : GENROC_CLAIM_OTHER;
	});
	if (!ok) {
		genroc_engine_free_claim(*tasks, *ntasks);
		*tasks = nullptr;
		*ntasks = 0;
	}
	return ok;
}
