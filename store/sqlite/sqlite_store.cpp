// sqlite_store.cpp — the engine on one SQLite file: every genroc.* operation
// of the SQL API, one for one with the extension (extension/sql/*.sql).
//
// The ASL semantics are not here: each transition asks genroc::asl::step
// (core/) where the instance stops, exactly as the extension's C module does,
// and this file records the answer the way genroc._apply_step does
// (statuses, leases and epochs, activities, timers, the instance log).
// Every write operation is one BEGIN IMMEDIATE transaction, so several
// processes may share the file: SQLite lets one writer in at a time and
// busy_timeout makes the others wait (the extension's row locks and SKIP
// LOCKED have nothing to skip here: a writer sees every row).
//
// Each method names the PL/pgSQL function it mirrors; "Semantics" comments
// there are the specification, kept in sync by the conformance suite.
//
// Glossary
//   op        one Store method call = one transaction
//   stop      where the interpreter left the instance: a task (ready for a
//             worker, or parked for an activity worker), a timer, or the end
//   lease     lease_owner + lease_epoch + lease_expires on a running
//             instance; every claim draws a new random epoch (new_epoch),
//             complete/fail quote it
//   lapse     a lease that expired without renew: the task runs again (or,
//             OnlyOnce, fails with only_once.interrupted)
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <regex>
#include <thread>
#include <tuple>
#include <type_traits>

#include "admin.hpp"
#include "admission.hpp"
#include "callbacks.hpp"
#include "claim.hpp"
#include "control.hpp"
#include "digest.hpp"
#include "aliases.hpp"
#include "engine.hpp"
#include "engine/metrics.hpp"
#include "objects.hpp"
#include "tokens.hpp"
#include "engine/queue_rules.hpp"
#include "redrive.hpp"
#include "many.hpp"
#include "report.hpp"
#include "instances.hpp"
#include "retention.hpp"
#include "tick.hpp"
#include "steps.hpp"
#include "start.hpp"
#include "values.hpp"
#include "limits.hpp"
#include "sqlite_db.hpp"
#include "sqlite_port.hpp"
#include "sqlite_schema.hpp"
#include "sqlite_store.hpp"

namespace genroc {
namespace {

using sqlite::Db;
using sqlite::Durability;
using sqlite::Query;

int64_t system_now_ms() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(
			   std::chrono::system_clock::now().time_since_epoch())
		.count();
}

std::string iso(int64_t ms) { return asl::format_time(ms); }
json text_or_null(const std::optional<std::string> &s) { return s ? json(*s) : json(nullptr); }

// A new lease epoch (genroc._fencing_epoch): random in 1 .. 2^63-1 and not
// `previous`.  A counter would hand the same epoch out again after a power
// loss took an unsynced claim (at essential a claim is not synced), and a
// worker still holding the lost lease could then report with it.
int64_t new_epoch(int64_t previous) {
	for (;;) {
		uint64_t bits = 0;
		if (RAND_bytes(reinterpret_cast<unsigned char *>(&bits), sizeof bits) != 1)
			throw Error("XX000", "could not generate a random lease epoch");
		const auto epoch = static_cast<int64_t>(bits & 0x7FFFFFFFFFFFFFFFULL);
		if (epoch != 0 && epoch != previous) return epoch;
	}
}

// sha256 of the text, as lowercase hex.
std::string sha256_hex(const std::string &text) {
	if (auto h = digest_hex(EVP_sha256(), text)) return *h;
	throw Error("XX000", "sha256: the digest failed");
}

// genroc._check_name: the engine's (22023 naming the field).
using engine::check_name;

// A timestamp in the forms PostgreSQL's timestamptz input takes for ISO
// dates: RFC 3339, a space instead of "T", no seconds, a zone as Z, +HH,
// +HHMM or +HH:MM, none (UTC, the session zone PgStore sets), or a date
// alone (its midnight, UTC).
bool parse_timestamp(const std::string &text, int64_t &ms) {
	static const std::regex re(
		R"(^\s*(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?\s*(?:([Zz])|([+-]\d{2})(?::?(\d{2}))?)?\s*$)");
	std::smatch m;
	// std::regex recurses per character: only texts of a timestamp's size
	// reach it (the longest form with spaces around is well under 64)
	if (text.size() > 64 || !std::regex_match(text, m, re)) return false;
	std::string rfc = m[1].str() + "T" + (m[2].matched ? m[2].str() : "00:00") + (m[3].matched ? m[3].str() : ":00");
	if (m[5].matched)
		rfc += m[5].str() + ":" + (m[6].matched ? m[6].str() : "00");
	else
		rfc += "Z";
	return asl::parse_time(rfc, ms);
}

// ---- the instance row ---------------------------------------------------

struct Inst {
	int64_t id = 0;
	int64_t definition_id = 0;
	std::string status;
	std::optional<std::string> state;
	json state_input, task_input;
	std::optional<std::string> resource;
	std::string queue;
	int64_t priority = 0;
	int64_t eligible_at = 0;
	std::optional<std::string> lease_owner;
	int64_t lease_epoch = 0;
	std::optional<int64_t> lease_expires;
	json retry_counts;
	int64_t attempt = 0, interruptions = 0;
	bool only_once = false;
	std::optional<int64_t> timeout_s, timeout_at, heartbeat_s, heartbeat_at;
	std::optional<std::string> wait_kind;
	std::optional<int64_t> wait_until;
	std::optional<std::string> activity, activity_token, activity_owner;
	json input;
	std::optional<std::string> name;
	int64_t created_at = 0;
	std::optional<int64_t> parent_id, root_id, child_index, child_gen;
	std::optional<std::string> scope;
	json fanout;
	std::optional<std::string> partition_key;
	json variables;	 // ASL variables (Assign); null: none

	bool ended() const { return status == "succeeded" || status == "failed" || status == "cancelled"; }
};

constexpr const char *INST_SELECT =
	"SELECT id, definition_id, status, state, state_input, task_input, resource, queue, priority, eligible_at, "
	"lease_owner, lease_epoch, lease_expires, retry_counts, attempt, interruptions, only_once, timeout_s, "
	"timeout_at, heartbeat_s, heartbeat_at, wait_kind, wait_until, activity, activity_token, activity_owner, "
	"input, name, created_at, parent_id, root_id, child_index, child_gen, scope, fanout, partition_key, "
	"variables FROM instances WHERE id = ?1";

Inst read_inst(const Query &q) {
	Inst i;
	i.id = q.i64(0);
	i.definition_id = q.i64(1);
	i.status = q.text(2);
	i.state = q.otext(3);
	i.state_input = q.js(4);
	i.task_input = q.js(5);
	i.resource = q.otext(6);
	i.queue = q.text(7);
	i.priority = q.i64(8);
	i.eligible_at = q.i64(9);
	i.lease_owner = q.otext(10);
	i.lease_epoch = q.i64(11);
	i.lease_expires = q.oi64(12);
	i.retry_counts = q.js(13);
	i.attempt = q.i64(14);
	i.interruptions = q.i64(15);
	i.only_once = q.i64(16) != 0;
	i.timeout_s = q.oi64(17);
	i.timeout_at = q.oi64(18);
	i.heartbeat_s = q.oi64(19);
	i.heartbeat_at = q.oi64(20);
	i.wait_kind = q.otext(21);
	i.wait_until = q.oi64(22);
	i.activity = q.otext(23);
	i.activity_token = q.otext(24);
	i.activity_owner = q.otext(25);
	i.input = q.js(26);
	i.name = q.otext(27);
	i.created_at = q.i64(28);
	i.parent_id = q.oi64(29);
	i.root_id = q.oi64(30);
	i.child_index = q.oi64(31);
	i.child_gen = q.oi64(32);
	i.scope = q.otext(33);
	i.fanout = q.js(34);
	i.partition_key = q.otext(35);
	i.variables = q.js(36);
	return i;
}


class SqliteStore final : public Store {
  public:
	SqliteStore(const std::string &path, bool read_only, unsigned lane)
		: path_(path), db_(path, read_only, false, lane) {
		if (read_only) {
			// no journal mode change, no migration: both write
			try {
				check_schema();
			} catch (const Error &e) {
				// Reading a WAL file needs its -shm file, which SQLite cannot make
				// in a folder the caller may not write.  With no -wal file there
				// is no writer and nothing outside the main file: read it as
				// immutable (a reading command lasts an instant).
				if ((e.sqlstate != "25006" && e.sqlstate != "08006") || std::filesystem::exists(path + "-wal")) throw;
				db_ = sqlite::Db(path, true, true);
				check_schema();
			}
			// the statements that name them prepare (their write is then
			// refused, 25006)
			register_store_functions();
			return;
		}
		use_wal();
		// foreign keys on after the migration: schema 8 remakes the instances
		// table, which SQLite allows only with them off (sqlite_schema.hpp)
		migrate();
		db_.exec("PRAGMA foreign_keys=ON");
		register_store_functions();
	}
	~SqliteStore() override {
		for (auto &[_, fd] : worker_locks_) ::close(fd);
	}

	// The file in WAL mode.  Switching a new file to WAL takes its exclusive
	// lock, and a connection that loses that race to another process's
	// switch gets SQLITE_BUSY at once, without the busy handler (twenty
	// processes opening a new file in the same millisecond: about one start
	// in ten refused, faults_startup_test).  The switch is asked again until
	// it holds, for as long as a busy writer is waited for; a file already
	// in WAL mode answers at once.
	void use_wal() {
		const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(sqlite::kBusyTimeoutMs);
		for (;;) {
			try {
				db_.exec("PRAGMA journal_mode=WAL");
				return;
			} catch (const Error &e) {
				if (e.sqlstate != "55P03" || std::chrono::steady_clock::now() >= give_up) throw;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
		}
	}
	SqliteStore(const SqliteStore &) = delete;
	SqliteStore &operator=(const SqliteStore &) = delete;

	std::string kind() const override { return "sqlite"; }

	// ---- definitions: the engine's (engine/definitions.cpp) -----------------

	DefineResult define(const std::string &name, const json &definition,
						const std::optional<std::string> &source = std::nullopt) override {
		limits::check_definition_depth(definition);	 // before dump() recurses over it
		const std::string text = source ? *source : definition.dump();
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			engine::Defined d = engine::define(port, name, text, source.has_value());
			return DefineResult{d.name, d.version, d.is_new};
		});
	}

	json list_definitions() override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			json out = json::array();
			for (const auto &d : engine::list_definitions(port))
				out.push_back({{"name", d.name}, {"version", d.version}, {"created_at", engine::iso_us(d.created_us)}});
			return out;
		});
	}

	json get_definition(const std::string &name, std::optional<int> version) override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::get_definition(port, name, version));
		});
	}

	// ---- aliases and deletions: the engine's (engine/aliases.cpp) ---------

	template <typename F> auto engine_write(F f) {
		return write(durability_for(Commit::progress), [&](int64_t now) { sqlite::SqlitePort port(db_, now); return f(port); });
	}
	template <typename F> auto engine_read(F f) {
		return read([&](int64_t now) { sqlite::SqlitePort port(db_, now); return f(port); });
	}
	void undefine(const std::string &name, std::optional<int> version) override {
		engine_write([&](auto &port) { return engine::undefine(port, name, version), 0; });
	}
	json alias_set(const std::string &name, const std::string &alias, const json &routing,
				   const std::optional<std::string> &description) override {
		limits::check_json_depth(routing, "the routing");
		return engine_write([&](auto &port) { return json::parse(engine::alias_set(port, name, alias, routing.dump(), description)); });
	}
	void alias_drop(const std::string &name, const std::string &alias) override {
		engine_write([&](auto &port) { return engine::alias_drop(port, name, alias), 0; });
	}
	json get_alias(const std::string &name, const std::string &alias) override {
		return engine_read([&](auto &port) { return json::parse(engine::get_alias(port, name, alias)); });
	}
	json list_aliases(const std::string &name) override {
		return engine_read([&](auto &port) { return json::parse(engine::list_aliases(port, name)); });
	}

	// ---- instances (genroc.start, cancel, get_instance, list_instances, history)

	// genroc.start, start_many: the engine's (engine/start.cpp), reaching
	// this store's timestamp input through store_call (START_PARSE_TIME).
	static StartResult start_result(const engine::Started &s) { return {s.id, s.is_new, s.status}; }

	StartResult start(const std::string &definition, const json &input, const json &options) override {
		// the input's text as the engine takes a jsonb argument's
		const std::string text = input.dump(-1, ' ', false, json::error_handler_t::replace);
		return write(durability_for(Commit::outside), [&](int64_t now) -> StartResult {
			sqlite::SqlitePort port = engine_port(now);
			const auto rows = engine::start(port, definition, text, options);
			if (rows.empty()) throw Error("XX000", "the instance under the idempotency key is gone");
			return start_result(rows.front());
		});
	}

	// genroc.start_many: start for each input, in one transaction (one commit).
	std::vector<StartResult> start_many(const std::string &definition, const json &inputs,
										const json &options) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			std::vector<StartResult> out;
			for (const auto &s : engine::start_many(port, definition, inputs, options)) out.push_back(start_result(s));
			return out;
		});
	}

	// genroc.cancel, retry, resume: the engine's (engine/control.cpp)
	std::string cancel(int64_t id, const std::optional<std::string> &error,
					   const std::optional<std::string> &cause) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::cancel(port, id, error, cause);
		});
	}

	std::string retry(int64_t id) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::run_again(port, id, std::nullopt);
		});
	}

	std::string resume(int64_t id, const json &output) override {
		limits::check_json_depth(output, "the task result");
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::run_again(port, id, output.dump(-1, ' ', false, json::error_handler_t::replace));
		});
	}

	// A port whose STORE_* statements this store answers (store_call).
	sqlite::SqlitePort engine_port(int64_t now) {
		sqlite::SqlitePort port(db_, now);
		port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
		return port;
	}

	// genroc.redrive: the engine's (engine/redrive.cpp), reaching the step,
	// the fan-out's loop, the log and stored values of this store through
	// its STORE_* statements.
	std::string redrive(int64_t id, const std::optional<std::string> &client_token) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
			return engine::redrive(port, id, client_token);
		});
	}

	// The engine's STORE_* statements: the operations still written here.
	std::optional<engine::Rows> store_call(engine::Stmt s, engine::Params params, int64_t now) {
		const engine::Param *p = params.begin();
		auto one = [](std::string v) {
			engine::Rows rows;
			rows.emplace_back(std::vector<std::optional<std::string>>{std::move(v)});
			return rows;
		};
		switch (s) {
			case engine::Stmt::STORE_APPLY_STEP: return one(apply_step(p[0].i64(), json::parse(p[1].text()), now));
			case engine::Stmt::STORE_LOG:
				log(p[0].i64(), now, p[1].text(), p[2].is_null() ? std::nullopt : std::optional<std::string>(p[2].text()),
					p[3].is_null() ? json(nullptr) : json::parse(p[3].text()));
				return engine::Rows{};
			// retention and the tick (engine/retention.cpp, engine/tick.cpp)
			case engine::Stmt::RETENTION_SETTINGS: {
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{
					std::to_string(log_options_.log_retention_ms * 1000),
					std::to_string(log_options_.instance_retention_ms * 1000),
					std::to_string(log_options_.object_grace_ms * 1000), "1"});
				return rows;
			}
			case engine::Stmt::TICK_INTERRUPT: return one(interrupt(p[0].i64(), p[1].text(), now));
			case engine::Stmt::TICK_WHO: {
				// this store's set_ticked_by name (kind binary for "genroc
				// worker <id>"), else "pid <pid>"
				const std::string by =
					ticked_by_.empty() ? "pid " + std::to_string(::getpid()) : ticked_by_.substr(0, 200);
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{
					by, by.rfind("genroc worker ", 0) == 0 ? "binary" : "session", ""});
				return rows;
			}
			// starting instances (engine/start.cpp): a timestamp option in
			// microseconds (NULL: it does not parse) and whether it is in range
			case engine::Stmt::START_PARSE_TIME: {
				int64_t ms = 0;
				engine::Rows rows;
				if (!parse_timestamp(p[0].text(), ms))
					rows.emplace_back(std::vector<std::optional<std::string>>{std::nullopt, std::nullopt});
				else
					rows.emplace_back(std::vector<std::optional<std::string>>{
						std::to_string(ms * 1000), (ms >= 0 && ms < 253402300800000) ? "1" : "0"});
				return rows;
			}
			case engine::Stmt::STEP_HANDBACK_LEASE: {
				// the row and worker apply_step was given, else (engine/report.cpp) the row as it is now
				const bool given = step_inst_ && step_hb_ && step_inst_->id == p[0].i64();
				const std::string worker = p[1].text();
				const auto queues = json::parse(p[2].text()).get<std::vector<std::string>>();
				Handback own{worker, queues, 0, std::nullopt};
				Handback &hb = given ? *step_hb_ : own;
				Inst row;
				if (!handback_lease(given ? *step_inst_ : (row = load(p[0].i64())), hb)) return engine::Rows{};
				return one(std::to_string(hb.lease_ms));
			}
			case engine::Stmt::STEP_LOG_ROWS: {
				const int64_t id = p[0].i64();
				for (const auto &r : json::parse(p[1].text()))
					log(id, now, r.at("event").get<std::string>(),
						r.at("state").is_string() ? std::optional<std::string>(r["state"].get<std::string>())
												  : std::nullopt,
						r.value("detail", json(nullptr)));
				return engine::Rows{};
			}
			case engine::Stmt::FLUSH_COMMIT: {
				const std::string c = p[0].text();
				flush_on_commit(c == "terminal"			   ? Commit::terminal
								: c == "only_once_claim"  ? Commit::only_once_claim
								: c == "only_once_report" ? Commit::only_once_report
								: c == "outside"		  ? Commit::outside
														  : Commit::progress);
				return engine::Rows{};
			}
			case engine::Stmt::STORE_TASK_SUCCEEDED: {
				const Inst inst = load(p[0].i64());
				return one(apply_step(inst.id,
									  task_request(inst, "task_succeeded", json::parse(p[1].text()), std::nullopt,
												   std::nullopt),
									  now));
			}
			case engine::Stmt::INTERRUPT: return one(interrupt(p[0].i64(), p[1].text(), now));
			case engine::Stmt::STORE_INPUTS: {
				const Inst inst = load(p[0].i64());
				engine::Rows rows;
				rows.emplace_back(std::vector<std::optional<std::string>>{inst.state_input.dump(), inst.input.dump()});
				return rows;
			}
			default: return std::nullopt;
		}
	}

	// genroc.get_instance, list_instances, history: the engine's
	// (engine/instances.cpp); list_instances reads its timestamps with this
	// store's timestamp input (START_PARSE_TIME, store_call).
	json get_instance(int64_t id, bool refs) override {
		return engine_read([&](auto &port) { return json::parse(engine::get_instance(port, id, values_option(refs))); });
	}
	static std::optional<std::string> values_option(bool refs) {
		return refs ? std::optional<std::string>(R"({"values": "ref"})") : std::nullopt;
	}

	json list_instances(const json &filter) override {
		limits::check_json_depth(filter, "the filter");	 // before dump() recurses over it
		const std::optional<std::string> text =
			filter.is_null() ? std::nullopt
							 : std::optional<std::string>(filter.dump(-1, ' ', false, json::error_handler_t::replace));
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
			json out = json::array();
			for (const std::string &j : engine::list_instances(port, text)) out.push_back(json::parse(j));
			return out;
		});
	}

	// genroc.get_object: the engine's (engine/objects.cpp).
	json get_object(const std::string &ref) override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::get_object(port, ref));
		});
	}

	json history(int64_t id, bool refs) override {
		return engine_read([&](auto &port) {
			json out = json::array();
			for (const engine::LogEntry &e : engine::history(port, id, values_option(refs)))
				out.push_back({{"seq", e.seq},
							   {"at", engine::iso_us(e.at_us)},
							   {"event", e.event},
							   {"state", text_or_null(e.state)},
							   {"detail", e.detail ? json::parse(*e.detail) : json(nullptr)}});
			return out;
		});
	}

	// ---- workers and leases ---------------------------------------------

	json worker_register(const std::string &worker, const json &options) override {
		limits::check_json_depth(options, "the worker options");	// before dump() recurses over it
		const std::optional<std::string> text =
			options.is_null() ? std::nullopt
							  : std::optional<std::string>(options.dump(-1, ' ', false, json::error_handler_t::replace));
		return write(durability_for(Commit::progress), [&](int64_t now) {
			// The lock this call takes, kept only if the registration commits.
			WorkerLockTry lock = try_worker_lock(worker);
			struct Undo {
				WorkerLockTry &l;
				bool keep = false;
				~Undo() {
					if (!keep && l.fd >= 0) ::close(l.fd);
				}
			} undo{lock};
			sqlite::SqlitePort port(db_, now);
			WorkerHost host(*this, now, lock.state);
			json out = json::parse(engine::worker_register(port, host, worker, text));
			if (host.pooled()) {
				// the lock was only a probe of the old holder
				auto it = worker_locks_.find(worker);
				if (it != worker_locks_.end()) {
					::close(it->second);
					worker_locks_.erase(it);
				}
			} else if (lock.fd >= 0) {
				worker_locks_[worker] = lock.fd;
				undo.keep = true;
			}
			return out;
		});
	}

	json worker_heartbeat(const std::string &worker) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::worker_heartbeat(port, worker));
		});
	}

	json worker_drain(const std::string &worker) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::worker_drain(port, worker));
		});
	}

	void worker_stop(const std::string &worker) override {
		write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			WorkerHost host(*this, now, LockState::unknown);
			engine::worker_stop(port, host, worker);
			return 0;
		});
		// stopped: the id is free, its lock too
		auto it = worker_locks_.find(worker);
		if (it != worker_locks_.end()) {
			::close(it->second);
			worker_locks_.erase(it);
		}
	}

	json list_workers() override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			json out = json::array();
			for (const auto &w : engine::list_workers(port))
				out.push_back({{"worker", w.worker},
							   {"host", w.host},
							   {"queues", w.queues},
							   {"concurrency", w.concurrency ? json(*w.concurrency) : json(nullptr)},
							   {"lease_duration_ms", w.lease_duration_ms},
							   {"stale_after_ms", w.stale_after_ms},
							   {"started_at", engine::iso_us(w.started_us)},
							   {"heartbeat_at", engine::iso_us(w.heartbeat_us)},
							   {"stopped_at", w.stopped_us ? json(engine::iso_us(*w.stopped_us)) : json(nullptr)},
							   {"live", w.live},
							   {"running", w.running},
							   {"durability", w.durability},
							   {"draining", w.draining}});
			return out;
		});
	}

	// genroc.claim_wake: the engine's (engine/control.cpp)
	std::optional<int64_t> claim_wake(const std::vector<std::string> &queues) override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return engine::claim_wake(port, queues);
		});
	}

	// genroc.claim: the engine's (engine/claim.cpp)
	std::vector<Task> claim(const std::string &worker, const std::vector<std::string> &queues, int n) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			std::vector<Task> out;
			for (engine::HandedBack &t : engine::claim(port, worker, queues, n, now * 1000).tasks)
				out.push_back(task_of(std::move(t)));
			return out;
		});
	}

	// genroc.renew, release: the engine's (engine/control.cpp)
	std::vector<int64_t> renew(const std::string &worker, const std::vector<int64_t> &instance_ids) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::renew(port, worker, instance_ids);
		});
	}

	void release(const std::string &worker, const std::vector<int64_t> &instance_ids) override {
		write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::release(port, worker, instance_ids);
		});
	}

	// genroc.complete, fail, complete_and_claim, fail_and_claim: the
	// engine's (engine/report.cpp)
	std::string complete(int64_t id, int64_t epoch, const json &output) override {
		limits::check_json_depth(output, "the task result");
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::complete(port, id, epoch, output.dump(-1, ' ', false, json::error_handler_t::replace));
		});
	}

	std::string fail(int64_t id, int64_t epoch, const std::string &error, const std::string &cause) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::fail(port, id, epoch, error, cause);
		});
	}

	// The engine's report with its hand-back as this store's Report.
	static Task task_of(engine::HandedBack b) {
		Task t;
		t.instance_id = b.instance_id;
		t.epoch = b.epoch;
		t.state = b.state.value_or("");
		t.resource = b.resource.value_or("");
		t.input = json::parse(b.input);
		t.only_once = b.only_once;
		if (b.timeout_s) t.timeout_s = static_cast<int>(*b.timeout_s);
		t.attempt = static_cast<int>(b.attempt);
		t.lease_expires = iso(b.lease_expires_us / 1000);
		t.queue = std::move(b.queue);
		return t;
	}
	Report report_of(engine::ReportResult r) {
		Report out;
		out.status = std::move(r.status);
		if (r.next) out.next = task_of(std::move(*r.next));
		return out;
	}

	// genroc.complete_and_claim / fail_and_claim: the report as above, and
	// the next task handed back to the worker when it may take it.
	Report complete_and_claim(int64_t id, int64_t epoch, const json &output, const std::string &worker,
							  const std::vector<std::string> &queues) override {
		limits::check_json_depth(output, "the task result");
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return report_of(engine::complete_and_claim(
				port, id, epoch, output.dump(-1, ' ', false, json::error_handler_t::replace), worker, queues));
		});
	}

	// genroc.complete_many: the engine's (engine/many.cpp), each report as
	// complete (complete_and_claim with a worker) makes it, in one
	// transaction; a report on a missing instance or a lost lease is
	// answered in its Outcome.
	std::vector<Outcome> complete_many(const std::vector<Completion> &reports, const std::string &worker,
									   const std::vector<std::string> &queues) override {
		engine::ManyReports many;
		many.instances.emplace();
		many.epochs.emplace();
		many.outputs.emplace();
		for (const auto &c : reports) {
			limits::check_json_depth(c.output, "the task result");
			many.instances->emplace_back(c.instance_id);
			many.epochs->emplace_back(c.epoch);
			many.outputs->emplace_back(c.output.dump(-1, ' ', false, json::error_handler_t::replace));
		}
		std::optional<std::string> w;
		std::optional<std::vector<std::string>> q;
		if (!worker.empty()) {
			w = worker;
			q = queues;
		}
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			std::vector<Outcome> out;
			for (auto &m : engine::complete_many(port, many, w, q)) {
				Outcome o;
				o.instance_id = m.instance_id;
				o.status = m.status.value_or("");
				o.sqlstate = m.sqlstate.value_or("");
				if (m.next) o.next = task_of(std::move(*m.next));
				out.push_back(std::move(o));
			}
			return out;
		});
	}

	Report fail_and_claim(int64_t id, int64_t epoch, const std::string &error, const std::string &cause,
						  const std::string &worker, const std::vector<std::string> &queues) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return report_of(engine::fail_and_claim(port, id, epoch, error, cause, worker, queues));
		});
	}

	// ---- activities -----------------------------------------------------

	// genroc.claim_activity: the engine's (engine/control.cpp)
	std::vector<ActivityTask> claim_activity(const std::string &activity, const std::string &worker, int n) override {
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			std::vector<ActivityTask> out;
			for (auto &c : engine::claim_activity(port, activity, worker, n)) {
				ActivityTask t;
				t.token = std::move(c.token);
				t.instance_id = c.instance_id;
				t.activity = std::move(c.activity);
				t.input = json::parse(c.input);
				if (c.heartbeat_s) t.heartbeat_s = static_cast<int>(*c.heartbeat_s);
				if (c.timeout_s) t.timeout_s = static_cast<int>(*c.timeout_s);
				out.push_back(std::move(t));
			}
			return out;
		});
	}

	// genroc.activity_succeed, activity_fail, activity_heartbeat: the
	// engine's (engine/callbacks.hpp), for activities and .waitForTaskToken
	// tasks alike
	std::string activity_succeed(const std::string &token, const json &output) override {
		limits::check_json_depth(output, "the task result");
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return engine::task_token_succeed(port, token, output.dump(-1, ' ', false, json::error_handler_t::replace));
		});
	}

	std::string activity_fail(const std::string &token, const std::string &error, const std::string &cause) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return engine::task_token_fail(port, token, error, cause);
		});
	}

	// genroc.emit: the engine's (engine/control.cpp)
	std::string emit(int64_t id, const std::string &name, const json &payload) override {
		limits::check_json_depth(payload, "the event payload");	 // before dump() recurses over it
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);
			return engine::emit(port, id, name, payload.dump(-1, ' ', false, json::error_handler_t::replace));
		});
	}

	void activity_heartbeat(const std::string &token) override {
		write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			engine::task_token_heartbeat(port, token);
			return 0;
		});
	}

	// ---- API tokens: the engine's (engine/tokens.cpp) ---------------------

	json token_create(const std::string &name, const std::vector<std::string> &permissions,
					  const std::string &created_by, const std::optional<std::string> &token_text) override {
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::token_create(
				port, name, std::vector<std::optional<std::string>>(permissions.begin(), permissions.end()),
				created_by, token_text));
		});
	}

	// One file, one OS user: whoever opens it administers it (the engine's
	// statement answers every capability).
	json capabilities() override {
		return engine_read([&](auto &port) { return json::parse(engine::capabilities(port)); });
	}

	json token_verify(const std::string &token) override {
		return read([&](int64_t now) -> json {
			sqlite::SqlitePort port(db_, now);
			auto found = engine::token_verify(port, token);
			return found ? json::parse(*found) : json(nullptr);
		});
	}

	json token_list() override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			json out = json::array();
			for (const auto &t : engine::token_list(port)) out.push_back(json::parse(t));
			return out;
		});
	}

	void token_revoke(const std::string &id) override {
		write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			engine::token_revoke(port, id);
			return 0;
		});
	}

	// ---- queues (genroc.queue_set, queue_drop, list_queues; 55_queues.sql)

	json queue_set(const std::string &name, const json &options) override {
		limits::check_json_depth(options, "the queue options");	// before dump() recurses over it
		const std::optional<std::string> text =
			options.is_null() ? std::nullopt
							  : std::optional<std::string>(options.dump(-1, ' ', false, json::error_handler_t::replace));
		return write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port = engine_port(now);	 // partition slots run steps
			return json::parse(engine::queue_set(port, name, text));
		});
	}

	void queue_drop(const std::string &name) override {
		write(durability_for(Commit::outside), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			engine::queue_drop(port, name);
			return 0;
		});
	}

	json list_queues() override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			json out = json::array();
			for (const auto &q : engine::list_queues(port)) out.push_back(json::parse(engine::queue_row_json(q)));
			return out;
		});
	}

	// ---- time (genroc.tick) ---------------------------------------------

	// genroc.tick: the engine's (engine/tick.cpp), reaching the step, a
	// failed task, a lapse, a sync call's child, the first step, the
	// fan-out's loop and the log of this store through its statements;
	// pruning by this store's retention options (0: nothing).
	json tick(int limit) override {
		if (limit < 1)
			throw Error(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not " + std::to_string(limit));
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
			return json::parse(engine::tick(port, limit));
		});
	}

	void set_ticked_by(const std::string &name) override { ticked_by_ = name; }

	// ---- metrics: the engine's (engine/metrics.cpp) ---------------------------

	json tickers() override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			json out = json::array();
			for (const auto &t : engine::tickers(port))
				out.push_back({{"ticked_by", t.ticked_by},
							   {"kind", t.kind},
							   {"role", t.role},
							   {"first_tick_at", engine::iso_us(t.first_tick_us)},
							   {"last_tick_at", engine::iso_us(t.last_tick_us)},
							   {"ago_ms", t.ago_ms},
							   {"ticks", t.ticks}});
			return out;
		});
	}

	json metrics(int max_definitions) override {
		return read([&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			return json::parse(engine::metrics(port, max_definitions));
		});
	}

	// genroc.prune: the engine's (engine/retention.cpp; 70_tick.sql has
	// the semantics).
	json prune(int64_t log_retention_ms, int64_t instance_retention_ms, int limit) override {
		if (limit < 1)
			throw Error(sqlstate::INVALID_PARAMETER_VALUE, "p_limit must be at least 1, not " + std::to_string(limit));
		if (log_retention_ms < 0 || instance_retention_ms < 0)
			throw Error(sqlstate::INVALID_PARAMETER_VALUE, "a retention must not be negative", "",
						"Use 0 to keep everything of that kind.");
		return write(durability_for(Commit::progress), [&](int64_t now) {
			sqlite::SqlitePort port(db_, now);
			port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
			return json::parse(engine::prune(port, engine::Retention::of_us(log_retention_ms * 1000),
											 engine::Retention::of_us(instance_retention_ms * 1000), limit));
		});
	}

	void set_log_options(const LogOptions &options) override { log_options_ = options; }

	std::string now() override { return iso(now_ms()); }

	// Like the setting genroc.test_clock: any text is taken, empty means real
	// time, and a value that is not a time fails every operation that reads
	// the clock (22007), not the setting itself.
	void set_test_clock(const std::optional<std::string> &iso_time) override {
		test_clock_ = iso_time.value_or("");
	}

	void set_durability(DurabilityLevel level) override { level_ = level; }
	DurabilityLevel durability() override { return level_; }
	void set_commit_delay(int) override {
		throw Error("0A000", "--pg-commit-delay needs PostgreSQL; SQLite has no commit delay");
	}

	bool wait_for_work(int timeout_ms) override {
		// SQLite has no notifications: a short sleep, and the caller polls.
		std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp(timeout_ms, 0, 50)));
		return false;
	}

	bool ping() override {
		try {
			Query q(db_, "SELECT 1");
			return q.next();
		} catch (const Error &) {
			return false;
		}
	}

  private:
	// ---- worker lock files (what a live PostgreSQL session is there) ----
	//
	// A registered worker's store holds an exclusive flock() on a file beside
	// the database, one per worker id; the kernel releases it when the
	// process dies, however it dies.  So while the lock is held the worker is
	// alive, and once it is free the process that held it is gone.  flock
	// (not fcntl) because its locks belong to the open file: another store of
	// the same process opening and closing the file leaves it held, and a
	// second store of the same process asking for it is refused as another
	// process would be.  The engine cannot tell for a database without a
	// directory of its own (":memory:", a URI) or when the file cannot be
	// opened there.
	enum class LockState { taken, own, held_by_other, unknown };
	struct WorkerLockTry {
		LockState state = LockState::unknown;
		int fd = -1;  // set when this call took the lock
	};

	// The workers' host on SQLite: the lapse path is this store's interrupt,
	// and a holder's liveness its lock file (try_worker_lock, tried before
	// the registration reads the row): held by another process or by this
	// store, alive; free, dead; no lock file or no pid recorded, unknown.
	class WorkerHost final : public engine::WorkerHost {
	  public:
		WorkerHost(SqliteStore &store, int64_t now, LockState lock) : store_(store), now_(now), lock_(lock) {}
		void interrupt(int64_t instance, const std::string &reason) override {
			store_.interrupt(instance, reason, now_);
		}
		std::optional<bool> holder_alive(const std::string &, const engine::Row &held) override {
			if (lock_ == LockState::held_by_other || lock_ == LockState::own) return true;
			if (held.is_null(3) || lock_ == LockState::unknown) return std::nullopt;
			return false;
		}
		std::optional<int64_t> session(bool pooled) override {
			pooled_ = pooled;
			if (pooled || (lock_ != LockState::taken && lock_ != LockState::own)) return std::nullopt;
			return static_cast<int64_t>(::getpid());
		}
		std::string durability() override { return durability_name(store_.level_); }
		bool pooled() const { return pooled_; }

	  private:
		SqliteStore &store_;
		int64_t now_;
		LockState lock_;
		bool pooled_ = false;
	};

	std::string worker_lock_path(const std::string &worker) const {
		if (path_.empty() || path_ == ":memory:" || path_.rfind("file:", 0) == 0) return "";
		return path_ + "-worker-" + sha256_hex(worker).substr(0, 32) + ".lock";
	}

	WorkerLockTry try_worker_lock(const std::string &worker) {
		WorkerLockTry t;
		if (worker_locks_.count(worker)) {
			t.state = LockState::own;  // this store's registration, alive
			return t;
		}
		const std::string p = worker_lock_path(worker);
		if (p.empty()) return t;
		// 0600 and never through a link: another user who could open it
		// could flock it and keep the worker from starting again.  One left
		// by an older version (0644) is made 0600 when it is ours.
		int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) return t;
		struct stat st;
		if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			::close(fd);
			return t;
		}
		if (st.st_uid == ::geteuid() && (st.st_mode & 077)) ::fchmod(fd, 0600);
		if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
			t.state = LockState::taken;
			t.fd = fd;
			return t;
		}
		const int err = errno;
		::close(fd);
		if (err == EWOULDBLOCK) t.state = LockState::held_by_other;
		return t;
	}

	std::map<std::string, int> worker_locks_;  // worker id -> its locked file

	// Why a commit may have to reach the disk (genroc._flush_commit's classes).
	enum class Commit { outside, only_once_claim, only_once_report, terminal, progress };

	// The one place where a commit's durability is decided: (level, class)
	// as genroc._flush_commit maps them.  NORMAL in WAL mode never corrupts
	// the file but may lose the last commits on power loss; FULL syncs the
	// WAL at COMMIT.  `none` is NORMAL too: OFF could corrupt the file.
	Durability durability_for(Commit c) const {
		bool flush = false;
		switch (c) {
			case Commit::outside:
			case Commit::only_once_claim:
			case Commit::only_once_report: flush = level_ >= DurabilityLevel::essential; break;
			case Commit::terminal: flush = level_ >= DurabilityLevel::terminal; break;
			case Commit::progress: flush = level_ >= DurabilityLevel::strict; break;
		}
		return flush ? Durability::full : Durability::normal;
	}

	// PRAGMA synchronous cannot change inside a transaction, so it is set
	// before BEGIN from what the operation is known to be (write()).  Some
	// classes show only inside: the claim of an OnlyOnce task, an instance
	// that ends.  Those call this; when the level wants a flush that the
	// transaction did not start with, write() syncs the WAL file right after
	// COMMIT and before returning, so nothing is confirmed before it is on
	// disk (one sync, as FULL would have done at COMMIT).
	void flush_on_commit(Commit c) {
		if (durability_for(c) == Durability::full && txn_durability_ != Durability::full) sync_after_commit_ = true;
	}

	DurabilityLevel level_ = DurabilityLevel::essential;
	LogOptions log_options_;
	std::string ticked_by_;	// set_ticked_by
	Durability txn_durability_ = Durability::normal;
	bool sync_after_commit_ = false;

	int64_t now_ms() const {
		if (test_clock_.empty()) return system_now_ms();
		int64_t t;
		if (!parse_timestamp(test_clock_, t))
			throw Error(sqlstate::INVALID_DATETIME_FORMAT,
						"invalid input syntax for type timestamp with time zone: \"" + test_clock_ + "\"");
		return t;
	}

	// Runs fn(now) in one BEGIN IMMEDIATE transaction; rolls back on any
	// exception, so an error changes nothing (as a failed SQL function).
	// `now` is fixed for the whole transaction, as genroc.now() is.
	template <typename F>
	auto write(Durability d, F &&fn) -> std::invoke_result_t<F, int64_t> {
		db_.begin_immediate(d);
		txn_durability_ = d;
		sync_after_commit_ = false;
		try {
			auto r = fn(now_ms());
			db_.commit();
			if (sync_after_commit_) db_.sync_wal();
			return r;
		} catch (...) {
			db_.rollback();
			throw;
		}
	}

	// A read in one snapshot (a deferred transaction).
	template <typename F>
	auto read(F &&fn) -> std::invoke_result_t<F, int64_t> {
		db_.exec("BEGIN");
		try {
			auto r = fn(now_ms());
			db_.exec("COMMIT");
			return r;
		} catch (...) {
			db_.rollback();
			throw;
		}
	}

	// Creates the schema in a new file; brings a file of an older version up
	// to date (sqlite::MIGRATIONS, in this one transaction); refuses a file
	// of a newer or unknown version before touching it (it would be misread).
	// A store opened read-only reads only a file of this genroc's schema
	// version (55000 otherwise: it cannot migrate it).
	void check_schema() {
		read([&](int64_t) {
			std::string found = "(none)";
			{
				Query q(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
				if (q.next()) {
					Query v(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
					if (v.next()) found = v.text(0);
				}
			}
			if (found != std::to_string(sqlite::SCHEMA_VERSION))
				throw Error("55000", "SQLite database \"" + path_ + "\" has schema version " + found +
										 "; read-only, this genroc reads version " +
										 std::to_string(sqlite::SCHEMA_VERSION),
							"", "Open it once for writing (any genctl command that writes, or genroc) to create or "
								"migrate its schema.");
			return 0;
		});
	}

	void migrate() {
		write(Durability::normal, [&](int64_t) {
			bool has_meta = false;
			{
				Query q(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
				has_meta = q.next();
			}
			if (has_meta) {
				std::string found = "(none)";
				{
					Query q(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
					if (q.next()) found = q.text(0);
				}
				int version = 0;
				for (int v = 1; v <= sqlite::SCHEMA_VERSION; v++)
					if (found == std::to_string(v)) version = v;
				if (version == 0)
					throw Error("55000", "SQLite database \"" + path_ + "\" has schema version " + found +
											 "; this genroc reads version " + std::to_string(sqlite::SCHEMA_VERSION));
				bool remade = false;	// the table made anew once serves every later remaking
				for (; version < sqlite::SCHEMA_VERSION; version++) {
					if (sqlite::MIGRATIONS[version - 1] != sqlite::REORDER_INSTANCES) {
						db_.exec(sqlite::MIGRATIONS[version - 1]);
						continue;
					}
					if (remade) continue;
					remade = true;
					db_.exec(sqlite::REORDER_INSTANCES_BEFORE);
					db_.exec(sqlite::SCHEMA_SQL);
					db_.exec(sqlite::REORDER_INSTANCES_COPY);
					db_.exec(sqlite::SCHEMA_SQL);  // the indexes, now that their names are free
					Query fk(db_, "PRAGMA foreign_key_check");
					if (fk.next())
						throw Error("55000", "SQLite database \"" + path_ +
												 "\": a foreign key does not hold after the instances table was remade (table " +
												 fk.text(0) + ")");
				}
				Query(db_, "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
					  std::to_string(sqlite::SCHEMA_VERSION))
					.run();
				db_.exec(sqlite::LATER_INDEXES_SQL);
				return 0;
			}
			db_.exec(sqlite::SCHEMA_SQL);
			db_.exec(sqlite::TOKENS_SQL);
			db_.exec(sqlite::TICKERS_SQL);
			db_.exec(sqlite::ALIASES_SQL);
			db_.exec(sqlite::LATER_INDEXES_SQL);
			Query(db_, "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
				  std::to_string(sqlite::SCHEMA_VERSION))
				.run();
			return 0;
		});
	}

	static Error not_found(int64_t id) {
		return Error(sqlstate::INSTANCE_NOT_FOUND, "instance " + std::to_string(id) + " not found");
	}

	template <typename... Args>
	std::vector<int64_t> ids(const char *sql, const Args &...args) {
		std::vector<int64_t> out;
		Query q(db_, sql, args...);
		while (q.next()) out.push_back(q.i64(0));
		return out;
	}

	// The row with its values (references resolved: load_value).
	Inst load(int64_t id) {
		Inst inst;
		{
			Query q(db_, INST_SELECT, id);
			if (!q.next()) throw not_found(id);
			inst = read_inst(q);
		}
		inst.state_input = load_value(std::move(inst.state_input));
		inst.task_input = load_value(std::move(inst.task_input));
		inst.input = load_value(std::move(inst.input));
		return inst;
	}

	// ---- the store's paths the engine's statements call ----------------

	// Registered on the connection for the SQLite texts of statements.def
	// (engine/statements.def): each runs inside the calling statement's
	// transaction; its error goes back through the port with its SQLSTATE.
	void register_store_functions() {
		auto reg = [&](const char *name, int n, void (*fn)(sqlite3_context *, int, sqlite3_value **)) {
			const int rc =
				sqlite3_create_function_v2(db_.handle(), name, n, SQLITE_UTF8, this, fn, nullptr, nullptr, nullptr);
			if (rc != SQLITE_OK) sqlite::raise(db_.handle(), rc, std::string("registering ") + name);
		};
		// TASK_TOKEN_SUCCEEDED: (id, result JSON text, activity worker, now)
		reg("genroc_task_succeeded", 4, [](sqlite3_context *c, int, sqlite3_value **v) {
			host(c, [&](SqliteStore &s) {
				return s.token_succeeded(sqlite3_value_int64(v[0]), value_text(v[1]), value_otext(v[2]),
										 sqlite3_value_int64(v[3]));
			});
		});
		// STEP_STOP: a value as a column keeps it (store_value): (JSON text, field, now)
		reg("genroc_store_value", 3, [](sqlite3_context *c, int, sqlite3_value **v) {
			host(c, [&](SqliteStore &s) {
				const std::string field = value_text(v[1]);
				return s.store_value(json::parse(value_text(v[0])), field.c_str(), sqlite3_value_int64(v[2])).dump();
			});
		});
		// STEP_STOP: a new lease epoch (new_epoch): (the previous one)
		reg("genroc_new_epoch", 1, [](sqlite3_context *c, int, sqlite3_value **v) {
			try {
				sqlite3_result_int64(c, new_epoch(sqlite3_value_int64(v[0])));
			} catch (...) {
				sqlite::keep_host_error(std::current_exception());
				sqlite3_result_error(c, "a genroc store function failed", -1);
			}
		});
		// TASK_TOKEN_FAILED: (id, error, cause, now)
		reg("genroc_fail_task", 4, [](sqlite3_context *c, int, sqlite3_value **v) {
			host(c, [&](SqliteStore &s) {
				return s.fail_task(sqlite3_value_int64(v[0]), value_text(v[1]), value_otext(v[2]),
								   sqlite3_value_int64(v[3]));
			});
		});
	}
	static std::string value_text(sqlite3_value *v) {
		const auto *p = reinterpret_cast<const char *>(sqlite3_value_text(v));
		return p ? std::string(p, sqlite3_value_bytes(v)) : std::string();
	}
	static std::optional<std::string> value_otext(sqlite3_value *v) {
		return sqlite3_value_type(v) == SQLITE_NULL ? std::nullopt : std::optional<std::string>(value_text(v));
	}
	// Runs a store function for SQLite: its text result, or its error kept
	// for the port (no exception crosses SQLite's C frames).
	template <typename F>
	static void host(sqlite3_context *c, F body) noexcept {
		try {
			const std::string out = body(*static_cast<SqliteStore *>(sqlite3_user_data(c)));
			sqlite3_result_text(c, out.c_str(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
		} catch (...) {
			sqlite::keep_host_error(std::current_exception());
			sqlite3_result_error(c, "a genroc store function failed", -1);
		}
	}

	// The task's success with the result sent by its token: the log row,
	// then the step ("callback": true: not a handler's return).
	std::string token_succeeded(int64_t id, const std::string &result, const std::optional<std::string> &worker,
								int64_t now) {
		const json output = json::parse(result);
		Inst inst = load(id);
		log(id, now, "task_succeeded", inst.state, {{"output", output}, {"activity_worker", text_or_null(worker)}});
		json request = task_request(inst, "task_succeeded", output, std::nullopt, std::nullopt);
		request["callback"] = true;
		return apply_step(inst, std::move(request), now);
	}

	// A worker that may take the next task of the instance it reports
	// (genroc._handback_lease): it holds the lease, serves the queue, is
	// registered, not stopped and not draining; the queue has no rate limits and, with a
	// global_concurrency, the other running tasks are fewer.  The worker
	// keeps its one slot, so no count grows.  apply_step leases the task.
	// Asked only when the step leaves a handler task ready at once (a step
	// that ends the instance reads nothing more).
	struct Handback {
		const std::string &worker;
		const std::vector<std::string> &queues;
		int64_t lease_ms = 0;
		std::optional<Task> task;	// set by apply_step when it leased one
	};

	bool handback_lease(const Inst &inst, Handback &hb) {
		if (inst.lease_owner != hb.worker ||
			std::find(hb.queues.begin(), hb.queues.end(), inst.queue) == hb.queues.end())
			return false;
		Query w(db_, "SELECT lease_ms FROM workers WHERE id = ?1 AND stopped_at IS NULL AND drain_requested_at IS NULL", hb.worker);
		if (!w.next()) return false;
		hb.lease_ms = w.i64(0);
		const QueueSettings s = queue_settings(inst.queue);
		if (s.rate || s.partition_rate) return false;
		if (s.global > 0) {
			Query q(db_, "SELECT count(*) FROM instances WHERE queue = ?1 AND status = 'running' AND id <> ?2",
					inst.queue, inst.id);
			q.next();
			if (q.i64(0) >= s.global) return false;
		}
		return true;
	}

	// genroc._log: every log row is written here, through log_detail.
	// Its large payloads become references (genroc._log_values).
	void log(int64_t id, int64_t now, const std::string &event, const std::optional<std::string> &state,
			 const json &detail) {
		std::string text = log_text(detail);
		if (detail.is_object() &&
			(static_cast<int64_t>(text.size()) > log_options_.object_threshold ||
			 std::any_of(std::begin(kPayloadKeys), std::end(kPayloadKeys),
						 [&](const char *k) { return detail.contains(k) && is_ref(detail.at(k)); }))) {
			json kept = json::parse(text);	// what the payload rules kept
			for (const char *k : kPayloadKeys)
				if (kept.contains(k)) kept[k] = store_value(kept.at(k), k, now);
			text = kept.dump();
		}
		Query(db_, "INSERT INTO log (instance_id, at, event, state, detail) VALUES (?1, ?2, ?3, ?4, ?5)", id, now,
			  event, state, text)
			.run();
	}

	// ---- large values (15_objects.sql) ----------------------------------

	static constexpr const char *kPayloadKeys[] = {"input", "output", "payload"};
	static bool is_ref(const json &v) { return engine::is_ref(v); }

	// genroc._store_value: the engine's (engine/values.cpp), this store
	// measuring a value by its JSON text against the object threshold.
	json store_value(const json &v, const char *field, int64_t now) {
		const bool lookalike = is_ref(v);
		if (!lookalike && !v.is_object() && !v.is_array() &&
			!(v.is_string() && static_cast<int64_t>(v.get_ref<const std::string &>().size()) + 2 >
								   log_options_.object_threshold))
			return v;  // a number, a boolean, null, a short string
		std::string text = v.dump();
		const bool large = static_cast<int64_t>(text.size()) > log_options_.object_threshold;
		if (!lookalike && !large) return v;
		sqlite::SqlitePort port(db_, now);
		return json::parse(engine::store_value(port, text, field, large));
	}

	// genroc._load_value: the engine's (engine/values.cpp).
	json load_value(json v) {
		if (!is_ref(v)) return v;
		sqlite::SqlitePort port(db_, 0);
		return json::parse(engine::load_value(port, v.dump()));
	}

	// log_detail(detail) as JSON text.  A payload's text is part of the
	// detail's, so a detail no longer than payload_max keeps every payload
	// whole: its text is written as it is, with no copy and no second pass.
	std::string log_text(const json &detail) const {
		if (!detail.is_object()) return detail.dump();
		if (log_options_.payloads) {
			std::string text = detail.dump();
			if (log_options_.payload_max <= 0 || static_cast<int64_t>(text.size()) <= log_options_.payload_max)
				return text;
		}
		return log_detail(detail).dump();
	}

	// genroc._log_detail: what the log keeps of a detail's payloads (the
	// keys input, output, payload at its top level): none without
	// log_payloads; a marker {truncated, bytes, head} for one whose JSON
	// text is longer than payload_max bytes (head: its first
	// min(payload_max, 256) characters).
	json log_detail(const json &detail) const {
		static const char *const payload_keys[] = {"input", "output", "payload"};
		if (!detail.is_object()) return detail;
		if (std::none_of(std::begin(payload_keys), std::end(payload_keys),
						 [&](const char *k) { return detail.contains(k); }))
			return detail;
		json out = detail;
		if (!log_options_.payloads) {
			for (const char *k : payload_keys) out.erase(std::string(k));
			return out;
		}
		const int64_t max = log_options_.payload_max;
		if (max <= 0) return detail;
		for (const char *k : payload_keys) {
			if (!detail.contains(k)) continue;
			const std::string text = detail.at(k).dump();
			if (static_cast<int64_t>(text.size()) > max)
				out[k] = {{"truncated", true},
						  {"bytes", text.size()},
						  {"head", utf8_head(text, static_cast<size_t>(std::min<int64_t>(max, 256)))}};
		}
		return out;
	}

	// The first n characters (code points) of UTF-8 text, as left() in SQL.
	static std::string utf8_head(const std::string &text, size_t n) {
		size_t chars = 0, i = 0;
		for (; i < text.size(); i++) {
			if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {	 // a character starts here
				if (chars == n) break;
				chars++;
			}
		}
		return text.substr(0, i);
	}

	// genroc._task_request: continues a stopped task with its result or error.
	static json task_request(const Inst &inst, const std::string &op, const json &result,
							 const std::optional<std::string> &error, const std::optional<std::string> &cause) {
		json r = {{"op", op}, {"state", inst.state.value_or("")}, {"state_input", inst.state_input}};
		if (!inst.retry_counts.is_null()) r["retry_counts"] = inst.retry_counts;
		if (error) r["error"] = *error;
		else if (op == "task_failed") r["error"] = nullptr;	// a failure without an error name
		if (cause) r["cause"] = *cause;
		if (op == "task_succeeded") r["result"] = result;
		return r;
	}

	// genroc._apply_step: the engine's step writer (engine/steps.cpp), which
	// asks the interpreter itself (engine/ask.cpp) and reaches this store's
	// log, fan-outs, event waits and partition slots through store_call.
	std::string apply_step(int64_t id, json request, int64_t now) { return apply_step(load(id), std::move(request), now); }
	// The same with the instance's row as just read in this transaction.
	// hb (complete_and_claim, fail_and_claim): a handler task ready at once
	// is leased to hb->worker in the same update, as claim leases it, with
	// claim's task_started row; hb->task is set and the status is "running".
	std::string apply_step(const Inst &inst, json request, int64_t now, Handback *hb = nullptr) {
		// the row the hand-back reads (the caller's, current)
		struct Saved {
			SqliteStore &s;
			const Inst *inst;
			Handback *hb;
			~Saved() {
				s.step_inst_ = inst;
				s.step_hb_ = hb;
			}
		} saved{*this, step_inst_, step_hb_};
		step_inst_ = &inst;
		step_hb_ = hb;
		std::optional<engine::Handback> ehb;
		if (hb) ehb = engine::Handback{hb->worker, hb->queues};
		return with_engine(now, [&](engine::Port &port) {
			std::string status = engine::apply_step(port, inst.id, request, json(), ehb ? &*ehb : nullptr);
			// the task handed back, as claim returns it (an OnlyOnce claim flushed)
			if (hb && status == "running") hb->task = task_of(engine::handed_back(port, inst.id));
			return status;
		});
	}

	// genroc._fail_task: an error (reported, timed out, interrupted) goes
	// through the interpreter, so Retry and Catch decide.
	std::string fail_task(int64_t id, const std::string &error, const std::optional<std::string> &cause, int64_t now) {
		return with_engine(now, [&](engine::Port &port) { return engine::fail_task(port, id, error, cause); });
	}

	// genroc._interrupt: the engine's (engine/steps.cpp).
	std::string interrupt(int64_t id, const std::string &reason, int64_t now) {
		return with_engine(now, [&](engine::Port &port) { return engine::interrupt(port, id, reason); });
	}

	// Runs an engine operation inside this transaction, on a port whose
	// STORE_* statements this store answers (store_call).
	template <typename F>
	std::string with_engine(int64_t now, F body) {
		sqlite::SqlitePort port(db_, now);
		port.set_store_calls([this, now](engine::Stmt s, engine::Params params) { return store_call(s, params, now); });
		return body(port);
	}

	// ---- queues: routing, partition slots, claim limits (55_queues.sql) --

	// genroc._queue_settings: the engine's (engine/queues.cpp).
	using QueueSettings = engine::QueueSettings;
	QueueSettings queue_settings(const std::string &queue) {
		sqlite::SqlitePort port(db_, 0);
		return engine::queue_settings(port, queue);
	}

	// genroc._route: the engine's (engine/admission.cpp).
	std::string routed(int64_t definition_id, const std::string &definition, const json &labels) {
		sqlite::SqlitePort port(db_, 0);
		return engine::route(port, definition_id, definition, labels);
	}

	// Live workers (not stopped, heartbeat within stale-after): id → queues.
	std::vector<std::pair<std::string, std::vector<std::string>>> live_workers(int64_t now) {
		std::vector<std::pair<std::string, std::vector<std::string>>> out;
		Query q(db_,
				"SELECT id, queues FROM workers WHERE stopped_at IS NULL AND heartbeat_at + stale_after_ms > ?1 "
				"ORDER BY id",
				now);
		while (q.next()) out.emplace_back(q.text(0), q.js(1).get<std::vector<std::string>>());
		return out;
	}

	std::string path_;
	Db db_;
	std::string test_clock_;  // genroc.test_clock: "" = real time
	// the row of the step apply_step runs (its hand-back) and its hand-back
	const Inst *step_inst_ = nullptr;
	Handback *step_hb_ = nullptr;
};

}  // namespace

bool sqlite_process_setup() { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK; }

std::unique_ptr<Store> open_sqlite_store(const std::string &path, bool read_only, WriteLane lane) {
	static_assert(static_cast<unsigned>(WriteLane::worker) < sqlite::WriteTurns::kLanes, "a lane per WriteLane");
	return std::make_unique<SqliteStore>(path, read_only, static_cast<unsigned>(lane));
}

}  // namespace genroc
