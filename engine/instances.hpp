// instances.hpp — reading instances: genroc.get_instance, list_instances,
// history (extension/sql/40_instances.sql declares them) and capabilities
// (12_roles.sql), once for both stores.  Reads only: the PostgreSQL entry
// points are STABLE (read-only SPI).
//
// An answer is JSON text: every stored value (input, output, a log
// entry's payload) is spliced in as the store keeps its text, so no number
// or key changes on the way; a large value (a reference,
// {"genroc:object": "<hash>"}, 15_objects.sql) is replaced by its stored
// value unless the options ask for references ({"values": "ref"}).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// genroc.get_instance(p_instance, p_options): the instance as JSON text:
// {id, definition, version, status, state, resource, queue, priority,
// input, task_input, output, error, cause, attempt, interruptions,
// lease_owner, lease_epoch, lease_expires, eligible_at, wait_kind,
// wait_until, activity, idempotency_key, labels, partition_key, name,
// created_at, updated_at, ended_at, parent_id, root_id, child_index, scope,
// variables} (timestamps ISO-8601 UTC with milliseconds), and children
// {kind, total, succeeded, failed, running, waiting} when it fanned out.
// options: {"values": "value" | "ref"} (22023 otherwise; NULL: {}).
// 42501 when the caller may not read it; 22004 for a NULL id; RC003 when
// there is none.
std::string get_instance(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &options);

// genroc.list_instances(p_filter): the instances the caller may read as
// JSON texts (get_instance's keys but variables and children), newest
// first, or a parent's children in their order.  Filter keys: status,
// definition, name, label ({"k": "v"}), root, parent, top, before (an id:
// the next page), created_after, created_before (timestamps), limit (1 to
// 10000, default 100), offset, values; 22023 (22007 / 22008 for a
// timestamp) naming a malformed one.  NULL: {}.
std::vector<std::string> list_instances(Port &port, const std::optional<std::string> &filter);

// One entry of an instance's log.
struct LogEntry {
	int64_t seq = 0;
	int64_t at_us = 0;	// microseconds since the Unix epoch
	std::string event;
	std::optional<std::string> state;
	std::optional<std::string> detail;	// JSON text
};

// genroc.history(p_instance, p_options): the instance's log, oldest first;
// options and errors as get_instance's.
std::vector<LogEntry> history(Port &port, std::optional<int64_t> instance, const std::optional<std::string> &options);

// genroc.capabilities(): {role, admin, operator, worker, user,
// token_verify, token_create} of the caller, as JSON text.
std::string capabilities(Port &port);

}  // namespace genroc::engine
