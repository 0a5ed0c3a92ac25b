#!/usr/bin/env bash
# make e2e-kind: the e2e suite on a kind cluster (sigs.k8s.io/kind at KIND_VERSION, hack/lib.sh) of three control-plane
# nodes and a worker, after the static-pod rollout done as an operator does it (docs/maintainers/e2e-kind.md).
#   1. a Docker Engine (hack/e2e/docker-setup.sh: the running one, else Debian's docker.io)
#   2. kind's node image: built offline (hack/e2e/kind-node-image.sh, cached), or KIND_NODE_IMAGE
#      (e.g. the public kindest/node of our Kubernetes pin, where a registry is reachable)
#   3. the cluster; deleted on exit, Ctrl-C included (E2E_KIND_KEEP=1 keeps it)
#   4. our image pushed to a local registry (hack/e2e/registry.sh: CNCF Distribution, built from its
#      Go module), which every node's containerd pulls from; RBAC, each node's kubeconfig minted by
#      kubeadm, pv-rollout copied to each node
#   5. the passes of E2E_KIND_PASSES, in order (default: rollout suite upstream upgrade disable):
#      upstream-kcm   Kubernetes' own storage e2e with KCM's binder (hack/e2e/upstream-e2e.sh)
#      rollout        ginkgo kind-rollout: pv-rollout enable on each control-plane node in turn (the
#                     first by digest, the others by tag), pairs binding throughout
#      suite          the suite's fast specs plus the kind specs
#      upstream       Kubernetes' own storage e2e with ours (E2E_UPSTREAM_SET: ci or full)
#      upgrade        ginkgo kind-upgrade: our image to a "next" one node by node and back
#      disable        ginkgo kind-disable
#   6. a second cluster, ${CLUSTER}-kubeadm, made with the kubeadm recipe of docs/install.md 2a
#      (deploy/kubeadm/cluster-configuration.yaml as kind's kubeadm config patch, our manifest in
#      every control-plane node's manifests directory before kubeadm runs); ginkgo pass kind-kubeadm
#      runs the recipe's identity step and checks KCM's binder never ran, then scrapes the binder
#      with a real Prometheus through deploy/monitoring/scrape, and kube-state-metrics beside it (no
#      alert on the clean install; the identity renewed; none after the rollback or in shadow mode
#      with a claim Pending; PVBinderNoLeader and PVControllerManagerDown firing with no binder at all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

CLUSTER="${KIND_CLUSTER:-pv-kind}"
E2E_KIND_PASSES="${E2E_KIND_PASSES:-rollout suite upstream upgrade disable}"
E2E_UPSTREAM_SET="${E2E_UPSTREAM_SET:-ci}"
# The offline node image carries a busybox of its own; a public one pulls busybox from Docker Hub.
TEST_IMAGE="${KIND_TEST_IMAGE:-pv-controller-manager.local/busybox:e2e}"
[[ -n "${KIND_NODE_IMAGE:-}" ]] && TEST_IMAGE="${KIND_TEST_IMAGE:-docker.io/library/busybox:1.36}"
out="${REPO_ROOT}/_output/e2e-kind"
kubeconfig="${out}/kubeconfig"
export KIND_EXPERIMENTAL_PROVIDER=docker
start=${SECONDS}
# Every phase line also goes to phases.txt (created once ${out} is), which .ci/run prints at its end.
phase() {
  echo "e2e-kind: [$((SECONDS - start))s] $*"
  [[ ! -d "${out}" ]] || echo "[$((SECONDS - start))s] $*" >>"${out}/phases.txt"
}

hack/e2e/docker-setup.sh
hack/cluster/build-tools.sh kind ginkgo kubectl registry crane >/dev/null
# Prometheus and kube-state-metrics, for the kind-kubeadm pass only (about 5 minutes the first
# time), build while the first cluster is made and tested; the recipe's cluster waits for them.
ksm_build="" ksm_log="${REPO_ROOT}/_output/e2e-kind-monitoring-build.log"
if [[ " ${E2E_KIND_CLUSTERS:-existing new} " == *" new "* ]]; then
  nice -n 10 hack/cluster/build-tools.sh prometheus kube-state-metrics >"${ksm_log}" 2>&1 &
  ksm_build=$!
fi
# The registry the nodes pull our image from, as operators install it (docs/install.md).
registry="$(hack/e2e/registry.sh up)"
IMAGE="${IMAGE:-${registry}/pv-controller-manager:e2e-kind}"
kind="${TOOLS_BIN}/kind"
kubectl() { "${TOOLS_BIN}/kubectl" --kubeconfig "${kubeconfig}" "$@"; }
rm -rf "${out}" && mkdir -p "${out}/originals"

config="${out}/cluster.yaml"
if [[ -n "${KIND_NODE_IMAGE:-}" ]]; then
  # A public node image: kind's own networking (kindnetd, kube-proxy) and etcd.
  node_image="${KIND_NODE_IMAGE}"
  offline=0
  sed -e '/^networking:/,/^nodes:/{/^nodes:/!d}' -e '/^kubeadmConfigPatches:/,$d' hack/e2e/kind/cluster.yaml >"${config}"
  if [[ ! -f /sys/fs/cgroup/cgroup.controllers ]]; then
    printf 'kubeadmConfigPatches:\n- |\n  kind: KubeletConfiguration\n  failCgroupV1: false\n' >>"${config}"
  fi
  phase "node image ${node_image} (KIND_NODE_IMAGE)"
else
  phase "building kind's node image offline (cached)"
  node_image="$(hack/e2e/kind-node-image.sh)"
  offline=1
  etcd_tag="$(docker image inspect -f '{{ index .Config.Labels "io.github.fastpv.etcd-image-tag" }}' "${node_image}")"
  sed "s/ETCD_IMAGE_TAG/${etcd_tag}/" hack/e2e/kind/cluster.yaml >"${config}"
fi
# Every node's containerd reaches the registry from its first boot: its hosts directory, mounted in
# (a directory: docker's --volume takes no colon in a path, and the registry's directory is named
# host:port).
mkdir -p "${out}/certs.d/${registry}"
hack/e2e/registry.sh hosts-toml >"${out}/certs.d/${registry}/hosts.toml"
awk -v hosts="${out}/certs.d" '{ print }
  /^- role: / { print "  extraMounts:\n  - hostPath: " hosts "\n    containerPath: /etc/containerd/certs.d\n    readOnly: true" }' \
  "${config}" >"${config}.new" && mv "${config}.new" "${config}"
phase "building our image and tools"
make --no-print-directory build image rollout-tool IMAGE="${IMAGE}" IMAGE_TAR="${out}/image.tar" >/dev/null
# The image an upgrade moves to (kind-upgrade): this commit again, stamped as another version.
NEXT_IMAGE="${IMAGE}-next"
make --no-print-directory image IMAGE="${NEXT_IMAGE}" VERSION="$(git describe --tags --always --dirty 2>/dev/null)-next" \
  BIN_DIR="${out}/next-bin" IMAGE_TAR="${out}/next-image.tar" >/dev/null
phase "pushing our images to ${registry}"
IMAGE_DIGEST="$(hack/e2e/registry.sh push "${out}/image.tar" "${IMAGE}")"
hack/e2e/registry.sh push "${out}/next-image.tar" "${NEXT_IMAGE}" >/dev/null
phase "pushed ${IMAGE} as ${IMAGE_DIGEST}"
if [[ " ${E2E_KIND_PASSES} " == *" upstream"* ]]; then
  phase "upstream's e2e.test and its images (cached)"
  hack/e2e/upstream-e2e.sh prepare "${registry}"
fi
(cd test/e2e && GOWORK=off "${TOOLS_BIN}/ginkgo" build -o "${out}/e2e.test" . >/dev/null)

RECIPE_CLUSTER="${CLUSTER}-kubeadm"
cleanup() {
  local rc=$?
  [[ -z "${ksm_build}" ]] || kill "${ksm_build}" 2>/dev/null || true
  if [[ "${rc}" != 0 ]]; then
    # What the nodes saw (kubelet's and containerd's journals, the pods' logs) outlives the clusters.
    local c clusters
    clusters="$("${kind}" get clusters 2>/dev/null || true)"
    for c in "${CLUSTER}" "${RECIPE_CLUSTER}"; do
      grep -qx "${c}" <<<"${clusters}" || continue
      "${kind}" export logs "${out}/logs/${c}" --name "${c}" >/dev/null 2>&1 &&
        echo "e2e-kind: failed; the nodes' logs of ${c} are in ${out}/logs/${c}" >&2
    done
  fi
  if [[ "${E2E_KIND_KEEP:-0}" == "1" ]]; then
    echo "e2e-kind: keeping clusters ${CLUSTER} and ${RECIPE_CLUSTER} (kubeconfigs in ${out}); delete with: ${kind} delete cluster --name NAME"
    return
  fi
  "${kind}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
  "${kind}" delete cluster --name "${RECIPE_CLUSTER}" >/dev/null 2>&1 || true
}
"${kind}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
"${kind}" delete cluster --name "${RECIPE_CLUSTER}" >/dev/null 2>&1 || true
trap cleanup EXIT
trap 'exit 130' INT TERM
# kind draws each control-plane node's host port (and the load balancer's) by listening on port 0 and
# closing the listener before its concurrent `docker run`s, so two nodes can draw the same port:
# docker then refuses one with "port is already allocated" (seen in CI). kind has already deleted
# the nodes; that error alone is retried, with fresh draws.
create_cluster() { # create_cluster NAME CONFIG KUBECONFIG
  local attempt log="${out}/kind-create-$1.log"
  for attempt in 1 2 3; do
    if "${kind}" create cluster --name "$1" --image "${node_image}" --config "$2" \
      --kubeconfig "$3" --wait 3m 2>&1 | tee "${log}"; then
      return 0
    fi
    grep -q 'port is already allocated' "${log}" || return 1
    phase "kind drew one host port twice (attempt ${attempt}); creating $1 again"
    "${kind}" delete cluster --name "$1" >/dev/null 2>&1 || true
  done
  return 1
}
# The passes run with the cluster under test in KUBECONFIG and E2E_KIND_* (kind_test.go, kindSetup).
export E2E_KIND=1 E2E_KIND_ENGINE=docker E2E_KIND_IMAGE="${IMAGE}" E2E_KIND_IMAGE_DIGEST="${IMAGE_DIGEST}" E2E_KIND_TEST_IMAGE="${TEST_IMAGE}" E2E_KIND_NEXT_IMAGE="${NEXT_IMAGE}"
export E2E_KIND_ORIGINALS="${out}/originals"
# The kind-kubeadm pass scrapes the recipe-made cluster with a real Prometheus and kube-state-metrics
# (kind_monitoring_test.go).
export E2E_PROMETHEUS="${TOOLS_BIN}/prometheus" E2E_KUBE_STATE_METRICS="${TOOLS_BIN}/kube-state-metrics"
run_suite() { # run_suite NAME LABEL-FILTER
  phase "ginkgo: $1"
  (cd test/e2e && "${out}/e2e.test" --ginkgo.v --ginkgo.timeout=30m --ginkgo.label-filter="$2" \
    --ginkgo.junit-report="${out}/junit-$1.xml")
}

# Kubernetes' own storage e2e (hack/e2e/upstream-e2e.sh) with the binder ARM names in place.
# With both arms (make e2e-upstream) a failing spec does not stop the run: the parity report at the
# end fails when a spec passed with KCM's binder and not with ours. With ours alone (CI) it fails.
upstream_pass() {
  local binder="ours"
  [[ "$1" == upstream ]] && binder="KCM's binder"
  phase "upstream e2e with ${binder}, set ${E2E_UPSTREAM_SET}"
  if [[ " ${E2E_KIND_PASSES} " == *" upstream-kcm "* ]]; then
    hack/e2e/upstream-e2e.sh run "$1" "${E2E_UPSTREAM_SET}" || phase "upstream e2e with ${binder}: some specs failed (the parity report judges)"
  else
    hack/e2e/upstream-e2e.sh run "$1" "${E2E_UPSTREAM_SET}"
  fi
}

# An existing cluster, switched to ours as operators do it (passes 1-4 of the header).
existing_cluster() {
  phase "creating cluster ${CLUSTER}: 3 control-plane nodes, 1 worker"
  create_cluster "${CLUSTER}" "${config}" "${kubeconfig}"
  hack/e2e/registry.sh connect
  mapfile -t control_planes < <("${kind}" get nodes --name "${CLUSTER}" | grep -- '-control-plane' | sort)
  mapfile -t workers < <("${kind}" get nodes --name "${CLUSTER}" | grep -- '-worker' | sort)
  if [[ "${offline}" == "1" ]]; then
    # No CoreDNS image offline, and nothing here resolves names in pods.
    kubectl -n kube-system scale deployment coredns --replicas=0 >/dev/null
  fi

  phase "RBAC; kubeconfigs and pv-rollout on ${control_planes[*]}"
  for f in deploy/rbac/*.yaml; do kubectl apply -f "${f}" >/dev/null; done
  kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' >"${out}/cluster-configuration.yaml"
  for node in "${control_planes[@]}"; do
    # docs/operators/rollout.md, step 3: our identity's kubeconfig, minted by kubeadm on the node.
    # (Through stdin: the node's /tmp is a tmpfs that docker cp does not see.)
    docker exec -i "${node}" sh -c 'cat >/root/cluster-configuration.yaml &&
      kubeadm kubeconfig user --config /root/cluster-configuration.yaml --client-name system:pv-controller-manager >/etc/kubernetes/pv-controller-manager.conf &&
      chown 65532:65532 /etc/kubernetes/pv-controller-manager.conf && chmod 0600 /etc/kubernetes/pv-controller-manager.conf' <"${out}/cluster-configuration.yaml"
    docker cp "${BIN_DIR}/pv-rollout" "${node}:/usr/local/bin/pv-rollout"
  done

  export KUBECONFIG="${kubeconfig}" E2E_KIND_WORKER="${workers[0]}"
  E2E_KIND_CONTROL_PLANES="$(IFS=,; echo "${control_planes[*]}")"
  export E2E_KIND_CONTROL_PLANES
  local pass
  for pass in ${E2E_KIND_PASSES}; do
    case "${pass}" in
    upstream-kcm) upstream_pass upstream ;;
    rollout) run_suite rollout 'kind-rollout' ;;
    suite) run_suite suite '(kind && !kind-rollout && !kind-upgrade && !kind-disable && !kind-kubeadm) || (!kind && !slow && !node && !local && !pvc-why)' ;;
    upstream) upstream_pass ours ;;
    upgrade) run_suite upgrade 'kind-upgrade' ;;
    disable) run_suite disable 'kind-disable' ;;
    *) echo "e2e-kind: unknown pass ${pass} in E2E_KIND_PASSES" >&2; return 2 ;;
    esac
  done
  [[ "${E2E_KIND_KEEP:-0}" == "1" ]] || "${kind}" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
}

new_cluster_from_recipe() {
  # A new cluster from the kubeadm recipe (docs/install.md 2a): step 1, the recipe's ClusterConfiguration
  # as a kubeadm config patch (kind merges v1beta4 extraArgs entry by entry; the Kubernetes version is
  # the node image's); step 2, our manifest with this image in every control-plane node's manifests
  # directory before kubeadm runs (kind skips kubeadm's preflight, which would not object anyway: it
  # checks only kubeadm's own manifests). Step 3 runs in the spec.
  recipe="${out}/kubeadm"
  mkdir -p "${recipe}"
  # The recipe's manifest names our image by digest, as docs/install.md recommends.
  sed "s#image: .*pv-controller-manager:.*#image: ${IMAGE_DIGEST}#" deploy/static-pod/pv-controller-manager.yaml >"${recipe}/pv-controller-manager.yaml"
  awk -v manifest="${recipe}/pv-controller-manager.yaml" '{ print }
    /^- role: / { role = $3 }
    /^  extraMounts:$/ && role == "control-plane" { print "  - hostPath: " manifest "\n    containerPath: /etc/kubernetes/manifests/pv-controller-manager.yaml\n    readOnly: true" }' \
    "${config}" >"${recipe}/cluster.yaml"
  grep -q '^kubeadmConfigPatches:' "${recipe}/cluster.yaml" || echo 'kubeadmConfigPatches:' >>"${recipe}/cluster.yaml"
  { echo '- |'; sed -e '/^kubernetesVersion:/d' -e 's/^/  /' deploy/kubeadm/cluster-configuration.yaml; } >>"${recipe}/cluster.yaml"
  if [[ -n "${ksm_build}" ]]; then
    wait "${ksm_build}" || { cat "${ksm_log}" >&2; echo "e2e-kind: building Prometheus or kube-state-metrics failed" >&2; exit 1; }
    ksm_build=""
  fi
  phase "creating cluster ${RECIPE_CLUSTER} with the kubeadm recipe: 3 control-plane nodes, 1 worker"
  create_cluster "${RECIPE_CLUSTER}" "${recipe}/cluster.yaml" "${recipe}/kubeconfig"
  # Attached already when the first cluster ran (kind keeps its network); alone, the kubelets pull
  # our image once it is (they retry).
  hack/e2e/registry.sh connect
  kubeconfig="${recipe}/kubeconfig"
  if [[ "${offline}" == "1" ]]; then kubectl -n kube-system scale deployment coredns --replicas=0 >/dev/null; fi
  mapfile -t control_planes < <("${kind}" get nodes --name "${RECIPE_CLUSTER}" | grep -- '-control-plane' | sort)
  mapfile -t workers < <("${kind}" get nodes --name "${RECIPE_CLUSTER}" | grep -- '-worker' | sort)
  for node in "${control_planes[@]}"; do
    docker cp deploy/kubeadm/pv-controller-manager-identity.sh "${node}:/root/pv-controller-manager-identity.sh"
    docker cp "${BIN_DIR}/pv-rollout" "${node}:/usr/local/bin/pv-rollout" # the rollback spec
    docker cp deploy/rbac "${node}:/root/rbac"
  done
  export KUBECONFIG="${kubeconfig}" E2E_KIND_WORKER="${workers[0]}" E2E_KIND_IMAGE="${IMAGE_DIGEST}"
  E2E_KIND_CONTROL_PLANES="$(IFS=,; echo "${control_planes[*]}")"
  export E2E_KIND_CONTROL_PLANES
  run_suite kubeadm 'kind-kubeadm'
}

# E2E_KIND_CLUSTERS: which of the two clusters to make and test (both by default; "new" alone
# iterates on the kubeadm recipe in ~6 minutes).
E2E_KIND_CLUSTERS="${E2E_KIND_CLUSTERS:-existing new}"
if [[ " ${E2E_KIND_CLUSTERS} " == *" existing "* ]]; then existing_cluster; fi
if [[ " ${E2E_KIND_CLUSTERS} " == *" new "* ]]; then new_cluster_from_recipe; fi
if [[ " ${E2E_KIND_PASSES} " == *" upstream-kcm "* && " ${E2E_KIND_PASSES} " == *" upstream "* ]]; then
  phase "parity of upstream's e2e, KCM's binder and ours"
  hack/e2e/upstream-e2e.sh report
fi
phase "passed"
