// asl_c.cpp — the C ABI over the interpreter (asl_c.h), for the PostgreSQL
// module.
//
// Nothing may cross into the backend as a C++ exception: every entry point
// catches everything (std::bad_alloc included) and reports it in the
// result.  Compiled definitions are kept per process, keyed by the caller's
// content hash, so a busy backend parses each definition once; the cache is
// bounded (least recently used goes first) because a backend lives long and
// may see many versions.

#include "asl_c.h"

#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "asl.hpp"
#include "definition_cache.hpp"
#include "limits.hpp"

namespace {

using genroc::json;
using genroc::asl::DefinitionPtr;

constexpr size_t kCacheEntries = 256;

class DefinitionCache {
  public:
	DefinitionPtr get(const std::string &key) {
		std::lock_guard<std::mutex> lock(mu_);
		auto it = index_.find(key);
		if (it == index_.end())
			return nullptr;
		order_.splice(order_.begin(), order_, it->second);	// now the most recent
		return it->second->second;
	}
	void put(const std::string &key, DefinitionPtr def) {
		std::lock_guard<std::mutex> lock(mu_);
		auto it = index_.find(key);
		if (it != index_.end()) {
			it->second->second = std::move(def);
			order_.splice(order_.begin(), order_, it->second);
			return;
		}
		order_.emplace_front(key, std::move(def));
		index_[key] = order_.begin();
		while (order_.size() > kCacheEntries) {
			index_.erase(order_.back().first);
			order_.pop_back();
		}
	}

  private:
	std::mutex mu_;
	std::list<std::pair<std::string, DefinitionPtr>> order_;
	std::unordered_map<std::string, std::list<std::pair<std::string, DefinitionPtr>>::iterator>
		index_;
};

// Built on first use, inside a try block, so a failing construction is
// reported like any other error (no global object that can throw).
DefinitionCache &cache() {
	static DefinitionCache c;
	return c;
}

char *dup(const std::string &s) {
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

GenrocAslResult ok(char *json_text) {
	GenrocAslResult r;
	std::memset(&r, 0, sizeof r);
	r.ok = 1;
	r.json = json_text;
	return r;
}

// Never throws: on allocation failure the message is simply NULL.
GenrocAslResult error(const char *sqlstate, const char *message, const char *detail) noexcept {
	GenrocAslResult r;
	std::memset(&r, 0, sizeof r);
	r.ok = 0;
	std::strncpy(r.sqlstate, sqlstate, 5);
	r.sqlstate[5] = '\0';
	if (message) {
		r.message = static_cast<char *>(std::malloc(std::strlen(message) + 1));
		if (r.message)
			std::strcpy(r.message, message);
	}
	if (detail && *detail) {
		r.detail = static_cast<char *>(std::malloc(std::strlen(detail) + 1));
		if (r.detail)
			std::strcpy(r.detail, detail);
	}
	return r;
}

// Runs `body`, turning every exception into an error result.
template <typename F>
GenrocAslResult guarded(F body) noexcept {
	try {
		return body();
	} catch (const genroc::Error &e) {
		return error(e.sqlstate.c_str(), e.what(), e.detail.c_str());
	} catch (const std::bad_alloc &) {
		return error("53200", "out of memory in the ASL interpreter", nullptr);
	} catch (const std::exception &e) {
		return error("XX000", e.what(), nullptr);
	} catch (...) {
		return error("XX000", "unknown exception in the ASL interpreter", nullptr);
	}
}

json parse_or_throw(const char *text, const char *sqlstate, const char *what) {
	json j = json::parse(text, nullptr, false);
	if (j.is_discarded())
		throw genroc::Error(sqlstate, std::string(what) + " is not valid JSON");
	return j;
}

// The definition cached under cache_key, else compiled from its text (and
// cached); 55000 when neither is there (the caller calls again with the text).
DefinitionPtr cached_or_compiled(const char *cache_key, const char *definition_json) {
	DefinitionPtr def;
	if (cache_key)
		def = cache().get(cache_key);
	if (def)
		return def;
	if (!definition_json && !cache_key)
		throw genroc::Error(genroc::sqlstate::NULL_VALUE_NOT_ALLOWED,
							"a step needs the definition's cache key or its text");
	if (!definition_json)
		throw genroc::Error("55000", "definition \"" + std::string(cache_key) +
										 "\" is not in this process's cache; call again "
										 "with its text");
	def = genroc::asl::compile(
		parse_or_throw(definition_json, genroc::sqlstate::INVALID_DEFINITION, "the definition"));
	if (cache_key)
		cache().put(cache_key, def);
	return def;
}

}  // namespace

// definition_cache.hpp: the same cache for C++ callers (the engine's ask).
genroc::asl::DefinitionPtr genroc::asl::cached(const std::string &key) { return ::cache().get(key); }
void genroc::asl::cache(const std::string &key, DefinitionPtr def) { ::cache().put(key, std::move(def)); }

extern "C" GenrocAslResult genroc_asl_validate(const char *definition_json, const char *cache_key) {
	return guarded([&]() {
		if (!definition_json)
			throw genroc::Error(genroc::sqlstate::NULL_VALUE_NOT_ALLOWED, "the definition is NULL");
		json def = parse_or_throw(definition_json, genroc::sqlstate::INVALID_DEFINITION,
								  "the definition");
		DefinitionPtr compiled = genroc::asl::compile(def);
		if (cache_key)
			cache().put(cache_key, std::move(compiled));
		return ok(nullptr);
	});
}

extern "C" GenrocAslResult genroc_asl_step(const char *cache_key, const char *definition_json,
										   const char *request_json) {
	return guarded([&]() {
		if (!request_json)
			throw genroc::Error(genroc::sqlstate::NULL_VALUE_NOT_ALLOWED, "the step request is NULL");
		DefinitionPtr def = cached_or_compiled(cache_key, definition_json);
		json request = parse_or_throw(request_json, genroc::sqlstate::INVALID_PARAMETER_VALUE,
									  "the step request");
		json answer = genroc::asl::step(*def, request);
		// replace: a string built from bytes (e.g. by an intrinsic) must not
		// make serialization throw; it has been checked already, this is a
		// second line of defence.
		char *text = dup(answer.dump(-1, ' ', false, json::error_handler_t::replace));
		if (!text)
			throw std::bad_alloc();
		return ok(text);
	});
}

extern "C" GenrocAslResult genroc_asl_start_task(const char *cache_key, const char *definition_json) {
	return guarded([&]() {
		DefinitionPtr def = cached_or_compiled(cache_key, definition_json);
		const auto &task = genroc::asl::start_task(*def);
		if (!task)
			return ok(nullptr);
		char *text = dup(task->dump(-1, ' ', false, json::error_handler_t::replace));
		if (!text)
			throw std::bad_alloc();
		return ok(text);
	});
}

extern "C" int genroc_asl_reads_context(const char *cache_key) {
	try {
		DefinitionPtr def = cache_key ? cache().get(cache_key) : nullptr;
		if (!def)
			return -1;
		return genroc::asl::reads_context(*def) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

extern "C" int genroc_asl_success_ends(const char *cache_key, const char *state) {
	try {
		DefinitionPtr def = cache_key && state ? cache().get(cache_key) : nullptr;
		if (!def)
			return -1;
		return genroc::asl::success_ends(*def, state) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

extern "C" GenrocAslResult genroc_asl_check_depth(const char *json_text, const char *what) {
	return guarded([&]() {
		if (!json_text || !what)
			throw genroc::Error(genroc::sqlstate::NULL_VALUE_NOT_ALLOWED, "the value is NULL");
		genroc::limits::check_json_depth(
			parse_or_throw(json_text, genroc::sqlstate::INVALID_PARAMETER_VALUE, what), what);
		return ok(nullptr);
	});
}

extern "C" void genroc_asl_set_stack_check(int (*too_deep)(void)) {
	genroc::limits::set_stack_check(too_deep);
}

extern "C" void genroc_asl_set_interrupt_check(int (*pending)(void)) {
	genroc::limits::set_interrupt_check(pending);
}

extern "C" void genroc_asl_free(GenrocAslResult *result) {
	if (!result)
		return;
	std::free(result->json);
	std::free(result->message);
	std::free(result->detail);
	result->json = nullptr;
	result->message = nullptr;
	result->detail = nullptr;
}
