#!/usr/bin/env bash
# Shared helpers for hack/ scripts. Source it; do not run it.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="github.com/fastpv/pv-controller-manager"
# The upstream package we carry, relative to the root of k8s.io/kubernetes.
VENDORED_PKG="pkg/controller/volume/persistentvolume"
# Sub-packages of VENDORED_PKG that travel with it; their import paths are rewritten to our module.
VENDORED_SUBPKGS=(metrics testing)

# Every Go module of the repository, written once: hack/verify/verify-gomod.sh keeps them tidy and
# checks that no go.mod is missing here.
GO_MODULES=(. hack/monitoring hack/tools hack/tools/etcd hack/tools/registry hack/cmd/benchreport hack/cmd/capi hack/cmd/docscheck hack/cmd/e2eparity hack/cmd/image hack/cmd/kind-lb hack/cmd/krew hack/cmd/runc-dropcap test/e2e test/upstream-e2e)
# The modules that build upstream code, pinned to the release's k8s.io/kubernetes (pin-kubernetes.sh).
K8S_MODULES=(. hack/tools test/upstream-e2e)
# The modules whose go.mod a release line carries (releases/<line>/{go.mod, tools/, etcd/}).
RELEASE_MODULES=(. hack/tools hack/tools/etcd)
# Our small tools with tests of their own (make test).
TESTED_TOOL_MODULES=(hack/monitoring hack/cmd/benchreport hack/cmd/capi hack/cmd/docscheck hack/cmd/e2eparity hack/cmd/kind-lb hack/cmd/krew hack/cmd/runc-dropcap)

# Tool versions not pinned by a go.mod, written once (an environment variable of the same name wins).
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
KIND_VERSION="${KIND_VERSION:-v0.33.0}"           # make e2e-kind only
CRI_TOOLS_VERSION="${CRI_TOOLS_VERSION:-v1.37.0}" # crictl in kind's node image
LOCAL_PATH_VERSION="${LOCAL_PATH_VERSION:-v0.0.30}" # local-path-provisioner: make e2e-upstream's default StorageClass
KUBE_STATE_METRICS_VERSION="${KUBE_STATE_METRICS_VERSION:-v2.20.0}" # make e2e-kind's Prometheus: the series the alerts read besides ours

# upstream_dir TAG downloads k8s.io/kubernetes@TAG into the module cache if needed and prints its directory.
upstream_dir() {
  local tag="$1" dir toolchain
  # A release that needs a newer Go than the default line's is downloaded with its line's toolchain
  # (line_toolchain, hack/release/series.sh): the go command refuses its go.mod otherwise.
  toolchain="$(line_toolchain "$(release_line "${tag}")")"
  dir="$(cd "${REPO_ROOT}" && GOTOOLCHAIN="${toolchain:-${GOTOOLCHAIN:-$(go env GOTOOLCHAIN)}}" GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@${tag}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ -z "${dir}" || ! -d "${dir}" ]]; then
    echo "cannot download k8s.io/kubernetes@${tag}" >&2
    return 1
  fi
  echo "${dir}"
}

# The patch series and the release lines: hack/release/series.sh.
source "${REPO_ROOT}/hack/release/series.sh"

# The release a script works on: KUBE_VERSION (make passes it), by default the default line's tag.
# Another carried release builds in this same tree, without a copy: its module files
# (releases/<line>/go.mod, tools/, etcd/) by -modfile, and its generated files (vendored
# controller, integration port, releases/<line>/src/) by -overlay (hack/release/release-overlay.sh).
# Its binaries go to bin/<version>, its upstream tools to _output/releases/<version>/tools/bin.
KUBE_VERSION="${KUBE_VERSION:-$(upstream_tag)}"
if [[ "${KUBE_VERSION}" != "$(upstream_tag)" ]]; then
  RELEASE_LINE="$(line_of "${KUBE_VERSION}")" || exit 2
  RELEASE_OUT="${REPO_ROOT}/_output/releases/${KUBE_VERSION}"
  TOOLS_BIN="${TOOLS_BIN:-${RELEASE_OUT}/tools/bin}"
  BIN_DIR="${BIN_DIR:-${REPO_ROOT}/bin/${KUBE_VERSION}}"
  export GOWORK=off
  # The line's Go toolchain when it names one (line_toolchain, hack/release/series.sh).
  if [[ -n "$(line_toolchain "${RELEASE_LINE}")" ]]; then export GOTOOLCHAIN="$(line_toolchain "${RELEASE_LINE}")"; fi
else
  RELEASE_LINE="$(default_line)"
  RELEASE_OUT=""
  TOOLS_BIN="${TOOLS_BIN:-${REPO_ROOT}/_output/tools/bin}"
  BIN_DIR="${BIN_DIR:-${REPO_ROOT}/bin}"
fi
export KUBE_VERSION

# module_flags MODULE prints the go flags that build MODULE (., hack/tools or hack/tools/etcd) for
# KUBE_VERSION: nothing for the default release.
module_flags() {
  [[ -n "${RELEASE_OUT}" ]] || return 0
  case "$1" in
  .) echo "-modfile=${RELEASES_DIR}/${RELEASE_LINE}/go.mod -overlay=${RELEASE_OUT}/overlay.json" ;;
  hack/tools) echo "-modfile=${RELEASES_DIR}/${RELEASE_LINE}/tools/go.mod" ;;
  hack/tools/etcd) echo "-modfile=${RELEASES_DIR}/${RELEASE_LINE}/etcd/go.mod" ;;
  esac
}

# busybox_static prints the path of Debian's static busybox (package busybox-static), downloaded once
# into _output/kind with apt-get download: kind's node image and the upstream e2e test images carry it.
busybox_static() {
  local work="${REPO_ROOT}/_output/kind"
  if [[ ! -x "${work}/busybox" ]]; then
    mkdir -p "${work}"
    (cd "${work}" && rm -f busybox-static_*.deb && { apt-get download busybox-static >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get download busybox-static >/dev/null; }; })
    dpkg-deb --fsys-tarfile "${work}"/busybox-static_*.deb | tar -xO ./bin/busybox >"${work}/busybox"
    chmod 0755 "${work}/busybox"
  fi
  echo "${work}/busybox"
}

# stop_pidfile FILE [TENTHS]: stops the process whose pid FILE holds (TERM, then waits up to
# TENTHS tenths of a second, default 50) and removes FILE. Nothing to do without FILE.
stop_pidfile() {
  local file="$1" tenths="${2:-50}" pid
  [[ -f "${file}" ]] || return 0
  pid="$(cat "${file}")"
  kill "${pid}" 2>/dev/null || true
  for _ in $(seq 1 "${tenths}"); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
  rm -f "${file}"
}

# kwok_create_cluster NAME LOG [kwokctl create args...]: a kwokctl cluster of the binary runtime on
# the upstream binaries in TOOLS_BIN (hack/cluster/build-tools.sh), waiting up to 120 s; kwokctl's
# output goes to LOG, printed when it fails. Used by hack/cluster/local-up.sh and hack/e2e/e2e-node.sh.
kwok_create_cluster() {
  local name="$1" log="$2"
  shift 2
  "${TOOLS_BIN:?}/kwokctl" create cluster --name "${name}" --runtime binary \
    --etcd-binary "${TOOLS_BIN}/etcd" \
    --kube-apiserver-binary "${TOOLS_BIN}/kube-apiserver" \
    --kube-controller-manager-binary "${TOOLS_BIN}/kube-controller-manager" \
    --kube-scheduler-binary "${TOOLS_BIN}/kube-scheduler" \
    --kwok-controller-binary "${TOOLS_BIN}/kwok" \
    --wait 120s --quiet-pull "$@" >"${log}" 2>&1 || {
    cat "${log}" >&2
    return 1
  }
}
