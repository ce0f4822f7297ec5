// map_bench.cpp — a Map's cost per item against its size, over
// the Store interface the genroc binary uses, in one process.
//
// For each store and size: a fresh database, one instance of a Map over
// `size` items (MaxConcurrency --max-concurrency, each item one genroc:noop
// Task), and --workers threads, each with its own connection, claiming 8
// tasks at a time and completing each in its own call, until the Map has
// ended.  The clock and the CPU counters run from the start call (which
// creates the children) to the Map's end.  CPU: this process (on SQLite the
// database is in it) and the PostgreSQL server's processes, from /proc.
// The last column is the CPU per item against the first size's: constant
// cost per item reads 1.0 all the way down.
//
//   genroc_map_bench --pg URL --pgdata DIR --sqlite-dir DIR [--sizes 1000,10000]
//                    [--workers 2] [--max-concurrency 50] [--stores postgres,sqlite]
//                    [--json FILE]
#include <libpq-fe.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <fstream>
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
	std::string pg_url, pgdata, sqlite_dir, json_path = "map-bench-results.json";
	std::vector<int> sizes = {1000, 10000};
	int workers = 2, max_concurrency = 50;
	std::vector<std::string> stores = {"postgres", "sqlite"};
};

json map_definition(int max_concurrency) {
	return {{"StartAt", "M"},
			{"States",
			 {{"M",
			   {{"Type", "Map"},
				{"ItemsPath", "$.items"},
				{"MaxConcurrency", max_concurrency},
				{"ItemProcessor",
				 {{"StartAt", "T"}, {"States", {{"T", {{"Type", "Task"}, {"Resource", "genroc:noop"}, {"End", true}}}}}}},
				{"End", true}}}}}};
}

double cpu_self_s() {
	rusage u{};
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds of the postmaster and its live children, plus the children it
// has reaped (cutime/cstime: backends of connections closed since).
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
		// fields[0] is state (field 3); ppid field 4, utime 14, stime 15, cutime 16, cstime 17
		if (fields.size() < 15) continue;
		long ppid = std::atol(fields[1].c_str());
		if (pid != post && ppid != post) continue;
		total += (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / tick;
		if (pid == post) total += (std::atof(fields[13].c_str()) + std::atof(fields[14].c_str())) / tick;
	}
	closedir(d);
	return total;
}

void pg_exec(const std::string &url, const std::string &sql) {
	PGconn *c = PQconnectdb(url.c_str());
	if (PQstatus(c) != CONNECTION_OK) {
		std::string m = PQerrorMessage(c);
		PQfinish(c);
		throw std::runtime_error(m);
	}
	PGresult *r = PQexec(c, sql.c_str());
	const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
	std::string m = PQerrorMessage(c);
	PQclear(r);
	PQfinish(c);
	if (!ok) throw std::runtime_error(sql + ": " + m);
}

struct Result {
	double seconds = 0, cpu_genroc_s = 0, cpu_db_s = 0;
};

class MapBench {
  public:
	explicit MapBench(Options o) : o_(std::move(o)) {}

	std::unique_ptr<Store> open(const std::string &store, const std::string &path) {
		return store == "postgres" ? open_pg_store(o_.pg_url) : open_sqlite_store(path);
	}

	Result one(const std::string &store, int size) {
		std::string path;
		if (store == "postgres") {
			pg_exec(o_.pg_url, "DROP EXTENSION IF EXISTS genroc CASCADE");
			pg_exec(o_.pg_url, "CREATE EXTENSION genroc");
			pg_exec(o_.pg_url, "CHECKPOINT");
		} else {
			path = o_.sqlite_dir + "/map-bench-" + std::to_string(size) + ".db";
			for (auto ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
		}
		auto admin = open(store, path);
		admin->define("map", map_definition(o_.max_concurrency));
		json items = json::array();
		for (int i = 0; i < size; i++) items.push_back(i);
		const json input = {{"items", std::move(items)}};
		std::vector<std::unique_ptr<Store>> stores;
		for (int w = 0; w < o_.workers; w++) {
			stores.push_back(open(store, path));
			stores.back()->worker_register("map-bench-" + std::to_string(w), json{{"lease_duration", "300s"}});
		}

		std::atomic<int> done{0};
		const double cpu0 = cpu_self_s(), db0 = cpu_pg_s(store == "postgres" ? o_.pgdata : "");
		const auto t0 = Clock::now();
		const int64_t id = admin->start("map", input, json::object()).instance_id;
		std::vector<std::thread> threads;
		for (int w = 0; w < o_.workers; w++)
			threads.emplace_back([&, w] {
				Store &s = *stores[w];
				const std::string wid = "map-bench-" + std::to_string(w);
				while (done.load() < size) {
					auto batch = s.claim(wid, {"default"}, 8);
					for (auto &t : batch) {
						s.complete(t.instance_id, t.epoch, t.input);
						done++;
					}
					if (batch.empty()) std::this_thread::yield();
				}
			});
		for (auto &t : threads) t.join();
		const json inst = admin->get_instance(id);
		Result r;
		r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
		r.cpu_genroc_s = cpu_self_s() - cpu0;
		stores.clear();	 // the backends end: their CPU is the postmaster's cutime
		if (store == "postgres") {
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
			r.cpu_db_s = cpu_pg_s(o_.pgdata) - db0;
		}
		// the Map's output: every item, in order
		const json &out = inst.value("output", json());
		bool right = inst.value("status", "") == "succeeded" && out.is_array() &&
					 out.size() == static_cast<size_t>(size);
		for (int i = 0; right && i < size; i++) right = out[static_cast<size_t>(i)] == i;
		if (!right)
			throw std::runtime_error("the Map of " + std::to_string(size) + " items on " + store + " ended " +
									 inst.value("status", "?") + " without its items in order");
		return r;
	}

	int run() {
		json out = json::array();
		std::printf("%-8s %7s | %8s %8s | %10s %10s %10s | %6s\n", "store", "items", "seconds", "items/s",
					"cpu gen/it", "cpu db/it", "cpu all/it", "ratio");
		for (auto &store : o_.stores) {
			if (store == "postgres" && o_.pg_url.empty()) continue;
			double first = 0;
			for (int size : o_.sizes) {
				Result r = one(store, size);
				const double gen = r.cpu_genroc_s / size * 1e6, db = r.cpu_db_s / size * 1e6, all = gen + db;
				if (first == 0) first = all;
				std::printf("%-8s %7d | %8.2f %8.0f | %8.0fus %8.0fus %8.0fus | %6.2f\n", store.c_str(), size,
							r.seconds, size / r.seconds, gen, db, all, all / first);
				std::fflush(stdout);
				out.push_back({{"store", store},
							   {"items", size},
							   {"seconds", r.seconds},
							   {"items_per_s", size / r.seconds},
							   {"cpu_genroc_us_per_item", gen},
							   {"cpu_db_us_per_item", store == "postgres" ? json(db) : json(nullptr)},
							   {"cpu_us_per_item", all},
							   {"ratio_to_first", all / first},
							   {"workers", o_.workers},
							   {"max_concurrency", o_.max_concurrency}});
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

}  // namespace

int main(int argc, char **argv) {
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
		else if (a == "--sizes") o.sizes = int_list(val());
		else if (a == "--workers") o.workers = std::stoi(val());
		else if (a == "--max-concurrency") o.max_concurrency = std::stoi(val());
		else if (a == "--stores") {
			o.stores.clear();
			std::stringstream ss(val());
			for (std::string x; std::getline(ss, x, ',');) o.stores.push_back(x);
		} else {
			std::fprintf(stderr, "unknown argument %s\n", a.c_str());
			return 2;
		}
	}
	if (o.sqlite_dir.empty()) o.sqlite_dir = std::filesystem::temp_directory_path().string();
	try {
		return MapBench(o).run();
	} catch (const std::exception &e) {
		std::fprintf(stderr, "genroc_map_bench: %s\n", e.what());
		return 1;
	}
}
