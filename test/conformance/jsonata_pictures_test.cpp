// jsonata_pictures_test.cpp — JSONata's picture strings through an ASL
// state on both stores: $fromMillis with a picture and a time zone (an IANA
// name read from the tzdata of the process that runs the step: the
// PostgreSQL backend, or the SQLite shim's), $now with a picture on the test
// clock, $toMillis, $formatNumber and $formatInteger.
#include "fixture.hpp"

namespace genroc::conformance {

TEST_P(StoreTest, JsonataDatesAndNumbersWithPictures) {
	define("pictures", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"P","States":{
	  "P":{"Type":"Pass","Output":{
	    "day":"{% $fromMillis($states.input.t, '[FNn], [D1o] [MNn] [Y0001], [h]:[m01][P] [Z]', '-0500') %}",
	    "ny":"{% $fromMillis($states.input.t, '[H01]:[m01] [Z]', 'America/New_York') %}",
	    "now":"{% $now('[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01]') %}",
	    "back":"{% $toMillis('11 July 2018 12:00 +00:00', '[D] [MNn] [Y] [H01]:[m01] [Z]') %}",
	    "price":"{% $formatNumber(1234.5, '#,##0.00') %}",
	    "words":"{% $formatInteger(21, 'w;o') %}"},"End":true}}})"));
	at(90);
	const int64_t id = start("pictures", {{"t", 1531310400000}});
	EXPECT_EQ(status(id), "succeeded");
	EXPECT_EQ(instance(id).at("output"), json::parse(R"({
	  "day":"Wednesday, 11th July 2018, 7:00am -05:00",
	  "ny":"08:00 -04:00",
	  "now":"2030-01-01T00:01:30",
	  "back":1531310400000,
	  "price":"1,234.50",
	  "words":"twenty-first"})"));
}

// A bad picture fails the state with the reference's code in the cause.
TEST_P(StoreTest, JsonataBadPictureFailsTheState) {
	define("badpic", json::parse(R"({"QueryLanguage":"JSONata","StartAt":"P","States":{
	  "P":{"Type":"Pass","Output":"{% $fromMillis(0, '[Y') %}","End":true}}})"));
	const int64_t id = start("badpic");
	EXPECT_EQ(status(id), "failed");
	EXPECT_EQ(instance(id).at("error"), "States.QueryEvaluationError");
	const std::string cause = instance(id).at("cause");
	EXPECT_NE(cause.find("D3135"), std::string::npos) << cause;
}

}  // namespace genroc::conformance
