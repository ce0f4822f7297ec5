#!/usr/bin/env bash
# run.sh — the sfn suite: genroc's Step Functions endpoint (POST /, AWS JSON
# 1.0, SigV4) driven by AWS's own clients, no mock of them.
#
#   bash test/sfn/run.sh          (test/run-all.sh runs it as suite "sfn")
#
# For each store — a SQLite file, and PostgreSQL when GENROC_TEST_PG_URL names
# a cluster (run-all.sh's throwaway one) — it makes a server key, issues two
# key pairs with `genroc token create --sigv4` (operator + worker, reader),
# starts `genroc serve --auth --sigv4-key-file` on a free loopback port, then
#   - the AWS CLI (Debian's awscli): one batch of calls, credentials from the
#     issued keys (the CLI starts slowly: as few calls as cover its part), and
#     StartSyncExecution with test/sfn/awscli_plugin/ loaded;
#   - every test/sfn/*_test.mjs, each a node process with @aws-sdk/client-sfn
#     (package-lock.json) and common.mjs, which checks every raw answer against
#     the service model Debian's awscli ships (sdk_test.mjs: every action it
#     had first, an activity worker as AWS's documentation writes one, a wrong
#     secret, a replayed and an old signature).
# Prints TAP lines (ok / not ok) and the seconds each store took.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
AWS=${AWS:-/usr/bin/aws}
MODEL=${MODEL:-/usr/lib/python3/dist-packages/awscli/botocore/data/stepfunctions/2016-11-23/service-2.json}
REGION=us-east-1
ACCOUNT=123456789012

[ -x "$BUILD/genroc" ] || { echo "not ok - $BUILD/genroc is not built"; exit 1; }
[ -x "$AWS" ] || { echo "not ok - no AWS CLI at $AWS (scripts/deps.sh installs Debian's awscli)"; exit 1; }
[ -f "$MODEL" ] || { echo "not ok - no Step Functions service model at $MODEL (Debian's awscli)"; exit 1; }
command -v node >/dev/null || { echo "not ok - no node (scripts/deps.sh installs it)"; exit 1; }
if [ ! -d test/sfn/node_modules/@aws-sdk/client-sfn ] || [ test/sfn/package-lock.json -nt test/sfn/node_modules/.package-lock.json ]; then
  (cd test/sfn && npm ci --no-audit --no-fund --loglevel=error) >&2 || { echo "not ok - npm ci in test/sfn/"; exit 1; }
fi

source test/lib/serve.sh
serve_scratch
openssl rand -hex 32 >"$tmp/server.key"
tap() { # condition-exit-code what
  if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi
}

# The AWS CLI's part: the calls its users script most, one batch.
cli_part() { # store endpoint
  local store=$1 endpoint=$2 out arn exec
  local aws=("$AWS" stepfunctions --endpoint-url "$endpoint" --region $REGION --output json)
  arn="arn:aws:states:$REGION:$ACCOUNT:stateMachine:cli"
  echo '{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"done":true},"End":true}}}' >"$tmp/cli.json"
  out=$("${aws[@]}" create-state-machine --name cli --definition "file://$tmp/cli.json" --role-arn "arn:aws:iam::$ACCOUNT:role/x" 2>&1)
  tap $? "$store: aws stepfunctions create-state-machine"
  [ "$(jq -r .stateMachineArn <<<"$out" 2>/dev/null)" = "$arn" ]; tap $? "$store: the CLI reads the machine's ARN"
  out=$("${aws[@]}" start-execution --state-machine-arn "$arn" --name run1 --input '{"n":1}' 2>&1)
  exec=$(jq -r .executionArn <<<"$out" 2>/dev/null)
  [ "$exec" = "arn:aws:states:$REGION:$ACCOUNT:execution:cli:run1" ]; tap $? "$store: aws stepfunctions start-execution"
  out=$("${aws[@]}" describe-execution --execution-arn "$exec" 2>&1)
  [ "$(jq -r .status <<<"$out" 2>/dev/null)" = SUCCEEDED ] && [ "$(jq -r .output <<<"$out")" = '{"done":true}' ]
  tap $? "$store: aws stepfunctions describe-execution (a Pass machine ends in its start)"
  out=$("${aws[@]}" get-execution-history --execution-arn "$exec" 2>&1)
  [ "$(jq -r '[.events[].type] | join(" ")' <<<"$out" 2>/dev/null)" = "ExecutionStarted PassStateEntered PassStateExited ExecutionSucceeded" ]
  tap $? "$store: aws stepfunctions get-execution-history"
  out=$("${aws[@]}" list-executions --state-machine-arn "$arn" --status-filter SUCCEEDED 2>&1)
  [ "$(jq -r '.executions | length' <<<"$out" 2>/dev/null)" = 1 ]; tap $? "$store: aws stepfunctions list-executions --status-filter"
  out=$("${aws[@]}" describe-execution --execution-arn "${exec}x" 2>&1)
  [[ $? -ne 0 && $out == *ExecutionDoesNotExist* ]]; tap $? "$store: the CLI reads ExecutionDoesNotExist"
  out=$(AWS_SECRET_ACCESS_KEY=wrong"$AWS_SECRET_ACCESS_KEY" "${aws[@]}" list-state-machines 2>&1)
  [[ $? -ne 0 && $out == *InvalidSignatureException* ]]; tap $? "$store: the CLI with a wrong secret is refused"
}

# StartSyncExecution through the CLI: AWS clients send it to the endpoint's
# host prefixed "sync-"; Debian's CLI (2.9.19) has no setting to stop that, so
# its config file loads test/sfn/awscli_plugin/ (a newer CLI reads
# disable_host_prefix_injection, set too).
cli_sync_part() { # store endpoint
  local store=$1 endpoint=$2 out arn
  arn="arn:aws:states:$REGION:$ACCOUNT:stateMachine:cli"
  printf '[default]\ndisable_host_prefix_injection = true\n[plugins]\ncli_legacy_plugin_path = %s\ngenroc_no_host_prefix = genroc_no_host_prefix\n' \
    "$ROOT/test/sfn/awscli_plugin" >"$tmp/cli-sync.cfg"
  out=$(AWS_CONFIG_FILE="$tmp/cli-sync.cfg" "$AWS" stepfunctions --endpoint-url "$endpoint" --region $REGION --output json \
    start-sync-execution --state-machine-arn "$arn" --name sync1 --input '{"n":2}' 2>&1)
  [ "$(jq -r .status <<<"$out" 2>/dev/null)" = SUCCEEDED ] && [ "$(jq -r .output <<<"$out")" = '{"done":true}' ] &&
    [ "$(jq -r .executionArn <<<"$out")" = "arn:aws:states:$REGION:$ACCOUNT:execution:cli:sync1" ]
  tap $? "$store: aws stepfunctions start-sync-execution (the sync- host prefix turned off by the CLI's config)"
}

# The CLI's delete-state-machine and stop-execution --error --cause (the
# aliases' actions are newer than Debian's awscli: aliases_test.mjs has them).
cli_delete_stop() { # store endpoint
  local store=$1 endpoint=$2 out arn exec
  local aws=("$AWS" stepfunctions --endpoint-url "$endpoint" --region $REGION --output json)
  arn="arn:aws:states:$REGION:$ACCOUNT:stateMachine:cli-hold"
  echo '{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}' >"$tmp/hold.json"
  "${aws[@]}" create-state-machine --name cli-hold --definition "file://$tmp/hold.json" --role-arn "arn:aws:iam::$ACCOUNT:role/x" >/dev/null 2>&1
  exec=$("${aws[@]}" start-execution --state-machine-arn "$arn" --name held 2>&1 | jq -r .executionArn 2>/dev/null)
  "${aws[@]}" stop-execution --execution-arn "$exec" --error Ops.Stopped --cause "by the CLI" >/dev/null 2>&1
  out=$("${aws[@]}" describe-execution --execution-arn "$exec" 2>&1)
  [ "$(jq -r '[.status, .error, .cause] | join(" ")' <<<"$out" 2>/dev/null)" = "ABORTED Ops.Stopped by the CLI" ]
  tap $? "$store: aws stepfunctions stop-execution --error --cause"
  "${aws[@]}" delete-state-machine --state-machine-arn "$arn" >/dev/null 2>&1
  tap $? "$store: aws stepfunctions delete-state-machine"
  out=$("${aws[@]}" start-execution --state-machine-arn "$arn" 2>&1)
  [[ $? -ne 0 && $out == *StateMachineDoesNotExist* ]]; tap $? "$store: the CLI's start of a deleted state machine is refused"
}

# Every test/sfn/*_test.mjs, one node process each (common.mjs is their shared part).
run_sdk_tests() { # store
  local f
  for f in test/sfn/*_test.mjs; do
    node "$f" 2>"$tmp/node.err" || { cat "$tmp/node.err" >&2; echo "not ok - $1: $(basename "$f") ended with an error (its log above)"; }
  done
}

run_store() { # name (sqlite|postgres) database
  local name=$1 db=$2 started=$SECONDS
  local log=$tmp/genroc-$name.log ops reader
  ops=$("$BUILD/genroc" token create --database "$db" --name sfn-ops --permissions operator,worker --sigv4 \
    --sigv4-key-file "$tmp/server.key" --json 2>>"$log")
  reader=$("$BUILD/genroc" token create --database "$db" --name sfn-reader --permissions reader --sigv4 \
    --sigv4-key-file "$tmp/server.key" --json 2>>"$log")
  if [[ $(jq -r .access_key_id <<<"$ops") != GRK* || $(jq -r .access_key_id <<<"$reader") != GRK* ]]; then
    echo "not ok - $name: genroc token create --sigv4"; cat "$log" >&2; return
  fi
  echo "ok - $name: genroc token create --sigv4 issues key pairs"
  serve_start "$log" --database "$db" --auth --sigv4-key-file "$tmp/server.key" \
    --sfn-account $ACCOUNT --worker-id "sfn-$name" --tick-interval 100ms --poll-interval 100ms
  local server=$SERVE_PID endpoint="http://127.0.0.1:$SERVE_PORT"
  AWS_ACCESS_KEY_ID=$(jq -r .access_key_id <<<"$ops") AWS_SECRET_ACCESS_KEY=$(jq -r .secret_access_key <<<"$ops") \
    AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null cli_part "$name" "$endpoint"
  AWS_ACCESS_KEY_ID=$(jq -r .access_key_id <<<"$ops") AWS_SECRET_ACCESS_KEY=$(jq -r .secret_access_key <<<"$ops") \
    AWS_SHARED_CREDENTIALS_FILE=/dev/null cli_sync_part "$name" "$endpoint"
  AWS_ACCESS_KEY_ID=$(jq -r .access_key_id <<<"$ops") AWS_SECRET_ACCESS_KEY=$(jq -r .secret_access_key <<<"$ops") \
    AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null cli_delete_stop "$name" "$endpoint"
  ENDPOINT=$endpoint REGION=$REGION ACCOUNT=$ACCOUNT MODEL=$MODEL STORE=$name \
    KEY_ID=$(jq -r .access_key_id <<<"$ops") SECRET=$(jq -r .secret_access_key <<<"$ops") \
    READER_ID=$(jq -r .access_key_id <<<"$reader") READER_SECRET=$(jq -r .secret_access_key <<<"$reader") \
    NODE_NO_WARNINGS=1 run_sdk_tests "$name"
  ! grep -q "$(jq -r .secret_access_key <<<"$ops")" "$log"; tap $? "$name: the server's log never holds a secret"
  kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null
  echo "# $name: $((SECONDS - started)) s"
}

run_store sqlite "$tmp/sfn.db"
serve_on_postgres genroc_sfn run_store
