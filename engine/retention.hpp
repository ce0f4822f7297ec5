// retention.hpp — genroc.prune (what retention deletes) and the collection
// of stored values no longer used (15_objects.sql), once for both stores.
// The tick (engine/tick.hpp) prunes with them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// A retention as PostgreSQL's interval has it: months, days and
// microseconds (SQLite's retentions are milliseconds: us alone).
struct Retention {
	int64_t months = 0;
	int64_t days = 0;
	int64_t us = 0;
	// Its length as PostgreSQL compares intervals: a month 30 days, a day 24 hours.
	int64_t span_us() const { return (months * 30 + days) * int64_t(86'400'000'000) + us; }
	static Retention of_us(int64_t us) { return {0, 0, us}; }
};

// What one pass of retention did.
struct Pruned {
	int64_t log_rows = 0;
	int64_t instances = 0;
	int64_t objects = 0;
};

// The retention settings of the caller: PostgreSQL's session settings
// (genroc.log_retention, genroc.instance_retention, genroc.object_grace),
// the SQLite store's options; and whether the caller administers genroc
// (on SQLite always).
struct RetentionSettings {
	int64_t log_retention_us = 0;
	int64_t instance_retention_us = 0;
	int64_t object_grace_us = 0;
	bool admin = false;
};
RetentionSettings retention_settings(Port &port);

// genroc.prune(p_log_retention, p_instance_retention, p_limit): at most
// `limit` rows of each kind, oldest first (SKIP LOCKED, so concurrent
// calls share the work):
//   log_rows   log rows whose time is older than now - log_retention (any
//              instance, live or not: a live instance's history loses its
//              oldest entries)
//   instances  concluded (succeeded, failed, cancelled) top-level instances
//              that ended before now - instance_retention, with their whole
//              tree (every instance whose root_id is theirs), their log rows
//              and their kept events.  A tree with any live instance is left
//              alone.  The count is of instances deleted, children included;
//              a tree larger than what is left of the limit is deleted from
//              its newest instances down over several calls, the top-level
//              instance last (a child's id is always larger than its
//              parent's, so no row is left pointing at a deleted one)
//   objects    stored values no instance and no log row uses, object_grace
//              after collection found them unused (collect_objects, at most
//              `limit` looked at); the objects of the rows deleted here are
//              looked at first
// A retention of 0 (or null) prunes nothing of that kind, nor one longer
// than the time since 1970; a negative one is 22023; a null limit 22004, one
// below 1 22023.  A deleted instance's id then answers RC003.  Returns
// {"log_rows", "instances", "objects"} as JSON text.
std::string prune(Port &port, const std::optional<Retention> &log_retention,
				  const std::optional<Retention> &instance_retention, std::optional<int64_t> limit);

// prune's work after its checks (the tick's pruning), objects collected
// with the grace given.
Pruned prune_rows(Port &port, const std::optional<Retention> &log_retention,
				  const std::optional<Retention> &instance_retention, int64_t limit, int64_t object_grace_us);

// Collection: at most `limit` objects due for a look (oldest check first;
// SKIP LOCKED, so concurrent collections share the work and skip an object
// a transaction is storing again).  One in use: unmarked, due again after
// its age (at least 1 minute, at most 1 day).  One unused: marked with now
// (unless marked already) and due at mark + grace; one unused and marked at
// least a grace ago: deleted.  Returns how many were deleted.
int64_t collect_objects(Port &port, int64_t grace_us, int64_t limit);

// The checks of a limit (p_limit): 22004 when null, 22023 below 1.
int64_t checked_limit(std::optional<int64_t> limit);

}  // namespace genroc::engine
