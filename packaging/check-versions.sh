#!/usr/bin/env bash
# Checks that nothing states a version other than Cargo.toml's: the bundle
# manifest must carry the same one (packaging/mcpb/build.sh stamps it into the
# bundles anyway) and pyproject.toml must take it from Cargo.toml (dynamic).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version=$(cargo_version)
python3 - "$PACKAGING_ROOT" "$version" <<'PY'
import json, re, sys
root, version = sys.argv[1:]
problems = []
manifest = json.load(open(f"{root}/packaging/mcpb/manifest.json", encoding="utf-8"))
if manifest["version"] != version:
    problems.append(f"packaging/mcpb/manifest.json says {manifest['version']}, Cargo.toml {version}")
pyproject = open(f"{root}/pyproject.toml", encoding="utf-8").read()
project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
if re.search(r"^version\s*=", project, re.M) or not re.search(r'^dynamic\s*=\s*\[[^]]*"version"', project, re.M):
    problems.append('pyproject.toml must not set a version: use dynamic = ["version"] (maturin reads Cargo.toml)')
if problems:
    sys.exit("version mismatch:\n  " + "\n  ".join(problems))
print(f"versions: {version} in Cargo.toml, the bundle manifest and (dynamically) the wheel")
PY
