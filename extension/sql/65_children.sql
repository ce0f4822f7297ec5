/*
 * Composition: child instances for Parallel branches and Map items
 * (no instance runs two branches itself).  An instance is one thread of
 * control; a fan-out parks the
 * parent and creates its children in the same transaction, and the child
 * that ends last wakes the parent in the transaction that ends it.
 *
 * Rows:
 *   parent  status 'waiting', wait_kind 'children', state / state_input /
 *           retry_counts of the Parallel or Map state; fanout =
 *           {kind, gen, total, max_concurrency, tolerated_count,
 *            tolerated_percentage}; wait_until set while a retry back-off
 *           holds the children back (tick lets them go)
 *   child   parent_id, root_id (the top instance), child_index (branch or
 *           item order), child_gen (= the parent's fanout.gen), scope (its
 *           machine in the definition), the parent's definition version,
 *           queue and priority.  Not started yet: status 'waiting',
 *           wait_kind 'pending'.
 *
 * A child is live from its start until it ends; a Map keeps at most
 * max_concurrency children live (0: no limit), starting the next item in
 * the transaction that ends one.  The fan-out fails (op task_failed on the
 * parent, so its Retry and Catch decide) when a branch fails, or when a Map
 * item fails and no tolerance is set, with that child's error; with a
 * tolerance, when the failed items exceed ToleratedFailureCount or
 * ToleratedFailurePercentage of all items, with
 * States.ExceedToleratedFailureThreshold.  Then every live or pending
 * sibling is cancelled (recursively).  A child cancelled from outside
 * counts as failed (genroc.Cancelled).
 *
 * Calls (genroc:call, genroc:call.sync) are a fan-out of one child of
 * another definition (fanout.kind 'call'): the child runs that definition
 * from its top (scope NULL), is its own execution for $$.Execution, gets
 * the queue routing gives its definition with the parent's labels, and
 * keeps parent_id / root_id like any child.  A sync call resumes the
 * parent with the child's output (task_succeeded) or error (task_failed),
 * or fails with States.Timeout at TimeoutSeconds (tick; the child is
 * cancelled); an async call resumes the parent with {"InstanceId": id} in
 * the transaction that starts the child, and the child's end then wakes
 * nobody.  A definition that does not exist fails the task with
 * genroc.DefinitionNotFound; a call nested deeper than 32 calls and
 * fan-outs fails it with genroc.CallDepthExceeded (a definition calling
 * itself without end).
 */

-- The fan-out (genroc._fan_out), its counts (genroc._fanouts:
-- _fanout_row), a child's end (_child_ended), the fan-out's loop
-- (_advance_children), cancelling its children (_cancel_children) and the
-- depth of calls (_depth) are the engine's: engine/children.cpp, called
-- in-process by the step writer, control, redrive and tick.

-- Cancels an instance and every live descendant, children first, with
-- p_cause (its descendants with p_children_cause when given) and error
-- p_error (default genroc.Cancelled; the descendants get that).  No parent is
-- woken and no partition slot handed on: the caller decides what the end
-- means for the parent (children hold no slot; genroc.cancel hands the top
-- instance's on).
CREATE FUNCTION genroc._cancel_tree(p_instance bigint, p_cause text, p_children_cause text DEFAULT NULL,
									p_error text DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'genroc_cancel_tree'
	LANGUAGE C VOLATILE;

