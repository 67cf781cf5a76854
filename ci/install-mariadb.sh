#!/usr/bin/env bash
# Installs the distribution's MariaDB server and client when they are missing: the harness
# starts its own mariadbd (a data directory under target/, a loopback port, no system
# service), see fakes/src/mariadb_server.rs. Needs root (CI runs as root).
set -euo pipefail
if command -v mariadb >/dev/null 2>&1 && command -v mariadb-install-db >/dev/null 2>&1 \
  && { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; }; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# The package's post-install must not start a system service: the harness runs its own.
policy=/usr/sbin/policy-rc.d
created_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  created_policy=true
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client >/dev/null
if [ "$created_policy" = true ]; then
  rm -f "$policy"
fi
echo "installed $(/usr/sbin/mariadbd --version)"
