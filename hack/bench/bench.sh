#!/usr/bin/env bash
# Side-by-side benchmark: for every client QPS, scenario and arm, a fresh local cluster
# (hack/cluster/local-up.sh), then the scenario by bin/pv-load. upstream = KCM of the default release (releases/DEFAULT;
# make bench KUBE_VERSION=... for another) with its own binder;
# ours = KCM without its binder + pv-controller-manager. Both arms get the same binder QPS/burst and
# sync period. Per run: claim->Bound latencies (JSON), API writes and 409s of the binder (apiserver
# audit log, user agent persistent-volume-binder), binder CPU seconds and peak RSS.
#
# Environment: QPS_LIST ("20 1000": KCM's default, and high enough that the binder never reaches it), ARMS ("upstream ours"), COUNT (1000; pvc-first: PVC_FIRST_COUNT, 200;
#   prebound: each of PREBOUND_COUNTS, "COUNT 10000"),
#   CONCURRENCY (50), SCENARIOS (default: the default set of `bin/pv-load --list`, which names every
#   scenario, its count variable and sync period; wffc uses BENCH_NODES (20) kwok nodes), SYNC_PERIOD (15s; a scenario may set its own: pvc-first 60s),
#   ARMS may also name variants, ours+NAME or upstream+NAME: the arm with the environment assignments
#   in VARIANT_NAME, e.g. ARMS="upstream ours ours+admin" VARIANT_admin="BINDER_IDENTITY=admin", or
#   VARIANT_c4="PVCM_ARGS=--pvclaimbinder-concurrent-syncs=4", or (both arms) VARIANT_nounused=
#   "KCM_ARGS=feature-gates=PersistentVolumeClaimUnusedSinceTime=false" (one word per assignment),
#   PVCM_ARGS (extra flags for ours), PVCM_BIN (another build of ours, e.g. VARIANT_before="PVCM_BIN=/tmp/pvcm-before"
#   to measure a patch against the commit before it in one run), PVCM_ENV (extra environment for ours, e.g. GOGC=200), OUT (docs/results/benchmarks/<date>), AUDIT (1; 0: no audit log, so no
#   write counts, and no audit cost in the apiserver), CEILING (1: measure the apiserver's write
#   throughput first, on a fresh cluster with no binder; 0: skip), LOAD_QPS (client QPS of the load
#   generator, 100000: the objects are created as fast as the apiserver takes them), LOAD_TIMEOUT (30m:
#   how long pv-load waits for every claim to be Bound; a run that times out still reports what was
#   bound by then, e.g. an arm that cannot finish 100 000 pairs within an hour), PROFILE (0; 1: a CPU
#   profile of ours over each run, RUN.pprof beside the raw data: 20-second profiles from its
#   /debug/pprof, merged; `go tool pprof -top RUN.pprof`).
# --quick: COUNT=100, PVC_FIRST_COUNT=50, QPS_LIST=1000, OUT=_output/bench-quick (a smoke run, minutes).
# After the runs, hack/cmd/benchreport writes OUT/report.md and OUT/cdf-*.png.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
if [[ "${1:-}" == "--quick" ]]; then
  COUNT="${COUNT:-100}" PVC_FIRST_COUNT="${PVC_FIRST_COUNT:-50}" QPS_LIST="${QPS_LIST:-1000}" PREBOUND_COUNTS="${PREBOUND_COUNTS:-100}"
  OUT="${OUT:-${REPO_ROOT}/_output/bench-quick}"
fi
cd "${REPO_ROOT}"

QPS_LIST="${QPS_LIST:-20 1000}"
ARMS="${ARMS:-upstream ours}"
COUNT="${COUNT:-1000}"
PVC_FIRST_COUNT="${PVC_FIRST_COUNT:-200}"
CONCURRENCY="${CONCURRENCY:-50}"
PREBOUND_COUNTS="${PREBOUND_COUNTS:-${COUNT} 10000}"
SYNC_PERIOD="${SYNC_PERIOD:-15s}"
OUT="${OUT:-${REPO_ROOT}/docs/results/benchmarks/$(date -u +%Y-%m-%d)}"
mkdir -p "${OUT}" && OUT="$(cd "${OUT}" && pwd)" # benchreport runs elsewhere
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
make --no-print-directory build >/dev/null
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./test/cmd/pv-load
(cd hack/cmd/benchreport && GOWORK=off go build -o "${BIN_DIR}/benchreport" .)

cleanup() { CLUSTER_NAME=bench hack/cluster/local-down.sh >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'echo "interrupted: tearing the cluster down" >&2; exit 130' INT TERM

# binder_pid ARM: the process that runs the binder in this arm.
binder_pid() {
  if [[ "$1" == ours* ]]; then cat "${REPO_ROOT}/_output/local/bench/pv-controller-manager.pid"; else
    pgrep -f "${KWOK_WORKDIR}/clusters/bench/.*kube-controller-manager" | head -1
  fi
}
# profile_while FILE MARKER: CPU profiles of ours, 20 s each, while MARKER exists, merged into FILE
# (its /debug/pprof, with the cluster's admin certificate: the binder's authorizer delegates to the
# apiserver).
profile_while() {
  local pki="${KWOK_WORKDIR}/clusters/bench/pki" part=0
  while [[ -e "$2" ]]; do
    curl -sk --cert "${pki}/admin.crt" --key "${pki}/admin.key" -o "$1.part${part}" \
      "https://127.0.0.1:${BENCH_SECURE_PORT:-10277}/debug/pprof/profile?seconds=20" || true
    part=$((part + 1))
  done
  go tool pprof -proto "$1".part* >"$1" 2>/dev/null || echo "bench.sh: no CPU profile in $1" >&2
  rm -f "$1".part*
}
# scrape_control_plane FILE: KCM's queue and client-latency metrics (prefixed kcm_; its /metrics is
# open on kwokctl's clusters) and the apiserver's priority-and-fairness waits, for benchreport's
# "the control plane during the run" (KCM's other controllers beside each arm).
scrape_control_plane() {
  local kcm port pki="${KWOK_WORKDIR}/clusters/bench/pki" server
  kcm="$(pgrep -f "${KWOK_WORKDIR}/clusters/bench/.*kube-controller-manager" | head -1)"
  port="$(tr '\0' '\n' <"/proc/${kcm}/cmdline" | sed -n 's/^--secure-port=//p' | tail -1)"
  server="$(awk '/server:/ {print $2; exit}' "${REPO_ROOT}/_output/local/bench/kubeconfig")"
  {
    curl -sk "https://127.0.0.1:${port}/metrics" |
      grep -E '^(workqueue_(queue|work)_duration_seconds_(sum|count)|workqueue_(adds|retries)_total|rest_client_request_duration_seconds_(sum|count)|rest_client_requests_total)' | sed 's/^/kcm_/'
    # apiserver_request_total of PVs and claims: writes by every client, as a user without an audit log counts them.
    curl -sk --cert "${pki}/admin.crt" --key "${pki}/admin.key" "${server}/metrics" |
      grep -E '^apiserver_flowcontrol_request_wait_duration_seconds_(sum|count)|^apiserver_request_total\{.*resource="persistentvolume(claim)?s"'
  } >"$1" || true
}
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
# cpu_snapshot ARM: one line "name seconds" per control-plane process (and our binder), and the
# machine's busy and total CPU seconds (/proc/stat), for where the cores went during a run
# (benchreport's "CPU during the run"; docs/operators/scale.md "Binding at scale").
cpu_snapshot() {
  local name pid
  for name in kube-apiserver etcd kube-controller-manager kube-scheduler kwok-controller; do
    pid="$(pgrep -f "${KWOK_WORKDIR}/clusters/bench/bin/${name} " | head -1)"
    [[ -n "${pid}" ]] && echo "${name} $(cpu_seconds "${pid}")"
  done
  if [[ "$1" == ours* ]] && pid="$(binder_pid "$1")" && [[ -n "${pid}" ]]; then
    echo "pv-controller-manager $(cpu_seconds "${pid}")"
  fi
  awk -v hz="$(getconf CLK_TCK)" '/^cpu / {busy = $2 + $3 + $4 + $7 + $8 + $9; print "machine-busy", busy / hz; print "machine-total", (busy + $5 + $6) / hz}' /proc/stat
}
# cpu_json BEFORE AFTER WALL: the differences as JSON (benchreport reads RUN.cpu.json).
cpu_json() {
  awk -v wall="$3" -v cores="$(nproc)" 'NR == FNR {before[$1] = $2; next} {d[$1] = $2 - before[$1]}
    END {printf "{\"wallSeconds\": %.1f, \"cores\": %d, \"machineBusySeconds\": %.1f, \"machineTotalSeconds\": %.1f, \"byProcess\": {", wall, cores, d["machine-busy"], d["machine-total"]
      sep = ""; for (n in d) if (n !~ /^machine-/) {printf "%s\"%s\": %.1f", sep, n, d[n]; sep = ", "}; print "}}"}' "$1" "$2"
}

summary="${OUT}/summary.txt"
start_cluster() { # start_cluster ARM QPS SYNC
  local variant=() name
  if [[ "$1" == *+* ]]; then
    name="VARIANT_${1#*+}"
    [[ -n "${!name:-}" ]] || { echo "bench.sh: arm $1 needs ${name} (environment assignments)" >&2; exit 2; }
    read -r -a variant <<<"${!name}"
  fi
  CLUSTER_NAME=bench hack/cluster/local-down.sh >/dev/null
  env CLUSTER_NAME=bench SECURE_PORT="${BENCH_SECURE_PORT:-10277}" NODES="${BENCH_NODES:-20}" ARM="${1%%+*}" KUBE_API_QPS="$2" KUBE_API_BURST="$2" SYNC_PERIOD="$3" AUDIT="${AUDIT:-1}" SKIP_BUILD=1 \
    "${variant[@]}" hack/cluster/local-up.sh >/dev/null
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); pv-controller-manager $("${BIN_DIR}/pv-controller-manager" --version | cut -d' ' -f2-)" >>"${summary}"
if [[ "${CEILING:-1}" == "1" ]]; then
  # The apiserver's write throughput on this machine, now: KCM without its binder, ours stopped.
  ceiling_pairs=$((COUNT > 2000 ? 2000 : COUNT))
  echo "=== write ceiling: ${ceiling_pairs} pairs, ${CONCURRENCY} clients, no binder running" | tee -a "${summary}"
  start_cluster ours 1000 15s
  CLUSTER_NAME=bench hack/cluster/local-down.sh --binder-only
  "${BIN_DIR}/pv-load" --kubeconfig "${REPO_ROOT}/_output/local/bench/kubeconfig" --scenario write-ceiling --count "${ceiling_pairs}" \
    --concurrency "${CONCURRENCY}" --qps 100000 --prefix ceiling --json "${OUT}/write-ceiling.json" --cleanup=false | tee -a "${summary}"
fi
# The scenarios and how each runs come from pv-load's registry (test/harness/loadgen): its count variable
# (COUNT, PVC_FIRST_COUNT or PREBOUND_COUNTS) and sync period.
declare -A counts_var=() sync_of=()
default_scenarios=()
# Tabs are whitespace to read, so an empty field (the sync period "") would shift the rest: split on
# a separator that is not.
while IFS='|' read -r name counts sync default _; do
  counts_var["${name}"]="${counts}"
  sync_of["${name}"]="${sync}"
  [[ "${default}" == true ]] && default_scenarios+=("${name}")
done < <("${BIN_DIR}/pv-load" --list | tr '\t' '|')
SCENARIOS="${SCENARIOS:-${default_scenarios[*]}}"
for qps in ${QPS_LIST}; do
  runs=()
  for scenario in ${SCENARIOS}; do
    [[ "${scenario}" == none ]] && continue # only the write ceiling
    if [[ -z "${counts_var[${scenario}]:-}" ]]; then
      echo "bench.sh: unknown scenario ${scenario} (pv-load --list)" >&2
      exit 2
    fi
    for n in ${!counts_var[${scenario}]}; do
      # 4 writes per bind at 20 QPS: 10 000 pairs would take over half an hour per arm.
      if ((qps < 100 && n > ${LOW_QPS_MAX_COUNT:-1000})); then
        echo "=== skipped: ${scenario} ${n} at binder QPS ${qps} (LOW_QPS_MAX_COUNT=${LOW_QPS_MAX_COUNT:-1000})" | tee -a "${summary}"
        continue
      fi
      runs+=("${scenario} ${n} ${sync_of[${scenario}]:-${SYNC_PERIOD}}")
    done
  done
  for spec in "${runs[@]}"; do
    read -r scenario count sync <<<"${spec}"
    for arm in ${ARMS}; do
      echo "=== ${scenario}, ${count} claims, ${arm}, binder QPS ${qps}, sync period ${sync}" | tee -a "${summary}"
      start_cluster "${arm}" "${qps}" "${sync}"
      pid="$(binder_pid "${arm}")"
      cpu_before="$(cpu_seconds "${pid}")"
      cpu_snapshot "${arm}" >"${OUT}/.cpu-before"
      run_start="$(date +%s.%N)"
      result="${OUT}/${scenario}-n${count}-qps${qps}-${arm}.json"
      scrape_control_plane "${result%.json}.cp-before.prom"
      verified=false
      : >"${OUT}/.last-run" # this run's output only: its verify line, not an earlier arm's
      profiler=""
      if [[ "${PROFILE:-0}" == "1" && "${arm}" == ours* ]]; then
        : >"${OUT}/.profiling"
        profile_while "${result%.json}.pprof" "${OUT}/.profiling" &
        profiler=$!
      fi
      "${BIN_DIR}/pv-load" --kubeconfig "${REPO_ROOT}/_output/local/bench/kubeconfig" --scenario "${scenario}" --nodes "${BENCH_NODES:-20}" --count "${count}" \
        --concurrency "${CONCURRENCY}" --qps "${LOAD_QPS:-100000}" --json "${result}" --cleanup=false --timeout "${LOAD_TIMEOUT:-30m}" | tee -a "${summary}" "${OUT}/.last-run" ||
        echo "pv-load failed (claims left unbound at LOAD_TIMEOUT, or an error above): the arm's figures cover what it did" | tee -a "${summary}"
      grep -q "^verify: every volume is bound to exactly its own claim" "${OUT}/.last-run" && verified=true
      cpu_after="$(cpu_seconds "${pid}")"
      cpu_snapshot "${arm}" >"${OUT}/.cpu-after"
      cpu_json "${OUT}/.cpu-before" "${OUT}/.cpu-after" "$(awk -v a="${run_start}" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')" >"${result%.json}.cpu.json"
      rm -f "${OUT}/.cpu-before" "${OUT}/.cpu-after"
      # After the CPU figures: the last profile runs up to 20 s past the load.
      if [[ -n "${profiler}" ]]; then
        rm -f "${OUT}/.profiling"
        wait "${profiler}" || true
      fi
      scrape_control_plane "${result%.json}.cp-after.prom"
      rss="$(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/${pid}/status")"
      audit="${KWOK_WORKDIR}/clusters/bench/logs/audit.log"
      writes="n/a" conflicts="n/a"
      if compgen -G "${audit%.log}-*.log" >/dev/null; then
        echo "bench.sh: the audit log was rotated: the write counts below miss the older file(s)" | tee -a "${summary}" >&2
      fi
      if [[ -f "${audit}" ]]; then
        writes="$(grep -c '"userAgent":"[^"]*persistent-volume-binder' "${audit}" || true)"
        conflicts="$(grep '"userAgent":"[^"]*persistent-volume-binder' "${audit}" | grep -c '"code":409' || true)"
        # Every client's writes to PVs and claims (KCM's pvc-protection among them), for the report.
        "${BIN_DIR}/benchreport" count-writes "${audit}" >"${result%.json}.writes.json"
      fi
      cpu="$(awk -v a="${cpu_before}" -v b="${cpu_after}" 'BEGIN{printf "%.1f", b-a}')"
      rss_mib="$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/${pid}/status")"
      json_num() { [[ "$1" == "n/a" ]] && echo null || echo "$1"; }
      binder_flags=""
      [[ "${arm}" == ours* ]] && binder_flags="${PVCM_ENV:+${PVCM_ENV} }${PVCM_ARGS:-}"
      if [[ "${arm}" == *+* ]]; then
        variant="VARIANT_${arm#*+}"
        binder_flags+="${binder_flags:+ }${!variant}"
      fi
      cat >"${OUT}/${scenario}-n${count}-qps${qps}-${arm}.meta.json" <<JSON
{"arm": "${arm}", "scenario": "${scenario}", "qps": "${qps}", "syncPeriod": "${sync}", "count": ${count},
 "writes": $(json_num "${writes}"), "conflicts": $(json_num "${conflicts}"), "cpuSeconds": ${cpu}, "peakRSSMiB": ${rss_mib},
 "binderFlags": "${binder_flags}", "verified": ${verified}}
JSON
      echo "binder: ${writes} API writes ($(awk -v w="${writes}" -v n="$((count - $(sed -n 's/^ *"unbound": *\([0-9]*\).*/\1/p' "${result}" | head -1 | grep . || echo 0)))" 'BEGIN{if (w == "n/a") print "n/a"; else printf "%.2f", w/n}') per bind), ${conflicts} conflicts (409); CPU $(awk -v a="${cpu_before}" -v b="${cpu_after}" 'BEGIN{printf "%.1f", b-a}') s; peak RSS ${rss}$([[ "${arm}" == upstream* ]] && echo ' (whole KCM)')" | tee -a "${summary}"
    done
  done
done
rm -f "${OUT}/.last-run"
(cd hack/cmd/benchreport && GOWORK=off go run . "${OUT}")
# Results committed under docs/ keep the report, summary and plots; the raw JSON and scrapes go to
# _output/bench-raw/<run>/ (docs/results keeps no raw data: the run's command makes it again).
if [[ "${OUT}" == "${REPO_ROOT}/docs/"* ]] && compgen -G "${OUT}/*.json" >/dev/null; then
  raw="${REPO_ROOT}/_output/bench-raw/$(basename "${OUT}")"
  mkdir -p "${raw}" && mv "${OUT}"/*.json "${raw}/" && { mv "${OUT}"/*.prom "${raw}/" 2>/dev/null || true; } && { mv "${OUT}"/*.pprof "${raw}/" 2>/dev/null || true; }
  echo "raw data in ${raw}"
fi
echo "results in ${OUT} (report.md, summary.txt, cdf-*.png)"
