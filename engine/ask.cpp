// ask.cpp — the interpreter's ask (engine/ask.hpp), once for both stores:
// the row and its definition read (ASK_ROW), the definition found in the
// process's one compiled-definition cache (core/definition_cache.hpp,
// keyed by its hash; compiled from ASK_DEFINITION's text on a miss), the
// context object built from the execution's row (ASK_EXECUTION), and the
// interpreter run in-process.
#include "ask.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <new>
#include <utility>

#include "definition_cache.hpp"
#include "digest.hpp"
#include "engine.hpp"
#include "errors.hpp"
#include "values.hpp"

namespace genroc::engine {

namespace {

// ASK_ROW's columns
enum { DEF_ID, DEF_HASH, DEF_TEXT, DEF_NAME, DEF_VERSION, STATE, PARENT_ID, PARTITION_KEY, SCOPE, VARIABLES, TOKEN };
// ASK_EXECUTION's columns
enum { EXEC_SCOPE, EXEC_PARENT_ID, EXEC_NAME, EXEC_CREATED_MS, EXEC_INPUT };

// Runs the interpreter: on PostgreSQL its failures as the module's C
// bridge (extension/genroc.c) raised them.
template <typename F>
auto interpreter(Port &port, F body) -> decltype(body()) {
	if (port.dialect() != Dialect::postgres) return body();
	try {
		return body();
	} catch (const std::bad_alloc &) {
		raise(Msg::ASK_OUT_OF_MEMORY);
	} catch (const Error &e) {
		if (e.sqlstate == "57014")
			raise(Msg::ASK_CANCELED, {}, "The ASL interpreter stopped for a pending interrupt.");
		throw;
	}
}

// The cache key of a definition's canonical text: its sha256 (the hash
// genroc.define keeps it under).  The last one asked is remembered: a
// store that reads the text (SQLite) asks for the same few again and again.
std::string hash_of(const std::string &text) {
	thread_local std::string last_text, last_hash;
	if (!last_hash.empty() && text == last_text) return last_hash;
	auto h = digest_hex(EVP_sha256(), text);
	if (!h) throw Error("XX000", "sha256: the digest failed");
	last_text = text;
	last_hash = *h;
	return last_hash;
}

// 32 hex characters from OpenSSL's CSPRNG: task tokens are bearer secrets.
std::string new_token() {
	unsigned char b[16];
	if (RAND_bytes(b, sizeof b) != 1) raise(Msg::ASK_TOKEN_NO_RANDOMNESS);
	return hex_string(b, sizeof b);
}

// An execution's input as JSON: a stored value's reference loaded
// (genroc._load_value).
json loaded_input(Port &port, const std::string &text) { return parse_json(load_value(port, text), "the input"); }

Row execution_row(Port &port, int64_t id, bool with_input) {
	Rows rows = port.query(Stmt::ASK_EXECUTION, {id, with_input});
	if (rows.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(id)});
	return std::move(rows[0]);
}

// The context object $$ (ask.hpp says what it holds).
json context(Port &port, int64_t id, const Row &r, const asl::Definition &def, const std::string &token) {
	std::optional<std::string> scope = r.otext(SCOPE);
	std::optional<int64_t> parent = r.oi64(PARENT_ID);
	int64_t exec = id;
	std::optional<Row> e;
	bool with_input = true;
	if (scope && parent) {
		// each ancestor's name and start: the last one read is the execution's
		while (scope && parent) {
			exec = *parent;
			e = execution_row(port, exec, false);
			scope = e->otext(EXEC_SCOPE);
			parent = e->oi64(EXEC_PARENT_ID);
		}
		with_input = asl::reads_execution_input(def);
	} else {
		e = execution_row(port, id, true);
	}
	const std::string exec_id = std::to_string(exec);
	json execution = {{"Id", exec_id},
					  {"Name", e->otext(EXEC_NAME).value_or(exec_id)},
					  {"StartTime", asl::format_time(e->i64(EXEC_CREATED_MS))}};
	if (with_input) {
		if (e->is_null(EXEC_INPUT)) e = execution_row(port, exec, true);
		if (!e->is_null(EXEC_INPUT)) execution["Input"] = loaded_input(port, e->text(EXEC_INPUT));
	}
	const std::string name = r.text(DEF_NAME);
	return {{"Execution", std::move(execution)},
			{"StateMachine", {{"Id", name + ":" + r.text(DEF_VERSION)}, {"Name", name}}},
			{"Task", {{"Token", token}}}};
}

}  // namespace

asl::DefinitionPtr compiled_definition(Port &port, const std::string &key, int64_t definition_id,
									   const std::string *text) {
	if (auto def = asl::cached(key)) return def;
	std::string read;
	if (!text) {
		Rows rows = port.query(Stmt::ASK_DEFINITION, {definition_id});
		if (rows.empty()) throw Error("XX000", "definition " + std::to_string(definition_id) + " is missing");
		read = rows[0].text(0);
		text = &read;
	}
	asl::DefinitionPtr def = interpreter(port, [&] {
		json parsed = json::parse(*text, nullptr, false);
		if (parsed.is_discarded()) raise(Msg::ASK_DEFINITION_NOT_JSON);
		return asl::compile(parsed);
	});
	asl::cache(key, def);
	return def;
}

Asked ask(Port &port, int64_t id, const json &request, int64_t now_ms) {
	Rows rows = port.query(Stmt::ASK_ROW, {id});
	if (rows.empty()) raise(Msg::STEP_INSTANCE_MISSING, {std::to_string(id)});
	const Row &r = rows[0];
	const std::optional<std::string> text = r.otext(DEF_TEXT);
	const std::string key = r.is_null(DEF_HASH) ? hash_of(*text) : r.text(DEF_HASH);
	const asl::DefinitionPtr def = compiled_definition(port, key, r.i64(DEF_ID), text ? &*text : nullptr);

	Asked a;
	a.state = r.otext(STATE);
	a.has_parent = !r.is_null(PARENT_ID);
	a.partitioned = !r.is_null(PARTITION_KEY);
	a.token = r.is_null(TOKEN) ? new_token() : r.text(TOKEN);
	const std::optional<std::string> scope = r.otext(SCOPE);

	// a start that stops at a first Task taking its input as it is: its
	// answer without a step (asl::start_answer)
	auto op = request.find("op");
	if (!scope && op != request.end() && op->is_string() && op->get_ref<const std::string &>() == "start") {
		auto in = request.find("input");
		const json empty = json::object();
		auto quick = interpreter(port, [&] { return asl::start_answer(*def, in != request.end() ? *in : empty); });
		if (quick) {
			a.answer = std::move(*quick);
			return a;
		}
	}
	json req = request;
	req["now_ms"] = now_ms;
	// a definition that cannot read $$ is asked without it (asl::reads_context)
	if (asl::reads_context(*def)) req["context"] = context(port, id, r, *def, a.token);
	if (scope) req["scope"] = *scope;
	if (!r.is_null(VARIABLES)) {
		json v = parse_json(r.text(VARIABLES), "the variables");
		if (!v.is_null()) req["variables"] = std::move(v);
	}
	a.answer = interpreter(port, [&] { return asl::step(*def, req); });
	return a;
}

}  // namespace genroc::engine
