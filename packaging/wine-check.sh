#!/usr/bin/env bash
# Builds skillserve for Windows (x86_64-pc-windows-gnu, with mingw-w64) and
# runs it under Wine, on Debian or Ubuntu:
#
#   bash packaging/wine-check.sh [--release] [--debian-std]
#
# 1. Installs Wine and mingw-w64 from the distribution when they are missing
#    (apt-get: as root, or through sudo).
# 2. Adds the target's standard library with rustup; where rustup cannot
#    download it (only the package registries reachable), or with
#    --debian-std, compiles it from the source of Debian's rustc-web instead
#    (-Zbuild-std, as check-targets.sh does; a few minutes more).
# 3. Cross-builds skillserve.exe and the test MCP server
#    (examples/mcp_test_server.rs); debug builds unless --release.
# 4. Makes a Wine prefix under target/wine-check/prefix and puts in it
#    bcryptprimitives.dll built from packaging/wine/bcryptprimitives.c when
#    the Wine lacks one (Debian's Wine 8.0 does; Rust's std needs it). The
#    shim is for Wine only: it is never shipped.
# 5. Runs packaging/wine/check.py: the CLI, an MCP stdio session, import and
#    invoke through an `npx.cmd` launcher, a timeout that must end the whole
#    process tree, and the short-name probe (hidden files asked for by their
#    8.3 names must be refused).
#
# Exit status 0 when every check passes. Everything it makes is under
# target/wine-check. About 3 minutes from a warm target/ on 2 cores, plus
# the apt-get install the first time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

TARGET=x86_64-pc-windows-gnu
profile=debug
std=rustup
for arg in "$@"; do
    case "$arg" in
        --release) profile=release ;;
        --debian-std) std=debian ;;
        *) die "usage: $0 [--release] [--debian-std]" ;;
    esac
done
work="$PACKAGING_ROOT/target/wine-check"
[[ $work != *" "* ]] || die "the repository's path must not hold spaces (cmd.exe lines in the checks)"

echo "== Wine and mingw-w64"
packages=()
command -v wine >/dev/null || packages+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || packages+=(gcc-mingw-w64-x86-64)
if [[ ${#packages[@]} -gt 0 ]]; then
    command -v apt-get >/dev/null ||
        die "install Wine and mingw-w64 for x86_64 (Debian names: ${packages[*]}) with your package manager"
    as_root=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || die "installing ${packages[*]} needs root: run this as root, or install sudo"
        as_root=(sudo)
    fi
    "${as_root[@]}" apt-get update -q
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${packages[@]}"
fi
wine --version
x86_64-w64-mingw32-gcc --version | head -n 1

echo "== the standard library for $TARGET"
build_std=()
if [[ $std == rustup ]]; then
    if rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
        echo "rustup: installed"
    elif rustup target add "$TARGET"; then
        echo "rustup: added"
    else
        echo "rustup cannot add $TARGET here; compiling the standard library from Debian's source"
        std=debian
    fi
fi
if [[ $std == debian ]]; then
    use_debian_rust
    "$RUSTC" --version
    build_std=(-Zbuild-std)
    # Another compiler: keep its build apart from the usual target/.
    export CARGO_TARGET_DIR="$work/debian-std-build"
fi
target_dir=${CARGO_TARGET_DIR:-$PACKAGING_ROOT/target}

echo "== cross-building ($profile)"
profile_flag=()
[[ $profile == release ]] && profile_flag=(--release)
cargo build "${build_std[@]}" --target "$TARGET" "${profile_flag[@]}" --locked \
    --bin skillserve --example mcp_test_server
out="$target_dir/$TARGET/$profile"

echo "== the Wine prefix"
export WINEPREFIX="$work/prefix" WINEDEBUG=-all
# No Mono or Gecko install prompts, no windows.
export WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=
mkdir -p "$work"
wineboot --init
system32="$WINEPREFIX/drive_c/windows/system32"
if [[ ! -e $system32/bcryptprimitives.dll ]]; then
    echo "this Wine has no bcryptprimitives.dll: adding the test shim (ProcessPrng)"
    x86_64-w64-mingw32-gcc -shared -O2 -Wall -Wextra -Werror -o "$work/bcryptprimitives.dll" \
        packaging/wine/bcryptprimitives.c -lbcrypt
    cp "$work/bcryptprimitives.dll" "$system32/"
fi
# One wineserver for all the checks, ended with them (it serves this prefix
# only), started once wineboot's has saved the prefix and gone.
wineserver -w
wineserver -p
trap 'wineserver -k 2>/dev/null || true' EXIT
# The first program starts Wine's services, which live on with the
# wineserver: give them no pipe of the checks to hold open.
wine cmd /c exit 0 </dev/null >/dev/null 2>&1

echo "== the checks"
rm -rf "$work/run"
mkdir -p "$work/run"
python3 packaging/wine/check.py --skillserve "$out/skillserve.exe" \
    --test-server "$out/examples/mcp_test_server.exe" --work "$work/run"
