#!/bin/sh
# activity_worker.sh — an activity worker over SQL: a shell loop around psql
# (and jq for the work).  It claims the tasks of one activity
# ("Resource": "activity:greet", examples/greet.json) and reports each with
# its token:
#
#   SELECT token, input FROM genroc.claim_activity('greet', 'WORKER', 1);
#   SELECT genroc.activity_succeed(TOKEN, RESULT);       -- or
#   SELECT genroc.activity_fail(TOKEN, 'greet.Failed', CAUSE);
#
#   DATABASE_URL=postgresql://app:change-me@127.0.0.1/app sh examples/activity_worker.sh [MAX_TASKS]
#
# The role needs genroc_worker (docs/security.md "Roles and ownership").  Values reach
# SQL as psql variables (:'name' quotes them), never pasted into the text.
# Environment: DATABASE_URL, ACTIVITY (greet), WORKER_ID (sh-HOSTNAME),
# POLL (seconds between claims when idle, 1).  MAX_TASKS: stop after that
# many (default 0: never).
set -eu
db=${DATABASE_URL:?set DATABASE_URL to the database, e.g. postgresql://app@127.0.0.1/app}
activity=${ACTIVITY:-greet}
worker=${WORKER_ID:-sh-$(hostname)}
poll=${POLL:-1}
max=${1:-0}

# The activity's own work: the task input (JSON) on stdin, the result (JSON)
# on stdout; a non-zero exit fails the task with stderr as the cause.
work() {
  jq -c '{text: ("hello " + (.who // "world")), by: "activity_worker.sh"}'
}

done_n=0
while [ "$max" -eq 0 ] || [ "$done_n" -lt "$max" ]; do
  # one task: its token, then its input on one line
  # (jsonb's text is one line); the database down: try again
  task=$(printf '%s\n' "SELECT token || chr(10) || input::text FROM genroc.claim_activity(:'a', :'w', 1)" |
    psql -X -qAt -v ON_ERROR_STOP=1 -d "$db" -v a="$activity" -v w="$worker") || task=""
  if [ -z "$task" ]; then sleep "$poll"; continue; fi
  token=$(printf '%s\n' "$task" | sed -n 1p)
  input=$(printf '%s\n' "$task" | sed -n 2p)
  if output=$(printf '%s\n' "$input" | work 2>"${TMPDIR:-/tmp}/activity_worker.$$"); then
    status=$(printf '%s\n' "SELECT genroc.activity_succeed(:'t', :'o'::jsonb)" |
      psql -X -qAt -v ON_ERROR_STOP=1 -d "$db" -v t="$token" -v o="$output")
  else
    status=$(printf '%s\n' "SELECT genroc.activity_fail(:'t', 'greet.Failed', :'c')" |
      psql -X -qAt -v ON_ERROR_STOP=1 -d "$db" -v t="$token" -v c="$(cat "${TMPDIR:-/tmp}/activity_worker.$$")")
  fi
  rm -f "${TMPDIR:-/tmp}/activity_worker.$$"
  echo "task done: $status" >&2
  done_n=$((done_n + 1))
done
