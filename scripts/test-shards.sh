#!/usr/bin/env bash
# Runs the Swift test suites (already built) as two processes at once, each serial within
# itself, and optionally a command beside them at a lower priority; every line is prefixed with
# its stream's name; exits non-zero if any of them failed.
#
#   scripts/test-shards.sh POSTGRES_URL [-- COMMAND...]
#
# Why two processes: much of the suite waits (leases running out, killed processes, simulated
# App Stores on real time) and one serial process leaves a core idle through it. Why not
# Swift Testing's own parallelism: inside one process the cooperative thread pool is as wide as
# the machine (two threads here), so a CPU-heavy test starves the loopback servers of the
# tests beside it into client timeouts; two processes are scheduled by the kernel instead.
# `--ignore-lock`: SwiftPM locks the build directory even for a run that builds nothing, which
# would queue the second process behind the first.
# Each shard has a database of its own on the cluster: tests that count what a whole database
# holds (workers visiting every app) must not see the other shard's apps.
# The command beside (make's interop, schemathesis and browser runs) is niced: it takes the
# cores the suites leave idle and cannot starve their timed waits.
set -uo pipefail

url=${1:?usage: scripts/test-shards.sh POSTGRES_URL [-- COMMAND...]}
shift
beside=()
if [ "${1:-}" = "--" ]; then
    shift
    beside=("$@")
fi
swift=${SWIFT:-swift}
# About half of the suite's time each (a clean-clone run: 377 s and 507 s before Entitlements, HTTP
# server and trust tests moved to the first).
first='StorekeeperCLITests|EndToEndTests|EntitlementsTests|HTTPServerTests|AppStoreTrustTests'

# A second database beside the URL's: postgres://user@host:port/db → …/db_shard2.
base=${url%/*}
name=${url##*/}
second="$base/${name}_shard2"
PGOPTIONS="-c client_min_messages=warning" psql "$url" -qc "DROP DATABASE IF EXISTS ${name}_shard2 WITH (FORCE)" \
    -c "CREATE DATABASE ${name}_shard2" >/dev/null ||
    { echo "test-shards: could not create the second shard's database" >&2; exit 1; }

prefix() { sed -u "s/^/[$1] /"; }

run() {
    local label=$1 database=$2
    shift 2
    STOREKEEPER_TEST_POSTGRES_URL=$database "$swift" test --skip-build --ignore-lock --no-parallel "$@" 2>&1 |
        prefix "$label"
}

start=$(date +%s)
run shard1 "$url" --filter "$first" &
one=$!
run shard2 "$second" --skip "$first" &
two=$!
three=
if [ ${#beside[@]} -gt 0 ]; then
    (nice -n 10 "${beside[@]}" 2>&1 | prefix beside) &
    three=$!
fi
wait $one; status_one=$?
wait $two; status_two=$?
status_three=0
if [ -n "$three" ]; then wait "$three"; status_three=$?; fi
psql "$url" -qc "DROP DATABASE IF EXISTS ${name}_shard2 WITH (FORCE)" >/dev/null 2>&1
echo "test-shards: shard1 exit $status_one, shard2 exit $status_two${three:+, beside exit $status_three}," \
    "$(($(date +%s) - start)) s"
[ $status_one -eq 0 ] && [ $status_two -eq 0 ] && [ $status_three -eq 0 ]
