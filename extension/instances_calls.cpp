// instances_calls.cpp — the reads of instances (engine/instances.hpp) as the
// never-throwing C calls of engine_calls.h, for extension/instances.c.  Each
// runs the engine over a read-only PgPort: the SQL functions are STABLE.
#include <cstdlib>

#include "engine_port.hpp"
#include "instances.hpp"

using namespace genroc::engine;

namespace {

std::optional<int64_t> id_arg(int has, int64_t v) { return has ? std::optional<int64_t>(v) : std::nullopt; }

}  // namespace

extern "C" int genroc_engine_get_instance(int has_instance, int64_t instance, const char *options, char **json,
										  GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(get_instance(port, id_arg(has_instance, instance), arg(options)));
	});
}

extern "C" int genroc_engine_list_instances(const char *filter, char ***rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	int ok = guarded(err, [&] {
		PgPort port(true);
		auto list = list_instances(port, arg(filter));
		auto **out = static_cast<char **>(std::calloc(list.size() + 1, sizeof(char *)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const auto &j : list) out[(*n)++] = dup(j);
	});
	if (!ok) {
		for (int k = 0; k < *n; k++) std::free((*rows)[k]);
		std::free(*rows);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" int genroc_engine_history(int has_instance, int64_t instance, const char *options, GenrocLogRow **rows,
									 int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	int ok = guarded(err, [&] {
		PgPort port(true);
		auto log = history(port, id_arg(has_instance, instance), arg(options));
		auto *out = static_cast<GenrocLogRow *>(std::calloc(log.size() + 1, sizeof(GenrocLogRow)));
		if (!out) throw std::bad_alloc();
		*rows = out;
		for (const LogEntry &e : log) {
			GenrocLogRow &row = out[*n];
			row.seq = e.seq;
			row.at_us = e.at_us;
			(*n)++;	 // counted before its strings: a failed dup frees what it made
			row.event = dup(e.event);
			row.state = dup_or_null(e.state);
			row.detail = dup_or_null(e.detail);
		}
	});
	if (!ok) {
		genroc_engine_free_log(*rows, *n);
		*rows = nullptr;
		*n = 0;
	}
	return ok;
}

extern "C" void genroc_engine_free_log(GenrocLogRow *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) {
		std::free(rows[k].event);
		std::free(rows[k].state);
		std::free(rows[k].detail);
	}
	std::free(rows);
}

extern "C" int genroc_engine_capabilities(char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(true);
		*json = dup(capabilities(port));
	});
}
