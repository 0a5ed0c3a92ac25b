#!/usr/bin/env bash
# release-notes.sh VERSION: prints CHANGELOG.md's entry for VERSION (Keep a Changelog: a heading
# "## [VERSION] - YYYY-MM-DD", or "- Unreleased" while it is prepared) and fails when there is
# none, so that make dist cannot cut a release the changelog does not describe.
set -euo pipefail
version="${1:?usage: release-notes.sh VERSION}"
changelog="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/CHANGELOG.md"
[[ -f "${changelog}" ]] || { echo "release-notes.sh: ${changelog} is missing" >&2; exit 1; }
entry="$(awk -v v="${version}" '
  $0 ~ "^## \\[" { if (found) exit; if (index($0, "## [" v "]") == 1) found = 1 }
  found { print }' "${changelog}")"
if [[ -z "${entry}" ]]; then
  echo "release-notes.sh: CHANGELOG.md has no entry \"## [${version}] - ...\" (add one before a release)" >&2
  exit 1
fi
heading="$(head -1 <<<"${entry}")"
if [[ ! "${heading}" =~ ^"## [${version}] - "([0-9]{4}-[0-9]{2}-[0-9]{2}|Unreleased)$ ]]; then
  echo "release-notes.sh: CHANGELOG.md heading \"${heading}\" is not \"## [${version}] - YYYY-MM-DD\" (or \"- Unreleased\")" >&2
  exit 1
fi
printf '%s\n' "${entry}"
