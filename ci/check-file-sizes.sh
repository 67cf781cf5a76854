#!/usr/bin/env bash
# Keeps every non-test Rust source file at 800 lines or fewer: a file past that holds more
# than one concern and is split by concern (see docs/development.md). Test code
# (a `tests/` directory, a `tests.rs` or `*_tests.rs` module) is not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=800
over=$(git ls-files '*.rs' |
  grep -Ev '(^|/)tests/|(^|/)tests\.rs$|_tests\.rs$' |
  while read -r file; do
    lines=$(wc -l <"$file")
    if [ "$lines" -gt "$limit" ]; then
      echo "  $file: $lines lines"
    fi
  done)
if [ -n "$over" ]; then
  echo "non-test source files above $limit lines (split them by concern):"
  echo "$over"
  exit 1
fi
echo "every non-test source file is at most $limit lines"
