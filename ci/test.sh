#!/usr/bin/env bash
# The project's test command: formatting, lints, then the whole test suite.
# Run from anywhere; it works on the workspace that contains this script.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== option catalogs reproduce from barbican's own option definitions"
ci/check-catalogs.sh

echo "== rendered configs load in each release's barbican"
python3 ci/conformance/run.py

echo "== barbican's vault plugin round-trips a secret through the fake OpenBao"
python3 ci/conformance/openbao.py

echo "== tests (cargo nextest)"
if cargo nextest --version >/dev/null 2>&1; then
  # nextest does not run doctests; run them first so nextest's summary closes the log.
  cargo test --workspace --locked --doc
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast
fi
