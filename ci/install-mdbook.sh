#!/usr/bin/env bash
# Installs mdbook from crates.io into target/tools for `mdbook build docs` (the guides as a
# book). Prints nothing when that version is already there. About 160 CPU-seconds to compile
# on the CI machines; ci/test.sh runs it niced beside the build.
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.4.52
root=target/tools
if [ -x "$root/bin/mdbook" ] && "$root/bin/mdbook" --version | grep -qF "v$MDBOOK_VERSION"; then
  exit 0
fi
mkdir -p "$root"
cargo install --quiet --locked --root "$root" --version "$MDBOOK_VERSION" mdbook
"$root/bin/mdbook" --version
