#!/usr/bin/env bash
# Checks that the crate `cargo publish` would upload holds only what belongs:
# no tests, fixtures, benchmarks, CI, packaging or build output (Cargo.toml's
# `exclude`). Fast: lists the files, builds nothing. Run by .ci/run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

list=$(cargo package --list --locked --allow-dirty)
stray=$(grep -E '^(fixtures|benches|tests|examples|packaging|target|\.cargo|\.github|\.ci)/|^pyproject\.toml$' <<<"$list" || true)
if [[ -n $stray ]]; then
    die "the crate would include files that do not belong (fix \`exclude\` in Cargo.toml):"$'\n'"$stray"
fi
grep -qx 'src/main.rs' <<<"$list" || die "the crate would not include src/main.rs"
grep -qx 'LICENSE' <<<"$list" || die "the crate would not include LICENSE"
echo "crate: $(wc -l <<<"$list") files, none from fixtures/, benches/, tests/, examples/, packaging/, target/, .cargo/, .github/, .ci/"
