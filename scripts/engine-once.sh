#!/usr/bin/env bash
# engine-once.sh — how much of the API is still written twice, measured from
# the code; fails when a figure grows past scripts/engine-once.ratchet, so
# no new twin code lands while the operations move into engine/ one area at
# a time.  The test command runs it in the `errors` suite (test/run-all.sh).
# Prints TAP-style "ok" / "not ok" lines, each figure with its ratchet and
# the goal the move ends at.
#
#   bash scripts/engine-once.sh            check against the ratchet
#   bash scripts/engine-once.sh --write    write today's figures as the ratchet
#                                          (after a change that lowers them)
#
# The figures, and how each is counted:
#   plpgsql_lines   lines inside the bodies ($$ ... $$) of the functions in
#                   extension/sql/*.sql whose LANGUAGE is plpgsql (DO blocks
#                   are not functions and are not counted)
#   twins_public    public functions (genroc.<name>) with a PL/pgSQL or SQL
#                   body in extension/sql/ whose name is also a function of
#                   the SQLite store (sqlite_store.cpp: `<name>(`): the
#                   operation written twice.  A function that became a C
#                   entry point of the engine (LANGUAGE C) is not counted:
#                   both stores run the engine's one copy.
#   twins_private   the same for the private helpers genroc._<name>, the
#                   shim's name being <name> without the underscore
#   shim_lines      lines of the SQLite shim's files (store/sqlite/), its port
#                   adapter included
#   wide_updates_pg, wide_updates_sqlite
#                   UPDATE statements of the instance row (genroc._instances
#                   in extension/, instances in the SQLite shim) whose SET
#                   list has more than 10 columns at its top level; a SET
#                   list written once as a macro (`#define NAME "col = ...,
#                   ..."`, engine/stop_writer.h) counts once, at its
#                   definition, for the dialect whose UPDATEs put it after
#                   their SET, however many statements use it
set -euo pipefail
cd "$(dirname "$0")/.."
RATCHET=scripts/engine-once.ratchet
SHIM=store/sqlite
STORE_CPP=$(ls "$SHIM"/sqlite_store.cpp 2>/dev/null || true)

figures=$(python3 - "$SHIM" "$STORE_CPP" <<'PY'
import glob, os, re, sys
shim, store_cpp = sys.argv[1], sys.argv[2]

# ---- the functions of extension/sql/ with their language and body lines
funcs = []  # (name, language, body_lines)
for path in sorted(glob.glob('extension/sql/*.sql')):
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        m = re.match(r'^CREATE (?:OR REPLACE )?FUNCTION\s+genroc\.(\w+)', lines[i])
        if not m:
            i += 1
            continue
        name, stmt, body, in_body, tag = m.group(1), [], 0, False, None
        while i < len(lines):
            line = lines[i]
            if in_body:
                if tag in line:
                    in_body = False
                    rest = line[line.index(tag) + len(tag):]
                    stmt.append(rest)
                    if re.search(r';\s*(--.*)?$', rest):
                        break
                else:
                    body += 1
            else:
                t = re.search(r'\$(\w*)\$', line)
                if t:
                    tag = t.group(0)
                    rest = line[t.end():]
                    if tag in rest:  # a one-line body
                        stmt.append(line)
                        if re.search(r';\s*(--.*)?$', line):
                            break
                    else:
                        in_body = True
                        stmt.append(line[:t.start()])
                else:
                    stmt.append(line)
                    if re.search(r';\s*(--.*)?$', line) and not in_body:
                        break
            i += 1
        text = ' '.join(stmt)
        lang = re.search(r'LANGUAGE\s+(\w+)', text, re.I)
        lang = lang.group(1).lower() if lang else ('sql' if re.search(r'\bBEGIN ATOMIC\b|\bRETURN\b', text) else '?')
        funcs.append((name, lang, body))
        i += 1

plpgsql_lines = sum(b for n, l, b in funcs if l == 'plpgsql')

store = open(store_cpp, encoding='utf-8').read() if store_cpp else ''
def twinned(name):
    shim_name = name[1:] if name.startswith('_') else name
    return re.search(r'\b' + re.escape(shim_name) + r'\(', store) is not None

bodies = {}
for n, l, b in funcs:
    bodies.setdefault(n, set()).add(l)
written = [n for n, langs in bodies.items() if langs & {'plpgsql', 'sql'} and 'c' not in langs]
twins_public = sorted(n for n in written if not n.startswith('_') and twinned(n))
twins_private = sorted(n for n in written if n.startswith('_') and twinned(n))

shim_lines = 0
for p in sorted(glob.glob(os.path.join(shim, '*'))):
    if p.endswith(('.cpp', '.hpp', '.h', '.c')):
        shim_lines += sum(1 for _ in open(p, encoding='utf-8'))

# ---- UPDATEs of the instance row with more than 10 columns in their SET
def set_columns(sql):
    m = re.search(r'\bSET\b', sql, re.I)
    if not m:
        return 0
    depth, cols, k, s = 0, 1, m.end(), sql
    while k < len(s):
        c = s[k]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth < 0:
                break
        elif c == "'":
            k = s.find("'", k + 1)
            if k < 0:
                break
        elif depth == 0:
            if c == ',':
                cols += 1
            elif re.match(r'\s(WHERE|FROM|RETURNING)\b', s[k:k + 12], re.I) or c == ';':
                break
        k += 1
    return cols

def c_literals(text):
    # the SQL of a C/C++ file: its string literals, adjacent ones joined
    out, k = [], 0
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|(;\s*$)', text, re.M):
        if m.group(1) is not None:
            out.append(m.group(1).replace('\\"', '"').replace('\\n', ' ').replace('\\t', ' '))
        else:
            out.append(';')
    return ' '.join(out)

def wide_updates(text, table):
    n = 0
    for m in re.finditer(r'\bUPDATE\s+' + table + r'\b(?:\s+\w+)?\s+SET\b', text, re.I):
        if set_columns(text[m.start():m.start() + 20000]) > 10:
            n += 1
    return n

# SET lists written once as a macro and shared by the UPDATEs that name it
def macro_set_lists():
    found = {}  # name -> its columns
    for p in sorted(glob.glob('engine/*.h')) + sorted(glob.glob('engine/*.def')) + sorted(glob.glob('extension/*.h')):
        text = open(p, encoding='utf-8').read()
        for m in re.finditer(r'^#define[ \t]+(\w+)[ \t]*(?:\\\n)?((?:.*\\\n)*.*)$', text, re.M):
            body = c_literals(m.group(2).replace('\\\n', '\n'))
            if re.match(r'\s*\w+\s*=', body):
                found[m.group(1)] = set_columns('SET ' + body)
    return found

def macro_uses(text, table, names):
    # the macros named right after `UPDATE <table> [alias] SET "`
    used = set()
    for m in re.finditer(r'UPDATE\s+' + table + r'\b(?:\s+\w+)?\s+SET\s*"\s*(\w+)', text, re.I):
        if m.group(1) in names:
            used.add(m.group(1))
    return used

macros = macro_set_lists()
sources = sorted(glob.glob('extension/*.c')) + sorted(glob.glob('engine/*.c')) + sorted(glob.glob('engine/*.def'))
pg_macros, lite_macros = set(), set()
for p in sources:
    raw = open(p, encoding='utf-8').read()
    pg_macros |= macro_uses(raw, r'genroc\._instances', macros)
for p in sorted(glob.glob(os.path.join(shim, '*.cpp'))) + sorted(glob.glob('engine/*.def')):
    lite_macros |= macro_uses(open(p, encoding='utf-8').read(), r'instances', macros)

pg = sum(1 for n in pg_macros if macros[n] > 10)
for p in sorted(glob.glob('extension/sql/*.sql')):
    pg += wide_updates(open(p, encoding='utf-8').read(), r'genroc\._instances')
for p in sorted(glob.glob('extension/*.c')) + sorted(glob.glob('engine/*.c')) + sorted(glob.glob('engine/*.def')):
    pg += wide_updates(c_literals(open(p, encoding='utf-8').read()), r'genroc\._instances')
lite = sum(1 for n in lite_macros if macros[n] > 10)
for p in sorted(glob.glob(os.path.join(shim, '*.cpp'))) + sorted(glob.glob('engine/*.def')):
    lite += wide_updates(c_literals(open(p, encoding='utf-8').read()), r'instances')

print(f'plpgsql_lines={plpgsql_lines}')
print(f'twins_public={len(twins_public)}')
print(f'twins_private={len(twins_private)}')
print(f'shim_lines={shim_lines}')
print(f'wide_updates_pg={pg}')
print(f'wide_updates_sqlite={lite}')
print(f"# shared SET lists: {' '.join(f'{n} ({macros[n]} columns)' for n in sorted(pg_macros | lite_macros)) or 'none'}")
print(f"# public with a twin: {' '.join(twins_public)}")
print(f"# public without: {' '.join(sorted(n for n in written if not n.startswith('_') and n not in twins_public))}")
print(f"# private without: {' '.join(sorted(n for n in written if n.startswith('_') and n not in twins_private))}")
PY
)

if [ "${1:-}" = "--write" ]; then
  {
    echo "# scripts/engine-once.sh's ratchet: each figure may only go down."
    echo "# Lower it with 'bash scripts/engine-once.sh --write' in the commit that lowers the figure."
    grep -v '^#' <<<"$figures"
  } >"$RATCHET"
  cat "$RATCHET"
  exit 0
fi

# The bounds the move into engine/ ends at (what "one engine" is done at).
declare -A goal=([plpgsql_lines]=600 [twins_public]=0 [twins_private]=0 [shim_lines]=1500
                 [wide_updates_pg]=1 [wide_updates_sqlite]=1)
status=0
while IFS='=' read -r key value; do
  case "$key" in '#'*|'') continue ;; esac
  limit=$(sed -n "s/^$key=//p" "$RATCHET")
  if [ -z "$limit" ]; then
    echo "not ok $key=$value has no ratchet in $RATCHET"; status=1
  elif [ "$value" -gt "$limit" ]; then
    echo "not ok $key=$value grew past its ratchet $limit (goal ${goal[$key]}): new twin code; move it into engine/ instead"
    status=1
  else
    echo "ok $key=$value (ratchet $limit, goal ${goal[$key]})"
  fi
done <<<"$figures"
grep '^#' <<<"$figures" || true
exit $status
