// retention.cpp — genroc.prune and the collection of stored values
// (engine/retention.hpp), once for both stores.
#include <algorithm>
#include <set>
#include <vector>

#include "errors.hpp"
#include "retention.hpp"

namespace genroc::engine {

namespace {

// Whether a retention prunes anything: longer than 0, and shorter than the
// time since 1970 (the earliest time genroc stores; now - retention would
// leave the timestamp range).
bool prunes(const std::optional<Retention> &r, int64_t now_us) {
	return r && r->span_us() > 0 && r->span_us() < now_us;
}

void add_refs(const Row &row, int from, std::vector<std::string> &refs) {
	for (int c = from; c < row.size(); c++)
		if (!row.is_null(c)) refs.push_back(row.text(c));
}

JsonText json_ids(const std::vector<int64_t> &ids) {
	json a = json::array();
	for (int64_t id : ids) a.push_back(id);
	return JsonText{a.dump()};
}

JsonText json_texts(const std::vector<std::string> &texts) {
	json a = json::array();
	for (const std::string &t : texts) a.push_back(t);
	return JsonText{a.dump()};
}

}  // namespace

int64_t checked_limit(std::optional<int64_t> limit) {
	if (!limit) raise(Msg::ARG_NULL, {"p_limit"});
	if (*limit < 1) raise(Msg::LIMIT_BELOW_ONE, {std::to_string(*limit)});
	return *limit;
}

RetentionSettings retention_settings(Port &port) {
	Rows rows = port.query(Stmt::RETENTION_SETTINGS, {});
	const Row &r = rows.at(0);
	RetentionSettings s;
	s.log_retention_us = r.oi64(0).value_or(0);
	s.instance_retention_us = r.oi64(1).value_or(0);
	s.object_grace_us = r.oi64(2).value_or(0);
	s.admin = !r.is_null(3) && r.boolean(3);
	return s;
}

int64_t collect_objects(Port &port, int64_t grace_us, int64_t limit) {
	const int64_t now = port.now_ms();
	int64_t deleted = 0;
	for (const Row &o : port.query(Stmt::OBJECTS_TO_LOOK_AT, {now, limit, grace_us})) {
		const std::string hash = o.text(0);
		if (port.query(Stmt::OBJECT_USED, {hash}).at(0).boolean(0)) {
			port.exec(Stmt::OBJECT_IN_USE, {hash, now});
		} else if (o.boolean(1)) {
			port.exec(Stmt::OBJECT_DELETE, {hash});
			deleted++;
		} else {
			port.exec(Stmt::OBJECT_UNUSED, {hash, now, grace_us});
		}
	}
	return deleted;
}

Pruned prune_rows(Port &port, const std::optional<Retention> &log_retention,
				  const std::optional<Retention> &instance_retention, int64_t limit, int64_t object_grace_us) {
	const int64_t now = port.now_ms();
	Pruned out;
	std::vector<std::string> refs;	// objects the deleted rows used
	// without any stored object, the deletes need not look for references
	const bool any_objects = port.query(Stmt::RETENTION_ANY_OBJECTS, {}).at(0).boolean(0);

	if (prunes(log_retention, now * 1000)) {
		const Retention &r = *log_retention;
		if (!any_objects) {
			out.log_rows = port.exec(Stmt::PRUNE_LOG, {r.months, r.days, r.us, now, limit});
		} else {
			Rows rows = port.query(Stmt::PRUNE_LOG_REFS, {r.months, r.days, r.us, now, limit});
			out.log_rows = static_cast<int64_t>(rows.size());
			for (const Row &row : rows) add_refs(row, 0, refs);
		}
	}

	if (prunes(instance_retention, now * 1000)) {
		const Retention &r = *instance_retention;
		std::set<std::string> marks;  // lock keys of the deleted instances' partitions
		for (const Row &root : port.query(Stmt::PRUNE_ROOTS, {r.months, r.days, r.us, now, limit})) {
			if (out.instances >= limit) break;
			// the largest ids of the tree, as many as the limit leaves room for
			std::vector<int64_t> ids;
			for (const Row &t : port.query(Stmt::PRUNE_TREE, {root.i64(0), limit - out.instances}))
				ids.push_back(t.i64(0));
			const JsonText tree = json_ids(ids);
			if (!any_objects) {
				port.exec(Stmt::PRUNE_TREE_LOG, {tree});
			} else {
				for (const Row &row : port.query(Stmt::PRUNE_TREE_LOG_REFS, {tree})) add_refs(row, 0, refs);
			}
			port.exec(Stmt::PRUNE_TREE_EVENTS, {tree});
			port.exec(Stmt::PRUNE_TREE_FANOUTS, {tree});
			Rows deleted = port.query(Stmt::PRUNE_TREE_INSTANCES, {tree});
			out.instances += static_cast<int64_t>(deleted.size());
			for (const Row &row : deleted) {
				if (!row.is_null(0)) marks.insert(row.text(0));
				add_refs(row, 1, refs);
			}
		}
		// the lock rows of those partitions left without an instance; a
		// partition used again makes them again
		if (!marks.empty())
			port.exec(Stmt::PRUNE_LOCK_ROWS, {json_texts(std::vector<std::string>(marks.begin(), marks.end()))});
	}
	if (!refs.empty()) port.exec(Stmt::OBJECTS_DUE, {json_texts(refs), now});
	out.objects = collect_objects(port, object_grace_us, limit);
	return out;
}

std::string prune(Port &port, const std::optional<Retention> &log_retention,
				  const std::optional<Retention> &instance_retention, std::optional<int64_t> limit) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	const int64_t n = checked_limit(limit);
	if ((log_retention && log_retention->span_us() < 0) || (instance_retention && instance_retention->span_us() < 0))
		raise(Msg::RETENTION_NEGATIVE, {}, {}, "Use 0 to keep everything of that kind.");
	const Pruned p = prune_rows(port, log_retention, instance_retention, n, retention_settings(port).object_grace_us);
	return json{{"log_rows", p.log_rows}, {"instances", p.instances}, {"objects", p.objects}}.dump();
}

}  // namespace genroc::engine
