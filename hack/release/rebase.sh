#!/usr/bin/env bash
# Carries the patch series to a Kubernetes release: what a maintainer runs the day a new patch
# release (or a new minor) appears (docs/maintainers/patches-and-releases.md).
#
#   hack/release/rebase.sh vX.Y.Z              applies the line vX.Y's series (line_series: the
#                                              shared series, less the line's drop list, plus its own
#                                              entries; a new line starts from the shared series) to
#                                              k8s.io/kubernetes@vX.Y.Z and reports per patch:
#                                              applied / applied with offsets / applied by 3-way merge /
#                                              CONFLICTING (with the hunks). On a conflict it stops in
#                                              _output/rebase/vX.Y.Z: resolve there (git add), then
#   hack/release/rebase.sh vX.Y.Z --continue   commits the resolution and goes on.
#   --no-test                                  skips the controller's unit tests at the end.
#   hack/release/rebase.sh --report            prints the patch × release table of every carried
#                                              line (shared, offsets, adapted, own, dropped).
# When every patch is in, it writes the line back: patches/ for the default line, else only how
# the line differs (releases/vX.Y/patches/), its UPSTREAM, and its module files pinned to the
# release (go.mod, tools/, etcd/ at the release's build/dependencies.yaml etcd), then runs the
# controller's unit tests with -race on that release.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
export GOWORK=off
trap 'echo "rebase.sh: failed at line ${LINENO}: ${BASH_COMMAND}" >&2' ERR
git_in() { git -C "$1" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid "${@:2}"; }

# offsets DIR ENTRY VARIANTS: does the entry apply to DIR's work tree only with moved hunks?
# git apply places a hunk wherever its context is found; GNU patch says when that moved.
offsets() {
  local dir="$1" entry="$2" variants="$3" tmpdir p n=0
  tmpdir="$(mktemp -d)"
  (cd "${dir}" && git ls-files -z | tar --null -cf - -T -) | (cd "${tmpdir}" && tar -xf -)
  for p in "${REPO_ROOT}/patches/${entry}" "${variants}/${entry}"; do
    [[ -f "${p}" ]] || continue
    n=$((n + $(cd "${tmpdir}" && patch -p1 --dry-run -f <"${p}" 2>&1 | grep -cE 'offset|fuzz' || true)))
  done
  rm -rf "${tmpdir}"
  [[ ${n} -gt 0 ]]
}

# report: the patch × release table (docs/maintainers/patches-and-releases.md shows it).
report() {
  local lines line work entry status variants
  mapfile -t lines < <(carried_lines | sort -rV)
  declare -A cell=()
  local all=()
  for line in "${lines[@]}"; do
    work="$(mktemp -d)"
    variants="$(line_variants "${line}")"
    copy_upstream "$(line_tag "${line}")" "${work}"
    git_in "${work}" init -q && git_in "${work}" add -A && git_in "${work}" commit -qm upstream
    for entry in $(series_file_entries "${REPO_ROOT}/patches/series"); do cell["${entry}|${line}"]="dropped"; done
    for entry in $(line_series "${line}"); do
      case "$(entry_kind "${line}" "${entry}")" in
      own) status="own" ;;
      adapted) status="adapted: $(patch_files "${variants}/${entry}" | sed "s#^${VENDORED_PKG}/##" | paste -sd, -)" ;;
      *) if ! apply_entry "${work}" "${entry}" "${variants}" --check 2>/dev/null; then status="CONFLICTING"
        elif offsets "${work}" "${entry}" "${variants}"; then status="shared (offsets)"
        else status="shared"; fi ;;
      esac
      cell["${entry}|${line}"]="${status}"
      [[ "${status}" == CONFLICTING ]] && break
      commit_entry "${work}" "${entry}" "${variants}"
    done
    rm -rf "${work}"
  done
  mapfile -t all < <(for k in "${!cell[@]}"; do echo "${k%%|*}"; done | sort -u)
  printf '| patch |'; for line in "${lines[@]}"; do printf ' %s%s |' "$(line_tag "${line}")" "$([[ "${line}" == "$(default_line)" ]] && echo ' (default)')"; done; echo
  printf '|---|'; for _ in "${lines[@]}"; do printf -- '---|'; done; echo
  for entry in "${all[@]}"; do
    printf '| %s |' "${entry%.patch}"
    for line in "${lines[@]}"; do printf ' %s |' "${cell["${entry}|${line}"]:-—}"; done
    echo
  done
}

if [[ "${1:-}" == "--report" ]]; then
  report
  exit 0
fi

version="${1:?usage: hack/release/rebase.sh vX.Y.Z [--continue] [--no-test] | --report}"
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
default="$(default_line)"
rel="${RELEASES_DIR}/${line}"
variants="$(line_variants "${line}")"
# A line that names its own Go toolchain builds with it (line_toolchain); a new line that needs one
# is started with GOTOOLCHAIN set (docs/maintainers/patches-and-releases.md).
if [[ -n "$(line_toolchain "${line}")" ]]; then export GOTOOLCHAIN="$(line_toolchain "${line}")"; fi
work="${REPO_ROOT}/_output/rebase/${version}"
mapfile -t entries < <(line_series "${line}")
from_tag=""
[[ -f "${rel}/UPSTREAM" ]] && from_tag="$(line_tag "${line}")"

# previous TAG LINE BRANCH: LINE's series as it applies to TAG, on its own branch, so that a 3-way
# merge finds every blob the patches name. Best effort.
previous() {
  local entry
  git_in "${work}" checkout -q --orphan "$3"
  git_in "${work}" rm -rq --cached . >/dev/null 2>&1 || true
  rm -rf "${work:?}/pkg"
  copy_upstream "$1" "${work}"
  git_in "${work}" add -A
  git_in "${work}" commit -qm "upstream k8s.io/kubernetes $1"
  for entry in $(line_series "$2"); do
    commit_entry "${work}" "${entry}" "$(line_variants "$2")" 2>/dev/null || break
  done
}

say() { printf '  %-66s %s\n' "$1" "$2"; }

if [[ "${mode}" != "--continue" ]]; then
  rm -rf "${work}"
  mkdir -p "${work}"
  git_in "${work}" init -q
  previous "$(upstream_tag)" "${default}" previous-default
  [[ -n "${from_tag}" ]] && previous "${from_tag}" "${line}" previous-line
  git_in "${work}" checkout -q --orphan rebased
  git_in "${work}" rm -rq --cached . >/dev/null
  rm -rf "${work:?}/pkg"
  copy_upstream "${version}" "${work}"
  git_in "${work}" add -A
  git_in "${work}" commit -qm "upstream k8s.io/kubernetes ${version}"
  git_in "${work}" tag upstream
  echo "rebase.sh: ${#entries[@]} patches of ${line} onto ${version}"
  start=0
else
  [[ -f "${work}/.git/rebase-entry" ]] || { echo "rebase.sh: nothing to continue in ${work}" >&2; exit 2; }
  current="$(cat "${work}/.git/rebase-entry")"
  if git_in "${work}" diff --name-only --diff-filter=U | grep -q . || git_in "${work}" grep -qE '^(<<<<<<<|>>>>>>>) ' -- pkg; then
    echo "rebase.sh: conflicts left in ${work}: resolve them and git add the files" >&2
    exit 1
  fi
  commit_entry_message "${work}" "${current}" "${variants}"
  say "${current}" "resolved by hand"
  rm -f "${work}/.git/rebase-entry"
  start=0
  for i in "${!entries[@]}"; do [[ "${entries[$i]}" == "${current}" ]] && start=$((i + 1)); done
fi

for ((i = start; i < ${#entries[@]}; i++)); do
  entry="${entries[$i]}"
  if apply_entry "${work}" "${entry}" "${variants}" --check 2>/dev/null; then
    if offsets "${work}" "${entry}" "${variants}"; then status="applied with offsets"; else status="applied"; fi
    commit_entry "${work}" "${entry}" "${variants}"
    say "${entry}" "${status}"
    continue
  fi
  if apply_entry "${work}" "${entry}" "${variants}" --3way >/dev/null 2>&1; then
    commit_entry_message "${work}" "${entry}" "${variants}"
    say "${entry}" "applied by 3-way merge (check it)"
    continue
  fi
  say "${entry}" "CONFLICTING"
  echo "${entry}" >"${work}/.git/rebase-entry"
  echo
  echo "Conflicting hunks (${work}):"
  git_in "${work}" diff --diff-filter=U || true
  git_in "${work}" --no-pager diff | grep -n -A20 '^[+ ]*<<<<<<<' | head -200 || true
  echo
  echo "Resolve them in ${work} (upstream import paths; git add the files; a rejected hunk may need"
  echo "git apply --reject), then: hack/release/rebase.sh ${version} --continue"
  exit 1
done

# Every patch is in: write the line back.
echo "rebase.sh: all ${#entries[@]} patches on ${version}; writing ${line} back"
mkdir -p "${rel}"
export_series "${work}" "${line}"
echo "${version}" >"${rel}/UPSTREAM"

# fresh_gomod SRC_DIR DST_DIR writes DST_DIR/go.mod from SRC_DIR/go.mod without its indirect
# requirements, each direct one at the version k8s.io/kubernetes@version requires when it does (so
# tidy picks what the release was tested with).
fresh_gomod() {
  local upstream_gomod mod ver
  upstream_gomod="$(upstream_dir "${version}")/go.mod"
  mkdir -p "$2"
  grep -v '// indirect$' "$1/go.mod" >"$2/go.mod"
  : >"$2/go.sum"
  while read -r mod ver; do
    ver="$(awk -v m="${mod}" '$1 == m && $2 ~ /^v/ { print $2; exit }' "${upstream_gomod}")"
    if [[ -n "${ver}" ]]; then go mod edit -require "${mod}@${ver}" "$2/go.mod"; fi
  done < <(go mod edit -json "$2/go.mod" | python3 -c 'import json,sys; [print(r["Path"], r["Version"]) for r in json.load(sys.stdin).get("Require") or []]')
}

if [[ "${line}" == "${default}" ]]; then
  "${REPO_ROOT}/hack/release/pin-kubernetes.sh" "${version}" >/dev/null
  for m in "${K8S_MODULES[@]}"; do (cd "${REPO_ROOT}/${m}" && go mod tidy); done
  "${REPO_ROOT}/hack/release/update-vendored.sh"
  "${REPO_ROOT}/hack/release/update-integration.sh"
  test_flags=()
else
  [[ -f "${rel}/go.mod" ]] || fresh_gomod "${REPO_ROOT}" "${rel}"
  [[ -f "${rel}/tools/go.mod" ]] || fresh_gomod "${REPO_ROOT}/hack/tools" "${rel}/tools"
  [[ -f "${rel}/etcd/go.mod" ]] || fresh_gomod "${REPO_ROOT}/hack/tools/etcd" "${rel}/etcd"
  "${REPO_ROOT}/hack/release/pin-kubernetes.sh" "${version}" "${rel}/go.mod" "${rel}/tools/go.mod" >/dev/null
  etcd_version="$(grep -A3 '^  - name: "etcd"$' "$(upstream_dir "${version}")/build/dependencies.yaml" | sed -n 's/^ *version: *//p' | head -1)"
  [[ -n "${etcd_version}" ]] && go mod edit -require "go.etcd.io/etcd/server/v3@v${etcd_version}" "${rel}/etcd/go.mod"
  overlay="$("${REPO_ROOT}/hack/release/release-overlay.sh" "${version}")"
  (cd "${REPO_ROOT}" && go mod tidy -modfile="${rel}/go.mod" -overlay="${overlay}")
  # -e: a release whose tools need a module the proxy does not serve (v1.38.0-beta.0's kubelet:
  # sigs.k8s.io/iptables-wrappers) still gets the rest pinned; make verify KUBE_VERSION=... (tidy -diff)
  # reports the gap.
  (cd "${REPO_ROOT}/hack/tools" && go mod tidy -e -modfile="${rel}/tools/go.mod")
  (cd "${REPO_ROOT}/hack/tools/etcd" && go mod tidy -modfile="${rel}/etcd/go.mod")
  test_flags=(-modfile="${rel}/go.mod" -overlay="${overlay}")
fi

if [[ ${run_tests} -eq 1 ]]; then
  echo "rebase.sh: unit tests of the patched controller on ${version} (-race)"
  (cd "${REPO_ROOT}" && go test "${test_flags[@]}" -race -count=1 "./${VENDORED_PKG}/...")
fi
echo "rebase.sh: ${version} done. Review git diff, then run: make verify test test-integration e2e KUBE_VERSION=${version}"
