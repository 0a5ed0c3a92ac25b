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

# The release lines we carry besides the default one (patches/UPSTREAM): each has a directory
# releases/<line>/ (docs/releases.md) with its UPSTREAM tag, its series, the patches that had to be
# adapted to it (patches/), and the go.mod/go.sum of the binary, the tools and etcd for it.
RELEASES_DIR="${REPO_ROOT}/releases"

# release_line v1.36.3 -> v1.36
release_line() {
  local v="$1"
  v="${v#v}"
  echo "v${v%%.*}.$(echo "${v}" | cut -d. -f2)"
}

# patch_files PATCH lists the files a patch touches.
patch_files() {
  awk '/^diff --git a\// { print substr($3, 3) }' "$1"
}

# apply_entry DIR ENTRY applies one entry of patches/series to the tree at DIR: the shared patch
# patches/ENTRY, or, when this tree carries an adapted version patches/release/ENTRY, the shared
# patch's changes to the files the adapted one does not carry, then the adapted one. An adapted
# patch holds only the files whose change differs on its release, so a patch's new files (and any
# hunk that still applies) are written once, for every release.
# Extra arguments are passed to git apply (for example --3way or --check). VARIANTS_DIR overrides
# where the adapted patches are read from (hack/rebase.sh reads them from releases/<line>/patches).
apply_entry() {
  local dir="$1" entry="$2"
  shift 2
  local shared="${REPO_ROOT}/patches/${entry}" variant="${VARIANTS_DIR:-${REPO_ROOT}/patches/release}/${entry}"
  if [[ ! -f "${variant}" ]]; then
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${shared}")
    return
  fi
  if [[ ! -f "${shared}" ]]; then # a patch only this release carries
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${variant}")
    return
  fi
  local includes=() f
  while read -r f; do
    [[ -z "${f}" ]] && continue
    patch_files "${variant}" | grep -qxF "${f}" || includes+=("--include=${f}")
  done < <(patch_files "${shared}")
  if [[ ${#includes[@]} -gt 0 ]]; then
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${includes[@]}" "${shared}") || return 1
  fi
  (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${variant}")
}

# series_entries [FILE] prints the entries of a series file (default patches/series), comments
# and blank lines dropped.
series_entries() {
  local patch
  while read -r patch; do
    patch="${patch%%#*}"
    patch="$(echo "${patch}" | tr -d '[:space:]')"
    [[ -n "${patch}" ]] && echo "${patch}"
  done <"${1:-${REPO_ROOT}/patches/series}"
}

# entry_source ENTRY prints the patch file whose header (author, date, message) an entry carries:
# the adapted one if this tree has it, else the shared one.
entry_source() {
  local variant="${VARIANTS_DIR:-${REPO_ROOT}/patches/release}/$1"
  if [[ -f "${variant}" ]]; then echo "${variant}"; else echo "${REPO_ROOT}/patches/$1"; fi
}

# commit_entry DIR ENTRY [git apply args]: applies a series entry to the git work tree DIR and
# commits it with the patch's author, date and message, as git am would (for an entry in two parts
# too). With --3way, a conflict leaves the work tree for a human and returns 1 without committing.
commit_entry() {
  local dir="$1" entry="$2"
  shift 2
  apply_entry "${dir}" "${entry}" "$@" || return 1
  commit_entry_message "${dir}" "${entry}"
}

# commit_entry_message DIR ENTRY commits what is staged in DIR with ENTRY's header.
commit_entry_message() {
  local dir="$1" entry="$2" tmp info date
  tmp="$(mktemp -d)"
  info="$(git mailinfo "${tmp}/msg" "${tmp}/patch" <"$(entry_source "${entry}")")"
  git -C "${dir}" add -A
  date="$(sed -n 's/^Date: //p' <<<"${info}")"
  GIT_AUTHOR_NAME="$(sed -n 's/^Author: //p' <<<"${info}")" GIT_AUTHOR_EMAIL="$(sed -n 's/^Email: //p' <<<"${info}")" \
    GIT_AUTHOR_DATE="${date}" GIT_COMMITTER_DATE="${date}" \
    git -C "${dir}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid \
    commit -q --allow-empty -F <({ sed -n 's/^Subject: //p' <<<"${info}"; echo; cat "${tmp}/msg"; })
  rm -rf "${tmp}"
}

# copy_upstream TAG DIR copies the files of VENDORED_PKG (and the carried sub-packages) of
# k8s.io/kubernetes@TAG into the tree at DIR, at upstream's path.
copy_upstream() {
  local src
  src="$(upstream_dir "$1")/${VENDORED_PKG}" || return 1
  rm -rf "${2:?}/${VENDORED_PKG}"
  mkdir -p "$2/${VENDORED_PKG}"
  cp "${src}"/*.go "$2/${VENDORED_PKG}/"
  for sub in "${VENDORED_SUBPKGS[@]}"; do
    mkdir -p "$2/${VENDORED_PKG}/${sub}"
    cp "${src}/${sub}"/*.go "$2/${VENDORED_PKG}/${sub}/"
  done
  chmod -R u+w "$2/${VENDORED_PKG}"
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
