#!/usr/bin/env bash
# Checks that the minimum Rust declared in Cargo.toml (`rust-version`) is
# not below any dependency's own: every crate of Cargo.lock on every
# platform, dev-dependencies included (`cargo metadata`). The other halves of
# the promise: clippy's `incompatible_msrv` lint (on by default, so `cargo
# clippy -D warnings` refuses it) catches a standard-library item newer than
# `rust-version`, and the workflow's msrv job builds with that very
# toolchain. Fast: reads metadata, builds nothing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

cargo metadata --locked --format-version 1 | python3 -c '
import json, sys

def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))

meta = json.load(sys.stdin)
ours = next(p for p in meta["packages"] if p["name"] == "skillserve")
declared = ours.get("rust_version")
if not declared:
    sys.exit("Cargo.toml declares no rust-version")
used = {node["id"] for node in meta["resolve"]["nodes"]}
above = sorted(
    (version(p["rust_version"]), p["name"], p["version"], p["rust_version"])
    for p in meta["packages"]
    if p["id"] in used and p["name"] != "skillserve" and p.get("rust_version")
    and version(p["rust_version"]) > version(declared)
)
if above:
    sys.exit(f"rust-version = \"{declared}\" in Cargo.toml, but these dependencies need more:\n"
             + "\n".join(f"  {name} {v} needs {rv}" for _, name, v, rv in above))
floor = max((version(p["rust_version"]), p["name"]) for p in meta["packages"]
            if p["id"] in used and p["name"] != "skillserve" and p.get("rust_version"))
print(f"rust-version {declared}: no dependency needs more (the highest: {floor[1]}, "
      + ".".join(str(n) for n in floor[0][:2]) + ")")
'
