// time_test.cpp — format_time / parse_time (RFC 3339, UTC out).

#include "helpers.hpp"

using namespace genroc;

namespace {

int64_t parsed(const std::string &text) {
	int64_t ms = -12345;
	EXPECT_TRUE(asl::parse_time(text, ms)) << text;
	return ms;
}

bool refused(const std::string &text) {
	int64_t ms = 0;
	return !asl::parse_time(text, ms);
}

}  // namespace

TEST(Time, FormatIsUtcWithMilliseconds) {
	EXPECT_EQ(asl::format_time(0), "1970-01-01T00:00:00.000Z");
	EXPECT_EQ(asl::format_time(1796552446123), "2026-12-06T10:20:46.123Z");
	EXPECT_EQ(asl::format_time(-1), "1969-12-31T23:59:59.999Z");
	EXPECT_EQ(asl::format_time(951782400000), "2000-02-29T00:00:00.000Z");
	EXPECT_EQ(asl::format_time(253402300799999), "9999-12-31T23:59:59.999Z");
	EXPECT_EQ(asl::format_time(-62167219200000), "0000-01-01T00:00:00.000Z");
}

TEST(Time, ParseForms) {
	EXPECT_EQ(parsed("1970-01-01T00:00:00Z"), 0);
	EXPECT_EQ(parsed("2026-12-06T10:20:46.123Z"), 1796552446123);
	EXPECT_EQ(parsed("2026-12-06t10:20:46.123z"), 1796552446123);
	EXPECT_EQ(parsed("2026-12-06T11:20:46.123+01:00"), 1796552446123);
	EXPECT_EQ(parsed("2026-12-06T05:50:46.123-04:30"), 1796552446123);
	EXPECT_EQ(parsed("2026-12-06T10:20:46.1239999Z"), 1796552446123);	 // truncated to ms
	EXPECT_EQ(parsed("2026-12-06T10:20:46.1Z"), 1796552446100);
	EXPECT_EQ(parsed("1969-12-31T23:59:59.999Z"), -1);
	EXPECT_EQ(parsed("2000-02-29T00:00:00Z"), 951782400000);
	EXPECT_EQ(parsed("2016-12-31T23:59:60Z"), parsed("2017-01-01T00:00:00Z"));	// leap second
}

TEST(Time, RoundTrip) {
	for (int64_t ms : {int64_t(0), int64_t(1), int64_t(-86400001), int64_t(1796552446123),
					   int64_t(4102444800000)})
		EXPECT_EQ(parsed(asl::format_time(ms)), ms);
}

TEST(Time, Refused) {
	EXPECT_TRUE(refused(""));
	EXPECT_TRUE(refused("2026-12-06"));
	EXPECT_TRUE(refused("2026-12-06T10:20:46"));		   // no offset
	EXPECT_TRUE(refused("2026-12-06 10:20:46Z"));		   // space
	EXPECT_TRUE(refused("2026-13-06T10:20:46Z"));		   // month
	EXPECT_TRUE(refused("2026-00-06T10:20:46Z"));
	EXPECT_TRUE(refused("2026-02-29T10:20:46Z"));		   // not a leap year
	EXPECT_TRUE(refused("1900-02-29T10:20:46Z"));
	EXPECT_TRUE(refused("2026-04-31T10:20:46Z"));
	EXPECT_TRUE(refused("2026-12-06T24:00:00Z"));
	EXPECT_TRUE(refused("2026-12-06T10:60:00Z"));
	EXPECT_TRUE(refused("2026-12-06T10:20:61Z"));
	EXPECT_TRUE(refused("2026-12-06T10:20:46.Z"));
	EXPECT_TRUE(refused("2026-12-06T10:20:46+0100"));
	EXPECT_TRUE(refused("2026-12-06T10:20:46+24:00"));
	EXPECT_TRUE(refused("2026-12-06T10:20:46Zjunk"));
	EXPECT_TRUE(refused("26-12-06T10:20:46Z"));
	EXPECT_TRUE(refused("2026-1-06T10:20:46Z"));
}
