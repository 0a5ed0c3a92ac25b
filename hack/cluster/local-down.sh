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

cluster_exists() { [[ -x "${TOOLS_BIN}/kwokctl" ]] && "${TOOLS_BIN}/kwokctl" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}"; }
# A delete that fails leaves the cluster's etcd behind, and the next local-up.sh of that name would
# reuse its objects: try twice, then say so.
for attempt in 1 2; do
  cluster_exists || break
  if ! log="$("${TOOLS_BIN}/kwokctl" delete cluster --name "${CLUSTER_NAME}" 2>&1)" && [[ ${attempt} == 2 ]]; then
    echo "local-down.sh: kwokctl delete cluster ${CLUSTER_NAME} failed: ${log}" >&2
    exit 1
  fi
done
if cluster_exists; then
  echo "local-down.sh: cluster \"${CLUSTER_NAME}\" still exists after two deletes" >&2
  exit 1
fi
echo "local cluster \"${CLUSTER_NAME}\" is down"
