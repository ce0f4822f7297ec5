// bench.cpp — genroc's own benchmark over the Store interface (the same
// calls the genroc binary makes), in one process: worker threads, each with
// its own connection, claim tasks of genroc:noop processes and complete them.
//
// For each store x durability x parallel workers (and, on PostgreSQL, with
// and without commit_delay) it runs two workloads:
//   w3  a 3-task process (three genroc:noop Tasks): tasks/s and instances/s
//   w1  a 1-task process: instances/s
// Enqueue is batched: Store::start_many starts a chunk of 500 instances (one
// transaction per chunk, like the peers' batched enqueue), on both stores;
// its rate is the "start/s" column (the w1 runs' enqueue, timed apart).
// Then the workers drain the queue and the clock runs from their start to
// the last completion.
// Latency: one idle worker waiting (PostgreSQL: LISTEN genroc; SQLite: 1 ms
// polls) and one start at a time: from the start call to the task claimed,
// p50/p99.  CPU: this process (genroc's side; on SQLite the database is in
// it too) and the PostgreSQL server's processes, from /proc.  WAL bytes per
// task: the insert LSN's advance.  Each cell is the median of --repeat runs.
//
//   genroc_bench --pg URL --pgdata DIR --sqlite-dir DIR [--json FILE]
//                [--w3 N] [--w1 N] [--repeat N] [--latency N] [--commit-delay US]
//                [--workers 1,4,16] [--stores postgres,sqlite]
//                [--levels none,essential,terminal,strict] [--no-handback] [--batch-reports]
//                [--claim N] [--keep-db]
//   genroc_bench --prune-sqlite FILE [--prune-retention-ms MS]
// Workers report with complete_and_claim (the next task of a 3-task process
// comes back with the report, as in the genroc binary); --no-handback:
// complete, and every task through claim; --batch-reports: the tasks a
// worker holds (a claim's, then those handed back) reported in one
// complete_many call (with the hand-back unless --no-handback).
// --claim N: the tasks a worker thread asks for per claim (1..10000,
// default 8); with --batch-reports, the size of its batches.
// --keep-db: PostgreSQL runs in the database as it is (the extension is not
// dropped and created again between runs), for a database filled beforehand
// (bench/storage.sh MILLION=1: the same figures with a million concluded
// instances in the tables); what earlier runs leave (their concluded
// instances) stays.
// --prune-sqlite FILE: no benchmark; prunes the SQLite file FILE with
// Store::prune (instance retention MS, default one day; log retention off;
// an object grace of 1 s),
// 1000 per call until a call deletes no instance, and prints one JSON line:
// the summed counts of the calls' results, the seconds they took and rows/s.
#include <libpq-fe.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sqlite_store.hpp"
#include "store.hpp"

using namespace genroc;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
	std::string pg_url, pgdata, sqlite_dir, json_path = "bench-results.json";
	int w3 = 600, w1 = 1500, repeat = 3, latency = 200, commit_delay = 100;
	bool handback = true;
	bool batch_reports = false;	// --batch-reports: a claim's tasks reported in one complete_many
	int claim = 8;	// --claim: tasks asked for per claim call
	bool keep_db = false;
	std::string prune_sqlite;
	int64_t prune_retention_ms = 86400000;
	std::vector<int> workers = {1, 4, 16};
	std::vector<std::string> stores = {"postgres", "sqlite"};
	std::vector<std::string> levels = {"none", "essential", "terminal", "strict"};
};

const json kOne = json::parse(R"({"StartAt":"T","States":{"T":{"Type":"Task","Resource":"genroc:noop","End":true}}})");
const json kThree = json::parse(R"({"StartAt":"A","States":{
	"A":{"Type":"Task","Resource":"genroc:noop","Next":"B"},
	"B":{"Type":"Task","Resource":"genroc:noop","Next":"C"},
	"C":{"Type":"Task","Resource":"genroc:noop","End":true}}})");

double cpu_self_s() {
	rusage u{};
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds of the postmaster and all its children (backends, WAL writer...).
double cpu_pg_s(const std::string &pgdata) {
	if (pgdata.empty()) return 0;
	std::ifstream pidf(pgdata + "/postmaster.pid");
	long post = 0;
	pidf >> post;
	if (post <= 0) return 0;
	const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
	double total = 0;
	DIR *d = opendir("/proc");
	if (!d) return 0;
	while (dirent *e = readdir(d)) {
		long pid = std::atol(e->d_name);
		if (pid <= 0) continue;
		std::ifstream st("/proc/" + std::string(e->d_name) + "/stat");
		std::string line;
		if (!std::getline(st, line)) continue;
		auto close = line.rfind(')');
		if (close == std::string::npos) continue;
		std::istringstream rest(line.substr(close + 2));
		std::string f;
		std::vector<std::string> fields;
		while (rest >> f) fields.push_back(f);
		// fields[0] is state (field 3); ppid is field 4, utime 14, stime 15
		if (fields.size() < 13) continue;
		long ppid = std::atol(fields[1].c_str());
		if (pid != post && ppid != post) continue;
		total += (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / tick;
	}
	closedir(d);
	return total;
}

// A raw libpq connection for what the Store interface does not batch.
struct Pq {
	PGconn *c;
	explicit Pq(const std::string &url) : c(PQconnectdb(url.c_str())) {
		if (PQstatus(c) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c));
	}
	~Pq() { PQfinish(c); }
	std::string q(const std::string &sql, std::vector<std::string> params = {}) {
		std::vector<const char *> v;
		for (auto &p : params) v.push_back(p.c_str());
		PGresult *r = PQexecParams(c, sql.c_str(), static_cast<int>(v.size()), nullptr, v.data(), nullptr, nullptr, 0);
		auto st = PQresultStatus(r);
		if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
			std::string m = PQerrorMessage(c);
			PQclear(r);
			throw std::runtime_error(sql + ": " + m);
		}
		std::string out = st == PGRES_TUPLES_OK && PQntuples(r) ? PQgetvalue(r, 0, 0) : "";
		PQclear(r);
		return out;
	}
};

struct Config {
	std::string store;
	DurabilityLevel level;
	int workers;
	int commit_delay;  // -1: off
	std::string workload;  // w1 | w3
};

struct Result {
	double seconds = 0, instances_s = 0, tasks_s = 0, cpu_genroc_s = 0, cpu_db_s = 0;
	double wal_bytes_per_task = 0, calls_per_task = 0, starts_s = 0;
};

class Bench {
  public:
	explicit Bench(Options o) : o_(std::move(o)) {}

	std::unique_ptr<Store> open(const Config &c, const std::string &sqlite_path) {
		std::unique_ptr<Store> s = c.store == "postgres" ? open_pg_store(o_.pg_url) : open_sqlite_store(sqlite_path);
		s->set_durability(c.level);
		if (c.commit_delay >= 0) s->set_commit_delay(c.commit_delay);
		return s;
	}

	// A fresh database state: PostgreSQL drops and recreates the extension;
	// SQLite gets a new file.
	std::string fresh(const Config &c, int run) {
		if (c.store == "postgres") {
			Pq p(o_.pg_url);
			if (!o_.keep_db) {
				p.q("DROP EXTENSION IF EXISTS genroc CASCADE");
				p.q("CREATE EXTENSION genroc");
			}
			p.q("CHECKPOINT");
			return "";
		}
		std::string path = o_.sqlite_dir + "/bench-" + std::to_string(run) + ".db";
		for (auto ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
		return path;
	}

	// Starts n instances in chunks of 500 (the store's durability level is
	// set by open()); returns the starts per second.
	static double enqueue(Store &s, const std::string &def, int n) {
		const auto t0 = Clock::now();
		for (int done = 0; done < n; done += 500) {
			const int k = std::min(500, n - done);
			json items = json::array();
			for (int i = 0; i < k; i++) items.push_back(json{{"i", done + i}});
			s.start_many(def, items, json::object());
		}
		return n / std::chrono::duration<double>(Clock::now() - t0).count();
	}

	Result throughput(const Config &c, int run) {
		const std::string path = fresh(c, run);
		auto admin = open(c, path);
		const std::string def = c.workload == "w3" ? "three" : "one";
		admin->define(def, c.workload == "w3" ? kThree : kOne);
		const int instances = c.workload == "w3" ? o_.w3 : o_.w1;
		const int tasks = instances * (c.workload == "w3" ? 3 : 1);
		const double starts_s = enqueue(*admin, def, instances);

		std::vector<std::unique_ptr<Store>> stores;
		for (int w = 0; w < c.workers; w++) {
			stores.push_back(open(c, path));
			stores.back()->worker_register("bench-" + std::to_string(w), json{{"lease_duration", "300s"}});
		}
		std::string lsn0;
		if (c.store == "postgres") lsn0 = Pq(o_.pg_url).q("SELECT pg_current_wal_insert_lsn()::text");
		std::atomic<int> done{0}, calls{0};
		const double cpu0 = cpu_self_s(), db0 = c.store == "postgres" ? cpu_pg_s(o_.pgdata) : 0;
		const auto t0 = Clock::now();
		std::vector<std::thread> threads;
		for (int w = 0; w < c.workers; w++)
			threads.emplace_back([&, w] {
				Store &s = *stores[w];
				const std::string id = "bench-" + std::to_string(w);
				// with hand-back (the binary's way): a report may return the
				// instance's next task, run before the next claim
				std::deque<Task> work;
				while (done.load() < tasks) {
					if (work.empty()) {
						auto batch = s.claim(id, {"default"}, o_.claim);
						calls++;
						if (batch.empty()) std::this_thread::yield();
						for (auto &t : batch) work.push_back(std::move(t));
						continue;
					}
					if (o_.batch_reports) {
						// the tasks in hand reported in one call (complete_many),
						// the next ones handed back in its outcomes
						std::vector<Store::Completion> reports;
						for (const Task &t : work) reports.push_back({t.instance_id, t.epoch, json::object()});
						work.clear();
						for (auto &o : s.complete_many(reports, o_.handback ? id : "", {"default"}))
							if (o.next) work.push_back(std::move(*o.next));
						calls++;
						done += static_cast<int>(reports.size());
						continue;
					}
					Task t = std::move(work.front());
					work.pop_front();
					if (o_.handback) {
						auto rep = s.complete_and_claim(t.instance_id, t.epoch, json::object(), id, {"default"});
						if (rep.next) work.push_back(std::move(*rep.next));
					} else {
						s.complete(t.instance_id, t.epoch, json::object());
					}
					calls++;
					done++;
				}
			});
		for (auto &t : threads) t.join();
		const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
		Result r;
		r.seconds = secs;
		r.cpu_genroc_s = cpu_self_s() - cpu0;
		if (c.store == "postgres") {
			r.cpu_db_s = cpu_pg_s(o_.pgdata) - db0;
			Pq p(o_.pg_url);
			r.wal_bytes_per_task =
				std::atof(p.q("SELECT pg_current_wal_insert_lsn() - $1::pg_lsn", {lsn0}).c_str()) / tasks;
		}
		r.instances_s = instances / secs;
		r.tasks_s = tasks / secs;
		r.calls_per_task = static_cast<double>(calls.load()) / tasks;
		r.starts_s = starts_s;
		return r;
	}

	// p50/p99 in ms from the start call to the claim, one at a time.
	std::pair<double, double> latency(const Config &c, int run) {
		const std::string path = fresh(c, run);
		auto starter = open(c, path);
		starter->define("one", kOne);
		auto worker = open(c, path);
		worker->worker_register("lat", json{{"lease_duration", "300s"}});
		std::atomic<int64_t> claimed_id{0};
		std::atomic<Clock::rep> claimed_at{0};
		std::atomic<bool> stop{false};
		std::thread w([&] {
			while (!stop) {
				auto tasks = worker->claim("lat", {"default"}, 1);
				if (tasks.empty()) {
					worker->wait_for_work(c.store == "postgres" ? 100 : 1);
					continue;
				}
				claimed_at = Clock::now().time_since_epoch().count();
				worker->complete(tasks[0].instance_id, tasks[0].epoch, json::object());
				claimed_id = tasks[0].instance_id;
			}
		});
		std::vector<double> ms;
		for (int i = 0; i < o_.latency; i++) {
			const auto t0 = Clock::now();
			auto r = starter->start("one", json::object(), json::object());
			while (claimed_id.load() != r.instance_id) std::this_thread::yield();
			ms.push_back(std::chrono::duration<double, std::milli>(Clock::duration(claimed_at.load()) -
																   t0.time_since_epoch())
							 .count());
		}
		stop = true;
		w.join();
		std::sort(ms.begin(), ms.end());
		return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
	}

	static double median(std::vector<double> v) {
		std::sort(v.begin(), v.end());
		return v[v.size() / 2];
	}

	int run() {
		json out = json::array();
		std::vector<DurabilityLevel> levels;
		for (const auto &name : o_.levels) {
			const DurabilityLevel all[] = {DurabilityLevel::none, DurabilityLevel::essential,
										   DurabilityLevel::terminal, DurabilityLevel::strict};
			bool known = false;
			for (auto l : all)
				if (name == durability_name(l)) levels.push_back(l), known = true;
			if (!known) throw std::runtime_error("--levels: unknown durability level " + name);
		}
		std::printf("%-8s %-9s %5s %3s | %9s %9s | %9s | %7s %7s | %8s %8s | %6s %6s | %7s\n", "store", "durabil.", "delay",
					"wk", "w3 inst/s", "w3 task/s", "w1 inst/s", "lat p50", "lat p99", "cpu gen", "cpu db",
					"WAL/t", "call/t", "start/s");
		int run_no = 0;
		for (auto &store : o_.stores) {
			if (store == "postgres" && o_.pg_url.empty()) continue;
			for (auto level : levels) {
				std::vector<int> delays = {-1};
				if (store == "postgres" && o_.commit_delay > 0 &&
					(level == DurabilityLevel::essential || level == DurabilityLevel::strict))
					delays.push_back(o_.commit_delay);
				for (int delay : delays) {
					Config lc{store, level, 1, delay, "w1"};
					std::vector<double> p50s, p99s;
					for (int i = 0; i < o_.repeat; i++) {
						auto [a, b] = latency(lc, run_no++);
						p50s.push_back(a);
						p99s.push_back(b);
					}
					const double p50 = median(p50s), p99 = median(p99s);
					for (int workers : o_.workers) {
						std::map<std::string, std::vector<Result>> rs;
						for (const char *wl : {"w3", "w1"})
							for (int i = 0; i < o_.repeat; i++)
								rs[wl].push_back(throughput({store, level, workers, delay, wl}, run_no++));
						auto med = [&](const char *wl, double Result::*f) {
							std::vector<double> v;
							for (auto &r : rs[wl]) v.push_back(r.*f);
							return median(v);
						};
						const double w3i = med("w3", &Result::instances_s), w3t = med("w3", &Result::tasks_s),
									 w1i = med("w1", &Result::instances_s);
						// CPU per task, in microseconds, from the 3-task runs
						const double tasks3 = o_.w3 * 3.0;
						const double cg = med("w3", &Result::cpu_genroc_s) / tasks3 * 1e6,
									 cd = med("w3", &Result::cpu_db_s) / tasks3 * 1e6;
						const double wal = med("w3", &Result::wal_bytes_per_task),
									 calls = med("w3", &Result::calls_per_task),
									 starts = med("w1", &Result::starts_s);
						// SQLite runs in genroc's process: its CPU is in "cpu gen", and
						// it has no WAL position to read.
						const bool pg = store == "postgres";
						char db_cell[16], wal_cell[16];
						if (pg) std::snprintf(db_cell, sizeof db_cell, "%6.0fus", cd);
						else std::snprintf(db_cell, sizeof db_cell, "%8s", "in-proc");
						std::snprintf(wal_cell, sizeof wal_cell, "%6.0f", wal);
						if (!pg) std::snprintf(wal_cell, sizeof wal_cell, "%6s", "-");
						std::printf("%-8s %-9s %5s %3d | %9.0f %9.0f | %9.0f | %7.2f %7.2f | %6.0fus %s | %s %6.2f | %7.0f\n",
									store.c_str(), durability_name(level),
									delay < 0 ? "-" : std::to_string(delay).c_str(), workers, w3i, w3t, w1i, p50, p99,
									cg, db_cell, wal_cell, calls, starts);
						std::fflush(stdout);
						out.push_back({{"store", store},
									   {"durability", durability_name(level)},
									   {"commit_delay_us", delay < 0 ? json(nullptr) : json(delay)},
									   {"workers", workers},
									   {"w3_instances_per_s", w3i},
									   {"w3_tasks_per_s", w3t},
									   {"w1_instances_per_s", w1i},
									   {"latency_p50_ms", p50},
									   {"latency_p99_ms", p99},
									   {"cpu_genroc_us_per_task", cg},
									   {"cpu_db_us_per_task", store == "postgres" ? json(cd) : json(nullptr)},
									   {"wal_bytes_per_task", store == "postgres" ? json(wal) : json(nullptr)},
									   {"calls_per_task", calls},
									   {"starts_per_s", starts},
									   {"repeat", o_.repeat}});
					}
				}
			}
		}
		std::ofstream(o_.json_path) << out.dump(2) << "\n";
		std::printf("JSON: %s\n", o_.json_path.c_str());
		return 0;
	}

  private:
	Options o_;
};

std::vector<int> int_list(const std::string &s) {
	std::vector<int> v;
	std::stringstream ss(s);
	for (std::string x; std::getline(ss, x, ',');) v.push_back(std::stoi(x));
	return v;
}

// --prune-sqlite: retention on a filled SQLite file, timed in this process
// (the database runs in it), the counts from prune's own results.
int prune_sqlite(const Options &o) {
	if (!std::filesystem::exists(o.prune_sqlite))
		throw std::runtime_error("--prune-sqlite: no file " + o.prune_sqlite);
	auto s = open_sqlite_store(o.prune_sqlite);
	// as storage.sh's PostgreSQL prune: the objects of what is pruned are
	// deleted at collection's next look
	LogOptions lo;
	lo.object_grace_ms = 1000;
	s->set_log_options(lo);
	int64_t log_rows = 0, instances = 0, objects = 0, calls = 0;
	const auto t0 = Clock::now();
	for (;;) {
		json r = s->prune(0, o.prune_retention_ms, 1000);
		calls++;
		log_rows += r.value("log_rows", 0);
		objects += r.value("objects", 0);
		const int n = r.value("instances", 0);
		instances += n;
		if (n == 0) break;
	}
	const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	std::printf("%s\n", json{{"calls", calls},
							 {"instances", instances},
							 {"log_rows", log_rows},
							 {"objects", objects},
							 {"seconds", secs},
							 {"instances_per_s", instances / secs},
							 {"log_rows_per_s", log_rows / secs}}
							.dump()
							.c_str());
	return 0;
}

}  // namespace

int main(int argc, char **argv) {
	genroc::sqlite_process_setup();	// as the genroc binary
	Options o;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> std::string {
			if (i + 1 >= argc) {
				std::fprintf(stderr, "%s needs a value\n", a.c_str());
				std::exit(2);
			}
			return argv[++i];
		};
		if (a == "--pg") o.pg_url = val();
		else if (a == "--pgdata") o.pgdata = val();
		else if (a == "--sqlite-dir") o.sqlite_dir = val();
		else if (a == "--json") o.json_path = val();
		else if (a == "--w3") o.w3 = std::stoi(val());
		else if (a == "--w1") o.w1 = std::stoi(val());
		else if (a == "--repeat") o.repeat = std::stoi(val());
		else if (a == "--latency") o.latency = std::stoi(val());
		else if (a == "--commit-delay") o.commit_delay = std::stoi(val());
		else if (a == "--no-handback") o.handback = false;
		else if (a == "--batch-reports") o.batch_reports = true;
		else if (a == "--claim") o.claim = std::stoi(val());
		else if (a == "--keep-db") o.keep_db = true;
		else if (a == "--prune-sqlite") o.prune_sqlite = val();
		else if (a == "--prune-retention-ms") o.prune_retention_ms = std::stoll(val());
		else if (a == "--workers") o.workers = int_list(val());
		else if (a == "--stores") {
			o.stores.clear();
			std::stringstream ss(val());
			for (std::string x; std::getline(ss, x, ',');) o.stores.push_back(x);
		} else if (a == "--levels") {
			o.levels.clear();
			std::stringstream ss(val());
			for (std::string x; std::getline(ss, x, ',');) o.levels.push_back(x);
		} else {
			std::fprintf(stderr, "unknown argument %s\n", a.c_str());
			return 2;
		}
	}
	if (o.claim < 1 || o.claim > 10000) {
		std::fprintf(stderr, "--claim must be between 1 and 10000, not %d\n", o.claim);
		return 2;
	}
	if (o.latency < 1) {
		std::fprintf(stderr, "--latency must be at least 1 (starts timed one at a time), not %d\n", o.latency);
		return 2;
	}
	if (!o.prune_sqlite.empty()) {
		try {
			return prune_sqlite(o);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "genroc_bench: %s\n", e.what());
			return 1;
		}
	}
	if (o.sqlite_dir.empty()) o.sqlite_dir = std::filesystem::temp_directory_path().string();
	try {
		return Bench(o).run();
	} catch (const std::exception &e) {
		std::fprintf(stderr, "genroc_bench: %s\n", e.what());
		return 1;
	}
}
