#!/usr/bin/env bash
# A throw-away PostgreSQL server for the store tests.
#
#   .ci/postgres.sh start DIR   create a cluster in the empty folder DIR, start it, print its DSN
#   .ci/postgres.sh restart DIR restart the server of DIR (fast mode), keeping its data
#   .ci/postgres.sh stop DIR    stop the server of DIR (if running) and delete DIR
#   .ci/postgres.sh pgbouncer-start DIR PGDIR
#                               start PgBouncer in transaction mode in the empty folder DIR,
#                               in front of the server of PGDIR; print the pooler's DSN
#   .ci/postgres.sh pgbouncer-stop DIR
#                               stop that PgBouncer (if running) and delete DIR
#
# The server runs as the unprivileged "postgres" user, listens only on a Unix socket inside DIR
# (no TCP port, so parallel runs never collide) and trusts local connections: it holds nothing
# but test data and disappears with DIR. Debian's "postgresql" package is installed when no
# initdb is found (the CI machine runs as root). Any failure exits non-zero, so "start" inside
# $(...) under "set -e" fails the CI run.
set -euo pipefail

PG_USER=postgres
PG_DB=agentcore_test

die() {
    echo "postgres.sh: $*" >&2
    exit 1
}

pg_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1; then
        dir="$(pg_config --bindir)"
        [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    fi
    # Debian keeps the server programs out of PATH, one folder per major version.
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    done
    dir="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    return 1
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        # runuser keeps no root privileges; -- ends its own options.
        runuser -u "$PG_USER" -- "$@"
    else
        "$@"
    fi
}

install_postgres() {
    [ "$(id -u)" = 0 ] || die "no PostgreSQL found and not root: install Debian's postgresql package"
    echo "postgres.sh: installing Debian's postgresql package" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
}

start() {
    local dir="$1" bindir data
    [ -d "$dir" ] || die "folder $dir does not exist"
    bindir="$(pg_bindir)" || { install_postgres; bindir="$(pg_bindir)"; } ||
        die "initdb not found even after installing postgresql"
    if [ "$(id -u)" = 0 ]; then
        id "$PG_USER" >/dev/null 2>&1 || die "user $PG_USER does not exist"
        chown "$PG_USER" "$dir"
    else
        PG_USER="$(id -un)"
    fi
    chmod 700 "$dir"
    data="$dir/data"
    as_pg "$bindir/initdb" --pgdata="$data" --username="$PG_USER" --auth=trust \
        --encoding=UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; die "initdb failed"; }
    # Only the socket in $dir; fsync off: the data is thrown away at the end anyway.
    as_pg "$bindir/pg_ctl" --pgdata="$data" --log="$dir/server.log" --wait --timeout=60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >&2 || { cat "$dir/server.log" >&2 || true; die "the server did not start"; }
    as_pg "$bindir/createdb" --host="$dir" --username="$PG_USER" "$PG_DB" ||
        die "createdb failed"
    as_pg "$bindir/psql" --host="$dir" --username="$PG_USER" --dbname="$PG_DB" \
        --no-psqlrc --quiet --tuples-only --command="SELECT 1" >/dev/null ||
        die "the server started but does not answer"
    echo "postgresql://$PG_USER@/$PG_DB?host=$dir"
}

restart() {
    local dir="$1" bindir
    [ -f "$dir/data/postmaster.pid" ] || die "no server runs in $dir"
    bindir="$(pg_bindir)" || die "pg_ctl not found"
    if [ "$(id -u)" != 0 ]; then PG_USER="$(id -un)"; fi
    # pg_ctl restart starts the server again with the options it was started with.
    as_pg "$bindir/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --mode=fast --wait \
        --timeout=60 restart >&2 || die "the server did not restart"
}

stop() {
    local dir="$1" bindir
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    if [ -f "$dir/data/postmaster.pid" ] && bindir="$(pg_bindir)"; then
        as_pg "$bindir/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait stop >/dev/null 2>&1 ||
            true
    fi
    rm -rf "$dir"
}

# PgBouncer in transaction mode, as a deployment with many workers runs it: a server
# connection is lent for one transaction only, so nothing of a session (prepared statements
# before PgBouncer 1.21, SET, LISTEN) survives from one transaction to the next. It listens
# only on a Unix socket in its folder (port 6432 names the socket file) and forwards any
# database name to the same name on the server (the "*" entry), so tests may create
# databases of their own. Debian's "pgbouncer" package is installed when it is missing.
PGBOUNCER_PORT=6432

start_pgbouncer() {
    local dir="$1" pgdir="$2"
    [ -d "$dir" ] || die "folder $dir does not exist"
    [ -S "$pgdir/.s.PGSQL.5432" ] || die "no PostgreSQL server listens in $pgdir"
    if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
        [ "$(id -u)" = 0 ] || die "pgbouncer not found and not root: install Debian's pgbouncer package"
        echo "postgres.sh: installing Debian's pgbouncer package" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq pgbouncer >&2
    fi
    local bin
    bin="$(command -v pgbouncer 2>/dev/null || echo /usr/sbin/pgbouncer)"
    [ -x "$bin" ] || die "pgbouncer not found even after installing it"
    if [ "$(id -u)" = 0 ]; then
        chown "$PG_USER" "$dir"
    else
        PG_USER="$(id -un)"
    fi
    chmod 700 "$dir"
    printf '"%s" ""\n' "$PG_USER" >"$dir/users.txt"
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=$pgdir port=5432
[pgbouncer]
pool_mode = transaction
listen_addr =
listen_port = $PGBOUNCER_PORT
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/users.txt
max_client_conn = 1000
default_pool_size = 40
max_db_connections = 150
max_user_connections = 150
server_idle_timeout = 10
server_reset_query =
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
    [ "$(id -u)" = 0 ] && chown "$PG_USER" "$dir/users.txt" "$dir/pgbouncer.ini"
    as_pg "$bin" -d "$dir/pgbouncer.ini" >&2 ||
        { cat "$dir/pgbouncer.log" >&2 || true; die "pgbouncer did not start"; }
    local bindir tries=0
    bindir="$(pg_bindir)" || die "psql not found"
    until as_pg "$bindir/psql" --host="$dir" --port="$PGBOUNCER_PORT" --username="$PG_USER" \
        --dbname="$PG_DB" --no-psqlrc --quiet --tuples-only --command="SELECT 1" >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ "$tries" -ge 50 ]; then
            cat "$dir/pgbouncer.log" >&2 || true
            die "pgbouncer started but does not answer on $dir"
        fi
        sleep 0.1
    done
    echo "postgresql://$PG_USER@/$PG_DB?host=$dir&port=$PGBOUNCER_PORT"
}

stop_pgbouncer() {
    local dir="$1" pid
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    if [ -f "$dir/pgbouncer.pid" ]; then
        pid="$(cat "$dir/pgbouncer.pid")"
        if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    fi
    rm -rf "$dir"
}

case "${1:-}" in
start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
restart) [ $# -eq 2 ] || die "usage: $0 restart DIR"; restart "$2" ;;
stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
pgbouncer-start) [ $# -eq 3 ] || die "usage: $0 pgbouncer-start DIR PGDIR"; start_pgbouncer "$2" "$3" ;;
pgbouncer-stop) [ $# -eq 2 ] || die "usage: $0 pgbouncer-stop DIR"; stop_pgbouncer "$2" ;;
*) die "usage: $0 start DIR | restart DIR | stop DIR | pgbouncer-start DIR PGDIR | pgbouncer-stop DIR" ;;
esac
