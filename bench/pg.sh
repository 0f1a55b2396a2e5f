# A throwaway PostgreSQL cluster for the benchmarks, on a unix socket in a scratch folder:
# Debian's initdb and pg_ctl, as the postgres user when run as root (the server refuses root).
#
#   source bench/pg.sh; pg_start DIR   # sets $pg_url_base (postgres://postgres@SOCKET) and
#   pg_createdb NAME                   # makes a database, prints its URL
#   pg_stop                            # stops the server (pg_start's caller traps it)

pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
pg_dir=""
pg_url_base=""

pg_as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_start() {
  [ -x "$pg_bin/initdb" ] || { echo "PostgreSQL's initdb is missing: install Debian's postgresql package" >&2; return 1; }
  pg_dir="$1"
  mkdir -p "$pg_dir"
  chmod 711 "$(dirname "$pg_dir")"
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
  pg_as "$pg_bin/initdb" -D "$pg_dir/data" --auth=trust -U postgres -E UTF8 --no-sync > /dev/null
  pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -w -l "$pg_dir/log" \
    -o "-k $pg_dir -c listen_addresses= -p 5432" start > /dev/null
  pg_url_base="postgres://postgres@$(printf '%s' "$pg_dir" | sed 's|/|%2F|g')"
}

pg_createdb() {
  pg_as "$pg_bin/psql" -q -h "$pg_dir" -U postgres -c "CREATE DATABASE $1" > /dev/null
  echo "$pg_url_base/$1"
}

pg_stop() {
  [ -n "$pg_dir" ] && pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop > /dev/null 2>&1 || true
}
