// queues.cpp — genroc.queue_set, queue_drop and list_queues
// (extension/sql/55_queues.sql declares them), once for both stores.
#include "admin.hpp"
#include "admission.hpp"
#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

std::string queue_json_text(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// genroc._check_match: a routed queue's match; 22023 naming what is wrong.
void check_match(Port &port, const json &match) {
	if (!match.is_object() || match.empty()) raise(Msg::MATCH_NOT_OBJECT, {shown(port, match)});
	check_options(port, match, {"definitions", "labels", "tenants"}, "option \"match\"");
	for (const char *key : {"definitions", "tenants"}) {
		if (!match.contains(key)) continue;
		bool ok = match[key].is_array();
		if (ok)
			for (auto &g : match[key]) ok = ok && g.is_string() && !g.get<std::string>().empty();
		if (!ok) raise(Msg::MATCH_NOT_GLOBS, {key, shown(port, match[key])});
	}
	if (match.contains("labels")) {
		bool ok = match["labels"].is_object();
		if (ok)
			for (auto &[k, v] : match["labels"].items()) ok = ok && v.is_string();
		if (!ok) raise(Msg::MATCH_LABELS_NOT_GLOBS, {shown(port, match["labels"])});
	}
	// An empty list or object would match every start (a typo's silent
	// catch-all): a catch-all says so with a glob ("definitions": ["*"]).
	for (const char *key : {"definitions", "labels", "tenants"})
		if (match.contains(key) && match[key].empty()) raise(Msg::MATCH_EMPTY, {key});
}

// genroc._rate_option: {"count": N >= 1, "period": duration} named option.
struct Rate {
	int64_t count = 0;
	Duration period;
};
Rate rate_option(Port &port, const json &r, const std::string &option) {
	if (!r.is_object()) raise(Msg::RATE_NOT_OBJECT, {option, shown(port, r)});
	check_options(port, r, {"count", "period"}, "option \"" + option + "\"");
	if (!r.contains("count") || !r.contains("period")) raise(Msg::RATE_INCOMPLETE, {option});
	Rate out;
	out.count = int_option(port, r["count"], option + ".count");
	if (out.count < 1) raise(Msg::OPTION_AT_LEAST, {option + ".count", "1", std::to_string(out.count)});
	out.period = duration_option(port, r["period"], option + ".period");
	return out;
}

QueueRow queue_row(Port &port, const std::string &name, int64_t now) {
	QueueRow row;
	row.name = name;
	row.settings = queue_settings(port, name);
	const Row c = port.query(Stmt::QUEUE_COUNTS, {name}).at(0);
	row.depth = c.i64(0);
	row.queued = c.i64(1);
	row.running = c.i64(2);
	row.oldest_ready_us = c.oi64(3);
	for (const Row &w : port.query(Stmt::QUEUE_WORKERS, {name, now})) row.workers.push_back(w.text(0));
	return row;
}

}  // namespace

QueueSettings queue_settings(Port &port, const std::string &queue) {
	QueueSettings s;
	Rows own = port.query(Stmt::QUEUE_ROW, {queue});
	if (!own.empty()) {
		s.kind = own[0].text(0);
		s.handler = own[0].otext(1);
		s.match = own[0].otext(2);
	} else if (auto dot = queue.find('.'); dot != std::string::npos) {
		own = port.query(Stmt::QUEUE_ROW, {queue.substr(0, dot)});
		if (!own.empty()) s.kind = "region";
	}
	Rows def = port.query(Stmt::QUEUE_ROW, {std::string("default")});
	auto col = [&](int k) -> std::optional<int64_t> {
		if (!own.empty() && !own[0].is_null(k)) return own[0].i64(k);
		if (!def.empty() && !def[0].is_null(k)) return def[0].i64(k);
		return std::nullopt;
	};
	s.global = col(3).value_or(0);
	s.partition = col(4).value_or(1);
	// a limit and its period come from one row
	const Row *rate_row = !own.empty() && !own[0].is_null(5) ? &own[0] : def.empty() ? nullptr : &def[0];
	if (rate_row) {
		s.rate = rate_row->oi64(5);
		s.period_ms = rate_row->oi64(6);
	}
	const Row *prate_row = !own.empty() && !own[0].is_null(7) ? &own[0] : def.empty() ? nullptr : &def[0];
	if (prate_row) {
		s.partition_rate = prate_row->oi64(7);
		s.partition_period_ms = prate_row->oi64(8);
	}
	return s;
}

// Semantics: extension/sql/55_queues.sql, above queue_set.
std::string queue_set(Port &port, const std::optional<std::string> &name,
					  const std::optional<std::string> &options) {
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	if (name->empty() || name->find('.') != std::string::npos)
		raise(Msg::QUEUE_NAME_INVALID, {*name}, {}, message_text(Msg::QUEUE_NAME_INVALID_HINT, {}));
	check_name(*name, "p_name");
	const json opts = parse_options(port, options, "the queue options");
	check_options(port, opts,
				  {"global_concurrency", "handler", "kind", "match", "partition_concurrency", "partition_rate_limit",
				   "rate_limit"},
				  "queue options");
	std::optional<std::string> kind;
	if (opts.contains("kind"))
		kind = text_option(port, opts["kind"], "kind");
	else if (*name == "default")
		kind = "default";
	if (!kind) raise(Msg::QUEUE_KIND_MISSING);
	if (*kind != "default" && *kind != "tenant" && *kind != "handler" && *kind != "routed")
		raise(Msg::QUEUE_KIND_INVALID, {*kind});
	if ((*kind == "default") != (*name == "default")) raise(Msg::QUEUE_KIND_DEFAULT);
	port.exec(Stmt::LOCK_QUEUES, {});
	std::optional<std::string> handler;
	if (*kind == "handler") {
		if (!opts.contains("handler")) raise(Msg::QUEUE_HANDLER_MISSING);
		handler = text_option(port, opts["handler"], "handler");
		check_name(*handler, "option \"handler\"");
		Rows taken = port.query(Stmt::QUEUE_OF_HANDLER, {*handler, *name});
		if (!taken.empty())
			raise(Msg::QUEUE_HANDLER_TAKEN, {*handler, taken[0].text(0)}, {},
				  message_text(Msg::QUEUE_HANDLER_TAKEN_HINT, {}));
	} else if (opts.contains("handler")) {
		raise(Msg::QUEUE_HANDLER_NOT_HANDLER);
	}
	std::optional<JsonText> match;
	if (*kind == "routed") {
		if (!opts.contains("match")) raise(Msg::QUEUE_MATCH_MISSING);
		check_match(port, opts["match"]);
		match = JsonText{queue_json_text(opts["match"])};
	} else if (opts.contains("match")) {
		raise(Msg::QUEUE_MATCH_NOT_ROUTED);
	}
	std::optional<int64_t> global, partition;
	if (opts.contains("global_concurrency")) {
		global = int_option(port, opts["global_concurrency"], "global_concurrency");
		if (*global < 0) raise(Msg::OPTION_AT_LEAST, {"global_concurrency", "0", std::to_string(*global)});
	}
	if (opts.contains("partition_concurrency")) {
		partition = int_option(port, opts["partition_concurrency"], "partition_concurrency");
		if (*partition < 1) raise(Msg::OPTION_AT_LEAST, {"partition_concurrency", "1", std::to_string(*partition)});
	}
	std::optional<Rate> rate, prate;
	if (opts.contains("rate_limit")) rate = rate_option(port, opts["rate_limit"], "rate_limit");
	if (opts.contains("partition_rate_limit"))
		prate = rate_option(port, opts["partition_rate_limit"], "partition_rate_limit");

	Rows old = port.query(Stmt::QUEUE_FOR_SET, {*name});
	if (!old.empty() && old[0].text(0) != *kind && (old[0].text(0) == "tenant" || *kind == "tenant"))
		raise(Msg::QUEUE_TENANT_CONFLICT, {*name, *kind == "tenant" ? old[0].text(0) : *kind},
			  message_text(Msg::QUEUE_TENANT_CONFLICT_DETAIL, {}), message_text(Msg::QUEUE_TENANT_CONFLICT_HINT, {}));
	const std::optional<std::string> old_handler = old.empty() ? std::nullopt : old[0].otext(1);

	const Param none_i = Param::null(Param::Kind::i64), none_t = Param::null(Param::Kind::text);
	for (;;) {
		Port::Savepoint upsert(port);
		try {
			port.exec(Stmt::QUEUE_UPSERT,
					  {*name, *kind, handler, match, global, partition, rate ? Param(rate->count) : none_i,
					   rate ? Param(rate->period.interval) : none_t, rate ? Param(rate->period.ms) : none_i,
					   prate ? Param(prate->count) : none_i, prate ? Param(prate->period.interval) : none_t,
					   prate ? Param(prate->period.ms) : none_i, port.now_ms()});
			upsert.release();
			break;
		} catch (const Error &e) {
			if (e.sqlstate != "23505") throw;
			upsert.rollback();
			// the handler's own queue, made meanwhile by a report of one of
			// its tasks (genroc._handler_missing does not take the queues'
			// lock): the queue itself is written again (now an update);
			// another name is refused
			Rows mine = port.query(Stmt::QUEUE_OF_HANDLER, {handler, none_t});
			if (mine.empty() || mine[0].text(0) != *name)
				raise(Msg::QUEUE_HANDLER_TAKEN, {handler.value_or(""), mine.empty() ? "" : mine[0].text(0)}, {},
					  message_text(Msg::QUEUE_HANDLER_TAKEN_HINT, {}));
		}
	}
	// a handler's queue made after instances that need the handler were
	// started takes them (routed again with their root's labels)
	if (handler && old_handler != handler) reroute_handler(port, *handler, false);
	// A larger partition_concurrency frees slots now: hand them out (a
	// change of "default" can concern every queue; filling a full partition
	// does nothing).
	for (const Row &r : port.query(Stmt::QUEUED_PARTITIONS, {})) fill_slots(port, r.text(0), r.text(1));
	return queue_row_json(queue_row(port, *name, port.now_ms()));
}

// Semantics: the instances already in a dropped queue keep it (routing is
// never redone); they are served by whoever still lists that name, with the
// default queue's limits.  Dropping "default" is refused; an unknown name
// is 42704.
void queue_drop(Port &port, const std::optional<std::string> &name) {
	port.exec(Stmt::FLUSH_COMMIT, {"outside"});
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	if (*name == "default") raise(Msg::QUEUE_DEFAULT_DROP);
	port.exec(Stmt::LOCK_QUEUES, {});
	if (port.exec(Stmt::QUEUE_DELETE, {*name}) == 0) raise(Msg::QUEUE_NOT_FOUND, {*name});
	port.exec(Stmt::QUEUE_STARTS_DELETE, {*name});
}

// Semantics: extension/sql/55_queues.sql, above list_queues.
std::vector<QueueRow> list_queues(Port &port) {
	const int64_t now = port.now_ms();
	std::vector<QueueRow> out;
	for (const Row &r : port.query(Stmt::QUEUE_NAMES, {now})) out.push_back(queue_row(port, r.text(0), now));
	return out;
}

std::string queue_row_json(const QueueRow &row) {
	const QueueSettings &s = row.settings;
	auto opt = [](const std::optional<int64_t> &v) { return v ? json(*v) : json(nullptr); };
	json out = {{"name", row.name},
				{"kind", s.kind.value_or("unconfigured")},
				{"handler", s.handler ? json(*s.handler) : json(nullptr)},
				{"match", s.match ? parse_json(*s.match, "the match") : json(nullptr)},
				{"global_concurrency", s.global},
				{"partition_concurrency", s.partition},
				{"rate_limit", opt(s.rate)},
				{"rate_period_ms", opt(s.period_ms)},
				{"partition_rate_limit", opt(s.partition_rate)},
				{"partition_rate_period_ms", opt(s.partition_period_ms)},
				{"depth", row.depth},
				{"queued", row.queued},
				{"running", row.running},
				{"workers", row.workers},
				{"oldest_ready_at", row.oldest_ready_us ? json(iso_us(*row.oldest_ready_us)) : json(nullptr)}};
	return queue_json_text(out);
}

}  // namespace genroc::engine
