#!/usr/bin/env bash
# check-layers.sh — the C and C++ folders stand on floors, and an include runs
# down the floors only (MAP.md "The shape"):
#
#   worker/     the binaries, the worker loop, the HTTP server, genctl
#   extension/  the PostgreSQL module (a top of its own: never the client side)
#   store/      the Store interface, PgStore, open_store, store/sqlite/
#   engine/     the engine's rules, one copy for both stores
#   core/       the ASL interpreter
#
# Each quoted #include of a file in these folders is resolved as the build
# resolves it (beside the including file, then by its path from the
# repository's root, then by its name: the one file of the tree, outside
# test/ and bench/, that bears it) and the folder it lands in must be one
# the including folder may use:
#
#   worker/     worker/, store/'s faces (store/*.hpp), engine/, core/
#   extension/  extension/, engine/, core/
#   store/      store/ (store/sqlite/ included), engine/, core/
#   engine/     engine/, core/
#   core/       core/
#
# worker/ sees a store only through its faces: never a file of store/sqlite/
# nor a .cpp of store/.  An include that lands on no file of the tree (a
# generated one) is not judged; one whose name two folders hold is refused
# (a bare name must not depend on the include path's order).
#
# Prints one TAP-style line per folder ("ok ..." / "not ok ...", then each
# include that breaks the rule); exits non-zero when any does.
#   --self-test   the rules run on small made-up trees: each kind of wrong
#                 include must be refused, and a right one passed.
set -uo pipefail

FLOORS="worker extension store engine core"

# allowed DIR TARGET: may a file of DIR include TARGET (a path from the root)?
allowed() {
  local dir=$1 target=$2
  case "$dir" in
    worker)
      case "$target" in
        worker/*|engine/*|core/*) return 0 ;;
        store/*/*) return 1 ;;
        store/*.hpp|store/*.h) return 0 ;;
      esac ;;
    extension) case "$target" in extension/*|engine/*|core/*) return 0 ;; esac ;;
    store) case "$target" in store/*|engine/*|core/*) return 0 ;; esac ;;
    engine) case "$target" in engine/*|core/*) return 0 ;; esac ;;
    core) case "$target" in core/*) return 0 ;; esac ;;
  esac
  return 1
}

# check ROOT: prints the lines, answers 0 when every folder keeps the rule.
check() {
  local root=$1 status=0 dir file inc target bad path
  local -a found
  # every C and C++ file of the tree by its name (not the tests', the
  # benchmark's, or a build folder's: no floor includes those)
  local -A by_name=()
  while IFS= read -r path; do
    by_name[$(basename "$path")]+="$path "
  done < <(cd "$root" && find . \( -path ./.git -o -path './build*' -o -path ./test -o -path ./bench \
                                  -o -name node_modules \) -prune -o -type f \
                                \( -name '*.h' -o -name '*.hpp' -o -name '*.inc' -o -name '*.def' \
                                   -o -name '*.c' -o -name '*.cpp' \) -print | sed 's|^\./||' | sort)
  for dir in $FLOORS; do
    [ -d "$root/$dir" ] || continue
    bad=""
    while IFS= read -r file; do
      while IFS= read -r inc; do
        target=""
        if [ -f "$root/$(dirname "$file")/$inc" ]; then
          target=$(realpath -m --relative-to="$root" "$root/$(dirname "$file")/$inc")
        elif [ -f "$root/$inc" ] && [[ "$inc" == */* ]]; then
          target=$inc
        else
          found=(${by_name[$(basename "$inc")]:-})
          if [ ${#found[@]} -gt 1 ]; then
            bad+="    $file: #include \"$inc\" could be ${found[*]}"$'\n'
            continue
          fi
          [ ${#found[@]} -eq 1 ] && target=${found[0]}
        fi
        [ -n "$target" ] || continue	# not a file of the tree (generated)
        allowed "$dir" "$target" || bad+="    $file: #include \"$inc\" -> $target"$'\n'
      done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$root/$file")
    done < <(cd "$root" && find "$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.inc' \) | sort)
    if [ -z "$bad" ]; then
      echo "ok $dir/ includes only from the floors below it"
    else
      echo "not ok $dir/ includes from a floor it may not use"
      printf '%s' "$bad"
      status=1
    fi
  done
  return $status
}

self_test() {
  local tmp status=0 out
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  # tree CASE FILE TEXT...: a tree whose worker, store, engine and core
  # include downward, plus FILE holding TEXT
  tree() {
    rm -rf "$tmp/t" && mkdir -p "$tmp/t"/{worker,store/sqlite,engine,core,extension}
    printf '#include "store.hpp"\n#include "engine/rules.hpp"\n' >"$tmp/t/worker/cli.cpp"
    printf '#include "asl.hpp"\n' >"$tmp/t/store/store.hpp"
    printf '#include "store.hpp"\n#include "engine/rules.hpp"\n' >"$tmp/t/store/sqlite/sqlite_store.cpp"
    printf '#include "sqlite_store.hpp"\n' >"$tmp/t/store/open_store.cpp"
    : >"$tmp/t/store/sqlite/sqlite_store.hpp"
    printf '#include "asl.hpp"\n' >"$tmp/t/engine/rules.hpp"
    : >"$tmp/t/core/asl.hpp"
    printf '#include "asl_c.h"\n#include "generated.h"\n' >"$tmp/t/extension/genroc.c"
    : >"$tmp/t/core/asl_c.h"
    [ $# -gt 0 ] && printf '%s\n' "${@:2}" >>"$tmp/t/$1"
    return 0
  }
  expect() { # expect pass|fail WHAT
    out=$(check "$tmp/t" 2>&1); local rc=$?
    if { [ "$1" = pass ] && [ $rc -eq 0 ]; } || { [ "$1" = fail ] && [ $rc -ne 0 ]; }; then
      echo "ok self-test: $2"
    else
      echo "not ok self-test: $2"; echo "$out" | sed 's/^/    /'; status=1
    fi
  }
  tree; expect pass "includes down the floors pass"
  tree core/asl.hpp '#include "store.hpp"'; expect fail "core/ including store/ is refused"
  tree engine/rules.hpp '#include "cli.hpp"'; : >"$tmp/t/worker/cli.hpp"; expect fail "engine/ including worker/ is refused"
  tree store/store.hpp '#include "cli.hpp"'; : >"$tmp/t/worker/cli.hpp"; expect fail "store/ including worker/ is refused"
  tree store/sqlite/sqlite_store.cpp '#include "../../worker/cli.hpp"'; : >"$tmp/t/worker/cli.hpp"
  expect fail "store/sqlite/ including worker/ by a relative path is refused"
  tree worker/cli.cpp '#include "sqlite_store.hpp"'; expect fail "worker/ including the SQLite store's header is refused"
  tree engine/rules.hpp '#include "store.hpp"'; expect fail "engine/ including store/ is refused"
  tree extension/genroc.c '#include "store.hpp"'; expect fail "extension/ including store/ is refused"
  tree store/sqlite/sqlite_store.cpp '#include "dup.hpp"'; : >"$tmp/t/core/dup.hpp"; : >"$tmp/t/engine/dup.hpp"
  expect fail "a bare name two folders hold is refused"
  return $status
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
  exit $?
fi
cd "$(dirname "$0")/.."
check "$PWD"
