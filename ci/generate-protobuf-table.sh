#!/usr/bin/env bash
# Writes sim/src/protobuf/kubernetes.table from Kubernetes' own generated.proto files and Go
# types: k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator at a release tag.
#
#   ci/generate-protobuf-table.sh [--check] <tag> [<kube-aggregator tag>]
#
# Each repository is exported at the tag (kube-aggregator at its own tag when given) from a
# git directory or URL: $K8S_API_REPO, $K8S_APIMACHINERY_REPO, $K8S_APIEXTENSIONS_REPO,
# $K8S_AGGREGATOR_REPO, by default https://github.com/kubernetes/<name>. --check writes
# nothing and fails when the committed table differs from what the tags give (CI has no
# network to GitHub: there the table is checked against the k8s-pb crate instead,
# sim/tests/it/unit/protobuf_table.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
if [[ "${1:-}" == "--check" ]]; then
    check=true
    shift
fi
tag="${1:?usage: ci/generate-protobuf-table.sh [--check] <tag> [<kube-aggregator tag>]}"
aggregator_tag="${2:-$tag}"
github=https://github.com/kubernetes

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# export_tag <repo> <tag> <directory>
export_tag() {
    local repo="$1" at="$2" into="$work/$3"
    mkdir -p "$into"
    if [[ ! -d "$repo" ]]; then
        git clone --quiet --depth 1 --branch "$at" "$repo" "$work/clone-$3"
        repo="$work/clone-$3"
    fi
    git -C "$repo" archive "$at" | tar -x -C "$into"
}
export_tag "${K8S_API_REPO:-$github/api}" "$tag" api
export_tag "${K8S_APIMACHINERY_REPO:-$github/apimachinery}" "$tag" apimachinery
export_tag "${K8S_APIEXTENSIONS_REPO:-$github/apiextensions-apiserver}" "$tag" apiextensions
export_tag "${K8S_AGGREGATOR_REPO:-$github/kube-aggregator}" "$aggregator_tag" aggregator

cargo build --quiet -p barbican-codegen --bin k8s-protobuf-table
table=sim/src/protobuf/kubernetes.table
target/debug/k8s-protobuf-table --api "$work/api" --apimachinery "$work/apimachinery" \
    --apiextensions "$work/apiextensions" --aggregator "$work/aggregator" \
    --header "k8s.io/api, apimachinery and apiextensions-apiserver $tag; kube-aggregator $aggregator_tag" \
    > "$work/table"
if $check; then
    diff -u "$table" "$work/table"
    echo "$table is what $tag (kube-aggregator $aggregator_tag) gives"
else
    mv "$work/table" "$table"
    echo "wrote $table from $tag (kube-aggregator $aggregator_tag)"
fi
