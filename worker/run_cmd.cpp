// run_cmd.cpp — `genroc run FILE` (see run_cmd.hpp).
//
// The tasks run on an ordinary Runner in a thread of this process (so leases,
// renewals, retries and timers behave exactly as under `genroc worker`); this
// thread follows the instance through store->history() and prints each new
// entry, until the instance ends.
#include "run_cmd.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "config.hpp"
#include "engine/queue_rules.hpp"
#include "json_guard.hpp"
#include "log.hpp"
#include "queues_config.hpp"
#include "runner.hpp"
#include "store.hpp"
#include "store_factory.hpp"

namespace genroc {

namespace {

constexpr int kOk = 0, kFailed = 1, kRefused = 2, kInterrupted = 130;

std::string stem(const std::string &path) {
	std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
	auto dot = base.find_last_of('.');
	return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string short_json(const json &j, size_t max = 200) {
	std::string s = j.dump();
	if (s.size() > max) s = s.substr(0, max - 3) + "...";
	return s;
}

// One progress line for one history entry.
std::string describe(const json &e, int64_t now_ms) {
	const std::string event = e.value("event", "");
	const std::string state = e.contains("state") && e["state"].is_string() ? e["state"].get<std::string>() : "";
	const json detail = e.contains("detail") ? e["detail"] : json::object();
	auto d = [&](const char *k) { return detail.is_object() && detail.contains(k) ? detail[k] : json(); };
	// --log-payloads=false leaves input and output out of the log: say nothing of them
	auto has = [&](const char *k) { return detail.is_object() && detail.contains(k); };
	if (event == "started") return has("input") ? "started, input " + short_json(d("input")) : "started";
	if (event == "entered" || event == "state_entered")
		return "-> " + state + (d("type").is_string() ? " (" + d("type").get<std::string>() + ")" : "");
	if (event == "task_scheduled") {
		std::string s = "   " + state + ": task " + (d("resource").is_string() ? d("resource").get<std::string>() : "");
		if (d("delay_ms").is_number() && d("delay_ms").get<int64_t>() > 0)
			s += ", retry in " + format_duration(Millis(d("delay_ms").get<int64_t>()));
		return s;
	}
	if (event == "task_started" || event == "task_claimed") return "   " + state + ": task running";
	if (event == "task_succeeded")
		return "   " + state + ": task succeeded" + (has("output") ? ", output " + short_json(d("output")) : "");
	if (event == "task_failed") {
		std::string s = "   " + state + ": task failed: " + (d("error").is_string() ? d("error").get<std::string>() : "");
		if (d("cause").is_string() && !d("cause").get<std::string>().empty()) s += ": " + d("cause").get<std::string>();
		return s;
	}
	if (event == "task_interrupted") return "   " + state + ": task interrupted (lease lapsed or released)";
	if (event == "wait_started" || event == "waiting") {
		// What `run` waits for: the timer's time, and how long from now.
		std::string s = "   " + state + ": waiting";
		int64_t until = 0;
		if (d("until").is_string() && asl::parse_time(d("until").get<std::string>(), until)) {
			s += " until " + d("until").get<std::string>();
			if (until > now_ms) s += " (" + format_duration(Millis(until - now_ms)) + " from now)";
		}
		return s;
	}
	if (event == "wait_ended" || event == "timer_fired") return "   " + state + ": timer fired";
	if (event == "succeeded") return "succeeded";
	if (event == "failed") return "failed: " + short_json(d("error")) + " " + short_json(d("cause"));
	if (event == "cancelled") return "cancelled";
	std::string s = "   " + (state.empty() ? std::string() : state + ": ") + event;
	if (detail.is_object() && !detail.empty()) s += " " + short_json(detail);
	return s;
}

// A line of run's progress on stderr: text as a person reads it, or with
// --log-mode json one JSON object like the log's lines (msg: that text).
void progress(log::Level level, const std::string &text, const json &fields = json::object()) {
	if (log::mode() == log::Mode::json) log::write_always(level, text, fields);
	else std::fprintf(stderr, "%s\n", text.c_str());
}

// The progress of the instance's fan-out (get_instance's "children"), or ""
// when it is not waiting for children.
std::string progress_text(const json &instance) {
	if (instance.value("status", "") != "waiting" || instance.value("wait_kind", json()) != "children" ||
		!instance.contains("children") || !instance["children"].is_object())
		return "";
	const json &c = instance["children"];
	auto n = [&](const char *k) { return c.contains(k) && c[k].is_number_integer() ? c[k].get<int64_t>() : 0; };
	const std::string state = instance.contains("state") && instance["state"].is_string()
								  ? instance["state"].get<std::string>()
								  : std::string();
	std::string s = "   " + state + ": " + std::to_string(n("succeeded") + n("failed")) + "/" +
					std::to_string(n("total")) + " done";
	if (n("failed") > 0) s += " (" + std::to_string(n("failed")) + " failed)";
	s += ", " + std::to_string(n("running")) + " running, " + std::to_string(n("waiting")) + " waiting";
	return s;
}

}  // namespace

int run_file(const Config &cfg, const HandlerRegistry &handlers, const StopFlag &stop) {
	auto refuse = [](const std::string &msg) {
		progress(log::Level::error, "genroc run: " + msg);
		return kRefused;
	};
	json definition, input;
	std::string source;	 // the file's text, kept with a new version
	try {
		source = read_text_file(cfg.run_file);
		definition = parse_json_text(source, cfg.run_file);
		input = parse_json_text(json_argument_text(cfg.run_input, "--input"), "--input");
	} catch (const std::exception &e) {
		return refuse(e.what());
	}
	const std::string name = cfg.run_name.empty() ? stem(cfg.run_file) : cfg.run_name;
	// A handler this process lacks: its task would wait in the handler's
	// queue for a worker that has it (docs/sql-api.md "Queues and routing"), which a
	// run of one process never gets.  Said before anything is written.
	{
		std::set<std::string> used;
		engine::handler_names(definition, used);
		for (auto &h : used)
			if (!handlers.find("handler:" + h))
				return refuse("the definition uses \"handler:" + h +
							  "\", and this process has no such handler (name it in the --handlers file)");
	}

	// Never echo a PostgreSQL URL: it may carry a password.
	const std::string where = cfg.database.find("://") != std::string::npos || cfg.database.find('=') != std::string::npos
								  ? std::string("PostgreSQL")
								  : cfg.database;
	std::unique_ptr<Store> store;
	StartResult started;
	try {
		store = store_factory(cfg)();
		DefineResult def = store->define(name, definition, source);
		started = store->start(name, input, json::object());
		progress(log::Level::info,
				 "instance " + std::to_string(started.instance_id) + " of " + def.name + " v" +
					 std::to_string(def.version) + " (" + where + ")",
				 {{"instance", started.instance_id}, {"definition", def.name}, {"version", def.version}});
	} catch (const Error &e) {
		if (e.sqlstate == sqlstate::INVALID_DEFINITION) return refuse(e.what());
		progress(log::Level::error, std::string("genroc run: ") + e.what() + " (SQLSTATE " + e.sqlstate + ")",
				 {{"sqlstate", e.sqlstate}});
		return kFailed;
	} catch (const std::exception &e) {
		progress(log::Level::error, std::string("genroc run: ") + e.what());
		return kFailed;
	}

	// An in-process worker with an id of its own, so it never collides with
	// a `genroc worker` on the same database.
	WorkerOptions o;
	o.host = host_name();
	o.worker_id = "run-" + o.host + "-" + std::to_string(::getpid());
	// Its handlers' queues too: those its file names and those configured
	// in the database for its handlers (docs/sql-api.md "Queues and routing").
	{
		std::vector<std::string> hq = handlers.queues();
		try {
			for (auto &q : configured_handler_queues(*store, handlers.names())) hq.push_back(q);
		} catch (const Error &) {
			// a role that may not list queues: the handlers file's own
		}
		o.queues = worker_queues(cfg, hq);
	}
	o.shutdown_grace = Millis(5'000);
	o.tick_interval = Millis(200);	// timers fire promptly
	o.poll_interval = Millis(100);
	o.unserved_check = Millis(0);	// other queues' backlog is not this run's business
	Runner runner(o, handlers, store_factory(cfg, WriteLane::worker));
	StopFlag runner_stop;
	std::atomic<int> runner_rc{-1};	// -1 while the worker runs
	std::thread worker([&] { runner_rc = runner.run(runner_stop); });

	const auto t0 = std::chrono::steady_clock::now();
	int64_t printed = 0;
	json instance;
	bool interrupted = false;
	auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
	// A fan-out's progress between children_started and children_done: on a
	// terminal one line rewritten in place; otherwise (and with --log-mode
	// json) a line when the counts changed, at most every kProgressEvery.
	const bool tty = ::isatty(STDERR_FILENO) == 1 && log::mode() != log::Mode::json;
	constexpr double kProgressEvery = 1.0;
	bool progress_on_line = false;	// the terminal's cursor is after a progress line
	std::string last_progress;
	double last_progress_at = -kProgressEvery;
	auto end_progress_line = [&] {
		if (progress_on_line) std::fprintf(stderr, "\r\033[K");
		progress_on_line = false;
	};
	auto print_new = [&] {
		json hist = store->history(started.instance_id);
		int64_t now_ms = std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count();
		for (auto &e : hist) {
			int64_t seq = e.value("seq", int64_t{0});
			if (seq <= printed) continue;
			printed = seq;
			end_progress_line();
			const double secs = elapsed();
			char at[32];
			std::snprintf(at, sizeof at, "[%6.2fs] ", secs);
			progress(log::Level::info, log::mode() == log::Mode::json ? describe(e, now_ms) : at + describe(e, now_ms),
					 {{"instance", started.instance_id},
					  {"elapsed_s", std::round(secs * 100) / 100},
					  {"event", e.value("event", json())},
					  {"state", e.value("state", json())}});
		}
	};
	auto print_progress = [&] {
		const std::string p = progress_text(instance);
		if (p.empty() || p == last_progress) return;
		const double secs = elapsed();
		if (tty) {
			std::fprintf(stderr, "\r\033[K[%6.2fs] %s", secs, p.c_str());
			progress_on_line = true;
		} else {
			if (secs - last_progress_at < kProgressEvery) return;
			char at[32];
			std::snprintf(at, sizeof at, "[%6.2fs] ", secs);
			progress(log::Level::info, log::mode() == log::Mode::json ? p.substr(3) : at + p,
					 {{"instance", started.instance_id},
					  {"elapsed_s", std::round(secs * 100) / 100},
					  {"children", instance["children"]}});
			last_progress_at = secs;
		}
		std::fflush(stderr);
		last_progress = p;
	};
	Backoff backoff;
	for (;;) {
		try {
			print_new();
			instance = store->get_instance(started.instance_id);
			print_progress();
			backoff.reset();
			const std::string status = instance.value("status", "");
			if (status == "succeeded" || status == "failed" || status == "cancelled") {
				// The entries written between the history read above and
				// the end: the last task's result and the final state.
				print_new();
				break;
			}
		} catch (const Error &e) {
			if (!is_transient(e)) {
				end_progress_line();
				progress(log::Level::error, std::string("genroc run: ") + e.what() + " (SQLSTATE " + e.sqlstate + ")",
						 {{"sqlstate", e.sqlstate}});
				interrupted = true;
				break;
			}
			stop.wait_for(backoff.next());
		}
		if (stop.wait_for(Millis(100))) {
			interrupted = true;
			break;
		}
		if (runner_rc.load() >= 0) {
			// The in-process worker gave up (its log said why): nothing
			// would ever run the instance's tasks.
			end_progress_line();
			progress(log::Level::error, "genroc run: the worker stopped");
			worker.join();
			return kFailed;
		}
	}
	end_progress_line();
	runner_stop.request();
	worker.join();
	if (interrupted) {
		progress(log::Level::warn,
				 "interrupted; instance " + std::to_string(started.instance_id) + " stays in " + where +
					 " and continues on the next worker",
				 {{"instance", started.instance_id}});
		return kInterrupted;
	}

	const std::string status = instance.value("status", "");
	json out = {{"status", status},
				{"output", instance.contains("output") ? instance["output"] : json()},
				{"error", instance.contains("error") ? instance["error"] : json()},
				{"cause", instance.contains("cause") ? instance["cause"] : json()}};
	if (cfg.run_json) {
		std::printf("%s\n", out.dump().c_str());
	} else if (status == "succeeded") {
		std::printf("%s\n", out["output"].dump(2).c_str());
	} else {
		progress(log::Level::info,
				 status + ": " + (out["error"].is_string() ? out["error"].get<std::string>() : "") +
					 (out["cause"].is_string() ? ": " + out["cause"].get<std::string>() : ""),
				 {{"instance", started.instance_id}, {"status", status}, {"error", out["error"]}, {"cause", out["cause"]}});
	}
	std::fflush(stdout);
	return status == "succeeded" ? kOk : kFailed;
}

}  // namespace genroc
