#!/bin/sh
# reserve.sh — an example command handler for genroc.
#
# genroc runs it with the task input (JSON) on stdin and reads the result
# (JSON) from stdout.  A non-zero exit is a failure; printing
# {"Error": "...", "Cause": "..."} first names the error for Retry/Catch.
# GENROC_INSTANCE_ID and GENROC_STATE say which task this is, so a real
# handler can make its side effect idempotent (the task may run again after
# a crash).
input=$(cat)
case "$input" in
  *'"reserved":[]'*)
    echo '{"Error": "stock.Empty", "Cause": "nothing to reserve"}'
    exit 1 ;;
esac
printf '{"reservation": "R-%s", "request": %s}\n' "$GENROC_INSTANCE_ID" "$input"
