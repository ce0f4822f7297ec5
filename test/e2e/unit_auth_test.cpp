// unit_auth_test.cpp — worker/auth.*: HS256 JWTs (good, bad signature, alg
// none and others, exp, nbf, sub, groups mapped to permissions), base64url,
// --jwt-groups, the routes' permissions, the seed tokens file.  No database.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "auth.hpp"

namespace genroc::auth {
namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef-shared";
constexpr int64_t kNow = 1'900'000'000;	 // 2030-03-17
const GroupMap kGroups = {{"ops", {"admin"}}, {"dev", {"operator"}}, {"qa", {"reader", "operator"}}};

std::string jwt(const json &claims, const json &header = {{"alg", "HS256"}, {"typ", "JWT"}},
				const std::string &secret = kSecret) {
	return sign_jwt(header, claims, secret);
}

json claims(json extra = json::object()) {
	json c = {{"sub", "alice"}, {"exp", kNow + 3600}, {"groups", {"dev"}}};
	c.update(extra);
	return c;
}

// The message of the Refused that fn throws; "" when it accepts.
std::string refusal(const std::string &token, int64_t now = kNow) {
	try {
		verify_jwt(token, kSecret, kGroups, now);
		return "";
	} catch (const Refused &e) {
		return e.what();
	}
}

TEST(Jwt, AGoodTokenGivesTheSubjectAndItsGroupsPermissions) {
	Principal p = verify_jwt(jwt(claims({{"groups", {"dev", "qa", "unknown-group"}}})), kSecret, kGroups, kNow);
	EXPECT_EQ(p.name, "alice");
	EXPECT_EQ(p.permissions, (std::set<std::string>{"operator", "reader"}));
	p = verify_jwt(jwt(claims({{"groups", {"ops"}}})), kSecret, kGroups, kNow);
	EXPECT_EQ(p.permissions, (std::set<std::string>{"admin"}));
	// no groups, or none mapped: authenticated, without permissions
	json c = claims();
	c.erase("groups");
	EXPECT_TRUE(verify_jwt(jwt(c), kSecret, kGroups, kNow).permissions.empty());
	EXPECT_TRUE(verify_jwt(jwt(claims({{"groups", json::array()}})), kSecret, kGroups, kNow).permissions.empty());
}

TEST(Jwt, ABadSignatureIsRefused) {
	EXPECT_NE(refusal(jwt(claims(), {{"alg", "HS256"}}, kSecret + "x")).find("bad signature"), std::string::npos);
	// a payload changed after signing
	std::string t = jwt(claims());
	const size_t d1 = t.find('.'), d2 = t.rfind('.');
	std::string forged = t.substr(0, d1 + 1) + base64url_encode(claims({{"groups", {"ops"}}}).dump()) + t.substr(d2);
	EXPECT_NE(refusal(forged).find("bad signature"), std::string::npos);
	// no signature, a truncated one, one that is not base64url
	EXPECT_NE(refusal(t.substr(0, d2 + 1)).find("bad signature"), std::string::npos);
	EXPECT_NE(refusal(t.substr(0, t.size() - 4)).find("bad signature"), std::string::npos);
	EXPECT_NE(refusal(t.substr(0, d2 + 1) + "!!!!").find("bad signature"), std::string::npos);
}

TEST(Jwt, OnlyHs256IsAccepted) {
	// alg none with an empty signature: the classic forgery
	std::string none = base64url_encode(json({{"alg", "none"}, {"typ", "JWT"}}).dump()) + "." +
					   base64url_encode(claims({{"groups", {"ops"}}}).dump()) + ".";
	EXPECT_NE(refusal(none).find("alg \"none\" is not accepted"), std::string::npos) << refusal(none);
	// even when signed correctly with the secret
	EXPECT_NE(refusal(jwt(claims(), {{"alg", "none"}})).find("not accepted"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims(), {{"alg", "HS512"}})).find("not accepted"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims(), {{"alg", "hs256"}})).find("not accepted"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims(), {{"typ", "JWT"}})).find("(none given)"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims(), {{"alg", "HS256"}, {"crit", {"x"}}})).find("critical"), std::string::npos);
}

TEST(Jwt, ExpIsRequiredAndChecked) {
	json c = claims();
	c.erase("exp");
	EXPECT_NE(refusal(jwt(c)).find("\"exp\" is required"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims({{"exp", "tomorrow"}}))).find("must be a number"), std::string::npos);
	EXPECT_NE(refusal(jwt(claims({{"exp", kNow - 3600}}))).find("expired"), std::string::npos);
	// within the leeway it still holds; past it, not
	EXPECT_EQ(refusal(jwt(claims({{"exp", kNow - kJwtLeewaySeconds + 1}}))), "");
	EXPECT_NE(refusal(jwt(claims({{"exp", kNow - kJwtLeewaySeconds}}))).find("expired"), std::string::npos);
}

TEST(Jwt, NotBeforeIsChecked) {
	EXPECT_NE(refusal(jwt(claims({{"nbf", kNow + 600}}))).find("not valid yet"), std::string::npos);
	EXPECT_EQ(refusal(jwt(claims({{"nbf", kNow - 600}}))), "");
	EXPECT_EQ(refusal(jwt(claims({{"nbf", kNow + 10}}))), "");	// within the leeway
}

TEST(Jwt, SubjectAndGroupsMustBeWellFormed) {
	json c = claims();
	c.erase("sub");
	EXPECT_NE(refusal(jwt(c)).find("\"sub\""), std::string::npos);
	EXPECT_NE(refusal(jwt(claims({{"sub", ""}}))).find("\"sub\""), std::string::npos);
	EXPECT_NE(refusal(jwt(claims({{"groups", "dev"}}))).find("\"groups\""), std::string::npos);
	EXPECT_NE(refusal(jwt(claims({{"groups", {1}}}))).find("\"groups\""), std::string::npos);
	EXPECT_NE(refusal("a.b").find("three parts"), std::string::npos);
	EXPECT_NE(refusal("!!.e30.x").find("not base64url"), std::string::npos);
	EXPECT_NE(refusal(base64url_encode("[1]") + ".e30.x").find("not a JSON object"), std::string::npos);
}

TEST(Jwt, WithoutASecretNoJwtIsAccepted) {
	try {
		verify_jwt(jwt(claims()), "", kGroups, kNow);
		FAIL() << "accepted a JWT without a secret";
	} catch (const Refused &e) {
		EXPECT_NE(std::string(e.what()).find("--jwt-secret"), std::string::npos);
	}
}

TEST(Jwt, OnlyTwoDotsMakeAJwt) {
	EXPECT_TRUE(looks_like_jwt("a.b.c"));
	EXPECT_TRUE(looks_like_jwt("a.b."));
	EXPECT_FALSE(looks_like_jwt("grt_abcdefgh12_" + std::string(40, 'x')));
	EXPECT_FALSE(looks_like_jwt("a.b"));
	EXPECT_FALSE(looks_like_jwt("a.b.c.d"));
}

TEST(Base64url, RoundTripsAndRefusesOtherAlphabets) {
	for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00\x01"})
		EXPECT_EQ(base64url_decode(base64url_encode(s)), s);
	EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
	EXPECT_FALSE(base64url_decode("ab+/"));
	EXPECT_FALSE(base64url_decode("YQ=="));
	EXPECT_FALSE(base64url_decode("a"));
}

TEST(JwtGroups, ParseAndRefuse) {
	GroupMap g = parse_groups(R"({"ops":["admin"],"dev":["operator","reader"]})");
	EXPECT_EQ(g.at("dev"), (std::vector<std::string>{"operator", "reader"}));
	for (const char *bad : {"[]", "{", R"({"ops":"admin"})", R"({"ops":["root"]})", R"({"ops":[1]})"}) {
		try {
			parse_groups(bad);
			ADD_FAILURE() << "accepted " << bad;
		} catch (const std::runtime_error &e) {
			EXPECT_NE(std::string(e.what()).find("--jwt-groups"), std::string::npos) << e.what();
		}
	}
}

TEST(Permissions, EachRouteNeedIsMetByTheDesignedPermissions) {
	auto can = [](std::initializer_list<const char *> perms, const Need &n) {
		Principal p{"x", {}};
		for (auto q : perms) p.permissions.insert(q);
		return allows(p, n);
	};
	EXPECT_TRUE(can({"admin"}, need_admin()));
	EXPECT_TRUE(can({"admin"}, need_work()));
	EXPECT_TRUE(can({"admin"}, need_operate()));
	EXPECT_FALSE(can({"operator"}, need_admin()));
	EXPECT_TRUE(can({"operator"}, need_operate()));
	EXPECT_TRUE(can({"operator"}, need_read()));
	EXPECT_TRUE(can({"operator"}, need_read_instances()));
	EXPECT_FALSE(can({"operator"}, need_work()));
	EXPECT_TRUE(can({"worker"}, need_work()));
	EXPECT_TRUE(can({"worker"}, need_read_instances()));
	EXPECT_FALSE(can({"worker"}, need_read()));
	EXPECT_FALSE(can({"worker"}, need_operate()));
	EXPECT_TRUE(can({"reader"}, need_read()));
	EXPECT_TRUE(can({"reader"}, need_read_instances()));
	EXPECT_FALSE(can({"reader"}, need_operate()));
	EXPECT_FALSE(can({"reader"}, need_work()));
	EXPECT_FALSE(can({}, need_read()));
	EXPECT_EQ(describe(need_operate()), "the \"operator\" permission (or admin)");
	EXPECT_EQ(describe(need_admin()), "the \"admin\" permission");
}

TEST(SeedTokens, TheFileIsReadAndCheckedWithoutShowingATokenText) {
	auto path = (std::filesystem::temp_directory_path() / ("genroc-seed-" + std::to_string(getpid()) + ".json")).string();
	auto write = [&](const std::string &text) { std::ofstream(path) << text; };
	write(R"({"tokens":[{"name":"worker-eu-1","token":"grt_abcdefgh_SECRETSECRETSECRETSECRETSECRET12","permissions":["worker"]}]})");
	auto seeds = load_seed_tokens(path);
	ASSERT_EQ(seeds.size(), 1u);
	EXPECT_EQ(seeds[0].name, "worker-eu-1");
	EXPECT_EQ(seeds[0].permissions, std::vector<std::string>{"worker"});
	for (const char *bad :
		 {"nope", "[]", R"({"tokens":{}})", R"({"tokens":[],"x":1})", R"({"tokens":[{"name":"a","token":"SECRETX","permissions":[]}]})",
		  R"({"tokens":[{"name":"a","token":"SECRETX","permissions":["worker"],"extra":1}]})",
		  R"({"tokens":[{"token":"SECRETX","permissions":["worker"]}]})", R"({"tokens":[{"name":"a","token":7,"permissions":["worker"]}]})"}) {
		write(bad);
		try {
			load_seed_tokens(path);
			ADD_FAILURE() << "accepted " << bad;
		} catch (const std::runtime_error &e) {
			EXPECT_NE(std::string(e.what()).find("--seed-tokens"), std::string::npos) << e.what();
			EXPECT_EQ(std::string(e.what()).find("SECRETX"), std::string::npos) << e.what();
		}
	}
	std::filesystem::remove(path);
}

}  // namespace
}  // namespace genroc::auth
