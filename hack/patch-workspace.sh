#!/usr/bin/env bash
# A git work tree for editing the patch series (docs/patches.md, docs/releases.md).
#   hack/patch-workspace.sh init     _output/patch-work: upstream at patches/UPSTREAM (one commit),
#                                    then one commit per entry of patches/series (apply_entry).
#   hack/patch-workspace.sh export   writes every commit after the upstream one back: in the
#                                    repository root (the default release) to patches/NNNN-*.patch
#                                    (git format-patch) and patches/series; in a release tree
#                                    (hack/release-tree.sh, which has patches/release/) only the
#                                    entries that differ from the shared patch, to patches/release/,
#                                    without the new files they share. Then hack/update-vendored.sh.
# Edit in the work tree with upstream import paths; commit (or commit --fixup + rebase) there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

work="${PATCH_WORK:-${REPO_ROOT}/_output/patch-work}"
git_work() { git -C "${work}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid "$@"; }

# entry_with_subject DIR COMMIT: the patch in DIR with the commit's subject, if any.
entry_with_subject() {
  local subject f
  subject="$(git -C "${work}" log -1 --format=%s "$2")"
  for f in "$1"/[0-9][0-9][0-9][0-9]-*.patch; do
    [[ -f "${f}" ]] || continue
    [[ "$(git mailinfo /dev/null /dev/null <"${f}" | sed -n 's/^Subject: //p')" == "${subject}" ]] && { basename "${f}"; return; }
  done
  return 0
}

# export_release: a release tree keeps only what differs from the shared patches.
export_release() {
  local commits c entry idx paths f shared_blob
  mapfile -t commits < <(git_work rev-list --reverse upstream..HEAD)
  rm -f "${REPO_ROOT}"/patches/release/*.patch
  idx="$(mktemp)"
  {
    echo "# Patches applied in order by hack/update-vendored.sh on top of patches/UPSTREAM."
    echo "# An entry found in patches/release/ was adapted to this release (docs/releases.md)."
  } >"${REPO_ROOT}/patches/series"
  for c in "${commits[@]}"; do
    entry="$(entry_with_subject "${REPO_ROOT}/patches" "${c}")"
    if [[ -z "${entry}" ]]; then # a patch only this release carries: keep its name
      entry="$(entry_with_subject "${VARIANTS_DIR:-/nonexistent}" "${c}")"
      if [[ -n "${entry}" ]]; then
        git_work format-patch -1 --zero-commit --no-signature --no-numbered --stdout "${c}" >"${REPO_ROOT}/patches/release/${entry}"
      else
        entry="$(basename "$(git_work format-patch -1 --zero-commit --no-signature --no-numbered -o "${REPO_ROOT}/patches/release" "${c}")")"
      fi
      echo "${entry}" >>"${REPO_ROOT}/patches/series"
      continue
    fi
    echo "${entry}" >>"${REPO_ROOT}/patches/series"
    # Does the shared patch, applied to the parent, give exactly this commit?
    GIT_INDEX_FILE="${idx}" git -C "${work}" read-tree "${c}^"
    if GIT_INDEX_FILE="${idx}" git -C "${work}" apply --cached --whitespace=nowarn "${REPO_ROOT}/patches/${entry}" 2>/dev/null &&
      [[ "$(GIT_INDEX_FILE="${idx}" git -C "${work}" write-tree)" == "$(git_work rev-parse "${c}^{tree}")" ]]; then
      continue
    fi
    # Adapted: keep only the files where the shared patch does not give this commit's content.
    paths=()
    while read -r f; do
      shared_blob=""
      if patch_files "${REPO_ROOT}/patches/${entry}" | grep -qxF "${f}"; then
        GIT_INDEX_FILE="${idx}" git -C "${work}" read-tree "${c}^"
        if GIT_INDEX_FILE="${idx}" git -C "${work}" apply --cached --whitespace=nowarn --include="${f}" "${REPO_ROOT}/patches/${entry}" 2>/dev/null; then
          shared_blob="$(GIT_INDEX_FILE="${idx}" git -C "${work}" ls-files -s -- "${f}" | awk '{print $2}')"
        fi
      fi
      [[ -n "${shared_blob}" && "${shared_blob}" == "$(git_work rev-parse "${c}:${f}" 2>/dev/null)" ]] && continue
      paths+=("${f}")
    done < <(git_work diff --name-only "${c}^" "${c}")
    git_work format-patch -1 --zero-commit --no-signature --no-numbered --stdout "${c}" -- "${paths[@]}" \
      >"${REPO_ROOT}/patches/release/${entry}"
  done
  rm -f "${idx}"
}

case "${1:-}" in
init)
  tag="$(upstream_tag)"
  rm -rf "${work}"
  mkdir -p "${work}"
  copy_upstream "${tag}" "${work}"
  git_work init -q
  git_work add -A
  git_work commit -qm "upstream k8s.io/kubernetes ${tag}"
  git_work tag upstream
  for patch in $(series_entries); do
    commit_entry "${work}" "${patch}" || { echo "patch-workspace.sh: ${patch} does not apply on ${tag} (hack/rebase.sh ${tag})" >&2; exit 1; }
  done
  echo "patch-workspace.sh: ${work} ready ($(git_work rev-list --count upstream..HEAD) patches on ${tag})"
  ;;
export)
  if [[ -d "${REPO_ROOT}/patches/release" ]]; then
    export_release
  else
    rm -f "${REPO_ROOT}"/patches/[0-9][0-9][0-9][0-9]-*.patch
    git_work format-patch -q --zero-commit --no-signature --no-numbered -o "${REPO_ROOT}/patches" upstream..HEAD
    {
      echo "# Patches applied in order by hack/update-vendored.sh on top of patches/UPSTREAM."
      (cd "${REPO_ROOT}/patches" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || true)
    } >"${REPO_ROOT}/patches/series"
  fi
  [[ -n "${NO_REGENERATE:-}" ]] || "${REPO_ROOT}/hack/update-vendored.sh"
  ;;
*)
  echo "usage: $0 init|export" >&2
  exit 2
  ;;
esac
