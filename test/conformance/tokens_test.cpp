// tokens_test.cpp — API tokens on both stores (extension/sql/80_tokens.sql;
// the engine's engine/tokens.cpp): create, verify, list, revoke; only the hash is kept;
// bad permissions and names; a seeded token text, idempotent.
#include <regex>

#include "fixture.hpp"

namespace genroc::conformance {

namespace {

// The token text format operators generate for a seed file (docs/security.md
// "Authentication"): grt_<id>_<secret>.
const std::string kSeed = "grt_seedw0rker01_" + std::string(40, 'A') + "b9";

}  // namespace

TEST_P(StoreTest, ATokenIsCreatedVerifiedListedAndRevoked) {
	json t = store().token_create("ops-admin", {"admin"}, "cli", std::nullopt);
	const std::string text = t.at("token");
	EXPECT_TRUE(std::regex_match(text, std::regex("grt_[a-z0-9]{12}_[A-Za-z0-9]{64}"))) << text;
	const std::string id = t.at("id");
	EXPECT_EQ(text.substr(4, id.size() + 1), id + "_");
	EXPECT_EQ(t.at("name"), "ops-admin");
	EXPECT_EQ(t.at("permissions"), json::array({"admin"}));
	EXPECT_EQ(t.at("created_by"), "cli");
	EXPECT_EQ(t.at("created_at"), T0);
	EXPECT_EQ(t.at("is_new"), true);

	json v = store().token_verify(text);
	EXPECT_EQ(v, json({{"id", id}, {"name", "ops-admin"}, {"permissions", {"admin"}}, {"created_by", "cli"}}));

	// a second token, made by the first; list is oldest first
	at(5);
	json w = store().token_create("worker-eu-1", {"worker", "reader", "worker"}, "ops-admin", std::nullopt);
	EXPECT_EQ(w.at("permissions"), json::array({"reader", "worker"}));	// sorted, unique
	EXPECT_NE(w.at("token"), t.at("token"));
	json list = store().token_list();
	ASSERT_EQ(list.size(), 2u);
	EXPECT_EQ(list[0].at("id"), id);
	EXPECT_EQ(list[1].at("created_by"), "ops-admin");
	EXPECT_EQ(list[1].at("revoked_at"), nullptr);

	at(10);
	store().token_revoke(id);
	EXPECT_EQ(store().token_verify(text), nullptr);
	EXPECT_FALSE(store().token_verify(w.at("token")).is_null());
	EXPECT_EQ(store().token_list()[0].at("revoked_at"), time_at(10));
	// revoking again keeps the first time
	at(20);
	store().token_revoke(id);
	EXPECT_EQ(store().token_list()[0].at("revoked_at"), time_at(10));
	// another connection sees the revoke at once
	EXPECT_EQ(open_another()->token_verify(text), nullptr);
	EXPECT_RAISES("42704", "token \"nosuchid\" does not exist", store().token_revoke("nosuchid"));
}

TEST_P(StoreTest, OnlyTheHashOfATokenIsKept) {
	json t = store().token_create("a", {"reader"}, "cli", std::nullopt);
	const std::string text = t.at("token");
	const std::string secret = text.substr(text.rfind('_') + 1);
	const std::string listed = store().token_list().dump();
	EXPECT_EQ(listed.find(secret), std::string::npos) << listed;
	EXPECT_EQ(listed.find("hash"), std::string::npos) << listed;
	EXPECT_EQ(store().token_verify(text).dump().find(secret), std::string::npos);
}

TEST_P(StoreTest, WrongOrMalformedTokensDoNotVerify) {
	json t = store().token_create("a", {"reader"}, "cli", std::nullopt);
	std::string text = t.at("token");
	std::string wrong = text;
	wrong.back() = wrong.back() == 'a' ? 'b' : 'a';	// same id, another secret
	for (const std::string &bad : {wrong, std::string(""), std::string("grt_"), text + "x!", text.substr(0, 20),
								   std::string("Bearer ") + text, "grt_" + std::string(t.at("id")) + "_short"})
		EXPECT_EQ(store().token_verify(bad), nullptr) << bad;
}

TEST_P(StoreTest, BadPermissionsAndNamesAreRefused) {
	EXPECT_RAISES("22023", "unknown permission \"superuser\"",
				  store().token_create("x", {"reader", "superuser"}, "cli", std::nullopt));
	EXPECT_RAISES("22023", "at least one permission", store().token_create("x", {}, "cli", std::nullopt));
	EXPECT_RAISES("22023", "name must not be empty", store().token_create("", {"reader"}, "cli", std::nullopt));
	EXPECT_RAISES("22023", "p_created_by", store().token_create("x", {"reader"}, "", std::nullopt));
	EXPECT_RAISES("22023", "not a token text", store().token_create("x", {"reader"}, "cli", std::string("s3cret")));
	EXPECT_TRUE(store().token_list().empty());
}

TEST_P(StoreTest, ASeededTokenTextIsStoredOnceAndWorks) {
	json s = store().token_create("worker-eu-1", {"worker"}, "seed", kSeed);
	EXPECT_EQ(s.at("id"), "seedw0rker01");
	EXPECT_EQ(s.at("token"), kSeed);
	EXPECT_EQ(s.at("is_new"), true);
	EXPECT_EQ(store().token_verify(kSeed).at("name"), "worker-eu-1");
	// the same again (a restart with the same seed file): nothing changes
	at(60);
	json again = store().token_create("worker-eu-1", {"worker"}, "seed", kSeed);
	EXPECT_EQ(again.at("is_new"), false);
	EXPECT_EQ(again.at("created_at"), T0);
	EXPECT_EQ(store().token_list().size(), 1u);
	// the same id with another secret, name or permissions: refused, naming it
	std::string other = kSeed;
	other.back() = '0';
	EXPECT_RAISES("23505", "token \"seedw0rker01\" already exists",
				  store().token_create("worker-eu-1", {"worker"}, "seed", other));
	EXPECT_RAISES("23505", "seedw0rker01", store().token_create("worker-eu-1", {"admin"}, "seed", kSeed));
	EXPECT_RAISES("23505", "seedw0rker01", store().token_create("worker-eu-2", {"worker"}, "seed", kSeed));
	EXPECT_EQ(store().token_verify(other), nullptr);
	// a revoked seed stays revoked when seeded again
	store().token_revoke("seedw0rker01");
	EXPECT_FALSE(store().token_create("worker-eu-1", {"worker"}, "seed", kSeed).at("revoked_at").is_null());
	EXPECT_EQ(store().token_verify(kSeed), nullptr);
}

}  // namespace genroc::conformance

namespace genroc::conformance {

// Roles (docs/security.md "Roles and ownership"): the suite's store administers (a
// superuser on PostgreSQL; the owner of the file on SQLite), so it has every
// capability and may run both token functions the binary checks.
TEST_P(StoreTest, TheSuitesStoreHasEveryCapability) {
	json c = store().capabilities();
	for (const char *k : {"admin", "operator", "worker", "user", "token_verify", "token_create"})
		EXPECT_EQ(c.value(k, false), true) << k << " in " << c.dump();
	EXPECT_TRUE(c.at("role").is_string()) << c.dump();
}

}  // namespace genroc::conformance
