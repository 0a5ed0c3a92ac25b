#!/usr/bin/env bash
# Side-by-side benchmark: for every client QPS, scenario and arm, a fresh local cluster
# (hack/local-up.sh), then the scenario by bin/pv-load. upstream = KCM v1.37.2 with its own binder;
# ours = KCM without its binder + pv-controller-manager. Both arms get the same binder QPS/burst and
# sync period. Per run: claim->Bound latencies (JSON), API writes and 409s of the binder (apiserver
# audit log, user agent persistent-volume-binder), binder CPU seconds and peak RSS.
#
# Environment: QPS_LIST ("1000"), ARMS ("upstream ours"), COUNT (1000; pvc-first: PVC_FIRST_COUNT, 200),
#   CONCURRENCY (50), SCENARIOS ("prebound pvc-first matched"), SYNC_PERIOD (15s; pvc-first: 60s),
#   PVCM_ARGS (extra flags for ours), OUT (docs/benchmarks/<date>), AUDIT (1; 0: no audit log, so no
#   write counts, and no audit cost in the apiserver).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

QPS_LIST="${QPS_LIST:-1000}"
ARMS="${ARMS:-upstream ours}"
COUNT="${COUNT:-1000}"
PVC_FIRST_COUNT="${PVC_FIRST_COUNT:-200}"
CONCURRENCY="${CONCURRENCY:-50}"
SCENARIOS="${SCENARIOS:-prebound pvc-first matched}"
SYNC_PERIOD="${SYNC_PERIOD:-15s}"
OUT="${OUT:-${REPO_ROOT}/docs/benchmarks/$(date -u +%Y-%m-%d)}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
mkdir -p "${OUT}"
make --no-print-directory build >/dev/null
go build -o bin/pv-load ./cmd/pv-load

cleanup() { CLUSTER_NAME=bench hack/local-down.sh >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'echo "interrupted: tearing the cluster down" >&2; exit 130' INT TERM

# binder_pid ARM: the process that runs the binder in this arm.
binder_pid() {
  if [[ "$1" == "ours" ]]; then cat "${REPO_ROOT}/_output/local/bench/pv-controller-manager.pid"; else
    pgrep -f "${KWOK_WORKDIR}/clusters/bench/.*kube-controller-manager" | head -1
  fi
}
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

summary="${OUT}/summary.txt"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); pv-controller-manager $(bin/pv-controller-manager --version | cut -d' ' -f2-)" >"${summary}"
for qps in ${QPS_LIST}; do
  for scenario in ${SCENARIOS}; do
    sync="${SYNC_PERIOD}" count="${COUNT}"
    if [[ "${scenario}" == "pvc-first" ]]; then sync=60s count="${PVC_FIRST_COUNT}"; fi
    for arm in ${ARMS}; do
      CLUSTER_NAME=bench hack/local-down.sh >/dev/null
      echo "=== ${scenario}, ${count} claims, ${arm}, binder QPS ${qps}, sync period ${sync}" | tee -a "${summary}"
      CLUSTER_NAME=bench SECURE_PORT="${BENCH_SECURE_PORT:-10277}" ARM="${arm}" KUBE_API_QPS="${qps}" KUBE_API_BURST="${qps}" SYNC_PERIOD="${sync}" AUDIT="${AUDIT:-1}" SKIP_BUILD=1 \
        hack/local-up.sh >/dev/null
      pid="$(binder_pid "${arm}")"
      cpu_before="$(cpu_seconds "${pid}")"
      result="${OUT}/${scenario}-qps${qps}-${arm}.json"
      bin/pv-load --kubeconfig "${REPO_ROOT}/_output/local/bench/kubeconfig" --scenario "${scenario}" --count "${count}" \
        --concurrency "${CONCURRENCY}" --json "${result}" --cleanup=false --timeout 15m | tee -a "${summary}"
      cpu_after="$(cpu_seconds "${pid}")"
      rss="$(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/${pid}/status")"
      audit="${KWOK_WORKDIR}/clusters/bench/logs/audit.log"
      writes="n/a" conflicts="n/a"
      if [[ -f "${audit}" ]]; then
        writes="$(grep -c '"userAgent":"[^"]*persistent-volume-binder' "${audit}" || true)"
        conflicts="$(grep '"userAgent":"[^"]*persistent-volume-binder' "${audit}" | grep -c '"code":409' || true)"
      fi
      echo "binder: ${writes} API writes ($(awk -v w="${writes}" -v n="${count}" 'BEGIN{if (w == "n/a") print "n/a"; else printf "%.2f", w/n}') per bind), ${conflicts} conflicts (409); CPU $(awk -v a="${cpu_before}" -v b="${cpu_after}" 'BEGIN{printf "%.1f", b-a}') s; peak RSS ${rss}$([[ "${arm}" == upstream ]] && echo ' (whole KCM)')" | tee -a "${summary}"
    done
  done
done
echo "results in ${OUT}"
