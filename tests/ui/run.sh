#!/usr/bin/env bash
# The skills manager in a real browser: Debian's Chromium (installed with
# apt-get when /usr/bin/chromium is missing) driven by Playwright for Python
# (installed into a venv under target/ui-tests on first use), against a real
# `skillserve serve --http` (target/debug/skillserve: run `cargo build`
# first). One browser session, a few seconds.
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

exec "$venv/bin/python" tests/ui/test_app.py "$@"
