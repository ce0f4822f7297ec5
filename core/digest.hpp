// digest.hpp — lowercase hex of bytes and of OpenSSL digests, for every part
// that names something by its hash (stored values, token hashes, worker lock
// files, the default worker id, States.Hash / $hash), and HMAC-SHA256 (JWT
// signatures, SigV4 signing keys, genroc's key pairs, paging tokens).
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <optional>
#include <string>

namespace genroc {

// The bytes as lowercase hex, two digits each.
std::string hex_string(const unsigned char *bytes, size_t n);

// The digest `md` (EVP_sha256() …) of data as lowercase hex; nullopt when
// OpenSSL fails (the caller says what that means where it is).
std::optional<std::string> digest_hex(const EVP_MD *md, const std::string &data);

// HMAC-SHA256 of data under key: the 32 raw bytes.  Throws
// std::runtime_error when OpenSSL fails.
std::string hmac_sha256(const std::string &key, const std::string &data);

}  // namespace genroc
