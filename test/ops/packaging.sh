#!/usr/bin/env bash
# packaging.sh — what can be checked of the packaging without a container
# engine (docs/operations.md "Packaging"): the YAML parses, the settings the
# docs promise are there, every GENROC_* variable the files set is a flag of
# the binary (the flag table of docs/cli.md "Flags"), and the Dockerfile's build step is a valid
# invocation of this checkout's Makefile.  TAP-style lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
check() { # description command...
  local what=$1; shift
  n=$((n + 1))
  if out=$("$@" 2>&1); then echo "ok $n - $what"; else failed=$((failed + 1)); echo "not ok $n - $what"; echo "$out" | sed 's/^/# /'; fi
}

check "the compose file and the Kubernetes example are valid YAML with the promised settings" python3 - <<'PY'
import yaml, sys
compose = yaml.safe_load(open("deploy/compose.yaml"))
g = compose["services"]["genroc"]
assert g["stop_grace_period"] == "20s", g.get("stop_grace_period")
assert g["build"]["target"] == "runtime"
assert compose["services"]["postgres"]["build"]["target"] == "postgres"
assert "healthcheck" not in g, "the distroless image has no shell for a compose healthcheck"
docs = {d["kind"]: d for d in yaml.safe_load_all(open("deploy/kubernetes.yaml"))}
sts = docs["StatefulSet"]
pod = sts["spec"]["template"]["spec"]
assert pod["terminationGracePeriodSeconds"] >= 20
c = pod["containers"][0]
assert c["readinessProbe"]["httpGet"]["path"] == "/healthz"
env = {e["name"]: e for e in c["env"]}
assert env["GENROC_WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
assert sts["spec"]["serviceName"] == docs["Service"]["metadata"]["name"]
PY

flags_known() {
  local v flag bad=0 table
  table=$(sed -n '/^## Flags$/,/^## /p' docs/cli.md)
  [ -n "$table" ] || { echo "docs/cli.md has no \"## Flags\" section"; return 1; }
  for v in $(grep -ohE 'GENROC_[A-Z_]+' deploy/compose.yaml deploy/kubernetes.yaml | sort -u); do
    flag="--$(tr 'A-Z_' 'a-z-' <<<"${v#GENROC_}")"
    grep -qE "^\| \`$flag\` \|" <<<"$table" || { echo "$v: no flag $flag in the flag table of docs/cli.md"; bad=1; }
  done
  return $bad
}
check "every GENROC_* variable the files set is a flag of genroc" flags_known

check "the runtime image is distroless (no shell, no curl)" \
  grep -qE '^FROM gcr.io/distroless/cc-debian12(:nonroot)? AS runtime' Dockerfile
check "the Dockerfile's build step is a valid make invocation here" \
  make -n -s CMAKE_BUILD_TYPE=Release BUILD=build-image
check "the Dockerfile installs the extension as the Makefile does" \
  make -n -s install SKIP_CXX=1 DESTDIR=/out/postgres
echo "# $n checks, $failed failed"
[ "$failed" -eq 0 ]
