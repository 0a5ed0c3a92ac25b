#!/usr/bin/env bash
# Fails, printing the diff, when the committed vendored controller differs from what
# hack/release/update-vendored.sh generates (a hand edit, or a patch change not regenerated).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
"${REPO_ROOT}/hack/release/update-vendored.sh" "$(default_line)" "${tmp}/persistentvolume" >/dev/null
if ! diff -ruN "${tmp}/persistentvolume" "${REPO_ROOT}/${VENDORED_PKG}"; then
  echo >&2
  echo "verify-vendored.sh: ${VENDORED_PKG} differs from upstream $(upstream_tag) + patches/series." >&2
  echo "Do not edit it by hand: change a patch (docs/maintainers/patches-and-releases.md), then run hack/release/update-vendored.sh." >&2
  exit 1
fi
echo "verify-vendored.sh: ${VENDORED_PKG} matches $(upstream_tag) + patches/series"
