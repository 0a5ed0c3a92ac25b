#!/usr/bin/env bash
# Checks what the README's "Try it" asks for on a Linux machine, and installs the Debian packages
# among them with --install (root, apt-get). .ci/run runs it with --install before the tests, so
# that CI installs exactly what a user is told to install.
#
#   Go >= the go directive of go.mod      not installed here: https://go.dev/dl (the v1.38 line
#                                         fetches its newer toolchain by itself, GOTOOLCHAIN)
#   make, git, curl                       Debian: make git curl
#   a C compiler and libc headers         Debian: gcc libc6-dev (go test -race needs cgo)
#   free disk under the repository        REQUIRED_DISK_GB (default 30): Go's caches, the upstream
#                                         binaries and kind's node image
# Docker Engine (make e2e-kind, e2e-upstream) and containerd (make e2e-node) are installed by those
# targets themselves (hack/e2e/docker-setup.sh), as root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

install=0
[[ "${1:-}" == "--install" ]] && install=1
packages=(make git curl gcc libc6-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ "${install}" == 1 ]]; then
    echo "requirements.sh: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "requirements.sh: missing Debian packages: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

failed=0
want_go="$(sed -n 's/^go //p' go.mod)"
if ! command -v go >/dev/null; then
  echo "requirements.sh: no go on PATH; install Go ${want_go} or newer (https://go.dev/dl)" >&2
  failed=1
else
  have_go="$(go env GOVERSION)"
  if [[ "$(printf '%s\n%s\n' "go${want_go}" "${have_go}" | sort -V | head -1)" != "go${want_go}" ]]; then
    echo "requirements.sh: ${have_go} is older than go.mod's go ${want_go}" >&2
    failed=1
  fi
fi
if ! echo 'int main(void){return 0;}' | cc -x c -o /dev/null - 2>/dev/null; then
  echo "requirements.sh: the C compiler cannot link a program (gcc, libc6-dev): go test -race needs it" >&2
  failed=1
fi
need_gb="${REQUIRED_DISK_GB:-30}"
free_gb="$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')"
if [[ "${free_gb}" -lt "${need_gb}" ]]; then
  echo "requirements.sh: ${free_gb} GB free under $(pwd), want ${need_gb} GB" >&2
  failed=1
fi
[[ "${failed}" == 0 ]] && echo "requirements.sh: ok (${have_go}, $(cc --version | head -1), ${free_gb} GB free)"
exit "${failed}"
