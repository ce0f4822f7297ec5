#!/usr/bin/env bash
# check_errors.sh — the SQLSTATE table in core/errors.def is the only source:
# every RCnnn code raised in extension/, engine/, store/ or worker/, or named
# in README.md or docs/, must be defined there, and every defined code must be in
# the table of docs/errors.md.
# Prints TAP-style "ok"/"not ok" lines.
set -uo pipefail
cd "$(dirname "$0")/.."
defined=$(grep -oE '"RC[0-9A-Z]{3}"' core/errors.def | tr -d '"' | sort -u)
page=docs/errors.md
[ -f "$page" ] || { echo "not ok $page is missing"; exit 1; }
used=$(grep -rhoE "RC[0-9][0-9A-Z]{2}" extension/ engine/ store/ worker/ README.md docs/ 2>/dev/null | sort -u)
status=0
for c in $used; do
  if grep -qx "$c" <<<"$defined"; then echo "ok $c is defined"; else echo "not ok $c is used but not in core/errors.def"; status=1; fi
done
for c in $defined; do
  if grep -qE "^\| $c \|" "$page"; then echo "ok $c is in the table of $page"; else echo "not ok $c is missing from the table of $page"; status=1; fi
done
exit $status
