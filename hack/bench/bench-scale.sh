#!/usr/bin/env bash
# make bench-scale: what a binder costs on a large settled cluster, both arms on the same
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
#   - then IDLE with nothing to do: CPU seconds per minute, RSS (now and peak), Go heap in use and live after a forced collection (both per volume or claim),
#     claim and volume syncs per minute (workqueue adds);
#   - fresh work under a full resync (FRESH_RESYNC pairs, 0 = skipped): before the population, each
#     arm alone on the empty cluster binds FRESH_RESYNC pre-bound pairs created at once; after the
#     idle window the same number are created again while a full pass runs (ours: once its first
#     full resync has started, pv_controller_requeues_total{reason="full-resync"} > 0, 5 minutes
#     after its start by default; upstream re-queues everything every sync period): claim->Bound
#     p50 and all bound, against the empty cluster's;
#   - failover (FAILOVER=1): two replicas of the arm with leader election on a Lease of their own
#     (upstream: binder-only KCMs on kube-system/pv-binder-kcm), the leader once synced, the standby
#     waiting for the Lease; the leader is stopped (crash: SIGKILL, the Lease runs out; stop: SIGTERM,
#     as a rolling upgrade does) and FAILOVER_PAIRS pre-bound pairs are created at that moment:
#     stop -> the standby holds the Lease -> its caches synced -> those pairs all bound; and the new
#     leader's writes to the settled population. A warm standby (an arm whose flags have
#     --leader-elect-warm-standby) is failed over to once it logs its caches synced.
# Environment: RESIDENT (10000), FRESH (100), IDLE (5m), FRESH_RESYNC (0), FAILOVER (1), FAILOVER_PAIRS (10), ARMS ("upstream ours"), QPS (1000, both
#   binders' client QPS and burst), SYNC_PERIOD (15s), CONCURRENCY (100, the loader's clients),
#   OUT (_output/bench-scale/<RESIDENT>): summary.txt and one <arm>.json per arm.
#   An arm "ours+NAME" is ours with VARIANT_NAME's settings: PVCM_BIN=<another build>, PVCM_ARGS=<one
#   flag>, anything else as the binder's environment (as make bench's arms).
#   RESTART=0 runs only the failover (no start, idle or full-pass phases). An arm whose flags need
#   leader election (--leader-elect-warm-standby) runs only the failover: the single-process phases
#   run without it.
#   KEEP=1 leaves the cluster up at the end; REUSE=1 runs the arms on a cluster a KEEP=1 run left
#   (no new population, no empty-cluster reference: the earlier run's summary has it).
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
FAILOVER="${FAILOVER:-1}"
FRESH_RESYNC="${FRESH_RESYNC:-0}"
FAILOVER_PAIRS="${FAILOVER_PAIRS:-10}"
kwok_dir="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}"
local_dir="${REPO_ROOT}/_output/local/${CLUSTER_NAME}"
summary="${OUT}/summary.txt"
upstream_pid="" ours_pid=""

# arm_settings ARM: sets arm_bin, arm_args and arm_env for ours or ours+NAME (VARIANT_NAME's
# PVCM_BIN, PVCM_ARGS, anything else as environment).
arm_settings() {
  local arm="$1" kv
  arm_bin="${BIN_DIR}/pv-controller-manager" arm_args="${PVCM_ARGS:-}" arm_env="${PVCM_ENV:-}"
  if [[ "${arm}" == *+* ]]; then
    local variant="VARIANT_${arm#*+}"
    for kv in ${!variant:-}; do
      case "${kv}" in
        PVCM_BIN=*) arm_bin="${kv#*=}" ;;
        PVCM_ARGS=*) arm_args="${kv#*=}" ;;
        *) arm_env="${arm_env} ${kv}" ;;
      esac
    done
  fi
}
# needs_leader_election ARM: whether ARM's flags need leader election (--leader-elect-warm-standby),
# so it cannot run the single-process phases (--leader-elect=false), only the failover.
needs_leader_election() {
  [[ "$1" != upstream ]] || return 1
  arm_settings "$1"
  [[ " ${arm_args} " =~ " --leader-elect-warm-standby"(=true)?" " ]]
}
single_process_arms=""
for arm in ${ARMS}; do
  if ! needs_leader_election "${arm}"; then single_process_arms="${single_process_arms} ${arm}"
  elif [[ "${FAILOVER}" != 1 ]]; then
    echo "bench-scale.sh: arm ${arm} needs leader election, so it runs only in the failover, and FAILOVER=${FAILOVER}: nothing to run for it" >&2
    exit 2
  fi
done

replica_pids=()
cleanup() {
  for p in ${upstream_pid} ${ours_pid} "${replica_pids[@]}"; do kill "${p}" 2>/dev/null || true; done
  [[ "${KEEP:-0}" == 1 ]] || hack/cluster/local-down.sh >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'echo "interrupted: tearing the cluster down" >&2; exit 130' INT TERM

make --no-print-directory build >/dev/null
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./test/cmd/pv-load
REUSE="${REUSE:-0}"
if [[ "${REUSE}" != 1 ]]; then
  hack/cluster/local-down.sh >/dev/null
  ARM=ours AUDIT=1 NODES=1 KUBE_API_QPS="${QPS}" KUBE_API_BURST="${QPS}" SYNC_PERIOD="${SYNC_PERIOD}" SKIP_BUILD=1 hack/cluster/local-up.sh >/dev/null
  hack/cluster/local-down.sh --binder-only
fi
kubeconfig="${local_dir}/kubeconfig"
audit="${kwok_dir}/logs/audit.log"

summary_mode=">"
[[ "${REUSE}" == 1 ]] && summary_mode=">>"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); pv-controller-manager $("${BIN_DIR}/pv-controller-manager" --version | cut -d' ' -f2-); RESIDENT=${RESIDENT} FRESH=${FRESH} IDLE=${IDLE} FRESH_RESYNC=${FRESH_RESYNC} QPS=${QPS} SYNC_PERIOD=${SYNC_PERIOD} ARMS=${ARMS}$( for a in ${ARMS}; do [[ "${a}" == *+* ]] && v="VARIANT_${a#*+}" && printf ' %s="%s"' "${v}" "${!v:-}"; done)$([[ "${REUSE}" == 1 ]] && echo " REUSE=1")" | tee $([[ "${summary_mode}" == ">>" ]] && echo -a) "${summary}"

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
# live_heap_mib ARM: the Go heap the binder's objects hold: a heap profile forces a collection, the
# scrape after it reads the live bytes (go_memstats_heap_alloc_bytes; heap in use above counts
# garbage not yet collected too).
live_heap_mib() {
  if [[ "$1" == upstream ]]; then curl -sk -o "${OUT}/$1.heap" "https://127.0.0.1:${upstream_port}/debug/pprof/heap?gc=1"; else
    curl -sk -o "${OUT}/$1.heap" --cert "${kwok_dir}/pki/admin.crt" --key "${kwok_dir}/pki/admin.key" "https://127.0.0.1:${SECURE_PORT}/debug/pprof/heap?gc=1"
  fi
  metrics "$1" | awk '/^go_memstats_heap_alloc_bytes / {printf "%.0f", $2 / 1048576}'
}
# kib_per_object MIB: MIB over the volumes and claims the binder holds.
kib_per_object() { awk -v m="$1" -v n="$((2 * RESIDENT + RESIDENT / 10 + 2 * FRESH))" 'BEGIN{printf "%.1f", m * 1024 / n}'; }

since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}'; }
# pv_synced LOG: the PV controller's caches synced, in either binder's log: a "Caches are synced"
# after "Starting persistent volume controller" (the serving side logs the same words earlier).
pv_synced() { awk '/Starting persistent volume controller/ {s = 1} s && /Caches are synced/ {f = 1} END {exit !f}' "$1"; }

# launch ARM PORT LOG FLAG...: a binder of ARM in the background, its leader-election FLAGs given;
# sets launched_pid. upstream: a binder-only KCM; ours (and ours+NAME) under local-up.sh's identity
# for the binder.
launch() {
  local arm="$1" port="$2" log="$3" kc="${local_dir}/pv-controller-manager.kubeconfig"
  arm_settings "${arm}"
  local bin="${arm_bin}" args="${arm_args}" penv="${arm_env}"
  shift 3
  if [[ "${arm}" == upstream ]]; then
    "${kwok_dir}/bin/kube-controller-manager" --kubeconfig="${kwok_dir}/kubeconfig.yaml" \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/heap --secure-port="${port}" \
      --controllers=persistentvolume-binder-controller "$@" -v=2 \
      --kube-api-qps="${QPS}" --kube-api-burst="${QPS}" --pvclaimbinder-sync-period="${SYNC_PERIOD}" >"${log}" 2>&1 &
  else
    # shellcheck disable=SC2086
    env ${penv} "${bin}" --kubeconfig="${kc}" --authentication-kubeconfig="${kc}" \
      --authorization-kubeconfig="${kc}" --secure-port="${port}" "$@" ${args} \
      --kube-api-qps="${QPS}" --kube-api-burst="${QPS}" --pvclaimbinder-sync-period="${SYNC_PERIOD}" >"${log}" 2>&1 &
  fi
  launched_pid=$!
}

# wait_arm_synced ARM PID LOG: polls (0.1 s) until the arm's PV controller has synced its caches;
# fails if PID exits or after 10 min. Ours: /readyz; upstream: its LOG.
wait_arm_synced() {
  for _ in $(seq 1 6000); do
    if [[ "$1" == upstream ]]; then pv_synced "$3" && return 0
    else curl -skf "https://127.0.0.1:${SECURE_PORT}/readyz" >/dev/null 2>&1 && return 0; fi
    kill -0 "$2" 2>/dev/null || { echo "bench-scale.sh: the $1 binder exited" >&2; return 1; }
    sleep 0.1
  done
  echo "bench-scale.sh: the $1 binder's caches not synced after 10 min" >&2
  return 1
}
# fresh_pairs PREFIX: FRESH_RESYNC pre-bound pairs created at once by 10 clients; waits until all are
# bound and prints pv-load's latency line (claim->Bound p50 ... all bound after ...).
fresh_pairs() {
  "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario prebound --count "${FRESH_RESYNC}" --concurrency 10 \
    --qps 100000 --prefix "$1" --json "${OUT}/$1.json" --cleanup=false --timeout 30m >"${OUT}/$1.log" 2>&1 ||
    { echo "bench-scale.sh: pairs $1 not bound: $(tail -3 "${OUT}/$1.log")" >&2; return 1; }
  tr '\r' '\n' <"${OUT}/$1.log" | grep -m1 'claim->Bound' | sed 's/^[^;]*; //'
}
# full_resync_requeues FILE: keys a full pass has queued (the periodic full resync, or the paced
# first pass over the settled objects the binder found at its start), in a scrape of ours' /metrics.
full_resync_requeues() { awk '/^pv_controller_requeues_total\{.*reason="(full-resync|initial-pass)"/ {s += $2} END {print s + 0}' "$1"; }
# name ARM: ARM as a Kubernetes name prefix ("ours+x" -> "ours-x"); on a reused cluster with the
# time appended, as an earlier run's objects are still there.
run_tag=""
[[ "${REUSE:-0}" == 1 ]] && run_tag="-$(date +%H%M%S)"
name() { echo "${1//+/-}${run_tag}"; }

# Fresh pairs on the empty cluster, each arm alone: the reference for the same pairs under a full resync.
if ((FRESH_RESYNC > 0)) && [[ "${REUSE}" != 1 ]]; then
  for arm in ${single_process_arms}; do
    echo "=== ${arm}: ${FRESH_RESYNC} pre-bound pairs created at once on the empty cluster" | tee -a "${summary}"
    if [[ "${arm}" == upstream ]]; then launch upstream "${upstream_port}" "${OUT}/upstream-empty.log" --leader-elect=false
    else launch "${arm}" "${SECURE_PORT}" "${OUT}/${arm}-empty.log" --leader-elect=false; fi
    pid="${launched_pid}"
    wait_arm_synced "${arm}" "${pid}" "${OUT}/${arm}-empty.log"
    line="$(fresh_pairs "empty-$(name "${arm}")")"
    echo "empty cluster: ${line}" | tee -a "${summary}"
    echo "{\"arm\": \"${arm}\", \"pairs\": ${FRESH_RESYNC}, \"where\": \"empty\", \"result\": \"${line}\"}" >"${OUT}/${arm}-empty.summary.json"
    kill "${pid}"
    wait "${pid}" 2>/dev/null || true
  done
fi

if [[ "${REUSE}" != 1 ]]; then
  echo "=== resident population: ${RESIDENT} pairs Bound, $((RESIDENT / 10)) free PVs, no binder running" | tee -a "${summary}"
  "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario resident --count "${RESIDENT}" --concurrency "${CONCURRENCY}" \
    --qps 100000 --prefix resident --json "${OUT}/resident.json" --cleanup=false --timeout 2h | tr '\r' '\n' | grep -v '^\[' | tee -a "${summary}"
else
  echo "=== the population a KEEP=1 run left: $("${TOOLS_BIN}/kubectl" --kubeconfig "${kubeconfig}" get pvc -A --no-headers 2>/dev/null | wc -l) claims" | tee -a "${summary}"
fi
etcd_db="$(du -sm "${kwok_dir}/etcd" 2>/dev/null | cut -f1)"
echo "etcd data: ${etcd_db:-?} MiB; apiserver RSS $(awk '/VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$(pgrep -f "${kwok_dir}/.*kube-apiserver" | head -1)/status")" | tee -a "${summary}"

# RESTART=0 skips the single-process phases (start, idle, full pass): failover only. An arm whose
# flags need leader election never runs them.
restart_arms="${single_process_arms}"
[[ "${RESTART:-1}" == 1 ]] || restart_arms=""
for arm in ${ARMS}; do
  if [[ "${RESTART:-1}" == 1 ]] && needs_leader_election "${arm}"; then
    echo "=== ${arm}: start, idle and full pass not run (its flags need leader election); failover only" | tee -a "${summary}"
  fi
done
for arm in ${restart_arms}; do
  echo "=== ${arm}: binder started on ${RESIDENT} settled pairs" | tee -a "${summary}"
  writes_before="$(binder_writes)"
  start_ns="$(date +%s%N)"
  if [[ "${arm}" == upstream ]]; then
    launch upstream "${upstream_port}" "${OUT}/upstream.log" --leader-elect=false
    upstream_pid="${launched_pid}"
    pid="${upstream_pid}"
    synced() { pv_synced "${OUT}/upstream.log"; }
  else
    launch "${arm}" "${SECURE_PORT}" "${OUT}/${arm}.log" --leader-elect=false
    ours_pid="${launched_pid}"
    pid="${ours_pid}"
    synced() { curl -skf "https://127.0.0.1:${SECURE_PORT}/readyz" >/dev/null 2>&1; }
  fi
  # Fresh pairs at once: how soon a binder that just started on this population binds new work.
  "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario prebound --count "${FRESH}" --concurrency 10 \
    --qps 100000 --prefix "fresh-$(name "${arm}")" --json "${OUT}/${arm}-fresh.json" --cleanup=false --timeout 30m >"${OUT}/${arm}-fresh.log" 2>&1 &
  fresh_pid=$!
  synced_s=""
  for _ in $(seq 1 6000); do
    if synced; then synced_s="$(since "${start_ns}")"; break; fi
    kill -0 "${pid}" 2>/dev/null || { echo "bench-scale.sh: the ${arm} binder exited" >&2; exit 1; }
    sleep 0.1
  done
  wait "${fresh_pid}" || { echo "bench-scale.sh: fresh pairs not bound in ${arm}: $(tail -3 "${OUT}/${arm}-fresh.log")" >&2; exit 1; }
  fresh_s="$(since "${start_ns}")"
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
  live="$(live_heap_mib "${arm}")"
  syncs_per_min="$(awk -v a="$(adds "${OUT}/${arm}-idle-before.prom")" -v b="$(adds "${OUT}/${arm}-idle-after.prom")" -v s="${idle_seconds}" 'BEGIN{printf "%.0f", (b-a)*60/s}')"
  cpu_per_min="$(awk -v a="${cpu0}" -v b="${cpu1}" -v s="${idle_seconds}" 'BEGIN{printf "%.2f", (b-a)*60/s}')"
  echo "writes to the resident population: ${writes_settled} from start to a minute after the fresh pairs bound, ${writes_idle} while idle; idle ${IDLE}: CPU ${cpu_per_min} s/min, ${syncs_per_min} syncs/min; RSS ${rss} MiB (peak ${hwm} MiB), heap in use ${heap} MiB; live heap after a forced GC ${live:-?} MiB; per volume or claim: live heap $(kib_per_object "${live:-0}") KiB, RSS $(kib_per_object "${rss}") KiB, peak $(kib_per_object "${hwm}") KiB" | tee -a "${summary}"
  resync_line=""
  if ((FRESH_RESYNC > 0)); then
    # Ours: wait for its first full resync (it starts a full period after the binder's start).
    if [[ "${arm}" != upstream ]]; then
      for _ in $(seq 1 120); do
        metrics "${arm}" >"${OUT}/${arm}-resync-before.prom"
        (($(full_resync_requeues "${OUT}/${arm}-resync-before.prom") > 0)) && break
        sleep 5
      done
    fi
    metrics "${arm}" >"${OUT}/${arm}-resync-before.prom"
    resync_line="$(fresh_pairs "resync-$(name "${arm}")")"
    metrics "${arm}" >"${OUT}/${arm}-resync-after.prom"
    during="$(($(full_resync_requeues "${OUT}/${arm}-resync-after.prom") - $(full_resync_requeues "${OUT}/${arm}-resync-before.prom")))"
    [[ "${arm}" == upstream ]] && during="$(($(adds "${OUT}/${arm}-resync-after.prom") - $(adds "${OUT}/${arm}-resync-before.prom")))"
    echo "${FRESH_RESYNC} pairs created during a full pass (keys queued meanwhile, ours: by its full resync; upstream: all work-queue adds: ${during}): ${resync_line}" | tee -a "${summary}"
  fi
  cat >"${OUT}/${arm}.json" <<JSON
{"arm": "${arm}", "resident": ${RESIDENT}, "fresh": ${FRESH}, "idleSeconds": ${idle_seconds}, "syncPeriod": "${SYNC_PERIOD}",
 "startToSyncedSeconds": ${synced_s:-null}, "startToFreshBoundSeconds": ${fresh_s},
 "writesStartup": ${writes_settled}, "writesIdle": ${writes_idle},
 "idleCPUSecondsPerMinute": ${cpu_per_min}, "idleSyncsPerMinute": ${syncs_per_min},
 "rssMiB": ${rss}, "peakRSSMiB": ${hwm}, "heapInUseMiB": ${heap:-null}, "liveHeapMiB": ${live:-null}, "etcdMiB": ${etcd_db:-null},
 "freshUnderFullResync": "${resync_line}"}
JSON
  kill "${pid}"
  wait "${pid}" 2>/dev/null || true
  upstream_pid="" ours_pid=""
done

# start_replica ARM N: replica N (1, 2) of ARM with leader election, on ports of its own; sets replica_pid.
start_replica() {
  local port=$((10280 + 2 * $2 + 1)) # 10283, 10285 (ours); upstream one below
  [[ "$1" == upstream ]] && port=$((port - 1))
  if [[ "$1" == upstream ]]; then
    launch upstream "${port}" "${OUT}/$1-replica-$2.log" --leader-elect=true --leader-elect-resource-name=pv-binder-kcm
  else
    launch "$1" "${port}" "${OUT}/$1-replica-$2.log" --leader-elect=true
  fi
  replica_pid="${launched_pid}"
  replica_pids+=("${replica_pid}")
}
# wait_log FILE PATTERN PID: polls (0.1 s) until FILE has PATTERN; fails if PID exits or after 30 min.
wait_log() {
  for _ in $(seq 1 18000); do
    grep -qiE "$2" "$1" 2>/dev/null && return 0 # (the log may not exist yet)
    kill -0 "$3" 2>/dev/null || { echo "bench-scale.sh: $1's process exited: $(tail -3 "$1")" >&2; return 1; }
    sleep 0.1
  done
  echo "bench-scale.sh: no \"$2\" in $1 after 30 min" >&2
  return 1
}
leading_pattern='successfully acquired lease'
# wait_synced FILE PID: polls (0.1 s) until pv_synced FILE; fails if PID exits or after 30 min.
wait_synced() {
  for _ in $(seq 1 18000); do
    pv_synced "$1" && return 0
    kill -0 "$2" 2>/dev/null || { echo "bench-scale.sh: $1's process exited: $(tail -3 "$1")" >&2; return 1; }
    sleep 0.1
  done
  echo "bench-scale.sh: $1: caches not synced after 30 min" >&2
  return 1
}
if [[ "${FAILOVER}" == "1" ]]; then
  for arm in ${ARMS}; do
    for mode in crash stop; do
      echo "=== ${arm}: failover (${mode}) on ${RESIDENT} settled pairs" | tee -a "${summary}"
      replica_pids=()
      start_replica "${arm}" 1 && leader="${replica_pid}"
      wait_log "${OUT}/${arm}-replica-1.log" "${leading_pattern}" "${leader}"
      wait_synced "${OUT}/${arm}-replica-1.log" "${leader}"
      start_replica "${arm}" 2 && standby="${replica_pid}"
      wait_log "${OUT}/${arm}-replica-2.log" "attempting to acquire leader lease" "${standby}"
      # A warm standby (--leader-elect-warm-standby) is failed over to once its caches have synced,
      # as one that has been running a while.
      if tr '\0' ' ' <"/proc/${standby}/cmdline" | grep -q -- --leader-elect-warm-standby; then
        wait_log "${OUT}/${arm}-replica-2.log" "Warm standby: the binder's caches have synced" "${standby}"
      fi
      writes_before="$(binder_writes)"
      t0="$(date +%s%N)"
      if [[ "${mode}" == crash ]]; then kill -KILL "${leader}"; else kill -TERM "${leader}"; fi
      "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario prebound --count "${FAILOVER_PAIRS}" --concurrency 10 \
        --qps 100000 --prefix "failover-$(name "${arm}")-${mode}" --json "${OUT}/${arm}-failover-${mode}.json" --cleanup=false --timeout 30m \
        >"${OUT}/${arm}-failover-${mode}.log" 2>&1 &
      pairs_pid=$!
      wait_log "${OUT}/${arm}-replica-2.log" "${leading_pattern}" "${standby}"
      lease_s="$(since "${t0}")"
      wait_synced "${OUT}/${arm}-replica-2.log" "${standby}"
      synced_s="$(since "${t0}")"
      wait "${pairs_pid}" || { echo "bench-scale.sh: failover pairs not bound in ${arm}: $(tail -3 "${OUT}/${arm}-failover-${mode}.log")" >&2; exit 1; }
      bound_s="$(since "${t0}")"
      sleep 30 # the new leader's first walk over the population, for its writes
      writes=$(($(binder_writes) - writes_before))
      echo "leader ${mode} -> standby leads ${lease_s} s -> its caches synced ${synced_s} s; ${FAILOVER_PAIRS} pairs created at the ${mode} all bound ${bound_s} s; new leader's writes to the resident population (30 s after): ${writes}" | tee -a "${summary}"
      cat >"${OUT}/${arm}-failover-${mode}.summary.json" <<JSON
{"arm": "${arm}", "mode": "${mode}", "resident": ${RESIDENT}, "pairs": ${FAILOVER_PAIRS},
 "stopToLeadingSeconds": ${lease_s}, "stopToSyncedSeconds": ${synced_s}, "stopToPairsBoundSeconds": ${bound_s}, "writesResident": ${writes}}
JSON
      for p in "${replica_pids[@]}"; do kill "${p}" 2>/dev/null || true; wait "${p}" 2>/dev/null || true; done
      replica_pids=()
    done
  done
fi
echo "results in ${OUT}"
