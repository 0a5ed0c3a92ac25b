#!/usr/bin/env bash
# Checks the image tarball of `make image` with a real container runtime: imports it into a private
# containerd (hack/e2e/containerd.sh) and runs `pv-controller-manager --version` in a container as the
# image's non-root user. Needs root (or an already installed containerd it may start).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

IMAGE_TAR="${IMAGE_TAR:-${REPO_ROOT}/_output/image/pv-controller-manager.tar}"
IMAGE="${IMAGE:?IMAGE (the reference in the tarball) must be set}"
socket="$(hack/e2e/containerd.sh up | tail -1)"
ctr=(ctr -a "${socket}" -n k8s.io)

# A containerd just started once listed no image after an import that had succeeded (make dist,
# 2026-12-04); the same import listed it at once when run again: import up to three times.
for attempt in 1 2 3; do
  "${ctr[@]}" images import --all-platforms "${IMAGE_TAR}" >/dev/null
  "${ctr[@]}" images ls -q | grep -qx "${IMAGE}" && break
  [[ ${attempt} -lt 3 ]] || { echo "check-image.sh: ${IMAGE} not found after import" >&2; exit 1; }
  echo "check-image.sh: ${IMAGE} not listed after import ${attempt}, importing again" >&2
done
name="pvcm-verify-$$"
out="$("${ctr[@]}" run --rm "${IMAGE}" "${name}" /usr/local/bin/pv-controller-manager --version 2>&1)" || {
  echo "check-image.sh: running the image failed: ${out}" >&2
  exit 1
}
echo "check-image.sh: ${IMAGE} runs: ${out}"
plugin="$("${ctr[@]}" run --rm "${IMAGE}" "${name}-plugin" /usr/local/bin/kubectl-pvc_why --version 2>&1)" || {
  echo "check-image.sh: the kubectl plugin in the image does not run: ${plugin}" >&2
  exit 1
}
echo "check-image.sh: ${plugin}"
want="${WANT_VERSION:-}"
if [[ -n "${want}" && "${out}" != *"${want}"* ]]; then
  echo "check-image.sh: version output does not contain ${want}" >&2
  exit 1
fi
