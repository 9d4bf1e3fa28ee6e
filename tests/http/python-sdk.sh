#!/usr/bin/env bash
# Installs the MCP Python SDK (PyPI `mcp`, the version pinned here) into a
# venv under target/http-tools/py on first use, and prints the venv's
# python. Used by tests/http/run.sh and tests/replicas/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

MCP_PY_VERSION="2.3.0"
TOOLS="$(pwd)/target/http-tools"
stamp="$TOOLS/.installed-mcp-$MCP_PY_VERSION"
if [[ ! -e $stamp ]]; then
    python3 -m venv "$TOOLS/py" >&2
    "$TOOLS/py/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION" >&2
    touch "$stamp"
fi
echo "$TOOLS/py/bin/python"
