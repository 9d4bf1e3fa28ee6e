#!/usr/bin/env bash
# The local proof of the release packaging, on the machine it runs on (Linux
# or macOS; the release workflow builds the other targets):
#
#   bash packaging/verify.sh
#
#  1. builds the release binary (cargo build --release --locked);
#  2. builds the wheel and the sdist with maturin, checks the sdist holds no
#     tests, fixtures, benchmarks or packaging files;
#  3. installs the wheel into a fresh venv, runs `skillserve --version` and a
#     real MCP session against the installed binary, then the same through
#     `uvx --from WHEEL skillserve`;
#  4. packs the release archive and checks its SHA-256 file and binary;
#  5. packs the MCP Bundle, runs `mcpb info`, unpacks it, validates its
#     manifest and runs MCP sessions against server/skillserve inside it:
#     directly, and as a host launches it from the manifest (via
#     packaging/mcpb/resolve.mjs) with the settings form empty and filled in;
#  6. runs `cargo package` (which builds the crate from its own files) and
#     checks the crate's file list.
#
# Everything lands in target/dist (the artefacts) and target/packaging-verify
# (scratch); maturin, uv and mcpb are installed under target/packaging-tools.
# Needs: a Rust toolchain, python3 (3.8+, with venv), Node.js 18+ with npm,
# and the registries (crates.io, PyPI, npm) the first time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

host=$(rustc -vV | sed -n 's/^host: //p')
version=$(cargo_version)
dist="$PACKAGING_ROOT/target/dist"
work="$PACKAGING_ROOT/target/packaging-verify"
rm -rf "$dist" "$work"
mkdir -p "$dist" "$work"

started=$SECONDS
step_started=$SECONDS
step() {
    echo
    echo "== $* [$((SECONDS - started)) s]"
    step_started=$SECONDS
}
took() {
    echo "   ($((SECONDS - step_started)) s)"
}
size_of() {
    local bytes
    bytes=$(wc -c <"$1")
    echo "$(basename "$1"): $bytes bytes ($(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }'))"
}

step "tools: maturin $MATURIN_VERSION, uv $UV_VERSION, @anthropic-ai/mcpb $MCPB_VERSION"
pybin=$(ensure_py_tools "maturin==$MATURIN_VERSION" "uv==$UV_VERSION")
npm_prefix=$(ensure_npm_tool @anthropic-ai/mcpb "$MCPB_VERSION")
mcpb_package="$npm_prefix/node_modules/@anthropic-ai/mcpb"
export MCPB="$npm_prefix/node_modules/.bin/mcpb"
"$pybin/maturin" --version
"$pybin/uv" --version
echo "mcpb $("$MCPB" --version)"
took

step "1. release binary: cargo build --release --locked ($host)"
cargo build --release --locked
# A copy: maturin below builds into the same target/release.
binary="$work/skillserve"
cp target/release/skillserve "$binary"
size_of "$binary"
took

step "2. wheel and sdist: maturin build --release --locked; maturin sdist"
"$pybin/maturin" build --release --locked --out "$dist"
"$pybin/maturin" sdist --out "$dist"
wheel=$(ls "$dist"/skillserve-"$version"-*.whl)
sdist="$dist/skillserve-$version.tar.gz"
size_of "$wheel"
size_of "$sdist"
python3 -m zipfile -l "$wheel"
stray=$(tar tzf "$sdist" | grep -E '^[^/]+/(fixtures|benches|tests|packaging|target|\.github|\.ci)/' || true)
[[ -z $stray ]] || die "the sdist holds files that do not belong:"$'\n'"$stray"
echo "sdist: $(tar tzf "$sdist" | wc -l) files, none from fixtures/, benches/, tests/, packaging/, target/"
took

step "3. the wheel in a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel"
installed="$work/venv/bin/skillserve"
got=$("$installed" --version)
echo "$installed --version: $got"
[[ $got == "skillserve $version" ]] || die "expected 'skillserve $version'"
python3 packaging/mcp_session.py --version "$version" "$installed"
echo "-- uvx --from $(basename "$wheel") skillserve"
export UV_CACHE_DIR="$work/uv-cache" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1
got=$("$pybin/uvx" --offline --from "$wheel" skillserve --version)
echo "uvx: $got"
[[ $got == "skillserve $version" ]] || die "expected 'skillserve $version' from uvx"
python3 packaging/mcp_session.py --version "$version" "$pybin/uvx" --offline --from "$wheel" skillserve
took

step "4. release archive: packaging/archive.sh"
archive=$(bash packaging/archive.sh "$binary" "$host" "$dist")
size_of "$archive"
(cd "$dist" && sha256_of -c "$(basename "$archive").sha256")
mkdir -p "$work/archive"
tar -C "$work/archive" -xzf "$archive"
tar tzf "$archive"
got=$("$work/archive/skillserve-$version-$host/skillserve" --version)
[[ $got == "skillserve $version" ]] || die "the archived binary says '$got'"
echo "archived binary: $got"
# What `cargo binstall` would ask for, from [package.metadata.binstall]: the
# archive's name must be one of the URL's candidates (binstall tries each
# suffix of the format) and the binary must sit at bin-dir inside it.
python3 - "$PACKAGING_ROOT/Cargo.toml" "$archive" "$version" "$host" <<'PY'
import os, sys, tarfile, tomllib
manifest, archive, version, target = sys.argv[1:]
package = tomllib.load(open(manifest, "rb"))["package"]
meta = package["metadata"]["binstall"]
meta = {**meta, **meta.get("overrides", {}).get(target, {})}
suffixes = {"tgz": [".tgz", ".tar.gz"], "zip": [".zip"]}[meta["pkg-fmt"]]
def expand(template, **extra):
    values = {"repo": package["repository"], "name": package["name"], "version": version,
              "target": target, "bin": "skillserve", "binary-ext": "", **extra}
    for key, value in values.items():
        template = template.replace("{ %s }" % key, value)
    return template
urls = [expand(meta["pkg-url"], **{"archive-suffix": s}) for s in suffixes]
name = os.path.basename(archive)
if not any(url.endswith("/v" + version + "/" + name) for url in urls):
    sys.exit(f"binstall would ask for {urls}, the archive is {name}")
bin_dir = expand(meta["bin-dir"])
if bin_dir not in tarfile.open(archive).getnames():
    sys.exit(f"binstall expects {bin_dir} inside {name}")
print(f"cargo binstall: {urls[-1]} holds {bin_dir}")
PY
took

step "5. MCP Bundle: packaging/mcpb/build.sh"
bundle=$(bash packaging/mcpb/build.sh "$binary" "$host" "$dist" | tail -n 1)
size_of "$bundle"
"$MCPB" info "$bundle"
"$MCPB" unpack "$bundle" "$work/bundle"
"$MCPB" validate "$work/bundle/manifest.json"
server="$work/bundle/server/skillserve"
[[ -x $server ]] || die "server/skillserve in the bundle is not executable"
ls -l "$work/bundle" "$work/bundle/server"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print("manifest:", m["name"], m["version"], m["server"]["entry_point"], m["compatibility"]["platforms"])' "$work/bundle/manifest.json"
grep -q "\"version\": \"$version\"" "$work/bundle/manifest.json" || die "the bundle's manifest is not version $version"
echo "-- the binary inside the bundle"
python3 packaging/mcp_session.py --version "$version" "$server"

# As a host starts it: command, args and env resolved from the manifest.
home="$work/home"
write_skill() {
    mkdir -p "$1/$2"
    printf -- '---\nname: %s\ndescription: A skill for the bundle check.\n---\n\nBody of %s.\n' "$2" "$2" >"$1/$2/SKILL.md"
}
write_skill "$home/.claude/skills" home-skill
write_skill "$work/extra-skills" extra-skill
write_skill "$work/more skills" more-skill
mkdir -p "$work/project/.git"
write_skill "$work/project/.claude/skills" project-skill
echo "-- as a host launches the bundle, settings form left empty"
node packaging/mcpb/resolve.mjs "$mcpb_package" "$work/bundle" "$home" '{}' >"$work/launch-empty.json"
cat "$work/launch-empty.json"
python3 packaging/mcp_session.py --version "$version" --launch "$work/launch-empty.json" --home "$home" --expect home-skill
echo "-- as a host launches the bundle, both settings filled in"
node packaging/mcpb/resolve.mjs "$mcpb_package" "$work/bundle" "$home" \
    "{\"skills_dirs\": [\"$work/extra-skills\", \"$work/more skills\"], \"project_dir\": \"$work/project\"}" >"$work/launch-filled.json"
cat "$work/launch-filled.json"
python3 packaging/mcp_session.py --version "$version" --launch "$work/launch-filled.json" --home "$home" \
    --expect extra-skill --expect more-skill --expect project-skill --expect home-skill
took

step "6. crate: cargo package --locked"
bash packaging/check-crate.sh
# --allow-dirty: the proof also runs on uncommitted work; the crate holds the
# listed files either way.
cargo package --locked --allow-dirty --quiet
crate="target/package/skillserve-$version.crate"
size_of "$crate"
cp "$crate" "$dist/"
took

step "SHA256SUMS"
(
    cd "$dist"
    shopt -s nullglob
    files=(*.whl *.tar.gz *.zip *.mcpb *.crate)
    sha256_of "${files[@]}" >SHA256SUMS
)
cat "$dist/SHA256SUMS"

echo
echo "packaging verified in $((SECONDS - started)) s; artefacts in $dist:"
ls -l "$dist"
