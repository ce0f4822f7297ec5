// many.cpp — genroc.complete_many (engine/many.hpp), once for both stores:
// the arguments' checks and limits, the rows locked in id order, then each
// report as complete (complete_and_claim with a worker) makes it, in-process
// (engine/report.cpp), a lost lease or a missing instance answered in its
// row.  PostgreSQL's common batch is written set-wise before it
// (extension/complete_many.c), which sends the reports it leaves here.
#include "many.hpp"

#include "errors.hpp"

namespace genroc::engine {

namespace {

// The first NULL element of an array, as array_position names it (its
// subscript), or nullopt.
template <typename T>
std::optional<int64_t> null_at(const std::vector<std::optional<T>> &a, int64_t first) {
	for (size_t k = 0; k < a.size(); k++)
		if (!a[k]) return first + static_cast<int64_t>(k);
	return std::nullopt;
}

// The arguments' checks, in the order the PL/pgSQL made them.
void check(const ManyReports &r, const std::optional<std::string> &worker,
		   const std::optional<std::vector<std::string>> &queues) {
	if (!r.instances) raise(Msg::ARG_NULL, {"p_instances"});
	if (!r.epochs) raise(Msg::ARG_NULL, {"p_epochs"});
	if (!r.outputs) raise(Msg::ARG_NULL, {"p_outputs"});
	if (worker.has_value() != queues.has_value()) raise(Msg::MANY_WORKER_QUEUES);
	if (r.multi_dimensional) raise(Msg::MANY_DIMENSIONS);
	const size_t n = r.instances->size();
	if (r.epochs->size() != n || r.outputs->size() != n)
		raise(Msg::MANY_LENGTHS,
			  {std::to_string(n), std::to_string(r.epochs->size()), std::to_string(r.outputs->size())});
	if (static_cast<int64_t>(n) > MAX_REPORTS)
		raise(Msg::MANY_TOO_MANY, {std::to_string(n), std::to_string(MAX_REPORTS)});
	if (auto k = null_at(*r.instances, r.first_instance))
		raise(Msg::MANY_ELEMENT_NULL, {"p_instances", std::to_string(*k)});
	if (auto k = null_at(*r.epochs, r.first_epoch)) raise(Msg::MANY_ELEMENT_NULL, {"p_epochs", std::to_string(*k)});
	if (auto k = null_at(*r.outputs, r.first_output)) raise(Msg::MANY_OUTPUT_NULL, {std::to_string(*k)});
}

}  // namespace

std::vector<ManyOutcome> complete_many(Port &port, const ManyReports &reports, const std::optional<std::string> &worker,
									   const std::optional<std::vector<std::string>> &queues) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	check(reports, worker, queues);
	const auto &ids = *reports.instances;
	std::string literal = "{";
	for (size_t k = 0; k < ids.size(); k++) literal += (k ? "," : "") + std::to_string(*ids[k]);
	port.exec(Stmt::MANY_LOCK, {literal + "}"});
	std::vector<ManyOutcome> out;
	out.reserve(ids.size());
	for (size_t k = 0; k < ids.size(); k++) {
		ManyOutcome o;
		o.instance_id = *ids[k];
		// a lost lease or a missing instance: what a correct worker meets in
		// normal life, answered in the row
		std::string not_taken;
		ReportResult r = complete_one_of_many(port, o.instance_id, *(*reports.epochs)[k], *(*reports.outputs)[k],
											  worker, queues, not_taken);
		if (!not_taken.empty())
			o.sqlstate = std::move(not_taken);
		else {
			o.status = std::move(r.status);
			o.next = std::move(r.next);
		}
		out.push_back(std::move(o));
	}
	return out;
}

}  // namespace genroc::engine
