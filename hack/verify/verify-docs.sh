#!/usr/bin/env bash
# The Markdown docs' relative links and anchors resolve, the repository paths they write in code
# spans exist, and the project's texts (docs, Go comments, scripts, the patches' own lines) say what
# the project is and does, not how it was made: hack/cmd/docscheck, whose comment lists the rules
# and what they allow. Seconds.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}/hack/cmd/docscheck"
GOWORK=off go run . -root "${REPO_ROOT}"
echo "verify-docs.sh: ok"
