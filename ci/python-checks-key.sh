#!/usr/bin/env bash
# Usage: ci/python-checks-key.sh [FILE...]
#
# Prints a digest of everything the Python checks read: their scripts (ci/check-catalogs.sh,
# ci/conformance/), the catalogs and their constraints, the golden configs, the Python that made
# the venvs and the distributions installed in each venv (their dist-info directories name each
# one's version), and the FILEs given (the fakes' binary, for the conformance against the
# fakes). ci/test.sh records it when the checks pass and skips them while it is unchanged: the
# same inputs give the same verdict, and re-running them after a change to the Rust code held
# the tests back by a minute.
set -euo pipefail
extra=()
for file in "$@"; do extra+=("$(realpath "$file")"); done
cd "$(dirname "$0")/.."

{
  echo "python-checks key, format 1"
  python3 --version
  find ci/check-catalogs.sh ci/conformance operator/catalogs tests/golden/render \
    -name __pycache__ -prune -o -type f -print0 | sort -z | xargs -0 sha256sum
  if [ "${#extra[@]}" -gt 0 ]; then sha256sum "${extra[@]}"; fi
  if [ -d target/catalog-venvs ]; then
    find target/catalog-venvs -path '*/site-packages/*' -prune -name '*.dist-info' -print | sort
  fi
} | sha256sum | cut -d' ' -f1
