// store_factory.cpp — the stores a command opens, with its settings applied
// (see store_factory.hpp).
#include "store_factory.hpp"

#include "store.hpp"

namespace genroc {

// Every store the process opens gets the durability level, the log options
// and the commit delay.
StoreFactory store_factory(const Config &cfg, WriteLane lane) {
	const std::string database = cfg.database;
	const DurabilityLevel level = parse_durability(cfg.durability).value_or(DurabilityLevel::essential);
	const int delay = cfg.pg_commit_delay;
	const bool pooled = cfg.pooled;
	LogOptions log_options;
	log_options.payloads = cfg.log_payloads;
	log_options.payload_max = cfg.log_payload_max;
	log_options.log_retention_ms = cfg.log_retention.count();
	log_options.instance_retention_ms = cfg.instance_retention.count();
	log_options.object_threshold = cfg.object_threshold;
	log_options.object_grace_ms = cfg.object_grace.count();
	return [database, level, delay, log_options, lane, pooled] {
		auto store = open_store(database, false, lane, pooled);
		store->set_durability(level);
		store->set_log_options(log_options);
		if (delay >= 0) store->set_commit_delay(delay);
		return store;
	};
}

}  // namespace genroc
