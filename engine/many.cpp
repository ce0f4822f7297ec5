// many.cpp — genroc.complete_many (engine/many.hpp), once for both stores:
// the arguments' checks and limits, the rows locked in id order, then the
// reports.  Where the store offers the set-wise statements (PostgreSQL:
// statements_many.def) a batch's common reports are written by a few
// statements for the whole batch; every other report, and every report on
// SQLite, as complete (complete_and_claim with a worker) makes it, in-process
// (engine/report.cpp), a lost lease or a missing instance answered in its
// row.
//
// Glossary
//   set-wise  a batch of valid arguments, more than one report, no instance
//             twice, no queue at global_concurrency (each report frees room
//             there, one by one), on a store with MANY_SETWISE
//   ends      of a set-wise batch, the reports whose success ends a
//             top-level instance with the result as its output (a one-task
//             job's: asl::success_ends, for a definition this process has
//             compiled), written with no step (MANY_ENDS, MANY_ENDS_LOG)
//   stepped   the others of top-level instances whose step ends the instance
//             or stops at a handler task ready at once (MANY_SETWISE)
//   general   the reports left, one by one (complete_one_of_many), in their
//             order, after the set-wise ones
#include "many.hpp"

#include <algorithm>

#include "definition_cache.hpp"
#include "errors.hpp"
#include "steps.hpp"

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
	if (!r.native_outputs.empty() && (r.native_outputs.size() != n || r.shallow_outputs.size() != n))
		throw Error("XX000", "engine: complete_many's outputs and their values differ in length");
}

// The batch, its arguments checked: report k is ids[k], epochs[k], and its
// output (output_text, or the store's own value).
struct Batch {
	const ManyReports &reports;
	std::vector<int64_t> ids, epochs;
	const std::optional<std::string> &worker;
	const std::optional<std::vector<std::string>> &queues;

	size_t size() const { return ids.size(); }
	const void *native(size_t k) const { return reports.native_outputs.empty() ? nullptr : reports.native_outputs[k]; }
	std::string output_text(Port &port, size_t k) const {
		if (const void *v = native(k)) return port.native_json_text(v);
		return *(*reports.outputs)[k];
	}
};

// Report k as complete / complete_and_claim makes it.
ManyOutcome one(Port &port, const Batch &b, size_t k) {
	ManyOutcome o;
	o.instance_id = b.ids[k];
	// a lost lease or a missing instance: what a correct worker meets in
	// normal life, answered in the row
	std::string not_taken;
	ReportResult r =
		complete_one_of_many(port, o.instance_id, b.epochs[k], b.output_text(port, k), b.worker, b.queues, not_taken);
	if (!not_taken.empty())
		o.sqlstate = std::move(not_taken);
	else {
		o.status = std::move(r.status);
		o.next = std::move(r.next);
	}
	return o;
}

// ---- the set-wise batch ----------------------------------------------

// MANY_LOCK's columns.
enum { LK_ID, LK_LEASED, LK_EPOCH, LK_OWNER, LK_TID, LK_STATE, LK_TOP, LK_HASH };
// MANY_SETWISE's: the position, the status, then REPORT_TASK's.
enum { SW_K, SW_STATUS, SW_TASK };

bool set_wise_taken(Port &port, const Batch &b) {
	if (!statement_text(Stmt::MANY_SETWISE).postgres || port.dialect() != Dialect::postgres) return false;
	if (b.size() < 2) return false;
	std::vector<int64_t> sorted = b.ids;
	std::sort(sorted.begin(), sorted.end());
	if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
	return !port.query(Stmt::MANY_LIMITED, {}).at(0).boolean(0);
}

// The locked rows (in id order), found by instance.
class Locked {
  public:
	explicit Locked(Rows rows) : rows_(std::move(rows)) {
		ids_.reserve(rows_.size());
		for (const Row &r : rows_) ids_.push_back(r.i64(LK_ID));
	}
	// The row of instance id, or nullptr.
	const Row *find(int64_t id) const {
		auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
		return it == ids_.end() || *it != id ? nullptr : &rows_[static_cast<size_t>(it - ids_.begin())];
	}
	// The row of instance id when it is running under the lease epoch.
	const Row *leased_at(int64_t id, int64_t epoch) const {
		const Row *r = find(id);
		if (!r || r->is_null(LK_LEASED) || !r->boolean(LK_LEASED) || r->is_null(LK_EPOCH) || r->i64(LK_EPOCH) != epoch)
			return nullptr;
		return r;
	}

  private:
	Rows rows_;
	std::vector<int64_t> ids_;
};

// Refuses a report whose lease is held by a worker of another role the
// caller may not act for (REPORT_CHECK_OWNER raises 42501), the reports in
// their order, before anything is written; each worker looked up once.
void refuse_other_roles(Port &port, const Batch &b, const Locked &locked) {
	std::vector<std::string> owners;
	for (size_t k = 0; k < b.size(); k++)
		if (const Row *r = locked.leased_at(b.ids[k], b.epochs[k]); r && !r->is_null(LK_OWNER))
			if (std::find(owners.begin(), owners.end(), r->text(LK_OWNER)) == owners.end())
				owners.push_back(r->text(LK_OWNER));
	if (owners.empty()) return;
	Rows others = port.query(Stmt::MANY_OTHERS, {Param::texts(owners), port.caller_role().value_or(0)});
	if (others.empty()) return;
	for (size_t k = 0; k < b.size(); k++) {
		const Row *r = locked.leased_at(b.ids[k], b.epochs[k]);
		if (!r || r->is_null(LK_OWNER)) continue;
		for (const Row &o : others)
			if (!o.is_null(0) && o.text(0) == r->text(LK_OWNER)) {
				port.query(Stmt::REPORT_CHECK_OWNER, {b.ids[k]});
				break;
			}
	}
}

// Whether report k ends its instance with the result as its output (see
// ends above).
bool ends(const Batch &b, const Locked &locked, size_t k) {
	const Row *r = locked.leased_at(b.ids[k], b.epochs[k]);
	if (!r || r->is_null(LK_TOP) || !r->boolean(LK_TOP) || r->is_null(LK_STATE) || r->is_null(LK_HASH)) return false;
	if (!b.native(k) || !b.reports.shallow_outputs[k]) return false;
	const asl::DefinitionPtr def = asl::cached(r->text(LK_HASH));
	return def && asl::success_ends(*def, r->text(LK_STATE));
}

// Writes the ends (MANY_ENDS, MANY_ENDS_LOG): each row by the version
// MANY_LOCK locked, which no one else can have changed since.
void write_ends(Port &port, const Batch &b, const Locked &locked, const std::vector<size_t> &which) {
	std::vector<const void *> tids, outs;
	std::vector<int64_t> ids, epochs;
	std::vector<std::string> states, owners, out_texts(which.size());
	for (size_t k : which) {
		const Row &r = *locked.find(b.ids[k]);
		tids.push_back(r.native(LK_TID));
		if (!tids.back()) throw Error("XX000", "engine: complete_many: a locked row without its version");
		ids.push_back(b.ids[k]);
		epochs.push_back(b.epochs[k]);
		outs.push_back(b.native(k));
		states.push_back(r.text(LK_STATE));
		owners.push_back(r.text(LK_OWNER));
	}
	const int64_t n = static_cast<int64_t>(which.size());
	const int64_t written = port.exec(Stmt::MANY_ENDS, {Param::tids(tids), Param::ints(ids), Param::jsons(out_texts, outs),
														Param::texts(states)});
	if (written != n)
		throw Error("XX000", "engine: complete_many: " + std::to_string(written) + " of " + std::to_string(n) +
								 " locked rows written");
	const int64_t logged = port.exec(Stmt::MANY_ENDS_LOG, {Param::ints(ids), Param::texts(states),
														   Param::jsons(out_texts, outs), Param::texts(owners),
														   Param::ints(epochs)});
	if (logged != 2 * n)
		throw Error("XX000", "engine: complete_many: " + std::to_string(logged) + " log rows for " +
								 std::to_string(n) + " reports");
}

std::vector<ManyOutcome> set_wise(Port &port, const Batch &b) {
	const size_t n = b.size();
	const Locked locked(port.query(Stmt::MANY_LOCK, {Param::ints(b.ids)}));
	refuse_other_roles(port, b, locked);

	// the ends, without a step
	std::vector<char> ended(n, 0);
	std::vector<size_t> end_ks, sw_ks;
	for (size_t k = 0; k < n; k++) {
		if (ends(b, locked, k)) {
			ended[k] = 1;
			end_ks.push_back(k);
		} else
			sw_ks.push_back(k);
	}
	bool terminal = !end_ks.empty(), notify = false;
	if (!end_ks.empty()) write_ends(port, b, locked, end_ks);

	// the others in one statement: each written report by its position
	std::vector<std::optional<ManyOutcome>> written(n);
	if (!sw_ks.empty()) {
		std::vector<int64_t> ids, epochs;
		std::vector<const void *> outs;
		std::vector<std::string> out_texts;
		for (size_t k : sw_ks) {
			ids.push_back(b.ids[k]);
			epochs.push_back(b.epochs[k]);
			outs.push_back(b.native(k));
			// a store without its own values passes the texts
			out_texts.push_back(b.native(k) ? std::string() : b.output_text(port, k));
		}
		std::vector<std::string> open;
		std::optional<int64_t> lease_ms;
		if (b.worker) {
			// the hand-back's check, once for the batch (no queue here has a
			// global_concurrency: set_wise_taken)
			HandbackRoom room = handback_room(port, Handback{*b.worker, *b.queues});
			lease_ms = room.lease_ms;
			if (lease_ms) open = std::move(room.open);
		}
		Rows rows = port.query(Stmt::MANY_SETWISE,
							   {Param::ints(ids), Param::ints(epochs), Param::jsons(out_texts, outs),
								b.worker ? Param(*b.worker) : Param::null(Param::Kind::text),
								b.worker ? Param::texts(open) : Param::null(Param::Kind::text_array), port.now_ms(),
								lease_ms ? Param(*lease_ms) : Param::null(Param::Kind::i64)});
		for (const Row &r : rows) {
			const int64_t pos = r.is_null(SW_K) ? 0 : r.i64(SW_K);
			if (pos < 1 || pos > static_cast<int64_t>(sw_ks.size()) || written[sw_ks[pos - 1]])
				throw Error("XX000", "engine: complete_many: the set-wise statement answered a report twice");
			if (r.is_null(SW_STATUS))
				throw Error("XX000", "engine: complete_many: the set-wise statement answered a report without a status");
			const size_t k = sw_ks[pos - 1];
			ManyOutcome o;
			o.instance_id = b.ids[k];
			o.status = r.text(SW_STATUS);
			if (*o.status == "succeeded")
				terminal = true;
			else if (*o.status == "ready")
				notify = true;
			else if (*o.status == "running")
				o.next = handed_back_row(port, o.instance_id, r, SW_TASK);
			written[k] = std::move(o);
		}
	}
	// a wake-up for the listening workers (no payload: anyone may LISTEN)
	if (notify) port.exec(Stmt::STEP_NOTIFY, {});
	if (terminal) port.exec(Stmt::FLUSH_COMMIT, {"terminal"});

	// the reports left, in their order, one by one; the answers in the order given
	for (size_t k = 0; k < n; k++)
		if (!ended[k] && !written[k]) written[k] = one(port, b, k);
	std::vector<ManyOutcome> out;
	out.reserve(n);
	for (size_t k = 0; k < n; k++) {
		if (ended[k]) {
			ManyOutcome o;
			o.instance_id = b.ids[k];
			o.status = "succeeded";
			out.push_back(std::move(o));
		} else
			out.push_back(std::move(*written[k]));
	}
	return out;
}

}  // namespace

std::vector<ManyOutcome> complete_many(Port &port, const ManyReports &reports, const std::optional<std::string> &worker,
									   const std::optional<std::vector<std::string>> &queues) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	check(reports, worker, queues);
	Batch b{reports, {}, {}, worker, queues};
	b.ids.reserve(reports.instances->size());
	b.epochs.reserve(reports.instances->size());
	for (size_t k = 0; k < reports.instances->size(); k++) {
		b.ids.push_back(*(*reports.instances)[k]);
		b.epochs.push_back(*(*reports.epochs)[k]);
	}
	if (set_wise_taken(port, b)) return set_wise(port, b);
	port.exec(Stmt::MANY_LOCK, {Param::ints(b.ids)});
	std::vector<ManyOutcome> out;
	out.reserve(b.size());
	for (size_t k = 0; k < b.size(); k++) out.push_back(one(port, b, k));
	return out;
}

}  // namespace genroc::engine
