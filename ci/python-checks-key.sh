#!/usr/bin/env bash
# Prints a digest of everything the option-catalog check (ci/check-catalogs.sh) and the render
# conformance (ci/conformance/run.py) read: their scripts, the catalogs and their constraints,
# the golden configs, the Python that made the venvs and the distributions installed in each
# venv (their dist-info directories name each one's version). ci/test.sh records it when both
# checks pass and skips them while it is unchanged: the same inputs give the same verdict, and
# re-running them after a change to the Rust code held the tests back by a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

{
  echo "python-checks key, format 1"
  python3 --version
  find ci/check-catalogs.sh ci/conformance operator/catalogs tests/golden/render \
    -name __pycache__ -prune -o -type f -print0 | sort -z | xargs -0 sha256sum
  if [ -d target/catalog-venvs ]; then
    find target/catalog-venvs -path '*/site-packages/*' -prune -name '*.dist-info' -print | sort
  fi
} | sha256sum | cut -d' ' -f1
