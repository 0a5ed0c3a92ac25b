#!/usr/bin/env bash
# A private containerd (Debian's containerd 1.6 + runc) for checking our image and for make e2e-node:
# its own config, root, state and socket under _output/containerd, so it never touches a system one.
#   hack/e2e/containerd.sh up      install (apt-get) if missing, start, print the socket
#   hack/e2e/containerd.sh down    stop
#   hack/e2e/containerd.sh socket  print the socket path
# CRI settings known to work on this kind of machine (docs/maintainers/e2e-node.md): sandbox_image is our own
# pause image (hack/e2e/e2e-node.sh builds it), SystemdCgroup = false, and restrict_oom_score_adj = true
# (without CAP_SYS_RESOURCE runc cannot set the negative oom_score_adj kubelet asks for).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CONTAINERD_DIR="${CONTAINERD_DIR:-${REPO_ROOT}/_output/containerd}"
SOCKET="${CONTAINERD_DIR}/containerd.sock"
PAUSE_IMAGE="${PAUSE_IMAGE:-registry.k8s.io/pause:3.10-local}"

install() {
  if command -v containerd >/dev/null && command -v runc >/dev/null && command -v ctr >/dev/null; then
    return
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "containerd.sh: containerd and runc are missing and we are not root to apt-get them" >&2
    return 1
  fi
  echo "containerd.sh: installing containerd and runc (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc >/dev/null; }
}

up() {
  install
  mkdir -p "${CONTAINERD_DIR}"
  if [[ -S "${SOCKET}" ]] && ctr -a "${SOCKET}" version >/dev/null 2>&1; then
    echo "${SOCKET}"
    return
  fi
  cat >"${CONTAINERD_DIR}/config.toml" <<TOML
version = 2
root = "${CONTAINERD_DIR}/root"
state = "${CONTAINERD_DIR}/state"
[grpc]
  address = "${SOCKET}"
[ttrpc]
  address = "${SOCKET}.ttrpc"
[debug]
  address = "${SOCKET}.debug"
[plugins."io.containerd.internal.v1.opt"]
  path = "${CONTAINERD_DIR}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
TOML
  nohup containerd --config "${CONTAINERD_DIR}/config.toml" >"${CONTAINERD_DIR}/containerd.log" 2>&1 &
  echo $! >"${CONTAINERD_DIR}/containerd.pid"
  for _ in $(seq 1 100); do
    if ctr -a "${SOCKET}" version >/dev/null 2>&1; then
      echo "${SOCKET}"
      return
    fi
    sleep 0.1
  done
  echo "containerd.sh: containerd did not come up; see ${CONTAINERD_DIR}/containerd.log" >&2
  tail -20 "${CONTAINERD_DIR}/containerd.log" >&2
  return 1
}

down() {
  stop_pidfile "${CONTAINERD_DIR}/containerd.pid"
  # Pod sandboxes leave their /dev/shm mounts behind when containerd stops under them.
  grep -o " ${CONTAINERD_DIR}/[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}

case "${1:-}" in
up) up ;;
down) down ;;
socket) echo "${SOCKET}" ;;
*)
  echo "usage: $0 up|down|socket" >&2
  exit 2
  ;;
esac
