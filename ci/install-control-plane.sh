#!/usr/bin/env bash
# Builds a real Kubernetes control plane from the Go module proxy, for the tests that run the
# scenarios against one (features/tests/real_cluster.rs): kube-apiserver,
# kube-controller-manager and kube-scheduler from k8s.io/kubernetes, etcd from
# go.etcd.io/etcd/server/v3, kwok and kwokctl from sigs.k8s.io/kwok, each at the version its
# module under ci/control-plane/ pins (go.mod and go.sum committed; no third-party source here).
#
# The binaries are cached outside the clone, keyed by those modules and the Go version, so a
# second run on the same machine builds nothing. The last line printed is the directory that
# holds the six binaries (BARBICAN_E2E_CONTROL_PLANE takes it); everything else goes to stderr.
#
#   BARBICAN_CONTROL_PLANE_CACHE  where the builds are kept (default ~/.cache/barbican-operator/control-plane)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
modules="$here/control-plane"
cache=${BARBICAN_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/barbican-operator/control-plane}
binaries=(kube-apiserver kube-controller-manager kube-scheduler etcd kwok kwokctl)

command -v go >/dev/null || {
  echo "install-control-plane: no go on PATH (Go 1.26 builds the control plane)" >&2
  exit 1
}

# The key: every file of the three modules and the Go that builds them.
key=$(
  {
    go version
    find "$modules" -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 |
      sort -z | xargs -0 sha256sum | sed "s|$modules/||"
    sha256sum "$0" | cut -d' ' -f1
  } | sha256sum | cut -c1-16
)
out="$cache/$key"

complete() {
  local b
  for b in "${binaries[@]}"; do
    [ -x "$out/$b" ] || return 1
  done
}

if complete; then
  echo "install-control-plane: cached in $out, nothing to build" >&2
  echo "$out"
  exit 0
fi

started=$(date +%s)
mkdir -p "$cache"
building=$(mktemp -d "$cache/.building.XXXXXX")
trap 'rm -rf "$building"' EXIT

# The version kube-apiserver reports (kwokctl and kubectl read it): the module's own.
version() { sed -n "s|^[[:space:]]*require $1 \(v[^ ]*\).*|\1|p; s|^[[:space:]]*$1 \(v[^ ]*\)\$|\1|p" "$2" | head -1; }
kube_version=$(version k8s.io/kubernetes "$modules/kubernetes/go.mod")
major=${kube_version#v}
major=${major%%.*}
minor=${kube_version#v*.}
minor=${minor%%.*}
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  stamp+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

echo "install-control-plane: building Kubernetes $kube_version, etcd and kwok into $out" >&2
(
  cd "$modules/kubernetes"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w$stamp" -o "$building/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler
)
(
  cd "$modules/etcd"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$building/etcd" .
)
(
  cd "$modules/kwok"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$building/" \
    sigs.k8s.io/kwok/cmd/kwok \
    sigs.k8s.io/kwok/cmd/kwokctl
)

chmod 755 "$building"
rm -rf "$out"
mv "$building" "$out"
trap - EXIT
echo "install-control-plane: built in $(($(date +%s) - started)) s" >&2
echo "$out"
