#!/usr/bin/env bash
# make verify KUBE_VERSION=VERSION for a non-default carried release: the line's series applies to
# its tag (release-overlay.sh), the generated files are gofmt-clean, go vet passes on that
# release's build of the binder's packages (VET_ALL=1: every package), and the line's go.mod files are pinned to the release and tidy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

version="${1:-${KUBE_VERSION}}"
line="$(line_of "${version}")" || exit 2
rel="${RELEASES_DIR}/${line}"
overlay="$("${REPO_ROOT}/hack/release/release-overlay.sh" "${version}")"
failed=0

unformatted="$(gofmt -l "${REPO_ROOT}/_output/releases/${version}/gen" "${rel}/src" 2>/dev/null || true)"
[[ -z "${unformatted}" ]] || { echo "release-line.sh: not gofmt-clean: ${unformatted}" >&2; failed=1; }

# The binder's packages and the model torture; the integration and e2e packages (the apiserver's test
# framework: most of a cold build) are vetted at release time, VET_ALL=1 (docs/maintainers/
# patches-and-releases.md, "Release-time checks").
vet_packages=(./pkg/... ./cmd/... ./deploy/... ./test/torture/...)
[[ "${VET_ALL:-0}" == 1 ]] && vet_packages=(./...)
(cd "${REPO_ROOT}" && go vet -modfile="${rel}/go.mod" -overlay="${overlay}" "${vet_packages[@]}") || { echo "release-line.sh: go vet failed on ${version}" >&2; failed=1; }

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
cp "${rel}/go.mod" "${tmp}/root.mod" && cp "${rel}/tools/go.mod" "${tmp}/tools.mod"
"${REPO_ROOT}/hack/release/pin-kubernetes.sh" "${version}" "${tmp}/root.mod" "${tmp}/tools.mod" >/dev/null
for pair in "root.mod:go.mod" "tools.mod:tools/go.mod"; do
  if ! diff -u "${rel}/${pair#*:}" "${tmp}/${pair%%:*}"; then
    echo "release-line.sh: releases/${line}/${pair#*:} is not pinned to ${version} (hack/release/rebase.sh ${version})" >&2
    failed=1
  fi
done
(cd "${REPO_ROOT}" && go mod tidy -diff -modfile="${rel}/go.mod" -overlay="${overlay}") || { echo "release-line.sh: releases/${line}/go.mod is not tidy" >&2; failed=1; }
# A module the proxy does not serve (releases/<line>/tools/UNSERVED, one per line) leaves the tools'
# go.mod tidied with -e: it must then differ from tidy -e in nothing, and every module tidy could not
# fetch must be listed (the tool that imports it cannot be built for that line). Once the proxy serves
# it, tidy -e adds its sums and this fails: tidy the file and drop the entry.
unserved_file="${rel}/tools/UNSERVED"
if [[ -f "${unserved_file}" ]]; then
  mapfile -t unserved < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "${unserved_file}")
  if tidy_err="$(cd "${REPO_ROOT}/hack/tools" && go mod tidy -e -diff -modfile="${rel}/tools/go.mod" 2>&1 >/dev/null)"; then
    missing="$(grep -o 'reading https://[^ ]*/@v/' <<<"${tidy_err}" | sed -e 's#reading https://[^/]*/##' -e 's#/@v/$##' | sort -u)"
    for m in ${missing}; do
      printf '%s\n' "${unserved[@]}" | grep -qxF "${m}" || { echo "release-line.sh: releases/${line}/tools/go.mod: ${m} cannot be fetched and is not in ${unserved_file#"${REPO_ROOT}/"}" >&2; failed=1; }
    done
    echo "release-line.sh: releases/${line}/tools/go.mod tidy except the modules the proxy does not serve: ${unserved[*]}"
  else
    echo "release-line.sh: releases/${line}/tools/go.mod is not tidy even without ${unserved[*]} (served now? tidy it and empty ${unserved_file#"${REPO_ROOT}/"})" >&2
    failed=1
  fi
else
  (cd "${REPO_ROOT}/hack/tools" && go mod tidy -diff -modfile="${rel}/tools/go.mod") || { echo "release-line.sh: releases/${line}/tools/go.mod is not tidy" >&2; failed=1; }
fi
(cd "${REPO_ROOT}/hack/tools/etcd" && go mod tidy -diff -modfile="${rel}/etcd/go.mod") || { echo "release-line.sh: releases/${line}/etcd/go.mod is not tidy" >&2; failed=1; }
[[ ${failed} -eq 0 ]] && echo "release-line.sh: ${version} ok"
exit "${failed}"
