/*
 * stop_writer.h — where a step stops, as PostgreSQL writes it: the one SET
 * list of the instance row's position, shared by every statement that
 * writes a stop.  Plain C (macros only), for the engine's statement table:
 * statements_steps.def's STEP_STOP (one step) and statements_many.def's
 * MANY_ENDS and MANY_SETWISE (a batch of reports, set-wise).
 *
 * A statement writes `UPDATE genroc._instances i SET " GENROC_PG_STOP_SET "
 * FROM <source> s WHERE ...`, its source `s` giving engine/steps.hpp's Stop
 * as columns of these names (times are offsets in ms from genroc.now(); a
 * NULL in a "kept" column leaves the row's value):
 *
 *	 status, state			text
 *	 state_input,			jsonb, stored values applied here (NULL: none)
 *	 task_input
 *	 resource				text
 *	 eligible_in			int8 ms (NULL: kept)
 *	 lease_owner			text
 *	 new_epoch				bool: a new lease epoch is drawn
 *	 lease_in				int8 ms (NULL: no lease)
 *	 retry_counts			jsonb
 *	 attempt, interruptions	int (NULL: kept)
 *	 only_once				bool
 *	 timeout_s				int; timeout_in int8 ms (NULL: none)
 *	 heartbeat_s			int
 *	 wait_kind				text; wait_until int8 ms since the epoch
 *	 activity,				text
 *	 activity_token
 *	 ended					bool: output, error, cause and ended_at written
 *	 output					jsonb, stored values applied here
 *	 error, cause			text
 *	 fanout, variables		jsonb (NULL: kept)
 *
 * A source of parameters (a subquery without FROM, STEP_STOP's) is pulled
 * up by the planner: the statement is planned as if the SET list named the
 * parameters, one index lookup of the row.  A source of constants and
 * arrays (MANY_ENDS) folds the constant columns away.  The
 * SQLite store writes its stops through its own STEP_STOP text
 * (statements_steps.def), the same columns.
 */
#ifndef GENROC_STOP_WRITER_H
#define GENROC_STOP_WRITER_H

#define GENROC_PG_STOP_SET \
	"status = s.status, state = s.state, " \
	"state_input = genroc._store_value(s.state_input, 'the state input'), " \
	"task_input = genroc._store_value(s.task_input, 'the task input'), resource = s.resource, " \
	"eligible_at = CASE WHEN s.eligible_in IS NULL THEN i.eligible_at " \
	"ELSE genroc.now() + s.eligible_in * interval '1 millisecond' END, " \
	"lease_owner = s.lease_owner, " \
	"lease_epoch = CASE WHEN s.new_epoch THEN genroc._fencing_epoch(i.lease_epoch) ELSE i.lease_epoch END, " \
	"lease_expires = genroc.now() + s.lease_in * interval '1 millisecond', retry_counts = s.retry_counts, " \
	"attempt = coalesce(s.attempt, i.attempt), interruptions = coalesce(s.interruptions, i.interruptions), " \
	"only_once = s.only_once, timeout_s = s.timeout_s, " \
	"timeout_at = genroc.now() + s.timeout_in * interval '1 millisecond', heartbeat_s = s.heartbeat_s, " \
	"heartbeat_at = NULL, wait_kind = s.wait_kind, wait_until = genroc._from_ms(s.wait_until), " \
	"activity = s.activity, activity_token = s.activity_token, activity_owner = NULL, " \
	"output = CASE WHEN s.ended THEN genroc._store_value(s.output, 'the output') ELSE i.output END, " \
	"error = CASE WHEN s.ended THEN s.error ELSE i.error END, " \
	"cause = CASE WHEN s.ended THEN s.cause ELSE i.cause END, " \
	"updated_at = genroc.now(), ended_at = CASE WHEN s.ended THEN genroc.now() ELSE i.ended_at END, " \
	"fanout = coalesce(s.fanout, i.fanout), variables = coalesce(s.variables, i.variables)"

#endif							/* GENROC_STOP_WRITER_H */
