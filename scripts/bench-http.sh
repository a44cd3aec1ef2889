#!/usr/bin/env bash
# HTTP benchmark: the HTTP core and `storekeeper serve` beside nginx, driven by the same wrk runs.
#
# usage: scripts/bench-http.sh STOREKEEPER_BINARY        core runs, then application runs
#        scripts/bench-http.sh --core HTTPCOREBENCH_BINARY   core runs only
#
# Build with -c release (`swift build -c release --product storekeeper --product HTTPCoreBench`);
# with STOREKEEPER_BINARY, HTTPCoreBench is taken from the same directory.
#
# Core runs: HTTPCoreBench (Sources/HTTPCoreBench: the HTTP core and a router, nothing else)
# serves GET /healthz from an immediate handler (on libmicrohttpd's thread) and
# GET /healthz/async from an async handler (hop to the task pool); nginx serves a static file
# with the same body. Prints requests/s, p99 and the ratio to nginx, all from the same run.
#
# Application runs: starts the given binary on a free loopback port over a temp SQLite
# database, creates an app and a customer with three transactions signed by a test CA
# (`storekeeper ca init`, `storekeeper jws sign`) and ingested through the API, and pre-signs
# distinct App Store notifications (scripts/bench/setup.py). Then wrk, over keep-alive
# connections, drives:
#   GET  /healthz                            storekeeper (the whole application stack)
#   GET  CustomerInfo                        storekeeper vs nginx serving a file of the same size
#   POST App Store notification (ingestion)  storekeeper vs nginx answering the same POSTs with
#                                            a file the size of the server's answer
# and prints requests/s and latency percentiles per run. nginx is the ceiling for HTTP on this
# machine: the difference is what Storekeeper's own work costs. Everything runs on loopback and
# is stopped at the end.
#
# Environment: BENCH_DURATION (per run, default 10s), BENCH_THREADS (wrk threads, default 2),
# BENCH_CONNECTIONS (default 32), BENCH_NOTIFICATIONS (distinct signed bodies, default 2000).
# wrk and nginx (Debian packages) are installed with apt-get when missing and running as root.
set -euo pipefail

usage() {
    echo "usage: $0 STOREKEEPER_BINARY | --core HTTPCOREBENCH_BINARY" >&2
    exit 2
}
binary=""
if [ $# -eq 2 ] && [ "$1" = "--core" ]; then
    [ -x "$2" ] || usage
    core_binary=$(realpath "$2")
elif [ $# -eq 1 ] && [ -x "$1" ]; then
    binary=$(realpath "$1")
    core_binary=$(dirname "$binary")/HTTPCoreBench
    if [ ! -x "$core_binary" ]; then
        echo "bench-http: $core_binary is missing: swift build -c release --product HTTPCoreBench" >&2
        exit 1
    fi
else
    usage
fi
here=$(cd "$(dirname "$0")" && pwd)
duration=${BENCH_DURATION:-10s}
threads=${BENCH_THREADS:-2}
connections=${BENCH_CONNECTIONS:-32}
notifications=${BENCH_NOTIFICATIONS:-2000}

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench-http: install ${missing[*]} (Debian packages) first" >&2
        exit 1
    fi
    apt-get update -qq >/dev/null
    # --no-install-recommends; the package's own nginx service is not used (nor started here).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
nginx_binary=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d "${TMPDIR:-/tmp}/storekeeper-bench-http.XXXXXX")
server_pid=""
core_pid=""
nginx_pid=""
stop_process() {
    local pid=$1
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    stop_process "$server_pid"
    stop_process "$core_pid"
    stop_process "$nginx_pid"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {
    for _ in $(seq 1 100); do
        python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" "$1" 2>/dev/null &&
            return 0
        sleep 0.1
    done
    return 1
}

mkdir -p "$work/www/v1/apps/bench/customers" "$work/www/notify" "$work/nginx"
# The same body HTTPCoreBench answers on /healthz.
printf '%s' '{"status":"ok"}' >"$work/www/healthz"
# nginx's workers run as an unprivileged user: let them reach the files (and nothing else).
chmod 711 "$work"
chmod -R a+rX "$work/www"
nginx_port=$(free_port)
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    client_max_body_size 1m;
    client_body_buffer_size 64k;
    server {
        listen 127.0.0.1:$nginx_port;
        root $work/www;
        default_type application/json;
        # A POST to a static file is 405; answer it with the file instead, as a JSON API would.
        location /notify/ { error_page 405 =200 \$uri; }
    }
}
EOF
"$nginx_binary" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
if ! wait_for "http://127.0.0.1:$nginx_port/healthz"; then
    echo "bench-http: nginx did not start" >&2
    cat "$work/nginx/error.log" >&2
    exit 1
fi

core_port=$(free_port)
"$core_binary" "$core_port" >"$work/core.out" 2>"$work/core.log" &
core_pid=$!
if ! wait_for "http://127.0.0.1:$core_port/healthz"; then
    echo "bench-http: HTTPCoreBench did not start" >&2
    cat "$work/core.log" >&2
    exit 1
fi

results=()
# run LABEL URL WRK_OPTION… [-- SCRIPT_ARGUMENT…]: one wrk run; keeps a summary line.
run() {
    local label=$1 url=$2
    shift 2
    local options=() script_arguments=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        options+=("$1")
        shift
    done
    [ $# -gt 0 ] && script_arguments=("$@")
    local output file
    output=$(wrk --latency -t "$threads" -c "$connections" -d "$duration" "${options[@]}" "$url" \
        "${script_arguments[@]}")
    file="$work/wrk-$(echo "$label" | tr -c 'a-zA-Z0-9' '_').txt"
    echo "$output" >"$file"
    results+=("$(
        LABEL=$label SUMMARY="$file.summary" python3 - "$output" <<'EOF'
import os, re, sys
text = sys.argv[1]
def value(pattern):
    match = re.search(pattern, text, re.M)
    return match.group(1) if match else "?"
rps = value(r"^Requests/sec:\s+([\d.]+)")
p50, p90, p99 = (value(rf"^\s+{p}%\s+(\S+)") for p in ("50", "90", "99"))
errors = value(r"bench-lua: non200=(\d+)")
duplicates = value(r"duplicates=(\d+)")
if errors == "?" and "bench-lua:" not in text:
    # No Lua script: wrk itself counts non-2xx/3xx answers.
    errors = value(r"Non-2xx or 3xx responses: (\d+)")
    errors = "0" if errors == "?" else errors
    duplicates = "-"
with open(os.environ["SUMMARY"], "w") as summary:
    summary.write(f"rps={rps}\np99={p99}\n")
socket = re.search(r"Socket errors: (.*)", text)
total = value(r"^\s+(\d+) requests in")
note = f" ({socket.group(1)})" if socket else ""
print(f"{os.environ['LABEL']:<44} {float(rps) if rps != '?' else 0:>10.0f} {p50:>9} {p90:>9} {p99:>9} "
      f"{total:>9} {errors:>7} {duplicates:>6}{note}")
EOF
    )")
}

# rate LABEL: requests/s of the run with that label (kept by run).
rate() {
    sed -n 's/^rps=//p' "$work/wrk-$(echo "$1" | tr -c 'a-zA-Z0-9' '_').txt.summary"
}
# table: prints the runs kept so far, then forgets them.
table() {
    echo
    printf '%-44s %10s %9s %9s %9s %9s %7s %6s\n' "run" "req/s" "p50" "p90" "p99" "requests" "non200" "dup"
    printf '%s\n' "${results[@]}"
    results=()
}
# p99 LABEL: the 99th percentile latency of the run with that label.
p99() {
    sed -n 's/^p99=//p' "$work/wrk-$(echo "$1" | tr -c 'a-zA-Z0-9' '_').txt.summary"
}
# ratio LABEL REFERENCE_LABEL: "LABEL: NN% of REFERENCE_LABEL's requests/s (p99 … vs …)".
ratio() {
    python3 -c 'import sys; a, b = float(sys.argv[1] or 0), float(sys.argv[2] or 0)
print(f"{sys.argv[3]}: {100 * a / b if b else 0:.0f}% of {sys.argv[4]} requests/s"
      f" (p99 {sys.argv[5]} vs {sys.argv[6]})")' "$(rate "$1")" "$(rate "$2")" "$1" "$2" "$(p99 "$1")" "$(p99 "$2")"
}

if [ -n "$binary" ]; then
    port=$(free_port)
    admin_key="sk_adm_bench_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    "$binary" ca init "$work/ca" --name "Bench Test" >/dev/null
    STOREKEEPER_LISTEN="127.0.0.1:$port" \
        STOREKEEPER_DATABASE_URL="sqlite:$work/storekeeper.sqlite" \
        STOREKEEPER_DATA_DIRECTORY="$work" \
        STOREKEEPER_ADMIN_KEY="$admin_key" \
        STOREKEEPER_ACCESS_LOG=false \
        STOREKEEPER_WEBHOOK_WORKER=false \
        "$binary" serve 2>"$work/server.log" &
    server_pid=$!
    if ! wait_for "http://127.0.0.1:$port/healthz"; then
        echo "bench-http: the server did not start" >&2
        cat "$work/server.log" >&2
        exit 1
    fi
    echo "bench-http: preparing an app, a customer and $notifications signed notifications…"
    python3 "$here/bench/setup.py" "http://127.0.0.1:$port" "$admin_key" "$binary" "$work/ca" "$work" \
        "$notifications"
    public_key=$(sed -n 's/^PUBLIC_KEY=//p' "$work/keys.env")
    cp "$work/customer.json" "$work/www/v1/apps/bench/customers/bench-user"
    cp "$work/notification.json" "$work/www/notify/appstore"
    chmod -R a+rX "$work/www"
fi

echo "bench-http: wrk $threads threads, $connections keep-alive connections, $duration per run"
run "GET /healthz immediate: HTTP core" "http://127.0.0.1:$core_port/healthz"
run "GET /healthz async: HTTP core" "http://127.0.0.1:$core_port/healthz/async"
run "GET /healthz same-size file: nginx" "http://127.0.0.1:$nginx_port/healthz"
stop_process "$core_pid"
core_pid=""
table
ratio "GET /healthz immediate: HTTP core" "GET /healthz same-size file: nginx"
ratio "GET /healthz async: HTTP core" "GET /healthz same-size file: nginx"
echo "(/healthz body $(wc -c <"$work/www/healthz") bytes, the same from both servers)"

[ -n "$binary" ] || exit 0
run "GET /healthz: storekeeper" "http://127.0.0.1:$port/healthz"
run "GET CustomerInfo: storekeeper" "http://127.0.0.1:$port/v1/apps/bench/customers/bench-user" \
    -H "Authorization: Bearer $public_key" -s "$here/bench/count-status.lua"
run "GET same-size file: nginx" "http://127.0.0.1:$nginx_port/v1/apps/bench/customers/bench-user" \
    -H "Authorization: Bearer $public_key" -s "$here/bench/count-status.lua"
run "POST notification: storekeeper" "http://127.0.0.1:$port/v1/apps/bench/notifications/appstore" \
    -s "$here/bench/post-bodies.lua" -- "$work/notifications.jsonl" "$threads"
run "POST notification, same-size answer: nginx" "http://127.0.0.1:$nginx_port/notify/appstore" \
    -s "$here/bench/post-bodies.lua" -- "$work/notifications.jsonl" "$threads"

if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "bench-http: the server died during the benchmark" >&2
    tail -n 20 "$work/server.log" >&2
    exit 1
fi
table
ratio "GET /healthz: storekeeper" "GET /healthz same-size file: nginx"
echo "(CustomerInfo $(wc -c <"$work/customer.json") bytes; notification answer $(wc -c <"$work/notification.json") bytes;" \
    "$notifications distinct signed notifications, later ones sent again count as dup)"
