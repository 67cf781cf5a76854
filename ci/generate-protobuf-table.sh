#!/usr/bin/env bash
# Writes sim/src/protobuf/kubernetes.table from Kubernetes' own generated.proto files and Go
# types, at one release tag of k8s.io/api and k8s.io/apimachinery.
#
#   ci/generate-protobuf-table.sh [--check] <tag> [<api repo> <apimachinery repo>]
#
# The repositories are git directories or URLs (default: github.com/kubernetes/{api,apimachinery});
# the tag is exported from each. --check writes nothing and fails when the committed table
# differs from what the tag gives (CI has no network to GitHub: there the table is checked
# against the k8s-pb crate instead, sim/tests/it/unit/protobuf_table.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
if [[ "${1:-}" == "--check" ]]; then
    check=true
    shift
fi
tag="${1:?usage: ci/generate-protobuf-table.sh [--check] <tag> [<api repo> <apimachinery repo>]}"
api="${2:-https://github.com/kubernetes/api}"
apimachinery="${3:-https://github.com/kubernetes/apimachinery}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export_tag() {
    local repo="$1" into="$2"
    mkdir -p "$into"
    if [[ -d "$repo" ]]; then
        git -C "$repo" archive "$tag" | tar -x -C "$into"
    else
        git clone --quiet --depth 1 --branch "$tag" "$repo" "$work/clone-$(basename "$into")"
        git -C "$work/clone-$(basename "$into")" archive "$tag" | tar -x -C "$into"
    fi
}
export_tag "$api" "$work/api"
export_tag "$apimachinery" "$work/apimachinery"

cargo build --quiet -p barbican-codegen --bin k8s-protobuf-table
table=sim/src/protobuf/kubernetes.table
target/debug/k8s-protobuf-table --api "$work/api" --apimachinery "$work/apimachinery" \
    --header "kubernetes/api $tag, kubernetes/apimachinery $tag" > "$work/table"
if $check; then
    diff -u "$table" "$work/table"
    echo "$table is what $tag gives"
else
    mv "$work/table" "$table"
    echo "wrote $table from $tag"
fi
