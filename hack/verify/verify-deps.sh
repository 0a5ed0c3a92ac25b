#!/usr/bin/env bash
# The direction of imports: what we ship never imports the test harness. Each shipped binary
# (the binder, pv-rollout, kubectl-pvc_why: what make dist packs) is listed with go list -deps; a
# package under test/ (the model and cluster tortures, their invariants, the load generator, the
# fault proxy) among its dependencies fails the check, naming who imports it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

module="$(sed -n 's/^module //p' go.mod)"
shipped=(./cmd/pv-controller-manager ./cmd/pv-rollout ./cmd/kubectl-pvc_why)
failed=0
for cmd in "${shipped[@]}"; do
  deps="$(go list -deps "${cmd}")"
  harness="$(grep -E "^${module}/test(/|$)" <<<"${deps}" || true)"
  if [[ -n "${harness}" ]]; then
    failed=1
    echo "verify-deps.sh: ${cmd} depends on the test harness:" >&2
    while read -r pkg; do
      importers="$(go list -deps -f '{{.ImportPath}} {{join .Imports " "}}' "${cmd}" | awk -v p="${pkg}" '{ for (i = 2; i <= NF; i++) if ($i == p) print $1 }' | tr '\n' ' ')"
      echo "  ${pkg}, imported by ${importers}" >&2
    done <<<"${harness}"
  fi
done
[[ "${failed}" == 0 ]] || exit 1
echo "verify-deps.sh: ${shipped[*]} import nothing under ${module}/test"
