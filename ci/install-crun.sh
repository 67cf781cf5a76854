#!/usr/bin/env bash
# Installs crun, the OCI runtime the sim's kubelet runs every container with (its own PID,
# mount, IPC and UTS namespaces, a user namespace, a read-only root, seccomp), from the
# distribution's packages when it is missing. Needs root (CI runs as root).
set -euo pipefail
if command -v crun >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends crun >/dev/null
echo "installed $(crun --version | head -1)"
