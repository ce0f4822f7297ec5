// definition_cache.hpp — the process's compiled definitions by cache key
// (the sha256 of a definition's canonical text), for C++ callers: the one
// cache core/asl_c.cpp keeps for its C ABI (genroc_asl_validate, _step,
// _start_task, ...), bounded, the least recently used going first.  The
// engine's ask (engine/ask.cpp) reads and fills it, so a definition
// compiled by genroc.define or by the PostgreSQL module's C functions is
// not compiled again for a step, and the other way round.
#pragma once

#include <string>

#include "asl.hpp"

namespace genroc::asl {

// The definition cached under key (now the most recent), else null.
DefinitionPtr cached(const std::string &key);
// Keeps def under key.
void cache(const std::string &key, DefinitionPtr def);

}  // namespace genroc::asl
