# serve.sh — sourced by the suites that drive a real `genroc serve` (test/sfn/run.sh,
# test/console/run.sh): a scratch folder cleaned up on exit with the servers
# started, a free loopback port, a server started and waited for, and a
# PostgreSQL database of its own for a store's run.
#
#   source test/lib/serve.sh      (from the checkout's root; needs BUILD)
#   serve_scratch                 sets tmp (a new folder) and pids; on exit
#                                 stops every server started and removes tmp
#   serve_start LOG ARGS...       `$BUILD/genroc serve --listen 127.0.0.1:PORT
#                                 ARGS...` in the background, its output in LOG;
#                                 returns once GET /healthz answers (10 s at
#                                 most); sets SERVE_PORT and SERVE_PID
#   serve_on_postgres PREFIX FN   when GENROC_TEST_PG_URL names a cluster: a new
#                                 database PREFIX_<pid> from GENROC_TEST_TEMPLATE
#                                 with the extension, `FN postgres URL`, then
#                                 the database dropped

serve_scratch() {
  tmp=$(mktemp -d)
  pids=()
  trap serve_cleanup EXIT
}

serve_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

serve_start() { # log args...
  local log=$1; shift
  SERVE_PORT=$(free_port)
  "$BUILD/genroc" serve --listen "127.0.0.1:$SERVE_PORT" "$@" >>"$log" 2>&1 &
  SERVE_PID=$!
  pids+=("$SERVE_PID")
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$SERVE_PORT/healthz" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

serve_on_postgres() { # prefix fn
  [ -n "${GENROC_TEST_PG_URL:-}" ] || return 0
  local db=$1_$$ base=${GENROC_TEST_PG_URL%/*}
  if psql -X -q "$base/postgres" -c "CREATE DATABASE $db${GENROC_TEST_TEMPLATE:+ TEMPLATE $GENROC_TEST_TEMPLATE}" &&
    psql -X -q "$base/$db" -c "CREATE EXTENSION IF NOT EXISTS genroc"; then
    "$2" postgres "$base/$db"
    psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $db" >/dev/null
  else
    echo "not ok - postgres: could not make database $db"
  fi
}
