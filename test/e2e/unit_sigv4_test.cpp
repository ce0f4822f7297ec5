// unit_sigv4_test.cpp — worker/sigv4.*: AWS's own Signature Version 4
// example signed to AWS's published signature, the checks before the secret
// (scope, signed headers, skew either way), replays, the key pairs.  No
// database; the endpoint itself is the sfn suite's (test/sfn/).
#include <gtest/gtest.h>

#include "sigv4.hpp"

namespace genroc::sigv4 {
namespace {

// AWS's worked example of a signed request (IAM ListUsers, 2015-08-30).
Request iam_example() {
	Request r;
	r.method = "GET";
	r.path = "/";
	r.query = {{"Action", "ListUsers"}, {"Version", "2010-05-08"}};
	r.headers = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
				 {"Host", "iam.amazonaws.com"},
				 {"X-Amz-Date", "20150830T123600Z"}};
	return r;
}

TEST(SigV4, SignsAwsExampleToItsPublishedSignature) {
	Request r = iam_example();
	const std::vector<std::string> signed_headers = {"content-type", "host", "x-amz-date"};
	const std::string canonical = canonical_request(r, signed_headers);
	EXPECT_EQ(sha256_hex(canonical), "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
	Credential c;
	c.access_key_id = "AKIDEXAMPLE";
	c.date = "20150830";
	c.region = "us-east-1";
	c.service = "iam";
	c.amz_date = "20150830T123600Z";
	EXPECT_EQ(signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", c, canonical),
			  "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

constexpr int64_t kNow = 1'900'000'000;

Request signed_request(int64_t at, const std::string &secret = "s3cret") {
	Request r;
	r.method = "POST";
	r.path = "/";
	r.headers = {{"Host", "127.0.0.1:8448"},
				 {"Content-Type", "application/x-amz-json-1.0"},
				 {"X-Amz-Target", "AWSStepFunctions.ListStateMachines"}};
	r.body = "{}";
	sign(r, "GRKABCDEFGH1234", secret, "us-east-1", "states", at);
	return r;
}

std::string refusal(const std::function<void()> &fn) {
	try {
		fn();
	} catch (const Refused &e) {
		return e.type + ": " + e.message;
	}
	return "";
}

TEST(SigV4, AcceptsItsOwnSignatureAndRefusesAnotherSecretOrBody) {
	Request r = signed_request(kNow);
	Credential c = parse(r, "us-east-1", kNow);
	EXPECT_EQ(c.access_key_id, "GRKABCDEFGH1234");
	EXPECT_EQ(refusal([&] { verify(r, c, "s3cret"); }), "");
	EXPECT_NE(refusal([&] { verify(r, c, "other"); }).find("InvalidSignatureException"), std::string::npos);
	r.body = "{\"maxResults\":1}";
	EXPECT_NE(refusal([&] { verify(r, c, "s3cret"); }).find("InvalidSignatureException"), std::string::npos);
}

TEST(SigV4, BoundsTheClockSkewAtFifteenMinutesEitherWay) {
	EXPECT_EQ(refusal([&] { parse(signed_request(kNow - 14 * 60), "us-east-1", kNow); }), "");
	EXPECT_NE(refusal([&] { parse(signed_request(kNow - 16 * 60), "us-east-1", kNow); }).find("Signature expired"),
			  std::string::npos);
	EXPECT_NE(refusal([&] { parse(signed_request(kNow + 16 * 60), "us-east-1", kNow); }).find("not yet current"),
			  std::string::npos);
}

TEST(SigV4, RefusesAnotherScopeAndAnUnsignedTarget) {
	EXPECT_NE(refusal([&] { parse(signed_request(kNow), "eu-west-1", kNow); }).find("region"), std::string::npos);
	Request r;
	r.method = "POST";
	r.path = "/";
	r.headers = {{"Host", "h"}};
	r.body = "{}";
	sign(r, "GRKABCDEFGH1234", "s3cret", "us-east-1", "states", kNow);
	r.headers.emplace_back("X-Amz-Target", "AWSStepFunctions.StartExecution");	// added after signing
	EXPECT_NE(refusal([&] { parse(r, "us-east-1", kNow); }).find("x-amz-target must be signed"), std::string::npos);
	Request none;
	EXPECT_NE(refusal([&] { parse(none, "us-east-1", kNow); }).find("MissingAuthenticationTokenException"),
			  std::string::npos);
}

TEST(SigV4, RefusesASignatureUsedBefore) {
	ReplayCache cache;
	EXPECT_TRUE(cache.first_use("abc", kNow, kNow));
	EXPECT_FALSE(cache.first_use("abc", kNow, kNow + 60));
	EXPECT_TRUE(cache.first_use("def", kNow, kNow + 60));
	// Forgotten once it could no longer pass the skew check anyway.
	EXPECT_TRUE(cache.first_use("abc", kNow + 20 * 60, kNow + 20 * 60));
}

TEST(SigV4, KeyPairsComeFromTheServerKeyAndTheTokenId) {
	const std::string key(32, 'k'), id = new_token_id();
	ASSERT_EQ(id.size(), 12u);
	EXPECT_EQ(token_id_of(access_key_id(id)), id);
	EXPECT_EQ(token_id_of("AKIDEXAMPLE"), std::nullopt);
	EXPECT_EQ(secret_access_key(key, id).size(), 40u);
	EXPECT_EQ(secret_access_key(key, id), secret_access_key(key, id));
	EXPECT_NE(secret_access_key(key, id), secret_access_key(std::string(32, 'x'), id));
	EXPECT_NE(token_text(key, id).find(id), std::string::npos);
	EXPECT_EQ(token_text(key, id).find(secret_access_key(key, id)), std::string::npos);
}

}  // namespace
}  // namespace genroc::sigv4
