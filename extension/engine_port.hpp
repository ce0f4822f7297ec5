// engine_port.hpp — the port over SPI (PgPort) and the helpers every file of
// the engine's C calls (engine_calls.h) shares: the never-throwing frame
// (guarded), the malloc'd copies handed to C (dup, dup_or_null) and the
// arguments as the engine takes them (arg).  engine_port.cpp holds the
// calls of the first areas; an area may keep its calls in a file of its own
// (extension/<area>_calls.cpp) that includes this header.
//
// Each PostgreSQL call goes through engine_spi.c, which catches PostgreSQL's
// error inside PG_TRY and returns it; here it becomes a genroc::Error with
// the same SQLSTATE, message, detail and hint.  guarded() catches every
// exception and hands it back as a GenrocEngineError, so neither a longjmp
// nor a C++ exception crosses between the two languages.
#pragma once

#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "engine_calls.h"
#include "engine_spi.h"
#include "errors.hpp"
#include "admin.hpp"
#include "port.hpp"
#include "report.hpp"

namespace genroc::engine {

// Statement s's settings in PostgreSQL: its GENROC_PG_SETTINGS row of
// statements.def (GENROC_PG_GENERIC_PLAN, GENROC_PG_KEEP_VALUES), 0 without.
constexpr int pg_settings(Stmt s) {
	constexpr int GENERIC_PLAN = GENROC_PG_GENERIC_PLAN, KEEP_VALUES = GENROC_PG_KEEP_VALUES;
#define GENROC_STMT(id, pg, lite)
#define GENROC_PG_SETTINGS(id, settings) \
	if (s == Stmt::id) return settings;
#include "statements.def"
#undef GENROC_PG_SETTINGS
#undef GENROC_STMT
	return 0;
}

[[noreturn]] inline void rethrow(const GenrocPgError &e) {
	throw Error(e.sqlstate, e.message ? e.message : "PostgreSQL failed", e.detail ? e.detail : "",
				e.hint ? e.hint : "");
}

class PgPort final : public Port {
  public:
	// read_only: the entry point is STABLE (SPI's read_only)
	explicit PgPort(bool read_only) : read_only_(read_only) {}
	Dialect dialect() const override { return Dialect::postgres; }

	Rows query(Stmt s, Params params) override { return run(s, params, true).second; }
	int64_t exec(Stmt s, Params params) override {
		if (!statement_text(s).postgres) return 0;
		return run(s, params, false).first;
	}

	int64_t now_ms() override {
		int64_t ms = 0;
		GenrocPgError e{};
		if (!genroc_pg_now_ms(&ms, &e)) rethrow(e);
		return ms;
	}

	std::optional<int64_t> caller_role() override {
		int64_t oid = 0;
		GenrocPgError e{};
		if (!genroc_pg_caller(&oid, &e)) rethrow(e);
		return oid;
	}

	std::string native_json_text(const void *native) override {
		char *out = nullptr;
		GenrocPgError e{};
		if (!genroc_pg_jsonb_text(native, &out, &e)) rethrow(e);
		return out;	 // palloc'd: freed with the SPI call's memory
	}

	std::string canonical_json(const std::string &text) override {
		char *out = nullptr;
		GenrocPgError e{};
		if (!genroc_pg_canonical_json(text.c_str(), &out, &e)) rethrow(e);
		return out;	 // palloc'd: freed with the SPI call's memory
	}

  protected:
	void savepoint_begin() override {
		GenrocPgError e{};
		if (!genroc_pg_savepoint_begin(&e)) rethrow(e);
	}
	void savepoint_release() override {
		GenrocPgError e{};
		if (!genroc_pg_savepoint_release(&e)) rethrow(e);
	}
	void savepoint_rollback() noexcept override {
		GenrocPgError e{};
		// a failed rollback leaves the transaction aborted: the entry point's
		// error ends it
		(void)genroc_pg_savepoint_rollback(&e);
	}

  private:
	std::pair<int64_t, Rows> run(Stmt s, Params params, bool want_rows) {
		const StatementText &t = statement_text(s);
		if (!t.postgres) throw Error("XX000", std::string("engine: statement ") + t.id + " has no PostgreSQL text");
		std::vector<GenrocPgParam> ps;
		ps.reserve(params.size());
		std::vector<std::vector<const char *>> texts;  // an array's elements as C strings
		for (const Param &p : params) {
			GenrocPgParam g{};
			g.kind = static_cast<int>(p.kind());
			g.is_null = p.is_null();
			g.i = p.i64();
			g.d = p.f64();
			g.text = p.text().c_str();
			g.len = p.text().size();
			if (p.is_array() && !p.is_null()) {
				if (p.ints()) {
					g.n = static_cast<int>(p.ints()->size());
					g.ints = p.ints()->data();
				}
				if (p.natives()) {
					g.n = static_cast<int>(p.natives()->size());
					g.natives = p.natives()->data();
				}
				if (p.texts()) {
					g.n = static_cast<int>(p.texts()->size());
					std::vector<const char *> &c = texts.emplace_back();
					c.reserve(p.texts()->size());
					for (const std::string &t : *p.texts()) c.push_back(t.c_str());
					g.texts = c.data();
				}
				if (p.texts() && p.natives() && p.natives()->size() != p.texts()->size())
					throw Error("XX000", std::string("engine: statement ") + t.id + ": an array's natives and texts differ in length");
			}
			ps.push_back(g);
		}
		GenrocPgRows rows{};
		GenrocPgError e{};
		if (!genroc_pg_run(static_cast<int>(s), statement_count(), t.postgres, pg_settings(s), static_cast<int>(ps.size()),
						   ps.data(), read_only_, want_rows, &rows, &e))
			rethrow(e);
		Rows out;
		try {
			out.reserve(rows.nrows);
			for (int r = 0; r < rows.nrows; r++) {
				std::vector<Row::Cell> cells(rows.ncols);
				for (int k = 0; k < rows.ncols; k++) {
					const GenrocPgCell &c = rows.cells[r * rows.ncols + k];
					if (c.kind == GENROC_PG_CELL_INT) cells[k] = Row::Cell::integer(c.i);
					if (c.kind == GENROC_PG_CELL_BOOL) cells[k] = Row::Cell::boolean(c.i != 0);
					if (c.kind == GENROC_PG_CELL_TEXT) cells[k] = Row::Cell::text(std::string(c.text, c.len));
					cells[k].native = c.native;
				}
				out.emplace_back(std::move(cells));
			}
		} catch (...) {
			genroc_pg_rows_free(&rows);
			throw;
		}
		genroc_pg_rows_free(&rows);
		return {rows.processed, std::move(out)};
	}

	bool read_only_;
};

static_assert(static_cast<int>(Param::Kind::i64) == GENROC_PG_INT8);
static_assert(static_cast<int>(Param::Kind::f64) == GENROC_PG_FLOAT8);
static_assert(static_cast<int>(Param::Kind::text) == GENROC_PG_TEXT);
static_assert(static_cast<int>(Param::Kind::boolean) == GENROC_PG_BOOL);
static_assert(static_cast<int>(Param::Kind::json) == GENROC_PG_JSONB);
static_assert(static_cast<int>(Param::Kind::i64_array) == GENROC_PG_INT8_ARRAY);
static_assert(static_cast<int>(Param::Kind::text_array) == GENROC_PG_TEXT_ARRAY);
static_assert(static_cast<int>(Param::Kind::json_array) == GENROC_PG_JSONB_ARRAY);
static_assert(static_cast<int>(Param::Kind::tid_array) == GENROC_PG_TID_ARRAY);

inline char *dup(const std::string &s) {
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (!p) throw std::bad_alloc();
	std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}


inline void fail(GenrocEngineError *err, const char *sqlstate, const char *message, const std::string &detail = {},
		  const std::string &hint = {}) noexcept {
	std::memset(err, 0, sizeof *err);
	std::strncpy(err->sqlstate, sqlstate, 5);
	err->sqlstate[5] = '\0';
	err->message = strdup(message);
	if (!detail.empty()) err->detail = strdup(detail.c_str());
	if (!hint.empty()) err->hint = strdup(hint.c_str());
}

// Runs body; every exception becomes *err (and 0).
template <typename F>
inline int guarded(GenrocEngineError *err, F body) noexcept {
	try {
		body();
		return 1;
	} catch (const Error &e) {
		fail(err, e.sqlstate.size() == 5 ? e.sqlstate.c_str() : "XX000", e.what(), e.detail, e.hint);
	} catch (const std::bad_alloc &) {
		fail(err, "53200", "out of memory in the genroc engine");
	} catch (const std::exception &e) {
		fail(err, "XX000", e.what());
	} catch (...) {
		fail(err, "XX000", "unknown exception in the genroc engine");
	}
	return 0;
}

inline std::optional<std::string> arg(const char *s) { return s ? std::optional<std::string>(s) : std::nullopt; }

inline char *dup_or_null(const std::optional<std::string> &s) { return s ? dup(*s) : nullptr; }

// A queues argument: nullopt for SQL NULL (has 0), its NULL elements left out.
inline std::optional<std::vector<std::string>> opt_queues(int has, const char *const *queues, int n) {
	if (!has) return std::nullopt;
	std::vector<std::string> out;
	out.reserve(n);
	for (int i = 0; i < n; i++)
		if (queues[i]) out.emplace_back(queues[i]);
	return out;
}

// A task handed to a worker (a claim's, a report's hand-back) as C takes it;
// free_task frees its strings.
inline void fill_task(const HandedBack &t, GenrocClaimTask *out) {
	out->instance_id = t.instance_id;
	out->epoch = t.epoch;
	out->state = dup_or_null(t.state);
	out->resource = dup_or_null(t.resource);
	out->input = dup(t.input);
	out->input_native = t.input_native;
	out->only_once = t.only_once;
	out->has_timeout_s = t.timeout_s.has_value();
	out->timeout_s = t.timeout_s.value_or(0);
	out->attempt = t.attempt;
	out->lease_expires_us = t.lease_expires_us;
	out->queue = dup(t.queue);
}
// A queue's own settings as C takes them; free_settings frees its strings.
inline void fill_settings(const QueueSettings &s, GenrocQueueSettings *out) {
	out->kind = dup_or_null(s.kind);
	out->handler = dup_or_null(s.handler);
	out->match = dup_or_null(s.match);
	out->global_concurrency = s.global;
	out->partition_concurrency = s.partition;
	out->has_rate = s.rate.has_value();
	out->rate_limit = s.rate.value_or(0);
	out->rate_period_ms = s.period_ms.value_or(0);
	out->has_partition_rate = s.partition_rate.has_value();
	out->partition_rate_limit = s.partition_rate.value_or(0);
	out->partition_rate_period_ms = s.partition_period_ms.value_or(0);
}
inline void free_settings(GenrocQueueSettings *s) {
	std::free(s->kind);
	std::free(s->handler);
	std::free(s->match);
}
inline void free_task(GenrocClaimTask *t) {
	std::free(t->state);
	std::free(t->resource);
	std::free(t->input);
	std::free(t->queue);
}

}  // namespace genroc::engine
