#!/usr/bin/env bash
# make e2e-kind: the e2e suite on a kind cluster (sigs.k8s.io/kind v0.33.0) after the static-pod
# rollout on its control-plane node. NEEDS A CONTAINER ENGINE (docker, or podman with
# KIND_EXPERIMENTAL_PROVIDER=podman) AND kind's node image; neither exists on the machine this
# project is developed and tested on, so this script has never run there. It is kept small and
# reuses what runs elsewhere: make image, deploy/rbac, bin/pv-rollout (pkg/rollout) and the ginkgo
# suite (the specs that need the local cluster's processes or a metrics port on the host skip).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "${REPO_ROOT}"

CLUSTER="${KIND_CLUSTER:-pv-kind}"
NODE="${CLUSTER}-control-plane"
IMAGE="${IMAGE:-docker.io/fastpv/pv-controller-manager:e2e-kind}"
TOOLS_BIN="${TOOLS_BIN:-${REPO_ROOT}/_output/tools/bin}"
engine="${KIND_EXPERIMENTAL_PROVIDER:-docker}"
if ! "${engine}" info >/dev/null 2>&1; then
  echo "e2e-kind: no usable container engine (${engine} info fails); kind cannot run on this machine (see README, Testing)" >&2
  exit 1
fi

hack/build-tools.sh kind ginkgo >/dev/null
kind="${TOOLS_BIN}/kind"
make --no-print-directory image rollout-tool IMAGE="${IMAGE}" >/dev/null
out="${REPO_ROOT}/_output/e2e-kind"
mkdir -p "${out}"

"${kind}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
"${kind}" create cluster --name "${CLUSTER}" --kubeconfig "${out}/kubeconfig" --wait 120s
trap '[[ "${E2E_KIND_KEEP:-0}" == "1" ]] || "${kind}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1' EXIT
"${kind}" load image-archive _output/image/pv-controller-manager.tar --name "${CLUSTER}"

on_node() { "${engine}" exec -i "${NODE}" "$@"; }
# RBAC, and our identity's kubeconfig minted by kubeadm on the node (docs/rollout.md, step 3).
for f in deploy/rbac/*.yaml; do on_node kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f - <"${f}"; done
on_node sh -c 'kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get cm kubeadm-config -o jsonpath="{.data.ClusterConfiguration}" >/tmp/cc.yaml &&
  kubeadm kubeconfig user --config /tmp/cc.yaml --client-name system:pv-controller-manager >/etc/kubernetes/pv-controller-manager.conf &&
  chown 65532:65532 /etc/kubernetes/pv-controller-manager.conf && chmod 0600 /etc/kubernetes/pv-controller-manager.conf'
# The rollout itself, as an operator runs it on the node.
"${engine}" cp bin/pv-rollout "${NODE}:/usr/local/bin/pv-rollout"
on_node /usr/local/bin/pv-rollout enable --image "${IMAGE}"

cd test/e2e
GOWORK=off KUBECONFIG="${out}/kubeconfig" "${TOOLS_BIN}/ginkgo" -v --timeout=30m --label-filter='!slow && !node && !local' .
