// genctl.cpp — the admin CLI: read and steer instances from a shell.
//
// Every command is one or two Store calls (the genroc.* SQL functions), so it
// works the same on PostgreSQL and on a SQLite file (--database, default
// ./genroc.db, env GENROC_DATABASE).  Output is a human table by default and
// the store's JSON with --json, for scripts.
//
//   genctl definitions
//   genctl definitions show NAME [--version N]
//   genctl define NAME FILE
//   genctl start DEF [--input JSON] [--options JSON]
//   genctl instances [--status S] [--definition D] [--label k=v]... [--limit N] [--root ID | --all]
//   genctl instances show ID [--page N] [--page-size N]
//   genctl logs ID
//   genctl object REF
//   genctl cancel ID
//   genctl retry ID
//   genctl resume ID [--output JSON]
//   genctl redrive ID
//   genctl emit ID NAME [--payload JSON]
//   genctl workers
//   genctl workers drain ID
//   genctl tickers
//   genctl activity
//   genctl queues
//   genctl queue set NAME [--options JSON]
//   genctl queue drop NAME
//   genctl token list
//   genctl token revoke ID
//
// Exit status: 0 done; 1 the engine refused (the SQLSTATE and message are
// printed) or a file could not be read; 2 a usage error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "duration.hpp"
#include "json_guard.hpp"
#include "queue_health.hpp"
#include "store.hpp"

namespace {

using genroc::json;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr size_t kCellMax = 72;	 // longer cells are cut in tables (--json has all)

// A problem on genctl's side (a file, an argument): message and exit status.
struct CliError {
	std::string message;
	int exit_code;
};

// ---- tables ---------------------------------------------------------------

// A JSON value as a table cell: strings bare, null as "-", the rest compact.
std::string cell(const json &v) {
	std::string s;
	if (v.is_null())
		s = "-";
	else if (v.is_string())
		s = v.get<std::string>();
	else
		s = v.dump(-1, ' ', false, json::error_handler_t::replace);
	for (auto &c : s)
		if (c == '\n' || c == '\t') c = ' ';
	if (s.size() > kCellMax) s = s.substr(0, kCellMax - 3) + "...";
	return s;
}

std::string cell(const json &row, const char *key) {
	auto it = row.find(key);
	return it == row.end() ? "-" : cell(*it);
}

// The lease owner of an instance row ("lease_owner"; "worker" in older shapes).
std::string owner_cell(const json &row) {
	return row.contains("lease_owner") ? cell(row, "lease_owner") : cell(row, "worker");
}

void print_table(const std::vector<std::string> &header, const std::vector<std::vector<std::string>> &rows) {
	std::vector<size_t> width(header.size());
	for (size_t i = 0; i < header.size(); i++) width[i] = header[i].size();
	for (const auto &r : rows)
		for (size_t i = 0; i < r.size() && i < width.size(); i++) width[i] = std::max(width[i], r[i].size());
	auto line = [&](const std::vector<std::string> &r) {
		std::string out;
		for (size_t i = 0; i < r.size(); i++) {
			out += r[i];
			if (i + 1 < r.size()) out += std::string(width[i] - r[i].size() + 2, ' ');
		}
		std::cout << out << "\n";
	};
	line(header);
	for (const auto &r : rows) line(r);
}

void print_json(const json &j) { std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n"; }

// ---- inputs ---------------------------------------------------------------

// A JSON flag's value: inline JSON, "@FILE" (its content) or "-" (stdin).
json parse_json_arg(const std::string &text, const std::string &what) {
	std::string json_text;
	try {
		json_text = genroc::json_argument_text(text, what);
	} catch (const std::exception &e) {
		throw CliError{e.what(), kExitError};
	}
	try {
		return genroc::parse_json_text(json_text, what);
	} catch (const genroc::Error &e) {
		throw CliError{e.what(), kExitUsage};
	}
}

json read_json_file(const std::string &path, std::string *text_out = nullptr) {
	std::string text;
	try {
		text = genroc::read_text_file(path);
	} catch (const std::exception &e) {
		throw CliError{e.what(), kExitError};
	}
	if (text_out) *text_out = text;
	try {
		return genroc::parse_json_text(text, path);
	} catch (const genroc::Error &e) {
		throw CliError{e.what(), kExitError};
	}
}

// An instance id or a count from the command line: a whole number in
// [1, hi], else a usage error naming the argument (never clamped).
int64_t positive_arg(const std::string &text, const std::string &name, int64_t hi) {
	int64_t v = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == text.data() + text.size() && v > hi))
		throw CliError{name + ": " + genroc::shown(text, 40) + " is out of range (at most " + std::to_string(hi) + ")",
					   kExitUsage};
	if (ec != std::errc() || end != text.data() + text.size() || v < 1)
		throw CliError{name + ": \"" + genroc::shown(text, 40) + "\" is not a whole number from 1 to " +
						   std::to_string(hi),
					   kExitUsage};
	return v;
}

// ---- commands -------------------------------------------------------------

struct Options {
	std::string database = "./genroc.db";
	bool as_json = false;
	bool pooled = false;	// --pooled: PostgreSQL through a transaction pooler
	std::string object_ref;	// object REF
	// instances
	std::string status, definition;
	std::vector<std::string> labels;
	int limit = 0;
	std::string limit_text;
	int64_t root = 0;  // --root: the tree below that top instance
	std::string root_text;
	bool all = false;  // --all: children too (default: top-level instances only)
	// instances show: the children's page
	int64_t page = 1, page_size = 20;
	std::string page_text, page_size_text;
	// instances show, cancel, emit, retry, resume
	int64_t id = 0;
	std::string id_text;
	std::string event_name, payload = "null", output = "null";
	// start
	std::string start_definition, input = "{}", start_options = "{}";
	// define
	std::string define_name, define_file;
	std::optional<int> define_version;	// definitions show --version
	std::string define_version_text;
	// queue set, queue drop
	std::string queue_name, queue_options = "{}";
	// token revoke
	std::string token_id;
	std::string worker_id;	// workers drain
};

void cmd_definitions(genroc::Store &store, const Options &o) {
	json defs = store.list_definitions();
	if (o.as_json) return print_json(defs);
	std::vector<std::vector<std::string>> rows;
	for (const auto &d : defs) rows.push_back({cell(d, "name"), cell(d, "version"), cell(d, "created_at")});
	print_table({"NAME", "VERSION", "CREATED"}, rows);
}

// One stored version: the text it was written as when it was kept, else
// the stored definition; --json the whole answer of get_definition.
void cmd_definition_show(genroc::Store &store, const Options &o) {
	json d = store.get_definition(o.define_name, o.define_version);
	if (o.as_json) return print_json(d);
	const json source = d.value("source", json());
	if (source.is_string()) {
		std::cout << source.get<std::string>();
		if (source.get<std::string>().empty() || source.get<std::string>().back() != '\n') std::cout << "\n";
	} else {
		std::cout << d.at("definition").dump(2) << "\n";
	}
}

void cmd_define(genroc::Store &store, const Options &o) {
	std::string source;	 // the file as written, kept with a new version
	json definition = read_json_file(o.define_file, &source);
	auto r = store.define(o.define_name, definition, source);
	if (o.as_json) return print_json({{"name", r.name}, {"version", r.version}, {"is_new", r.is_new}});
	if (r.is_new)
		std::cout << "defined " << r.name << " version " << r.version << "\n";
	else
		std::cout << r.name << " unchanged: same content as version " << r.version << "\n";
}

void cmd_start(genroc::Store &store, const Options &o) {
	json input = parse_json_arg(o.input, "--input");
	json options = parse_json_arg(o.start_options, "--options");
	if (!options.is_object()) throw CliError{"--options must be a JSON object", kExitUsage};
	auto r = store.start(o.start_definition, input, options);
	if (o.as_json) return print_json({{"instance_id", r.instance_id}, {"is_new", r.is_new}, {"status", r.status}});
	if (r.is_new)
		std::cout << "started instance " << r.instance_id << " (" << r.status << ")\n";
	else
		std::cout << "instance " << r.instance_id << " already started with that idempotency key ("
				  << r.status << ")\n";
}

json instance_filter(const Options &o) {
	json filter = json::object();
	if (!o.status.empty()) filter["status"] = o.status;
	if (!o.definition.empty()) filter["definition"] = o.definition;
	for (const auto &l : o.labels) {
		auto eq = l.find('=');	// checked by the option's validator
		filter["label"][l.substr(0, eq)] = l.substr(eq + 1);
	}
	if (o.limit > 0) filter["limit"] = o.limit;
	if (o.root > 0) filter["root"] = o.root;
	else if (!o.all) filter["top"] = true;
	return filter;
}

void cmd_instances(genroc::Store &store, const Options &o) {
	json list = store.list_instances(instance_filter(o));
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &i : list)
		rows.push_back({cell(i, "id"), cell(i, "definition") + "@" + cell(i, "version"), cell(i, "status"),
						cell(i, "state"), owner_cell(i), cell(i, "updated_at")});
	print_table({"ID", "DEFINITION", "STATUS", "STATE", "WORKER", "UPDATED"}, rows);
}

// The instance log as a table, oldest first (long details are cut; --json has them whole).
void print_history(const json &hist) {
	std::vector<std::vector<std::string>> rows;
	for (const auto &h : hist)
		rows.push_back({cell(h, "seq"), cell(h, "at"), cell(h, "event"), cell(h, "state"), cell(h, "detail")});
	print_table({"SEQ", "AT", "EVENT", "STATE", "DETAIL"}, rows);
}

// The children of an instance, a page at a time (a Map may have a hundred
// thousand): the counts of its last fan-out first (get_instance's
// "children"), then one page of its children in order, then its failed
// ones (failed or cancelled, in order, at most a page).
struct ChildrenView {
	json page = json::array();
	json failed = json::array();
};

ChildrenView children_view(genroc::Store &store, const Options &o, bool has_children) {
	ChildrenView v;
	if (!has_children) return v;
	v.page = store.list_instances({{"parent", o.id}, {"limit", o.page_size}, {"offset", (o.page - 1) * o.page_size}});
	std::vector<json> failed;
	for (const char *st : {"failed", "cancelled"})
		for (auto &c : store.list_instances({{"parent", o.id}, {"status", st}, {"limit", o.page_size}}))
			failed.push_back(c);
	std::sort(failed.begin(), failed.end(), [](const json &a, const json &b) { return a["id"] < b["id"]; });
	if (failed.size() > static_cast<size_t>(o.page_size)) failed.resize(static_cast<size_t>(o.page_size));
	for (auto &c : failed) v.failed.push_back(std::move(c));
	return v;
}

void print_children(const json &kids) {
	std::vector<std::vector<std::string>> rows;
	for (const auto &k : kids)
		rows.push_back({cell(k, "id"), cell(k, "definition"), cell(k, "child_index"), cell(k, "status"),
						cell(k, "state"), cell(k, "error"), cell(k, "scope")});
	print_table({"ID", "DEFINITION", "INDEX", "STATUS", "STATE", "ERROR", "SCOPE"}, rows);
}

void cmd_show(genroc::Store &store, const Options &o) {
	json inst = store.get_instance(o.id);
	const json summary = inst.contains("children") ? inst["children"] : json(nullptr);
	ChildrenView kids = children_view(store, o, summary.is_object());
	json hist = store.history(o.id);
	if (o.as_json) {
		json out = {{"instance", inst}, {"history", hist}};
		if (summary.is_object())
			out["children"] = {{"summary", summary},
							   {"page", o.page},
							   {"page_size", o.page_size},
							   {"items", kids.page},
							   {"failed", kids.failed}};
		return print_json(out);
	}
	// The fields an operator looks at first; --json shows everything.
	// Payloads (input, output) print as JSON, so a string result shows its quotes.
	const char *fields[] = {"id",		  "definition", "version",	  "name",	  "status",		"state",
							"resource",	  "lease_owner", "worker",	  "attempt",  "labels",		"created_at",
							"updated_at", "ended_at",	 "input",	  "output",	  "error",		"cause",
							"parent_id",  "root_id",	 "child_index", "scope",	  "variables"};
	for (const char *f : fields) {
		if (!inst.contains(f)) continue;
		const json &v = inst[f];
		bool payload = std::string(f) == "input" || std::string(f) == "output" || std::string(f) == "variables";
		std::string text = v.is_null()					 ? "-"
						   : v.is_string() && !payload ? v.get<std::string>()
													   : v.dump(-1, ' ', false, json::error_handler_t::replace);
		std::cout << f << ":" << std::string(12 - std::min<size_t>(11, std::string(f).size()), ' ') << text
				  << "\n";
	}
	if (summary.is_object()) {
		auto n = [&](const char *k) { return summary.value(k, int64_t(0)); };
		std::cout << "children:    " << summary.value("kind", "") << ", " << n("total") << ": " << n("succeeded")
				  << " succeeded, " << n("failed") << " failed, " << n("running") << " running, " << n("waiting")
				  << " waiting\n";
		const int64_t first = (o.page - 1) * o.page_size + 1;
		std::cout << "\nchildren " << first << "-" << first + o.page_size - 1 << " (page " << o.page << "):\n";
		if (kids.page.empty())
			std::cout << "(none)\n";
		else
			print_children(kids.page);
		if (static_cast<int64_t>(kids.page.size()) == o.page_size)
			std::cout << "more: --page " << o.page + 1 << "\n";
		if (!kids.failed.empty()) {
			std::cout << "\nfailed children (first " << o.page_size << "):\n";
			print_children(kids.failed);
		}
	}
	std::cout << "\nhistory:\n";
	print_history(hist);
}

// genctl logs ID: the instance log alone (genroc.history), as GET
// /api/instances/{id}/history answers it with --json.
void cmd_logs(genroc::Store &store, const Options &o) {
	json hist = store.history(o.id);
	if (o.as_json) return print_json({{"instance_id", o.id}, {"history", hist}});
	print_history(hist);
}

// genctl object REF: one stored large value (genroc.get_object, GET
// /api/objects/{ref}), as JSON whatever --json says.
void cmd_object(genroc::Store &store, const Options &o) { print_json(store.get_object(o.object_ref)); }

void cmd_emit(genroc::Store &store, const Options &o) {
	json payload = parse_json_arg(o.payload, "--payload");
	std::string result = store.emit(o.id, o.event_name, payload);
	if (o.as_json) return print_json({{"instance_id", o.id}, {"event", o.event_name}, {"result", result}});
	std::cout << "event " << o.event_name << " " << result << " (instance " << o.id << ")\n";
}

void cmd_cancel(genroc::Store &store, const Options &o) {
	std::string status = store.cancel(o.id);
	if (o.as_json) return print_json({{"instance_id", o.id}, {"status", status}});
	std::cout << "instance " << o.id << " " << status << "\n";
}

// retry (resume == false) or resume a failed instance
void cmd_run_again(genroc::Store &store, const Options &o, bool resume) {
	std::string status = resume ? store.resume(o.id, parse_json_arg(o.output, "--output")) : store.retry(o.id);
	if (o.as_json) return print_json({{"instance_id", o.id}, {"status", status}});
	std::cout << "instance " << o.id << (resume ? " resumed: " : " retried: ") << status << "\n";
}

// redrive a failed, timed-out or cancelled instance
void cmd_redrive(genroc::Store &store, const Options &o) {
	const std::string status = store.redrive(o.id);
	if (o.as_json) return print_json({{"instance_id", o.id}, {"status", status}});
	std::cout << "instance " << o.id << " redriven: " << status << "\n";
}

// A worker's state: stopped (it said so), live (heartbeat within its
// stale-after) or stale (gone without stopping: its leases will lapse).
std::string worker_state(const json &w) {
	if (w.contains("status")) return cell(w, "status");
	if (w.contains("stopped_at") && !w["stopped_at"].is_null()) return "stopped";
	if (w.value("draining", false) && w.value("live", false)) return "draining";
	if (w.contains("live")) return w["live"] == true ? "live" : "stale";
	return "-";
}

void cmd_workers(genroc::Store &store, const Options &o) {
	json list = store.list_workers();
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &w : list)
		rows.push_back({cell(w, "worker"), cell(w, "host"), worker_state(w), cell(w, "heartbeat_at"),
						cell(w, "running"), cell(w, "durability"), cell(w, "queues")});
	print_table({"WORKER", "HOST", "STATE", "LAST HEARTBEAT", "RUNNING", "DURABILITY", "QUEUES"}, rows);
}

// genroc.worker_drain: the worker stops claiming and exits once its
// running tasks end (within its --shutdown-grace).
void cmd_workers_drain(genroc::Store &store, const Options &o) {
	json r = store.worker_drain(o.worker_id);
	if (o.as_json) return print_json(r);
	std::cout << "worker " << o.worker_id << " draining: " << r.value("running", 0)
			  << " running task(s) to finish, then it stops\n";
}

// Who ticks (genroc.tickers): the in-database ticker, genroc workers and
// other sessions that called tick in the last 7 days, newest first.
void cmd_tickers(genroc::Store &store, const Options &o) {
	json list = store.tickers();
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &t : list) {
		const int64_t ago = t.value("ago_ms", int64_t{0});
		rows.push_back({cell(t, "ticked_by"), cell(t, "kind"), cell(t, "role"), cell(t, "last_tick_at"),
						std::to_string(ago / 1000) + "." + std::to_string(ago % 1000 / 100) + "s",
						cell(t, "ticks")});
	}
	print_table({"TICKED BY", "KIND", "ROLE", "LAST TICK", "AGO", "TICKS"}, rows);
}

// Which worker runs what: the running (leased) instances and their lease owner.
void cmd_activity(genroc::Store &store, const Options &o) {
	json filter = {{"status", "running"}, {"limit", o.limit > 0 ? o.limit : 1000}};
	json list = store.list_instances(filter);
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &i : list)
		rows.push_back({owner_cell(i), cell(i, "id"), cell(i, "definition"), cell(i, "state"),
						cell(i, "attempt"), cell(i, "lease_expires")});
	std::sort(rows.begin(), rows.end());
	print_table({"WORKER", "INSTANCE", "DEFINITION", "STATE", "ATTEMPT", "LEASE EXPIRES"}, rows);
}

// A queue's limits in one cell: g = global_concurrency (0: none),
// p = partition_concurrency, r = task starts per period, pr = task starts
// per period in each partition, the period as a duration ("10/1m").
std::string limits_cell(const json &q) {
	auto period = [&](const char *key) {
		const json ms = q.value(key, json());
		if (!ms.is_number_integer()) return cell(q, key) + "ms";
		return genroc::format_duration(genroc::Millis(ms.get<int64_t>()));
	};
	std::string s = "g=" + cell(q, "global_concurrency") + " p=" + cell(q, "partition_concurrency");
	if (q.contains("rate_limit") && !q["rate_limit"].is_null())
		s += " r=" + cell(q, "rate_limit") + "/" + period("rate_period_ms");
	if (q.contains("partition_rate_limit") && !q["partition_rate_limit"].is_null())
		s += " pr=" + cell(q, "partition_rate_limit") + "/" + period("partition_rate_period_ms");
	return s;
}

void cmd_queues(genroc::Store &store, const Options &o) {
	json list = store.list_queues();
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &q : list) {
		std::string route = !q["handler"].is_null() ? "handler:" + q["handler"].get<std::string>()
												   : (q["match"].is_null() ? "-" : cell(q["match"]));
		rows.push_back({cell(q, "name"), cell(q, "kind"), cell(q, "depth"), cell(q, "queued"), cell(q, "running"),
						limits_cell(q), cell(q, "workers"), route});
	}
	print_table({"QUEUE", "KIND", "DEPTH", "QUEUED", "RUNNING", "LIMITS", "WORKERS", "ROUTE"}, rows);
	// Ready tasks nobody will claim: say so, and who would serve them.
	for (const auto &q : genroc::unserved_queues(list))
		std::cerr << "warning: queue " << cell(q, "name") << " has " << cell(q, "depth")
				  << " ready task(s) and no live worker serves it: " << genroc::unserved_hint(q) << "\n";
}

void cmd_queue_set(genroc::Store &store, const Options &o) {
	json options = parse_json_arg(o.queue_options, "--options");
	if (!options.is_object()) throw CliError{"--options must be a JSON object", kExitUsage};
	json q = store.queue_set(o.queue_name, options);
	if (o.as_json) return print_json(q);
	std::cout << "queue " << o.queue_name << " set: " << cell(q, "kind") << ", " << limits_cell(q) << "\n";
}

void cmd_queue_drop(genroc::Store &store, const Options &o) {
	store.queue_drop(o.queue_name);
	if (o.as_json) return print_json({{"dropped", o.queue_name}});
	std::cout << "queue " << o.queue_name << " dropped\n";
}

// API tokens: never their text (genroc token create shows it once).
void cmd_token_list(genroc::Store &store, const Options &o) {
	json list = store.token_list();
	if (o.as_json) return print_json(list);
	std::vector<std::vector<std::string>> rows;
	for (const auto &t : list) {
		std::string perms;
		for (const auto &p : t["permissions"]) perms += (perms.empty() ? "" : ",") + p.get<std::string>();
		rows.push_back({cell(t, "id"), cell(t, "name"), perms, cell(t, "created_by"), cell(t, "created_at"),
						cell(t, "revoked_at")});
	}
	print_table({"ID", "NAME", "PERMISSIONS", "CREATED BY", "CREATED", "REVOKED"}, rows);
}

void cmd_token_revoke(genroc::Store &store, const Options &o) {
	store.token_revoke(o.token_id);
	if (o.as_json) return print_json({{"id", o.token_id}, {"status", "revoked"}});
	std::cout << "token " << o.token_id << " revoked\n";
}

}  // namespace

int main(int argc, char **argv) {
	Options o;
	CLI::App app{"genctl: administer genroc definitions, instances and workers", "genctl"};
	app.require_subcommand(1, 1);
	app.fallthrough();	// global options may follow the command
	app.add_option("--database", o.database, "PostgreSQL URL or SQLite file")
		->envname("GENROC_DATABASE")
		->capture_default_str();
	app.add_flag("--json", o.as_json, "print JSON instead of a table");
	app.add_flag("--pooled", o.pooled,
				 "PostgreSQL is reached through a transaction pooler: no prepared statement is kept "
				 "(without it, a pooler is detected; settings go with each transaction either way)")
		->envname("GENROC_POOLED");

	auto *definitions = app.add_subcommand("definitions", "list definitions (newest version of each), or show one");
	auto *definition_show = definitions->add_subcommand(
		"show", "one definition as it was written (its stored content when no text was kept)");
	definition_show->add_option("NAME", o.define_name, "definition name")->required();
	definition_show->add_option("--version", o.define_version_text, "a version (default: the newest)");

	auto *define = app.add_subcommand("define", "register a definition from a JSON file");
	define->add_option("NAME", o.define_name, "definition name")->required();
	define->add_option("FILE", o.define_file, "ASL definition (JSON)")->required();

	auto *start = app.add_subcommand("start", "start an instance of a definition");
	start->add_option("DEF", o.start_definition, "definition name")->required();
	start->add_option("--input", o.input, "instance input: JSON, @FILE or - (standard input)")->capture_default_str();
	start->add_option("--options", o.start_options,
					  "start options (JSON: idempotency_key, priority, run_at, labels, ...)")
		->capture_default_str();

	auto *instances = app.add_subcommand("instances", "list instances, or show one");
	instances->require_subcommand(0, 1);
	instances->add_option("--status", o.status, "only this status (ready, running, waiting, ...)");
	instances->add_option("--definition", o.definition, "only this definition");
	instances->add_option("--label", o.labels, "only instances with this label (k=v, repeatable)")
		->check([](const std::string &s) {
			auto eq = s.find('=');
			return eq == std::string::npos || eq == 0 ? std::string("a label is key=value") : std::string();
		});
	instances->add_option("--limit", o.limit_text, "at most N instances");
	auto *root_opt = instances->add_option("--root", o.root_text, "the instances below this top instance (a tree)");
	instances->add_flag("--all", o.all, "children too (default: top-level instances only)")->excludes(root_opt);
	auto *show = instances->add_subcommand("show", "one instance: state, status, input, output, children, history");
	show->add_option("ID", o.id_text, "instance id")->required();
	show->add_option("--page", o.page_text, "which page of its children (default 1)");
	show->add_option("--page-size", o.page_size_text, "children per page (default 20, at most 10000)");

	auto *logs = app.add_subcommand("logs", "the instance log of one instance, oldest first");
	logs->add_option("ID", o.id_text, "instance id")->required();

	auto *object = app.add_subcommand("object", "one stored large value by its reference (docs/operations.md \"Large values\")");
	object->add_option("REF", o.object_ref, "the reference: 64 hex digits")->required();

	auto *cancel = app.add_subcommand("cancel", "cancel a live instance");
	cancel->add_option("ID", o.id_text, "instance id")->required();

	auto *retry = app.add_subcommand("retry", "run a failed instance again from the state it failed in");
	retry->add_option("ID", o.id_text, "instance id")->required();
	auto *resume = app.add_subcommand("resume", "continue a failed instance after its failed Task");
	resume->add_option("ID", o.id_text, "instance id")->required();
	resume->add_option("--output", o.output, "what the failed Task returns instead (JSON)")->capture_default_str();
	auto *redrive = app.add_subcommand(
		"redrive", "continue a failed, timed-out or cancelled instance where it stopped (a Map reruns only what failed)");
	redrive->add_option("ID", o.id_text, "instance id")->required();

	auto *emit = app.add_subcommand("emit", "emit an event to an instance (genroc:event waits)");
	emit->add_option("ID", o.id_text, "instance id")->required();
	emit->add_option("NAME", o.event_name, "event name")->required();
	emit->add_option("--payload", o.payload, "event payload (JSON)")->capture_default_str();

	auto *workers = app.add_subcommand("workers", "workers: state, last heartbeat, running instances");
	workers->require_subcommand(0, 1);
	auto *workers_drain = workers->add_subcommand(
		"drain", "ask a worker to stop claiming, finish its running tasks within its grace and exit");
	workers_drain->add_option("ID", o.worker_id, "worker id")->required();
	auto *tickers = app.add_subcommand("tickers", "who ticks: the in-database ticker and binaries, with their last tick");
	auto *activity = app.add_subcommand("activity", "which worker runs what (running instances)");

	auto *queues = app.add_subcommand("queues", "queues: kind, depth, running, limits, workers serving them");
	auto *queue = app.add_subcommand("queue", "configure a queue (stored in the database)");
	queue->require_subcommand(1, 1);
	auto *queue_set = queue->add_subcommand("set", "create or replace a queue");
	queue_set->add_option("NAME", o.queue_name, "queue name")->required();
	queue_set->add_option("--options", o.queue_options,
						  "queue options (JSON: kind, handler, match, global_concurrency, "
						  "partition_concurrency, rate_limit, partition_rate_limit)")
		->capture_default_str();
	auto *queue_drop = queue->add_subcommand("drop", "remove a queue (its instances keep it)");
	queue_drop->add_option("NAME", o.queue_name, "queue name")->required();

	auto *token = app.add_subcommand("token", "API tokens (genroc token create mints them)");
	token->require_subcommand(1, 1);
	auto *token_list = token->add_subcommand("list", "every token: id, name, permissions, creator, revoked");
	auto *token_revoke = token->add_subcommand("revoke", "revoke a token: it stops working at once");
	token_revoke->add_option("ID", o.token_id, "token id (genctl token list)")->required();

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		int rc = app.exit(e);
		return rc == 0 ? 0 : kExitUsage;
	}

	try {
		// Numbers are checked here, not by CLI11, so the error names the
		// argument in one line and an out-of-range id is refused, not clamped.
		if (!o.id_text.empty()) o.id = positive_arg(o.id_text, "ID", INT64_MAX);
		if (!o.define_version_text.empty())
			o.define_version = static_cast<int>(positive_arg(o.define_version_text, "--version", INT_MAX));
		if (!o.limit_text.empty()) o.limit = static_cast<int>(positive_arg(o.limit_text, "--limit", INT_MAX));
		if (!o.root_text.empty()) o.root = positive_arg(o.root_text, "--root", INT64_MAX);
		if (!o.page_size_text.empty()) o.page_size = positive_arg(o.page_size_text, "--page-size", 10000);
		if (!o.page_text.empty()) o.page = positive_arg(o.page_text, "--page", INT_MAX / o.page_size);
		// the commands that only read open a SQLite file read-only: a file
		// the user may read but not write (0444) can still be listed
		const bool reads_only = *definitions || *show || *instances || *logs || *object ||
								(*workers && !*workers_drain) || *tickers || *activity || *queues || *token_list;
		auto store = genroc::open_store(o.database, reads_only, genroc::WriteLane::general, o.pooled);
		if (*definition_show) cmd_definition_show(*store, o);
		else if (*definitions) cmd_definitions(*store, o);
		else if (*define) cmd_define(*store, o);
		else if (*start) cmd_start(*store, o);
		else if (*show) cmd_show(*store, o);
		else if (*instances) cmd_instances(*store, o);
		else if (*logs) cmd_logs(*store, o);
		else if (*object) cmd_object(*store, o);
		else if (*cancel) cmd_cancel(*store, o);
		else if (*retry) cmd_run_again(*store, o, false);
		else if (*resume) cmd_run_again(*store, o, true);
		else if (*redrive) cmd_redrive(*store, o);
		else if (*emit) cmd_emit(*store, o);
		else if (*workers_drain) cmd_workers_drain(*store, o);
		else if (*workers) cmd_workers(*store, o);
		else if (*tickers) cmd_tickers(*store, o);
		else if (*activity) cmd_activity(*store, o);
		else if (*queues) cmd_queues(*store, o);
		else if (*queue_set) cmd_queue_set(*store, o);
		else if (*queue_drop) cmd_queue_drop(*store, o);
		else if (*token_list) cmd_token_list(*store, o);
		else if (*token_revoke) cmd_token_revoke(*store, o);
		return 0;
	} catch (const CliError &e) {
		std::cerr << "genctl: " << e.message << "\n";
		return e.exit_code;
	} catch (const genroc::Error &e) {
		std::cerr << "genctl: ERROR " << e.sqlstate << ": " << e.what() << "\n";
		if (!e.detail.empty()) std::cerr << "DETAIL: " << e.detail << "\n";
		if (!e.hint.empty()) std::cerr << "HINT: " << e.hint << "\n";
		return kExitError;
	} catch (const std::exception &e) {
		std::cerr << "genctl: " << e.what() << "\n";
		return kExitError;
	}
}
