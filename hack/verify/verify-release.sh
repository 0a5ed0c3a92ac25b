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
[[ ${failed} -eq 0 ]] && echo "verify-release.sh: ok"
exit "${failed}"
