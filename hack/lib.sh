#!/usr/bin/env bash
# Shared helpers for hack/ scripts. Source it; do not run it.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="github.com/fastpv/pv-controller-manager"
# The upstream package we carry, relative to the root of k8s.io/kubernetes.
VENDORED_PKG="pkg/controller/volume/persistentvolume"
# Sub-packages of VENDORED_PKG that travel with it; their import paths are rewritten to our module.
VENDORED_SUBPKGS=(metrics testing)

# upstream_tag prints the k8s.io/kubernetes tag we track (patches/UPSTREAM).
upstream_tag() {
  tr -d '[:space:]' <"${REPO_ROOT}/patches/UPSTREAM"
}

# upstream_dir TAG downloads k8s.io/kubernetes@TAG into the module cache if needed and prints its directory.
upstream_dir() {
  local tag="$1" dir
  dir="$(cd "${REPO_ROOT}" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@${tag}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ -z "${dir}" || ! -d "${dir}" ]]; then
    echo "cannot download k8s.io/kubernetes@${tag}" >&2
    return 1
  fi
  echo "${dir}"
}
