// values_calls.cpp — the never-throwing C calls (engine_calls.h) of stored
// values (engine/values.hpp) and the log's payload rule
// (engine/log_payloads.hpp) over PgPort.
#include "engine_port.hpp"
#include "log_payloads.hpp"
#include "values.hpp"

using namespace genroc::engine;

extern "C" int genroc_engine_is_ref(const char *json, int *is_ref_out, GenrocEngineError *err) {
	*is_ref_out = 0;
	return guarded(err, [&] { *is_ref_out = is_ref_text(json) ? 1 : 0; });
}

extern "C" int genroc_engine_object(const char *hash, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(object_value(port, hash));
	});
}

extern "C" int genroc_engine_load_value(const char *value, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(load_value(port, std::string(value)));
	});
}

extern "C" int genroc_engine_store_value(const char *value, const char *field, int large, char **json,
										 GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(store_value(port, value, field ? field : "", large != 0));
	});
}

extern "C" int genroc_engine_log_payloads(const char *detail, int payloads, int64_t payload_max,
										  int64_t object_threshold, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(log_payloads(port, detail, LogSettings{payloads != 0, payload_max, object_threshold}));
	});
}
