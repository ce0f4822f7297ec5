// objects.cpp — genroc.get_object (engine/objects.hpp), once for both stores.
#include "objects.hpp"

#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

std::string get_object(Port &port, const std::optional<std::string> &ref) {
	if (!ref) raise(Msg::ARG_NULL, {"p_ref"});
	bool hex = ref->size() == 64;
	for (char c : *ref) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
	if (!hex) raise(Msg::OBJECT_REF_MALFORMED);
	const auto none = [&] {
		raise(Msg::OBJECT_NOT_FOUND, {*ref}, {},
			  "An object no instance uses any more is deleted genroc.object_grace (--object-grace) later.");
	};
	// an SQLite file opened read-only before it had the table has none
	if (!port.query(Stmt::OBJECTS_PRESENT, {}).at(0).boolean(0)) none();
	Rows rows = port.query(Stmt::OBJECT_VALUE, {*ref});
	if (rows.empty() || !port.query(Stmt::OBJECT_READABLE, {*ref}).at(0).boolean(0)) none();
	return rows[0].text(0);
}

}  // namespace genroc::engine
