#!/usr/bin/env bash
# go vet over every module of the workspace.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
go vet ./...
echo "verify-govet.sh: ok"
