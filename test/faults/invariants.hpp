// invariants.hpp — what must hold after any fault, checked in SQL on either
// store by the same queries (the table names differ: genroc._instances /
// genroc._log on PostgreSQL, instances / log in the SQLite file).
//
//   acknowledged  every start the driver saw acknowledged exists
//   not stuck     every live instance has something that moves it on: a
//                 ready task, a lease, a timer, a parked activity or event,
//                 live children (a pending Map item: a parent waiting on its
//                 children), a live instance of its partition (queued)
//   one success   per scheduling of a state (task_scheduled in the log), at
//                 most one recorded task_succeeded
//   once          every OnlyOnce effect (a line "INSTANCE STATE" that the
//                 handler appends to the effects file) happened at most once
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace genroc::faults {

struct InvariantInput {
	std::set<int64_t> acknowledged;	// starts the driver saw acknowledged
	bool check_acknowledged = true;	// false where the level may lose them (none)
	std::string effects_file;		// "" = no OnlyOnce effects in this test
	bool check_once = true;			// false where the level allows a rerun (none)
};

// One line per violation (empty: all hold).  `database` is what --database
// takes: a postgres URL or a SQLite file.  Throws std::runtime_error when
// the database cannot be read.
std::vector<std::string> check_invariants(const std::string &database, const InvariantInput &in);

// The live instances (not ended), for a bounded wait before the check.
int64_t live_instances(const std::string &database);

// Runs one query on either store; rows of text columns (NULL as "").
std::vector<std::vector<std::string>> query_rows(const std::string &database, const std::string &sql);

// The query with {I} / {L} replaced by the store's instance and log tables.
std::string for_store(const std::string &database, const std::string &sql);

}  // namespace genroc::faults
