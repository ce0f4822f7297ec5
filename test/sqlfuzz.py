#!/usr/bin/env python3
"""sqlfuzz.py — every genroc function called by an unprivileged login role
with random arguments; nothing may crash a backend, and every error must be
a clean SQLSTATE (issue 11: "Nothing a caller sends may crash PostgreSQL").

    python3 test/sqlfuzz.py            # needs the cluster's environment:
                                       # PGHOST, PGPORT, GENROC_PGDIR (its
                                       # server.log), GENROC_PGDATA (postmaster.pid)
    SQLFUZZ_SECONDS=60 SQLFUZZ_SEED=7 python3 test/sqlfuzz.py
    SQLFUZZ_DEEP=0 python3 test/sqlfuzz.py   # without the intrinsics nested 5,000
                                             # and 20,000 deep (issue 11, item 1)

Each call is one statement of a psql session run as the role genroc_fuzzer
(LOGIN, not superuser; its grants are in GRANTS below, the one place to
change when the privilege model changes).  The functions are read from the
catalog (every one in schema genroc, the private genroc._* ones included:
they must answer 42501), the arguments drawn from values of the declared
type: NULLs, extreme integers, odd strings (empty, control characters,
quotes, long), random JSON (deep, wide, huge numbers, odd strings), ASL
definitions from examples/ and mutations of them, option bags with the
known keys and random values, now and then a value of the wrong type.
Names, ids and tokens the earlier calls made are used again, so that calls
reach past the first checks.

Checks, printed as TAP lines (test/run-all.sh counts them):
  - no backend was terminated by a signal (the server log), the postmaster
    is the same process (postmaster.pid) and still answers
  - every error is clean: a genroc SQLSTATE (RC...), one genroc raises on
    purpose (22023, 22004, or any code at a RAISE), a limit (54000, 54001,
    statement_timeout 57014), a privilege refusal (42501), or an error of
    the call's own argument syntax (no genroc function on the stack).
    Anything else raised inside genroc (XX000, 22P02 from a cast, 22003 from
    arithmetic, 42703, ...) is a defect: the statement is printed.
  - enough calls were made
Exits non-zero when a check fails.
"""

import json
import os
import random
import re
import subprocess
import sys
import time

ROLE = "genroc_fuzzer"
DB = "genroc_sqlfuzz"
# The fuzzing role's privileges: the only grants of this test.  Every
# capability but administer (docs/security.md "Roles and ownership"), so that calls get
# past the privilege checks and the ownership checks still apply.
GRANTS = f"""
GRANT CONNECT ON DATABASE {DB} TO {ROLE};
GRANT genroc_user, genroc_operator, genroc_worker TO {ROLE};
"""

SECONDS = float(os.environ.get("SQLFUZZ_SECONDS", "60"))
SEED = int(os.environ.get("SQLFUZZ_SEED", str(int(time.time()))))
BATCH = 150
MIN_CALLS = int(os.environ.get("SQLFUZZ_MIN_CALLS", "500"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

rng = random.Random(SEED)

# ---- values -----------------------------------------------------------------

NAMES = ["job", "w1", "w2", "default", "t1", "eu", "h", "p", "go", "x"]
ODD_TEXT = ["", " ", "\t", "a\nb", "\x01", "\x7f", "\u0085", "'", "''", '"', "\\", "%", "_", "*", "?",
            "é", "日本", "\U0001F600", "a.b", ".", "default.eu", "grt_", "grt_abcdefgh_" + "A" * 40,
            "States.ALL", "handler:h", "activity:x", "$", "$.x", "NaN", "-0", "1e999999", "null",
            "infinity", "-infinity", "0001-01-01", "0044-03-15 BC", "294276-01-01", "2030-01-01T00:00:00Z"]
OPTION_KEYS = ["version", "priority", "run_at", "labels", "idempotency_key", "partition_key", "name",
               "host", "lease_duration", "stale_after", "queues", "concurrency", "kind", "handler", "match",
               "global_concurrency", "partition_concurrency", "rate_limit", "partition_rate_limit",
               "status", "definition", "label", "limit", "root", "count", "period", "tenant", "region",
               "definitions", "tenants"]
INTS = [0, 1, -1, 2, 3, 10, 2147483647, -2147483648, 2147483648, 9223372036854775807,
        -9223372036854775808, 1 << 53]
made = {"instances": [1, 2, 3], "tokens": [], "token_ids": [], "activity_tokens": [], "epochs": [0, 1, 2]}


def examples():
    out = []
    for f in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if f.endswith(".json") and f != "handlers.json":
            try:
                out.append(json.load(open(os.path.join(ROOT, "examples", f))))
            except ValueError:
                pass
    out += [
        {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "handler:h", "End": True}}},
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}},
        {"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "activity:x", "End": True}}},
        {"StartAt": "E", "States": {"E": {"Type": "Task", "Resource": "genroc:event",
                                          "Parameters": {"Name": "go"}, "End": True}}},
        {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 5, "Next": "T"},
                                    "T": {"Type": "Task", "Resource": "handler:h", "End": True}}},
        {"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
                                          "Iterator": {"StartAt": "T", "States": {"T": {
                                              "Type": "Task", "Resource": "handler:h", "End": True}}},
                                          "End": True}}},
        {"StartAt": "C", "States": {"C": {"Type": "Task", "Resource": "genroc:call",
                                          "Parameters": {"Definition": "job"}, "End": True}}},
    ]
    return out


EXAMPLES = examples()


def rand_text(max_len=40):
    r = rng.random()
    if r < 0.35:
        return rng.choice(NAMES)
    if r < 0.6:
        return rng.choice(ODD_TEXT)
    if r < 0.65:
        return rng.choice("ab\x02") * rng.choice([199, 200, 201, 1000, 100000])
    n = rng.randint(0, max_len)
    return "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(1, 31), rng.randint(0xA0, 0x2FF),
                                   rng.randint(0x4E00, 0x4E20)])) for _ in range(n))


def huge_number():
    return rng.choice(["1e999999", "-1e999999", "1e308", "1e-400", "9" * 5000, "-" + "9" * 200,
                       "0." + "0" * 3000 + "1", "123456789012345678901234567890", "-0", "1E+2147483648"])


def rand_json(depth=0, budget=None):
    """A random JSON value as text (so huge numbers stay as written)."""
    r = rng.random()
    if depth > 4 or r < 0.3:
        k = rng.random()
        if k < 0.15:
            return huge_number()
        if k < 0.35:
            return str(rng.choice(INTS))
        if k < 0.45:
            return rng.choice(["true", "false", "null", "1.5", "0"])
        s = rand_text()
        if rng.random() < 0.05:
            return '"\\u0000"'
        return json.dumps(s)
    if r < 0.5:
        return "[" + ",".join(rand_json(depth + 1) for _ in range(rng.randint(0, 4))) + "]"
    keys = [rng.choice(OPTION_KEYS + NAMES + ["StartAt", "States", "Type", "Next", "End", "Resource"])
            if rng.random() < 0.7 else rand_text(8) for _ in range(rng.randint(0, 5))]
    return "{" + ",".join(json.dumps(k) + ":" + rand_json(depth + 1) for k in keys) + "}"


def deep_json():
    n = rng.choice([100, 1000, 5000, 20000, 100000])
    kind = rng.random()
    if kind < 0.5:
        return "[" * n + "1" + "]" * n
    return '{"a":' * n + "1" + "}" * n


def wide_json():
    n = rng.choice([1000, 20000])
    if rng.random() < 0.5:
        return "[" + ",".join(str(i) for i in range(n)) + "]"
    return "{" + ",".join(f'"k{i}":{i}' for i in range(n)) + "}"


def mutate(value, depth=0):
    """A copy of a JSON value with some parts replaced by random JSON."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if rng.random() < 0.08:
                continue
            out[k] = mutate(v, depth + 1)
        if rng.random() < 0.1:
            out[rng.choice(OPTION_KEYS + ["Retry", "Catch", "Parameters", "ResultPath", "InputPath",
                                          "ItemsPath", "TimeoutSeconds", "HeartbeatSeconds"])] = \
                loads(rand_json(3)) if rng.random() < 0.9 else None
        return out
    if isinstance(value, list):
        return [mutate(v, depth + 1) for v in value if rng.random() > 0.05]
    if rng.random() < 0.15:
        return loads(rand_json(3))
    return value


def loads(text):
    """A random JSON text as a Python value (None for what Python will not take, e.g. 5000 digits)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


DEEP = os.environ.get("SQLFUZZ_DEEP", "1") == "1"


def deep_intrinsic():
    # the depths that crashed a backend before the interpreter's depth
    # limits (issue 11, item 1); SQLFUZZ_DEEP=0 leaves them out
    n = rng.choice([10, 100, 500] + ([5000, 20000] if DEEP else []))
    expr = "States.Array(" * n + "1" + ")" * n
    return {"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"a.$": expr}, "End": True}}}


def definition_json():
    r = rng.random()
    if r < 0.5:
        return json.dumps(rng.choice(EXAMPLES))
    if r < 0.9:
        return json.dumps(mutate(rng.choice(EXAMPLES)))
    return json.dumps(deep_intrinsic())


def options_json():
    keys = rng.sample(OPTION_KEYS, rng.randint(0, 3))
    vals = {
        "run_at": lambda: json.dumps(rng.choice(ODD_TEXT[-7:] + [rand_text()])),
        "labels": lambda: rng.choice(['{"tenant":"t1"}', '{"region":"eu"}', '{"region":""}', '{"a":1}',
                                      json.dumps({rand_text(): rand_text()})]),
        "queues": lambda: rng.choice(['["default"]', '[]', '[""]', '[1]', json.dumps([rand_text()])]),
        "rate_limit": lambda: rng.choice(['{"count":1,"period":"1h"}', '{"count":0,"period":"1s"}',
                                          '{"count":1,"period":"99999999999d"}', rand_json(2)]),
        "partition_rate_limit": lambda: rng.choice(['{"count":2,"period":"1m"}', rand_json(2)]),
        "lease_duration": lambda: rng.choice(['"1s"', '"0s"', '"-1s"', '"99999999999999d"', "1e300",
                                              '"1.5ms"', rand_json(3)]),
        "stale_after": lambda: rng.choice(['"30s"', '"99999999999999d"', "1e300", rand_json(3)]),
        "kind": lambda: json.dumps(rng.choice(["tenant", "handler", "routed", "default", "x"])),
        "match": lambda: rng.choice(['{"definitions":["j*"]}', '{"labels":{"a":"*"}}', "{}", rand_json(2)]),
    }
    parts = []
    for k in keys:
        v = vals[k]() if k in vals and rng.random() < 0.7 else rand_json(2)
        parts.append(json.dumps(k) + ":" + v)
    return "{" + ",".join(parts) + "}"


def sql_text(s):
    # E'' literal: every character a caller could send, no NUL (text cannot hold it)
    out = []
    for ch in s.replace("\x00", ""):
        o = ord(ch)
        if ch == "'":
            out.append("''")
        elif ch == "\\":
            out.append("\\\\")
        elif o < 32 or o == 127:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "E'" + "".join(out) + "'"


ARGNAMES = {}


def value_for(typ, fn, pos):
    """A SQL expression for an argument of type typ (fn: the function name)."""
    argname = (ARGNAMES.get(fn) or [""] * (pos + 1))[pos] if pos < len(ARGNAMES.get(fn, [])) else ""
    # arguments that name things the earlier calls made, mostly
    if typ == "text" and rng.random() < 0.6:
        if argname == "p_worker":
            return rng.choice(["'w1'", "'w2'"])
        if argname == "p_definition" or (fn == "define" and argname == "p_name"):
            return rng.choice(["'job'", "'t1'", "'x'", "'p'"])
        if fn == "emit" and argname == "p_name":
            return "'go'"
        if argname == "p_activity":
            return "'x'"
    if rng.random() < 0.08:
        return "NULL::" + typ
    if rng.random() < 0.03:
        # the wrong type: a value of another type, cast to it
        return rng.choice(["1::int", "'x'::text", "'{}'::jsonb", "true", "ARRAY[1]", "now()",
                           "'1 day'::interval", "NULL"])
    if typ in ("bigint", "integer", "smallint"):
        r = rng.random()
        if fn in ("cancel", "retry", "resume", "get_instance", "history", "emit", "complete", "fail") \
                and pos == 0 and r < 0.7:
            return str(rng.choice(made["instances"])) + "::" + typ
        if fn in ("complete", "fail") and pos == 1 and r < 0.7:
            return str(rng.choice(made["epochs"])) + "::" + typ
        v = rng.choice(INTS + [rng.randint(-5, 100)])
        if typ == "integer":
            v = max(-2147483648, min(2147483647, v))
        return f"({v})::{typ}"
    if typ == "text":
        if fn.startswith("activity_") and pos == 0 and made["activity_tokens"] and rng.random() < 0.6:
            return sql_text(rng.choice(made["activity_tokens"]))
        if fn == "token_verify" and made["tokens"] and rng.random() < 0.5:
            return sql_text(rng.choice(made["tokens"]))
        if fn == "token_revoke" and made["token_ids"] and rng.random() < 0.5:
            return sql_text(rng.choice(made["token_ids"]))
        return sql_text(rand_text())
    if typ == "jsonb":
        if fn == "define" and rng.random() < 0.8:
            return sql_text(definition_json()) + "::jsonb"
        r = rng.random()
        if r < 0.03:
            return sql_text(deep_json()) + "::jsonb"
        if r < 0.06:
            return sql_text(wide_json()) + "::jsonb"
        if r < 0.5 and pos > 0:
            return sql_text(options_json()) + "::jsonb"
        return sql_text(rand_json()) + "::jsonb"
    if typ == "text[]":
        if fn == "claim" and rng.random() < 0.6:
            return "ARRAY['default']"
        if fn == "token_create" and rng.random() < 0.6:
            return rng.choice(["ARRAY['admin']", "ARRAY['reader','worker']", "ARRAY[]::text[]",
                               "ARRAY['nope']", "ARRAY[NULL]::text[]"])
        return "ARRAY[" + ",".join(sql_text(rand_text()) for _ in range(rng.randint(0, 4))) + "]::text[]"
    if typ == "bigint[]":
        ids = [str(rng.choice(made["instances"] + INTS)) for _ in range(rng.randint(0, 5))]
        return "ARRAY[" + ",".join(ids) + "]::bigint[]" if ids else "ARRAY[]::bigint[]"
    if typ == "jsonb[]":
        items = [sql_text(rand_json()) + "::jsonb" if rng.random() < 0.9 else "NULL::jsonb"
                 for _ in range(rng.randint(0, 5))]
        return "ARRAY[" + ",".join(items) + "]::jsonb[]" if items else "ARRAY[]::jsonb[]"
    if typ == "interval":
        return rng.choice(["'0'", "'1 day'", "'-1 s'", "'1 ms'", "'178000000 years'", "'-178000000 years'",
                           "'1 day'"]) + "::interval"
    if typ == "boolean":
        return rng.choice(["true", "false"])
    if typ == "timestamp with time zone":
        return rng.choice(["'infinity'", "'-infinity'", "'2030-01-01'", "'4713-01-01 BC'"]) + "::timestamptz"
    return "NULL::" + typ


# ---- the database -----------------------------------------------------------

def psql(sql, user="postgres", db="postgres", timeout=120, check=True):
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", user, "-d", db],
                       input=sql, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise SystemExit(f"sqlfuzz: setup failed: {p.stderr.strip()}")
    return p.stdout


def postmaster_pid():
    with open(os.path.join(os.environ["GENROC_PGDATA"], "postmaster.pid")) as f:
        return f.readline().strip()


def server_log():
    path = os.path.join(os.environ["GENROC_PGDIR"], "server.log")
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def setup():
    template = os.environ.get("GENROC_TEST_TEMPLATE")
    psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE);")
    psql(f"CREATE DATABASE {DB}" + (f" TEMPLATE {template}" if template else "") + ";")
    if not template:
        psql("CREATE EXTENSION genroc;", db=DB)
    psql(f"""DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}') THEN
    CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
  END IF;
END $$;
-- the errors are counted here, not in the server log
ALTER DATABASE {DB} SET log_min_messages = 'fatal';
ALTER DATABASE {DB} SET log_min_error_statement = 'panic';
{GRANTS}""", db=DB)
    rows = psql("""SELECT p.proname || '|' || coalesce(array_to_string(ARRAY(
    SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) AS t), ','), '') || '|' || p.pronargdefaults
    || '|' || coalesce(array_to_string(p.proargnames[1:p.pronargs], ','), '')
FROM pg_proc p WHERE p.pronamespace = 'genroc'::regnamespace ORDER BY p.proname;""", db=DB)
    fns = []
    for line in rows.splitlines():
        name, args, ndef, argnames = line.split("|")
        ARGNAMES[name] = argnames.split(",")
        fns.append((name, [a for a in args.split(",") if a], int(ndef)))
    return fns


def call_sql(fn):
    name, types, ndef = fn
    n = len(types)
    if ndef and rng.random() < 0.3:
        n -= rng.randint(1, ndef)
    args = [value_for(types[i], name, i) for i in range(n)]
    if name.startswith("_") or rng.random() < 0.2:
        return f"SELECT genroc.{name}({', '.join(args)});"
    if name in ("claim", "claim_activity", "start", "define", "token_create", "history", "list_instances",
                "token_list", "list_workers", "list_queues", "list_definitions", "renew"):
        return f"SELECT * FROM genroc.{name}({', '.join(args)});"
    return f"SELECT genroc.{name}({', '.join(args)});"


def seed_calls():
    """Calls that make things for later calls to find (definitions, a worker, instances)."""
    out = []
    for i, d in enumerate(EXAMPLES):
        out.append(f"SELECT * FROM genroc.define({sql_text(rng.choice(['job', 't1', 'x', 'p']))}, "
                   f"{sql_text(json.dumps(d))}::jsonb);")
    out.append("SELECT genroc.worker_register('w1', '{\"queues\":[\"default\",\"eu\"]}');")
    out.append("SELECT genroc.worker_register('w2', '{\"lease_duration\":\"1h\",\"stale_after\":\"2h\"}');")
    for _ in range(20):
        out.append(f"SELECT * FROM genroc.start({sql_text(rng.choice(NAMES))}, "
                   f"{sql_text(rand_json())}::jsonb, {sql_text(options_json())}::jsonb);")
    out.append("SELECT * FROM genroc.claim('w1', ARRAY['default'], 5);")
    out.append("SELECT * FROM genroc.claim_activity('x', 'w1', 5);")
    return out


ERR = re.compile(r"^(?:psql:[^:]*:\d+: )?ERROR:  ([0-9A-Z]{5}): (.*)$")
CONTEXT = re.compile(r"^(?:CONTEXT:  |\t)?(.*)$")
CLEAN_ANYWHERE = {"22023", "22004", "42501", "54000", "54001", "57014", "40P01", "55P03"}


def run_batch(stmts, deadline):
    lines = ["SET statement_timeout = '5s';", "SET genroc.durability = 'none';", "\\set VERBOSITY verbose"]
    for i, s in enumerate(stmts):
        lines.append(f"\\warn @@{i}")
        lines.append(s)
    script = "\n".join(lines) + "\n"
    try:
        p = subprocess.run(["psql", "-X", "-A", "-t", "-U", ROLE, "-d", DB, "-v", "ON_ERROR_STOP=0"],
                           input=script, capture_output=True, text=True, errors="replace",
                           timeout=max(30, deadline - time.time() + 30))
        # markers (\warn) and errors share stderr, in order; results are on stdout
        return p.stderr, p.stdout
    except subprocess.TimeoutExpired:
        return "sqlfuzz: batch timed out", ""


def parse(out, results):
    """(errors, lost, ran): errors as (index, code, message, context lines); lost: the index of
    the call the connection broke in, else None; ran: how many calls ran."""
    # results of the calls: keep tokens for later calls
    for tok in re.findall(r"grt_[a-z0-9]{8,32}_[A-Za-z0-9]{32,128}", results):
        made["tokens"].append(tok)
        made["token_ids"].append(tok.split("_")[1])
    errors = []
    cur = None
    current = None
    for line in out.replace("\r", "").split("\n"):
        m = re.match(r"^@@(\d+)$", line)
        if m:
            current = int(m.group(1))
            continue
        m = ERR.match(line)
        if m:
            cur = [current, m.group(1), m.group(2), []]
            errors.append(cur)
            continue
        if cur is not None and (line.startswith("CONTEXT:") or line.startswith("\t") or line.startswith("PL/pgSQL")
                                or line.startswith("SQL ")):
            cur[3].append(line)
    broke = "server closed the connection unexpectedly" in out or "connection to server was lost" in out \
        or "sqlfuzz: batch timed out" in out
    lost = (current if current is not None else 0) if broke else None
    return errors, lost, (current + 1 if current is not None else 0)


def clean(code, message, context):
    ctx = " ".join(context)
    in_genroc = "function genroc." in ctx or 'SQL function "' in ctx
    if code.startswith("RC") or code in CLEAN_ANYWHERE:
        return True
    if not in_genroc:
        return True	# the call's own arguments (a literal that does not parse, no such function)
    # raised on purpose by genroc's PL/pgSQL
    return re.search(r"function genroc\.[a-z_]+\([^)]*\) line \d+ at RAISE", context[0] if context else "") \
        is not None


def main():
    for v in ("PGHOST", "PGPORT", "GENROC_PGDATA", "GENROC_PGDIR"):
        if not os.environ.get(v):
            print(f"Bail out! sqlfuzz needs {v} (run it from test/run-all.sh or after pgcluster.sh start)")
            return 2
    print(f"# sqlfuzz: seed {SEED}, {SECONDS:.0f} s, role {ROLE} (non-superuser)")
    log_before = len(server_log())
    pid = postmaster_pid()
    fns = setup()
    print(f"# {len(fns)} functions in schema genroc")
    private = [f for f in fns if f[0].startswith("_")]
    public = [f for f in fns if not f[0].startswith("_")]
    deadline = time.time() + SECONDS
    calls = 0
    codes = {}
    defects = {}
    lost_batches = 0
    lost_at = []	# the calls a session was lost in
    first = True
    while time.time() < deadline:
        stmts = seed_calls() if first else []
        first = False
        while len(stmts) < BATCH:
            # the private helpers (all refused, 42501) one call in ten
            pool = private if rng.random() < 0.1 else public
            stmts.append(call_sql(rng.choice(pool)))
        out, results = run_batch(stmts, deadline)
        errors, lost, ran = parse(out, results)
        calls += ran
        if lost is not None:
            lost_batches += 1
            if len(lost_at) < 5:
                lost_at.append(stmts[lost] if lost < len(stmts) else "?")
        for idx, code, msg, ctx in errors:
            codes[code] = codes.get(code, 0) + 1
            if not clean(code, msg, ctx):
                key = (code, re.sub(r"\d+", "N", msg)[:80], (ctx[0] if ctx else "")[:120])
                if key not in defects:
                    stmt = stmts[idx] if idx is not None and idx < len(stmts) else "?"
                    defects[key] = (msg, ctx, stmt)
        # new instances for later calls
        ids = psql("SELECT string_agg(id::text, ',') FROM (SELECT id FROM genroc._instances ORDER BY random() LIMIT 30) s;",
                   db=DB, check=False).strip()
        if ids:
            made["instances"] = [int(x) for x in ids.split(",")] + [0, -1, 9223372036854775807]
        ep = psql("SELECT string_agg(DISTINCT lease_epoch::text, ',') FROM genroc._instances;", db=DB, check=False).strip()
        if ep:
            made["epochs"] = [int(x) for x in ep.split(",")][:20] + [0, -1]
        at = psql("SELECT string_agg(activity_token, ',') FROM (SELECT activity_token FROM genroc._instances "
                  "WHERE activity_token IS NOT NULL LIMIT 20) s;", db=DB, check=False).strip()
        if at:
            made["activity_tokens"] = at.split(",")
        for lst in ("tokens", "token_ids", "activity_tokens"):
            made[lst] = made[lst][-50:]

    log = server_log()[log_before:]
    signals = [l for l in log.splitlines() if "terminated by signal" in l or "was terminated by exception" in l]
    # (after a crash the postmaster restarts the backends: give recovery time)
    for _ in range(30):
        alive = subprocess.run(["psql", "-X", "-A", "-t", "-c", "SELECT 1"], capture_output=True,
                               text=True).stdout.strip()
        if alive == "1":
            break
        time.sleep(1)
    same = postmaster_pid() == pid and alive == "1"
    print("# SQLSTATEs seen: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    print(f"# {calls - sum(codes.values())} of {calls} calls answered without an error")
    n = 0
    failed = 0

    def tap(ok, what):
        nonlocal n, failed
        n += 1
        failed += 0 if ok else 1
        print(("ok" if ok else "not ok") + f" {n} - {what}")

    tap(not signals and lost_batches == 0,
        f"no backend terminated by a signal, no session lost ({len(signals)} in the log, {lost_batches} lost)")
    for l in signals[:10]:
        print("#   " + l)
    for stmt in lost_at:
        print("#   lost in: " + stmt[:400])
    tap(same, f"the postmaster is the same process ({pid}) and answers")
    tap(not defects, f"every error is a clean SQLSTATE ({len(defects)} kinds of unclean error)")
    for (code, _, _), (msg, ctx, stmt) in list(defects.items())[:25]:
        print(f"#   {code}: {msg}")
        for c in ctx[:3]:
            print(f"#     {c.strip()}")
        print(f"#     statement: {stmt[:300]}")
    tap(calls >= MIN_CALLS, f"{calls} calls made (at least {MIN_CALLS})")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
