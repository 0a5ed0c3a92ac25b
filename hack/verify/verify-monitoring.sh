#!/usr/bin/env bash
# deploy/monitoring is what hack/monitoring generates, its rules pass `promtool check rules`, and its
# tests (deploy/monitoring/tests) pass `promtool test rules`. promtool is built from the Prometheus
# module pinned in hack/monitoring/go.mod (without the cloud service discoveries it does not need
# here: -tags remove_all_sd); the first build takes minutes, later ones hit the Go cache.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
generated="$(mktemp -d)"
trap 'rm -rf "${generated}"' EXIT
(cd hack/monitoring && GOWORK=off go run . -out "${generated}")
if ! diff -ru deploy/monitoring --exclude tests --exclude scrape --exclude README.md "${generated}"; then
  echo "verify-monitoring.sh: deploy/monitoring is stale; run make monitoring" >&2
  exit 1
fi
mkdir -p "${TOOLS_BIN}"
(cd hack/monitoring && GOWORK=off go build -tags remove_all_sd -o "${TOOLS_BIN}/promtool" github.com/prometheus/prometheus/cmd/promtool)
"${TOOLS_BIN}/promtool" check rules deploy/monitoring/rules.yaml
"${TOOLS_BIN}/promtool" test rules deploy/monitoring/tests/*.yaml
echo "verify-monitoring.sh: ok"
