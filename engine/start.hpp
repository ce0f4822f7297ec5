// start.hpp — starting instances, written once over the port: genroc.start,
// genroc.start_many and the start options they read (genroc._start_options,
// _parse_time, _int_option, _text_option, _labels_option).  The PostgreSQL
// entry points are extension/start.c (extension/start_calls.cpp); the
// SQLite store calls the same functions.  The first step runs in-process
// (engine::apply_step); a partition's admission is the store's
// (genroc._admit through TICK_ADMIT).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// A timestamp option (genroc._parse_time): microseconds since the epoch;
// 22007 naming the option when it is not a string or does not parse, 22008
// outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z.
int64_t time_option(Port &port, const json &value, const std::string &option);

// Labels (genroc._labels_option): a JSON object of strings; 22023 naming
// the option otherwise.
const json &labels_option(Port &port, const json &value, const std::string &option);

// The start options (genroc._start_options) read and checked: those not in
// allowed and every malformed one are 22023 naming the option (22007 /
// 22008 for run_at).  An option not given is nullopt.
struct StartOptions {
	std::optional<int> version;
	int priority = 0;
	std::optional<int64_t> run_at_us;
	json labels = json::object();
	std::optional<std::string> key, partition, name, alias;
};
StartOptions start_options(Port &port, const json &options, const std::vector<std::string> &allowed,
						   const std::string &what);

struct Started {
	int64_t id = 0;
	bool is_new = false;
	std::string status;
};

// genroc.start(p_definition, p_input, p_options): nullopt for SQL NULL
// (options NULL: {}); the input as JSON text, stored and logged as it is.
// No row only when an instance under the idempotency key vanished between
// the insert's conflict and its read.
std::vector<Started> start(Port &port, const std::optional<std::string> &definition,
						   const std::optional<std::string> &input, const json &options);

// genroc.start_many(p_definition, p_inputs, p_options): a row per input, in
// their order.
std::vector<Started> start_many(Port &port, const std::optional<std::string> &definition,
								const std::optional<json> &inputs, const json &options);

}  // namespace genroc::engine
