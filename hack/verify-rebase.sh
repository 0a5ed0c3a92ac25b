#!/usr/bin/env bash
# Fails when releases/ is not what hack/rebase.sh computes for each carried release line: the
# series, adapted patches and module files must be reproducible by the tool (no hand edits that the
# next rebase would lose). Runs hack/rebase.sh --no-test per line; leaves releases/ as it was.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -d "${RELEASES_DIR}" ]]; then
  echo "verify-rebase.sh: no releases/ here (a release tree); nothing to check"
  exit 0
fi
backup="$(mktemp -d)"
cp -r "${RELEASES_DIR}/." "${backup}/"
trap 'rm -rf "${RELEASES_DIR:?}"/* && cp -r "${backup}/." "${RELEASES_DIR}/" && rm -rf "${backup}"' EXIT
failed=0
for upstream in "${RELEASES_DIR}"/v*/UPSTREAM; do
  version="$(tr -d '[:space:]' <"${upstream}")"
  if ! log="$("${REPO_ROOT}/hack/rebase.sh" "${version}" --no-test 2>&1)"; then
    echo "${log}" >&2
    echo "verify-rebase.sh: hack/rebase.sh ${version} failed" >&2
    failed=1
    continue
  fi
  line="$(release_line "${version}")"
  if ! diff -ruN "${backup}/${line}" "${RELEASES_DIR}/${line}"; then
    echo "verify-rebase.sh: releases/${line} differs from what hack/rebase.sh ${version} writes; run it and commit the result" >&2
    failed=1
  fi
done
[[ ${failed} -eq 0 ]] && echo "verify-rebase.sh: releases/ is what hack/rebase.sh writes"
exit "${failed}"
