#!/usr/bin/env bash
# Fails when test/integration/volume/ differs from what hack/release/update-integration.sh generates.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
"${REPO_ROOT}/hack/release/update-integration.sh" "$(default_line)" "${tmp}" >/dev/null
status=0
for f in main_test.go persistent_volumes_test.go; do
  diff -u "${REPO_ROOT}/test/integration/volume/${f}" "${tmp}/${f}" || status=1
done
if [[ ${status} -ne 0 ]]; then
  echo "verify-integration.sh: test/integration/volume is out of date; run hack/release/update-integration.sh" >&2
fi
exit ${status}
