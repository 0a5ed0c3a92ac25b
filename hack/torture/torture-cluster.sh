#!/usr/bin/env bash
# make torture-cluster: the cluster torture (test/torture/cluster, docs/maintainers/torture.md) on a
# local kwokctl cluster whose KCM runs without its binder: upstream's binder (KCM with only
# persistentvolume-binder-controller) and ours, one after the other, each as two replicas behind the
# fault-injecting proxy, with the same seed. Report: _output/torture-cluster/report.md.
#   TORTURE_CLUSTER_DURATION (5m per arm), TORTURE_SEED (from the clock), TORTURE_ARMS
#   ("upstream,ours"), TORTURE_FLAGS (more pv-torture flags: bin/pv-torture --help), TORTURE_OUT
#   (_output/torture-cluster), CLUSTER_NAME (torture): two runs at once need two of each
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

export CLUSTER_NAME="${CLUSTER_NAME:-torture}"
out="${TORTURE_OUT:-${REPO_ROOT}/_output/torture-cluster}"
mkdir -p "${out}"
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
# KCM without its binder (ARM=ours); our binder from local-up is stopped: pv-torture starts the
# arm's binders itself, behind its proxy.
SECURE_PORT="${SECURE_PORT:-10287}" ARM=ours hack/cluster/local-up.sh >/dev/null
hack/cluster/local-down.sh --binder-only
go build $(module_flags .) -o "${BIN_DIR}/pv-torture" ./test/cmd/pv-torture
seed_flag=()
[[ -n "${TORTURE_SEED:-}" ]] && seed_flag=(--seed "${TORTURE_SEED}")
# shellcheck disable=SC2086
"${BIN_DIR}/pv-torture" --kubeconfig "${REPO_ROOT}/_output/local/${CLUSTER_NAME}/kubeconfig" \
  --bin-dir "${BIN_DIR}" --tools-bin "${TOOLS_BIN}" --work-dir "${out}" --cluster-dir "${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}/clusters/${CLUSTER_NAME}" \
  --duration "${TORTURE_CLUSTER_DURATION:-5m}" --arms "${TORTURE_ARMS:-upstream,ours}" "${seed_flag[@]}" ${TORTURE_FLAGS:-}
