#!/usr/bin/env bash
# Stops our pv-controller-manager and deletes the local kwokctl cluster (hack/cluster/local-up.sh).
# --binder-only: stop only pv-controller-manager. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CLUSTER_NAME="${CLUSTER_NAME:-pv-local}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
out="${REPO_ROOT}/_output/local/${CLUSTER_NAME}"

pidfile="${out}/pv-controller-manager.pid"
if [[ -f "${pidfile}" ]]; then
  pid="$(cat "${pidfile}")"
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}"
    for _ in $(seq 1 150); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pid}" 2>/dev/null || true
  fi
  rm -f "${pidfile}"
fi
[[ "${1:-}" == "--binder-only" ]] && exit 0

if [[ -x "${TOOLS_BIN}/kwokctl" ]] && "${TOOLS_BIN}/kwokctl" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}"; then
  "${TOOLS_BIN}/kwokctl" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1
fi
echo "local cluster \"${CLUSTER_NAME}\" is down"
