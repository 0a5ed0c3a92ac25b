#!/usr/bin/env bash
# Switches this control-plane node between KCM's PersistentVolume binder and pv-controller-manager
# (docs/operators/rollout.md). Run as root on each control-plane node, one node at a time.
#   deploy/rollout.sh enable  --image IMG [--wait-timeout 3m] [--kubeconfig /etc/kubernetes/admin.conf]
#                             [--manifests-dir DIR] [--backup-dir DIR] [--dry-run]
#       ours installed first; KCM's binder turned off once our pod runs IMG and is ready to bind,
#       turned back on if no binder runs then
#   deploy/rollout.sh disable [--manifests-dir DIR] [--backup-dir DIR] [--dry-run]
#       KCM's binder switched on first, then our pod removed
#   deploy/rollout.sh shadow  --image IMG [--manifests-dir DIR] [--dry-run]   (KCM untouched; docs/operators/shadow.md)
#   deploy/rollout.sh status [--canary-namespace NS]
#       which binder runs (KCM's or ours), on which node, each Lease's holder; exit 1 when none runs
#   deploy/rollout.sh uninstall [--dry-run]             on every control-plane node: disable, then
#       our identity's kubeconfig and the backup directory; then, once on any node:
#   deploy/rollout.sh uninstall --cluster [--dry-run]   our RBAC, FlowSchemas, monitoring objects, Leases
# The edit itself is Go (pkg/rollout, golden-file tested): uses $PV_ROLLOUT, else bin/pv-rollout,
# else builds it (needs Go). Copy bin/pv-rollout to nodes without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tool="${PV_ROLLOUT:-}"
if [[ -z "${tool}" ]]; then
  tool="${here}/bin/pv-rollout"
  if [[ ! -x "${tool}" ]]; then
    (cd "${here}" && CGO_ENABLED=0 go build -trimpath -o "${tool}" ./cmd/pv-rollout)
  fi
fi
case "${1:-}" in
enable | disable | shadow | status | uninstall) ;;
*)
  echo "usage: $0 enable|disable|shadow|status|uninstall [flags]  (see docs/operators/rollout.md)" >&2
  exit 2
  ;;
esac
exec "${tool}" "$@"
