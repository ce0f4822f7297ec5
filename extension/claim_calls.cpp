// claim_calls.cpp — the never-throwing C call (engine_calls.h) of
// genroc.claim (engine/claim.hpp) over PgPort; claim.c makes its rows.
#include <cstdlib>

#include "claim.hpp"
#include "engine_port.hpp"

using namespace genroc::engine;

// engine_spi.c: the statement is prepared with a generic plan
extern "C" void genroc_pg_generic_plan(int id);

extern "C" void genroc_engine_free_claim(GenrocClaimTask *tasks, int n) {
	for (int k = 0; tasks && k < n; k++) {
		std::free(tasks[k].state);
		std::free(tasks[k].resource);
		std::free(tasks[k].input);
		std::free(tasks[k].queue);
	}
	std::free(tasks);
}

extern "C" int genroc_engine_claim(const char *worker, int has_queues, const char *const *queues, int nqueues,
								   int has_n, int64_t n, int64_t now_us, GenrocClaimTask **tasks, int *ntasks,
								   int *end, GenrocEngineError *err) {
	*tasks = nullptr;
	*ntasks = 0;
	*end = GENROC_CLAIM_OTHER;
	// planned per call, the claim's statements took longer than they ran
	for (Stmt s : {Stmt::CLAIM_HEARTBEAT, Stmt::CLAIM_HELD, Stmt::CLAIM_TAKE, Stmt::CLAIM_TAKE_IDS})
		genroc_pg_generic_plan(static_cast<int>(s));
	const int ok = guarded(err, [&] {
		PgPort port(false);
		std::optional<std::vector<std::string>> qs;
		if (has_queues) {
			qs.emplace();
			qs->reserve(nqueues);
			for (int k = 0; k < nqueues; k++)
				if (queues[k]) qs->emplace_back(queues[k]);
		}
		Claimed c = claim(port, arg(worker), qs, has_n ? std::optional<int64_t>(n) : std::nullopt, now_us);
		auto *out = static_cast<GenrocClaimTask *>(std::calloc(c.tasks.size() + 1, sizeof(GenrocClaimTask)));
		if (!out) throw std::bad_alloc();
		*tasks = out;
		for (const HandedBack &t : c.tasks) {
			GenrocClaimTask &r = out[(*ntasks)++];
			r.instance_id = t.instance_id;
			r.epoch = t.epoch;
			r.state = dup_or_null(t.state);
			r.resource = dup_or_null(t.resource);
			r.input = dup(t.input);
			r.only_once = t.only_once;
			r.has_timeout_s = t.timeout_s.has_value();
			r.timeout_s = t.timeout_s.value_or(0);
			r.attempt = t.attempt;
			r.lease_expires_us = t.lease_expires_us;
			r.queue = dup(t.queue);
		}
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
