#!/usr/bin/env bash
# Fails when releases/ is not what hack/release/rebase.sh computes for each non-default carried
# line: its adapted and own patches and module files must be reproducible by the tool (no hand edits
# that the next rebase would lose). Runs hack/release/rebase.sh --no-test per line; leaves releases/
# as it was.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

backup="$(mktemp -d)"
cp -r "${RELEASES_DIR}/." "${backup}/"
trap 'rm -rf "${RELEASES_DIR:?}"/* && cp -r "${backup}/." "${RELEASES_DIR}/" && rm -rf "${backup}"' EXIT
failed=0
for line in $(carried_lines); do
  [[ "${line}" == "$(default_line)" ]] && continue
  # A line being ported (releases/<line>/PREVIEW says why) only with VERIFY_PREVIEW=1.
  if [[ -f "${RELEASES_DIR}/${line}/PREVIEW" && "${VERIFY_PREVIEW:-0}" != "1" ]]; then
    echo "verify-rebase.sh: ${line} is a preview line (releases/${line}/PREVIEW); VERIFY_PREVIEW=1 checks it"
    continue
  fi
  version="$(line_tag "${line}")"
  if ! log="$("${REPO_ROOT}/hack/release/rebase.sh" "${version}" --no-test 2>&1)"; then
    echo "${log}" >&2
    echo "verify-rebase.sh: hack/release/rebase.sh ${version} failed" >&2
    failed=1
    continue
  fi
  if ! diff -ruN "${backup}/${line}" "${RELEASES_DIR}/${line}"; then
    echo "verify-rebase.sh: releases/${line} differs from what hack/release/rebase.sh ${version} writes; run it and commit the result" >&2
    failed=1
  fi
done
[[ ${failed} -eq 0 ]] && echo "verify-rebase.sh: releases/ is what hack/release/rebase.sh writes"
exit "${failed}"
