#!/usr/bin/env bash
# The skills manager in a real browser: Debian's Chromium (installed with
# apt-get when /usr/bin/chromium is missing) driven by Playwright for Python
# (installed into a venv under target/ui-tests on first use), against a real
# `skillserve serve --http`, and inside a host of MCP Apps built on the
# official SDK's AppBridge (npm, under target/ui-tests/apphost) that talks to
# `skillserve` over stdio (target/debug/skillserve: run `cargo build` first).
# One browser session, about ten seconds.
#
#   bash tests/ui/run.sh                 the checks
#   bash tests/ui/run.sh --screenshots   the checks, and docs/images/*.png
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /usr/bin/chromium ]; then
    echo "installing Debian's chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

venv=target/ui-tests/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
    echo "installing Playwright for Python into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==1.65.*"
fi

# The MCP Apps host of the test: the official SDK's AppBridge (npm), bundled
# for the browser with esbuild; installed again when package.json changes.
apphost=target/ui-tests/apphost
mkdir -p "$apphost"
if ! cmp -s tests/ui/apphost/package.json "$apphost/package.json" || [ ! -d "$apphost/node_modules" ]; then
    echo "installing the MCP Apps test host (npm) into $apphost"
    cp tests/ui/apphost/package.json "$apphost/"
    (cd "$apphost" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
cp tests/ui/apphost/bridge.mjs tests/ui/apphost/host.js tests/ui/apphost/host.html tests/ui/apphost/sandbox.html "$apphost/"
(cd "$apphost" && ./node_modules/.bin/esbuild host.js --bundle --format=esm --outfile=host.bundle.js --log-level=warning)

exec "$venv/bin/python" tests/ui/test_app.py "$@"
