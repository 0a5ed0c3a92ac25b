#!/usr/bin/env bash
# Carries the patch series to a Kubernetes release: what a maintainer runs the day a new patch
# release (or a new minor) appears. docs/releases.md explains the layout.
#
#   hack/rebase.sh vX.Y.Z              applies the series of the line vX.Y (or, for a new line, the
#                                      default release's series) to k8s.io/kubernetes@vX.Y.Z and reports
#                                      per patch: applied / applied with offsets / applied by 3-way
#                                      merge / conflicting (with the conflicting hunks). On a conflict it
#                                      stops in _output/rebase/vX.Y.Z: resolve there (git add), then
#   hack/rebase.sh vX.Y.Z --continue   commits the resolution and goes on.
#   --no-test                          skips the unit tests at the end (hack/verify-rebase.sh).
# When every patch is in: writes the series back (patches/ for the default line, else
# releases/vX.Y/: UPSTREAM, series, only the patches that had to change), pins go.mod for the
# binary, the tools and etcd (the release's build/dependencies.yaml pin), regenerates the
# release's tree and runs the controller's unit tests there with -race.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export GOWORK=off
trap 'echo "rebase.sh: failed at line ${LINENO}: ${BASH_COMMAND}" >&2' ERR

version="${1:?usage: hack/rebase.sh vX.Y.Z [--continue] [--no-test]}"
mode="" run_tests=1
for arg in "${@:2}"; do
  case "${arg}" in
  --continue) mode="--continue" ;;
  --no-test) run_tests=0 ;;
  *) echo "rebase.sh: unknown argument ${arg}" >&2; exit 2 ;;
  esac
done
[[ "${version}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] || { echo "rebase.sh: not a Kubernetes tag: ${version}" >&2; exit 2; }
line="$(release_line "${version}")"
default_line="$(release_line "$(upstream_tag)")"
work="${REPO_ROOT}/_output/rebase/${version}"
git_work() { git -C "${work}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid "$@"; }

# Where the line's series and adapted patches come from now. A new line starts from the default
# release's series, or from releases/<line>/series if a maintainer wrote one first (for example
# to put a backport of an upstream change in front of it).
from_tag=""
if [[ "${line}" == "${default_line}" ]]; then
  from_series="${REPO_ROOT}/patches/series"
  from_tag="$(upstream_tag)"
  export VARIANTS_DIR="${REPO_ROOT}/patches/none" # the default line has no adapted patches
elif [[ -f "${RELEASES_DIR}/${line}/series" ]]; then
  from_series="${RELEASES_DIR}/${line}/series"
  [[ -f "${RELEASES_DIR}/${line}/UPSTREAM" ]] && from_tag="$(tr -d '[:space:]' <"${RELEASES_DIR}/${line}/UPSTREAM")"
  export VARIANTS_DIR="${RELEASES_DIR}/${line}/patches"
else
  from_series="${REPO_ROOT}/patches/series"
  export VARIANTS_DIR="${REPO_ROOT}/patches/none"
fi
mapfile -t entries < <(series_entries "${from_series}")

# previous TAG SERIES BRANCH: the series as it applies to TAG, on its own branch, so that a 3-way
# merge finds every blob the patches name. Best effort.
previous() {
  git_work checkout -q --orphan "$3"
  git_work rm -rq --cached . >/dev/null 2>&1 || true
  rm -rf "${work:?}/pkg"
  copy_upstream "$1" "${work}"
  git_work add -A
  git_work commit -qm "upstream k8s.io/kubernetes $1"
  local entry
  for entry in $(series_entries "$2"); do
    commit_entry "${work}" "${entry}" 2>/dev/null || break
  done
}

# fresh_gomod SRC DST writes DST/go.mod from SRC/go.mod without its indirect requirements, each
# direct one at the version k8s.io/kubernetes@version requires when it requires that module.
fresh_gomod() {
  local upstream_gomod mod ver
  upstream_gomod="$(upstream_dir "${version}")/go.mod"
  mkdir -p "$2"
  grep -v '// indirect$' "$1/go.mod" >"$2/go.mod"
  : >"$2/go.sum"
  while read -r mod ver; do
    ver="$(awk -v m="${mod}" '$1 == m && $2 ~ /^v/ { print $2; exit }' "${upstream_gomod}")"
    if [[ -n "${ver}" ]]; then (cd "$2" && go mod edit -require "${mod}@${ver}"); fi
  done < <(cd "$2" && go mod edit -json | python3 -c 'import json,sys; [print(r["Path"], r["Version"]) for r in json.load(sys.stdin).get("Require") or []]')
}

report() { printf '  %-66s %s\n' "$1" "$2"; }

if [[ "${mode}" != "--continue" ]]; then
  rm -rf "${work}"
  mkdir -p "${work}"
  git_work init -q
  VARIANTS_DIR="${REPO_ROOT}/patches/none" previous "$(upstream_tag)" "${REPO_ROOT}/patches/series" previous-default
  [[ -n "${from_tag}" ]] && previous "${from_tag}" "${from_series}" previous-line
  git_work checkout -q --orphan rebased
  git_work rm -rq --cached . >/dev/null
  rm -rf "${work:?}/pkg"
  copy_upstream "${version}" "${work}"
  git_work add -A
  git_work commit -qm "upstream k8s.io/kubernetes ${version}"
  git_work tag upstream
  echo "rebase.sh: ${#entries[@]} patches of ${line} (${from_series#"${REPO_ROOT}"/}) onto ${version}"
  start=0
else
  [[ -f "${work}/.git/rebase-entry" ]] || { echo "rebase.sh: nothing to continue in ${work}" >&2; exit 2; }
  current="$(cat "${work}/.git/rebase-entry")"
  if git_work diff --name-only --diff-filter=U | grep -q . || git_work grep -qE '^(<<<<<<<|>>>>>>>) ' -- pkg; then
    echo "rebase.sh: conflicts left in ${work}: resolve them and git add the files" >&2
    exit 1
  fi
  commit_entry_message "${work}" "${current}"
  report "${current}" "resolved by hand"
  rm -f "${work}/.git/rebase-entry"
  start=0
  for i in "${!entries[@]}"; do [[ "${entries[$i]}" == "${current}" ]] && start=$((i + 1)); done
fi

for ((i = start; i < ${#entries[@]}; i++)); do
  entry="${entries[$i]}"
  if apply_entry "${work}" "${entry}" --check 2>/dev/null; then
    # git apply places a hunk wherever its context is found; GNU patch says when that moved.
    offsets=""
    tmpdir="$(mktemp -d)"
    (cd "${work}" && git ls-files -z | tar --null -cf - -T -) | (cd "${tmpdir}" && tar -xf -)
    for p in "${REPO_ROOT}/patches/${entry}" "${VARIANTS_DIR}/${entry}"; do
      [[ -f "${p}" ]] || continue
      offsets+="$(cd "${tmpdir}" && patch -p1 --dry-run -f <"${p}" 2>&1 | grep -cE 'offset|fuzz' || true)"
    done
    rm -rf "${tmpdir}"
    commit_entry "${work}" "${entry}"
    if [[ "${offsets//0/}" == "" ]]; then report "${entry}" "applied"; else report "${entry}" "applied with offsets"; fi
    continue
  fi
  if apply_entry "${work}" "${entry}" --3way >/dev/null 2>&1; then
    commit_entry_message "${work}" "${entry}"
    report "${entry}" "applied by 3-way merge (check it)"
    continue
  fi
  report "${entry}" "CONFLICTING"
  echo "${entry}" >"${work}/.git/rebase-entry"
  echo
  echo "Conflicting hunks (${work}):"
  git_work diff --diff-filter=U || true
  git_work --no-pager diff | grep -n -A20 '^[+ ]*<<<<<<<' | head -200 || true
  echo
  echo "Resolve them in ${work} (upstream import paths; git add the files; a rejected hunk may need"
  echo "git apply --reject), then: hack/rebase.sh ${version} --continue"
  exit 1
done

# Every patch is in: write the series back.
echo "rebase.sh: all ${#entries[@]} patches on ${version}; writing the series back"
if [[ "${line}" == "${default_line}" ]]; then
  PATCH_WORK="${work}" "${REPO_ROOT}/hack/patch-workspace.sh" export >/dev/null
  tree="${REPO_ROOT}"
  echo "${version}" >"${REPO_ROOT}/patches/UPSTREAM"
else
  rel="${RELEASES_DIR}/${line}"
  mkdir -p "${rel}/patches" "${rel}/tools" "${rel}/etcd"
  # Export in a scratch copy of the repository's patches, so only the line's files change.
  scratch="$(mktemp -d)"
  mkdir -p "${scratch}/hack" "${scratch}/patches/release"
  cp "${REPO_ROOT}"/hack/*.sh "${scratch}/hack/"
  cp "${REPO_ROOT}"/patches/[0-9]*.patch "${scratch}/patches/"
  echo "${version}" >"${scratch}/patches/UPSTREAM"
  PATCH_WORK="${work}" NO_REGENERATE=1 "${scratch}/hack/patch-workspace.sh" export
  rm -f "${rel}"/patches/*.patch
  cp "${scratch}"/patches/release/*.patch "${rel}/patches/" 2>/dev/null || true
  cp "${scratch}/patches/series" "${rel}/series"
  echo "${version}" >"${rel}/UPSTREAM"
  rm -rf "${scratch}"
  # go.mod for the line: the current one, or for a new line the default's direct requirements
  # only, at the versions the release's own go.mod requires (so tidy picks what it was tested with).
  [[ -f "${rel}/go.mod" ]] || fresh_gomod "${REPO_ROOT}" "${rel}"
  [[ -f "${rel}/tools/go.mod" ]] || fresh_gomod "${REPO_ROOT}/hack/tools" "${rel}/tools"
  [[ -f "${rel}/etcd/go.mod" ]] || fresh_gomod "${REPO_ROOT}/hack/tools/etcd" "${rel}/etcd"
  tree="$("${REPO_ROOT}/hack/release-tree.sh" "${version}")"
fi

# Pin the modules to the release (its etcd too), tidy, and keep the result.
(cd "${tree}" && hack/pin-kubernetes.sh "${version}" >/dev/null)
etcd_version="$(grep -A3 '^  - name: "etcd"$' "$(upstream_dir "${version}")/build/dependencies.yaml" | sed -n 's/^ *version: *//p' | head -1)"
if [[ "${line}" != "${default_line}" && -n "${etcd_version}" ]]; then
  (cd "${tree}/hack/tools/etcd" && go mod edit -require "go.etcd.io/etcd/server/v3@v${etcd_version}")
fi
for m in . hack/tools hack/tools/etcd; do
  (cd "${tree}/${m}" && go mod tidy)
done
if [[ "${line}" != "${default_line}" ]]; then
  cp "${tree}/go.mod" "${tree}/go.sum" "${rel}/"
  cp "${tree}/hack/tools/go.mod" "${tree}/hack/tools/go.sum" "${rel}/tools/"
  cp "${tree}/hack/tools/etcd/go.mod" "${tree}/hack/tools/etcd/go.sum" "${rel}/etcd/"
else
  "${REPO_ROOT}/hack/update-vendored.sh"
  "${REPO_ROOT}/hack/update-integration.sh"
fi

if [[ ${run_tests} -eq 1 ]]; then
  echo "rebase.sh: unit tests of the patched controller on ${version} (-race)"
  (cd "${tree}" && go test -race -count=1 "./${VENDORED_PKG}/...")
fi
echo "rebase.sh: ${version} done. Review git diff, then run: make verify test test-integration e2e KUBE_VERSION=${version}"
