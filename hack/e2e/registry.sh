#!/usr/bin/env bash
# The local image registry of make e2e-kind and make e2e-upstream, as kind's "local registry" guide
# sets one up: the CNCF Distribution registry (hack/tools/registry, built from its Go module) in a
# container named REGISTRY_NAME, published on 127.0.0.1:REGISTRY_PORT for pushes from this machine,
# and reached by the kind nodes' containerd as localhost:REGISTRY_PORT through a hosts.toml that
# points at the container on kind's network (plain HTTP; the nodes' config_path is set by
# hack/e2e/kind/cluster.yaml). The registry listens on 127.0.0.1 only; the nodes reach it on the
# docker network kind made. Blobs live in _output/registry/data, so pushed images survive a
# restart and a second push of the same image uploads nothing.
#
#   registry.sh up                start the registry (idempotent); prints its address, localhost:PORT
#   registry.sh connect           attach it to kind's network (once a kind cluster created it)
#   registry.sh hosts-toml        the hosts.toml a node needs in /etc/containerd/certs.d/localhost:PORT/
#                                 (make e2e-kind mounts its directory into every node, so a node pulls
#                                 from the registry from its first boot)
#   registry.sh push TAR REF      push an image tarball (docker-archive or OCI layout) to REF with
#                                 crane; prints REF@sha256:... (the digest the kubelet will pull)
#   registry.sh down              remove the container (the data stays)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

NAME="${REGISTRY_NAME:-pv-registry}"
PORT="${REGISTRY_PORT:-5001}"
DATA="${REPO_ROOT}/_output/registry/data"
ADDRESS="localhost:${PORT}"

up() {
  hack/cluster/build-tools.sh registry >&2
  local version image
  version="$(cat "${TOOLS_BIN}/.registry.version")"
  image="pv-controller-manager.local/registry:${version}"
  if ! docker image inspect "${image}" >/dev/null 2>&1; then
    local tar="${REPO_ROOT}/_output/registry/registry.tar"
    mkdir -p "$(dirname "${tar}")"
    (cd hack/cmd/image && GOWORK=off go run . --file "${TOOLS_BIN}/registry=/bin/registry" \
      --file "${REPO_ROOT}/hack/tools/registry/config.yml=/etc/distribution/config.yml" \
      --entrypoint /bin/registry,serve,/etc/distribution/config.yml --user 0:0 --title registry \
      --version "${version}" --tag "${image}" --out "${tar}" >/dev/null)
    docker load -i "${tar}" >/dev/null
  fi
  if [[ "$(docker inspect -f '{{.State.Running}} {{.Config.Image}}' "${NAME}" 2>/dev/null)" != "true ${image}" ]]; then
    docker rm -f "${NAME}" >/dev/null 2>&1 || true
    mkdir -p "${DATA}"
    # OTEL_TRACES_EXPORTER=none: the registry exports traces to localhost:4318 by default and logs
    # every failed export.
    docker run -d --restart=always --name "${NAME}" -p "127.0.0.1:${PORT}:5000" -e OTEL_TRACES_EXPORTER=none \
      -v "${DATA}:/var/lib/registry" "${image}" >/dev/null
  fi
  # Ready when the API answers (the distribution spec's version check).
  local i
  for i in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:${PORT}/v2/" >/dev/null 2>&1; then
      echo "${ADDRESS}"
      return 0
    fi
    sleep 0.1
  done
  echo "registry.sh: ${NAME} did not answer on 127.0.0.1:${PORT} within 10 s" >&2
  docker logs --tail 20 "${NAME}" >&2 || true
  return 1
}

connect() {
  local network="${KIND_EXPERIMENTAL_DOCKER_NETWORK:-kind}"
  if [[ "$(docker inspect -f "{{ json .NetworkSettings.Networks.${network} }}" "${NAME}")" == "null" ]]; then
    docker network connect "${network}" "${NAME}"
  fi
}

# hosts_toml prints what a node's containerd needs in /etc/containerd/certs.d/ADDRESS/hosts.toml.
hosts_toml() {
  printf '[host."http://%s:5000"]\n  capabilities = ["pull", "resolve"]\n' "${NAME}"
}

push() {
  local tar="$1" ref="$2" digest
  hack/cluster/build-tools.sh crane >&2
  digest="$("${TOOLS_BIN}/crane" push "${tar}" "${ref}" 2>/dev/null)" || {
    "${TOOLS_BIN}/crane" push "${tar}" "${ref}" >&2
    return 1
  }
  # crane prints REPOSITORY@sha256:...; the tag stays pushed as well.
  echo "${digest}"
}

case "${1:-}" in
up) up ;;
connect) connect ;;
hosts-toml) hosts_toml ;;
push) push "${2:?registry.sh push TAR REF}" "${3:?registry.sh push TAR REF}" ;;
down) docker rm -f "${NAME}" >/dev/null 2>&1 || true ;;
*)
  echo "usage: registry.sh up | connect | hosts-toml | push TAR REF | down" >&2
  exit 2
  ;;
esac
