// e2e_genctl_readonly_test.cpp — genctl on a SQLite file it may read but
// not write: the file genctl creates is 0600, the
// commands that only read list a 0444 file (in a folder they may write, or
// not), and a command that writes is refused with 25006 naming the file,
// not XX000.  Run as root, the reading
// and refused commands run as "nobody" (root writes any file whatever its
// mode).
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_http_support.hpp"

namespace genroc::e2e {
namespace {

const std::string kGenctl = GENCTL_PATH;

TEST(GenctlReadOnly, ListsAFileItMayOnlyReadAndRefusesWritesCleanly) {
	const auto dir = std::filesystem::temp_directory_path() / ("genroc-ro-" + std::to_string(getpid()));
	std::filesystem::remove_all(dir);
	std::filesystem::create_directories(dir);
	const std::string db = (dir / "genroc.db").string();
	const std::string def = (dir / "hello.json").string();
	std::ofstream(def) << R"({"StartAt":"Hi","States":{"Hi":{"Type":"Pass","Result":"hello","End":true}}})";

	auto genctl = [&](std::vector<std::string> args, bool as_reader) {
		args.insert(args.begin(), {kGenctl, "--database", db});
		if (as_reader && geteuid() == 0) {
			// run() takes a path, not a name to look up
			const std::string runuser =
				std::filesystem::exists("/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser";
			args.insert(args.begin(), {runuser, "-u", "nobody", "--"});
		}
		return run(args);
	};
	ASSERT_EQ(genctl({"define", "hello", def}, false).exit_code, 0);
	auto o = genctl({"start", "hello"}, false);
	ASSERT_EQ(o.exit_code, 0) << o.err;
	struct stat st{};
	ASSERT_EQ(::stat(db.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600u);

	ASSERT_EQ(::chmod(db.c_str(), 0444), 0);
	if (geteuid() == 0) {
		// the reader may make the -shm file beside it, as in its own folder
		const passwd *nobody = ::getpwnam("nobody");
		ASSERT_NE(nobody, nullptr);
		ASSERT_EQ(::chown(dir.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
	}
	for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
			 {"instances"}, {"instances", "show", "1"}, {"logs", "1"}, {"definitions"}, {"workers"},
			 {"activity"}, {"queues"}, {"token", "list"}}) {
		o = genctl(args, true);
		EXPECT_EQ(o.exit_code, 0) << args[0] << ": " << o.err;
		EXPECT_EQ(o.err.find("XX000"), std::string::npos) << o.err;
	}
	EXPECT_NE(genctl({"instances"}, true).out.find("hello"), std::string::npos);
	for (std::vector<std::string> args :
		 std::vector<std::vector<std::string>>{{"start", "hello"}, {"define", "other", def}, {"cancel", "1"}}) {
		o = genctl(args, true);
		EXPECT_EQ(o.exit_code, 1) << args[0] << ": " << o.out;
		EXPECT_NE(o.err.find("25006"), std::string::npos) << args[0] << ": " << o.err;
		EXPECT_NE(o.err.find("\"" + db + "\" is read-only"), std::string::npos) << o.err;
		EXPECT_EQ(o.err.find("XX000"), std::string::npos) << o.err;
	}
	// a folder the reader cannot write either (no -shm file can be made):
	// the reading commands still read
	if (geteuid() == 0) {
		ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
		ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
	} else {
		ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
	}
	for (const char *suffix : {"-wal", "-shm"}) std::filesystem::remove(db + suffix);
	o = genctl({"instances"}, true);
	EXPECT_EQ(o.exit_code, 0) << o.err;
	EXPECT_NE(o.out.find("hello"), std::string::npos) << o.out;
	o = genctl({"start", "hello"}, true);
	EXPECT_EQ(o.exit_code, 1);
	EXPECT_NE(o.err.find("25006"), std::string::npos) << o.err;
	::chmod(dir.c_str(), 0755);
	std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace genroc::e2e
