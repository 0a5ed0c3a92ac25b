#!/usr/bin/env bash
# Builds kind's node image offline, from Debian packages and Go modules only, into the local Docker
# Engine: no registry is needed or contacted. Prints the image name. Cached: the image is tagged
# with a hash of every input (this script, hack/e2e/kind/*, the kind, Kubernetes, etcd and cri-tools
# pins, the Debian package list) and rebuilt only when one changes.
#
#   base rootfs  debootstrap (Debian ${SUITE}, minbase) + kind's package list, with Debian's
#                containerd, runc and CNI plugins in place of kind's GitHub builds; kind's own
#                base files (entrypoint, systemd units, containerd config) from the
#                sigs.k8s.io/kind module; runc-dropcap as "runc" (drops only capabilities the
#                machine lacks); a static bridge CNI config (no kindnetd image offline)
#   binaries     kubeadm, kubelet, kubectl (hack/cluster/build-tools.sh, our k8s.io/kubernetes pin),
#                crictl (sigs.k8s.io/cri-tools)
#   images       pre-loaded into the node's containerd (k8s.io namespace, not unpacked, as kind's
#                builder does): kube-apiserver, kube-controller-manager, kube-scheduler, etcd (our
#                pins, tagged as kubeadm names them), pause (built from the release's pause.c),
#                busybox (Debian's busybox-static) for test pods
# kube-proxy and CoreDNS are not built: clusters from this image run with kubeProxyMode none, and
# the binder and its tests need neither (hack/e2e/kind/cluster.yaml).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

SUITE="${KIND_DEBIAN_SUITE:-bookworm}"
MIRROR="${KIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES="systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,containerd,runc,containernetworking-plugins"
WORK="${REPO_ROOT}/_output/kind"
export GOWORK=off CGO_ENABLED=0

log() { echo "kind-node-image: $*" >&2; }

hack/cluster/build-tools.sh kubeadm kubelet kubectl etcd kube-apiserver kube-controller-manager kube-scheduler >&2
k8s_version="$(cd hack/tools && go list $(module_flags hack/tools) -m -f '{{.Version}}' k8s.io/kubernetes)"
etcd_version="$(cd hack/tools/etcd && go list $(module_flags hack/tools/etcd) -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
kind_dir="$(cd hack/tools && go mod download -json "sigs.k8s.io/kind@${KIND_VERSION}" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
k8s_dir="$(cd hack/tools && go list $(module_flags hack/tools) -m -f '{{.Dir}}' k8s.io/kubernetes)"

key="$( {
  cat "${BASH_SOURCE[0]}" hack/e2e/kind/* hack/cmd/runc-dropcap/*.go hack/cmd/kind-lb/*.go hack/cmd/image/*.go
  echo "${SUITE} ${MIRROR} ${PACKAGES} ${CRI_TOOLS_VERSION} ${KIND_VERSION} ${k8s_version} ${etcd_version}"
} | sha256sum | cut -c1-12)"
IMAGE="${KIND_NODE_IMAGE_NAME:-pv-controller-manager.local/kind-node}:${k8s_version}-${key}"
mkimage() { (cd hack/cmd/image && go run . "$@" >/dev/null); }

# The load balancer of a multi-control-plane cluster: kind runs the Envoy image its source names;
# offline, that name gets hack/cmd/kind-lb (Envoy's file-based config, TCP proxy) + busybox.
lb_image="$(sed -n 's/^const Image = "\(.*\)"/\1/p' "${kind_dir}/pkg/cluster/internal/loadbalancer/const.go")"
if [[ "$(docker image inspect -f '{{ index .Config.Labels "org.opencontainers.image.revision" }}' "${lb_image}" 2>/dev/null)" != "${key}" ]]; then
  mkdir -p "${WORK}"
  (cd hack/cmd/kind-lb && go build -trimpath -ldflags '-s -w' -o "${WORK}/kind-lb" .)
  busybox="$(busybox_static)"
  links=()
  for a in sh cp mv mkdir chmod cat echo sleep ls rm true; do links+=(--symlink "bin/${a}=/bin/busybox"); done
  mkimage --file "${WORK}/kind-lb=/usr/local/bin/envoy" --file "${busybox}=/bin/busybox" --symlink bin/bash=/usr/local/bin/envoy \
    "${links[@]}" --entrypoint "" --user 0:0 --title kind-lb --revision "${key}" --tag "${lb_image}" --out "${WORK}/kind-lb.tar"
  docker load -i "${WORK}/kind-lb.tar" >/dev/null
  log "load balancer image ${lb_image} (kind-lb) loaded"
fi

if docker image inspect "${IMAGE}" >/dev/null 2>&1; then
  log "${IMAGE} is up to date"
  echo "${IMAGE}"
  exit 0
fi
start=${SECONDS}
mkdir -p "${WORK}"

# 1. Base rootfs, cached on its own (debootstrap is most of a cold build).
base_key="$(echo "${SUITE} ${MIRROR} ${PACKAGES}" | sha256sum | cut -c1-12)"
base="${WORK}/rootfs-base-${base_key}.tar"
if [[ ! -f "${base}" ]]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  log "debootstrap ${SUITE} (${PACKAGES})"
  rm -rf "${WORK}/debootstrap"
  debootstrap --variant=minbase --include="${PACKAGES}" "${SUITE}" "${WORK}/debootstrap" "${MIRROR}" >"${WORK}/debootstrap.log" 2>&1 ||
    { tail -20 "${WORK}/debootstrap.log" >&2; exit 1; }
  rm -rf "${WORK}/debootstrap/var/cache/apt/archives/"*.deb "${WORK}/debootstrap/var/lib/apt/lists/"*
  tar -C "${WORK}/debootstrap" -cf "${base}.tmp" . && mv "${base}.tmp" "${base}"
  rm -rf "${WORK}/debootstrap"
  log "base rootfs done in $((SECONDS - start))s"
fi

# 2. The node's rootfs: base + kind's files + our binaries.
root="${WORK}/rootfs"
rm -rf "${root}" && mkdir -p "${root}"
tar -C "${root}" -xf "${base}"
files="${kind_dir}/images/base/files"
install -m 0755 "${files}"/usr/local/bin/* "${root}/usr/local/bin/"
mkdir -p "${root}/kind/bin" "${root}/kind/manifests" "${root}/etc/containerd" "${root}/etc/systemd/system/kubelet.service.d" \
  "${root}/etc/systemd/system/containerd.service.d" "${root}/etc/kubernetes/manifests" "${root}/etc/cni/net.d" "${root}/opt/cni"
cp -r "${files}/kind/." "${root}/kind/" && chmod 0755 "${root}"/kind/bin/*
install -m 0644 "${files}/etc/crictl.yaml" "${root}/etc/"
install -m 0644 "${files}"/etc/containerd/* "${root}/etc/containerd/"
install -m 0644 "${files}"/etc/default/* "${root}/etc/default/"
install -m 0644 "${files}"/etc/sysctl.d/* "${root}/etc/sysctl.d/"
find "${files}/etc/systemd/system" -maxdepth 1 -type f -exec install -m 0644 {} "${root}/etc/systemd/system/" \;
install -m 0644 "${files}"/etc/systemd/system/kubelet.service.d/* "${root}/etc/systemd/system/kubelet.service.d/"
install -m 0644 hack/e2e/kind/containerd-caps.conf "${root}/etc/systemd/system/containerd.service.d/"
install -m 0644 hack/e2e/kind/10-bridge.conflist "${root}/etc/cni/net.d/"
install -m 0644 hack/e2e/kind/default-storage.yaml "${root}/kind/manifests/"
ln -sfn /usr/lib/cni "${root}/opt/cni/bin"
# kind's units start containerd from /usr/local/bin; Debian installs it in /usr/bin.
ln -sf /usr/bin/containerd "${root}/usr/local/bin/containerd"
(cd hack/cmd/runc-dropcap && go build -trimpath -o "${root}/usr/local/sbin/runc" .)
for b in kubeadm kubelet kubectl; do install -m 0755 "${TOOLS_BIN}/${b}" "${root}/usr/bin/${b}"; done
GOBIN="${WORK}/bin" go install -trimpath -ldflags '-s -w' "sigs.k8s.io/cri-tools/cmd/crictl@${CRI_TOOLS_VERSION}"
install -m 0755 "${WORK}/bin/crictl" "${root}/usr/local/bin/crictl"
echo "${k8s_version}" >"${root}/kind/version"
# The rest of kind's Dockerfile, in a chroot (systemctl enable and friends need no running systemd).
chroot "${root}" /bin/sh -euc '
  find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
  rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
    /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
    /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>/etc/systemd/journald.conf
  ln -sf /usr/lib/systemd/systemd /sbin/init
  systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
  systemctl mask systemd-binfmt.service >/dev/null 2>&1
  ctr oci spec | jq ".hooks.createContainer[.hooks.createContainer| length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}" |
    jq "del(.process.rlimits)" >/etc/containerd/cri-base.json
'

# 3. Images, imported into the rootfs's containerd store by a throwaway containerd on this host
#    (Debian's, the same version the node runs).
imgs="${WORK}/images"
rm -rf "${imgs}" && mkdir -p "${imgs}"
want() { "${TOOLS_BIN}/kubeadm" config images list --kubernetes-version "${k8s_version}" 2>/dev/null | grep "/$1:"; }
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  mkimage --file "${TOOLS_BIN}/${c}=/usr/local/bin/${c}" --entrypoint "/usr/local/bin/${c}" --user 0:0 --title "${c}" \
    --version "${k8s_version}" --tag "$(want "${c}")" --out "${imgs}/${c}.tar"
done
# kubeadm names the etcd its release recommends; ours is the pin our tests use, so it gets its own
# tag and the cluster config sets etcd.local.imageTag from the image's label (hack/e2e/e2e-kind.sh).
etcd_tag="${etcd_version#v}-0"
etcd_image="$(want etcd | cut -d: -f1):${etcd_tag}"
mkimage --file "${TOOLS_BIN}/etcd=/usr/local/bin/etcd" --entrypoint /usr/local/bin/etcd --user 0:0 --title etcd \
  --version "${etcd_version}" --tag "${etcd_image}" --out "${imgs}/etcd.tar"
command -v gcc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null
gcc -Os -static -o "${WORK}/pause" "${k8s_dir}/build/pause/linux/pause.c"
# containerd's sandbox_image (kind's config.toml) and kubeadm's pause may differ; tag both.
sandbox="$(sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p' "${root}/etc/containerd/config.toml")"
for tag in "${sandbox}" "$(want pause)"; do
  mkimage --file "${WORK}/pause=/pause" --entrypoint /pause --user 65535:65535 --title pause --tag "${tag}" \
    --out "${imgs}/pause-${tag##*:}.tar"
done
busybox="$(busybox_static)"
mkimage --file "${busybox}=/bin/busybox" --symlink bin/sh=/bin/busybox --entrypoint /bin/sh --user 0:0 \
  --title busybox --tag "${KIND_TEST_IMAGE:-pv-controller-manager.local/busybox:e2e}" --out "${imgs}/busybox.tar"

ctrd="${WORK}/containerd-import"
rm -rf "${ctrd}" && mkdir -p "${ctrd}"
cat >"${ctrd}/config.toml" <<TOML
version = 2
root = "${root}/var/lib/containerd"
state = "${ctrd}/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "${ctrd}/sock"
TOML
containerd --config "${ctrd}/config.toml" >"${ctrd}/log" 2>&1 &
ctrd_pid=$!
trap 'kill ${ctrd_pid} 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do ctr -a "${ctrd}/sock" version >/dev/null 2>&1 && break; sleep 0.1; done
for tar in "${imgs}"/*.tar; do
  ctr -a "${ctrd}/sock" -n k8s.io images import --label=io.cri-containerd.pinned=pinned --no-unpack "${tar}" >/dev/null
done
ctr -a "${ctrd}/sock" -n k8s.io images list -q | sed 's/^/kind-node-image: preloaded /' >&2
kill "${ctrd_pid}" && wait "${ctrd_pid}" 2>/dev/null || true
trap - EXIT

# 4. Into the engine, as kind's Dockerfile ends.
# (docker import takes no STOPSIGNAL; a one-line build from the local image adds it, no pull.)
tar -C "${root}" -c . | docker import --change 'ENV container=docker' \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "${IMAGE}-rootfs" >/dev/null
printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\nLABEL io.github.fastpv.etcd-image-tag=%s\n' "${IMAGE}-rootfs" "${etcd_tag}" |
  DOCKER_BUILDKIT=0 docker build -q -t "${IMAGE}" - >/dev/null 2>&1
docker rmi "${IMAGE}-rootfs" >/dev/null
rm -rf "${root}"
log "built ${IMAGE} in $((SECONDS - start))s"
echo "${IMAGE}"
