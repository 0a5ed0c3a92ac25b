#!/usr/bin/env bash
# Pins k8s.io/kubernetes at VERSION and replaces every staging module that upstream's own go.mod
# points at ./staging/src/... with the matching v0.X.Y release, in the given go.mod files (default:
# the repository's K8S_MODULES, hack/lib.sh). Then run go mod tidy on them.
# Usage: hack/release/pin-kubernetes.sh [VERSION [GO.MOD...]]   (VERSION default: the default line's tag)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

version="${1:-$(upstream_tag)}"
if [[ ! "${version}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]]; then
  echo "pin-kubernetes.sh: version must look like v1.37.2, got ${version:-<empty>}" >&2
  exit 2
fi
shift || true
gomods=("$@")
if [[ ${#gomods[@]} -eq 0 ]]; then
  for m in "${K8S_MODULES[@]}"; do gomods+=("${REPO_ROOT}/${m}/go.mod"); done
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
for f in "${gomods[@]}"; do
  go mod edit "${args[@]}" "${f}"
done
echo "pinned k8s.io/kubernetes ${version} with ${#staging[@]} staging modules at ${staging_version} in ${#gomods[@]} go.mod files"
