// admission.hpp — how a started instance gets its queue and its first step
// (extension/sql/55_queues.sql declares these private helpers; their
// semantics are written there): routing (genroc._route), admission behind
// a partition (genroc._admit, _fill_slots, _slot_holders, _ended) and the
// wake-up of claimers when a limited queue has room (genroc._room_freed),
// and the handler queues made after their instances started
// (genroc._reroute_handler, _handler_missing).
// Written once over the port; the PostgreSQL entry points are
// extension/admission.c, the SQLite store calls the same functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc._route(p_definition, p_labels): the queue of an instance of the
// definition (its id and name) with these labels: a handler queue, the
// first routed queue whose match applies, the tenant's queue, default;
// then <queue>.<region> with a label "region".
std::string route(Port &port, int64_t definition_id, const std::string &definition_name, const json &labels);

// genroc._admit(p_instance, p_request): the first step of a started
// instance (request: the step a retry or resume runs, else its start), or
// its place behind its partition; returns the instance's status.
std::string admit(Port &port, int64_t instance, const std::optional<json> &request = std::nullopt);

// genroc._fill_slots(p_queue, p_partition): free slots of a partition to
// its queued instances, in order; nothing for no partition.
void fill_slots(Port &port, const std::string &queue, const std::optional<std::string> &partition);

// genroc._slot_holders(p_queue, p_partition): the instances holding a slot.
int64_t slot_holders(Port &port, const std::string &queue, const std::string &partition);

// genroc._ended(p_instance): after an end, a top-level instance's slot goes
// to the next queued instance of its partition.
void ended(Port &port, int64_t instance);

// genroc._room_freed(p_queue): a task of the queue stopped running; with a
// global_concurrency limit the claimers are woken (PostgreSQL's NOTIFY).
void room_freed(Port &port, const std::string &queue);

// genroc._reroute_handler(p_handler, p_skip_locked): the instances not
// ended whose definition uses the handler, routed again with their root's
// labels; skip_locked: rows another transaction holds keep their queue.
void reroute_handler(Port &port, const std::string &handler, bool skip_locked);

// What genroc._handler_missing reads of the instance's row (p_inst, as the
// report found it, locked).
struct MissingHandler {
	int64_t id = 0;
	std::optional<std::string> resource, queue, lease_owner, state;
	std::optional<int64_t> lease_epoch, interruptions;
};
// genroc._handler_missing(p_inst): a task reported genroc.HandlerMissing;
// "ready" when it moved to its handler's queue, nullopt when it fails as
// reported.
std::optional<std::string> handler_missing(Port &port, const MissingHandler &inst);

}  // namespace genroc::engine
