#!/usr/bin/env bash
# Type-checks skillserve for the release targets this machine cannot build
# (macOS, Windows, musl), on Debian or Ubuntu:
#
#   bash packaging/check-targets.sh [--all-targets] [--clippy] [TARGET...]
#
# rustup cannot fetch other targets' standard libraries where only package
# registries are reachable, but Debian ships a recent Rust ("rustc-web") with
# the standard library's source. This script downloads those packages with
# `apt-get download` (nothing is installed: they are unpacked under
# target/packaging-tools/debian-rust), then runs `cargo check -Zbuild-std` for
# each target, compiling the standard library from source. That proves the
# code compiles for the target (types, cfg, APIs); it links nothing and runs
# nothing. Without TARGET it checks every release target.
# --all-targets also checks the tests (by default: the library and binary,
# what a release builds). --clippy lints as well, as CI's
# `cargo clippy --all-targets -- -D warnings` does on macOS and Windows
# (with Debian's clippy, of the same version as its rustc): a warning fails.
#
# Needs `apt-get update` to have run once, and crates.io (the standard
# library's own dependencies). About 2-3 minutes per target on 2 cores.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

what=(--lib --bins)
clippy=false
while [[ ${1:-} == --* ]]; do
    case "$1" in
        --all-targets) what=(--all-targets) ;;
        --clippy) clippy=true ;;
        *) die "unknown option $1" ;;
    esac
    shift
done
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin
        aarch64-apple-darwin x86_64-pc-windows-msvc)
fi

use_debian_rust
export CARGO_TARGET_DIR="$PACKAGING_ROOT/target/check-targets"
"$RUSTC" --version
if $clippy; then
    root="$TOOLS/debian-rust"
    if [[ ! -x $root/usr/bin/clippy-driver ]]; then
        debs="$TOOLS/debian-rust-debs"
        rm -rf "$debs"
        mkdir -p "$debs"
        (cd "$debs" && apt-get download rust-web-clippy)
        dpkg -x "$debs"/rust-web-clippy_*.deb "$root"
        rm -rf "$debs"
    fi
    # What `cargo clippy -- -D warnings` does: clippy-driver in place of rustc
    # for this crate (not its dependencies), its arguments in CLIPPY_ARGS.
    export RUSTC_WORKSPACE_WRAPPER="$root/usr/bin/clippy-driver"
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
    "$RUSTC_WORKSPACE_WRAPPER" --version
fi

failed=()
for target in "${targets[@]}"; do
    echo "== $target"
    if cargo check -Zbuild-std=std,panic_abort --target "$target" --locked --keep-going \
        "${what[@]}" --message-format short; then
        echo "ok: $target"
    else
        failed+=("$target")
    fi
done
[[ ${#failed[@]} -eq 0 ]] || die "does not compile for ${failed[*]}"
echo "compiles for ${targets[*]}"
