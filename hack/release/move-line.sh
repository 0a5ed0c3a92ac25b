#!/usr/bin/env bash
# Moves a release line to a new upstream tag, in one command, and says what failed
# (make move-line TO=v1.38.0; docs/maintainers/patches-and-releases.md, "Moving a line"):
#   rebase   hack/release/rebase.sh TO --no-test: the line's series (its seam and adapted entries)
#            applied to k8s.io/kubernetes@TO, then the line's UPSTREAM, patches and module files
#            (go.mod, tools/, etcd/) written back, pinned to TO. On a conflict it stops with the
#            hunks: resolve in _output/rebase/TO, run hack/release/rebase.sh TO --continue, then this
#            command again. A line already on TO is rebased again from its series: releases/ must
#            come out unchanged (git diff).
#   seams    hack/verify/verify-release-seams.sh: what differs per line is still only its seams
#   verify   make verify KUBE_VERSION=TO: the series applies, gofmt, go vet, go.mod pinned and tidy
#   test     make test KUBE_VERSION=TO TEST_RACE= TORTURE_SEEDS=100: upstream's unit tests of the
#            package on the patched copy, ours, and model torture seeds 1-100
#   preview  when every step passed, a line on a final release (vX.Y.Z, no pre-release) leaves
#            preview: its PREVIEW file is removed, so make dist ships it
# Every check runs even when an earlier one failed; the summary gives each step's result and log
# (_output/move-line/TO/STEP.log), and the exit status is 1 when one failed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

to="${1:-}"
[[ "${to}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] || { echo "usage: hack/release/move-line.sh vX.Y.Z[-rc.N] (make move-line TO=...)" >&2; exit 2; }
line="$(release_line "${to}")"
[[ -f "${RELEASES_DIR}/${line}/UPSTREAM" ]] || { echo "move-line.sh: ${line} is not carried ($(carried_lines | tr '\n' ' ')); hack/release/rebase.sh ${to} starts a line" >&2; exit 2; }
logs="${REPO_ROOT}/_output/move-line/${to}"
mkdir -p "${logs}"
results=()
failed=0
step() {
  local name="$1" start=${SECONDS}
  shift
  echo "move-line.sh: ${name}: $* (log: ${logs#"${REPO_ROOT}/"}/${name}.log)"
  if (cd "${REPO_ROOT}" && "$@") >"${logs}/${name}.log" 2>&1; then
    results+=("$(printf '%-8s ok      %4ss' "${name}" $((SECONDS - start)))")
  else
    results+=("$(printf '%-8s FAILED  %4ss  %s' "${name}" $((SECONDS - start)) "${logs#"${REPO_ROOT}/"}/${name}.log")")
    failed=1
    tail -20 "${logs}/${name}.log" | sed 's/^/  | /' >&2
    return 1
  fi
}
summary() {
  echo
  echo "move-line.sh: ${line} to ${to}"
  printf '  %s\n' "${results[@]}"
  [[ ${failed} -eq 0 ]] && echo "move-line.sh: ${line} is on ${to}; review git diff, update the compatibility table (README.md, docs/maintainers/patches-and-releases.md), commit"
  exit "${failed}"
}

step rebase hack/release/rebase.sh "${to}" --no-test || summary
step seams hack/verify/verify-release-seams.sh || true
if [[ "${line}" == "$(default_line)" ]]; then
  step verify make verify || true
  step test make test TEST_RACE= TORTURE_SEEDS=100 || true
else
  step verify make verify KUBE_VERSION="${to}" || true
  step test make test KUBE_VERSION="${to}" TEST_RACE= TORTURE_SEEDS=100 || true
fi
if [[ ${failed} -eq 0 && "${to}" != *-* && -f "${RELEASES_DIR}/${line}/PREVIEW" ]]; then
  rm "${RELEASES_DIR}/${line}/PREVIEW"
  results+=("$(printf '%-8s ok         0s  (%s leaves preview: releases/%s/PREVIEW removed)' preview "${line}" "${line}")")
fi
summary
