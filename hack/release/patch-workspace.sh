#!/usr/bin/env bash
# A git work tree for editing the patch series (docs/maintainers/patches-and-releases.md).
#   hack/release/patch-workspace.sh init [LINE]     _output/patch-work: upstream at the line's tag
#                                                   (tag "upstream"), then one commit per entry of
#                                                   the line's series (default: the default line)
#   hack/release/patch-workspace.sh export [LINE]   writes the commits after "upstream" back
#                                                   (export_series): patches/ for the default line,
#                                                   releases/LINE/patches/ (only what differs) for
#                                                   another; then regenerates the committed copy
# Edit in the work tree with upstream import paths; commit (or commit --fixup + rebase) there.
# PATCH_WORK overrides the work tree's path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

work="${PATCH_WORK:-${REPO_ROOT}/_output/patch-work}"
line="${2:-$(default_line)}"
[[ -f "${RELEASES_DIR}/${line}/UPSTREAM" ]] || { echo "patch-workspace.sh: ${line} is not a carried line ($(carried_lines | tr '\n' ' '))" >&2; exit 2; }

case "${1:-}" in
init)
  series_work_tree "${work}" "$(line_tag "${line}")" "${line}" || exit 1
  echo "patch-workspace.sh: ${work} ready ($(git -C "${work}" rev-list --count upstream..HEAD) patches on $(line_tag "${line}"))"
  ;;
export)
  export_series "${work}" "${line}"
  if [[ "${line}" == "$(default_line)" ]]; then
    "${REPO_ROOT}/hack/release/update-vendored.sh"
  fi
  ;;
*)
  echo "usage: $0 init|export [LINE]" >&2
  exit 2
  ;;
esac
