#!/usr/bin/env bash
# VERSION is semver with a leading v and CHANGELOG.md has its entry (hack/release/release-notes.sh);
# no manifest, recipe, doc or default names a :latest image or an image of a registry nobody
# pushed to (the shipped manifest names the placeholder REGISTRY/pv-controller-manager:VERSION).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
failed=0
version="$(tr -d '[:space:]' <VERSION)"
if [[ ! "${version}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "verify-release.sh: VERSION is ${version}, want semver with a leading v" >&2
  failed=1
fi
hack/release/release-notes.sh "${version}" >/dev/null || failed=1
# Project text outside the results of past runs; a ':latest' tag or the never-published image name.
hits="$(git grep -nE 'image: *[^ ]*:latest|docker\.io/fastpv/pv-controller-manager' -- . ':!docs/results' ':!hack/verify/verify-release.sh' ':!CHANGELOG.md' || true)"
if [[ -n "${hits}" ]]; then
  echo "verify-release.sh: an image nobody publishes, or a :latest tag, is named here (use REGISTRY/pv-controller-manager:VERSION or --image):" >&2
  echo "${hits}" >&2
  failed=1
fi
# Every deploy/ and docs/ path the install page names is in the release archives.
mapfile -t contents < <(grep -v '^#' hack/release/dist-contents.txt)
while read -r path; do
  path="${path#../}"
  [[ "${path}" == operators/* ]] && path="docs/${path}"
  covered=0
  for c in "${contents[@]}"; do
    if [[ "${path%/}" == "${c}" || "${path}" == "${c}/"* ]]; then covered=1; fi
  done
  [[ "${path}" == "deploy/" ]] && covered=1 # the directory itself
  if [[ ${covered} -eq 0 ]]; then
    echo "verify-release.sh: docs/install.md names ${path}, which the release archives leave out (hack/release/dist-contents.txt)" >&2
    failed=1
  fi
  if [[ ! -e "${path}" ]]; then
    echo "verify-release.sh: docs/install.md names ${path}, which does not exist" >&2
    failed=1
  fi
done < <(grep -o '\(\.\./\)\?deploy/[a-zA-Z0-9_./-]*\|\(\.\./\)\?docs/[a-zA-Z0-9_./-]*\|operators/[a-z-]*\.md' docs/install.md | sort -u)
[[ ${failed} -eq 0 ]] && echo "verify-release.sh: ok"
exit "${failed}"
