#!/usr/bin/env bash
# Installs oslo.config, at the version every release's catalog pins, into target/tools-venv
# (beside helm): tests/tests/it/oslo_grammar.rs reads documents with oslo.config's own parser
# to check that the grammar of tenants' names and values admits only what it reads back as
# written. Prints nothing when it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

OSLO_CONFIG="oslo.config==10.7.0"
venv=target/tools-venv
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import oslo_config' 2>/dev/null; then
  exit 0
fi
mkdir -p target
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$OSLO_CONFIG"
echo "oslo.config installed in $venv"
