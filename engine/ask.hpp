// ask.hpp — the interpreter's ask, once for both stores: what the next step
// of a locked instance answers.  The engine reads the instance, its
// definition and its execution (statements_ask.def), builds the step
// request with its context object ($$), and runs the interpreter (core/,
// genroc::asl) in-process on the definition compiled once per process (the
// one cache of core/definition_cache.hpp, keyed by the definition's hash).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// What ask answers: the interpreter's answer, and the row's columns the
// step writer goes on with.
struct Asked {
	json answer;
	std::optional<std::string> state;  // the row's state before the step
	bool has_parent = false;
	bool partitioned = false;
	std::string token;	// the step's fresh task token ($$.Task.Token)
};

// The step of instance `id` for `request` (the op and its fields) at now_ms.
// Semantics:
//   the request gets now_ms, the context object (only for a definition
//   that can read it: asl::reads_context), the row's scope and variables
//   (not null); a key of the request they repeat is overridden
//   $$.Execution       Id (the id as a string), Name (the start option
//                      "name", else the id), StartTime (created_at,
//                      ISO-8601 UTC with milliseconds), Input (the input,
//                      a stored value loaded); a Parallel branch or a Map
//                      item (scope and parent set) names its nearest
//                      ancestor without a scope, and that execution's
//                      Input only for a definition that may read it
//                      (asl::reads_execution_input)
//   $$.StateMachine    Id "<definition name>:<version>", Name
//   $$.Task.Token      a fresh token (PostgreSQL: gen_random_uuid's text;
//                      SQLite: 32 hex characters from OpenSSL's CSPRNG),
//                      drawn for every step: it becomes the activity token
//                      if the step parks
//   a start ({"op": "start"}) of an instance without a scope whose first
//   state is a Task the input reaches unchanged is answered without a
//   step (asl::start_answer; its input checked for depth as a step would)
//   missing instance: P0002 "query returned no rows"
Asked ask(Port &port, int64_t id, const json &request, int64_t now_ms);

// The definition compiled under key (its hash) in the process's one cache;
// on a miss compiled from `text`, else from its row (definition_id), and
// kept.
asl::DefinitionPtr compiled_definition(Port &port, const std::string &key, int64_t definition_id,
									   const std::string *text = nullptr);

}  // namespace genroc::engine
