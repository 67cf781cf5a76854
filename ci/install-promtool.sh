#!/usr/bin/env bash
# Puts promtool, Prometheus's rule checker, at target/tools/bin/promtool for the chart's alert
# tests (tests/tests/it/chart/alerts.rs): the distribution's prometheus package is downloaded
# and only its promtool unpacked, so no Prometheus server is installed or started. Prints
# nothing when it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

root=target/tools
if [ -x "$root/bin/promtool" ]; then
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DEBIAN_FRONTEND=noninteractive
( cd "$scratch" && { apt-get download prometheus >/dev/null 2>&1 ||
  { apt-get update -qq && apt-get download prometheus >/dev/null 2>&1; }; } )
dpkg-deb -x "$scratch"/prometheus_*.deb "$scratch/unpacked"
mkdir -p "$root/bin"
cp "$scratch/unpacked/usr/bin/promtool" "$root/bin/promtool"
"$root/bin/promtool" --version | head -1
