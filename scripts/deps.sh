#!/usr/bin/env bash
# deps.sh — installs the Debian 12 packages genroc builds and tests with.
# Idempotent: does nothing when they are all installed.  Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git ca-certificates curl procps
  postgresql-15 postgresql-server-dev-15 libpq-dev postgresql-15-pgtap
  libtap-parser-sourcehandler-pgtap-perl
  libsqlite3-dev sqlite3
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libssl-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev
  python3
  fiu-utils
  clang libclang-rt-14-dev
  ccache
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
