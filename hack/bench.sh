#!/usr/bin/env bash
# Side-by-side benchmark: for every client QPS and arm, a fresh local cluster (hack/local-up.sh), then
# each scenario by bin/pv-load; upstream = KCM v1.37.2 with its own binder, ours = KCM without its
# binder + pv-controller-manager. Both arms get the same binder QPS and sync period.
# Results: one JSON per run and a summary table in $OUT (default docs/benchmarks/<date>).
#
# Environment: QPS_LIST (default "1000"), ARMS ("upstream ours"), COUNT (1000), CONCURRENCY (50),
#   SCENARIOS ("prebound pvc-first matched"), SYNC_PERIOD (15s; pvc-first always uses 60s),
#   PVCM_ARGS (extra flags for ours).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

QPS_LIST="${QPS_LIST:-1000}"
ARMS="${ARMS:-upstream ours}"
COUNT="${COUNT:-1000}"
CONCURRENCY="${CONCURRENCY:-50}"
SCENARIOS="${SCENARIOS:-prebound pvc-first matched}"
SYNC_PERIOD="${SYNC_PERIOD:-15s}"
OUT="${OUT:-${REPO_ROOT}/docs/benchmarks/$(date -u +%Y-%m-%d)}"
mkdir -p "${OUT}"
go build -o bin/pv-load ./cmd/pv-load

cleanup() { CLUSTER_NAME=bench hack/local-down.sh >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM

summary="${OUT}/summary.txt"
: >"${summary}"
for qps in ${QPS_LIST}; do
  for scenario in ${SCENARIOS}; do
    sync="${SYNC_PERIOD}"
    [[ "${scenario}" == "pvc-first" ]] && sync=60s
    for arm in ${ARMS}; do
      CLUSTER_NAME=bench hack/local-down.sh >/dev/null
      echo "=== qps ${qps}, ${scenario}, ${arm} (sync period ${sync})" | tee -a "${summary}"
      CLUSTER_NAME=bench ARM="${arm}" KUBE_API_QPS="${qps}" KUBE_API_BURST="${qps}" SYNC_PERIOD="${sync}" AUDIT=1 \
        hack/local-up.sh >/dev/null
      kubeconfig="${REPO_ROOT}/_output/local/bench/kubeconfig"
      result="${OUT}/${scenario}-qps${qps}-${arm}.json"
      bin/pv-load --kubeconfig "${kubeconfig}" --scenario "${scenario}" --count "${COUNT}" \
        --concurrency "${CONCURRENCY}" --json "${result}" --cleanup=false --timeout 15m | tee -a "${summary}"
      audit="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}/clusters/bench/logs/audit.log"
      if [[ -f "${audit}" ]]; then
        writes="$(grep -c '"userAgent":"[^"]*persistent-volume-binder' "${audit}" || true)"
        conflicts="$(grep '"userAgent":"[^"]*persistent-volume-binder' "${audit}" | grep -c '"code":409' || true)"
        echo "binder API writes: ${writes} ($(awk -v w="${writes}" -v n="${COUNT}" 'BEGIN{printf "%.2f", w/n}') per bind), 409 conflicts: ${conflicts}" | tee -a "${summary}"
      fi
    done
  done
done
echo "results in ${OUT}"
