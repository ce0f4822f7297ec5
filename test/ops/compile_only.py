#!/usr/bin/env python3
"""compile_only.py — compiles the product's translation units (core/,
engine/, store/, worker/) of a configured CMake build folder with the exact
commands of its compile_commands.json, and links nothing.  In a unity build
(GENROC_UNITY=ON) those are the libraries' unity sources, each several files
of one library (CMake generates them into the build folder at configure time).

    python3 test/ops/compile_only.py BUILD_DIR JOBS [g0]

`g0` adds -g0: no debug information, which no diagnostic depends on (at
-O0, Debug's, it is an eighth of the compiler's time).  -fsyntax-only would
take half, but it skips the passes after the front end, and with them
warnings such as -Wunused-function: not used.  Sources generated into the
build folder (the console's embedded files) are left out; BUILD_TYPE_UNITS,
a regular expression, keeps only the units whose path matches it.  Prints each
failing unit's diagnostics; exits non-zero when any unit did not compile.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

build, jobs = sys.argv[1], int(sys.argv[2])
g0 = len(sys.argv) > 3 and sys.argv[3] == "g0"
root = os.getcwd()
product = ("core", "engine", "store", "worker")
# ccache, as CMake would launch it (build_types.sh sets it when installed)
launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER", "")

with open(os.path.join(build, "compile_commands.json")) as f:
    entries = json.load(f)
units = []
unity = re.compile(r"CMakeFiles/[^/]+\.dir/Unity/unity_\d+_\w+\.\w+$")
for e in entries:
    path = os.path.join(e["directory"], e["file"])
    rel = os.path.relpath(path, root)
    # a unity source (GENROC_UNITY=ON): a product library's batch, generated
    # into the build folder; named by its path there (core/CMakeFiles/...)
    if unity.search(path):
        rel = os.path.relpath(path, os.path.join(root, build))
    if rel.split(os.sep)[0] in product and re.search(os.environ.get("BUILD_TYPE_UNITS", ""), rel):
        units.append((rel, e))
if not units:
    print(f"no product sources in {build}/compile_commands.json", file=sys.stderr)
    sys.exit(1)


def compile_unit(unit):
    rel, e = unit
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    if g0:
        args = args + ["-g0"]
    if launcher and os.path.basename(args[0]) != launcher:
        args = [launcher] + args
    if "-o" in args:  # the object's folder (CMake makes the target's own)
        out = args[args.index("-o") + 1]
        os.makedirs(os.path.join(e["directory"], os.path.dirname(out)), exist_ok=True)
    p = subprocess.run(args, cwd=e["directory"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return rel, p.returncode, p.stdout


failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
    for rel, rc, out in pool.map(compile_unit, sorted(units)):
        if rc != 0:
            failed += 1
            print(f"error: {rel} does not compile")
        if out.strip():
            print(out.rstrip())
print(f"{len(units) - failed} of {len(units)} units compiled{' (-g0)' if g0 else ''}")
sys.exit(1 if failed else 0)
