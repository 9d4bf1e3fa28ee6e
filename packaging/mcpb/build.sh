#!/usr/bin/env bash
# Assembles and packs the MCP Bundle (.mcpb) for one release binary:
#
#   packaging/mcpb/build.sh BINARY TARGET OUTDIR
#
# writes OUTDIR/skillserve-<version>-<target>.mcpb, a zip holding
#
#   manifest.json   packaging/mcpb/manifest.json, with the version from Cargo.toml,
#                   compatibility.platforms narrowed to TARGET's platform and
#                   server.entry_point naming the binary below
#   icon.png        packaging/mcpb/icon.png (drawn by icon.py)
#   LICENSE
#   server/skillserve   (server/skillserve.exe for Windows targets)
#
# A Rust binary runs on one platform, so there is one bundle per target.
# The packing is done by the `mcpb` CLI (@anthropic-ai/mcpb, pinned in
# packaging/lib.sh): $MCPB if set (a path to an installed `mcpb`), else
# `npx --yes @anthropic-ai/mcpb@<pinned>`. Run it on Linux or macOS: `mcpb pack`
# keeps the executable bit only when it runs on a Unix.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

read_release_args "$@"
platform=$(mcpb_platform "$target")
exe="skillserve$(exe_suffix "$target")"
here="$PACKAGING_ROOT/packaging/mcpb"

if [[ -n ${MCPB:-} ]]; then
    mcpb=("$MCPB")
else
    mcpb=(npx --yes "@anthropic-ai/mcpb@$MCPB_VERSION")
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bundle="$stage/skillserve"
mkdir -p "$bundle/server"

python3 - "$here/manifest.json" "$bundle/manifest.json" "$version" "$platform" "$exe" <<'PY'
import json, sys
source, dest, version, platform, exe = sys.argv[1:]
with open(source, encoding="utf-8") as f:
    manifest = json.load(f)
if manifest["version"] != version:
    print(f"note: stamping version {version} over {manifest['version']} from {source}", file=sys.stderr)
manifest["version"] = version
manifest["compatibility"]["platforms"] = [platform]
manifest["server"]["entry_point"] = f"server/{exe}"
with open(dest, "w", encoding="utf-8") as f:
    json.dump(manifest, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
cp "$here/icon.png" "$bundle/icon.png"
cp "$PACKAGING_ROOT/LICENSE" "$bundle/LICENSE"
cp "$binary" "$bundle/server/$exe"
chmod 755 "$bundle/server/$exe"

out="$outdir/skillserve-$version-$target.mcpb"
"${mcpb[@]}" validate "$bundle/manifest.json"
"${mcpb[@]}" pack "$bundle" "$out"
echo "$out"
