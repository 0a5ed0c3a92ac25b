#!/usr/bin/env bash
# Builds, from Go modules only, the upstream binaries a local cluster needs, into one cached bin dir
# (default _output/tools/bin, or $TOOLS_BIN). A binary is rebuilt only when its pinned version changed.
#   etcd                          hack/tools/etcd/go.mod (go.etcd.io/etcd/server/v3)
#   kube-apiserver, kube-controller-manager, kube-scheduler, ginkgo,
#   kubelet (make e2e-node, e2e-kind), kubeadm, kubectl (make e2e-kind; not in the default set)
#                                 hack/tools/go.mod (k8s.io/kubernetes, same pin as our controller)
#   kwok, kwokctl                 KWOK_VERSION (hack/lib.sh)
#   kind                          KIND_VERSION (hack/lib.sh) (only make e2e-kind; not in the default set)
#   prometheus                    hack/monitoring/go.mod, as promtool (only make e2e-kind; not in the default set)
#   registry                      hack/tools/registry/go.mod (CNCF Distribution; make e2e-kind, push; not in the default set)
#   local-path-provisioner        LOCAL_PATH_VERSION (hack/lib.sh) (upstream e2e's default StorageClass; not in the default set)
#   kube-state-metrics            KUBE_STATE_METRICS_VERSION (hack/lib.sh) (make e2e-kind's Prometheus; not in the default set)
#   crane                         hack/cmd/image/go.mod (go-containerregistry; make push, e2e-kind; not in the default set)
# Usage: hack/cluster/build-tools.sh [name...]   (default: all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

mkdir -p "${TOOLS_BIN}"
export CGO_ENABLED=0 GOWORK=off

modversion() { # modversion MODULE_DIR GO_MODULE (MODULE_DIR relative to the repository)
  # shellcheck disable=SC2046
  (cd "${REPO_ROOT}/$1" && go list $(module_flags "$1") -m -f '{{.Version}}' "$2")
}

# build NAME STAMP CMD...: runs CMD unless TOOLS_BIN/NAME exists with the same stamp.
build() {
  local name="$1" stamp="$2"
  shift 2
  if [[ -x "${TOOLS_BIN}/${name}" && "$(cat "${TOOLS_BIN}/.${name}.version" 2>/dev/null)" == "${stamp}" ]]; then
    [[ -n "${BUILD_TOOLS_QUIET:-}" ]] || echo "build-tools.sh: ${name} ${stamp} is up to date"
    return
  fi
  echo "build-tools.sh: building ${name} ${stamp}"
  local start=${SECONDS}
  "$@"
  echo "${stamp}" >"${TOOLS_BIN}/.${name}.version"
  echo "build-tools.sh: built ${name} in $((SECONDS - start))s"
}

tools_dir="${REPO_ROOT}/hack/tools"
tools_flags="$(module_flags hack/tools)"
etcd_flags="$(module_flags hack/tools/etcd)"
k8s_version="$(modversion hack/tools k8s.io/kubernetes)"
build_k8s() { (cd "${tools_dir}" && go build ${tools_flags} -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "${k8s_version}" | cut -d. -f2)" -o "${TOOLS_BIN}/$1" "k8s.io/kubernetes/cmd/$1"); }

want=("$@")
[[ ${#want[@]} -eq 0 ]] && want=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok kwokctl ginkgo)
for name in "${want[@]}"; do
  case "${name}" in
  etcd)
    build etcd "$(modversion hack/tools/etcd go.etcd.io/etcd/server/v3)" \
      bash -c "cd '${tools_dir}/etcd' && go build ${etcd_flags} -trimpath -ldflags '-s -w' -o '${TOOLS_BIN}/etcd' ."
    ;;
  kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kubeadm | kubectl)
    build "${name}" "${k8s_version}" build_k8s "${name}"
    ;;
  kwok | kwokctl)
    build "${name}" "${KWOK_VERSION}" \
      env GOBIN="${TOOLS_BIN}" go install -trimpath -ldflags '-s -w' "sigs.k8s.io/kwok/cmd/${name}@${KWOK_VERSION}"
    ;;
  kind)
    build kind "${KIND_VERSION}" env GOBIN="${TOOLS_BIN}" go install -trimpath -ldflags '-s -w' "sigs.k8s.io/kind@${KIND_VERSION}"
    ;;
  prometheus)
    # The server of the module hack/monitoring pins for promtool, with Kubernetes service discovery
    # only (make e2e-kind scrapes the binder with it; not in the default set).
    build prometheus "$(cd "${REPO_ROOT}/hack/monitoring" && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)" \
      bash -c "cd '${REPO_ROOT}/hack/monitoring' && go build -tags remove_all_sd,enable_kubernetes_sd -trimpath -ldflags '-s -w' -o '${TOOLS_BIN}/prometheus' github.com/prometheus/prometheus/cmd/prometheus"
    ;;
  registry)
    build registry "$(cd "${tools_dir}/registry" && go list -m -f '{{.Version}}' github.com/distribution/distribution/v3)" \
      bash -c "cd '${tools_dir}/registry' && go build -trimpath -ldflags '-s -w' -o '${TOOLS_BIN}/registry' ."
    ;;
  local-path-provisioner)
    build local-path-provisioner "${LOCAL_PATH_VERSION}" \
      env GOBIN="${TOOLS_BIN}" go install -trimpath -ldflags '-s -w' "github.com/rancher/local-path-provisioner@${LOCAL_PATH_VERSION}"
    ;;
  kube-state-metrics)
    build kube-state-metrics "${KUBE_STATE_METRICS_VERSION}" \
      env GOBIN="${TOOLS_BIN}" go install -trimpath -ldflags '-s -w' "k8s.io/kube-state-metrics/v2@${KUBE_STATE_METRICS_VERSION}"
    ;;
  crane)
    build crane "$(cd "${REPO_ROOT}/hack/cmd/image" && go list -m -f '{{.Version}}' github.com/google/go-containerregistry)" \
      bash -c "cd '${REPO_ROOT}/hack/cmd/image' && go build -trimpath -ldflags '-s -w' -o '${TOOLS_BIN}/crane' github.com/google/go-containerregistry/cmd/crane"
    ;;
  ginkgo)
    build ginkgo "$(modversion hack/tools github.com/onsi/ginkgo/v2)" \
      bash -c "cd '${tools_dir}' && go build ${tools_flags} -trimpath -o '${TOOLS_BIN}/ginkgo' github.com/onsi/ginkgo/v2/ginkgo"
    ;;
  *)
    echo "build-tools.sh: unknown tool ${name}" >&2
    exit 2
    ;;
  esac
done
