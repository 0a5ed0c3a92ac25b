#!/usr/bin/env bash
# Prints the source tree that builds pv-controller-manager for one Kubernetes release, and
# (re)generates it. The repository root is the tree of the default release (patches/UPSTREAM);
# every other carried release line has releases/<line>/ (docs/releases.md), and its tree is
# _output/releases/<version>/src: the repository's sources (working tree, so uncommitted edits are
# in), with that line's UPSTREAM, series, adapted patches (patches/release/), go.mod/go.sum for the
# binary, the tools and etcd, its replacements of our own files (releases/<line>/src/), and the
# vendored controller and the integration tests regenerated for it.
# The tree's own _output (its tools: kube-apiserver, KCM, ... of that release) is kept between runs.
#   hack/release-tree.sh v1.36.3        prints the tree's path (the repository root for the default)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version="${1:?usage: hack/release-tree.sh vX.Y.Z}"
if [[ "${version}" == "$(upstream_tag)" ]]; then
  echo "${REPO_ROOT}"
  exit 0
fi
line="$(release_line "${version}")"
rel="${RELEASES_DIR}/${line}"
carried() { (cd "${RELEASES_DIR}" && for d in v*/; do echo -n "$(tr -d '[:space:]' <"${d}UPSTREAM") "; done; echo -n "$(upstream_tag)"); }
if [[ ! -f "${rel}/UPSTREAM" ]]; then
  echo "release-tree.sh: release line ${line} is not carried; carried: $(carried). hack/rebase.sh ${version} starts it." >&2
  exit 2
fi
if [[ "$(tr -d '[:space:]' <"${rel}/UPSTREAM")" != "${version}" ]]; then
  echo "release-tree.sh: line ${line} carries $(tr -d '[:space:]' <"${rel}/UPSTREAM"), not ${version}; carried: $(carried). hack/rebase.sh ${version} moves it." >&2
  exit 2
fi

tree="${REPO_ROOT}/_output/releases/${version}/src"
mkdir -p "${tree}"
# Start clean, except the tree's own build output.
find "${tree}" -mindepth 1 -maxdepth 1 ! -name _output ! -name bin -exec rm -rf {} +
(cd "${REPO_ROOT}" && git ls-files -co --exclude-standard -z -- . ':(exclude)releases' ':(exclude)_output' ':(exclude)bin' |
  while IFS= read -r -d '' f; do [[ -e "${f}" ]] && printf '%s\0' "${f}"; done | tar --null -cf - -T -) | (cd "${tree}" && tar -xf -)
rm -f "${tree}/go.work" "${tree}/go.work.sum" # each module stands alone on this release's go.mod

cp "${rel}/UPSTREAM" "${tree}/patches/UPSTREAM"
cp "${rel}/series" "${tree}/patches/series"
mkdir -p "${tree}/patches/release"
cp "${rel}"/patches/*.patch "${tree}/patches/release/" 2>/dev/null || true
cp "${rel}/go.mod" "${rel}/go.sum" "${tree}/"
cp "${rel}/tools/go.mod" "${rel}/tools/go.sum" "${tree}/hack/tools/"
if [[ -f "${rel}/etcd/go.mod" ]]; then
  cp "${rel}/etcd/go.mod" "${rel}/etcd/go.sum" "${tree}/hack/tools/etcd/"
fi
# Our own files that must differ on this release (few, small; docs/releases.md).
if [[ -d "${rel}/src" ]]; then
  cp -r "${rel}/src/." "${tree}/"
fi
"${tree}/hack/update-vendored.sh" >&2
"${tree}/hack/update-integration.sh" >&2
echo "${tree}"
