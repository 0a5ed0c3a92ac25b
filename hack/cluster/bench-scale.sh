#!/usr/bin/env bash
# make bench-scale (#23): what a binder costs on a large settled cluster, both arms on the same
# population. One local cluster (hack/cluster/local-up.sh, audit log on) whose KCM runs without its
# binder; bin/pv-load --scenario resident writes RESIDENT pairs Bound on both sides and RESIDENT/10
# free Available PVs, with no binder running. Then, one arm after the other on that population, a
# binder alone: upstream = a second kube-controller-manager with only
# --controllers=persistentvolume-binder-controller (a binder-only KCM, so memory and CPU compare binder
# with binder), ours = pv-controller-manager; both without leader election (--leader-elect=false: the
# time to a Lease is not the binder's). Per arm:
#   - start -> caches synced (ours: /readyz; upstream: KCM's "Caches are synced" for the PV controller);
#   - FRESH pre-bound pairs created at the start: start -> all of them bound;
#   - the binder's writes to the settled population (audit log, its user agent, resident-* objects);
#   - then IDLE with nothing to do: CPU seconds per minute, RSS (now and peak), Go heap in use,
#     claim and volume syncs per minute (workqueue adds).
# Environment: RESIDENT (10000), FRESH (100), IDLE (5m), ARMS ("upstream ours"), QPS (1000, both
#   binders' client QPS and burst), SYNC_PERIOD (15s), CONCURRENCY (100, the loader's clients),
#   OUT (_output/bench-scale/<RESIDENT>): summary.txt and one <arm>.json per arm.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
RESIDENT="${RESIDENT:-10000}"
FRESH="${FRESH:-100}"
IDLE="${IDLE:-5m}"
ARMS="${ARMS:-upstream ours}"
QPS="${QPS:-1000}"
SYNC_PERIOD="${SYNC_PERIOD:-15s}"
CONCURRENCY="${CONCURRENCY:-100}"
OUT="${OUT:-${REPO_ROOT}/_output/bench-scale/${RESIDENT}}"
mkdir -p "${OUT}" && OUT="$(cd "${OUT}" && pwd)"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
export CLUSTER_NAME=bench-scale SECURE_PORT="${BENCH_SECURE_PORT:-10279}"
idle_seconds="$(awk -v d="${IDLE}" 'BEGIN{n=d+0; if (d ~ /m$/) n*=60; else if (d ~ /h$/) n*=3600; print n}')"
upstream_port=10280
kwok_dir="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}"
local_dir="${REPO_ROOT}/_output/local/${CLUSTER_NAME}"
summary="${OUT}/summary.txt"
upstream_pid="" ours_pid=""

cleanup() {
  for p in ${upstream_pid} ${ours_pid}; do kill "${p}" 2>/dev/null || true; done
  hack/cluster/local-down.sh >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'echo "interrupted: tearing the cluster down" >&2; exit 130' INT TERM

make --no-print-directory build >/dev/null
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./cmd/pv-load
hack/cluster/local-down.sh >/dev/null
ARM=ours AUDIT=1 NODES=1 KUBE_API_QPS="${QPS}" KUBE_API_BURST="${QPS}" SYNC_PERIOD="${SYNC_PERIOD}" SKIP_BUILD=1 hack/cluster/local-up.sh >/dev/null
hack/cluster/local-down.sh --binder-only
kubeconfig="${local_dir}/kubeconfig"
audit="${kwok_dir}/logs/audit.log"

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); pv-controller-manager $(bin/pv-controller-manager --version | cut -d' ' -f2-); RESIDENT=${RESIDENT} FRESH=${FRESH} IDLE=${IDLE} QPS=${QPS} SYNC_PERIOD=${SYNC_PERIOD}" | tee "${summary}"
echo "=== resident population: ${RESIDENT} pairs Bound, $((RESIDENT / 10)) free PVs, no binder running" | tee -a "${summary}"
"${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario resident --count "${RESIDENT}" --concurrency "${CONCURRENCY}" \
  --qps 100000 --prefix resident --json "${OUT}/resident.json" --cleanup=false --timeout 2h | tr '\r' '\n' | grep -v '^\[' | tee -a "${summary}"
etcd_db="$(du -sm "${kwok_dir}/etcd" 2>/dev/null | cut -f1)"
echo "etcd data: ${etcd_db:-?} MiB; apiserver RSS $(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$(pgrep -f "${kwok_dir}/.*kube-apiserver" | head -1)/status")" | tee -a "${summary}"

# binder_writes: the binder's writes to the resident population (not to the fresh pairs).
binder_writes() { grep '"userAgent":"[^"]*persistent-volume-binder' "${audit}" | grep -c '"name":"resident-' || true; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
# metrics ARM: the binder's /metrics (ours behind the cluster's admin certificate; the binder-only
# KCM allows /metrics without one, as kwokctl's KCM).
metrics() {
  if [[ "$1" == upstream ]]; then curl -sk "https://127.0.0.1:${upstream_port}/metrics"; else
    curl -sk --cert "${kwok_dir}/pki/admin.crt" --key "${kwok_dir}/pki/admin.key" "https://127.0.0.1:${SECURE_PORT}/metrics"
  fi
}
# adds FILE: claim and volume work-queue adds in a scrape.
adds() { awk '/^workqueue_adds_total\{name="(claims|volumes)"\}/ {s += $2} END {print s + 0}' "$1"; }
heap_mib() { awk '/^go_memstats_heap_inuse_bytes / {printf "%.0f", $2 / 1048576}' "$1"; }

for arm in ${ARMS}; do
  echo "=== ${arm}: binder started on ${RESIDENT} settled pairs" | tee -a "${summary}"
  writes_before="$(binder_writes)"
  start_ns="$(date +%s%N)"
  if [[ "${arm}" == upstream ]]; then
    "${kwok_dir}/bin/kube-controller-manager" --kubeconfig="${kwok_dir}/kubeconfig.yaml" \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --secure-port="${upstream_port}" \
      --controllers=persistentvolume-binder-controller --leader-elect=false \
      --kube-api-qps="${QPS}" --kube-api-burst="${QPS}" --pvclaimbinder-sync-period="${SYNC_PERIOD}" -v=2 \
      >"${OUT}/upstream.log" 2>&1 &
    upstream_pid=$!
    pid="${upstream_pid}"
    synced() { grep -q 'Caches are synced' "${OUT}/upstream.log"; } # only the PV controller's informers run here
  else
    binder_kubeconfig="${local_dir}/pv-controller-manager.kubeconfig" # local-up.sh's: the binder's own identity
    # shellcheck disable=SC2086
    env ${PVCM_ENV:-} "${BIN_DIR}/pv-controller-manager" --kubeconfig="${binder_kubeconfig}" \
      --authentication-kubeconfig="${binder_kubeconfig}" --authorization-kubeconfig="${binder_kubeconfig}" \
      --secure-port="${SECURE_PORT}" --leader-elect=false \
      --kube-api-qps="${QPS}" --kube-api-burst="${QPS}" --pvclaimbinder-sync-period="${SYNC_PERIOD}" ${PVCM_ARGS:-} \
      >"${OUT}/ours.log" 2>&1 &
    ours_pid=$!
    pid="${ours_pid}"
    synced() { curl -skf "https://127.0.0.1:${SECURE_PORT}/readyz" >/dev/null 2>&1; }
  fi
  # Fresh pairs at once: how soon a binder that just started on this population binds new work.
  "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario prebound --count "${FRESH}" --concurrency 10 \
    --qps 100000 --prefix "fresh-${arm}" --json "${OUT}/${arm}-fresh.json" --cleanup=false --timeout 30m >"${OUT}/${arm}-fresh.log" 2>&1 &
  fresh_pid=$!
  synced_s=""
  for _ in $(seq 1 6000); do
    if synced; then synced_s="$(awk -v a="${start_ns}" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')"; break; fi
    kill -0 "${pid}" 2>/dev/null || { echo "bench-scale.sh: the ${arm} binder exited" >&2; exit 1; }
    sleep 0.1
  done
  wait "${fresh_pid}" || { echo "bench-scale.sh: fresh pairs not bound in ${arm}: $(tail -3 "${OUT}/${arm}-fresh.log")" >&2; exit 1; }
  fresh_s="$(awk -v a="${start_ns}" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')"
  echo "start -> caches synced ${synced_s:-never} s; start -> ${FRESH} fresh pre-bound pairs all bound ${fresh_s} s" | tee -a "${summary}"
  # A minute for the start to settle (the first walk and any writes it makes); idle counts from then.
  sleep 60
  writes_settled=$(($(binder_writes) - writes_before))
  metrics "${arm}" >"${OUT}/${arm}-idle-before.prom"
  cpu0="$(cpu_seconds "${pid}")"
  sleep "${idle_seconds}" # the measured window: nothing happens in the cluster meanwhile
  cpu1="$(cpu_seconds "${pid}")"
  metrics "${arm}" >"${OUT}/${arm}-idle-after.prom"
  writes_idle=$(($(binder_writes) - writes_before - writes_settled))
  rss="$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/${pid}/status")"
  hwm="$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/${pid}/status")"
  heap="$(heap_mib "${OUT}/${arm}-idle-after.prom")"
  syncs_per_min="$(awk -v a="$(adds "${OUT}/${arm}-idle-before.prom")" -v b="$(adds "${OUT}/${arm}-idle-after.prom")" -v s="${idle_seconds}" 'BEGIN{printf "%.0f", (b-a)*60/s}')"
  cpu_per_min="$(awk -v a="${cpu0}" -v b="${cpu1}" -v s="${idle_seconds}" 'BEGIN{printf "%.2f", (b-a)*60/s}')"
  echo "writes to the resident population: ${writes_settled} from start to a minute after the fresh pairs bound, ${writes_idle} while idle; idle ${IDLE}: CPU ${cpu_per_min} s/min, ${syncs_per_min} syncs/min; RSS ${rss} MiB (peak ${hwm} MiB), heap in use ${heap} MiB" | tee -a "${summary}"
  cat >"${OUT}/${arm}.json" <<JSON
{"arm": "${arm}", "resident": ${RESIDENT}, "fresh": ${FRESH}, "idleSeconds": ${idle_seconds}, "syncPeriod": "${SYNC_PERIOD}",
 "startToSyncedSeconds": ${synced_s:-null}, "startToFreshBoundSeconds": ${fresh_s},
 "writesStartup": ${writes_settled}, "writesIdle": ${writes_idle},
 "idleCPUSecondsPerMinute": ${cpu_per_min}, "idleSyncsPerMinute": ${syncs_per_min},
 "rssMiB": ${rss}, "peakRSSMiB": ${hwm}, "heapInUseMiB": ${heap:-null}, "etcdMiB": ${etcd_db:-null}}
JSON
  kill "${pid}"
  wait "${pid}" 2>/dev/null || true
  upstream_pid="" ours_pid=""
done
echo "results in ${OUT}"
