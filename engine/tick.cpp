// tick.cpp — genroc.tick (engine/tick.hpp), once for both stores.
//
// The step (apply_step), a lapse (interrupt) and a failed task (fail_task:
// engine/steps.cpp), the first step (admit,
// engine/admission.cpp), a sync call's child given up and the fan-out's loop
// (engine/children.cpp) are called in-process.
#include "admission.hpp"
#include "children.hpp"
#include "errors.hpp"
#include "retention.hpp"
#include "steps.hpp"
#include "tick.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

void tick_log(Port &port, int64_t id, const char *event, const std::optional<std::string> &state) {
	port.exec(Stmt::LOG_ROW, {id, event, state, Param::null(Param::Kind::json), port.now_ms()});
}

// Who ticked (genroc.tickers).
void record(Port &port, int64_t now) {
	Rows who = port.query(Stmt::TICK_WHO, {});
	const Row &w = who.at(0);
	port.exec(Stmt::TICKER_TOUCH, {w.text(0), w.text(1), w.text(2), now});
	port.exec(Stmt::TICKERS_EXPIRE, {now});
}

}  // namespace

std::string tick(Port &port, std::optional<int64_t> limit) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	const int64_t n = checked_limit(limit);
	const int64_t now = port.now_ms();
	int64_t timeouts = 0, heartbeats = 0, lapsed = 0, timers = 0, run_at = 0;

	for (const Row &r : port.query(Stmt::TICK_TIMEOUTS, {now, n})) {
		const int64_t id = r.i64(0);
		const std::string state = r.otext(2).value_or(""), seconds = r.otext(3).value_or("");
		if (r.otext(1) == std::optional<std::string>("children"))  // a sync call: its child is given up
			cancel_children(port, id, "state \"" + state + "\" timed out after " + seconds + " seconds");
		fail_task(port, id, "States.Timeout", "task \"" + state + "\" did not finish within " + seconds + " seconds");
		timeouts++;
	}

	for (const Row &r : port.query(Stmt::TICK_HEARTBEATS, {now, n})) {
		const bool callback = r.otext(1) == std::optional<std::string>("callback");
		const std::string seconds = r.otext(4).value_or("");
		fail_task(port, r.i64(0), "States.HeartbeatTimeout",
				  (callback ? "task \"" + r.otext(2).value_or("") : "activity \"" + r.otext(3).value_or("")) +
					  "\" sent no heartbeat within " + seconds + " seconds");
		heartbeats++;
	}

	for (const Row &r : port.query(Stmt::TICK_LAPSED, {now, n})) {
		interrupt(port, r.i64(0), "lease lapsed");
		lapsed++;
	}

	for (const Row &r : port.query(Stmt::TICK_TIMERS, {now, n})) {
		const int64_t id = r.i64(0);
		const std::optional<std::string> state = r.otext(1);
		tick_log(port, id, "wait_ended", state);
		// the state's input as the store has it (a stored value loaded)
		apply_step(port, id,
				   json{{"op", "timer_fired"},
						{"state", state ? json(*state) : json()},
						{"state_input", parse_json(instance_inputs(port, id).first, "the state input")}});
		timers++;
	}
	// a retried Parallel or Map whose back-off is over counts as a timer:
	// its children start
	for (const Row &r : port.query(Stmt::TICK_CHILDREN, {now, n})) {
		port.exec(Stmt::TICK_CHILDREN_CLEAR, {r.i64(0)});
		advance_children(port, r.i64(0));
		timers++;
	}

	for (const Row &r : port.query(Stmt::TICK_RUN_AT, {now, n})) {
		tick_log(port, r.i64(0), "run_at_reached", std::nullopt);
		admit(port, r.i64(0));	// waits for a partition slot if it has one
		run_at++;
	}

	// retention deletes everyone's rows: only an administering role's
	// settings count; another role's tick prunes nothing
	const RetentionSettings s = retention_settings(port);
	Pruned pruned;
	if (s.admin)
		pruned = prune_rows(port, Retention::of_us(s.log_retention_us), Retention::of_us(s.instance_retention_us), n,
							s.object_grace_us);
	else
		pruned.objects = collect_objects(port, std::max<int64_t>(s.object_grace_us, int64_t(3600) * 1'000'000), n);

	record(port, now);
	return json{{"timeouts", timeouts},
				{"heartbeats", heartbeats},
				{"lapsed", lapsed},
				{"timers", timers},
				{"run_at", run_at},
				{"pruned_log_rows", pruned.log_rows},
				{"pruned_instances", pruned.instances},
				{"collected_objects", pruned.objects}}
		.dump();
}

}  // namespace genroc::engine
