#!/usr/bin/env bash
# deps.sh — installs the Debian 12 packages genroc builds and tests with
# (`--product`: only those `make` needs).
# Idempotent: does nothing when they are all installed.  Needs root (or sudo).
set -euo pipefail

# What `make` needs to build the product (extension, genroc, genctl).
PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  postgresql-server-dev-15 libpq-dev
  libsqlite3-dev sqlite3
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libssl-dev
  libpcre2-dev             # JSONata's regular expressions (core/jsonata_regex.cpp)
  tzdata                   # JSONata's time zones by IANA name (core/jsonata_picture.cpp)
  prometheus-cpp-dev
)
# What the test command needs besides (`--product`: the product's alone).
if [ "${1:-}" != "--product" ]; then
  PACKAGES+=(
    curl procps jq
    postgresql-15 postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
    libgtest-dev libgmock-dev
    python3
    fiu-utils
    pgbouncer
    clang libclang-rt-14-dev
    ccache
    chromium                 # the console suite's browser (test/console/)
    awscli                   # the sfn suite's client and AWS's Step Functions service model (test/sfn/)
  )
  # node and npm: the console suite's test driver (playwright-core) and
  # whoever rebuilds web/dist/; `make` needs neither.  Debian's packages,
  # unless the machine already has a node (another distribution's nodejs
  # bundles its own npm and conflicts with Debian's npm package).
  command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
fi

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
