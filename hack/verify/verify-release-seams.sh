#!/usr/bin/env bash
# What differs between release lines sits behind one seam per line
# (docs/maintainers/patches-and-releases.md, "What differs per line"):
# - our own Go code: releases/<line>/src/ holds only release_seam.go and release_seam_test.go files,
#   each replacing the file of that path in the tree;
# - the generated controller: the series' own files (those not in upstream's package) are the same on
#   every line but cacheseam.go, cacheseam_test.go and the files releases/<line>/differs lists,
#   each with its reason.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

failed=0
while IFS= read -r -d '' f; do
  rel="${f#"${RELEASES_DIR}"/*/src/}"
  case "$(basename "${f}")" in
  release_seam.go | release_seam_test.go) ;;
  *.go)
    echo "verify-release-seams.sh: ${f#"${REPO_ROOT}/"}: a line's Go file must be its copy of a release_seam.go or release_seam_test.go" >&2
    failed=1
    continue
    ;;
  *) continue ;;
  esac
  [[ -f "${REPO_ROOT}/${rel}" ]] || { echo "verify-release-seams.sh: ${f#"${REPO_ROOT}/"} replaces ${rel}, which the tree does not have" >&2; failed=1; }
done < <(find "${RELEASES_DIR}" -path '*/src/*' -type f -print0)

# own_files TAG DIR: the Go files of DIR (a generated controller) that upstream's package at TAG does not have.
own_files() {
  local up f
  up="$(upstream_dir "$1")/${VENDORED_PKG}"
  for f in "$2"/*.go; do
    [[ -f "${up}/$(basename "${f}")" ]] || basename "${f}"
  done
}

default="${REPO_ROOT}/${VENDORED_PKG}"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
mapfile -t default_own < <(own_files "$(upstream_tag)" "${default}")
for line in $(carried_lines); do
  [[ "${line}" == "$(default_line)" ]] && continue
  vendored_tree "${line}" "${tmp}/${line}" >/dev/null || { echo "verify-release-seams.sh: the series does not apply to ${line}" >&2; failed=1; continue; }
  mapfile -t allowed < <(echo cacheseam.go; echo cacheseam_test.go; series_file_entries "${RELEASES_DIR}/${line}/differs")
  mapfile -t line_own < <(own_files "$(line_tag "${line}")" "${tmp}/${line}")
  for f in $(printf '%s\n' "${default_own[@]}" "${line_own[@]}" | sort -u); do
    printf '%s\n' "${allowed[@]}" | grep -qxF "${f}" && continue
    if [[ ! -f "${default}/${f}" || ! -f "${tmp}/${line}/${f}" ]] || ! cmp -s <(tail -n +2 "${default}/${f}") <(tail -n +2 "${tmp}/${line}/${f}"); then
      echo "verify-release-seams.sh: ${f} differs on ${line}: move what differs behind cacheseam.go, or list the file in releases/${line}/differs with why" >&2
      failed=1
    fi
  done
done
[[ ${failed} -eq 0 ]] && echo "verify-release-seams.sh: every line differs only in its seams"
exit "${failed}"
