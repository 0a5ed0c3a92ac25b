#!/usr/bin/env bash
# Run as root on each control-plane node right after `kubeadm init` or `kubeadm join --control-plane`
# (docs/install.md): applies pv-controller-manager's RBAC (idempotent) and mints its kubeconfig,
# /etc/kubernetes/pv-controller-manager.conf, for the user system:pv-controller-manager, signed by the
# cluster CA, readable by the pod's uid 65532. The static pod waits for that file and then starts.
# Run again, it renews the certificate (docs/operators/alerts.md, PVControllerManagerClientCertificateExpiring).
#   pv-controller-manager-identity.sh RBAC   RBAC: deploy/rbac (a directory) or one file of all of it
set -euo pipefail
rbac="${1:?usage: $0 RBAC (deploy/rbac or a file)}"
export KUBECONFIG="${KUBECONFIG:-/etc/kubernetes/admin.conf}"
conf=/etc/kubernetes/pv-controller-manager.conf
# The apiserver of a node that has just joined may need a moment.
for _ in $(seq 60); do kubectl get --raw /readyz >/dev/null 2>&1 && break; sleep 2; done
kubectl apply -f "${rbac}"
cluster_config="$(mktemp)"
trap 'rm -f "${cluster_config}"' EXIT
kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' >"${cluster_config}"
umask 077
kubeadm kubeconfig user --config "${cluster_config}" --client-name system:pv-controller-manager >"${conf}.new"
chown 65532:65532 "${conf}.new"
if [[ -f "${conf}" ]]; then
  # A renewal. The static pod mounts this one file, and a bind mount of a file keeps the inode it
  # was made with: a new file moved over it would stay unseen in the running container. So the new
  # kubeconfig is written into the same file. The binder reads it again every 30 s and restarts
  # with the new certificate; a read that meets the file half-written fails to parse and is retried.
  cat "${conf}.new" >"${conf}"
  chown 65532:65532 "${conf}"
  chmod 0600 "${conf}"
  rm -f "${conf}.new"
else
  mv "${conf}.new" "${conf}"
fi
echo "pv-controller-manager-identity.sh: wrote ${conf} for system:pv-controller-manager"
