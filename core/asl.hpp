// asl.hpp — genroc's Amazon States Language interpreter, written once.
//
// Both stores use this code: the PostgreSQL C module through the C ABI in
// asl_c.h (JSON text in, JSON text out), the SQLite shim directly.  So the
// ASL semantics (paths, Choice rules, Retry/Catch, Wait deadlines, the
// context object) cannot differ between the stores; what each store writes
// itself is persistence: rows, statuses, leases, queues, time-driven work.
//
// The interpreter is pure: it reads no clock, no database, no environment.
// The caller passes "now" and the context object in; the answer says where
// the instance stops and what the caller must record.
//
// Glossary
//   state input   the raw JSON a state receives (before InputPath)
//   task input    what a Task's worker gets: InputPath then Parameters
//   step          one call: from an event (start, task result, timer) through
//                 every inline state (Pass, Choice, Succeed, Fail, a Wait that
//                 is already due) to the next stop
//   stop          a Task, a Wait in the future, or the end of the instance
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace genroc {

using json = nlohmann::json;

// A genroc condition with its SQLSTATE (core/errors.def, or a standard code).
struct Error : std::runtime_error {
	Error(std::string sqlstate, const std::string &message, std::string detail = {},
		  std::string hint = {})
		: std::runtime_error(message), sqlstate(std::move(sqlstate)),
		  detail(std::move(detail)), hint(std::move(hint)) {}
	std::string sqlstate;
	std::string detail;
	std::string hint;
};

namespace sqlstate {
#define GENROC_ERROR(sym, code, name, meaning) inline constexpr const char *sym = code;
#include "errors.def"
#undef GENROC_ERROR
inline constexpr const char *INVALID_PARAMETER_VALUE = "22023";
inline constexpr const char *NULL_VALUE_NOT_ALLOWED = "22004";
inline constexpr const char *INVALID_DATETIME_FORMAT = "22007";
}  // namespace sqlstate

namespace asl {

// A validated, indexed definition.  Immutable; share it freely.
class Definition;
using DefinitionPtr = std::shared_ptr<const Definition>;

// Validates and indexes a definition.  Throws Error{RC001} whose message
// names the JSON path of the first fault, e.g.
//   "invalid definition at $.States.Check.Choices[1].Next: unknown state \"Nope\"".
DefinitionPtr compile(const json &definition);

// Whether a step of the definition may read the context object $$ (the
// request's "context"): some string of its text names "$$" (JSONPath's
// context, also JSONata's root, taken as if it were) or JSONata's $states
// other than $states.input, $states.result and $states.errorOutput.  When
// it cannot, a store may leave "context" out of its step requests: the
// answer is the same, and the store saves writing the object and the
// interpreter reading it (a fifth of a small step's time).
bool reads_context(const Definition &definition);

// Whether a step of a Parallel branch or Map item of the definition may read
// $$.Execution.Input (the top execution's input, which a store fetches from
// an ancestor's row): some string of its text names "$$" or JSONata's
// $states.context not followed by .Map., .StateMachine., .State. or .Task.
// (the context objects a store does not fetch).  engine/ask.cpp asks it
// before it reads an ancestor's input.
bool reads_execution_input(const Definition &definition);

// A start of the definition that cannot depend on its input: the first
// state is a Task the input reaches unchanged (no InputPath, Parameters or
// Arguments, no timeout or heartbeat read from the input; not genroc:call
// or genroc:event).  Every start then stops at that Task with the input as
// the state input and the task input, and this object holds the rest of
// step's answer: "entered", and the "task" outcome's "state", "resource",
// "timeout_s", "heartbeat_s", "only_once" and "retry_counts" ("delay_ms"
// is 0).  A store may write a batch of starts from it instead of a step
// per input.  Empty: step each start.
const std::optional<json> &start_task(const Definition &definition);
// What step answers to {"op": "start", "input": input} (the top machine),
// composed from start_task without running a step; empty when the
// definition has no start_task.  Throws as step does for an input over
// json_depth.
std::optional<json> start_answer(const Definition &definition, const json &input);

// Whether a task's success at `state`, a Task of the top machine, ends the
// instance with the result as its output and nothing else read or written:
// End, no ResultSelector or Assign, ResultPath and OutputPath absent or
// "$" (JSONata: no Output or Assign).  For a result within json_depth,
// step then answers {"op": "task_succeeded", "state": state, ...} with
// {"entered": [], "outcome": {"kind": "succeeded", "output": result}}
// whatever the rest of the request (the state input, the context, the
// variables), and a store may write that instead of a step.
bool success_ends(const Definition &definition, const std::string &state);

// Runs one step.  `request` and the returned object are described below.
// Throws Error only for a malformed request (a caller bug, SQLSTATE 22023);
// every ASL runtime problem (States.Runtime, States.IntrinsicFailure, a
// ResultPath that does not apply, ...) is an outcome, not an exception.
json step(const Definition &definition, const json &request);

// ISO-8601 UTC text <-> milliseconds since the epoch, as genroc writes and
// reads timestamps everywhere ("2026-11-29T10:20:46.123Z").
std::string format_time(int64_t epoch_ms);
bool parse_time(const std::string &text, int64_t &epoch_ms);  // false if not RFC 3339
// The ISO forms PostgreSQL's timestamptz input takes (the SQLite store's
// clock and time options read them as PostgreSQL would): RFC 3339, a space
// instead of "T", no seconds, a zone as Z, +HH, +HHMM or +HH:MM, none (UTC,
// the session zone PgStore sets), or a date alone (its midnight, UTC).
bool parse_timestamptz(const std::string &text, int64_t &epoch_ms);

}  // namespace asl
}  // namespace genroc

/*
 * The step protocol
 * =================
 *
 * Request (an object):
 *   "op"       "start" | "enter" | "task_succeeded" | "task_failed" |
 *              "timer_fired" | "children_done"
 *   "scope"    optional string, default "" (the top of the definition): the
 *              state machine the request is about.  A Parallel branch or a
 *              Map item processor is a machine of its own, addressed by the
 *              JSON pointer of its object in the definition, e.g.
 *              "/States/P/Branches/1", "/States/M/ItemProcessor" (or
 *              ".../Iterator"), nested: "/States/P/Branches/0/States/M/
 *              ItemProcessor".  State names in a pointer escape ~ as ~0 and
 *              / as ~1.  A child instance runs its parent's definition
 *              version with its own scope.
 *   "now_ms"   integer, milliseconds since the epoch: genroc.now() of the caller
 *   "context"  the context object `$$` as the store knows it:
 *              {"Execution": {"Id", "Input", "Name", "StartTime"},
 *               "StateMachine": {"Id", "Name"},
 *               "Task": {"Token"}}          (Token: pre-generated by the store;
 *                                            used if the step parks at an activity)
 *              The interpreter adds "State": {"Name", "EnteredTime", "RetryCount"}.
 *   op "start":          "input"  the instance input; the step enters StartAt
 *   op "enter":          "state", "state_input": the step enters that state
 *                        with that input, as a transition into it would (a
 *                        failed instance run again from its failed state)
 *   op "task_succeeded": "state", "state_input", "result", "retry_counts",
 *                        "callback": true when the result came by the task's
 *                        token (a .waitForTaskToken task: see "callback" below)
 *   op "task_failed":    "state", "state_input", "error", "cause", "retry_counts"
 *   op "timer_fired":    "state", "state_input"     (a Wait state's time has come)
 *   op "children_done":  "state", "state_input", "outputs", "retry_counts"
 *                        a Parallel or Map state's children all ended well:
 *                        "outputs" is the array of their outputs in branch /
 *                        item order; the state goes on as a task that
 *                        succeeded with that array (ResultSelector,
 *                        ResultPath, OutputPath, Next).  A Parallel or Map
 *                        that fails (a failed branch, too many failed items)
 *                        is reported with op "task_failed" on that state, so
 *                        its Retry and Catch decide.
 *   "retry_counts" is the array the previous outcome returned for that state
 *   (one count per Retry entry); absent means all zero.
 *   "single"   optional boolean: the step runs one state only.  When that
 *              state leaves for another (Next, a Choice rule, a Catch), the
 *              outcome is {"kind": "next", "state": the next state, "output"}
 *              instead of entering it (TestState; no store sends it).
 *   "trace"    optional boolean: the answer carries "trace", an array of one
 *              object per state the step ran, in order: {"state", "type",
 *              and what the state computed: "input" (its raw input, when
 *              entered in this step), "afterInputPath", "afterParameters",
 *              "afterArguments", "afterItemsPath", "afterItemSelector",
 *              "afterItemBatcher", "result" (a Pass's result, a task's or the
 *              children's), "afterResultSelector", "afterResultPath",
 *              "output" (what it hands on, once it left), "errorDetails"
 *              ({"retryIndex", "retryBackoffIntervalSeconds"} or
 *              {"catchIndex"})}, each member present when that stage ran.
 *              TestState's inspection data, and the states' input and output
 *              a history reads back.
 *   "variables" optional object: the instance's variables (Assign) as the
 *              store keeps them; absent or null: none.  A Parallel branch or
 *              Map item starts with its parent's variables at the fan-out
 *              (they read them; validation keeps them from assigning them).
 *
 * Response (an object):
 *   "entered"  array of {"state", "type"} for every state entered in this step,
 *              in order (for the instance log)
 *   "trace"    only when the request asked for it (above)
 *   "variables" present only when an Assign changed them in this step: the
 *              whole object, which the store keeps and hands to the next step
 *   "outcome"  exactly one of:
 *     {"kind": "task", "state", "resource", "state_input", "task_input",
 *      "timeout_s": int|null, "heartbeat_s": int|null, "only_once": bool,
 *      "retry_counts": [int...], "delay_ms": int}
 *         The instance stops at a Task.  delay_ms > 0 when this is a retry:
 *         the task becomes eligible delay_ms after now (Retry back-off with
 *         IntervalSeconds, BackoffRate, MaxDelaySeconds, JitterStrategy).
 *         resource is "handler:NAME", "activity:NAME" or "genroc:noop|fail|sleep"
 *         (genroc:event and genroc:call[.sync] have outcomes of their own).
 *         "token" (a string, or null when the request had no
 *         context.Task.Token) only for a Resource written NAME.waitForTaskToken
 *         (resource is then NAME): the task's token, which the store keeps
 *         with the task; the result that counts arrives by it.
 *     {"kind": "callback", "state"}
 *         The answer to task_succeeded without "callback": true at a
 *         .waitForTaskToken task: its handler returned (its result is not
 *         the task's).  The store parks the instance (status 'waiting',
 *         wait_kind 'callback') with the token it kept, until a
 *         task_succeeded with "callback": true or a task_failed; nothing is
 *         entered, no log row but the store's own.
 *     {"kind": "parallel", "state", "state_input", "retry_counts", "delay_ms",
 *      "branches": [{"scope", "input"}...]}
 *         A Parallel state: the store parks the instance and starts one
 *         child per branch (in branch order) with that scope and input;
 *         delay_ms > 0 on a retry (the children start that much later).
 *     {"kind": "map", "state", "state_input", "retry_counts", "delay_ms",
 *      "items": [{"scope", "input", "index"}...], "max_concurrency": int
 *      (0: no limit), "tolerated_count": int|null,
 *      "tolerated_percentage": number|null}
 *         A Map state with at least one item (ItemsPath, then ItemSelector
 *         or Parameters with $$.Map.Item.Index / .Value); a Map of no items
 *         goes on inline with [].  The store keeps at most max_concurrency
 *         children alive.  An item that fails fails the state with its
 *         error unless a tolerance is set; with one, the state fails with
 *         States.ExceedToleratedFailureThreshold once more than
 *         tolerated_count items (or more than tolerated_percentage of all
 *         items) failed, and a failed item's output is {"Error", "Cause"}.
 *     {"kind": "event", "state", "state_input", "name", "timeout_s": int|null,
 *      "retry_counts", "delay_ms"}
 *         A Task with "Resource": "genroc:event": the instance parks until
 *         an event of that name (the "Name" of the task input, after
 *         Parameters) is emitted to it; the store resumes the state with
 *         task_succeeded and the event's payload as the result, or with
 *         task_failed States.Timeout once timeout_s has passed.
 *     {"kind": "call", "state", "state_input", "definition", "version": int|null,
 *      "input", "name": text|null, "sync": bool, "timeout_s": int|null,
 *      "retry_counts", "delay_ms"}
 *         A Task with "Resource": "genroc:call" or "genroc:call.sync": start
 *         a child instance of another definition (the task input, after
 *         Parameters, is {"Definition": name, "Version": n, "Input": any,
 *         "Name": text}; only Definition is required; Version absent means
 *         the latest, Input absent means {}).  A bad shape is States.Runtime.
 *         The store resumes the state with task_succeeded and
 *         {"InstanceId": id} as soon as the child started (call), or with the
 *         child's output once it succeeded (call.sync); a sync call fails
 *         with the child's error and cause, with States.Timeout once
 *         timeout_s (sync only) has passed, or, when the definition does not
 *         exist, genroc.DefinitionNotFound (Retry and Catch decide).
 *         delay_ms > 0 on a retry: the child starts that much later.
 *     {"kind": "wait", "state", "state_input", "until_ms": int}
 *         A Wait state whose deadline is in the future (a due one runs inline).
 *     {"kind": "next", "state", "output"}
 *         Only with "single": the state ran and leads to "state".
 *     {"kind": "succeeded", "output"}
 *     {"kind": "failed", "error", "cause", "state", "state_input"}
 *         state: where the instance failed (the Fail state, the Task whose
 *         error nobody caught, ...), state_input: that state's raw input
 *
 * Retry and Catch (op "task_failed"): retriers are tried in order; the first
 * whose ErrorEquals matches decides: if its count < MaxAttempts the outcome is
 * the same task again with that count + 1 and a delay; otherwise (and when no
 * retrier matches) the catchers are tried in order; a matching catcher puts
 * {"Error", "Cause"} into the state input at its ResultPath and the step goes
 * on at its Next; with no catcher the outcome is "failed" with the error.
 * States.ALL matches every error but States.Runtime.  States.Timeout,
 * States.HeartbeatTimeout, only_once.interrupted and genroc.Interrupted are
 * ordinary errors here: the store reports them as task_failed and Retry/Catch
 * decide.  genroc.HandlerMissing skips the retriers (a task that reached a
 * worker without its handler fails without retries: another worker's retry
 * would meet the same missing handler); Catch applies.
 *
 * Details the protocol above leaves open, as the interpreter settles them:
 *   - States.Runtime (a path that selects nothing, a bad SecondsPath value, a
 *     loop of more than 10000 inline states in one step) always fails the
 *     instance: neither Retry nor Catch sees it, not even when named.
 *   - ErrorEquals "States.Timeout" also matches States.HeartbeatTimeout;
 *     "States.TaskFailed" matches every error but those two (and Runtime).
 *   - An error while building a Task's input (Parameters, an intrinsic,
 *     TimeoutSecondsPath) goes to Catch only: there is nothing to retry.  An
 *     error while processing its result (ResultSelector, ResultPath,
 *     OutputPath) goes through Retry (the task runs again) and Catch.
 *   - A catcher's output is {"Error": ..., "Cause": ...} at its ResultPath;
 *     "Cause" is left out when the failure had none.
 *   - "failed" has "error"/"cause" null when a Fail state names none.
 *   - now_ms must lie in the years 0000-9999 (22023 otherwise).
 *   - JSONata states (QueryLanguage): an expression that fails or gives no
 *     value (undefined) is States.QueryEvaluationError, which Retry and
 *     Catch see like any States.* error but States.Runtime.
 *   - Assign: every value is evaluated against the variables the state
 *     found, and the state's Output / OutputPath too; the new values apply
 *     when the state leaves (JSONPath: `$` in Assign is the state's result
 *     after ResultSelector; for Pass its result, for Choice and Wait the
 *     input after InputPath, in a catcher the error output).
 */
