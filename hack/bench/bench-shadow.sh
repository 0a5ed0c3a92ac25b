#!/usr/bin/env bash
# make bench-shadow: shadow mode (docs/operators/shadow.md) beside KCM's binder at scale. One local
# cluster whose KCM runs its binder, ours beside it with --shadow, both at the same client QPS. Per
# scenario, COUNT claims by bin/pv-load twice: first with ours stopped (KCM's binder alone), then
# with the shadow beside it. Of the second run: the shadow's outcome counters and lead-time
# histogram, and the dry-run writes of volumes and claims the apiserver counted
# (apiserver_request_total{dry_run="All"}, by code: every dry-run write is the shadow's) per claim,
# read before the load and once every claim is compared (agree + disagree* + only-* = COUNT, or
# 10 minutes after the load) and the count has stopped moving. Of both runs: KCM's binder's time to
# bind them all (pv-load's "all bound after"), so the report says what the shadow costs KCM.
# Objects are kept until the cluster goes (a cleanup's deletions would be dry-run by ours too).
# Report: OUT/report.md.
#   COUNT (1000), SCENARIOS ("prebound claimref matched provisioning"), QPS (1000), OUT (_output/bench-shadow),
#   SHADOW_WINDOW (30m: longer than KCM's binder takes, so that only-ours means "KCM never bound it",
#   not "KCM was slower than the window": at 1000 claims under load it took 4-6 minutes),
#   PVCM_BIN (another build of ours for the shadow, e.g. an earlier commit's, as local-up.sh takes it)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
COUNT="${COUNT:-1000}"
SCENARIOS="${SCENARIOS:-prebound claimref matched provisioning}"
QPS="${QPS:-1000}"
OUT="${OUT:-${REPO_ROOT}/_output/bench-shadow}"
mkdir -p "${OUT}"
rm -f "${OUT}/counts.txt"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
export CLUSTER_NAME=bench-shadow SECURE_PORT=10269
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
shadow_up() { ARM=upstream SHADOW=1 KUBE_API_QPS="${QPS}" KUBE_API_BURST="${QPS}" PVCM_ARGS="--shadow-window=${SHADOW_WINDOW:-30m}" hack/cluster/local-up.sh >/dev/null; }
shadow_up
export SKIP_BUILD=1 # built once, by the first local-up.sh
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./test/cmd/pv-load
pki="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}/pki"
kubeconfig="${REPO_ROOT}/_output/local/${CLUSTER_NAME}/kubeconfig"
server="$(awk '/server:/ {print $2; exit}' "${kubeconfig}")"
scrape() { curl -sfk --cert "${pki}/admin.crt" --key "${pki}/admin.key" "https://127.0.0.1:${SECURE_PORT}/metrics" | grep '^pv_controller_shadow_'; }
# dry_run_writes: the apiserver's count of dry-run writes of volumes and claims so far, as "CODE N"
# lines (every code, and "all").
dry_run_writes() {
  curl -sfk --cert "${pki}/admin.crt" --key "${pki}/admin.key" "${server}/metrics" |
    awk '/^apiserver_request_total\{/ && /dry_run="All"/ && /resource="persistentvolume(claim)?s"/ {
        code = $0; sub(/.*code="/, "", code); sub(/".*/, "", code); n[code] += $NF; all += $NF }
      END {for (c in n) print c, n[c]; print "all", all + 0}' | sort
}
# per_claim BEFORE AFTER KEY: (AFTER - BEFORE) / COUNT for KEY of dry_run_writes.
per_claim() { awk -v k="$3" -v n="${COUNT}" 'FNR == NR {if ($1 == k) b = $2; next} $1 == k {a = $2} END {printf "%.2f", (a - b) / n}' "$1" "$2"; }
# shadow_writes FILE RESULT: the shadow's own count of its volume and claim writes by result (sent, repeat).
shadow_writes() { awk -v r="$2" '$1 ~ /^pv_controller_shadow_dry_run_writes_total\{/ && index($1, "result=\"" r "\"") {s += $2} END {print s + 0}' "$1"; }
all_bound() { grep -o 'all bound after [0-9.a-z]*' "$1" | head -1 | sed 's/all bound after //'; }
value() { awk -v k="$2" '$1 == k {print $2; found=1} END {if (!found) print 0}' "$1"; }
outcome() { value "$1" "pv_controller_shadow_decisions_total{outcome=\"$2\"}"; }
compared() { local s=0; for o in agree disagree disagree-legitimate only-ours only-kcm; do s=$((s + $(outcome "$1" "${o}" | cut -d. -f1))); done; echo "${s}"; }
# lead_quantile BEFORE AFTER Q: the upper bound of the histogram bucket holding quantile Q of the
# observations made between the two scrapes.
lead_quantile() {
  join <(grep '_lead_seconds_bucket' "$1" | sed 's/.*le="\([^"]*\)"} /\1 /' | sort) \
    <(grep '_lead_seconds_bucket' "$2" | sed 's/.*le="\([^"]*\)"} /\1 /' | sort) |
    awk -v q="$3" '{le=$1; d=$3-$2; if (le=="+Inf") le=1e18; print le, d}' | sort -g |
    awk -v q="$3" '{n[NR]=$2; le[NR]=$1} END {total=n[NR]; for (i=1;i<=NR;i++) if (n[i] >= q*total) {print (le[i]==1e18 ? "+Inf" : le[i]); exit}}'
}

{
  echo "# Shadow beside KCM's binder, ${COUNT} claims per scenario"
  echo
  echo "$(date -u +%Y-%m-%d), release ${KUBE_VERSION}, both binders at client QPS ${QPS}, kwokctl cluster; ours with --shadow (every write a dry run)."
  echo "Lead: how much sooner ours had decided than KCM's binder was seen to bind, where both agreed (histogram buckets: upper bounds)."
  echo
  echo "Dry-run writes: the apiserver's count (apiserver_request_total{dry_run=\"All\"}) of writes of volumes and claims during the run with the shadow, per claim, and of them answered 409; the shadow's own count of the repeats it answered without sending them. A pre-bound bind is 4 writes (the volume, its status, the claim, its status)."
  echo "KCM's binder: all bound after (pv-load), first with ours stopped, then with the shadow beside it (same cluster, the first run's objects kept)."
  echo
  echo "| scenario | agree | disagree | disagree-legitimate | only-ours | only-kcm | lead mean | lead p50 ≤ | lead p90 ≤ | dry-run writes per claim | of them 409 | repeats answered by the shadow per claim | KCM's binder alone: all bound after | KCM's binder beside the shadow: all bound after |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"${OUT}/report.md"
load() { # load NAME: COUNT claims of the scenario, objects kept, named and namespaced NAME
  "${BIN_DIR}/pv-load" --kubeconfig "${kubeconfig}" --scenario "${scenario}" --count "${COUNT}" \
    --namespace "$1" --prefix "$1" --cleanup=false --timeout 20m | tee "${OUT}/$1.log"
}
for scenario in ${SCENARIOS}; do
  # KCM's binder alone.
  hack/cluster/local-down.sh --binder-only >/dev/null
  load "${scenario}-alone"
  # The shadow beside it (local-up.sh keeps the cluster and starts ours; it waits for its Lease).
  shadow_up
  scrape >"${OUT}/before.prom"
  dry_run_writes >"${OUT}/before.writes"
  start_compared="$(compared "${OUT}/before.prom")"
  load "${scenario}-shadow"
  deadline=$((SECONDS + 600)) # every claim compared, or 10 minutes after the load
  # (A file, not <(scrape): compared reads it once per outcome.)
  while { scrape >"${OUT}/now.prom" || true; } && (($(compared "${OUT}/now.prom") - start_compared < COUNT && SECONDS < deadline)); do sleep 1; done
  # Then until the dry-run writes stop moving (two reads 5 s apart agree), at most a minute.
  dry_run_writes >"${OUT}/now.writes"
  quiet_deadline=$((SECONDS + 60))
  while sleep 5 && dry_run_writes >"${OUT}/next.writes" && ! cmp -s "${OUT}/now.writes" "${OUT}/next.writes" && ((SECONDS < quiet_deadline)); do
    mv "${OUT}/next.writes" "${OUT}/now.writes"
  done
  dry_run_writes >"${OUT}/after.writes"
  scrape >"${OUT}/after.prom"
  row="| ${scenario} |"
  for o in agree disagree disagree-legitimate only-ours only-kcm; do
    row+=" $(awk -v a="$(outcome "${OUT}/after.prom" "${o}")" -v b="$(outcome "${OUT}/before.prom" "${o}")" 'BEGIN{printf "%d", a-b}') |"
  done
  sum=$(awk -v a="$(value "${OUT}/after.prom" pv_controller_shadow_lead_seconds_sum)" -v b="$(value "${OUT}/before.prom" pv_controller_shadow_lead_seconds_sum)" 'BEGIN{print a-b}')
  n=$(awk -v a="$(value "${OUT}/after.prom" pv_controller_shadow_lead_seconds_count)" -v b="$(value "${OUT}/before.prom" pv_controller_shadow_lead_seconds_count)" 'BEGIN{print a-b}')
  mean=$(awk -v s="${sum}" -v n="${n}" 'BEGIN{if (n > 0) printf "%.2f s", s/n; else print "-"}')
  repeats=$(awk -v a="$(shadow_writes "${OUT}/after.prom" repeat)" -v b="$(shadow_writes "${OUT}/before.prom" repeat)" -v n="${COUNT}" 'BEGIN{printf "%.2f", (a - b) / n}')
  alone="$(all_bound "${OUT}/${scenario}-alone.log")"
  beside="$(all_bound "${OUT}/${scenario}-shadow.log")"
  row+=" ${mean} | $(lead_quantile "${OUT}/before.prom" "${OUT}/after.prom" 0.5) s | $(lead_quantile "${OUT}/before.prom" "${OUT}/after.prom" 0.9) s |"
  row+=" $(per_claim "${OUT}/before.writes" "${OUT}/after.writes" all) | $(per_claim "${OUT}/before.writes" "${OUT}/after.writes" 409) | ${repeats} | ${alone:-?} | ${beside:-?} |"
  echo "${row}" >>"${OUT}/report.md"
  # The raw counts, for the record.
  { echo "## ${scenario}"; echo "apiserver dry-run writes (code count) before:"; cat "${OUT}/before.writes"; echo "after:"; cat "${OUT}/after.writes"
    echo "shadow's writes (pv_controller_shadow_dry_run_writes_total) after:"; grep '^pv_controller_shadow_dry_run_writes_total' "${OUT}/after.prom" || true; } >>"${OUT}/counts.txt"
done
rm -f "${OUT}/before.prom" "${OUT}/after.prom" "${OUT}/now.prom" "${OUT}/before.writes" "${OUT}/after.writes" "${OUT}/now.writes" "${OUT}/next.writes"
cat "${OUT}/report.md"
