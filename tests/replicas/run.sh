#!/usr/bin/env bash
# Two `skillserve serve --http` replicas behind HAProxy on loopback, with
# packaging/haproxy/haproxy.cfg as committed (tests/replicas/replicas.py
# says what it checks). HAProxy comes from Debian's package (installed with
# apt-get when missing); the MCP Python SDK from the venv that
# tests/http/run.sh also uses (target/http-tools/py, installed on first use).
#
#   bash tests/replicas/run.sh           the checks (debug build: run
#                                        `cargo build --bin skillserve --example http_load` first)
#   bash tests/replicas/run.sh --bench   the figures: release build, 10,000
#                                        skills, 50 clients (benches/README.md, "Replicas")
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v haproxy >/dev/null; then
    echo "installing Debian's haproxy"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
fi
python=$(bash tests/http/python-sdk.sh)

build=target/debug profile=""
if [[ ${1:-} == --bench ]]; then
    build=target/release profile=" --release"
fi
for file in "$build/skillserve" "$build/examples/http_load"; do
    [[ -x $file ]] || {
        echo "error: $file is missing: cargo build$profile --bin skillserve --example http_load" >&2
        exit 1
    }
done
exec "$python" tests/replicas/replicas.py "$build/skillserve" "$build/examples/http_load" "$@"
