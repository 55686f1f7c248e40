#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store tests (team memory on PostgreSQL).
#
#   .ci/postgres.sh start   installs the distribution's server when missing, runs initdb in a
#                           temp dir as a non-root user, starts it on loopback (a free port) and a
#                           unix socket in that dir; prints the connection URL as the last line
#   .ci/postgres.sh url     prints the URL of the running cluster
#   .ci/postgres.sh stop    stops it and removes the dir
#
# The cluster: role `mem` with password `mem-test` (scram-sha-256 on TCP, so wrong-password tests
# are real), database `mem_test`, extension pg_trgm available (postgresql-contrib).
# State: $MEM_PG_DIR (default /tmp/mem-pg-ci). Never touches a cluster it did not create.
set -euo pipefail
DIR=${MEM_PG_DIR:-/tmp/mem-pg-ci}
RUN_AS=${MEM_PG_USER:-postgres}

bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

install_server() {
  if bindir >/dev/null; then return 0; fi
  echo "postgres: server not found; installing postgresql + postgresql-contrib" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql postgresql-contrib >&2
}

as_user() {
  if [ "$(id -un)" = "$RUN_AS" ]; then "$@"; else runuser -u "$RUN_AS" -- "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url() {
  [ -f "$DIR/port" ] || { echo "postgres: no cluster in $DIR" >&2; exit 1; }
  echo "postgresql://mem:mem-test@127.0.0.1:$(cat "$DIR/port")/mem_test"
}

start() {
  install_server
  local bin port
  bin=$(bindir)
  if [ -f "$DIR/port" ] && as_user "$bin/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
    url
    return 0
  fi
  if [ "$(id -u)" = 0 ] && ! id "$RUN_AS" >/dev/null 2>&1; then
    useradd --system --no-create-home "$RUN_AS"
  fi
  rm -rf "$DIR"
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown "$RUN_AS" "$DIR"
  port=$(free_port)
  echo "mem-test" > "$DIR/pw"
  [ "$(id -u)" = 0 ] && chown "$RUN_AS" "$DIR/pw"
  as_user "$bin/initdb" -D "$DIR/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; exit 1; }
  as_user "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $DIR -c fsync=off -c max_connections=200" start >&2 \
    || { cat "$DIR/server.log" >&2; exit 1; }
  echo "$port" > "$DIR/port"
  as_user "$bin/psql" -h "$DIR" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >&2 <<SQL
CREATE ROLE mem LOGIN PASSWORD 'mem-test' CREATEDB;
CREATE DATABASE mem_test OWNER mem;
\c mem_test
CREATE EXTENSION IF NOT EXISTS pg_trgm;
SQL
  url
}

stop() {
  local bin
  bin=$(bindir) || exit 0
  if [ -d "$DIR/data" ]; then
    as_user "$bin/pg_ctl" -D "$DIR/data" -m fast -w stop >&2 || true
  fi
  rm -rf "$DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
