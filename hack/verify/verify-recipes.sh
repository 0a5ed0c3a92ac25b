#!/usr/bin/env bash
# deploy/cluster-api/kubeadm-control-plane.yaml is what hack/cmd/capi writes from deploy/ (the static
# pod, RBAC and deploy/kubeadm's identity script), and it decodes strictly into Cluster API's
# KubeadmControlPlane v1beta2 at the version pinned in hack/cmd/capi/go.mod.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}/hack/cmd/capi"
GOWORK=off go test -count=1 .
bash -n "${REPO_ROOT}/deploy/kubeadm/pv-controller-manager-identity.sh"
echo "verify-recipes.sh: ok"
