#!/usr/bin/env bash
# Pins k8s.io/kubernetes at VERSION (default: patches/UPSTREAM) and replaces every staging module
# that upstream's own go.mod points at ./staging/src/... with the matching v0.X.Y release.
# Usage: hack/pin-kubernetes.sh [v1.37.2]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version="${1:-$(upstream_tag)}"
if [[ ! "${version}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]]; then
  echo "pin-kubernetes.sh: version must look like v1.37.2, got ${version:-<empty>}" >&2
  exit 2
fi
staging_version="v0.${version#v1.}"
dir="$(upstream_dir "${version}")"

# Upstream's go.mod lists its staging modules as "k8s.io/foo => ./staging/src/k8s.io/foo".
mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*#\1#p' "${dir}/go.mod")
if [[ ${#staging[@]} -eq 0 ]]; then
  echo "pin-kubernetes.sh: found no staging replace block in ${dir}/go.mod" >&2
  exit 1
fi

args=(-require "k8s.io/kubernetes@${version}")
for mod in "${staging[@]}"; do
  args+=(-replace "${mod}=${mod}@${staging_version}")
done
# Every module of ours that builds k8s.io/kubernetes packages: the binary and the tools we run beside it.
for dir in "${REPO_ROOT}" "${REPO_ROOT}/hack/tools"; do
  (cd "${dir}" && go mod edit "${args[@]}")
done
echo "${version}" >"${REPO_ROOT}/patches/UPSTREAM"
echo "pinned k8s.io/kubernetes ${version} with ${#staging[@]} staging modules at ${staging_version}"
echo "now run: go mod tidy (here and in hack/tools) && hack/update-vendored.sh"
