#!/usr/bin/env bash
# A Docker Engine for make e2e-kind: uses the one that answers `docker info`, else installs Debian's
# docker.io (apt-get, root) and starts dockerd. kind's nodes are privileged containers; a privileged
# container asks for every capability, and runc fails ("unable to apply caps") where the machine's
# bounding set lacks one (this project's CI lacks CAP_SYS_RESOURCE). Only then (detected from
# /proc/self/status, not assumed) dockerd gets runc-dropcap (hack/cmd/runc-dropcap) as its default
# runtime, which removes the capabilities the machine cannot grant before it execs runc.
#   hack/e2e/docker-setup.sh          ensure a working engine (idempotent)
#   hack/e2e/docker-setup.sh down     stop a dockerd this script started
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

DOCKER_DIR="${REPO_ROOT}/_output/docker"
DROPCAP_BIN="/usr/local/sbin/runc-dropcap"
CONTAINERD_ROOT="/var/lib/pvcm-docker-containerd"
CONTAINERD_STATE="/run/pvcm-docker-containerd"
CONTAINERD_SOCKET="${CONTAINERD_STATE}/containerd.sock"

# missing_caps prints the capabilities up to cap_last_cap that the bounding set lacks.
missing_caps() {
  local bnd last i
  bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
  last=$(cat /proc/sys/kernel/cap_last_cap)
  for ((i = 0; i <= last; i++)); do
    ((bnd & (1 << i))) || echo "${i}"
  done
}

down() {
  stop_pidfile "${DOCKER_DIR}/dockerd.pid" 200
  stop_pidfile "${DOCKER_DIR}/containerd.pid" 200
}

# start_daemon NAME SECONDS READY-COMMAND... : starts NAME (its arguments in the array daemon_args)
# in the background, logging to DOCKER_DIR/NAME.log, and waits until READY-COMMAND succeeds; gives up
# after SECONDS or when NAME exits, printing the log's end without gRPC's reconnect chatter (it
# hides the cause).
start_daemon() {
  local name="$1" seconds="$2" t0=${SECONDS}
  shift 2
  nohup "${name}" "${daemon_args[@]}" >"${DOCKER_DIR}/${name}.log" 2>&1 &
  echo $! >"${DOCKER_DIR}/${name}.pid"
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "${DOCKER_DIR}/${name}.pid")" 2>/dev/null || ((SECONDS - t0 > seconds)); then
      echo "docker-setup.sh: ${name} did not answer within ${seconds} s (or exited); see ${DOCKER_DIR}/${name}.log" >&2
      grep -v 'module=grpc' "${DOCKER_DIR}/${name}.log" | tail -40 >&2 || true
      return 1
    fi
    sleep 0.2
  done
  echo "docker-setup.sh: ${name} up in $((SECONDS - t0)) s (log ${DOCKER_DIR}/${name}.log)"
}

# start_containerd: Debian's containerd (docker.io's dependency) for dockerd alone; CRI off, as in
# dockerd's managed one. Idempotent.
start_containerd() {
  if [[ -S "${CONTAINERD_SOCKET}" ]] && ctr -a "${CONTAINERD_SOCKET}" version >/dev/null 2>&1; then
    return
  fi
  mkdir -p "${CONTAINERD_STATE}" "${CONTAINERD_ROOT}"
  cat >"${DOCKER_DIR}/containerd.toml" <<TOML
version = 2
root = "${CONTAINERD_ROOT}"
state = "${CONTAINERD_STATE}"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "${CONTAINERD_SOCKET}"
[ttrpc]
  address = "${CONTAINERD_SOCKET}.ttrpc"
TOML
  daemon_args=(--config "${DOCKER_DIR}/containerd.toml")
  start_daemon containerd 120 ctr -a "${CONTAINERD_SOCKET}" version
}

up() {
  local missing
  missing="$(missing_caps | tr '\n' ' ')"
  if docker info >/dev/null 2>&1; then
    if [[ -n "${missing}" && "$(docker info --format '{{.DefaultRuntime}}')" != "runc-dropcap" ]]; then
      echo "docker-setup.sh: warning: this machine's bounding set lacks capabilities ${missing}and the running dockerd's default runtime is $(docker info --format '{{.DefaultRuntime}}'); privileged containers (kind nodes) will fail. Stop it and rerun this script, or register runc-dropcap yourself (docs/maintainers/e2e-kind.md)." >&2
    fi
    echo "docker-setup.sh: using the running Docker Engine ($(docker info --format '{{.ServerVersion}}'), default runtime $(docker info --format '{{.DefaultRuntime}}'))"
    return
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "docker-setup.sh: docker info fails and we are not root to install or start dockerd" >&2
    return 1
  fi
  if ! command -v dockerd >/dev/null; then
    echo "docker-setup.sh: installing docker.io (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null; }
  fi
  mkdir -p "${DOCKER_DIR}"
  local args=()
  if [[ -n "${missing}" ]]; then
    echo "docker-setup.sh: the bounding set lacks capabilities ${missing}(see /proc/self/status CapBnd): default runtime runc-dropcap"
    (cd "${REPO_ROOT}/hack/cmd/runc-dropcap" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "${DROPCAP_BIN}" .)
    args+=(--add-runtime "runc-dropcap=${DROPCAP_BIN}" --default-runtime runc-dropcap)
  fi
  start_containerd
  args+=(--containerd "${CONTAINERD_SOCKET}")
  daemon_args=("${args[@]}")
  start_daemon dockerd 90 docker info
}

case "${1:-up}" in
up) up ;;
down) down ;;
*) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
