// jsonpath_test.cpp — the JSONPath dialect: parsing, selection (definite
// and indefinite paths), context paths, and writing at a reference path.

#include "helpers.hpp"
#include "internal.hpp"

using namespace genroc;
using namespace genroc::test;
using genroc::asl::detail::Path;
using genroc::asl::detail::SyntaxError;

namespace {

const json kDoc = J(R"({
  "name":"n", "a":{"b":{"c":1}}, "list":[10,20,30,40,50],
  "odd key":{"x":true}, "it's":2,
  "books":[{"title":"A","price":5,"tags":["x"]},{"title":"B","price":15},
           {"title":"C","price":25,"isbn":"1"}],
  "nested":{"price":1,"inner":{"price":2}}
})");

json sel(const std::string &path, const json &doc = kDoc) {
	auto got = Path::parse(path).select(doc);
	return got ? *got : json("<nothing>");
}

std::string parse_error(const std::string &path) {
	try {
		Path::parse(path);
	} catch (const SyntaxError &e) {
		return e.what();
	}
	return "<parsed>";
}

}  // namespace

TEST(JsonPath, RootAndNames) {
	EXPECT_EQ(sel("$"), kDoc);
	EXPECT_EQ(sel("$.name"), "n");
	EXPECT_EQ(sel("$.a.b.c"), 1);
	EXPECT_EQ(sel("$['a']['b'].c"), 1);
	EXPECT_EQ(sel(R"($["odd key"].x)"), true);
	EXPECT_EQ(sel(R"($['it\'s'])"), 2);
	EXPECT_EQ(sel("$.a.nope"), "<nothing>");
	EXPECT_EQ(sel("$.name.deeper"), "<nothing>");
}

// AWS's recorded answers: a bracketed name with escaped quotes selects the
// field (\\ is a backslash, \" a quote), and a script expression
// (@.length - n) is the n-th item from the end.
TEST(JsonPath, EscapedQuotesInABracketedName) {
	const json doc = J(R"({"Test\\\"\"Name\"":1, "say \"hi\"":2})");
	ASSERT_TRUE(doc.contains("Test\\\"\"Name\""));
	EXPECT_EQ(sel(R"($['Test\\\"\"Name\"'])", doc), 1);
	EXPECT_EQ(sel(R"($["say \"hi\""])", doc), 2);
	EXPECT_EQ(sel(R"($['say \"hi\"'])", doc), 2);
}

TEST(JsonPath, ScriptExpressionFromTheEnd) {
	EXPECT_EQ(sel("$.list[(@.length-1)]"), 50);
	EXPECT_EQ(sel("$.list[( @.length - 2 )]"), 40);
	EXPECT_EQ(sel("$.books[(@.length-1)].title"), "C");
	EXPECT_EQ(sel("$.list[(@.length)]"), "<nothing>");
	EXPECT_EQ(sel("$.list[(@.length+1)]"), "<nothing>");
	EXPECT_EQ(sel("$.list[(@.length-6)]"), "<nothing>");
	EXPECT_EQ(sel("$.name[(@.length-1)]"), "<nothing>");
	EXPECT_TRUE(Path::parse("$[(@.length-1)].bar").is_reference());
	EXPECT_EQ(parse_error("$.list[(@.size-1)]"), "a script expression must be (@.length - n) at offset 8");
	EXPECT_EQ(parse_error("$.list[(@.length*2)]"), "expected ')' to end the script expression at offset 16");
	EXPECT_EQ(parse_error("$.list[(@.length--1)]"), "expected a whole number after @.length - at offset 17");
}

TEST(JsonPath, Indices) {
	EXPECT_EQ(sel("$.list[0]"), 10);
	EXPECT_EQ(sel("$.list[4]"), 50);
	EXPECT_EQ(sel("$.list[-1]"), 50);
	EXPECT_EQ(sel("$.list[ 1 ]"), 20);
	EXPECT_EQ(sel("$.list[5]"), "<nothing>");
	EXPECT_EQ(sel("$.list[-6]"), "<nothing>");
	EXPECT_EQ(sel("$.name[0]"), "<nothing>");
	EXPECT_EQ(sel("$.books[1].title"), "B");
}

TEST(JsonPath, WildcardsGiveArrays) {
	EXPECT_EQ(sel("$.list[*]"), J("[10,20,30,40,50]"));
	EXPECT_EQ(sel("$.books[*].title"), J(R"(["A","B","C"])"));
	EXPECT_EQ(sel("$.a.*"), J(R"([{"c":1}])"));
	EXPECT_EQ(sel("$.books[*].isbn"), J(R"(["1"])"));
	EXPECT_EQ(sel("$.books[*].nope"), json::array());  // indefinite: empty, not missing
}

TEST(JsonPath, Slices) {
	EXPECT_EQ(sel("$.list[1:3]"), J("[20,30]"));
	EXPECT_EQ(sel("$.list[:2]"), J("[10,20]"));
	EXPECT_EQ(sel("$.list[3:]"), J("[40,50]"));
	EXPECT_EQ(sel("$.list[-2:]"), J("[40,50]"));
	EXPECT_EQ(sel("$.list[::2]"), J("[10,30,50]"));
	EXPECT_EQ(sel("$.list[10:20]"), json::array());
	EXPECT_EQ(sel("$.list[3:1]"), json::array());
}

TEST(JsonPath, Unions) {
	EXPECT_EQ(sel("$.list[0,1]"), J("[10,20]"));
	EXPECT_EQ(sel("$.list[4, 0, -1]"), J("[50,10,50]"));  // in the order given
	EXPECT_EQ(sel("$.list[1,9]"), J("[20]"));			  // a missing member is skipped
	EXPECT_EQ(sel("$.books[0,2].title"), J(R"(["A","C"])"));
	EXPECT_EQ(sel("$['name','it\\'s']"), J(R"(["n",2])"));
	EXPECT_EQ(sel(R"($.a["b", "x"].c)"), J("[1]"));
	EXPECT_EQ(sel("$.name[0,1]"), json::array());
	EXPECT_FALSE(Path::parse("$.list[0,1]").is_definite());
	EXPECT_FALSE(Path::parse("$.list[0,1]").is_reference());
	EXPECT_EQ(parse_error("$.list[0,]"), "expected an index or a quoted name in a union at offset 9");
	EXPECT_EQ(parse_error("$.list[0,*]"), "expected an index or a quoted name in a union at offset 9");
	std::string many = "$.list[0";
	for (int i = 0; i < 300; i++)
		many += ",1";
	EXPECT_EQ(parse_error(many + "]"), "a union has at most 256 members at offset 519");
}

TEST(JsonPath, DeepScan) {
	EXPECT_EQ(sel("$.nested..price"), J("[1,2]"));
	EXPECT_EQ(sel("$..isbn"), J(R"(["1"])"));
	EXPECT_EQ(sel("$.a..*"), J(R"([{"c":1},1])"));
}

TEST(JsonPath, Filters) {
	EXPECT_EQ(sel("$.books[?(@.price > 10)].title"), J(R"(["B","C"])"));
	EXPECT_EQ(sel("$.books[?(@.price <= 15 && @.title != 'A')].title"), J(R"(["B"])"));
	EXPECT_EQ(sel("$.books[?(@.title == 'A' || @.title == \"C\")].price"), J("[5,25]"));
	EXPECT_EQ(sel("$.books[?(@.isbn)].title"), J(R"(["C"])"));
	EXPECT_EQ(sel("$.books[?(!(@.price < 20))].title"), J(R"(["C"])"));
	EXPECT_EQ(sel("$.list[?(@ >= 40)]"), J("[40,50]"));
	EXPECT_EQ(sel("$.books[?(@.price == $.a.b.c)]"), json::array());
	EXPECT_EQ(sel("$.books[?(@.price > 'x')]"), json::array());	// no order across types
	EXPECT_EQ(sel("$.books[?(@.price >= 5.0)].title"), J(R"(["A","B","C"])"));
	EXPECT_EQ(sel("$.books[?(@.price>-1.5e1&&@.price<6)].title"), J(R"(["A"])"));
	EXPECT_EQ(sel("$.books[?(@.title == null)]"), json::array());
}

TEST(JsonPath, ContextPaths) {
	const json ctx = J(R"({"Execution":{"Id":"e1"}})");
	auto p = Path::parse("$$.Execution.Id");
	EXPECT_TRUE(p.is_context());
	EXPECT_EQ(*p.select(kDoc, ctx), "e1");
	EXPECT_FALSE(Path::parse("$.Execution").select(kDoc, ctx).has_value());
	EXPECT_EQ(*Path::parse("$$").select(kDoc, ctx), ctx);
}

TEST(JsonPath, Kinds) {
	EXPECT_TRUE(Path::parse("$.a[0]['b']").is_reference());
	EXPECT_TRUE(Path::parse("$").is_reference());
	EXPECT_TRUE(Path::parse("$").is_root());
	EXPECT_FALSE(Path::parse("$$.a").is_reference());
	EXPECT_FALSE(Path::parse("$.a[*]").is_reference());
	EXPECT_FALSE(Path::parse("$.a[0:1]").is_definite());
	EXPECT_FALSE(Path::parse("$..a").is_definite());
	EXPECT_FALSE(Path::parse("$.a[?(@.b)]").is_definite());
	EXPECT_TRUE(Path::parse("$.a[-1]").is_definite());
}

TEST(JsonPath, SyntaxErrors) {
	EXPECT_EQ(parse_error(""), "a path starts with '$' at offset 0");
	EXPECT_EQ(parse_error("a.b"), "a path starts with '$' at offset 0");
	EXPECT_EQ(parse_error("$."), "expected a field name at offset 2");
	EXPECT_EQ(parse_error("$.a."), "expected a field name at offset 4");
	EXPECT_EQ(parse_error("$1"), "unexpected '1' at offset 1");
	EXPECT_EQ(parse_error("$a-b"), "unexpected '-' at offset 2");
	EXPECT_EQ(parse_error("$.a["), "expected an index, a quoted name, '*', a slice or a filter at offset 4");
	EXPECT_EQ(parse_error("$.a[1"), "expected ']' at offset 5");
	EXPECT_EQ(parse_error("$['a"), "unterminated quoted name at offset 4");
	EXPECT_EQ(parse_error("$.a[::0]"), "slice step must be positive at offset 7");
	EXPECT_EQ(parse_error("$.a[?(@.b ==)]"), "expected an operand at offset 12");
	EXPECT_EQ(parse_error("$.a[?(@.b == nan)]"), "expected an operand at offset 13");
	EXPECT_EQ(parse_error("$.a[?(@.b == 1.2.3)]"), "expected an operand at offset 13");
	EXPECT_EQ(parse_error("$.a[?(1)]"), "a filter needs a comparison or a path at offset 7");
	EXPECT_EQ(parse_error("$.a[?@.b]"), "expected '(' after '?' at offset 5");
	EXPECT_EQ(parse_error("$.a b"), "unexpected ' ' at offset 3");
	EXPECT_EQ(parse_error("$.a[99999999999999999]"), "index too large at offset 21");
}

TEST(JsonPath, AssignAtReferencePaths) {
	json doc = J(R"({"a":{"b":1},"l":[1,2],"s":"text","n":null})");
	EXPECT_TRUE(Path::parse("$.a.c").assign(doc, 2));
	EXPECT_TRUE(Path::parse("$.x.y.z").assign(doc, 3));	// creates x and y
	EXPECT_TRUE(Path::parse("$.l[1]").assign(doc, "two"));
	EXPECT_TRUE(Path::parse("$.l[-1]").assign(doc, "last"));
	EXPECT_TRUE(Path::parse("$['q r']").assign(doc, 4));
	EXPECT_EQ(doc, J(R"({"a":{"b":1,"c":2},"l":[1,"last"],"s":"text","n":null,
	                    "x":{"y":{"z":3}},"q r":4})"));
	json before = doc;
	EXPECT_FALSE(Path::parse("$.s.x").assign(doc, 1));	// through a string
	EXPECT_FALSE(Path::parse("$.n.x").assign(doc, 1));	// through null
	EXPECT_FALSE(Path::parse("$.l[2]").assign(doc, 1));	// past the end
	EXPECT_FALSE(Path::parse("$.a[0]").assign(doc, 1));	// index into an object
	EXPECT_FALSE(Path::parse("$.l.x").assign(doc, 1));	// name into an array
	EXPECT_EQ(doc, before);
	json scalar = 5;
	EXPECT_FALSE(Path::parse("$.a").assign(scalar, 1));
	EXPECT_TRUE(Path::parse("$").assign(scalar, 6));
	EXPECT_EQ(scalar, 6);
}

TEST(JsonPath, VariablePaths) {
	const json vars = J(R"({"order":{"lines":[{"sku":"a"},{"sku":"b"}]},"n":3})");
	const json input = J(R"({"n":"input"})");
	auto v = [&](const std::string &p) {
		auto got = Path::parse(p).select(input, json::object(), &vars);
		return got ? *got : json("<nothing>");
	};
	EXPECT_EQ(v("$n"), 3);
	EXPECT_EQ(v("$order.lines[1].sku"), "b");
	EXPECT_EQ(v("$order.lines[*].sku"), J(R"(["a","b"])"));
	EXPECT_EQ(v("$missing"), "<nothing>");
	EXPECT_EQ(v("$.n"), "input");
	EXPECT_EQ(Path::parse("$order.x").variable(), "order");
	EXPECT_FALSE(Path::parse("$order").is_reference());	 // not a place ResultPath may write
	// without variables, a variable path selects nothing
	EXPECT_FALSE(Path::parse("$n").select(input, json::object()).has_value());
}
