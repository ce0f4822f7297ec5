// queues_config.cpp — see queues_config.hpp.
#include "queues_config.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace genroc {

std::vector<QueueEntry> load_queues_config(const std::string &path) {
	std::ifstream in(path);
	if (!in) throw std::runtime_error("queues config \"" + path + "\": cannot be read");
	std::stringstream text;
	text << in.rdbuf();
	json doc;
	try {
		doc = json::parse(text.str());
	} catch (const json::parse_error &e) {
		throw std::runtime_error("queues config \"" + path + "\": not JSON: " + e.what());
	}
	if (!doc.is_object() || doc.size() != 1 || !doc.contains("queues") || !doc["queues"].is_object())
		throw std::runtime_error("queues config \"" + path +
								 "\": must be {\"queues\": {NAME: {kind, match, limits...}, ...}}");
	std::vector<QueueEntry> out;
	for (auto &[name, options] : doc["queues"].items()) {
		if (!options.is_object())
			throw std::runtime_error("queues config \"" + path + "\": $.queues." + name +
									 " must be an object of queue options");
		out.push_back({name, options});
	}
	return out;
}

std::vector<std::string> configured_handler_queues(Store &store, const std::vector<std::string> &handler_names) {
	return configured_handler_queues(store.list_queues(), handler_names);
}

std::vector<std::string> configured_handler_queues(const json &queues, const std::vector<std::string> &handler_names) {
	std::set<std::string> names(handler_names.begin(), handler_names.end()), out;
	for (auto &q : queues)
		if (q.value("kind", json()) == "handler" && q.value("handler", json()).is_string() &&
			names.count(q["handler"].get<std::string>()))
			out.insert(q.at("name").get<std::string>());
	return {out.begin(), out.end()};
}

std::vector<std::string> sync_queues(Store &store, const Config &cfg, const std::vector<QueueEntry> &entries,
									 const std::vector<std::pair<std::string, std::string>> &handler_queues,
									 const std::vector<std::string> &handler_names) {
	for (auto &e : entries) {
		try {
			store.queue_set(e.name, e.options);
		} catch (const Error &err) {
			throw std::runtime_error("queues config: queue \"" + e.name + "\": " + err.what());
		}
	}
	auto configured = [&](const std::string &name) -> const QueueEntry * {
		for (auto &e : entries)
			if (e.name == name) return &e;
		return nullptr;
	};
	json existing = store.list_queues();
	for (auto &[handler, queue] : handler_queues) {
		if (auto *e = configured(queue)) {
			if (e->options.value("kind", "") != "handler" || e->options.value("handler", "") != handler)
				throw std::runtime_error("the handlers file gives handler \"" + handler + "\" the queue \"" + queue +
										 "\", but the queues config does not make it that handler's queue");
			continue;
		}
		bool same = false;
		for (auto &q : existing)
			same = same || (q.at("name") == queue && q.at("kind") == "handler" && q.at("handler") == handler);
		if (same) continue;
		try {
			store.queue_set(queue, {{"kind", "handler"}, {"handler", handler}});
		} catch (const Error &err) {
			throw std::runtime_error("handler \"" + handler + "\": queue \"" + queue + "\": " + err.what());
		}
	}
	// The queues as they are now, read once for what follows.
	const json queues = store.list_queues();
	std::vector<std::string> handler_queue_names;
	for (auto &hq : handler_queues) handler_queue_names.push_back(hq.second);
	for (auto &q : configured_handler_queues(queues, handler_names)) handler_queue_names.push_back(q);
	// The queue named after each handler too, made or not: genroc makes it
	// when a worker without the handler reports one of its tasks
	// genroc.HandlerMissing (genroc._handler_missing), and this worker must
	// serve it from then on without a restart.  Not a name in use by another
	// queue (a tenant's, a routed one, another handler's), nor one no queue
	// may have.
	for (auto &h : handler_names) {
		if (h.empty() || h.find('.') != std::string::npos) continue;
		bool free = true;
		for (auto &q : queues)
			if (q.at("name") == h)
				free = q.value("kind", json()) == "handler" && q.value("handler", json()) == h;
		if (free) handler_queue_names.push_back(h);
	}
	std::vector<std::string> served = worker_queues(cfg, handler_queue_names);
	if (!cfg.exclusive) {
		std::set<std::string> all(served.begin(), served.end());
		for (auto &q : queues)
			if (q.at("kind") == "tenant") {
				const std::string name = q.at("name").get<std::string>();
				all.insert(cfg.region.empty() ? name : name + "." + cfg.region);
			}
		served.assign(all.begin(), all.end());
	}
	return served;
}

}  // namespace genroc
