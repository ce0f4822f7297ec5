// sqlite_schema.hpp — the shim's tables, created on open when missing.
//
// They mirror the extension's tables in spirit: one row per definition
// version, per instance (its status, where it stands, its lease), per waiting
// activity, per worker, and the instance log.  Times are integers:
// milliseconds since the epoch, UTC (genroc.now() of the operation), so
// comparisons are plain integer comparisons; the API returns them as ISO text.
#pragma once

namespace genroc::sqlite {

// Bumped when the tables change.  A file of an older version is brought up
// to date on open by the steps in MIGRATIONS; a newer or unknown one is
// refused rather than misread.
//   1  the engine's tables
//   2  + partition_rate_limit (queues, queue_starts)
//   3  + tokens (API tokens, docs/security.md "Authentication")
//   4  + workers.session_pid (the process holding the worker's lock file)
//   5  + tickers (who ticks, as the extension's genroc._tickers)
//   6  + instances.variables (ASL Assign, as the extension's column)
//   7  + workers.drain_requested_at (worker_drain)
//   8  instances: the same columns, the large values last (REORDER_INSTANCES)
//   9  instances: the CHECKs on status and wait_kind without IN lists (the
//      same remaking of the table)
//  10  + definitions.source (the text a version was written as)
//  11  instances: wait_kind 'callback' (a .waitForTaskToken task waiting
//      for its token; the same remaking of the table)
//  12  + aliases, deletions (ALIASES_SQL)
inline constexpr int SCHEMA_VERSION = 12;

inline constexpr const char *SCHEMA_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS definitions (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT NOT NULL CHECK (name <> ''),
	version    INTEGER NOT NULL CHECK (version > 0),
	definition TEXT NOT NULL,		-- canonical JSON text (sorted keys): same content, same text
	created_at INTEGER NOT NULL,
	source     TEXT,				-- the text as written (NULL: not given)
	UNIQUE (name, version),
	UNIQUE (name, definition)
);

-- One execution; the columns are the extension's genroc._instances:
--   where it is      status, state, state_input, task_input/resource
--   when it may run  queue, priority, eligible_at (claim order and delay)
--   lease            lease_owner, lease_epoch (bumped on every claim), lease_expires
--   attempts         retry_counts, attempt (their sum), interruptions, only_once
--   deadlines        timeout_s/timeout_at, heartbeat_s/heartbeat_at,
--                    wait_kind/wait_until (timer or delayed start)
--   activity         activity (NAME), activity_token, activity_owner
-- The small columns come first and the values that may be large last
-- (schema 8): SQLite reads a row's columns in order, and a column stored
-- after a value that spilled onto overflow pages is reached by walking
-- those pages.  A Map parent's input and state_input hold its items (each
-- item's end reads its parent's status, wait_kind and fanout): before, at
-- 100,000 items, every end walked some 150 pages of them.
-- The CHECKs on status and wait_kind are chains of comparisons, not IN
-- lists (schema 9): SQLite builds an IN list of more than two constants
-- into a temporary b-tree, with its own page cache, every time a write
-- checks it, which cost more than the rest of a step's update.
CREATE TABLE IF NOT EXISTS instances (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	definition_id   INTEGER NOT NULL REFERENCES definitions (id),
	status          TEXT NOT NULL CHECK (status = 'queued' OR status = 'ready' OR status = 'running' OR
										 status = 'waiting' OR status = 'succeeded' OR status = 'failed' OR
										 status = 'cancelled'),
	state           TEXT,
	resource        TEXT,
	queue           TEXT NOT NULL DEFAULT 'default',
	priority        INTEGER NOT NULL DEFAULT 0,
	eligible_at     INTEGER NOT NULL,
	lease_owner     TEXT,
	lease_epoch     INTEGER NOT NULL DEFAULT 0,
	lease_expires   INTEGER,
	retry_counts    TEXT,
	attempt         INTEGER NOT NULL DEFAULT 0,
	interruptions   INTEGER NOT NULL DEFAULT 0,
	only_once       INTEGER NOT NULL DEFAULT 0,
	timeout_s       INTEGER,
	timeout_at      INTEGER,
	heartbeat_s     INTEGER,
	heartbeat_at    INTEGER,
	wait_kind       TEXT CHECK (wait_kind = 'timer' OR wait_kind = 'run_at' OR wait_kind = 'activity' OR
								wait_kind = 'children' OR wait_kind = 'pending' OR wait_kind = 'event' OR
								wait_kind = 'callback'),
	wait_until      INTEGER,
	activity        TEXT,
	activity_token  TEXT UNIQUE,
	activity_owner  TEXT,
	idempotency_key TEXT UNIQUE,
	partition_key   TEXT,
	name            TEXT,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL,
	ended_at        INTEGER,
	-- composition, as the extension (10_tables.sql, 65_children.sql)
	parent_id       INTEGER REFERENCES instances (id),
	root_id         INTEGER REFERENCES instances (id),
	child_index     INTEGER,
	child_gen       INTEGER,
	scope           TEXT,
	fanout          TEXT,
	-- the values, last: each may be large
	labels          TEXT NOT NULL DEFAULT '{}',
	error           TEXT,
	cause           TEXT,
	variables       TEXT,
	task_input      TEXT,
	output          TEXT,
	state_input     TEXT,
	input           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS instances_parent ON instances (parent_id, child_gen, child_index)
	WHERE parent_id IS NOT NULL;

-- Events kept for a later genroc:event wait, as genroc._events (68_events.sql).
CREATE TABLE IF NOT EXISTS events (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	instance_id INTEGER NOT NULL REFERENCES instances (id),
	name        TEXT NOT NULL,
	payload     TEXT NOT NULL,
	at          INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_instance ON events (instance_id, name, seq);
CREATE INDEX IF NOT EXISTS instances_claim ON instances (queue, priority, eligible_at, id) WHERE status = 'ready';
CREATE INDEX IF NOT EXISTS instances_activity ON instances (activity, priority, eligible_at, id)
	WHERE status = 'waiting' AND wait_kind = 'activity' AND activity_owner IS NULL;
CREATE INDEX IF NOT EXISTS instances_wait ON instances (wait_until) WHERE status = 'waiting' AND wait_kind IN ('timer', 'run_at');
CREATE INDEX IF NOT EXISTS instances_lease ON instances (lease_expires) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS instances_lease_owner ON instances (lease_owner) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS instances_timeout ON instances (timeout_at) WHERE timeout_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS instances_heartbeat ON instances (heartbeat_at) WHERE heartbeat_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS instances_status ON instances (status, id);

-- The worker registry: one row per worker id, kept after a stop so a
-- restart can find its own leases.  session_pid: the pid of the process
-- that registered it, holding the worker's lock file
-- (SqliteStore's WorkerHost); NULL: it held none, so only the heartbeat
-- tells whether it is alive.
CREATE TABLE IF NOT EXISTS workers (
	id             TEXT PRIMARY KEY CHECK (id <> ''),
	host           TEXT NOT NULL,
	lease_ms       INTEGER NOT NULL,
	stale_after_ms INTEGER NOT NULL,
	queues         TEXT NOT NULL,		-- JSON array of strings
	concurrency    INTEGER CHECK (concurrency > 0),
	durability     TEXT NOT NULL DEFAULT 'essential',	-- the level of the store that registered
	started_at     INTEGER NOT NULL,
	heartbeat_at   INTEGER NOT NULL,
	stopped_at     INTEGER,
	session_pid    INTEGER,
	drain_requested_at INTEGER		-- worker_drain; cleared when the id registers again
);

-- Each instance's history, oldest first by seq (one sequence for all, as
-- the extension's identity column).
CREATE TABLE IF NOT EXISTS log (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	instance_id INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	event       TEXT NOT NULL,
	state       TEXT,
	detail      TEXT
);
CREATE INDEX IF NOT EXISTS log_instance ON log (instance_id, seq);

-- Queues, as the extension's genroc._queues (55_queues.sql): operator
-- configuration; NULL limits take the default queue's, then the built-in
-- ones.  position: routed queues are tried in creation order.
CREATE TABLE IF NOT EXISTS queues (
	name                  TEXT PRIMARY KEY CHECK (name <> '' AND instr(name, '.') = 0),
	kind                  TEXT NOT NULL CHECK (kind IN ('default', 'tenant', 'handler', 'routed')),
	position              INTEGER NOT NULL,
	handler               TEXT UNIQUE,
	match                 TEXT,		-- JSON object, routed queues only
	global_concurrency    INTEGER CHECK (global_concurrency >= 0),
	partition_concurrency INTEGER CHECK (partition_concurrency >= 1),
	rate_limit            INTEGER CHECK (rate_limit >= 1),
	rate_period_ms        INTEGER,
	partition_rate_limit  INTEGER CHECK (partition_rate_limit >= 1),
	partition_rate_period_ms INTEGER,
	updated_at            INTEGER NOT NULL
);
INSERT OR IGNORE INTO queues (name, kind, position, updated_at) VALUES ('default', 'default', 1, 0);

-- Task starts of rate-limited queues (the sliding windows of rate_limit
-- and partition_rate_limit).
CREATE TABLE IF NOT EXISTS queue_starts (
	queue         TEXT NOT NULL,
	at            INTEGER NOT NULL,
	partition_key TEXT
);
CREATE INDEX IF NOT EXISTS queue_starts_queue ON queue_starts (queue, at);
CREATE INDEX IF NOT EXISTS queue_starts_partition ON queue_starts (queue, partition_key, at)
	WHERE partition_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS instances_partition ON instances (queue, partition_key, status)
	WHERE partition_key IS NOT NULL;
)SQL";

// API tokens, as the extension's genroc._tokens (80_tokens.sql): the sha256
// of the token text (hex), never the text; permissions a sorted JSON array.
inline constexpr const char *TOKENS_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS tokens (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL CHECK (name <> ''),
	hash        TEXT NOT NULL,
	permissions TEXT NOT NULL,
	created_by  TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	revoked_at  INTEGER
);
)SQL";

// Who called tick, as the extension's genroc._tickers (10_tables.sql):
// kind 'binary' (a worker: "genroc worker <id>") or 'session'; times in ms.
inline constexpr const char *TICKERS_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS tickers (
	ticked_by     TEXT PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('ticker', 'binary', 'session')),
	role          TEXT NOT NULL,
	first_tick_at INTEGER NOT NULL,
	last_tick_at  INTEGER NOT NULL,
	ticks         INTEGER NOT NULL DEFAULT 1
);
)SQL";

// 7 -> 8: the instances table again, its columns in the order above
// (and 8 -> 9, its CHECKs as above).  SQLite can neither move a column nor
// change a CHECK, so the table is made anew: the old one is
// renamed (legacy_alter_table: the references to "instances" in log,
// events, fanouts and in its own parent_id / root_id keep that name instead
// of following the rename), the new one made by SCHEMA_SQL (its CREATE
// INDEX statements are skipped while the old table holds those names), the
// rows copied by name with the AUTOINCREMENT counter (an id of a pruned
// instance is never given again), the old table dropped with its indexes,
// and the indexes made again by SCHEMA_SQL and LATER_INDEXES_SQL.
// SqliteStore::migrate runs it with foreign keys off (a DROP TABLE would
// otherwise delete the log rows through their ON DELETE CASCADE) and checks
// them (PRAGMA foreign_key_check) before the commit.
inline constexpr const char *REORDER_INSTANCES = "-- rebuild: see REORDER_INSTANCES";
inline constexpr const char *REORDER_INSTANCES_BEFORE = R"SQL(
PRAGMA legacy_alter_table = ON;
ALTER TABLE instances RENAME TO instances_old;
PRAGMA legacy_alter_table = OFF;
)SQL";
inline constexpr const char *REORDER_INSTANCES_COPY = R"SQL(
INSERT INTO instances (id, definition_id, status, state, resource, queue, priority, eligible_at,
	lease_owner, lease_epoch, lease_expires, retry_counts, attempt, interruptions, only_once,
	timeout_s, timeout_at, heartbeat_s, heartbeat_at, wait_kind, wait_until, activity,
	activity_token, activity_owner, idempotency_key, partition_key, name, created_at, updated_at,
	ended_at, parent_id, root_id, child_index, child_gen, scope, fanout, labels, error, cause,
	variables, task_input, output, state_input, input)
SELECT id, definition_id, status, state, resource, queue, priority, eligible_at,
	lease_owner, lease_epoch, lease_expires, retry_counts, attempt, interruptions, only_once,
	timeout_s, timeout_at, heartbeat_s, heartbeat_at, wait_kind, wait_until, activity,
	activity_token, activity_owner, idempotency_key, partition_key, name, created_at, updated_at,
	ended_at, parent_id, root_id, child_index, child_gen, scope, fanout, labels, error, cause,
	variables, task_input, output, state_input, input
FROM instances_old ORDER BY id;
DELETE FROM sqlite_sequence WHERE name = 'instances';
INSERT INTO sqlite_sequence (name, seq) SELECT 'instances', seq FROM sqlite_sequence WHERE name = 'instances_old';
DROP TABLE instances_old;
)SQL";

// A definition's aliases and the deletions of definitions and versions, as
// the extension's genroc._aliases and genroc._deletions (32_aliases.sql):
// routing [{"version": n, "weight": w}, ...] as JSON text; a deletion's
// version 0 is the whole name.
inline constexpr const char *ALIASES_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS aliases (
	name        TEXT NOT NULL,
	alias       TEXT NOT NULL,
	routing     TEXT NOT NULL,
	description TEXT,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (name, alias)
);
CREATE TABLE IF NOT EXISTS deletions (
	name       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	deleted_at INTEGER NOT NULL,
	PRIMARY KEY (name, version)
);
)SQL";

// MIGRATIONS[v - 1] brings a file of schema version v to v + 1 (the
// tables above are what a new file gets; these change an existing one to
// match them).
inline constexpr const char *MIGRATIONS[] = {
	// 1 -> 2: partition_rate_limit
	R"SQL(
ALTER TABLE queues ADD COLUMN partition_rate_limit INTEGER CHECK (partition_rate_limit >= 1);
ALTER TABLE queues ADD COLUMN partition_rate_period_ms INTEGER;
ALTER TABLE queue_starts ADD COLUMN partition_key TEXT;
CREATE INDEX IF NOT EXISTS queue_starts_partition ON queue_starts (queue, partition_key, at)
	WHERE partition_key IS NOT NULL;
)SQL",
	TOKENS_SQL,	 // 2 -> 3
	// 3 -> 4: a worker's lock file
	"ALTER TABLE workers ADD COLUMN session_pid INTEGER;",
	TICKERS_SQL,  // 4 -> 5
	// 5 -> 6: the ASL variables
	"ALTER TABLE instances ADD COLUMN variables TEXT;",
	// 6 -> 7: drain requests
	"ALTER TABLE workers ADD COLUMN drain_requested_at INTEGER;",
	// 7 -> 8: the instances table in its new column order
	REORDER_INSTANCES,
	// 8 -> 9: the instances table with its CHECKs as comparisons
	REORDER_INSTANCES,
	// 9 -> 10: a definition's text as written
	"ALTER TABLE definitions ADD COLUMN source TEXT;",
	// 10 -> 11: wait_kind 'callback'
	REORDER_INSTANCES,
	ALIASES_SQL,  // 11 -> 12
};
static_assert(sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]) == SCHEMA_VERSION - 1);

// Indexes and tables added after files existed: created on every open for
// writing when missing (an index changes no row, and a table that starts
// empty changes none either, so they need no schema version of their own).
//   instances_root   a tree by its root (list_instances root, prune), and
//                    the foreign key check when an instance is deleted
//   instances_ended  prune: concluded top-level instances, oldest end first
//   log_at           prune: log rows past the retention, oldest first
//   fanouts          the counts of a parent's current fan-out, as the
//                    extension's genroc._fanouts (10_tables.sql): next_index
//                    (the children below it were started, or ended while
//                    pending), live, pending, succeeded, failed; a fan-out
//                    without its row (begun before the table existed) gets
//                    it from its children when it next moves
//   objects          large values stored once, as the extension's
//                    genroc._objects (15_objects.sql): hash (sha256 of the
//                    JSON text, hex), value (that text), bytes, created_at,
//                    check_at (collection's next look), unused_since; a
//                    column or log payload holds {"genroc:object":"<hash>"}
//                    instead, found by the *_obj_* indexes (an update only
//                    evaluates their predicates)
inline constexpr const char *LATER_INDEXES_SQL = R"SQL(
CREATE TABLE IF NOT EXISTS objects (
	hash         TEXT PRIMARY KEY,
	value        TEXT NOT NULL,
	bytes        INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	check_at     INTEGER NOT NULL,
	unused_since INTEGER
);
CREATE INDEX IF NOT EXISTS objects_check ON objects (check_at);
CREATE INDEX IF NOT EXISTS instances_obj_input ON instances (substr(input, 19, 64))
	WHERE substr(input, 1, 18) = '{"genroc:object":"';
CREATE INDEX IF NOT EXISTS instances_obj_state_input ON instances (substr(state_input, 19, 64))
	WHERE substr(state_input, 1, 18) = '{"genroc:object":"';
CREATE INDEX IF NOT EXISTS instances_obj_task_input ON instances (substr(task_input, 19, 64))
	WHERE substr(task_input, 1, 18) = '{"genroc:object":"';
CREATE INDEX IF NOT EXISTS instances_obj_output ON instances (substr(output, 19, 64))
	WHERE substr(output, 1, 18) = '{"genroc:object":"';
CREATE INDEX IF NOT EXISTS log_obj_input ON log (json_extract(detail, '$.input."genroc:object"'))
	WHERE instr(detail, '"genroc:object"') > 0;
CREATE INDEX IF NOT EXISTS log_obj_output ON log (json_extract(detail, '$.output."genroc:object"'))
	WHERE instr(detail, '"genroc:object"') > 0;
CREATE INDEX IF NOT EXISTS log_obj_payload ON log (json_extract(detail, '$.payload."genroc:object"'))
	WHERE instr(detail, '"genroc:object"') > 0;
CREATE TABLE IF NOT EXISTS fanouts (
	parent_id  INTEGER PRIMARY KEY REFERENCES instances (id),
	gen        INTEGER NOT NULL,
	total      INTEGER NOT NULL,
	next_index INTEGER NOT NULL,
	live       INTEGER NOT NULL,
	pending    INTEGER NOT NULL,
	succeeded  INTEGER NOT NULL,
	failed     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS instances_root ON instances (root_id) WHERE root_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS instances_ended ON instances (ended_at) WHERE parent_id IS NULL AND ended_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS log_at ON log (at);
)SQL";

}  // namespace genroc::sqlite
