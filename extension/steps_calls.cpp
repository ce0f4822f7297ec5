// steps_calls.cpp — the step writer's never-throwing C call
// (engine_calls.h, "the step writer"): complete_many.c's hand-back check,
// engine/steps.cpp's handback_room over PgPort.
#include <algorithm>

#include "engine_port.hpp"
#include "engine.hpp"
#include "steps.hpp"

using namespace genroc::engine;

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
