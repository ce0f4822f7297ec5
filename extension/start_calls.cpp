// start_calls.cpp — starting instances' never-throwing C calls
// (engine_calls.h, "starting instances"): engine/start.cpp over PgPort.
#include "engine_port.hpp"
#include "engine.hpp"
#include "start.hpp"

using namespace genroc::engine;

namespace {

int answer(const std::vector<Started> &rows, GenrocStarted **out, int *n) {
	*out = static_cast<GenrocStarted *>(std::calloc(rows.size() + 1, sizeof(GenrocStarted)));
	if (!*out) throw std::bad_alloc();
	for (const Started &s : rows) {
		GenrocStarted &o = (*out)[(*n)++];
		o.instance_id = s.id;
		o.is_new = s.is_new ? 1 : 0;
		o.status = dup(s.status);
	}
	return 1;
}

}  // namespace

extern "C" int genroc_engine_start(const char *definition, const char *input, const char *options,
								   GenrocStarted **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	return guarded(err, [&] {
		PgPort port(false);
		const genroc::json opts = options ? parse_json(options, "the start options") : genroc::json();
		answer(start(port, arg(definition), arg(input), opts), rows, n);
	});
}

extern "C" int genroc_engine_start_many(const char *definition, const char *inputs, const char *options,
										GenrocStarted **rows, int *n, GenrocEngineError *err) {
	*rows = nullptr;
	*n = 0;
	return guarded(err, [&] {
		PgPort port(false);
		std::optional<genroc::json> in;
		if (inputs) in = parse_json(inputs, "the inputs");
		const genroc::json opts = options ? parse_json(options, "the start_many options") : genroc::json();
		answer(start_many(port, arg(definition), in, opts), rows, n);
	});
}

extern "C" void genroc_engine_free_started(GenrocStarted *rows, int n) {
	if (!rows) return;
	for (int k = 0; k < n; k++) std::free(rows[k].status);
	std::free(rows);
}
