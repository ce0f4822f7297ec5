// many.hpp — genroc.complete_many: the reports of many tasks in one
// transaction (extension/sql/50_workers.sql declares it; the semantics are
// in its comment).  Its arguments' checks and limits, and its reports as
// complete (complete_and_claim with a worker) makes each, once for both
// stores: on PostgreSQL the common ones of a batch written set-wise, by a
// few statements for the whole batch (engine/many.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"
#include "report.hpp"

namespace genroc::engine {

// The most reports one call takes (54000 beyond).
constexpr int64_t MAX_REPORTS = 10000;

// complete_many's arguments as the caller gave them: nullopt for a SQL
// NULL array or element; outputs as JSON text.  PostgreSQL's arrays also
// carry their first subscript (named in a NULL element's error) and
// whether any has more than one dimension (their elements flattened).
// PostgreSQL passes its outputs as its own values (native_outputs: jsonb
// Datums, Port::native_json_text makes a text when a report needs one; the
// outputs' texts are then empty), and whether each is within json_depth
// (what a step would check; shallow_outputs).
struct ManyReports {
	std::optional<std::vector<std::optional<int64_t>>> instances, epochs;
	std::optional<std::vector<std::optional<std::string>>> outputs;
	std::vector<const void *> native_outputs;
	std::vector<bool> shallow_outputs;
	int64_t first_instance = 1, first_epoch = 1, first_output = 1;
	bool multi_dimensional = false;
};

// A report's row in complete_many's result: its instance, its new status
// (nullopt when not taken), the SQLSTATE of a report not taken (RC003,
// RC004), and with a hand-back the task as claim returns it.
struct ManyOutcome {
	int64_t instance_id = 0;
	std::optional<std::string> status, sqlstate;
	std::optional<HandedBack> next;
};

// genroc.complete_many(p_instances, p_epochs, p_outputs, p_worker,
// p_queues): a row per report, in order.  22004 for a NULL argument or
// element, 22023 for worker without queues (or the reverse), arrays of
// more than one dimension or of unequal lengths, 54000 for more than
// MAX_REPORTS, 42501 for a lease of another role's worker.  The rows are
// locked in id order first.
std::vector<ManyOutcome> complete_many(Port &port, const ManyReports &reports, const std::optional<std::string> &worker,
									   const std::optional<std::vector<std::string>> &queues);

}  // namespace genroc::engine
