#!/usr/bin/env bash
# private-pg.sh DIR — a private copy of the system's PostgreSQL 15 (server
# binaries, libraries, share) under DIR, laid out as on the system so the
# binaries find their files relative to themselves.  `make install
# DESTDIR=DIR` then puts the extension there only, and a cluster started
# with DIR's binaries (PGBIN=DIR$(pg_config --bindir)) loads it from there.
# test/run-all.sh does both when GENROC_PG_ROOT=DIR is set: for several
# checkouts tested side by side on one machine.
set -euo pipefail
dir=${1:?usage: private-pg.sh DIR}
bindir=$(pg_config --bindir)           # /usr/lib/postgresql/15/bin
libroot=$(dirname "$bindir")           # /usr/lib/postgresql/15
share=$(pg_config --sharedir)          # /usr/share/postgresql/15
mkdir -p "$dir$(dirname "$libroot")" "$dir$(dirname "$share")"
cp -a "$libroot" "$dir$(dirname "$libroot")/"
cp -a "$share" "$dir$(dirname "$share")/"
# initdb and the server run as "postgres" under root: it must read the copy
chmod -R a+rX "$dir"
echo "private PostgreSQL in $dir (PGBIN=$dir$bindir)"
