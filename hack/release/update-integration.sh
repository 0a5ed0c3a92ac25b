#!/usr/bin/env bash
# Ports upstream's PersistentVolume integration tests of a line's tag
# (test/integration/volume/{main_test.go,persistent_volumes_test.go}) into test/integration/volume/.
# The only change: the controller under test is our patched copy (import path), built with
# ConcurrentSyncs from getConcurrentSyncs() (pvcm_settings_test.go). Everything else - test names,
# assertions, KUBE_INTEGRATION_PV_* knobs - is upstream's.
#   hack/release/update-integration.sh                 the default line, into test/integration/volume
#   hack/release/update-integration.sh LINE OUT_DIR    any carried line, into OUT_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

line="${1:-$(default_line)}"
out="${2:-${REPO_ROOT}/test/integration/volume}"
integration_tests "${line}" "${out}" || { echo "update-integration.sh: failed for ${line}" >&2; exit 1; }
echo "update-integration.sh: ported $(line_tag "${line}") into ${out}"
