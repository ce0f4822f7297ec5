// e2e_http_hostile_test.cpp — fault tests against a real `genroc api` process
// on a SQLite file: slow clients (one header line a second), a request that
// never finishes, more connections than the cap, a body nested 100,000 deep.
// The server must keep answering /healthz and stay up.  Bounds are generous
// (seconds), not timings: what is asserted is that an answer comes at all
// while the hostile clients hold their connections.
#include <httplib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_http_support.hpp"

namespace genroc::e2e::hostile_test {
namespace {

const std::string kGenroc = GENROC_PATH;

using Clock = std::chrono::steady_clock;

// A client connection on a raw socket from `source` (another loopback
// address, 127.0.0.2: Linux routes all of 127/8 to lo, so the server sees
// a second client; nullptr: the system's choice); -1 when it cannot connect.
int connect_from(int port, const char *source) {
	int fd = ::socket(AF_INET, SOCK_STREAM, 0);
	if (source) {
		sockaddr_in src{};
		src.sin_family = AF_INET;
		::inet_pton(AF_INET, source, &src.sin_addr);
		if (::bind(fd, reinterpret_cast<sockaddr *>(&src), sizeof src) != 0) {
			::close(fd);
			return -1;
		}
	}
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<uint16_t>(port));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
		::close(fd);
		return -1;
	}
	return fd;
}

int connect_to(int port) { return connect_from(port, nullptr); }

bool send_all(int fd, const std::string &s) {
	return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

// What the server writes until it closes or `wait_s` pass.
std::string read_until_close(int fd, int wait_s) {
	timeval tv{wait_s, 0};
	::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	std::string out;
	char buf[4096];
	for (;;) {
		ssize_t n = ::recv(fd, buf, sizeof buf, 0);
		if (n <= 0) break;
		out.append(buf, static_cast<size_t>(n));
	}
	return out;
}

// True while the server has neither answered nor closed the connection.
bool still_open(int fd) {
	char b;
	ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

class HostileProcess : public ::testing::Test {
  protected:
	void SetUp() override {
		dir_ = test_dir("genroc-hostile");
	}
	void TearDown() override {
		stop();
		std::filesystem::remove_all(dir_);
	}

	std::string log() const {
		std::ifstream in(dir_ / "api.log");
		std::stringstream b;
		b << in.rdbuf();
		return b.str();
	}

	// `genroc api` on a SQLite file in the background; its port once it listens.
	int start(const std::vector<std::string> &extra) {
		std::vector<std::string> argv = {kGenroc, "api", "--database", (dir_ / "g.db").string(),
										 "--listen", "127.0.0.1:0", "--log-mode", "json"};
		argv.insert(argv.end(), extra.begin(), extra.end());
		pid_ = spawn_logged(argv, (dir_ / "api.log").string());
		for (int i = 0; i < 600; i++) {
			std::istringstream lines(log());
			for (std::string line; std::getline(lines, line);) {
				json j = json::parse(line, nullptr, false);
				if (!j.is_discarded() && j.value("msg", "") == "HTTP API listening") {
					std::string l = j.value("listen", "");
					return std::stoi(l.substr(l.rfind(':') + 1));
				}
			}
			if (!alive()) break;
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
		ADD_FAILURE() << "genroc api did not start: " << log();
		return 0;
	}

	bool alive() {
		if (pid_ <= 0) return false;
		int st = 0;
		if (waitpid(pid_, &st, WNOHANG) == pid_) {
			exit_ = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
			pid_ = -1;
			return false;
		}
		return true;
	}

	void stop() {
		if (pid_ <= 0) return;
		kill(pid_, SIGTERM);
		int st = 0;
		waitpid(pid_, &st, 0);
		pid_ = -1;
	}

	// GET /healthz with a 5 s bound; the status (0: no answer in time).
	static int healthz(int port) {
		httplib::Client c("127.0.0.1", port);
		c.set_connection_timeout(5, 0);
		c.set_read_timeout(5, 0);
		c.set_write_timeout(5, 0);
		auto r = c.Get("/healthz");
		return r ? r->status : 0;
	}

	std::filesystem::path dir_;
	pid_t pid_ = -1;
	int exit_ = -1;
};

// 100 clients each send a header line a second (slowloris).  With httplib's
// 8 threads, 10 of them made /healthz take 7 s and 30 stopped it.
TEST_F(HostileProcess, HealthzAnswersWhileAHundredSlowClientsAreConnected) {
	const int port = start({});
	ASSERT_GT(port, 0);
	std::vector<int> fds;
	// From 4 addresses: one holds at most 32 (--http-max-connections-per-client).
	const char *sources[] = {"127.0.0.10", "127.0.0.11", "127.0.0.12", "127.0.0.13"};
	for (int i = 0; i < 100; i++) {
		int fd = connect_from(port, sources[i % 4]);
		ASSERT_GE(fd, 0) << i;
		ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
		fds.push_back(fd);
	}
	std::atomic<bool> done{false};
	std::thread drip([&] {
		for (int line = 0; !done; line++) {
			for (int fd : fds) send_all(fd, "X-Slow-" + std::to_string(line) + ": 1\r\n");
			for (int i = 0; i < 10 && !done; i++) std::this_thread::sleep_for(std::chrono::milliseconds(100));
		}
	});
	std::this_thread::sleep_for(std::chrono::seconds(2));
	for (int probe = 0; probe < 3; probe++) EXPECT_EQ(healthz(port), 200) << "probe " << probe;
	// The slow clients were all still connected and unanswered meanwhile.
	int open_now = 0;
	for (int fd : fds) open_now += still_open(fd) ? 1 : 0;
	EXPECT_EQ(open_now, 100);
	done = true;
	drip.join();
	for (int fd : fds) ::close(fd);
	EXPECT_TRUE(alive()) << log();
}

// A request whose head never ends is cut at --http-request-timeout with 408.
TEST_F(HostileProcess, ARequestThatNeverEndsIsCutAtTheRequestTimeout) {
	const int port = start({"--http-request-timeout", "1s"});
	ASSERT_GT(port, 0);
	int fd = connect_to(port);
	ASSERT_GE(fd, 0);
	ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\n"));
	std::atomic<bool> done{false};
	std::thread drip([&] {
		for (int line = 0; !done && line < 100; line++) {
			if (!send_all(fd, "X-Slow-" + std::to_string(line) + ": 1\r\n")) break;
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
		}
	});
	// Well before the drip would end (20 s), the server answers and closes.
	std::string answer = read_until_close(fd, 15);
	done = true;
	drip.join();
	::close(fd);
	EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
	EXPECT_NE(answer.find("\"57014\""), std::string::npos) << answer;
	EXPECT_NE(answer.find("request timeout of 1000 ms"), std::string::npos) << answer;
	EXPECT_EQ(healthz(port), 200);
}

// Over --http-max-connections: 503 / 53300 (but GET /healthz); below it again, served.
TEST_F(HostileProcess, ConnectionsOverTheCapGet503AtOnce) {
	const int port = start({"--http-max-connections", "4"});
	ASSERT_GT(port, 0);
	std::vector<int> held;
	for (int i = 0; i < 4; i++) {
		int fd = connect_to(port);
		ASSERT_GE(fd, 0);
		ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\n"));  // an unfinished head
		held.push_back(fd);
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	int fd = connect_to(port);
	ASSERT_GE(fd, 0);
	send_all(fd, "GET /api/definitions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	std::string answer = read_until_close(fd, 5);
	::close(fd);
	EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
	EXPECT_NE(answer.find("\"53300\""), std::string::npos) << answer;
	for (int h : held) ::close(h);
	bool served = false;
	for (int i = 0; i < 50 && !served; i++) {
		served = healthz(port) == 200;
		if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	EXPECT_TRUE(served);
	EXPECT_NE(log().find("HTTP connections at the limit"), std::string::npos) << log();
}

// One request from `source` on a connection of its own; the answer's status
// (0: none within 5 s) and its text.
int get_from(int port, const char *source, const std::string &path, std::string *answer = nullptr) {
	int fd = connect_from(port, source);
	if (fd < 0) return -1;
	send_all(fd, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
	std::string a = read_until_close(fd, 5);
	::close(fd);
	if (answer) *answer = a;
	return a.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(a.c_str() + 9) : 0;
}

// 270 idle sockets from one client held /healthz (the readiness probe) and
// the API at 503 for 30 s.  Now one address holds at most
// --http-max-connections-per-client (32 by default): the surplus is
// refused at once, and another client is served, /healthz and the API.
TEST_F(HostileProcess, AFloodFromOneClientLeavesOthersServed) {
	const int port = start({});
	ASSERT_GT(port, 0);
	std::vector<int> fds;
	for (int i = 0; i < 270; i++) {
		int fd = connect_from(port, "127.0.0.1");
		ASSERT_GE(fd, 0) << i;
		send_all(fd, "GET /healthz HTTP/1.1\r\n");	// a head that never ends
		fds.push_back(fd);
	}
	// The surplus is refused at once (a 503 it never finished asking for);
	// the first 32 the server took are held, unanswered.
	std::vector<int> held, refused;
	for (int i = 0; i < 250; i++) {
		held.clear();
		refused.clear();
		for (int fd : fds) (still_open(fd) ? held : refused).push_back(fd);
		if (refused.size() >= 270 - 32) break;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	EXPECT_EQ(held.size(), 32u);
	ASSERT_EQ(refused.size(), 270u - 32u);
	std::string a = read_until_close(refused[0], 5);
	EXPECT_EQ(a.rfind("HTTP/1.1 503", 0), 0u) << a;
	EXPECT_NE(a.find("\"53300\""), std::string::npos) << a;
	EXPECT_NE(a.find("from one address"), std::string::npos) << a;
	// Another client: /healthz and the API answer.
	EXPECT_EQ(get_from(port, "127.0.0.2", "/healthz", &a), 200) << a;
	EXPECT_EQ(get_from(port, "127.0.0.2", "/api/definitions", &a), 200) << a;
	EXPECT_EQ(get_from(port, "127.0.0.1", "/healthz", &a), 503) << a;  // the flooding client's own
	int open_now = 0;
	for (int fd : held) open_now += still_open(fd) ? 1 : 0;
	EXPECT_EQ(open_now, 32);
	for (int fd : fds) ::close(fd);
	EXPECT_NE(log().find("HTTP connections of one client at the limit"), std::string::npos) << log();
	EXPECT_TRUE(alive()) << log();
}

// Every slot held (by several clients, each under its own cap): GET /healthz
// is still answered, from a reserve of its own; the API says 503.
TEST_F(HostileProcess, HealthzAnswersWhenEverySlotIsHeld) {
	const int port = start({"--http-max-connections", "8", "--http-max-connections-per-client", "4"});
	ASSERT_GT(port, 0);
	std::vector<int> held;
	for (const char *source : {"127.0.0.3", "127.0.0.4"})
		for (int i = 0; i < 4; i++) {
			int fd = connect_from(port, source);
			ASSERT_GE(fd, 0);
			ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\n"));	// an unfinished head
			held.push_back(fd);
		}
	// The server admits connections in the order it accepted them, and it
	// accepts them in the order they connected: the 8 above hold every slot
	// before this one is decided, so the API says 503 at once, however late
	// the held connections' threads start.  (A later connection used to take
	// a slot from an earlier one whose thread started after its own; the
	// earlier one, put in the /healthz reserve, was dropped after 2 s and the
	// API answered 200.)  The held heads stay open for the read timeout (5 s
	// of silence), which the rest of this test stays well within.
	std::string a;
	const int api = get_from(port, "127.0.0.2", "/api/definitions", &a);
	EXPECT_EQ(api, 503) << a;
	EXPECT_NE(a.find("GET /healthz still answers"), std::string::npos) << a;
	for (int probe = 0; probe < 3; probe++) EXPECT_EQ(get_from(port, "127.0.0.2", "/healthz", &a), 200) << a;
	int open_now = 0;
	for (int fd : held) open_now += still_open(fd) ? 1 : 0;
	EXPECT_EQ(open_now, 8);
	for (int fd : held) ::close(fd);
	EXPECT_TRUE(alive()) << log();
}

// GET /api/instances?limit=10000 by 4 readers took the process from 14 MB to
// 3.2 GB.  An answer is bounded in bytes (--http-max-response): a limit
// whose answer would pass it is refused, naming limit.
TEST_F(HostileProcess, AListAnswerOverTheByteBoundIsRefusedNamingTheLimit) {
	const int port = start({"--http-max-response", "64KB"});
	ASSERT_GT(port, 0);
	httplib::Client c("127.0.0.1", port);
	c.set_read_timeout(30, 0);
	auto r = c.Post("/api/definitions",
					R"({"name":"p","definition":{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}})",
					"application/json");
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 201) << r->body;
	json inputs = json::array();
	for (int i = 0; i < 40; i++) inputs.push_back({{"pad", std::string(4000, 'x')}, {"i", i}});
	r = c.Post("/api/instances/batch", json{{"definition", "p"}, {"inputs", inputs}}.dump(), "application/json");
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 201) << r->body;
	r = c.Get("/api/instances?limit=40");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 400) << r->body.substr(0, 300);
	json b = json::parse(r->body, nullptr, false);
	EXPECT_EQ(b["error"]["sqlstate"], "54000") << r->body.substr(0, 300);
	EXPECT_NE(b["error"].value("message", "").find("\"limit\""), std::string::npos) << r->body.substr(0, 300);
	EXPECT_NE(b["error"].value("message", "").find("--http-max-response"), std::string::npos) << r->body.substr(0, 300);
	// A page that fits, and the next one by its keyset: served, in order.
	r = c.Get("/api/instances?limit=5");
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
	json page = json::parse(r->body)["instances"];
	ASSERT_EQ(page.size(), 5u);
	r = c.Get("/api/instances?limit=5&before=" + std::to_string(page[4]["id"].get<int64_t>()));
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 200);
	json next = json::parse(r->body)["instances"];
	ASSERT_EQ(next.size(), 5u);
	EXPECT_EQ(next[0]["id"].get<int64_t>(), page[4]["id"].get<int64_t>() - 1);
	EXPECT_TRUE(alive()) << log();
}

// A bad flag value is a clean usage error, naming the flag.
TEST_F(HostileProcess, BadHttpLimitFlagsAreUsageErrors) {
	for (const std::vector<std::string> &flags :
		 {std::vector<std::string>{"--http-max-connections-per-client", "0"},
		  std::vector<std::string>{"--http-max-response", "12"},
		  std::vector<std::string>{"--http-max-response", "lots"},
		  std::vector<std::string>{"--http-allowed-hosts", "a b"},
		  std::vector<std::string>{"--http-healthz-reserve", "-1"},
		  std::vector<std::string>{"--http-max-answers", "0"}}) {
		std::vector<std::string> argv = {kGenroc, "api", "--database", (dir_ / "g.db").string()};
		argv.insert(argv.end(), flags.begin(), flags.end());
		Output o = run(argv, {}, 30);
		EXPECT_EQ(o.exit_code, 2) << flags[0] << ": " << o.err;
		EXPECT_NE(o.err.find(flags[0]), std::string::npos) << o.err;
	}
}

// Without --auth a page of another origin could define and start with a
// text/plain POST (no preflight): 415, and nothing is defined.
TEST_F(HostileProcess, ATextPlainPostDefinesNothing) {
	const int port = start({});
	ASSERT_GT(port, 0);
	httplib::Client c("127.0.0.1", port);
	auto r = c.Post("/api/definitions",
					R"({"name":"x","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}})",
					"text/plain;charset=UTF-8");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 415) << r->body;
	r = c.Get("/api/definitions");
	ASSERT_TRUE(r);
	ASSERT_EQ(r->status, 200) << r->body;
	EXPECT_EQ(json::parse(r->body)["definitions"].size(), 0u) << r->body;
	// And a Host that is not this server's name is refused; its address passes.
	httplib::Client evil("127.0.0.1", port);
	evil.set_default_headers({{"Host", "rebound.example"}});
	r = evil.Get("/api/definitions");
	ASSERT_TRUE(r);
	EXPECT_EQ(r->status, 421) << r->body;
}

// 100,000 nested arrays killed the process (exit 139, nothing logged).
TEST_F(HostileProcess, ADeeplyNestedBodyIsRefusedAndTheServerStaysUp) {
	const int port = start({});
	ASSERT_GT(port, 0);
	httplib::Client c("127.0.0.1", port);
	c.set_read_timeout(30, 0);
	for (const char *path : {"/api/instances", "/api/activities/succeed", "/api/definitions"}) {
		std::string body = std::string(R"({"definition":"h","input":)") + std::string(100'000, '[') +
						   std::string(100'000, ']') + "}";
		auto r = c.Post(path, body, "application/json");
		ASSERT_TRUE(r) << path << ": no answer; " << log();
		EXPECT_EQ(r->status, 400) << r->body;
		json b = json::parse(r->body, nullptr, false);
		EXPECT_EQ(b["error"]["sqlstate"], "54000") << r->body;
	}
	EXPECT_TRUE(alive()) << "exit " << exit_ << "\n" << log();
	EXPECT_EQ(healthz(port), 200);
}

}  // namespace
}  // namespace genroc::e2e::hostile_test
