# lib.sh — what the SQL benchmarks that run "ways" in turns share (sourced,
# with ROOT set to the checkout): their throwaway cluster and their rounds.

# A throwaway cluster in a fresh WORK directory (its name from $1), its
# settings exported (test/pgcluster.sh), stopped and removed at exit.
bench_cluster() { # name
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  chmod 755 "$WORK"
  eval "$(bash "$ROOT/test/pgcluster.sh" start "$WORK/pg")"
  trap 'bash "$ROOT/test/pgcluster.sh" stop "$GENROC_PGDIR" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
}

# SQL around a measured part of one session (superuser: it reads its own
# /proc): mark_sql notes the WAL position, the backend's CPU ticks and the
# time; rates_sql N prints "per_second cpu_us_per_unit wal_bytes_per_unit"
# for N units since the mark.
mark_sql() {
  cat <<'SQL'
CREATE TEMP TABLE m AS SELECT pg_current_wal_insert_lsn() AS lsn,
  (SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint
   FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) AS ticks, clock_timestamp() AS t;
SQL
}
rates_sql() { # N
  cat <<SQL
SELECT round($1 / extract(epoch FROM clock_timestamp() - m.t)) || ' ' ||
  round(((SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint
          FROM pg_read_file('/proc/' || pg_backend_pid() || '/stat') s) - m.ticks) * 1e6 / 100 / $1, 1) || ' ' ||
  round((pg_current_wal_insert_lsn() - m.lsn) / $1)
FROM m;
SQL
}

# The median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# ROUNDS rounds, each running `FN WAY` for every way in turn (so all ways
# meet the same load on a shared machine); FN prints "rate cpu_us wal_bytes"
# per UNIT.  Prints each run, then per way its medians, which it also
# leaves in MEDIAN[way] ("rate cpu wal").
declare -A MEDIAN
ways_in_rounds() { # "way ..." FN UNIT
  local ways=$1 fn=$2 unit=$3 r way out rate cpu wal
  local -A res=()
  printf '%-5s %5s | %9s %13s %11s\n' way round "$unit"s/s "cpu/$unit us" "WAL/$unit"
  for r in $(seq 1 "$ROUNDS"); do
    for way in $ways; do
      out=$("$fn" "$way")
      read -r rate cpu wal <<<"$out"
      printf '%-5s %5d | %9s %13s %11s\n' "$way" "$r" "$rate" "$cpu" "$wal"
      res[$way]+="$rate $cpu $wal"$'\n'
    done
  done
  for way in $ways; do
    rate=$(printf '%s' "${res[$way]}" | awk 'NF {print $1}' | median)
    cpu=$(printf '%s' "${res[$way]}" | awk 'NF {print $2}' | median)
    wal=$(printf '%s' "${res[$way]}" | awk 'NF {print $3}' | median)
    printf 'median %-5s: %s %ss/s, %s us server CPU per %s, %s WAL bytes per %s\n' \
      "$way" "$rate" "$unit" "$cpu" "$unit" "$wal" "$unit"
    MEDIAN[$way]="$rate $cpu $wal"
  done
}
