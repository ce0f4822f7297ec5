#!/usr/bin/env bash
# check_limits.sh — core/limits.def is the only source of the interpreter's
# limits: every limit it defines must be in the table of docs/limits.md
# ("Limits on definitions and payloads") with the same value, and every limit
# the table names must be defined there.
# Prints TAP-style "ok"/"not ok" lines.
set -uo pipefail
cd "$(dirname "$0")/.."
defined=$(tr -d '\n\t' <core/limits.def | grep -oE 'GENROC_LIMIT\([A-Z_]+, *"[a-z_]+", *[0-9]+' |
          sed -E 's/.*"([a-z_]+)", *([0-9]+)/\1 \2/' | sort -u)
page=docs/limits.md
table=$(sed -n '/^## Limits on definitions and payloads$/,/^## /p' "$page" | grep -oE '^\| [a-z_]+ \| [0-9]+ \|' |
        sed -E 's/^\| ([a-z_]+) \| ([0-9]+) \|/\1 \2/' | sort -u)
status=0
[ -n "$defined" ] || { echo "not ok no limits found in core/limits.def"; exit 1; }
[ -n "$table" ] || { echo "not ok no limits table found in $page"; exit 1; }
while read -r name value; do
  if grep -qx "$name $value" <<<"$table"; then echo "ok $name = $value is in the table of $page"
  else echo "not ok $name = $value is not in the table of $page"; status=1; fi
done <<<"$defined"
while read -r name value; do
  [ -z "$name" ] && continue
  if grep -qx "$name $value" <<<"$defined"; then echo "ok $page's $name = $value is defined"
  else echo "not ok $page's $name = $value is not in core/limits.def"; status=1; fi
done <<<"$table"
exit $status
