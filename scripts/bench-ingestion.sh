#!/usr/bin/env bash
# Realistic HTTP workload: many customers, distinct notifications spread over them, GETs of
# random customers; each figure beside its physical reference measured in the same run.
#
# usage: scripts/bench-ingestion.sh STOREKEEPER_BINARY BENCH_BINARY   (both built with -c release)
#
#   1. SQLite's raw durable single-row commit rate in the work directory (`StorekeeperBench
#      raw-commits`: WAL, synchronous=FULL, one INSERT per transaction, one connection).
#   2. `StorekeeperBench prepare-http` seeds a fresh SQLite store with 10,000 customers, each
#      with one purchased monthly subscription (its transaction, renewal info and SUBSCRIBED
#      notification, through StorekeeperIngestion, no HTTP), and
#      signs distinct DID_RENEW notifications spread over them (sized to the run: no body is
#      sent twice). `storekeeper serve` runs over that store on a free loopback port.
#   3. wrk (BENCH_THREADS threads, BENCH_CONNECTIONS keep-alive connections, BENCH_DURATION):
#        POST notification (SQLite)   vs the raw SQLite commit rate
#        GET CustomerInfo of a random customer (public key)   vs nginx serving a file of the
#                                     same size for the same random paths
#      then the same GETs over a fresh store of 100,000 customers.
#   4. A throwaway PostgreSQL (scripts/postgres-test.sh): its raw single-row commit rate from one
#      libpq client, the same 10,000 customers (ANALYZE after each chunk of them, as autovacuum
#      does in production), the server on it, the same POST run.
#   5. A table: requests/s, p50, p99, the reference, the ratio, the target and PASS/MISS; then
#      notes, among them Storekeeper's CPU time and file writes per request in each of its runs.
#
# Environment: BENCH_DURATION (per run, default 10s), BENCH_THREADS (default 2),
# BENCH_CONNECTIONS (default 32), BENCH_NOTIFICATIONS (default: BENCH_POST_CEILING requests/s,
# default 5000, times the duration), BENCH_CUSTOMERS (default 10000), BENCH_LARGE_CUSTOMERS
# (default 100000; 0 skips), BENCH_POSTGRES=0 skips PostgreSQL, BENCH_KEEP=1 keeps the work
# directory (stores, server logs, wrk outputs), BENCH_PERF=1 records a profile of the server in
# each of its runs (BENCH_PERF_CALLGRAPH: perf's call-graph option instead of -g),
# BENCH_STATEMENTS=1 has each SQLite server time its statements (`sqliteStatementProfile`) and
# prints the costliest BENCH_STATEMENTS_TOP (default 15) of each server at the end (keeps the work
# directory). Exit status 1
# when the server fails or dies, not when a target is missed. Run it under the build lock so
# compiles do not perturb it.
set -euo pipefail

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
    echo "usage: $0 STOREKEEPER_BINARY BENCH_BINARY" >&2
    exit 2
fi
binary=$(realpath "$1")
bench=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
duration=${BENCH_DURATION:-10s}
threads=${BENCH_THREADS:-2}
connections=${BENCH_CONNECTIONS:-32}
customers=${BENCH_CUSTOMERS:-10000}
large_customers=${BENCH_LARGE_CUSTOMERS:-100000}
case "$duration" in
*ms) seconds=1 ;;
*s) seconds=${duration%s} ;;
*m) seconds=$((${duration%m} * 60)) ;;
*h) seconds=$((${duration%h} * 3600)) ;;
*) seconds=$duration ;;
esac
notifications=${BENCH_NOTIFICATIONS:-$((${BENCH_POST_CEILING:-5000} * seconds))}

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench-ingestion: install ${missing[*]} (Debian packages) first" >&2
        exit 1
    fi
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
nginx_binary=$(command -v nginx || echo /usr/sbin/nginx)
with_postgres=${BENCH_POSTGRES:-1}
if [ "$with_postgres" != 0 ] && [ ! -x "${PG_BIN:-/usr/lib/postgresql/15/bin}/initdb" ]; then
    echo "bench-ingestion: no PostgreSQL 15 binaries: skipping PostgreSQL" >&2
    with_postgres=0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/storekeeper-bench-ingestion.XXXXXX")
server_pid=""
nginx_pid=""
postgres_started=""
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
    stop_process "$nginx_pid"
    if [ -n "$postgres_started" ]; then "$here/postgres-test.sh" stop "$work/postgres" || true; fi
    if [ "${BENCH_KEEP:-0}" = 1 ] || [ "${BENCH_PERF:-0}" = 1 ] || [ "${BENCH_STATEMENTS:-0}" = 1 ]; then echo "bench-ingestion: kept $work" >&2; else rm -rf "$work"; fi
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
# fetch URL KEY OUT: GET with the key; fails unless 200.
fetch() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sys, urllib.request
request = urllib.request.Request(sys.argv[1], headers={"Authorization": f"Bearer {sys.argv[2]}"})
with urllib.request.urlopen(request, timeout=10) as response:
    open(sys.argv[3], "wb").write(response.read())
EOF
}

port=$(free_port)
admin_key="sk_adm_bench_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
# grouping LABEL: the group-commit writer's counters from /metrics (how many ingestions shared a
# commit), kept as a note beside the figures.
grouping() {
    local line
    line=$(python3 - "http://127.0.0.1:$port/metrics" "$1" <<'EOF'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
value = lambda name: int(re.search(r"^" + name + r" (\d+)$", text, re.M).group(1))
batches, groups = value("storekeeper_ingestion_batches_total"), value("storekeeper_ingestion_groups_total")
print(f"{sys.argv[2]}: {batches} ingestions in {groups} commits ({batches / max(groups, 1):.1f} per commit,"
      f" largest {value('storekeeper_ingestion_largest_group')})")
EOF
) || line="$1: the writer's counters could not be read from /metrics"
    notes+=("$line")
}

# start_server DATABASE_URL LOG: storekeeper serve over the store, as bench-http.sh runs it.
statement_profiles=()
start_server() {
    local profile=""
    if [ "${BENCH_STATEMENTS:-0}" = 1 ] && [[ $1 == sqlite:* ]]; then
        profile="$work/statements-$(basename "$2" .log).tsv"
        statement_profiles+=("$profile")
    fi
    STOREKEEPER_SQLITE_STATEMENT_PROFILE="$profile" \
        STOREKEEPER_LISTEN="127.0.0.1:$port" \
        STOREKEEPER_DATABASE_URL="$1" \
        STOREKEEPER_DATA_DIRECTORY="$work" \
        STOREKEEPER_ADMIN_KEY="$admin_key" \
        STOREKEEPER_ACCESS_LOG=false \
        STOREKEEPER_WEBHOOK_WORKER=false \
        "$binary" serve 2>"$2" &
    server_pid=$!
    if ! wait_for "http://127.0.0.1:$port/healthz"; then
        echo "bench-ingestion: the server did not start" >&2
        cat "$2" >&2
        exit 1
    fi
}
# stop_server LOG: stops it; a server that died fails the bench; errors it logged are noted.
stop_server() {
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "bench-ingestion: the server died during the benchmark" >&2
        tail -n 20 "$1" >&2
        exit 1
    fi
    stop_process "$server_pid"
    server_pid=""
    local count
    count=$(grep -ci 'error' "$1" || true)
    if [ "$count" -gt 0 ]; then
        notes+=("server log $(basename "$1"): $count lines mention an error; first: $(grep -i -m1 'error' "$1" | cut -c1-300)")
    fi
}

# nginx answers every customer path with one file the size of a CustomerInfo (www/customer.json,
# rewritten before each GET run), so it is driven by the same Lua script as Storekeeper.
mkdir -p "$work/www" "$work/nginx"
chmod 711 "$work"
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
    server {
        listen 127.0.0.1:$nginx_port;
        root $work/www;
        default_type application/json;
        location /v1/apps/bench/customers/ { try_files /customer.json =404; }
    }
}
EOF
echo '{}' >"$work/www/customer.json"
chmod -R a+rX "$work/www"
"$nginx_binary" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
if ! wait_for "http://127.0.0.1:$nginx_port/v1/apps/bench/customers/x"; then
    echo "bench-ingestion: nginx did not start" >&2
    cat "$work/nginx/error.log" >&2
    exit 1
fi

results=()
references=()
notes=()
# cpu_ticks PID: the process's user and system CPU time so far, in clock ticks, and the bytes it
# has written to files ("USER SYSTEM WRITTEN"; fields 14 and 15 of /proc/PID/stat, counted after
# the command name, which may hold spaces, and wchar of /proc/PID/io, "-" where that cannot be
# read). wchar counts the bytes write calls were given (answers go by sendmsg: not counted);
# write_bytes counts whole page-cache folios dirtied, and gave 840 KiB for a POST whose write
# calls carried 194 KiB.
# SQLite's log and checkpoints are the server's own writes; a PostgreSQL server's are the
# database's, not counted.
cpu_ticks() {
    local written
    written=$(awk '/^wchar:/ { print $2 }' "/proc/$1/io" 2>/dev/null) || true
    echo "$(sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12, $13 }') ${written:--}"
}
# cpu_note LABEL BEFORE AFTER WRK_OUTPUT: Storekeeper's CPU time and writes per request during a run, and the
# rate the machine's cores would allow at that cost with nothing else running (wrk, and on
# PostgreSQL the database, take their share too): the ceiling a ratio target is measured against.
cpu_note() {
    notes+=("$(python3 - "$@" "$(getconf CLK_TCK)" "$(nproc)" <<'EOF'
import re, sys
label, before, after, text, ticks, cores = sys.argv[1:7]
user, system = (int(a) - int(b) for a, b in zip(after.split()[:2], before.split()[:2]))
written = None if "-" in (after.split()[2], before.split()[2]) else int(after.split()[2]) - int(before.split()[2])
match = re.search(r"^\s*(\d+) requests in", text, re.M)
requests = int(match.group(1)) if match else 0
if requests == 0:
    print(f"{label}: no requests, no CPU figure")
else:
    seconds = lambda ticks_used: ticks_used / int(ticks) / requests * 1000
    per = seconds(user + system)
    print(f"{label}: Storekeeper's CPU {per:.3f} ms a request (user {seconds(user):.3f},"
          f" system {seconds(system):.3f}); {cores} cores allow at most {int(cores) / per * 1000:.0f}/s"
          " at that cost (wrk's and a database server's shares not counted)"
          + ("" if written is None else f"; it wrote {written / requests / 1024:.1f} KiB to files a request"))
EOF
)")
}
# run LABEL URL REFERENCE_NAME REFERENCE_VALUE MIN_RATIO MAX_P99_MS WRK_OPTION… [-- SCRIPT_ARGUMENT…]
# One wrk run; keeps a summary line. REFERENCE_VALUE "wrk:LABEL" takes another run's requests/s;
# MIN_RATIO and MAX_P99_MS "-" mean no target.
declare -A rates
run() {
    local label=$1 url=$2 reference_name=$3 reference=$4 min_ratio=$5 max_p99=$6
    shift 6
    local options=() script_arguments=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        options+=("$1")
        shift
    done
    [ $# -gt 0 ] && script_arguments=("$@")
    local output file perf_pid=""
    # BENCH_PERF=1: a call-graph profile of the server during each of its runs, kept beside the
    # wrk outputs (implies BENCH_KEEP=1), for `perf report -i FILE`. BENCH_PERF_CALLGRAPH replaces
    # perf's `-g` (frame pointers, which lose the stacks of Swift's runtime and the C libraries):
    # e.g. "--call-graph dwarf,16384".
    if [ "${BENCH_PERF:-0}" = 1 ] && [ -n "$server_pid" ] && [[ $url != *":$nginx_port"* ]]; then
        # shellcheck disable=SC2086 # the call-graph option is two words when given (--call-graph dwarf)
        perf record -q -F 499 ${BENCH_PERF_CALLGRAPH:--g} -p "$server_pid" -o "$work/perf-$(echo "$label" | tr -c 'a-zA-Z0-9' '_').data" \
            -- sleep "${duration%s}" >/dev/null 2>&1 &
        perf_pid=$!
    fi
    local cpu_before=""
    if [ -n "$server_pid" ] && [[ $url != *":$nginx_port"* ]]; then cpu_before=$(cpu_ticks "$server_pid"); fi
    output=$(wrk --latency -t "$threads" -c "$connections" -d "$duration" "${options[@]}" "$url" \
        "${script_arguments[@]}")
    if [ -n "$cpu_before" ]; then cpu_note "$label" "$cpu_before" "$(cpu_ticks "$server_pid")" "$output"; fi
    if [ -n "$perf_pid" ]; then wait "$perf_pid" || true; fi
    file="$work/wrk-$(echo "$label" | tr -c 'a-zA-Z0-9' '_').txt"
    echo "$output" >"$file"
    if [[ $reference == wrk:* ]]; then reference=${rates[${reference#wrk:}]:-0}; fi
    local line
    line=$(
        LABEL=$label REFERENCE_NAME=$reference_name REFERENCE=$reference MIN_RATIO=$min_ratio MAX_P99=$max_p99 \
            python3 - "$output" <<'EOF'
import os, re, sys
text = sys.argv[1]
def value(pattern, default="?"):
    match = re.search(pattern, text, re.M)
    return match.group(1) if match else default
def milliseconds(figure):
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", figure)
    if not match:
        return None
    return float(match.group(1)) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[match.group(2)]
rps = float(value(r"^Requests/sec:\s+([\d.]+)", "0"))
p50, p99 = (value(rf"^\s+{p}%\s+(\S+)") for p in ("50", "99"))
errors = value(r"bench-lua: non200=(\d+)")
repeats = value(r"repeats=(\d+)", "0")
reference = float(os.environ["REFERENCE"] or 0)
ratio = rps / reference if reference else 0
verdicts, targets = [], []
if os.environ["MIN_RATIO"] != "-":
    minimum = float(os.environ["MIN_RATIO"])
    targets.append(f">={minimum * 100:.0f}%")
    verdicts.append(ratio >= minimum)
if os.environ["MAX_P99"] != "-":
    limit = float(os.environ["MAX_P99"])
    targets.append(f"p99<{limit:g}ms")
    p99ms = milliseconds(p99)
    verdicts.append(p99ms is not None and p99ms < limit)
if errors not in ("0", "?"):
    verdicts.append(False)
verdict = ("PASS" if all(verdicts) else "MISS") if verdicts else ""
reference_text = f"{reference:.0f} {os.environ['REFERENCE_NAME']}" if os.environ["REFERENCE_NAME"] else ""
ratio_text = f"{ratio * 100:.0f}%" if reference else ""
notes = []
socket = re.search(r"Socket errors: (.*)", text)
if socket:
    notes.append(socket.group(1))
first = re.search(r"bench-lua: first non200: (.*)", text)
if first:
    notes.append("first non200: " + first.group(1)[:160])
if repeats != "0":
    notes.append(f"{repeats} bodies sent again: raise BENCH_NOTIFICATIONS")
print(f"{os.environ['LABEL']:<34} {rps:>8.0f} {p50:>9} {p99:>9} {reference_text:>26} {ratio_text:>6} "
      f"{' '.join(targets):>16} {verdict:>4} {errors:>7}" + (f"  ({'; '.join(notes)})" if notes else ""))
print(f"RATE {rps:.0f}")
EOF
    )
    rates[$label]=$(echo "$line" | sed -n 's/^RATE //p')
    results+=("$(echo "$line" | grep -v '^RATE ')")
}

echo "bench-ingestion: wrk $threads threads, $connections keep-alive connections, $duration per run;" \
    "$notifications distinct notifications"
sqlite_reference=$("$bench" raw-commits --sqlite "$work")
references+=("raw SQLite commits (WAL, synchronous=FULL, 1 INSERT each, 1 connection): $sqlite_reference/s")

# --- SQLite, $customers customers: POST notifications, then GETs of random customers.
"$bench" prepare-http --database "sqlite:$work/small.sqlite" --customers "$customers" \
    --notifications "$notifications" --out "$work/small"
public_key=$(sed -n 's/^PUBLIC_KEY=//p' "$work/small/keys.env")
start_server "sqlite:$work/small.sqlite" "$work/server-small.log"
# The seeded purchase has expired by now: its renewals are what the notifications bring.
fetch "http://127.0.0.1:$port/v1/apps/bench/customers/user-0" "$public_key" "$work/check.json"
grep -q '"customerId"' "$work/check.json" || { echo "bench-ingestion: no CustomerInfo for user-0" >&2; exit 1; }
run "POST notification, SQLite" "http://127.0.0.1:$port/v1/apps/bench/notifications/appstore" \
    "raw SQLite commits/s" "$sqlite_reference" 0.40 20 \
    -s "$here/bench/post-stream.lua" -- "$work/small/notifications.jsonl" "$threads"
grouping "POST notification, SQLite"
# nginx's file: the answer for a random customer after the notifications.
fetch "http://127.0.0.1:$port/v1/apps/bench/customers/user-$((RANDOM % customers))" "$public_key" \
    "$work/www/customer.json"
small_size=$(wc -c <"$work/www/customer.json")
chmod a+r "$work/www/customer.json"
run "GET same-size file: nginx ($customers)" "http://127.0.0.1:$nginx_port" "" 0 - - \
    -H "Authorization: Bearer $public_key" -s "$here/bench/get-random.lua" -- \
    "$work/small/customers.txt" /v1/apps/bench/customers/
run "GET CustomerInfo ($customers)" "http://127.0.0.1:$port" "nginx req/s" "wrk:GET same-size file: nginx ($customers)" \
    0.50 5 -H "Authorization: Bearer $public_key" -s "$here/bench/get-random.lua" -- \
    "$work/small/customers.txt" /v1/apps/bench/customers/
stop_server "$work/server-small.log"

# --- SQLite, $large_customers customers: GETs only.
if [ "$large_customers" -gt 0 ]; then
    "$bench" prepare-http --database "sqlite:$work/large.sqlite" --customers "$large_customers" \
        --notifications 0 --out "$work/large"
    large_key=$(sed -n 's/^PUBLIC_KEY=//p' "$work/large/keys.env")
    start_server "sqlite:$work/large.sqlite" "$work/server-large.log"
    fetch "http://127.0.0.1:$port/v1/apps/bench/customers/user-$((RANDOM % large_customers))" "$large_key" \
        "$work/www/customer.json"
    large_size=$(wc -c <"$work/www/customer.json")
    chmod a+r "$work/www/customer.json"
    run "GET same-size file: nginx ($large_customers)" "http://127.0.0.1:$nginx_port" "" 0 - - \
        -H "Authorization: Bearer $large_key" -s "$here/bench/get-random.lua" -- \
        "$work/large/customers.txt" /v1/apps/bench/customers/
    run "GET CustomerInfo ($large_customers)" "http://127.0.0.1:$port" "nginx req/s" \
        "wrk:GET same-size file: nginx ($large_customers)" 0.50 5 -H "Authorization: Bearer $large_key" \
        -s "$here/bench/get-random.lua" -- "$work/large/customers.txt" /v1/apps/bench/customers/
    stop_server "$work/server-large.log"
fi

# --- PostgreSQL, $customers customers: POST notifications (the same bodies, a fresh database).
if [ "$with_postgres" != 0 ]; then
    postgres_started=1
    postgres_url=$("$here/postgres-test.sh" start "$work/postgres")
    postgres_reference=$("$bench" raw-commits --postgres "$postgres_url")
    references+=("raw PostgreSQL commits (1 libpq client, 1 INSERT each, autocommit): $postgres_reference/s")
    "$bench" prepare-http --database "$postgres_url" --customers "$customers" \
        --notifications "$notifications" --out "$work/small" --seed-only
    start_server "$postgres_url" "$work/server-postgres.log"
    fetch "http://127.0.0.1:$port/v1/apps/bench/customers/user-0" "$public_key" "$work/check.json"
    run "POST notification, PostgreSQL" "http://127.0.0.1:$port/v1/apps/bench/notifications/appstore" \
        "raw PostgreSQL commits/s" "$postgres_reference" 0.40 - \
        -s "$here/bench/post-stream.lua" -- "$work/small/notifications.jsonl" "$threads"
    grouping "POST notification, PostgreSQL"
    stop_server "$work/server-postgres.log"
fi

echo
printf '%-34s %8s %9s %9s %26s %6s %16s %4s %7s\n' "run" "req/s" "p50" "p99" "reference" "ratio" "target" "" \
    "non200"
printf '%s\n' "${results[@]}"
printf '%s\n' "${references[@]}"
[ ${#notes[@]} -gt 0 ] && printf '%s\n' "${notes[@]}"
echo "(CustomerInfo $small_size bytes at $customers customers${large_size:+, $large_size bytes at $large_customers};" \
    "POSTs are DID_RENEW notifications, each distinct, spread over the customers)"
# SQLite's own time per statement text over each server's life (its POST and GET runs together,
# and the few requests between them): the time from a statement's first step to its reset, which
# includes our code between steps.
for profile in "${statement_profiles[@]}"; do
    [ -s "$profile" ] || continue
    echo
    echo "SQLite statements of $(basename "$profile" .tsv) (the costliest ${BENCH_STATEMENTS_TOP:-15} of" \
        "$(($(wc -l <"$profile") - 1)); all in $profile):"
    head -n "$((${BENCH_STATEMENTS_TOP:-15} + 1))" "$profile" | awk -F'\t' '{ printf "%10s %8s %8s  %s\n", $1, $2, $3, substr($4, 1, 150) }'
done
