// objects.hpp — reading a stored large value by its reference
// (extension/sql/15_objects.sql declares genroc.get_object and keeps the
// values), once for both stores.
#pragma once

#include <optional>
#include <string>

#include "port.hpp"

namespace genroc::engine {

// genroc.get_object(p_ref): the stored value as JSON text.  p_ref is 64
// lowercase hex digits (22023 else; 22004 for NULL).  The caller sees it
// when an instance it may read (its own, or any for an operator) uses it
// in a column or its log; an object no instance uses any more only an
// operator sees (SQLite: the file's owner sees every one).  One the caller
// may not read is RC011 with the same message as none: a reference is a
// hash of the value, so another answer would tell whoever guesses a value
// that some instance holds it.
std::string get_object(Port &port, const std::optional<std::string> &ref);

}  // namespace genroc::engine
