// definitions.cpp — genroc.define, list_definitions and get_definition
// (extension/sql/30_definitions.sql declares them), once for both stores.
#include <openssl/evp.h>

#include "asl_c.h"
#include "digest.hpp"
#include "engine.hpp"
#include "errors.hpp"

namespace genroc::engine {

namespace {

// Compiles the definition (RC001 naming the JSON path of the first fault)
// and keeps it in this process's interpreter cache under its hash, so the
// first step of an instance does not compile it again.
void validate(const std::string &canonical, const std::string &hash) {
	GenrocAslResult r = genroc_asl_validate(canonical.c_str(), hash.c_str());
	if (r.ok) {
		genroc_asl_free(&r);
		return;
	}
	std::string sqlstate(r.sqlstate), message(r.message ? r.message : "the ASL interpreter failed"),
		detail(r.detail ? r.detail : "");
	genroc_asl_free(&r);
	throw Error(sqlstate, message, detail);
}

std::string json_string(const std::string &s) {
	return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Defined define(Port &port, const std::optional<std::string> &name, const std::optional<std::string> &definition,
			   bool as_written) {
	port.exec(Stmt::FLUSH_COMMIT, {"progress"});
	port.exec(Stmt::CHECK_DEFINITION, {name, "admin"});
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	if (!definition) raise(Msg::ARG_NULL, {"p_definition"});
	if (name->empty()) raise(Msg::ARG_EMPTY, {"p_name"});
	check_name(*name, "p_name");
	const std::string canonical = port.canonical_json(*definition);
	const auto hash = digest_hex(EVP_sha256(), canonical);
	if (!hash) throw Error("XX000", "sha256: the digest failed");

	// Semantics: versions of one name are numbered 1, 2, ... in the order
	// their content first appeared; the lock keeps two concurrent defines of
	// one name from taking the same number (PostgreSQL: a row lock, as
	// genroc._lock; SQLite: the write transaction).  A version keeps the
	// text first written for its content.
	port.exec(Stmt::LOCK_DEFINE, {*name});
	Rows found = port.query(Stmt::DEFINITION_BY_CONTENT, {*name, *hash, canonical});
	// A define makes a deleted name live again (its versions numbered on),
	// and the version it answers too.
	if (!found.empty()) {
		const int version = static_cast<int>(found[0].i64(0));
		port.exec(Stmt::DELETION_UNDO, {*name, int64_t{version}});
		return {*name, version, false};
	}

	validate(canonical, *hash);
	Rows next = port.query(Stmt::DEFINITION_NEXT_VERSION, {*name});
	const int version = static_cast<int>(next.at(0).i64(0));
	// A writer that did not take the name's lock (a restore, a row written
	// by hand) may have made the same content's row meanwhile: its unique
	// key refuses this one (23505), and its version is the answer.  Any
	// other refusal stands.
	Port::Savepoint insert(port);
	try {
		port.exec(Stmt::DEFINITION_INSERT,
				  {*name, version, JsonText{canonical}, *hash,
				   as_written ? Param(*definition) : Param::null(Param::Kind::text), port.now_ms()});
		insert.release();
	} catch (const Error &e) {
		if (e.sqlstate != "23505") throw;
		insert.rollback();
		Rows again = port.query(Stmt::DEFINITION_BY_CONTENT, {*name, *hash, canonical});
		if (again.empty()) throw;
		port.exec(Stmt::DELETION_UNDO, {*name, again[0].i64(0)});
		return {*name, static_cast<int>(again[0].i64(0)), false};
	}
	port.exec(Stmt::DELETION_UNDO, {*name, int64_t{version}});
	return {*name, version, true};
}

std::vector<DefinitionSummary> list_definitions(Port &port) {
	std::vector<DefinitionSummary> out;
	for (const Row &r : port.query(Stmt::DEFINITIONS_NEWEST, {}))
		out.push_back({r.text(0), static_cast<int>(r.i64(1)), r.i64(2)});
	return out;
}

std::string get_definition(Port &port, const std::optional<std::string> &name, std::optional<int64_t> version) {
	port.exec(Stmt::CHECK_DEFINITION, {name, "operator"});
	if (!name) raise(Msg::ARG_NULL, {"p_name"});
	Rows rows = port.query(Stmt::DEFINITION_VERSION, {*name, version});
	if (rows.empty())
		raise(Msg::DEFINITION_NOT_FOUND, {*name, version ? " version " + std::to_string(*version) : std::string()});
	const Row &r = rows[0];
	// a deleted name or version (genroc.undefine) says when; it stays readable
	Rows deleted = port.query(Stmt::NAME_DELETED_AT, {*name, r.i64(1)});
	// the stored text spliced in as it is: no number or key changes on the way
	return "{\"name\": " + json_string(r.text(0)) + ", \"version\": " + std::to_string(r.i64(1)) +
		   ", \"definition\": " + r.text(2) + ", \"source\": " + (r.is_null(4) ? "null" : json_string(r.text(4))) +
		   ", \"created_at\": " + json_string(iso_us(r.i64(3))) +
		   (deleted.empty() ? std::string() : ", \"deleted_at\": " + json_string(iso_us(deleted[0].i64(0)))) + "}";
}

}  // namespace genroc::engine
