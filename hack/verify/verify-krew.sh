#!/usr/bin/env bash
# The krew manifest generator (hack/cmd/krew, run by make dist) writes what testdata expects, and
# krew's own validate-krew-manifest (at the krew version pinned in hack/cmd/krew/go.mod) accepts it:
# structure, semver, sha256s, one platform per os/arch, none overlapping. make dist validates the
# manifest of the real archives the same way.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}/hack/cmd/krew"
GOWORK=off go test -count=1 .
GOWORK=off go tool validate-krew-manifest -manifest testdata/pvc-why.yaml -skip-install 2>&1 | tail -3
echo "verify-krew.sh: ok"
