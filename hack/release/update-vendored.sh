#!/usr/bin/env bash
# Regenerates the vendored controller: upstream k8s.io/kubernetes/pkg/controller/volume/persistentvolume
# at the line's tag, the line's series applied in order (on upstream paths, so each patch also applies
# to a k/k checkout; see line_series and apply_entry in hack/release/series.sh), the import paths of
# the carried sub-packages rewritten, gofmt, every file marked generated.
#   hack/release/update-vendored.sh                 the default line, into the committed copy
#   hack/release/update-vendored.sh LINE OUT_DIR    any carried line (v1.35), into OUT_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

line="${1:-$(default_line)}"
if [[ $# -ge 2 ]]; then
  out="$2"
elif [[ "${line}" == "$(default_line)" ]]; then
  out="${REPO_ROOT}/${VENDORED_PKG}"
else
  echo "usage: $0 [LINE OUT_DIR]: only the default line's copy is committed" >&2
  exit 2
fi
vendored_tree "${line}" "${out}" || { echo "update-vendored.sh: failed for ${line}" >&2; exit 1; }
echo "update-vendored.sh: wrote ${out} ($(line_tag "${line}"), $(line_series "${line}" | wc -l) patches)"
