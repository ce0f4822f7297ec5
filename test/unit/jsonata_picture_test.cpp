// jsonata_picture_test.cpp — JSONata's picture strings (core/
// jsonata_picture.cpp): integer pictures, decimal-format pictures,
// date-time pictures both ways, the time zone argument (the reference's
// ±HHMM reading, IANA names from a TZif file the test writes), the bad
// pictures' D-codes and the picture length limit.  The answers are the
// reference's (test/jsonata/ compares every form against it).

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "jsonata.hpp"
#include "jsonata_picture.hpp"
#include "limits.hpp"

using namespace genroc;

namespace {

// The result as JSON text, "undefined", or "error CODE".
std::string pic_ev(const std::string &expr, int64_t now_ms = 0) {
	try {
		auto e = jsonata::compile(expr);
		jsonata::Environment env;
		env.now_ms = now_ms;
		json input = json::object();
		auto r = jsonata::evaluate(*e, &input, env);
		return r ? r->dump() : "undefined";
	} catch (const jsonata::JsonataError &err) {
		return "error " + err.code;
	}
}

std::string pic_q(const std::string &s) { return json(s).dump(); }

}  // namespace

TEST(JsonataPicture, IntegerDecimal) {
	EXPECT_EQ(pic_ev("$formatInteger(123, '0000')"), pic_q("0123"));
	EXPECT_EQ(pic_ev("$formatInteger(-3, '000')"), pic_q("-003"));
	EXPECT_EQ(pic_ev("$formatInteger(12.9, '#0')"), pic_q("12"));	// floored
	EXPECT_EQ(pic_ev("$formatInteger(1234567, '#,##0')"), pic_q("1,234,567"));
	// separators at unequal intervals or of two characters: placed once each
	EXPECT_EQ(pic_ev("$formatInteger(1234567890, '##,##,##0')"), pic_q("12345,67,890"));
	EXPECT_EQ(pic_ev("$formatInteger(1234567890, '#:###,##0')"), pic_q("1234:567,890"));
	EXPECT_EQ(pic_ev("$formatInteger(12340, '###٠')"), pic_q("١٢٣٤٠"));	// another digit family
	EXPECT_EQ(pic_ev("$formatInteger(1, '0;o')"), pic_q("1st"));
	EXPECT_EQ(pic_ev("$formatInteger(12, '0;o')"), pic_q("12th"));
	EXPECT_EQ(pic_ev("$formatInteger(23, '0;o')"), pic_q("23rd"));
	EXPECT_EQ(pic_ev("$formatInteger(nothing, '0')"), "undefined");
}

TEST(JsonataPicture, IntegerWordsRomanLetters) {
	EXPECT_EQ(pic_ev("$formatInteger(2789, 'w')"), pic_q("two thousand, seven hundred and eighty-nine"));
	EXPECT_EQ(pic_ev("$formatInteger(555, 'Ww')"), pic_q("Five Hundred and Fifty-Five"));
	EXPECT_EQ(pic_ev("$formatInteger(99, 'W;o')"), pic_q("NINETY-NINTH"));
	EXPECT_EQ(pic_ev("$formatInteger(1000000000001, 'w;o')"), pic_q("one trillion and first"));
	EXPECT_EQ(pic_ev("$formatInteger(1e46, 'w')"), pic_q("ten billion trillion trillion trillion"));
	EXPECT_EQ(pic_ev("$formatInteger(1984, 'I')"), pic_q("MCMLXXXIV"));
	EXPECT_EQ(pic_ev("$formatInteger(0, 'I')"), pic_q(""));
	EXPECT_EQ(pic_ev("$formatInteger(27, 'a')"), pic_q("aa"));
	EXPECT_EQ(pic_ev("$formatInteger(123456, 'A')"), pic_q("FZPH"));
}

TEST(JsonataPicture, IntegerErrorsAndBounds) {
	EXPECT_EQ(pic_ev("$formatInteger(1, '##0０')"), "error D3131");	// two digit families
	EXPECT_EQ(pic_ev("$formatInteger(1, 'α')"), "error D3130");		// a numbering sequence
	EXPECT_EQ(pic_ev("$formatInteger(1, '#')"), "error D3130");
	EXPECT_EQ(pic_ev("$parseInteger('1', '#')"), "error D3130");
	// a roman numeral longer than jsonata_string is refused before it is built
	EXPECT_EQ(pic_ev("$formatInteger(1e300, 'I')"), "error L0001");
	// a picture longer than jsonata_picture
	std::string pic(limits::JSONATA_PICTURE + 1, '0');
	EXPECT_EQ(pic_ev("$formatInteger(1, '" + pic + "')"), "error L0001");
	EXPECT_EQ(pic_ev("$formatInteger(1, '" + pic.substr(1) + "')").size(), limits::JSONATA_PICTURE + 2);
}

TEST(JsonataPicture, ParseInteger) {
	EXPECT_EQ(pic_ev("$parseInteger('12,345,678', '#,##0')"), "12345678");
	EXPECT_EQ(pic_ev("$parseInteger('12345,67,890', '##,##,##0')"), "1234567890");
	EXPECT_EQ(pic_ev("$parseInteger('123rd', '000;o')"), "123");
	EXPECT_EQ(pic_ev("$parseInteger('twelve thousand, four hundred and seventy-six', 'w')"), "12476");
	EXPECT_EQ(pic_ev("$parseInteger('Seven Hundred and Thirty-Third', 'Ww;o')"), "733");
	EXPECT_EQ(pic_ev("$parseInteger('MCMLXXXIV', 'I')"), "1984");
	EXPECT_EQ(pic_ev("$parseInteger('FZPH', 'A')"), "123456");
	EXPECT_EQ(pic_ev("$parseInteger('١٢٣٤٠', '###١')"), "12340");
	EXPECT_EQ(pic_ev("$parseInteger('abc', '0')"), "null");	// NaN, as the reference's JSON
}

TEST(JsonataPicture, FormatNumber) {
	EXPECT_EQ(pic_ev("$formatNumber(12345.6, '#,###.00')"), pic_q("12,345.60"));
	EXPECT_EQ(pic_ev("$formatNumber(1234.56789, '9,999.999,999')"), pic_q("1,234.567,890"));
	EXPECT_EQ(pic_ev("$formatNumber(0.14159, '#0.00%')"), pic_q("14.16%"));
	EXPECT_EQ(pic_ev("$formatNumber(0.4857, '###.###‰')"), pic_q("485.7‰"));
	EXPECT_EQ(pic_ev("$formatNumber(1234.5678, '00.000e0')"), pic_q("12.346e2"));
	EXPECT_EQ(pic_ev("$formatNumber(0.234, '0.0e0')"), pic_q("2.3e-1"));
	EXPECT_EQ(pic_ev("$formatNumber(-42, '0e0')"), pic_q("-4e1"));
	EXPECT_EQ(pic_ev("$formatNumber(0, '0.00e0')"), pic_q("0.00e0"));
	EXPECT_EQ(pic_ev("$formatNumber(-34.555, '#0.00;(#0.00)')"), pic_q("(34.56)"));
	EXPECT_EQ(pic_ev("$formatNumber(2.5, '0')"), pic_q("2"));	// half to even, as $round
	EXPECT_EQ(pic_ev("$formatNumber(1234.5678, '①①.①①①e①', {'zero-digit': '\\u245f'})"), pic_q("①②.③④⑥e②"));
	EXPECT_EQ(pic_ev("$formatNumber(1234.5, '#.##0,00', {'decimal-separator': ',', 'grouping-separator': '.'})"),
			  pic_q("1.234,50"));
	EXPECT_EQ(pic_ev("$formatNumber(0.14, '###pm', {'per-mille': 'pm'})"), pic_q("140pm"));
	EXPECT_EQ(pic_ev("$formatNumber(nothing, '0')"), "undefined");
}

TEST(JsonataPicture, FormatNumberErrors) {
	EXPECT_EQ(pic_ev("$formatNumber(1, '#;#;#')"), "error D3080");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#.0.0')"), "error D3081");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#0%%')"), "error D3082");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#0‰‰')"), "error D3083");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#0%‰')"), "error D3084");
	EXPECT_EQ(pic_ev("$formatNumber(1, '.e0')"), "error D3085");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#0 a #')"), "error D3086");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#,.0')"), "error D3087");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#,')"), "error D3088");
	EXPECT_EQ(pic_ev("$formatNumber(1, '#,,0')"), "error D3089");
	EXPECT_EQ(pic_ev("$formatNumber(1, '0#')"), "error D3090");
	EXPECT_EQ(pic_ev("$formatNumber(1, '.#0')"), "error D3091");
	EXPECT_EQ(pic_ev("$formatNumber(1, '0%e0')"), "error D3092");
	EXPECT_EQ(pic_ev("$formatNumber(1, '0ex')"), "error D3093");
}

TEST(JsonataPicture, FromMillis) {
	const std::string t = "1521801216617";	// 2018-03-23T10:33:36.617Z, a Friday
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[Y0001]-[M01]-[D01]')"), pic_q("2018-03-23"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[[Year]]: [[[Y0001]]]')"), pic_q("[Year]: [2018]"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[FNn], the [Dwo] of [MNn] [Y] [E]')"),
			  pic_q("Friday, the twenty-third of March 2018 ISO"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[FNn,3-3], [D1o] [MNn,3-3] [Y]')"), pic_q("Fri, 23rd Mar 2018"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[F], [D]/[M]/[Y] [h]:[m]:[s] [P]')"), pic_q("friday, 23/3/2018 10:33:36 am"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[D#1,2]/[M1,2]/[Y,2]')"), pic_q("23/03/18"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[Y]-[ M01]-[D 01]T[H01 ]:[ m   ]:[s].[f0  01][Z01:01t]')"),
			  pic_q("2018-03-23T10:33:36.617Z"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[Da] [MA] [Yi]')"), pic_q("w C mmxviii"));
	// ISO weeks and the week-numbering year
	EXPECT_EQ(pic_ev("$fromMillis($toMillis('2005-01-01', '[Y]-[M]-[D]'), '[X0001]-W[W01]-[F1]')"), pic_q("2004-W53-6"));
	EXPECT_EQ(pic_ev("$fromMillis(1359720000000, 'Week: [w] of [xNn]')"), pic_q("Week: 5 of January"));
	EXPECT_EQ(pic_ev("$fromMillis(1514808000000, '[dwo] day of the year')"), pic_q("first day of the year"));
	// $now takes the same picture and zone
	EXPECT_EQ(pic_ev("$now('[Y0001]-[M01]-[D01] [H01]:[m01] [Z]', '+0100')", 1521801216617), pic_q("2018-03-23 11:33 +01:00"));
}

TEST(JsonataPicture, FromMillisOffsets) {
	const std::string t = "1531310400000";	// 2018-07-11T12:00:00Z
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m] [Z]', '-0500')"), pic_q("07:00 -05:00"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m] [Z0]', '+0530')"), pic_q("17:30 +5:30"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m] [Z0101t]', '+0530')"), pic_q("17:30 +0530"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m] [z]', '-0500')"), pic_q("07:00 GMT-05:00"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m][Z01:01t]', '0000')"), pic_q("12:00Z"));
	// the reference reads "-0530" with parseInt and floors the hours: -6 h
	// and -30 min; genroc answers as it does
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", '[H01]:[m] [Z]', '-0530')"), pic_q("05:30 -06:30"));
	EXPECT_EQ(pic_ev("$fromMillis(" + t + ", (), '-0500')"), pic_q("2018-07-11T07:00:00.000-05:00"));
}

TEST(JsonataPicture, DateTimePictureErrors) {
	EXPECT_EQ(pic_ev("$fromMillis(0, '[YN]-[M]-[D]')"), "error D3133");
	EXPECT_EQ(pic_ev("$fromMillis(0, '[Y]-[M')"), "error D3135");
	EXPECT_EQ(pic_ev("$fromMillis(0, '[q]')"), "error D3132");
	EXPECT_EQ(pic_ev("$fromMillis(0, '[Z010101]', '+0530')"), "error D3134");
	EXPECT_EQ(pic_ev("$toMillis('2018-05-22', '[Y]-[M]-[q]')"), "error D3132");
	EXPECT_EQ(pic_ev("$toMillis('2018-22', '[Y]-[D]')"), "error D3136");
	EXPECT_EQ(pic_ev("$toMillis('2018-32-5', '[X]-[W]-[F1]')"), "error D3136");
	EXPECT_EQ(pic_ev("$fromMillis(9e15, '[Y]')"), "error D3137");	// outside JavaScript's dates
	EXPECT_EQ(pic_ev("$fromMillis(0, (), 'Not/A_Zone')"), "error D3137");
	EXPECT_EQ(pic_ev("$fromMillis(0, (), '../../etc/passwd')"), "error D3137");
}

TEST(JsonataPicture, ToMillis) {
	EXPECT_EQ(pic_ev("$toMillis('2018-03-27', '[Y1]-[M01]-[D01]')"), "1522108800000");
	EXPECT_EQ(pic_ev("$toMillis('20180205', '[Y0001][M01][D01]')"), "1517788800000");	// widths from the picture
	EXPECT_EQ(pic_ev("$toMillis('27th April 2008', '[D1o] [MNn] [Y0001]')"), "1209254400000");
	EXPECT_EQ(pic_ev("$toMillis('twenty-first August two thousand and seventeen', '[Dw] [MNn] [Yw]')"),
			  "1503273600000");
	EXPECT_EQ(pic_ev("$toMillis('4/4/2018 12:06 pm', '[D1]/[M1]/[Y0001] [h]:[m] [P]')"), "1522843560000");
	EXPECT_EQ(pic_ev("$toMillis('2018-094', '[Y0001]-[d001]')"), "1522800000000");
	EXPECT_EQ(pic_ev("$toMillis('2018-03-27T14:05:00+01:00', '[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01][Z]')"),
			  "1522155900000");
	EXPECT_EQ(pic_ev("$toMillis('irrelevant', '[Y]-[M]-[D]')"), "undefined");
	EXPECT_EQ(pic_ev("$toMillis('Hello', 'Hello')"), "undefined");
	// the leading components missing come from the evaluation's clock
	EXPECT_EQ(pic_ev("$toMillis('13:45', '[H]:[m]') ~> $fromMillis()", 1521801216617), pic_q("2018-03-23T13:45:00.000Z"));
}

// ------------------------------------------------------------------ time zones

namespace {

void pic_be(std::string &out, uint64_t v, int n) {
	for (int i = n - 1; i >= 0; i--)
		out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// A TZif version 2 file: the given transitions and types in the 64-bit part,
// and `footer` as its POSIX TZ rule.
std::string pic_tzif(const std::vector<int64_t> &times, const std::vector<uint8_t> &idx,
				 const std::vector<int32_t> &offsets, const std::string &footer) {
	auto header = [](std::string &out, size_t timecnt, size_t typecnt) {
		out += "TZif2";
		out += std::string(15, '\0');
		pic_be(out, 0, 4);	// isut
		pic_be(out, 0, 4);	// isstd
		pic_be(out, 0, 4);	// leap
		pic_be(out, timecnt, 4);
		pic_be(out, typecnt, 4);
		pic_be(out, 4, 4);	// chars
	};
	std::string f;
	header(f, 0, 1);  // a version 1 part with one type and no transitions
	pic_be(f, 0, 4);
	f += '\0';
	f += '\0';
	f += "UTC";
	f += '\0';
	header(f, times.size(), offsets.size());
	for (int64_t t : times)
		pic_be(f, static_cast<uint64_t>(t), 8);
	for (uint8_t i : idx)
		f += static_cast<char>(i);
	for (int32_t o : offsets) {
		pic_be(f, static_cast<uint32_t>(o), 4);
		f += '\0';
		f += '\0';
	}
	f += "ABC";
	f += '\0';
	f += "\n" + footer + "\n";
	return f;
}

}  // namespace

class PictureZoneDir : public ::testing::Test {
  protected:
	void SetUp() override {
		char tmpl[] = "/tmp/genroc_zones_XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
		ASSERT_EQ(mkdir((dir_ + "/Test").c_str(), 0700), 0);
		// -05:00 until 2000-01-01, then New York's rule: EST5EDT with DST
		// from the second Sunday of March to the first Sunday of November
		write("Test/East", pic_tzif({946684800}, {1}, {-18000, -18000}, "EST5EDT,M3.2.0,M11.1.0"));
		// a fixed +05:30 and a southern rule (Sao Paulo's old one)
		write("Test/India", pic_tzif({}, {}, {19800}, "IST-5:30"));
		write("Test/South", pic_tzif({0}, {0}, {-10800}, "<-03>3<-02>,M10.3.0/0,M2.3.0/0"));
		write("Test/Broken", "not a zone");
		jsonata::detail::picture::set_zoneinfo_dir(dir_);
	}
	void TearDown() override {
		jsonata::detail::picture::set_zoneinfo_dir("/usr/share/zoneinfo");
		for (const char *f : {"Test/East", "Test/India", "Test/South", "Test/Broken"})
			std::remove((dir_ + "/" + f).c_str());
		rmdir((dir_ + "/Test").c_str());
		rmdir(dir_.c_str());
	}
	void write(const std::string &name, const std::string &data) {
		std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
	}
	static int32_t offset(const std::string &zone, int64_t ms) {
		int32_t s = 0;
		EXPECT_TRUE(jsonata::detail::picture::zone_offset(zone, ms, s)) << zone;
		return s;
	}
	std::string dir_;
};


TEST_F(PictureZoneDir, TransitionsAndThePosixRule) {
	EXPECT_EQ(offset("Test/East", 900000000000), -18000);	  // 1998, before the transition
	EXPECT_EQ(offset("Test/East", 1531310400000), -14400);	  // July 2018: DST by the rule
	EXPECT_EQ(offset("Test/East", 1516000000000), -18000);	  // January 2018
	// 2018-03-11 02:00 EST is 07:00 UTC: the change, to the second
	EXPECT_EQ(offset("Test/East", 1520751599000), -18000);
	EXPECT_EQ(offset("Test/East", 1520751600000), -14400);
	// 2018-11-04 02:00 EDT is 06:00 UTC
	EXPECT_EQ(offset("Test/East", 1541311199000), -14400);
	EXPECT_EQ(offset("Test/East", 1541311200000), -18000);
	EXPECT_EQ(offset("Test/India", 1531310400000), 19800);
	EXPECT_EQ(offset("Test/South", 1516000000000), -7200);	  // January: southern summer
	EXPECT_EQ(offset("Test/South", 1531310400000), -10800);
	int32_t s;
	EXPECT_FALSE(jsonata::detail::picture::zone_offset("Test/Broken", 0, s));
	EXPECT_FALSE(jsonata::detail::picture::zone_offset("Test/Missing", 0, s));
	EXPECT_FALSE(jsonata::detail::picture::zone_offset("Test/../Test/East", 0, s));
	EXPECT_FALSE(jsonata::detail::picture::zone_offset("/Test/East", 0, s));
}

TEST_F(PictureZoneDir, FromMillisInANamedZone) {
	EXPECT_EQ(pic_ev("$fromMillis(1531310400000, '[Y0001]-[M01]-[D01] [H01]:[m01] [Z]', 'Test/East')"),
			  pic_q("2018-07-11 08:00 -04:00"));
	EXPECT_EQ(pic_ev("$fromMillis(1516000000000, '[H01]:[m01] [Z]', 'Test/East')"), pic_q("02:06 -05:00"));
	EXPECT_EQ(pic_ev("$fromMillis(1531310400000, '[H01]:[m01] [Z]', 'Test/India')"), pic_q("17:30 +05:30"));
	EXPECT_EQ(pic_ev("$now('[H01]:[m01] [z]', 'Test/South')", 1516000000000), pic_q("05:06 GMT-02:00"));
	EXPECT_EQ(pic_ev("$fromMillis(0, (), 'Test/Broken')"), "error D3137");
}

// The system's tzdata, when the machine has it.
TEST(JsonataPicture, SystemZones) {
	if (access("/usr/share/zoneinfo/Europe/Paris", R_OK) != 0)
		GTEST_SKIP() << "no tzdata";
	EXPECT_EQ(pic_ev("$fromMillis(1499443200000, '[H01]:[m01] [Z]', 'Europe/Paris')"), pic_q("18:00 +02:00"));
	EXPECT_EQ(pic_ev("$fromMillis(1510067557121, '[H01]:[m01] [Z]', 'Europe/Paris')"), pic_q("16:12 +01:00"));
	EXPECT_EQ(pic_ev("$fromMillis(2540000000000, '[Y0001]-[M01]-[D01] [H01]:[m01] [Z]', 'America/New_York')"),
			  pic_q("2050-06-27 23:33 -04:00"));
}
