#!/usr/bin/env bash
# Fails listing the Go files that gofmt would change.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
bad="$(git ls-files -co --exclude-standard '*.go' | xargs gofmt -l)"
if [[ -n "${bad}" ]]; then
  echo "verify-gofmt.sh: run gofmt -w on:" >&2
  echo "${bad}" >&2
  exit 1
fi
echo "verify-gofmt.sh: ok"
