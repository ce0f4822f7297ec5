// retention_calls.cpp — genroc.prune and genroc.tick (engine/retention.cpp,
// engine/tick.cpp) as the C functions their entry points (retention.c) call,
// over PgPort (engine_port.hpp).
#include "engine_port.hpp"
#include "retention.hpp"
#include "tick.hpp"

using namespace genroc::engine;

namespace {

std::optional<Retention> retention_of(const GenrocRetention &r) {
	if (!r.present) return std::nullopt;
	return Retention{r.months, r.days, r.us};
}

}  // namespace

extern "C" int genroc_engine_prune(GenrocRetention log_retention, GenrocRetention instance_retention, int has_limit,
								   int64_t limit, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(prune(port, retention_of(log_retention), retention_of(instance_retention),
						  has_limit ? std::optional<int64_t>(limit) : std::nullopt));
	});
}

extern "C" int genroc_engine_tick(int has_limit, int64_t limit, char **json, GenrocEngineError *err) {
	*json = nullptr;
	return guarded(err, [&] {
		PgPort port(false);
		*json = dup(tick(port, has_limit ? std::optional<int64_t>(limit) : std::nullopt));
	});
}
