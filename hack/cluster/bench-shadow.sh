#!/usr/bin/env bash
# make bench-shadow: shadow mode (docs/operators/shadow.md) beside KCM's binder at scale. One local
# cluster whose KCM runs its binder, ours beside it with --shadow, both at the same client QPS; per
# scenario, COUNT claims by bin/pv-load, then the shadow's outcome counters and lead-time histogram
# read before and after (once every claim is compared: agree + disagree* + only-* = COUNT, or the
# window plus a minute). Report: OUT/report.md.
#   COUNT (1000), SCENARIOS ("prebound claimref matched provisioning"), QPS (1000), OUT (_output/bench-shadow),
#   SHADOW_WINDOW (30m: longer than KCM's binder takes, so that only-ours means "KCM never bound it",
#   not "KCM was slower than the window": at 1000 claims under load it took 4-6 minutes)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
COUNT="${COUNT:-1000}"
SCENARIOS="${SCENARIOS:-prebound claimref matched provisioning}"
QPS="${QPS:-1000}"
OUT="${OUT:-${REPO_ROOT}/_output/bench-shadow}"
mkdir -p "${OUT}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
export CLUSTER_NAME=bench-shadow SECURE_PORT=10269
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
ARM=upstream SHADOW=1 KUBE_API_QPS="${QPS}" KUBE_API_BURST="${QPS}" PVCM_ARGS="--shadow-window=${SHADOW_WINDOW:-30m}" hack/cluster/local-up.sh >/dev/null
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./cmd/pv-load
pki="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}/pki"
scrape() { curl -sfk --cert "${pki}/admin.crt" --key "${pki}/admin.key" "https://127.0.0.1:${SECURE_PORT}/metrics" | grep '^pv_controller_shadow_'; }
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
  echo "| scenario | agree | disagree | disagree-legitimate | only-ours | only-kcm | lead mean | lead p50 ≤ | lead p90 ≤ | KCM's binder: all bound after |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"${OUT}/report.md"
for scenario in ${SCENARIOS}; do
  scrape >"${OUT}/before.prom"
  start_compared="$(compared "${OUT}/before.prom")"
  "${BIN_DIR}/pv-load" --kubeconfig "${REPO_ROOT}/_output/local/${CLUSTER_NAME}/kubeconfig" --scenario "${scenario}" --count "${COUNT}" \
    --namespace "shadow-${scenario}" --timeout 20m | tee "${OUT}/${scenario}.log"
  deadline=$((SECONDS + 600)) # every claim compared, or 10 minutes after the load
  # (A file, not <(scrape): compared reads it once per outcome.)
  while { scrape >"${OUT}/now.prom" || true; } && (($(compared "${OUT}/now.prom") - start_compared < COUNT && SECONDS < deadline)); do sleep 1; done
  scrape >"${OUT}/after.prom"
  row="| ${scenario} |"
  for o in agree disagree disagree-legitimate only-ours only-kcm; do
    row+=" $(awk -v a="$(outcome "${OUT}/after.prom" "${o}")" -v b="$(outcome "${OUT}/before.prom" "${o}")" 'BEGIN{printf "%d", a-b}') |"
  done
  sum=$(awk -v a="$(value "${OUT}/after.prom" pv_controller_shadow_lead_seconds_sum)" -v b="$(value "${OUT}/before.prom" pv_controller_shadow_lead_seconds_sum)" 'BEGIN{print a-b}')
  n=$(awk -v a="$(value "${OUT}/after.prom" pv_controller_shadow_lead_seconds_count)" -v b="$(value "${OUT}/before.prom" pv_controller_shadow_lead_seconds_count)" 'BEGIN{print a-b}')
  mean=$(awk -v s="${sum}" -v n="${n}" 'BEGIN{if (n > 0) printf "%.2f s", s/n; else print "-"}')
  all_bound="$(grep -o 'all bound after [0-9.a-z]*' "${OUT}/${scenario}.log" | head -1 | sed 's/all bound after //')"
  row+=" ${mean} | $(lead_quantile "${OUT}/before.prom" "${OUT}/after.prom" 0.5) s | $(lead_quantile "${OUT}/before.prom" "${OUT}/after.prom" 0.9) s | ${all_bound:-?} |"
  echo "${row}" >>"${OUT}/report.md"
done
rm -f "${OUT}/before.prom" "${OUT}/after.prom" "${OUT}/now.prom"
cat "${OUT}/report.md"
