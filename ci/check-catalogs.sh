#!/usr/bin/env bash
# Regenerates the option catalogs with the committed package constraints and fails when the
# result differs from the committed files. Needs PyPI; the venvs are kept under
# target/catalog-venvs/, so a second run only re-lists the options.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -m pip index versions barbican >/dev/null 2>&1; then
  echo "catalogs: skipped, PyPI is unreachable"
  exit 0
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cp operator/catalogs/*.constraints.txt "$out"/
python3 operator/catalogs/generate.py --out "$out" >/dev/null
status=0
for committed in operator/catalogs/*.json operator/catalogs/*.constraints.txt; do
  if ! diff -u "$committed" "$out/$(basename "$committed")"; then
    echo "catalogs: $committed differs from a regeneration; run operator/catalogs/generate.py and commit" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "catalogs: regeneration reproduces the committed files"
exit "$status"
