#!/usr/bin/env bash
# Fails when a module's go.mod/go.sum is not tidy, or when the k8s.io replace blocks differ from what
# hack/release/pin-kubernetes.sh generates for the default line. Leaves the files as they were.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

modules=("${GO_MODULES[@]}")
# GO_MODULES (hack/lib.sh) is the one list: every go.mod of the repository is in it, and go.work
# (go.work names the three the workspace builds together.)
found="$(git ls-files -co --exclude-standard -- '*go.mod' ':(exclude)releases' ':(exclude)_output')"
missing="$(comm -23 <(xargs -rn1 dirname <<<"${found}" | sort) <(printf '%s\n' "${modules[@]}" | sort))"
if [[ -n "${missing}" ]]; then
  echo "verify-gomod.sh: go.mod not in GO_MODULES (hack/lib.sh): ${missing}" >&2
  exit 1
fi
backup="$(mktemp -d)"
restore() {
  for m in "${modules[@]}"; do
    [[ -f "${backup}/${m}/go.mod" ]] && cp "${backup}/${m}/go.mod" "${backup}/${m}/go.sum" "${REPO_ROOT}/${m}/"
  done
  rm -rf "${backup}"
}
trap restore EXIT
for m in "${modules[@]}"; do
  [[ -f "${m}/go.mod" ]] || continue
  mkdir -p "${backup}/${m}"
  cp "${m}/go.mod" "${m}/go.sum" "${backup}/${m}/"
done

hack/release/pin-kubernetes.sh "$(upstream_tag)" >/dev/null
failed=0
for m in "${modules[@]}"; do
  [[ -f "${m}/go.mod" ]] || continue
  (cd "${m}" && GOWORK=off go mod tidy)
  if ! diff -u "${backup}/${m}/go.mod" "${m}/go.mod" || ! diff -u "${backup}/${m}/go.sum" "${m}/go.sum"; then
    echo "verify-gomod.sh: ${m}/go.mod or go.sum is stale; run hack/release/pin-kubernetes.sh, then go mod tidy in ${m}" >&2
    failed=1
  fi
done
[[ ${failed} -eq 0 ]] && echo "verify-gomod.sh: ok"
exit "${failed}"
