#!/usr/bin/env bash
# make e2e-node: the static-pod rollout on a real node (docs/maintainers/e2e-node.md).
#
# A kwokctl cluster (etcd + kube-apiserver, no KCM), a private containerd (hack/e2e/containerd.sh) and a
# real kubelet registered as a control-plane node. The kubelet runs upstream kube-controller-manager
# as a static pod from an image of our own v1.37.2 build, with the manifest kubeadm writes. The
# ginkgo specs labelled "node" (test/e2e/node_test.go) then roll pv-controller-manager out with
# deploy/rollout.sh, check the guard with a hand-edited manifest, kill our container, and roll back.
#
# Needs root (kubelet, containerd) and apt-get for containerd/runc and gcc if missing. When the
# machine cannot, it says so and exits 0 if E2E_NODE_SKIP_OK=1 (CI), 1 otherwise.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

CLUSTER_NAME="${E2E_NODE_CLUSTER:-pv-node}"
NODE_NAME="${E2E_NODE_NAME:-pv-node-cp}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-${REPO_ROOT}/_output/kwok}"
WORK="${REPO_ROOT}/_output/e2e-node"
ETC="${WORK}/etc-kubernetes" # this node's /etc/kubernetes
MANIFESTS="${ETC}/manifests"
KCM_IMAGE="registry.k8s.io/kube-controller-manager:v1.37.2"
PAUSE_IMAGE="registry.k8s.io/pause:3.10-local"
OUR_IMAGE="pv-controller-manager.local/pv-controller-manager:e2e-node"
KUBELET_PORT=10350

skip() {
  echo "e2e-node: SKIPPED: $*" >&2
  if [[ "${E2E_NODE_SKIP_OK:-0}" == "1" ]]; then exit 0; fi
  exit 1
}
[[ $(id -u) -eq 0 ]] || skip "needs root (a kubelet and containerd run here)"
[[ -d /sys/fs/cgroup ]] || skip "no cgroup filesystem"
if ! command -v gcc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; } ||
    skip "gcc not installable (needed for the pause image)"
fi

down() {
  pkill -f "kubelet --config=${WORK}/kubelet-config.yaml" 2>/dev/null || true
  for _ in $(seq 1 50); do pgrep -f "kubelet --config=${WORK}/kubelet-config.yaml" >/dev/null || break; sleep 0.1; done
  # Static pods outlive the kubelet: stop their containers.
  if [[ -S "$("${REPO_ROOT}/hack/e2e/containerd.sh" socket)" ]]; then
    local ctr=(ctr -a "$("${REPO_ROOT}/hack/e2e/containerd.sh" socket)" -n k8s.io)
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "${id}" >/dev/null 2>&1 || true; done
    for _ in $(seq 1 30); do [[ -z "$("${ctr[@]}" tasks ls -q 2>/dev/null)" ]] && break; sleep 0.2; done
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "${id}" >/dev/null 2>&1 || true; done
    for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "${id}" >/dev/null 2>&1 || true; done
  fi
  "${REPO_ROOT}/hack/e2e/containerd.sh" down || true
  "${TOOLS_BIN}/kwokctl" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
  # Pod volumes (kubelet's root dir) may still be mounted.
  grep -o " ${WORK}/kubelet[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}
if [[ "${1:-}" == "down" ]]; then
  down
  exit 0
fi
trap 'rc=$?; [[ "${E2E_NODE_KEEP:-0}" == "1" ]] || down; exit ${rc}' EXIT
down
rm -rf "${WORK}"
mkdir -p "${MANIFESTS}" "${ETC}/pki" "${WORK}/images"

echo "e2e-node: building tools and images"
hack/cluster/build-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok kwokctl kubelet ginkgo >/dev/null
make --no-print-directory build rollout-tool >/dev/null
go build $(module_flags .) -o "${BIN_DIR}/pv-load" ./test/cmd/pv-load
mkimage() { (cd hack/cmd/image && GOWORK=off CGO_ENABLED=0 go run . "$@"); }
k8s_dir="$(upstream_dir "$(upstream_tag)")"
gcc -Os -static -o "${WORK}/pause" "${k8s_dir}/build/pause/linux/pause.c"
mkimage --file "${WORK}/pause=/pause" --entrypoint /pause --user 65535:65535 --title pause \
  --tag "${PAUSE_IMAGE}" --out "${WORK}/images/pause.tar" >/dev/null
mkimage --file "${TOOLS_BIN}/kube-controller-manager=/usr/local/bin/kube-controller-manager" --entrypoint "" --user 0:0 \
  --title kube-controller-manager --tag "${KCM_IMAGE}" --out "${WORK}/images/kcm.tar" >/dev/null
mkimage --binary "${BIN_DIR}/pv-controller-manager" --tag "${OUR_IMAGE}" --out "${WORK}/images/pv-controller-manager.tar" >/dev/null

echo "e2e-node: containerd"
PAUSE_IMAGE="${PAUSE_IMAGE}" hack/e2e/containerd.sh up >/dev/null || skip "containerd did not start (see _output/containerd/containerd.log)"
socket="$("${REPO_ROOT}/hack/e2e/containerd.sh" socket)"
for tar in "${WORK}"/images/*.tar; do
  ctr -a "${socket}" -n k8s.io images import "${tar}" >/dev/null
done

echo "e2e-node: cluster ${CLUSTER_NAME} (etcd, kube-apiserver; KCM will be a static pod)"
kwok_create_cluster "${CLUSTER_NAME}" "${WORK}/kwokctl.log" --disable kube-controller-manager
cluster_dir="${KWOK_WORKDIR}/clusters/${CLUSTER_NAME}"
admin_kubeconfig="${cluster_dir}/kubeconfig.yaml"
server="$(sed -n 's/^[[:space:]]*server:[[:space:]]*//p' "${admin_kubeconfig}" | head -1)"

echo "e2e-node: PKI and kubeconfigs under ${ETC} (this node's /etc/kubernetes)"
pki="${ETC}/pki"
cp "${cluster_dir}/pki/ca.crt" "${cluster_dir}/pki/ca.key" "${pki}/"
cp "${cluster_dir}/pki/ca.crt" "${pki}/front-proxy-ca.crt"
cp "${cluster_dir}/pki/admin.key" "${pki}/sa.key" # the apiserver's --service-account-key-file
# kubeconfig NAME CN [O]: a client certificate signed by the cluster CA, in ETC/NAME.conf.
kubeconfig() {
  local name="$1" cn="$2" org="${3:-}" subj="/CN=$2"
  [[ -n "${org}" ]] && subj="/O=${org}/CN=${cn}"
  openssl req -new -newkey rsa:2048 -nodes -keyout "${WORK}/${name}.key" -subj "${subj}" -out "${WORK}/${name}.csr" 2>/dev/null
  openssl x509 -req -in "${WORK}/${name}.csr" -CA "${pki}/ca.crt" -CAkey "${pki}/ca.key" -CAcreateserial -days 2 \
    -out "${WORK}/${name}.crt" 2>/dev/null
  cat >"${ETC}/${name}.conf" <<YAML
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: $(base64 -w0 <"${pki}/ca.crt")
    server: ${server}
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: ${cn}
  name: ${cn}@kubernetes
current-context: ${cn}@kubernetes
users:
- name: ${cn}
  user:
    client-certificate-data: $(base64 -w0 <"${WORK}/${name}.crt")
    client-key-data: $(base64 -w0 <"${WORK}/${name}.key")
YAML
  chmod 0600 "${ETC}/${name}.conf"
}
kubeconfig controller-manager system:kube-controller-manager
kubeconfig kubelet "system:node:${NODE_NAME}" system:nodes
kubeconfig pv-controller-manager system:pv-controller-manager
chown 65532:65532 "${ETC}/pv-controller-manager.conf" # our pod runs as uid 65532 (docs/operators/rollout.md)

# KCM's manifest as kubeadm writes it (pkg/rollout/testdata/kubeadm.yaml), its host paths moved
# under ETC. Our manifest likewise, for deploy/rollout.sh --manifest.
sed "s#path: /etc/kubernetes/#path: ${ETC}/#" pkg/rollout/testdata/kubeadm.yaml >"${MANIFESTS}/kube-controller-manager.yaml"
chmod 0600 "${MANIFESTS}/kube-controller-manager.yaml"
cp "${MANIFESTS}/kube-controller-manager.yaml" "${WORK}/kube-controller-manager.original.yaml"
sed "s#path: /etc/kubernetes/#path: ${ETC}/#" deploy/static-pod/pv-controller-manager.yaml >"${WORK}/pv-controller-manager.yaml"

echo "e2e-node: kubelet ${NODE_NAME}"
cat >"${WORK}/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
staticPodPath: ${MANIFESTS}
fileCheckFrequency: 2s
syncFrequency: 10s
containerRuntimeEndpoint: unix://${socket}
podLogsDir: ${WORK}/pod-logs
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: ${pki}/ca.crt}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
registerWithTaints:
- {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
resolvConf: ""
YAML
nohup "${TOOLS_BIN}/kubelet" --config="${WORK}/kubelet-config.yaml" --kubeconfig="${ETC}/kubelet.conf" \
  --hostname-override="${NODE_NAME}" \
  --root-dir="${WORK}/kubelet" --cert-dir="${WORK}/kubelet-pki" --v=2 >"${WORK}/kubelet.log" 2>&1 &

echo "e2e-node: running the node specs (kubelet log ${WORK}/kubelet.log)"
cd test/e2e
GOWORK=off KUBECONFIG="${admin_kubeconfig}" \
  E2E_NODE=1 E2E_NODE_NAME="${NODE_NAME}" E2E_NODE_MANIFESTS_DIR="${MANIFESTS}" E2E_NODE_BACKUP_DIR="${ETC}/pv-controller-manager-backup" \
  E2E_NODE_ROLLOUT="${REPO_ROOT}/deploy/rollout.sh" E2E_NODE_OUR_MANIFEST="${WORK}/pv-controller-manager.yaml" \
  E2E_NODE_KCM_ORIGINAL="${WORK}/kube-controller-manager.original.yaml" E2E_NODE_RBAC_DIR="${REPO_ROOT}/deploy/rbac" \
  E2E_NODE_OUR_IMAGE="${OUR_IMAGE}" E2E_METRICS_URL="https://127.0.0.1:10267/metrics" \
  PV_ROLLOUT="${BIN_DIR}/pv-rollout" \
  "${TOOLS_BIN}/ginkgo" -v --timeout=30m --label-filter=node ${E2E_NODE_FLAGS:-} .
