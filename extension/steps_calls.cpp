// steps_calls.cpp — the step writer's never-throwing C calls
// (engine_calls.h, "the step writer"): engine/steps.cpp over PgPort.
#include <algorithm>

#include "engine_port.hpp"
#include "engine.hpp"
#include "steps.hpp"

using namespace genroc::engine;

extern "C" int genroc_engine_apply_step(int64_t instance, const char *request, const char *first,
										const char *worker, const char *const *queues, int nqueues, char **status,
										GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		const genroc::json req = parse_json(request, "the step request");
		const genroc::json fst = first ? parse_json(first, "the step's first log row") : genroc::json();
		std::optional<Handback> hb;
		if (worker) {
			hb.emplace();
			hb->worker = worker;
			for (int i = 0; i < nqueues; i++)
				if (queues[i]) hb->queues.emplace_back(queues[i]);
		}
		*status = dup(apply_step(port, instance, req, fst, hb ? &*hb : nullptr));
	});
}

extern "C" int genroc_engine_handback_room(const char *worker, const char *const *queues, int nqueues,
										   int64_t *lease_ms, int *open, GenrocEngineError *err) {
	*lease_ms = -1;
	for (int i = 0; i < nqueues; i++) open[i] = 0;
	return guarded(err, [&] {
		PgPort port(false);
		Handback hb;
		hb.worker = worker ? worker : "";
		for (int i = 0; i < nqueues; i++)
			if (queues[i]) hb.queues.emplace_back(queues[i]);
		const HandbackRoom room = handback_room(port, hb);
		if (!room.lease_ms) return;
		*lease_ms = *room.lease_ms;
		for (int i = 0; i < nqueues; i++)
			open[i] = queues[i] && std::find(room.open.begin(), room.open.end(), queues[i]) != room.open.end();
	});
}

extern "C" int genroc_engine_interrupt(int64_t instance, const char *reason, char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*status = dup(interrupt(port, instance, reason ? reason : ""));
	});
}
