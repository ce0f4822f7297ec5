// digest.cpp — see digest.hpp.
#include "digest.hpp"

#include <openssl/hmac.h>

#include <stdexcept>

namespace genroc {

std::string hex_string(const unsigned char *bytes, size_t n) {
	static const char hex[] = "0123456789abcdef";
	std::string out;
	out.reserve(2 * n);
	for (size_t i = 0; i < n; i++) {
		out += hex[bytes[i] >> 4];
		out += hex[bytes[i] & 15];
	}
	return out;
}

std::optional<std::string> digest_hex(const EVP_MD *md, const std::string &data) {
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	if (!md || EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr) != 1) return std::nullopt;
	return hex_string(digest, len);
}

std::string hmac_sha256(const std::string &key, const std::string &data) {
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
			  reinterpret_cast<const unsigned char *>(data.data()), data.size(), md, &len))
		throw std::runtime_error("HMAC-SHA256 failed");
	return std::string(reinterpret_cast<char *>(md), len);
}

}  // namespace genroc
