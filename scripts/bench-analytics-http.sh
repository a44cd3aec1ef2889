#!/usr/bin/env bash
# Analytics requests end to end (issue 13: every request < 200 ms over 1,000,000 transactions
# and 100,000 customers): `StorekeeperBench` fills a SQLite store with the analytics benchmark's
# customers and keeps it (BENCH_KEEP=1), `storekeeper serve` runs over it, and curl asks each
# metric over 3 years by day (the most buckets), 7 times; median and max of the whole request
# (HTTP, authentication, reads, series, JSON or CSV) are printed with the body's size.
#
# usage: scripts/bench-analytics-http.sh STOREKEEPER_BINARY BENCH_BINARY   (release builds)
# Environment: BENCH_ANALYTICS_CUSTOMERS (default 100000).
set -euo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
    echo "usage: $0 STOREKEEPER_BINARY BENCH_BINARY" >&2
    exit 2
fi
binary=$(realpath "$1")
bench=$(realpath "$2")
log=$(mktemp)
BENCH_KEEP=1 BENCH_ONLY=analytics BENCH_ANALYTICS_ENGINE=sqlite "$bench" > "$log"
db=$(sed -n 's/^  kept //p' "$log")
rm -f "$log"
[ -f "$db" ] || { echo "bench-analytics-http: the benchmark kept no store" >&2; exit 1; }
key=sk_adm_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
STOREKEEPER_ADMIN_KEY=$key "$binary" serve --database "$db" --listen 127.0.0.1:$port > "$db.serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$(dirname "$db")"' EXIT
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.1; done
echo "== Analytics requests end to end (SQLite, ${BENCH_ANALYTICS_CUSTOMERS:-100000} customers, 3 years by day) =="
base="http://127.0.0.1:$port/v1/apps/bench-analytics/analytics"
range="from=2024-01-01&to=2026-12-01&environment=Production"
status=0
for query in "overview?environment=Production" "active-subscriptions?$range" "active-trials?$range" "mrr?$range" \
    "mrr-movement?$range" "revenue?$range" "revenue?$range&storefront=DEU" "new-customers?$range" \
    "trial-conversion?$range" "refunds?$range" "family-revocations?$range" "churn?$range" \
    "churn?$range&resolution=month" "churn?$range&format=csv" "retention?$range" "ltv?$range"; do
    times=()
    code=""
    for _ in 1 2 3 4 5 6 7; do
        out=$(curl -s -o "$db.body" -w "%{http_code} %{time_total}" -H "Authorization: Bearer $key" "$base/$query")
        code=${out% *}
        times+=("${out#* }")
    done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    median=$(echo "$sorted" | sed -n 4p)
    max=$(echo "$sorted" | tail -1)
    verdict=$(awk -v m="$max" 'BEGIN { print (m < 0.2) ? "PASS" : "MISS" }')
    [ "$code" = 200 ] || { verdict=FAIL; status=1; }
    printf '  %-70s %s median %6.1f ms, max %6.1f ms, %8d bytes (target < 200 ms) %s\n' "${query/"$range"/3y}" \
        "$code" "$(awk -v t="$median" 'BEGIN { print t * 1000 }')" "$(awk -v t="$max" 'BEGIN { print t * 1000 }')" \
        "$(wc -c < "$db.body")" "$verdict"
done
exit $status
