#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL 15 for the storage conformance suite.
#
#   scripts/postgres-test.sh start [STATE_DIR]   initdb in a temp dir, start on a free loopback
#                                                port, print the URL and write it to
#                                                STATE_DIR/url (default .build/postgres-test)
#   scripts/postgres-test.sh stop [STATE_DIR]    stop the server and delete its data directory
#   scripts/postgres-test.sh halt [STATE_DIR] [MODE]
#                                                stop the server but keep its data (pg_ctl stop
#                                                -m MODE, default immediate: a crash, recovered
#                                                from the WAL at the next start)
#   scripts/postgres-test.sh resume [STATE_DIR]  start a halted server again, same data and port
#
# initdb refuses to run as root, so as root the cluster belongs to an unprivileged user
# (PG_TEST_USER, default nobody). Tests read the URL from STOREKEEPER_TEST_POSTGRES_URL:
#   export STOREKEEPER_TEST_POSTGRES_URL=$(scripts/postgres-test.sh start)
set -euo pipefail

command=${1:-}
state_dir=${2:-.build/postgres-test}
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
run_user=${PG_TEST_USER:-nobody}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u "$run_user" -- "$@"; else "$@"; fi
}

# Starts the cluster in DATA_DIR on PORT and waits until it accepts connections (after any
# crash recovery). The server outlives this script, so it must not inherit the caller's
# descriptors above 2: a caller that waits for them to close (Foundation's Process on Linux
# watches a socket its child inherits) would otherwise wait for the server to exit.
start_server() {
    local data_dir=$1 port=$2
    local data_root
    data_root=$(dirname "$data_dir")
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-"; fi
        done
        as_owner "$pg_bin/pg_ctl" -D "$data_dir" -l "$data_root/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$data_root -c max_connections=200" \
            start >/dev/null
    ) || { cat "$data_root/server.log" >&2; exit 1; }
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "$command" in
start)
    mkdir -p "$state_dir"
    state_dir=$(cd "$state_dir" && pwd)
    if [ -f "$state_dir/url" ] && [ -f "$state_dir/datadir" ] && \
        as_owner "$pg_bin/pg_ctl" -D "$(cat "$state_dir/datadir")" status >/dev/null 2>&1; then
        cat "$state_dir/url"
        exit 0
    fi
    data_root=$(mktemp -d /tmp/storekeeper-pg.XXXXXX)
    chmod 755 "$data_root"
    if [ "$(id -u)" = 0 ]; then chown "$run_user" "$data_root"; fi
    data_dir="$data_root/data"
    port=$(free_port)
    db_user=storekeeper
    as_owner "$pg_bin/initdb" -D "$data_dir" -U "$db_user" --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
        >"$data_root/initdb.log" 2>&1 || { cat "$data_root/initdb.log" >&2; exit 1; }
    start_server "$data_dir" "$port"
    as_owner "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U "$db_user" storekeeper_test
    url="postgres://$db_user@127.0.0.1:$port/storekeeper_test"
    echo "$data_dir" >"$state_dir/datadir"
    echo "$port" >"$state_dir/port"
    echo "$url" >"$state_dir/url"
    echo "$url"
    ;;
stop)
    if [ -f "$state_dir/datadir" ]; then
        data_dir=$(cat "$state_dir/datadir")
        as_owner "$pg_bin/pg_ctl" -D "$data_dir" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$(dirname "$data_dir")"
        rm -f "$state_dir/datadir" "$state_dir/url" "$state_dir/port"
    fi
    ;;
halt)
    mode=${3:-immediate}
    case "$mode" in smart | fast | immediate) ;; *) echo "halt: MODE is smart, fast or immediate" >&2; exit 2 ;; esac
    as_owner "$pg_bin/pg_ctl" -D "$(cat "$state_dir/datadir")" -m "$mode" -w -t 60 stop >/dev/null
    ;;
resume)
    start_server "$(cat "$state_dir/datadir")" "$(cat "$state_dir/port")"
    ;;
*)
    echo "usage: $0 start|stop|resume [STATE_DIR], $0 halt [STATE_DIR] [smart|fast|immediate]" >&2
    exit 2
    ;;
esac
