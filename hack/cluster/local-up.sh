#!/usr/bin/env bash
# Brings up a local cluster with kwokctl (runtime binary: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kwok-controller, all built from Go modules by hack/cluster/build-tools.sh) plus a few kwok
# nodes, and runs our pv-controller-manager beside it. Idempotent: an existing cluster is kept (recreated
# if KUBE_VERSION, ARM, QPS, SYNC_PERIOD or AUDIT changed: they are its binaries and KCM flags) and our binary restarted.
#
# Environment:
#   CLUSTER_NAME   kwokctl cluster name (default pv-local)
#   ARM            ours (KCM without its binder + pv-controller-manager, default) | upstream (KCM's own binder)
#   KUBE_API_QPS, KUBE_API_BURST   client QPS/burst of the binder, in both arms (default KCM's 20/30)
#   SYNC_PERIOD    --pvclaimbinder-sync-period of the binder, in both arms (default 15s)
#   NODES          number of kwok nodes (default 3)
#   AUDIT          1: write an apiserver audit log of PV/PVC writes (for the benchmark)
#   PVCM_ARGS      extra flags for pv-controller-manager
#   KCM_ARGS       extra flags for kube-controller-manager, as NAME=VALUE words without dashes
#                  (e.g. "feature-gates=PersistentVolumeClaimUnusedSinceTime=false"); part of its settings
#   SHADOW         1 (with ARM=upstream): pv-controller-manager runs too, with --shadow, beside KCM's binder
#   PVCM_ENV       extra environment for pv-controller-manager only (e.g. GOGC=200)
#   PVCM_BIN       another pv-controller-manager binary (default BIN_DIR's), e.g. an earlier
#                  commit's build as a bench variant arm, to measure a change in one run
#   SECURE_PORT    our --secure-port (default 10267)
#   SKIP_BUILD     1: use bin/pv-controller-manager as it is
#   KUBE_VERSION   the carried release (default: the default line; its binaries and tools, hack/lib.sh)
#   BINDER_IDENTITY  binder (default): ours runs as the user system:pv-controller-manager, with deploy/rbac
#                  applied (its RBAC and FlowSchemas) and a client certificate signed by the cluster's
#                  CA, as docs/install.md tells operators; admin: as kwokctl's admin (system:masters,
#                  exempt from API priority and fairness), as it ran before 2026-12-02.
#                  KCM runs as kwokctl's admin in both (kwokctl gives it no identity of its own).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CLUSTER_NAME="${CLUSTER_NAME:-pv-local}"
ARM="${ARM:-ours}"
KUBE_API_QPS="${KUBE_API_QPS:-20}"
KUBE_API_BURST="${KUBE_API_BURST:-30}"
SYNC_PERIOD="${SYNC_PERIOD:-15s}"
NODES="${NODES:-3}"
SECURE_PORT="${SECURE_PORT:-10267}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
out="${REPO_ROOT}/_output/local/${CLUSTER_NAME}"
mkdir -p "${out}"

case "${ARM}" in ours | upstream) ;; *)
  echo "local-up.sh: ARM must be ours or upstream, got ${ARM}" >&2
  exit 2
  ;;
esac
shadow_args=()
if [[ "${SHADOW:-0}" == "1" ]]; then
  [[ "${ARM}" == "upstream" ]] || { echo "local-up.sh: SHADOW=1 needs ARM=upstream (KCM's binder to compare with)" >&2; exit 2; }
  shadow_args=(--shadow)
fi

# What is built is said (the first run builds them all: 15-25 minutes on 2 cores); what is up to date is not.
BUILD_TOOLS_QUIET=1 "${REPO_ROOT}/hack/cluster/build-tools.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kwok kwokctl kubectl >&2
[[ "${SKIP_BUILD:-0}" == "1" ]] || make -C "${REPO_ROOT}" --no-print-directory build >/dev/null

kwokctl="${TOOLS_BIN}/kwokctl"
kcm_args=(--extra-args "kube-controller-manager=kube-api-qps=${KUBE_API_QPS}"
  --extra-args "kube-controller-manager=kube-api-burst=${KUBE_API_BURST}"
  --extra-args "kube-controller-manager=pvclaimbinder-sync-period=${SYNC_PERIOD}")
if [[ "${ARM}" == "ours" ]]; then
  kcm_args+=(--extra-args "kube-controller-manager=controllers=*,-persistentvolume-binder-controller")
fi
for arg in ${KCM_ARGS:-}; do
  kcm_args+=(--extra-args "kube-controller-manager=${arg}")
done
audit_args=()
if [[ "${AUDIT:-0}" == "1" ]]; then
  cat >"${out}/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch]
  resources:
  - group: ""
    resources: [persistentvolumes, persistentvolumes/status, persistentvolumeclaims, persistentvolumeclaims/status]
- level: None
YAML
  # One file, never rotated: the benchmarks count writes in it (the apiserver's default rotates at
  # 100 MB, which a 100 000-pair run passes, keeping the older writes in another file).
  audit_args=(--kube-audit-policy "${out}/audit-policy.yaml" --extra-args "kube-apiserver=audit-log-maxsize=1000000")
fi

# KCM's flags are fixed when the cluster is created: recreate it when they would differ.
settings="release=${KUBE_VERSION} arm=${ARM} qps=${KUBE_API_QPS}/${KUBE_API_BURST} sync=${SYNC_PERIOD} audit=${AUDIT:-0} kcm=${KCM_ARGS:-}"
if "${kwokctl}" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}" &&
  [[ "$(cat "${out}/settings" 2>/dev/null)" != "${settings}" ]]; then
  "${REPO_ROOT}/hack/cluster/local-down.sh" >/dev/null
fi
if ! "${kwokctl}" get clusters 2>/dev/null | grep -qx "${CLUSTER_NAME}"; then
  kwok_create_cluster "${CLUSTER_NAME}" "${out}/kwokctl.log" "${kcm_args[@]}" "${audit_args[@]}" --kubeconfig "${out}/kubeconfig" || exit 1
  "${kwokctl}" --name "${CLUSTER_NAME}" scale node --replicas "${NODES}" >/dev/null 2>>"${out}/kwokctl.log"
  echo "${settings}" >"${out}/settings"
fi
cluster_kubeconfig="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}/kubeconfig.yaml"
cp "${cluster_kubeconfig}" "${out}/kubeconfig"

# mint_binder_identity KUBECONFIG: deploy/rbac applied, and a kubeconfig for system:pv-controller-manager
# with a client certificate from the cluster's CA (what pv-controller-manager-identity.sh does on kubeadm).
mint_binder_identity() {
  local kubeconfig="$1" pki="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}/pki" server
  "${TOOLS_BIN}/kubectl" --kubeconfig "${cluster_kubeconfig}" apply -f "${REPO_ROOT}/deploy/rbac" >/dev/null
  if [[ ! -f "${out}/binder.crt" ]] || ! openssl verify -CAfile "${pki}/ca.crt" "${out}/binder.crt" >/dev/null 2>&1; then
    openssl req -new -newkey rsa:2048 -nodes -keyout "${out}/binder.key" -subj "/CN=system:pv-controller-manager" \
      -out "${out}/binder.csr" 2>/dev/null
    openssl x509 -req -in "${out}/binder.csr" -CA "${pki}/ca.crt" -CAkey "${pki}/ca.key" -CAcreateserial \
      -CAserial "${out}/ca.srl" -days 30 -out "${out}/binder.crt" 2>/dev/null
  fi
  server="$(awk '/server:/ {print $2; exit}' "${cluster_kubeconfig}")"
  cat >"${kubeconfig}" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: ${CLUSTER_NAME}
  cluster:
    server: ${server}
    certificate-authority: ${pki}/ca.crt
users:
- name: system:pv-controller-manager
  user:
    client-certificate: ${out}/binder.crt
    client-key: ${out}/binder.key
contexts:
- name: pv-controller-manager
  context:
    cluster: ${CLUSTER_NAME}
    user: system:pv-controller-manager
current-context: pv-controller-manager
KUBECONFIG
}

"${REPO_ROOT}/hack/cluster/local-down.sh" --binder-only
# Whatever the identity, the binder's kubeconfig is this file (make e2e starts a standby with it).
binder_kubeconfig="${out}/pv-controller-manager.kubeconfig"
# Only when ours runs: the upstream arm needs neither the certificate nor the RBAC.
case "${BINDER_IDENTITY:-binder}" in
binder) if [[ "${ARM}" == "ours" || "${SHADOW:-0}" == "1" ]]; then mint_binder_identity "${binder_kubeconfig}"; fi ;;
admin) cp "${cluster_kubeconfig}" "${binder_kubeconfig}" ;;
*) echo "local-up.sh: BINDER_IDENTITY must be binder or admin, got ${BINDER_IDENTITY}" >&2; exit 2 ;;
esac
if [[ "${ARM}" == "ours" || "${SHADOW:-0}" == "1" ]]; then
  # shellcheck disable=SC2086
  env ${PVCM_ENV:-} nohup "${PVCM_BIN:-${BIN_DIR}/pv-controller-manager}" \
    --kubeconfig="${binder_kubeconfig}" \
    --authentication-kubeconfig="${binder_kubeconfig}" \
    --authorization-kubeconfig="${binder_kubeconfig}" \
    --secure-port="${SECURE_PORT}" \
    --kube-api-qps="${KUBE_API_QPS}" --kube-api-burst="${KUBE_API_BURST}" \
    --pvclaimbinder-sync-period="${SYNC_PERIOD}" \
    "${shadow_args[@]}" ${PVCM_ARGS:-} >"${out}/pv-controller-manager.log" 2>&1 &
  echo $! >"${out}/pv-controller-manager.pid"
  for _ in $(seq 1 100); do
    if curl -skf "https://127.0.0.1:${SECURE_PORT}/readyz" >/dev/null 2>&1 &&
      grep -q "Successfully acquired lease" "${out}/pv-controller-manager.log"; then
      break
    fi
    if ! kill -0 "$(cat "${out}/pv-controller-manager.pid")" 2>/dev/null; then
      echo "local-up.sh: pv-controller-manager exited; its log:" >&2
      tail -20 "${out}/pv-controller-manager.log" >&2
      exit 1
    fi
    sleep 0.1
  done
fi

cat <<MSG
local cluster "${CLUSTER_NAME}" is up (arm: ${ARM}; binder QPS ${KUBE_API_QPS}/${KUBE_API_BURST}; sync period ${SYNC_PERIOD}; ${NODES} kwok nodes)
  export KUBECONFIG=${out}/kubeconfig
MSG
if [[ "${ARM}" == "ours" || "${SHADOW:-0}" == "1" ]]; then
  echo "  pv-controller-manager${shadow_args:+ (shadow)}: pid $(cat "${out}/pv-controller-manager.pid"), log ${out}/pv-controller-manager.log, https://127.0.0.1:${SECURE_PORT}/metrics"
fi
