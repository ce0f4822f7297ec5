// report.hpp — a worker's report of a task: genroc.complete, fail,
// complete_and_claim and fail_and_claim (extension/sql/50_workers.sql
// declares them; the semantics are in its comments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// The task a report handed back to its worker, as claim returns it.
struct HandedBack {
	int64_t instance_id = 0, epoch = 0;
	std::optional<std::string> state, resource;
	std::string input;	// JSON text, a stored value loaded
	// the store's own value of input, when it has one (Row::native): what
	// PostgreSQL's entry point returns instead of parsing input again
	const void *input_native = nullptr;
	bool only_once = false;
	std::optional<int64_t> timeout_s;
	int64_t attempt = 0;
	int64_t lease_expires_us = 0;  // since the Unix epoch
	std::string queue;
};

// What complete_and_claim and fail_and_claim return: the instance's new
// status, and the task handed back when the step left it running.
struct ReportResult {
	std::string status;
	std::optional<HandedBack> next;
};

// A task's input from column col of a row that leased it: the JSON text,
// a stored value loaded, and the store's own value when the row has it.
void task_input(Port &port, const Row &r, int col, HandedBack &t);

// The task a report's step just leased to its worker (the instance is
// running), as claim returns it; an OnlyOnce one's claim flushed.
HandedBack handed_back(Port &port, int64_t instance);
// The same from a row that has REPORT_TASK's columns from column `first`
// on (a batch's set-wise statement answers them).
HandedBack handed_back_row(Port &port, int64_t instance, const Row &r, int first);

// genroc.complete(p_instance, p_epoch, p_output): the task's output under
// its lease epoch (output: JSON text); the instance goes on in this
// transaction; returns the new status.  22004 for a null argument, RC003
// for no such instance, RC004 when the instance is not running at that
// epoch, 42501 for a lease of another role's worker (an admin may report).
std::string complete(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
					 const std::optional<std::string> &output);

// genroc.fail(p_instance, p_epoch, p_error, p_cause): the task's error;
// Retry and Catch decide in this transaction (a genroc.HandlerMissing may
// move it to its handler's queue instead); errors as complete's.
std::string fail(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
				 const std::optional<std::string> &error, const std::optional<std::string> &cause);

// genroc.complete_and_claim / fail_and_claim: the report as complete / fail
// makes it, and the instance's next task leased to worker in the same
// transaction when it may take it (handback_lease, steps.hpp).  queues: the
// worker's queues (nullopt for SQL NULL).
ReportResult complete_and_claim(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
								const std::optional<std::string> &output, const std::optional<std::string> &worker,
								const std::optional<std::vector<std::string>> &queues);
ReportResult fail_and_claim(Port &port, std::optional<int64_t> instance, std::optional<int64_t> epoch,
							const std::optional<std::string> &error, const std::optional<std::string> &cause,
							const std::optional<std::string> &worker,
							const std::optional<std::vector<std::string>> &queues);

// The columns of an instance a task's request reads: its state, its
// Retry counts and its state input (a stored value loaded).
struct TaskRow {
	std::optional<std::string> state;
	json retry_counts, state_input;
};
// Reads them (the caller holds the row lock); XX000 when the row is gone.
TaskRow task_row(Port &port, int64_t instance);
// The request that continues a stopped task with its result (op
// "task_succeeded") or error (op "task_failed"); once for both stores,
// called in-process by the reports, composition, the step writer's
// fail_task, control's events and a token's result.
json task_request(const TaskRow &row, const char *op, const json *result, const std::optional<std::string> &error,
				  const std::optional<std::string> &cause);

// One of genroc.complete_many's reports (engine/many.cpp), after its
// arguments were checked and its rows locked: complete's report (no
// worker) or complete_and_claim's (worker and queues), without their
// argument checks and progress commit class.  A report not taken (no such
// instance, a lost lease: nothing written) sets not_taken to its SQLSTATE
// (RC003, RC004; complete_many answers it in the report's row).
ReportResult complete_one_of_many(Port &port, int64_t instance, int64_t epoch, const std::string &output,
								  const std::optional<std::string> &worker,
								  const std::optional<std::vector<std::string>> &queues, std::string &not_taken);

}  // namespace genroc::engine
