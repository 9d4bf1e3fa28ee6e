#!/usr/bin/env bash
# Packs a release binary the way `cargo binstall` and people downloading from
# the releases page expect it:
#
#   packaging/archive.sh BINARY TARGET OUTDIR
#
# writes OUTDIR/skillserve-<version>-<target>.tar.gz (.zip for Windows targets)
# holding skillserve-<version>-<target>/{skillserve[.exe],README.md,LICENSE},
# and next to it a .sha256 file in `sha256sum` format. The names are the ones
# [package.metadata.binstall] in Cargo.toml asks for; keep them in step.
# The version comes from Cargo.toml. Needs bash, tar, gzip and python3.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

read_release_args "$@"
name="skillserve-$version-$target"
exe="skillserve$(exe_suffix "$target")"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name"
cp "$binary" "$stage/$name/$exe"
chmod 755 "$stage/$name/$exe"
cp "$PACKAGING_ROOT/README.md" "$PACKAGING_ROOT/LICENSE" "$stage/$name/"

# Reproducible: fixed order, owner and time (the commit's, where there is one).
mtime=${SOURCE_DATE_EPOCH:-$(git -C "$PACKAGING_ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
case "$target" in
    *-windows-*)
        archive="$name.zip"
        (cd "$stage" && python3 - "$outdir/$archive" "$name" "$mtime" <<'PY'
import os, sys, time, zipfile
out, top, mtime = sys.argv[1], sys.argv[2], int(sys.argv[3])
stamp = time.gmtime(max(mtime, 315532800))[:6]  # zip cannot hold dates before 1980
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
    for entry in sorted(os.listdir(top)):
        path = os.path.join(top, entry)
        info = zipfile.ZipInfo(f"{top}/{entry}", stamp)
        info.external_attr = (0o100755 if entry.endswith(".exe") else 0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(path, "rb") as f:
            zf.writestr(info, f.read())
PY
        )
        ;;
    *)
        archive="$name.tar.gz"
        tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
            --mtime="@$mtime" -cf - "$name" | gzip -9n >"$outdir/$archive"
        ;;
esac

(cd "$outdir" && sha256_of "$archive" >"$archive.sha256")
echo "$outdir/$archive"
