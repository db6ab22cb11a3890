#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the tests and benchmarks (not for production).
#   scripts/pg-cluster.sh start DIR   initdb + start a cluster in DIR; prints its URL
#   scripts/pg-cluster.sh stop DIR    stop it (the caller removes DIR)
# It listens on 127.0.0.1 at a free port and on a socket in DIR, with password (SCRAM)
# authentication, and has a role `paperdesk` (password `paperdesk`, CREATEROLE: a test makes
# a least-privileged user) owning a database `paperdesk_test`. initdb and pg_ctl refuse to run as root: as root the cluster runs as
# the `postgres` user that Debian's package creates.
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?a directory}
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
as=()
if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); fi

case "$cmd" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    pw="$dir/pw"
    echo postgres | "${as[@]}" tee "$pw" >/dev/null
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$pw" --auth=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    # Settings for a disposable test cluster: no fsync (its data is thrown away), unless
    # PG_FSYNC=on (benchmarks); PG_SYNC_COMMIT overrides synchronous_commit.
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
        "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c max_connections=200 -c shared_buffers=256MB -c fsync=${PG_FSYNC:-off} -c synchronous_commit=${PG_SYNC_COMMIT:-${PG_FSYNC:-off}} -c full_page_writes=${PG_FSYNC:-off}" \
        >/dev/null
    PGPASSWORD=postgres "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE paperdesk LOGIN CREATEROLE PASSWORD 'paperdesk'" \
        -c "CREATE DATABASE paperdesk_test OWNER paperdesk" >/dev/null
    echo "$port" >"$dir/port"
    echo "postgresql://paperdesk:paperdesk@127.0.0.1:$port/paperdesk_test"
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
