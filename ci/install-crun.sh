#!/usr/bin/env bash
# Installs what the sim's kubelet runs pods with, from the distribution's packages when
# missing: crun, the OCI runtime of every container (its own PID, mount, IPC and UTS
# namespaces, a user namespace, a read-only root, seccomp), and nftables, whose host-side
# table keeps pods to the Service addresses (sim/src/kubelet/firewall.rs). Needs root (CI runs
# as root).
set -euo pipefail
missing=()
command -v crun >/dev/null 2>&1 || missing+=(crun)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed ${missing[*]}: $(crun --version | head -1); $(nft --version)"
