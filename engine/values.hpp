// values.hpp — stored values (large-value references, extension/sql/15_objects.sql
// describes them), once for both stores: whether a column holds a reference,
// loading one, and storing a value as an object.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "engine.hpp"
#include "port.hpp"

namespace genroc::engine {

// The key of a reference: {"genroc:object": "<64 hex>"}.
inline constexpr const char *kObjectKey = "genroc:object";

// genroc._is_ref: a JSON value is a reference (an object with the key
// "genroc:object").
bool is_ref(const json &v);
// The same for JSON text, parsed only when it names the key.
bool is_ref_text(const std::string &text);

// genroc._object: the JSON text of the stored object `hash`; XX000 ("stored
// value <hash> is missing") when it is gone.
std::string object_value(Port &port, const std::string &hash);

// genroc._load_value: a column's JSON text as its value — the text itself,
// or (a reference) the text of the object it names.  The one place engine/
// resolves a column that may hold a reference; the statements read the
// column as it is on both stores.
std::string load_value(Port &port, const std::string &text);
std::optional<std::string> load_value(Port &port, const std::optional<std::string> &text);

// An instance's state input and input as values (stored values loaded), as
// JSON text ("null" for none); RC003 when there is no such instance.
std::pair<std::string, std::string> instance_inputs(Port &port, int64_t instance);

// genroc._store_value: what a column keeps of the value `text` (its
// store's canonical JSON text): the text itself, or, when `large` (over
// genroc.object_threshold by the store's measure) or it looks like a
// reference, the reference of its row in the objects (written once per
// text: the same value again clears only collection's mark).  54000 naming
// `field` when the text is longer than the limit value_bytes.
std::string store_value(Port &port, const std::string &text, const std::string &field, bool large);
// The same for a store that measures a value by its JSON text (SQLite)
// against the object threshold: a number, a boolean, null and a short
// string are kept as they are without a look at the text.
json store_value(Port &port, const json &v, const std::string &field, int64_t threshold);

}  // namespace genroc::engine
