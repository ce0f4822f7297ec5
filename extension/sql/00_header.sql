/*
 * genroc — a durable process engine inside PostgreSQL.
 *
 * This script is built from the parts in extension/sql/, in file-name order.
 *
 * The API in one page (README.md has every signature and error):
 *
 *   define(name, definition)      validate an ASL state machine; store a new
 *                                 version only when the content changed
 *   start(definition, input, options)
 *                                 create an instance and run its inline states
 *                                 (Pass, Choice, Succeed, Fail, due Waits) in
 *                                 this transaction; it stops at a Task, a
 *                                 future Wait or its end
 *   worker_register / worker_heartbeat / worker_stop
 *                                 the worker registry: one live holder per id
 *   claim(worker, queues, n)      lease ready tasks to a worker (new epoch each)
 *   renew / release               extend or give back leases
 *   complete / fail               report a task under its lease epoch; the
 *                                 instance goes on in the same transaction
 *   complete_and_claim / fail_and_claim
 *                                 the same, the next task handed back
 *   start_many / complete_many    many starts or reports in one transaction
 *   claim_activity / activity_succeed / activity_fail / activity_heartbeat
 *                                 external tasks, addressed by a task token
 *   cancel(instance)              end a live instance
 *   tick(limit)                   everything time does: timers, delayed
 *                                 starts, timeouts, heartbeats, lapsed leases,
 *                                 pruning by the retention settings
 *   prune(log_retention, instance_retention, limit)
 *                                 delete old log rows and concluded trees
 *   get_instance / list_instances / history / list_definitions / list_workers
 *                                 reading; views genroc.instances, genroc.workers
 *   token_create / token_verify / token_list / token_revoke
 *                                 the HTTP API's credentials (hashed), not
 *                                 granted to PUBLIC
 *
 * How it is split: the ASL interpreter (C++, core/, shared with the SQLite
 * shim) answers "where does this instance stop now"; the C module bridges to
 * it (genroc._step); the PL/pgSQL here keeps the rows: statuses, leases and
 * epochs, tokens, deadlines, the log.  The step writer (engine/steps.cpp) is where an
 * interpreter answer becomes a row update, so every transition looks the
 * same; start_many and complete_many write their common outcomes set-wise as
 * it would (regress start_many and complete_many compare every row and log
 * line with start's and complete's) and send the others through it.
 *
 * The SQLite store (store/sqlite/) copies these semantics one for one; the
 * comments marked "Semantics:" are the contract it follows.
 *
 * Privileges: tables and genroc._* helpers are private.  Public functions are
 * SECURITY DEFINER (callers must not touch the tables) with a fixed
 * search_path.  PUBLIC gets nothing: the capability group roles
 * genroc_admin, genroc_operator, genroc_worker and genroc_user get EXECUTE
 * on what they may call (99_privileges.sql), and the functions check
 * ownership of definitions, instances and worker ids (12_roles.sql).
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION genroc" to load this file. \quit
