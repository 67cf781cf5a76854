#!/usr/bin/env bash
# Makes each release's catalog virtualenv (target/catalog-venvs/<release>, created by
# ci/conformance/run.py) a root the sim's kubelet can run barbican's pods from: uwsgi (built
# from PyPI against this Python, so `uwsgi --module …` needs no plugin flag, as in the image)
# PyMySQL (the DSN's driver) and python-memcached (keystonemiddleware's memcache pool, which
# `[keystone_authtoken] memcached_servers` switches on: without it every authenticated request
# fails with "No module named 'memcache'"). Installs what that needs from the distribution when
# missing: a C compiler, Python's and OpenSSL's headers for uwsgi (without OpenSSL's it builds
# without `--https`, which spec.tls has the pods serve with), iproute2 for the pods' network
# namespaces. Needs root for apt-get (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$include/Python.h" ] || missing+=(python3-dev)
[ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Whether a uwsgi binary was built with OpenSSL (`--https`).
serves_https() {
  "$1" --help 2>/dev/null | grep -q -- '--https '
}

for venv in target/catalog-venvs/*/; do
  release=$(basename "$venv")
  constraints="operator/catalogs/$release.constraints.txt"
  [ -x "$venv/bin/pip" ] && [ -f "$constraints" ] || continue
  if [ -x "$venv/bin/uwsgi" ] && serves_https "$venv/bin/uwsgi" &&
    "$venv/bin/python" -c 'import pymysql, memcache' 2>/dev/null; then
    echo "$release: uwsgi (with HTTPS), PyMySQL and python-memcached already installed"
    continue
  fi
  # As the release's constraints pin them; uwsgi is not an OpenStack requirement.
  "$venv/bin/pip" install -q --disable-pip-version-check PyMySQL python-memcached -c "$constraints"
  if [ -x "$venv/bin/uwsgi" ] && ! serves_https "$venv/bin/uwsgi"; then
    # Built before OpenSSL's headers were there: built again, not from pip's wheel cache.
    "$venv/bin/pip" uninstall -q -y uwsgi
    "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir uwsgi
  else
    "$venv/bin/pip" install -q --disable-pip-version-check uwsgi
  fi
  serves_https "$venv/bin/uwsgi" || {
    echo "$release: uwsgi was built without HTTPS (OpenSSL's headers missing?)" >&2
    exit 1
  }
  echo "$release: uwsgi $("$venv/bin/uwsgi" --version) (with HTTPS), PyMySQL and python-memcached installed"
done
