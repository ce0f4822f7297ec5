// aliases.hpp — a definition's aliases (a name pointing at one or two of its
// versions with weights), the deletion of a definition or one version, and
// the version a start runs; once for both stores (extension/sql/32_aliases.sql
// declares the SQL functions, extension/aliases.c is their entry points).
//
// Glossary
//   routing   [{"version": n, "weight": w}, ...]: one or two versions of the
//             name, weights 0..100 summing to 100
//   deletion  a row of genroc._deletions (SQLite: deletions): version 0 for
//             the whole name (no start, not listed, its aliases gone; a later
//             define makes it live again, its versions numbered on), another
//             for one version (no start by it, not among the versions listed)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port.hpp"

namespace genroc::engine {

// The most aliases one definition has (AWS's quota), an alias name's and a
// description's length.
inline constexpr int kMaxAliases = 100;
inline constexpr size_t kMaxAliasName = 80;
inline constexpr size_t kMaxAliasDescription = 256;

// genroc.alias_set(p_name, p_alias, p_routing, p_description): makes the
// alias or replaces its routing and description; answers it as
// get_alias does.  22023 naming the field, RC002 for a version that does
// not exist, RC017 for a deleted name or version, 54000 past kMaxAliases.
std::string alias_set(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias,
					  const std::optional<std::string> &routing, const std::optional<std::string> &description);

// genroc.alias_drop(p_name, p_alias); RC016 when there is none.
void alias_drop(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias);

// genroc.get_alias(p_name, p_alias): {name, alias, routing, description,
// created_at, updated_at} as JSON text; RC016 when there is none.
std::string get_alias(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &alias);

// genroc.list_aliases(p_name): a JSON array of get_alias's objects, by alias.
std::string list_aliases(Port &port, const std::optional<std::string> &name);

// genroc.undefine(p_name, p_version): deletes the name (p_version NULL: its
// aliases with it; the instances running go on) or one version (55006 while
// an alias routes to it).  RC002 when there is no such name or version.
void undefine(Port &port, const std::optional<std::string> &name, std::optional<int64_t> version);

// genroc._start_version(p_name, p_version, p_alias): the version a start
// runs: the alias's draw (uniform, by its weights), or p_version, or the
// newest.  RC017 for a deleted name or version, RC016 for no such alias,
// RC002 for no such version, 22023 for both an alias and a version.
int start_version(Port &port, const std::string &name, std::optional<int64_t> version,
				  const std::optional<std::string> &alias);

}  // namespace genroc::engine
