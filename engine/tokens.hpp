// tokens.hpp — the API tokens `genroc serve|api --auth` accepts as
// "Authorization: Bearer <token>" (extension/sql/80_tokens.sql declares the
// SQL functions and has the table), once for both stores.
//
// A token's text is grt_<id>_<secret>: id 8 to 32 of a-z and 0-9 (the row's
// key), secret 32 to 128 of A-Z, a-z and 0-9.  Only the sha256 of the whole
// text is stored; the text is answered once, by token_create, and never
// logged.  Each answer is JSON text (jsonb in PostgreSQL).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// genroc.token_create(p_name, p_permissions, p_created_by, p_secret):
// {id, name, permissions, created_by, created_at, revoked_at, token,
// is_new}.  Without secret a new random token; with it (a whole token
// text, from a seed file) that text's hash under its id: the same text,
// name and permissions again answer the stored token (is_new false), the
// id with anything else is 23505.
std::string token_create(Port &port, const std::optional<std::string> &name,
						 const std::optional<std::vector<std::optional<std::string>>> &permissions,
						 const std::optional<std::string> &created_by, const std::optional<std::string> &secret);

// genroc.token_verify(p_token): {id, name, permissions, created_by} of a
// live token whose text hashes to the stored hash (compared in constant
// time); nullopt for anything else.  No cache: a revoke is seen at once.
std::optional<std::string> token_verify(Port &port, const std::optional<std::string> &token);

// genroc.token_list(): every token, revoked ones too, by creation then id
// (never the text or its hash).
std::vector<std::string> token_list(Port &port);

// genroc.token_revoke(p_id): revoked now; a revoked token keeps its first
// time; 42704 for an unknown id.
void token_revoke(Port &port, const std::optional<std::string> &id);

// genroc._token_id: the id of a token text, nullopt when the text is not
// grt_<id>_<secret>.
std::optional<std::string> token_id(const std::string &text);

}  // namespace genroc::engine
