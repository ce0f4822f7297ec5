#!/usr/bin/env bash
# check_links.sh — every relative link of the user documentation resolves:
# README.md, docs/*.md and bench/RESULTS.md.  A link [text](path) must name a
# file or folder of the checkout (relative to the page); [text](page.md#anchor)
# and [text](#anchor) must name a heading of that page, by GitHub's rule for
# heading anchors (lowercase; spaces become '-'; punctuation other than '-' and
# '_' is dropped; a repeated heading gets -1, -2, ...).  Links to other sites
# (a scheme such as https:) are not fetched.  Fenced blocks and `code spans`
# hold no links.
#
# Citations of the docs elsewhere in the checkout are held to the same rule:
# `docs/PAGE.md#anchor`, `docs/PAGE.md "Heading"` (a heading of that page,
# by its text) and `docs/design.md §N` (a heading "N. …" of that page), in
# any tracked file outside these pages.  Prints TAP-style "ok"/"not ok" lines.
set -uo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os, re, subprocess, sys, unicodedata

pages = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md")) + ["bench/RESULTS.md"]

def slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)   # a link: its text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    out = []
    for ch in text.strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)

def headings(path):
    """anchors and heading texts of a markdown file"""
    anchors, texts, seen, fence = set(), [], {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None: fence = m.group(1)[0]
            elif m.group(1)[0] == fence: fence = None
            continue
        if fence: continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            text = m.group(1)
            s = slug(text)
            n = seen.get(s, 0)
            seen[s] = n + 1
            anchors.add(s if n == 0 else f"{s}-{n}")
            texts.append(re.sub(r"`", "", text))
        for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
            anchors.add(a)
    return anchors, texts

cache = {}
def page_info(path):
    if path not in cache: cache[path] = headings(path)
    return cache[path]

def links(path):
    """(line number, target) of every markdown link outside code"""
    fence = None
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None: fence = m.group(1)[0]
            elif m.group(1)[0] == fence: fence = None
            continue
        if fence: continue
        line = re.sub(r"`[^`]*`", "", line)
        for t in re.findall(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line):
            yield no, t

failed = 0
def bad(msg):
    global failed
    failed += 1
    print("not ok " + msg)

def resolve(src, target):
    """None when the link resolves, else why not"""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):   # https:, mailto:, ...
        return None
    path, _, anchor = target.partition("#")
    dest = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
    if not os.path.exists(dest):
        return f"no file {dest}"
    if anchor:
        if not dest.endswith(".md") or os.path.isdir(dest):
            return f"an anchor into {dest}, which is not a markdown page"
        if anchor not in page_info(dest)[0]:
            return f"no heading #{anchor} in {dest}"
    return None

for page in pages:
    if not os.path.exists(page):
        bad(f"{page} is missing"); continue
    count = 0
    for no, target in links(page):
        count += 1
        why = resolve(page, target)
        if why: bad(f"{page}:{no}: dead link ({target}): {why}")
    print(f"ok {page}: {count} links checked")

# Citations of the docs from the rest of the checkout.
tracked = subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True).stdout.split("\0")
cited = 0
cite_re = re.compile(r'docs/([a-z][a-z-]*\.md)(?:#([A-Za-z0-9_-]+)|\s+"([^"]+)"|\s+§\s*([0-9]+))?')
for f in tracked:
    if not f or f in pages or not os.path.isfile(f) or f.startswith("docs/") and not f.endswith(".md"):
        continue
    try:
        text = open(f, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    if "docs/" not in text: continue
    for no, line in enumerate(text.split("\n"), 1):
        for m in cite_re.finditer(line):
            page, anchor, heading, section = m.groups()
            dest = os.path.join("docs", page)
            if page == "console-instance.png": continue
            cited += 1
            if not os.path.exists(dest):
                bad(f"{f}:{no}: cites {dest}, which does not exist"); continue
            anchors, texts = page_info(dest)
            if anchor and anchor not in anchors:
                bad(f"{f}:{no}: cites {dest}#{anchor}: no such heading")
            if heading and heading not in texts:
                bad(f'{f}:{no}: cites {dest} "{heading}": no such heading')
            if section and not any(re.match(rf"{section}\.\s", t) for t in texts):
                bad(f"{f}:{no}: cites {dest} §{section}: no heading \"{section}. …\"")
print(f"ok {cited} citations of docs/ in the rest of the checkout checked")
sys.exit(1 if failed else 0)
PY
