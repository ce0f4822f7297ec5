// fault_support.cpp — see fault_support.hpp.
#include "fault_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>

namespace genroc::faults {

bool long_run() {
	const char *v = std::getenv("FAULTS");
	return v && std::string(v) == "long";
}

int scaled(int quick, int lots) { return long_run() ? lots : quick; }

const char *const kJob = R"({"StartAt":"Step","States":{
	"Step":{"Type":"Task","Resource":"handler:step","Next":"Once"},
	"Once":{"Type":"Task","Resource":"handler:record","OnlyOnce":true,"End":true}}})";

const char *const kFanJob = R"({"StartAt":"Step","States":{
	"Step":{"Type":"Task","Resource":"handler:step","Next":"Fan"},
	"Fan":{"Type":"Parallel","Next":"Once","Branches":[
		{"StartAt":"Child","States":{"Child":{"Type":"Task","Resource":"handler:step","End":true}}},
		{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":1,"End":true}}}]},
	"Once":{"Type":"Task","Resource":"handler:record","OnlyOnce":true,"End":true}}})";

void FaultBase::SetUp() {
	char tmpl[] = "/tmp/genroc-faults.XXXXXX";
	ASSERT_NE(::mkdtemp(tmpl), nullptr);
	dir_ = tmpl;
	::chmod(dir_.c_str(), 0755);	// handler scripts and, as root, the cluster's owner
}

void FaultTest::SetUp() {
	FaultBase::SetUp();
	if (HasFatalFailure() || IsSkipped()) return;
	use_store(GetParam());
}

void FaultBase::fault_handlers() {
	auto step = script("step.sh", R"SH(input=$(cat)
secs=$(printf '%s' "$input" | sed -n 's/.*"sleep":\([0-9.]*\).*/\1/p')
[ -n "$secs" ] && sleep "$secs"
echo '{"done":true}')SH");
	auto record = script("record.sh", R"SH(cat >/dev/null
echo "$GENROC_INSTANCE_ID $GENROC_STATE" >> "$E2E_DIR/effects.log"
echo '{"recorded":true}')SH");
	handlers_ = handlers_file({{"step", step}, {"record", record}});
}

void FaultBase::expect_invariants(const InvariantInput &in) {
	std::vector<std::string> v;
	try {
		v = check_invariants(db_url_, in);
	} catch (const std::exception &e) {
		ADD_FAILURE() << e.what();
		return;
	}
	for (auto &line : v) ADD_FAILURE() << line;
}

void FaultBase::settle_and_check(const InvariantInput &in, std::chrono::milliseconds bound) {
	int64_t live = -1;
	bool settled = eventually(
		[&] {
			try {
				live = live_instances(db_url_);
			} catch (const std::exception &) {
				return false;	// the file busy, the server restarting
			}
			return live == 0;
		},
		bound);
	EXPECT_TRUE(settled) << live << " instances still live after " << bound.count() << " ms";
	expect_invariants(in);
}

// ------------------------------------------------------------------ Load

Load::Load(std::string database, std::string definition, nlohmann::json input, int threads,
		   std::chrono::milliseconds pause, DurabilityLevel level)
	: database_(std::move(database)),
	  definition_(std::move(definition)),
	  input_(std::move(input)),
	  pause_(pause),
	  level_(level) {
	for (int i = 0; i < threads; i++) threads_.emplace_back([this] { run(); });
}

Load::~Load() { stop(); }

void Load::stop() {
	stop_ = true;
	for (auto &t : threads_)
		if (t.joinable()) t.join();
}

std::set<int64_t> Load::acknowledged() {
	std::lock_guard<std::mutex> l(mu_);
	return ids_;
}

void Load::run() {
	std::unique_ptr<Store> s;
	while (!stop_) {
		try {
			if (!s) {
				s = open_store(database_);
				s->set_durability(level_);
			}
			auto r = s->start(definition_, input_, nlohmann::json::object());
			{
				std::lock_guard<std::mutex> l(mu_);
				ids_.insert(r.instance_id);
			}
			acks_++;
		} catch (const std::exception &) {
			// Not acknowledged; a new connection next time.
			errors_++;
			s.reset();
			std::this_thread::sleep_for(50ms);
		}
		std::this_thread::sleep_for(pause_);
	}
}


std::vector<std::string> warnings_in(const std::string &log) {
	static const std::regex text(R"re(^\S+ (warn|error)\b)re"), js(R"re("level":"(warn|error)")re");
	std::vector<std::string> out;
	std::istringstream in(log);
	for (std::string l; std::getline(in, l);)
		if (std::regex_search(l, text) || std::regex_search(l, js)) out.push_back(l);
	return out;
}

}  // namespace genroc::faults
