// pg_named.c — the client side of bench/pg_named.sh: PgStore's hot path
// (store/pg_store.cpp: its claim of B, then complete_many of the B, the
// same SQL text) over libpq until no task is left, one way of four:
//   pg_named CONNINFO named|unnamed settings|nsettings|nosettings B
// named: the two statements prepared once; settings: the settings
// statement (set_config(..., true), as PgStore sends it with the CLI's
// defaults) before each, in one pipeline with one Sync; nsettings: that
// statement prepared once too; nosettings: none (session settings).
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISO(col) "to_char((" col ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
static const char *CLAIM =
	"SELECT instance_id, epoch, state, resource, input, only_once, timeout_s, attempt, " ISO("lease_expires")
	", queue FROM genroc.claim($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), $3)";
static const char *MANY =
	"SELECT status, sqlstate, instance_id, epoch, state, resource, input, only_once, timeout_s, "
	"attempt, " ISO("lease_expires") ", queue FROM genroc.complete_many("
	"ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::bigint), "
	"ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint), "
	"ARRAY(SELECT jsonb_array_elements($3::jsonb)), $4, "
	"(SELECT ARRAY(SELECT jsonb_array_elements_text($5::jsonb)) WHERE $5 IS NOT NULL))";
static const char *SETTINGS =
	"SELECT genroc.durability(), set_config($1, $2, true), set_config($3, $4, true), set_config($5, $6, true), "
	"set_config($7, $8, true), set_config($9, $10, true), set_config($11, $12, true), set_config($13, $14, true), "
	"set_config($15, $16, true)";
static const char *SV[] = {"TimeZone", "UTC", "genroc.durability", "essential", "genroc.log_payloads", "on",
	"genroc.log_payload_max", "1048576", "genroc.log_retention", "0ms", "genroc.instance_retention", "0ms",
	"genroc.object_threshold", "8192", "genroc.object_grace", "3600000ms"};
static int named, settings;
static PGconn *c;

static PGresult *run(const char *name, const char *sql, int n, const char *const *v) {
	if (!settings) {
		if (named) return PQexecPrepared(c, name, n, v, NULL, NULL, 0);
		return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
	}
	PQenterPipelineMode(c);
	if (settings == 2) PQsendQueryPrepared(c, "hs", 16, SV, NULL, NULL, 0);
	else PQsendQueryParams(c, SETTINGS, 16, NULL, SV, NULL, NULL, 0);
	if (named) PQsendQueryPrepared(c, name, n, v, NULL, NULL, 0);
	else PQsendQueryParams(c, sql, n, NULL, v, NULL, NULL, 0);
	PQpipelineSync(c);
	PGresult *out = NULL, *r;
	int k = 0;
	for (;;) {
		r = PQgetResult(c);
		if (!r) continue;
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) { PQclear(r); break; }
		if (PQresultStatus(r) != PGRES_TUPLES_OK) { fprintf(stderr, "%s\n", PQresultErrorMessage(r)); exit(1); }
		if (k++ == 1) out = r; else PQclear(r);
	}
	PQexitPipelineMode(c);
	return out;
}

int main(int argc, char **argv) {
	c = PQconnectdb(argv[1]);
	named = strcmp(argv[2], "named") == 0;
	settings = strcmp(argv[3], "settings") == 0 ? 1 : strcmp(argv[3], "nsettings") == 0 ? 2 : 0;
	if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "%s", PQerrorMessage(c)); return 1; }
	PQclear(PQexec(c, "SELECT genroc.durability()"));
	if (settings == 2) PQclear(PQprepare(c, "hs", SETTINGS, 16, NULL));
	if (named) {
		PQclear(PQprepare(c, "h1", CLAIM, 3, NULL));
		PQclear(PQprepare(c, "h2", MANY, 5, NULL));
	}
	long tasks = 0;
	static char ids[65536], eps[65536], outs[65536];
	for (;;) {
		const char *cv[] = {"w1", "[\"default\"]", argv[4]};
		PGresult *r = run("h1", CLAIM, 3, cv);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) { fprintf(stderr, "%s\n", PQresultErrorMessage(r)); return 1; }
		int n = PQntuples(r);
		if (!n) { PQclear(r); break; }
		char *pi = ids, *pe = eps, *po = outs;
		pi += sprintf(pi, "["); pe += sprintf(pe, "["); po += sprintf(po, "[");
		for (int i = 0; i < n; i++) {
			pi += sprintf(pi, "%s%s", i ? "," : "", PQgetvalue(r, i, 0));
			pe += sprintf(pe, "%s%s", i ? "," : "", PQgetvalue(r, i, 1));
			po += sprintf(po, "%s{}", i ? "," : "");
		}
		sprintf(pi, "]"); sprintf(pe, "]"); sprintf(po, "]");
		PQclear(r);
		const char *mv[] = {ids, eps, outs, NULL, NULL};
		r = run("h2", MANY, 5, mv);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) { fprintf(stderr, "%s\n", PQresultErrorMessage(r)); return 1; }
		tasks += PQntuples(r);
		PQclear(r);
	}
	printf("%ld tasks\n", tasks);
	PQfinish(c);
	return 0;
}
