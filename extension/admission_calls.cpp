// admission_calls.cpp — routing and admission's never-throwing C calls
// (engine_calls.h, "admission"): engine/admission.cpp over PgPort.
#include "admin.hpp"
#include "admission.hpp"
#include "engine.hpp"
#include "engine_port.hpp"

using namespace genroc::engine;

extern "C" int genroc_engine_route(int64_t definition_id, const char *definition_name, const char *labels,
								   char **queue, GenrocEngineError *err) {
	*queue = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		const genroc::json l = labels ? parse_json(labels, "the labels") : genroc::json::object();
		*queue = dup(route(port, definition_id, definition_name ? definition_name : "", l));
	});
}

extern "C" int genroc_engine_admit(int64_t instance, const char *request, char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		std::optional<genroc::json> req;
		if (request) req = parse_json(request, "the step request");
		*status = dup(admit(port, instance, req));
	});
}

extern "C" int genroc_engine_fill_slots(const char *queue, const char *partition, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		// a NULL queue has no instances: nothing to fill
		if (queue) fill_slots(port, queue, arg(partition));
	});
}

extern "C" int genroc_engine_slot_holders(const char *queue, const char *partition, int64_t *holders,
										  GenrocEngineError *err) {
	*holders = 0;
	return guarded(err, [&] {
		PgPort port(true);
		if (queue && partition) *holders = slot_holders(port, queue, partition);
	});
}

extern "C" int genroc_engine_ended(int64_t instance, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		ended(port, instance);
	});
}

extern "C" int genroc_engine_room_freed(const char *queue, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		room_freed(port, queue ? queue : "");	 // NULL: the default queue's limits
	});
}

extern "C" int genroc_engine_queue_settings(const char *queue, GenrocQueueSettings *out, GenrocEngineError *err) {
	std::memset(out, 0, sizeof *out);
	return guarded(err, [&] {
		PgPort port(true);
		fill_settings(queue_settings(port, queue ? queue : ""), out);
	});
}

extern "C" void genroc_engine_free_queue_settings(GenrocQueueSettings *s) { free_settings(s); }

extern "C" int genroc_engine_reroute_handler(const char *handler, int skip_locked, GenrocEngineError *err) {
	return guarded(err, [&] {
		PgPort port(false);
		if (handler) reroute_handler(port, handler, skip_locked != 0);
	});
}

extern "C" int genroc_engine_handler_missing(const GenrocMissingHandler *inst, char **status, GenrocEngineError *err) {
	*status = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		MissingHandler m;
		m.id = inst->id;
		m.resource = arg(inst->resource);
		m.queue = arg(inst->queue);
		m.lease_owner = arg(inst->lease_owner);
		m.state = arg(inst->state);
		if (inst->has_lease_epoch) m.lease_epoch = inst->lease_epoch;
		if (inst->has_interruptions) m.interruptions = inst->interruptions;
		*status = dup_or_null(handler_missing(port, m));
	});
}
