#!/usr/bin/env bash
# Runs every hack/verify/verify-*.sh; reports all failures, exits non-zero if any failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
failed=()
for script in "${REPO_ROOT}"/hack/verify/verify-*.sh; do
  name="$(basename "${script}")"
  [[ "${name}" == "verify-all.sh" ]] && continue
  echo "=== ${name}"
  if ! "${script}"; then
    failed+=("${name}")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "verify-all.sh: all passed"
