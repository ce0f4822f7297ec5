// admission.cpp — routing, admission behind a partition and the room a
// task frees (engine/admission.hpp; semantics: extension/sql/55_queues.sql),
// once for both stores.  The step itself is the engine's (steps.cpp), a log
// row LOG_ROW's (engine/log_payloads.cpp its payload rule), stored values
// engine/values.cpp's.
#include "admission.hpp"

#include <utility>
#include <vector>

#include "admin.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "queue_rules.hpp"
#include "steps.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

std::string json_text(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A label's text as ->> gives it: a string itself, another value its JSON
// text, JSON null none.
std::optional<std::string> label_text(const json &labels, const char *key) {
	if (!labels.is_object()) return std::nullopt;
	auto it = labels.find(key);
	if (it == labels.end() || it->is_null()) return std::nullopt;
	return it->is_string() ? it->get<std::string>() : json_text(*it);
}

// The first step of an instance with this input (its stored text).
json start_request(Port &port, const std::optional<std::string> &input) {
	return parse_json("{\"op\": \"start\", \"input\": " + load_value(port, input).value_or("null") + "}",
					  "the step request");
}

// A labels column's value (NULL or empty: none).
json labels_of(const Row &r, int col) {
	const std::optional<std::string> t = r.otext(col);
	return !t || t->empty() ? json::object() : parse_json(*t, "the labels");
}

void log(Port &port, int64_t id, const char *event, const json &detail) {
	port.exec(Stmt::LOG_ROW,
			  {id, event, Param::null(Param::Kind::text), JsonText{json_text(detail)}, port.now_ms()});
}

// genroc_queue.filling: the partition fill_slots is filling in this
// thread (a backend, a SQLite connection's transaction): an instance that
// ends inside its first step frees its slot at once, and the nested fill
// of the same partition is skipped (the loop counts again).
thread_local std::string filling;

}  // namespace

// Semantics: extension/sql/55_queues.sql, above genroc._route.
std::string route(Port &port, int64_t definition_id, const std::string &definition_name, const json &labels) {
	const std::optional<std::string> tenant = label_text(labels, "tenant");
	std::optional<std::string> queue;
	bool handlers = false;
	// kind, name, match: handler queues, routed queues in creation order,
	// the tenant's queue
	const Rows queues = port.query(Stmt::ROUTE_QUEUES, {tenant});
	for (const Row &q : queues) handlers = handlers || q.text(0) == "handler";
	if (handlers) {
		Rows h = port.query(Stmt::ROUTE_HANDLER, {definition_id});
		if (!h.empty()) queue = h[0].text(0);
	}
	if (!queue)
		for (const Row &q : queues)
			if (q.text(0) == "routed" && match_applies(parse_json(q.text(2), "a queue's match"), definition_name, labels)) {
				queue = q.text(1);
				break;
			}
	if (!queue && tenant)
		for (const Row &q : queues)
			if (q.text(0) == "tenant") queue = q.text(1);
	std::string out = queue.value_or("default");
	if (labels.is_object() && labels.contains("region")) {
		const std::optional<std::string> region = label_text(labels, "region");
		if (!region) throw Error("22004", "the label \"region\" is null");
		out += "." + *region;
	}
	return out;
}

// Semantics: extension/sql/55_queues.sql, above genroc._admit.
std::string admit(Port &port, int64_t id, const std::optional<json> &request) {
	Rows r = port.query(Stmt::ADMIT_READ, {id});
	if (r.empty()) throw Error("P0002", "query returned no rows");
	const std::string queue = r[0].text(0);
	const std::optional<std::string> partition = r[0].otext(1);
	if (!partition)
		return apply_step(port, id, request ? *request : start_request(port, r[0].otext(2)));
	port.exec(Stmt::ADMIT_QUEUE,
			  {id, request ? Param(JsonText{json_text(*request)}) : Param::null(Param::Kind::json), port.now_ms()});
	log(port, id, "queued", {{"queue", queue}, {"partition_key", *partition}});
	fill_slots(port, queue, partition);
	return port.query(Stmt::ADMIT_STATUS, {id}).at(0).text(0);
}

// Semantics: extension/sql/55_queues.sql, above genroc._fill_slots.
void fill_slots(Port &port, const std::string &queue, const std::optional<std::string> &partition) {
	if (!partition) return;
	const std::string mark = queue + "/" + *partition;
	if (filling == mark) return;
	// the partition's rate lock row is made with it: claim only tries that
	// one, and a try does not wait for a row to be made
	port.exec(Stmt::FILL_LOCK, {queue, *partition});
	const int64_t limit = queue_settings(port, queue).partition;
	struct Restore {
		std::string old;
		~Restore() { filling = std::move(old); }
	} restore{filling};
	filling = mark;
	for (;;) {
		if (slot_holders(port, queue, *partition) >= limit) break;
		Rows next = port.query(Stmt::FILL_NEXT, {queue, *partition});
		if (next.empty()) break;
		const int64_t id = next[0].i64(0);
		port.exec(Stmt::FILL_READY, {id, port.now_ms()});
		log(port, id, "slot_acquired", {{"queue", queue}, {"partition_key", *partition}});
		// task_input of a queued instance: the step it runs with its slot
		// (retry, resume); NULL: its start
		const std::optional<std::string> pending = load_value(port, next[0].otext(2));
		apply_step(port, id,
				   pending && *pending != "null" ? parse_json(*pending, "the step request")
												 : start_request(port, next[0].otext(1)));
	}
}

int64_t slot_holders(Port &port, const std::string &queue, const std::string &partition) {
	return port.query(Stmt::SLOT_HOLDERS, {queue, partition}).at(0).i64(0);
}

void ended(Port &port, int64_t id) {
	Rows r = port.query(Stmt::ENDED_PARTITION, {id});
	if (r.empty()) throw Error("P0002", "query returned no rows");
	if (!r[0].is_null(1) && r[0].boolean(2)) fill_slots(port, r[0].text(0), r[0].text(1));
}

// Semantics: extension/sql/55_queues.sql, above genroc._room_freed.
void room_freed(Port &port, const std::string &queue) {
	if (!port.query(Stmt::ROOM_LIMITED, {}).at(0).boolean(0)) return;
	if (queue_settings(port, queue).global > 0) port.exec(Stmt::STEP_NOTIFY, {});
}

// Semantics: extension/sql/55_queues.sql, above genroc._reroute_handler.
void reroute_handler(Port &port, const std::string &handler, bool skip_locked) {
	std::vector<std::pair<int64_t, std::string>> moves;
	for (const Row &r : port.query(skip_locked ? Stmt::REROUTE_ROWS_SKIP_LOCKED : Stmt::REROUTE_ROWS, {handler})) {
		std::string queue = route(port, r.i64(2), r.text(3), labels_of(r, 4));
		if (r.otext(1) != queue) moves.emplace_back(r.i64(0), std::move(queue));
	}
	for (auto &[id, queue] : moves) port.exec(Stmt::REROUTE_MOVE, {id, queue, port.now_ms()});
}

// Semantics: extension/sql/55_queues.sql, above genroc._handler_missing.
std::optional<std::string> handler_missing(Port &port, const MissingHandler &inst) {
	if (!inst.resource || inst.resource->rfind("handler:", 0) != 0) return std::nullopt;
	const std::string handler = inst.resource->substr(8);
	if (handler.empty() || handler.find('.') != std::string::npos) return std::nullopt;
	try {  // a name no queue may have (queue_set's check): fails as reported
		check_name(handler, "handler");
	} catch (const Error &e) {
		if (e.sqlstate == "22023") return std::nullopt;
		throw;
	}
	auto home_of = [&]() -> std::optional<std::string> {
		Rows h = port.query(Stmt::QUEUE_OF_HANDLER, {handler, Param::null(Param::Kind::text)});
		return h.empty() ? std::nullopt : std::optional<std::string>(h[0].text(0));
	};
	std::optional<std::string> home = home_of();
	if (!home) {
		// a concurrent report for the same handler waits here for the first
		// one's end, then finds the queue made
		port.exec(Stmt::HANDLER_QUEUE_MAKE, {handler, port.now_ms()});
		home = home_of();
		if (!home) return std::nullopt;
		reroute_handler(port, handler, true);
	}
	auto base = [](const std::string &q) { return q.substr(0, q.find('.')); };
	// the reporting worker serves the queue the task is in, its handler's:
	// it lacks a handler it is meant to have.  (One that does not serve it
	// claimed the task elsewhere, before another report moved it.)
	if (inst.queue && base(*inst.queue) == *home && inst.lease_owner &&
		!port.query(Stmt::HANDLER_WORKER_SERVES, {*inst.lease_owner, *inst.queue}).empty())
		return std::nullopt;
	const Row def = port.query(Stmt::HANDLER_ROUTE_ROW, {inst.id}).at(0);
	const std::string queue = route(port, def.i64(0), def.text(1), labels_of(def, 2));
	if (base(queue) != *home) return std::nullopt;
	port.exec(Stmt::LOG_ROW,
			  {inst.id, "task_interrupted", inst.state,
			   JsonText{json_text({{"reason", "handler missing"},
								   {"worker", inst.lease_owner ? json(*inst.lease_owner) : json(nullptr)},
								   {"epoch", inst.lease_epoch ? json(*inst.lease_epoch) : json(nullptr)},
								   {"interruptions", inst.interruptions ? json(*inst.interruptions) : json(nullptr)},
								   {"counted", false},
								   {"handler", handler},
								   {"queue", queue}})}, port.now_ms()});
	port.exec(Stmt::HANDLER_MOVE, {inst.id, queue, port.now_ms()});
	port.exec(Stmt::STEP_NOTIFY, {});
	return "ready";
}

}  // namespace genroc::engine
