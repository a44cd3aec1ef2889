#!/usr/bin/env bash
# Property-based run of schemathesis against a live `storekeeper serve`.
#
# usage: tests/schemathesis/run.sh STOREKEEPER_BINARY
#
# Builds nothing: starts the given binary on a free loopback port over a temp SQLite database,
# creates the demo app, its keys, its catalog and one signed purchase through the API
# (setup_demo.py), then lets schemathesis generate requests for every operation in
# /openapi.json and check that none answers 5xx and every answer matches the document (status,
# content type, body schema). Stops the server and ends with `schemathesis: N passed, N failed`
# (operations). Exit status 0 only when nothing failed and the server is still healthy.
#
# The whole run happens in a network namespace of its own (loopback only) when `unshare` can
# make one, so that fuzzed URLs in app settings cannot send anything off the machine; the
# webhook worker is off for the same reason.
#
# Environment: SCHEMATHESIS_PYTHON (default .build/interop-venv/bin/python; schemathesis is
# installed into it if missing), SCHEMATHESIS_MAX_EXAMPLES (per operation, default 100),
# SCHEMATHESIS_TIMEOUT (hard limit in seconds, default 600), SCHEMATHESIS_SEED.
set -uo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 STOREKEEPER_BINARY" >&2
    exit 2
fi
binary=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${SCHEMATHESIS_PYTHON:-$root/.build/interop-venv/bin/python}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-100}
hard_limit=${SCHEMATHESIS_TIMEOUT:-600}

if [ -z "${SK_SCHEMATHESIS_IN_NETNS:-}" ]; then
    if [ ! -x "$python" ]; then
        python3 -m venv "$(dirname "$(dirname "$python")")" || exit 1
    fi
    if ! "$python" -c "import schemathesis" 2>/dev/null; then
        "$python" -m pip install --quiet --disable-pip-version-check schemathesis || exit 1
    fi
    if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
        SK_SCHEMATHESIS_IN_NETNS=1 SCHEMATHESIS_PYTHON=$python exec unshare -n bash "$0" "$binary"
    fi
    echo "schemathesis: no private network namespace (unshare -n); running on the host's loopback" >&2
else
    ip link set lo up || exit 1
fi

st=$(dirname "$python")/st
work=$(mktemp -d "${TMPDIR:-/tmp}/storekeeper-schemathesis.XXXXXX")
server_pid=""
stop_server() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid"
        for _ in $(seq 1 150); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid"
        wait "$server_pid" 2>/dev/null
    fi
    server_pid=""
}
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
admin_key="sk_adm_schemathesis_$("$python" -c 'import secrets; print(secrets.token_hex(16))')"

"$binary" ca init "$work/ca" --name "Schemathesis Test" >/dev/null || exit 1
"$binary" secrets new-key "$work/secrets.key" >/dev/null || exit 1

STOREKEEPER_LISTEN="127.0.0.1:$port" \
    STOREKEEPER_DATABASE_URL="sqlite:$work/storekeeper.sqlite" \
    STOREKEEPER_DATA_DIRECTORY="$work" \
    STOREKEEPER_ADMIN_KEY="$admin_key" \
    STOREKEEPER_SECRETS_KEY_FILE="$work/secrets.key" \
    STOREKEEPER_WEBHOOK_WORKER=false \
    STOREKEEPER_THREAD_POOL_SIZE=2 \
    STOREKEEPER_CONNECTION_TIMEOUT_SECONDS=20 \
    "$binary" serve 2>"$work/server.log" &
server_pid=$!

healthy() {
    "$python" - "$base/healthz" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}
for _ in $(seq 1 100); do
    healthy && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
done
if ! healthy; then
    echo "schemathesis: the server did not start" >&2
    tail -n 20 "$work/server.log" >&2
    echo "schemathesis: 0 passed, 1 failed"
    exit 1
fi

keys=$("$python" "$here/setup_demo.py" "$base" "$admin_key" "$binary" "$work/ca") || {
    tail -n 20 "$work/server.log" >&2
    echo "schemathesis: 0 passed, 1 failed"
    exit 1
}
SK_PUBLIC_KEY=$(sed -n 's/^SK_PUBLIC_KEY=//p' <<<"$keys")
SK_SECRET_KEY=$(sed -n 's/^SK_SECRET_KEY=//p' <<<"$keys")
export SK_ADMIN_KEY=$admin_key SK_PUBLIC_KEY SK_SECRET_KEY

seed=()
[ -n "${SCHEMATHESIS_SEED:-}" ] && seed=(--seed "$SCHEMATHESIS_SEED")
export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH} SCHEMATHESIS_HOOKS=storekeeper_hooks
timeout --signal=INT --kill-after=30 "$hard_limit" \
    "$st" --config-file "$here/schemathesis.toml" --no-color run "$base/openapi.json" \
    --max-examples "$max_examples" "${seed[@]}" --report junit --report-junit-path "$work/junit.xml"
st_status=$?

server_alive=1
if ! kill -0 "$server_pid" 2>/dev/null || ! healthy; then
    server_alive=0
    echo "schemathesis: the server crashed or stopped answering /healthz during the run" >&2
    tail -n 40 "$work/server.log" >&2
fi
stop_server
if grep -q '"status":5[0-9][0-9]' "$work/server.log"; then
    echo "schemathesis: 5xx answers in the server's access log:" >&2
    grep '"status":5[0-9][0-9]' "$work/server.log" | head -n 20 >&2
fi

counts=$("$python" - "$work/junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
except (OSError, ET.ParseError):
    print("0 0")
    sys.exit()
failed = sum(1 for case in cases if case.find("failure") is not None or case.find("error") is not None)
print(len(cases) - failed, failed)
EOF
)
read -r passed failed <<<"$counts"
if [ "$server_alive" = 0 ]; then failed=$((failed + 1)); fi
if [ "$st_status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "schemathesis: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
