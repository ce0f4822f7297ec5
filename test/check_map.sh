#!/usr/bin/env bash
# check_map.sh — MAP.md stays a map of the repository as it is, and nothing
# cites what the repository does not hold.  Run in the `errors` suite of
# test/run-all.sh; prints TAP-style "ok"/"not ok" lines, exits 1 on any
# "not ok".
#
#   - every file `git ls-files` lists has exactly one row in MAP.md's
#     "## Files", except documents and data (*.md, docs/, *.png, web/dist/,
#     package-lock.json, expected/*.out, test/fuzz/corpus/); no row names a
#     file that does not exist; an expected/NAME.out belongs to a
#     sql/NAME.sql or specs/NAME.spec
#   - one line a row: every line of "## Call chains" and "## Files" is a row
#     ("- ...") or, in Files, a "### " group heading; a file row is
#     "- `path`[, `path`...] — text", at most 200 characters (a chain 240)
#   - the functions it names exist: `Class::method` in the C++ sources (core/, engine/,
#     store/, extension/, worker/); `genroc.name` in extension/
#   - no citation of a tracker (the word for a tracker's ticket followed by
#     a number, with or without a space or "#"; or "#" and a number alone)
#     or of a design document's numbered section (DESIGN, then the section
#     sign), in any file's text or in any file's name: code,
#     comments, docs, test names, regress and fuzz-seed file names.  The
#     frozen install scripts of released versions (extension/genroc--*.sql)
#     are left as released; the fuzz seeds' contents are inputs, not text
#     (their names are checked).
set -uo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "ok MAP.md # SKIP not a git checkout"; exit 0
fi
exec python3 - <<'PY'
import os, re, subprocess, sys

fails = 0
def ok(msg): print("ok " + msg)
def bad(msg):
    global fails
    fails += 1
    print("not ok " + msg)

files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True, check=True).stdout.split("\0")
files = [f for f in files if f and os.path.isfile(f)]  # a deletion not yet committed is gone

def exempt(f):
    return (f.endswith(".md") or f.endswith(".png") or f.startswith("docs/")
            or f.startswith("web/dist/") or f.endswith("package-lock.json")
            or f.startswith("expected/") or f.startswith("test/fuzz/corpus/"))

# ---- MAP.md's rows --------------------------------------------------------
lines = open("MAP.md", encoding="utf-8").read().split("\n")
section = None
rows = {}  # path -> line number
row_re = re.compile(r"^- (`[^`]+`(?:, `[^`]+`)*) — \S.*$")
for n, line in enumerate(lines, 1):
    if line.startswith("## "):
        section = line[3:].strip()
        continue
    if section not in ("Call chains", "Files") or line.strip() == "":
        continue
    if section == "Files" and line.startswith("### "):
        continue
    if not line.startswith("- "):
        bad(f"MAP.md:{n}: a row goes on over more than one line (one line a row): {line.strip()[:60]!r}")
        continue
    limit = 200 if section == "Files" else 240
    if len(line) > limit:
        bad(f"MAP.md:{n}: a row of {len(line)} characters (at most {limit}): say less")
    if section == "Call chains":
        continue
    m = row_re.match(line)
    if not m:
        bad(f"MAP.md:{n}: not a file row (- `path` — what it is): {line[:60]!r}")
        continue
    for p in re.findall(r"`([^`]+)`", m.group(1)):
        if p in rows:
            bad(f"MAP.md:{n}: {p} has a row already (line {rows[p]})")
        rows[p] = n
        if not os.path.isfile(p):
            bad(f"MAP.md:{n}: {p} does not exist (a row for a missing file)")

# names of functions in the map exist: `Class::method` in the C++ sources,
# `genroc.name` / `genroc._name` in the extension
cpp = "".join(open(f, encoding="utf-8", errors="replace").read() for f in files
              if f.split("/")[0] in ("core", "engine", "store", "extension", "worker") and re.search(r"\.(cpp|hpp|h)$", f))
ext = "".join(open(f, encoding="utf-8", errors="replace").read() for f in files
              if f.startswith("extension/") and not re.fullmatch(r"extension/genroc--[0-9.]+\.sql", f))
for n, line in enumerate(lines, 1):
    for tok in re.findall(r"`([^`]+)`", line):
        if "/" in tok or re.search(r"\.(mjs|js|sql|c|h|cpp|hpp|sh|control|json|db)$", tok):
            continue  # a file, not a function
        for q in re.findall(r"\b[A-Z]\w*(?:::\w+)+", tok):
            name = q.split("::")[-1]
            if not re.search(r"\b" + re.escape(name) + r"\b", cpp):
                bad(f"MAP.md:{n}: {q} names no function of the C++ sources")
        for q in re.findall(r"\bgenroc\.(_?\w+)", tok):
            if not re.search(r"\b" + re.escape(q) + r"\b", ext):
                bad(f"MAP.md:{n}: genroc.{q} is not in extension/")

if "Files" not in [l[3:].strip() for l in lines if l.startswith("## ")]:
    bad("MAP.md has no '## Files' section")

missing = [f for f in files if not exempt(f) and f not in rows]
for f in missing:
    bad(f"{f} has no row in MAP.md (add one line: - `{f}` — what it is)")
if not missing:
    ok(f"every source file has a row in MAP.md ({len(rows)} files)")
for f in files:
    if f.startswith("expected/") and f.endswith(".out"):
        name = os.path.basename(f)[:-4]
        if not (os.path.isfile(f"sql/{name}.sql") or os.path.isfile(f"specs/{name}.spec")):
            bad(f"{f} belongs to no sql/{name}.sql or specs/{name}.spec")

# ---- citations of what the repository does not hold -------------------------
# (the patterns are built from pieces so that this file does not match them)
word = "iss" + "ue"
cite = re.compile(r"(?i)" + word + r"s?[ _-]?#?[0-9]+|" + "des" + "ign §|(?<![\w&{$#])#[0-9]{1,4}\b(?![0-9a-f])")
def cited(text):
    for m in cite.finditer(text):
        before = text[max(0, m.start() - 4):m.start()]
        if m.group(0).startswith("#") and before.endswith("UAX "):
            continue  # Unicode's annex number, not a tracker
        return m.group(0)
    return None

found = 0
for f in files:
    if f.endswith(".png") or f.startswith("web/dist/") or f.endswith("package-lock.json"):
        continue
    c = cited(f)
    if c:
        bad(f"{f}: the file's name cites {c!r}: name it after what it tests")
        found += 1
    if (re.fullmatch(r"extension/genroc--[0-9.]+\.sql", f) or f.endswith(".css") or f.endswith(".inc")
            or f.startswith("test/fuzz/corpus/")):
        continue  # a released script as released; colours; generated tables; fuzz inputs
    try:
        text = open(f, encoding="utf-8", errors="replace").read()
    except OSError:
        continue
    for n, line in enumerate(text.split("\n"), 1):
        c = cited(line)
        if c:
            bad(f"{f}:{n}: cites {c!r}: say the behaviour instead")
            found += 1
if not found:
    ok("no issue number or design-section citation in any file or file name")

sys.exit(1 if fails else 0)
PY
