// errors.hpp — the engine's errors by id: the text and SQLSTATE of each in
// messages.def, the one table both stores raise from.
#pragma once

#include <initializer_list>
#include <string>

#include "port.hpp"

namespace genroc::engine {

enum class Msg : int {
#define GENROC_MESSAGE(id, code, text) id,
#include "messages.def"
#undef GENROC_MESSAGE
};

// The SQLSTATE of a message.
const char *sqlstate_of(Msg m);
// Its text with "{}" replaced by args, in order.
std::string message_text(Msg m, std::initializer_list<std::string> args);
// Throws Error with the message's SQLSTATE and text.
[[noreturn]] void raise(Msg m, std::initializer_list<std::string> args = {}, std::string detail = {},
						std::string hint = {});

}  // namespace genroc::engine
