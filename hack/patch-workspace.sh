#!/usr/bin/env bash
# A git work tree for editing the patch series (docs/patches.md).
#   hack/patch-workspace.sh init     _output/patch-work: upstream at patches/UPSTREAM (one commit),
#                                    then one commit per patch in patches/series (git am).
#   hack/patch-workspace.sh export   writes every commit after the upstream one back to
#                                    patches/NNNN-*.patch (git format-patch) and rewrites
#                                    patches/series, then runs hack/update-vendored.sh.
# Edit in the work tree with upstream import paths; commit (or commit --fixup + rebase) there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

work="${PATCH_WORK:-${REPO_ROOT}/_output/patch-work}"
git_work() { git -C "${work}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid "$@"; }

case "${1:-}" in
init)
  tag="$(upstream_tag)"
  src="$(upstream_dir "${tag}")/${VENDORED_PKG}"
  rm -rf "${work}"
  mkdir -p "${work}/${VENDORED_PKG}"
  cp "${src}"/*.go "${work}/${VENDORED_PKG}/"
  for sub in "${VENDORED_SUBPKGS[@]}"; do
    mkdir -p "${work}/${VENDORED_PKG}/${sub}"
    cp "${src}/${sub}"/*.go "${work}/${VENDORED_PKG}/${sub}/"
  done
  chmod -R u+w "${work}"
  git_work init -q
  git_work add -A
  git_work commit -qm "upstream k8s.io/kubernetes ${tag}"
  git_work tag upstream
  while read -r patch; do
    patch="$(echo "${patch%%#*}" | tr -d '[:space:]')"
    [[ -z "${patch}" ]] && continue
    git_work am -q --committer-date-is-author-date "${REPO_ROOT}/patches/${patch}"
  done <"${REPO_ROOT}/patches/series"
  echo "patch-workspace.sh: ${work} ready ($(git_work rev-list --count upstream..HEAD) patches on ${tag})"
  ;;
export)
  rm -f "${REPO_ROOT}"/patches/[0-9][0-9][0-9][0-9]-*.patch
  git_work format-patch -q --zero-commit --no-signature --no-numbered -o "${REPO_ROOT}/patches" upstream..HEAD
  {
    echo "# Patches applied in order by hack/update-vendored.sh on top of patches/UPSTREAM."
    (cd "${REPO_ROOT}/patches" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || true)
  } >"${REPO_ROOT}/patches/series"
  "${REPO_ROOT}/hack/update-vendored.sh"
  ;;
*)
  echo "usage: $0 init|export" >&2
  exit 2
  ;;
esac
