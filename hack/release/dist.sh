#!/usr/bin/env bash
# make dist: a release of pv-controller-manager, built offline into _output/dist/<VERSION>/
# (docs/install.md, "Release archives"). For every carried Kubernetes release R and arch A of linux
# amd64/arm64 (the binder runs on control-plane nodes, which are Linux):
#   pv-controller-manager_<VERSION>_k8s<R>_linux_<A>.tar.gz   bin/ (binder, kubectl-pvc_why, pv-rollout),
#                                                             deploy/ (static pod, RBAC, rollout.sh, monitoring), LICENSE
#   pv-controller-manager_<VERSION>_k8s<R>.oci.tar            the image for both archs, an OCI layout named
#                                                             IMAGE_REPO:<VERSION>-k8s<R> (ctr images import, docker load)
# and, from the default release (the plugin explains claims with that release's binder code), for
# linux and darwin, amd64 and arm64:
#   kubectl-pvc_why_<VERSION>_<os>_<arch>.tar.gz              kubectl-pvc_why, LICENSE (what krew installs)
# then SHA256SUMS over all of them and pvc-why.yaml, the krew Plugin manifest made from those sums
# (hack/cmd/krew) and checked by krew's validate-krew-manifest; then krew itself installs each
# plugin archive with that manifest (offline, --archive), and, as root, the default release's image is
# imported into a private containerd and run (hack/e2e/check-image.sh; DIST_CHECK_IMAGE=0 skips it).
# Reproducible: binaries are built with -trimpath and stamped only with VERSION and the commit;
# archives and images have sorted entries, owner 0 and time 0, so the same commit gives the same sums.
#   VERSION (semver with a leading v), RELEASES, UPSTREAM, IMAGE_REPO: given by the Makefile
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"
: "${VERSION:?}" "${RELEASES:?}" "${UPSTREAM:?}" "${IMAGE_REPO:?}"
if [[ ! "${VERSION}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "dist.sh: VERSION must be semver with a leading v (krew requires it), got ${VERSION}" >&2
  exit 2
fi
# One commit for the whole release: each build's own `git rev-parse` would stamp a later commit if
# HEAD moved while it ran (2026-12-02: the 1.35 archives said d2e0029, the 1.37 ones cae8237).
COMMIT="$(git rev-parse --short HEAD)"
out="${REPO_ROOT}/_output/dist/${VERSION}"
stage="${REPO_ROOT}/_output/dist/stage"
rm -rf "${out}" "${stage}"
mkdir -p "${out}" "${stage}"
start=${SECONDS}
say() { echo "dist: [$((SECONDS - start))s] $*"; }

# tgz NAME DIR PATH...: DIR's PATHs into out/NAME, deterministically.
tgz() {
  local name="$1" dir="$2"
  shift 2
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' -C "${dir}" -cf - "$@" | gzip -9n >"${out}/${name}"
}

for release in ${RELEASES}; do
  for arch in amd64 arm64; do
    name="pv-controller-manager_${VERSION}_k8s${release#v}_linux_${arch}"
    root="${stage}/${name}"
    say "${name}: building"
    GOOS=linux GOARCH="${arch}" make --no-print-directory build rollout-tool KUBE_VERSION="${release}" VERSION="${VERSION}" COMMIT="${COMMIT}" \
      BIN_DIR="${root}/bin" >/dev/null
    # hack/release/dist-contents.txt, then the line's own deploy/ files over them (v1.35's RBAC).
    while read -r path; do
      mkdir -p "${root}/$(dirname "${path}")"
      cp -r "${path}" "${root}/${path}"
    done < <(grep -v '^#' hack/release/dist-contents.txt)
    line="$(KUBE_VERSION="${release}" bash -c 'source hack/lib.sh && echo "${RELEASE_LINE}"')"
    if [[ -d "releases/${line}/src/deploy" ]]; then cp -r "releases/${line}/src/deploy/." "${root}/deploy/"; fi
    tgz "${name}.tar.gz" "${stage}" "${name}"
  done
  image="pv-controller-manager_${VERSION}_k8s${release#v}.oci.tar"
  say "${image}"
  (cd hack/cmd/image && GOWORK=off CGO_ENABLED=0 GOFLAGS= go run . --format oci --arch amd64,arm64 \
    --tag "${IMAGE_REPO}:${VERSION}-k8s${release#v}" \
    --file "${stage}/pv-controller-manager_${VERSION}_k8s${release#v}_linux_{arch}/bin/pv-controller-manager=usr/local/bin/pv-controller-manager" \
    --file "${stage}/pv-controller-manager_${VERSION}_k8s${release#v}_linux_{arch}/bin/kubectl-pvc_why=usr/local/bin/kubectl-pvc_why" \
    --out "${out}/${image}" --version "${VERSION}" --revision "${COMMIT}" >/dev/null)
done

for os in linux darwin; do
  for arch in amd64 arm64; do
    name="kubectl-pvc_why_${VERSION}_${os}_${arch}"
    say "${name}"
    GOOS="${os}" GOARCH="${arch}" make --no-print-directory plugin KUBE_VERSION="${UPSTREAM}" VERSION="${VERSION}" COMMIT="${COMMIT}" \
      BIN_DIR="${stage}/${name}" >/dev/null
    cp LICENSE "${stage}/${name}/"
    tgz "${name}.tar.gz" "${stage}/${name}" kubectl-pvc_why LICENSE
  done
done

(cd "${out}" && sha256sum -- *.tar.gz *.oci.tar >SHA256SUMS)
say "krew manifest"
(cd hack/cmd/krew && GOWORK=off go run . --sums "${out}/SHA256SUMS" --version "${VERSION}" --out "${out}/pvc-why.yaml" &&
  GOWORK=off go tool validate-krew-manifest -manifest "${out}/pvc-why.yaml" -skip-install 2>&1 | tail -1)

# What krew will extract, and what each binary is.
for f in "${out}"/kubectl-pvc_why_*.tar.gz; do
  listing="$(tar -tzf "${f}" | sort | tr '\n' ' ')"
  [[ "${listing}" == "LICENSE kubectl-pvc_why " ]] || { echo "dist.sh: ${f} holds ${listing}" >&2; exit 1; }
done
# Installed by krew's own binary from the manifest and each archive, offline, as a user would; the
# host's copy must run.
say "krew install --manifest --archive, each platform"
krew_root="${stage}/krew"
for os in linux darwin; do
  for arch in amd64 arm64; do
    KREW_ROOT="${krew_root}/${os}_${arch}" KREW_OS="${os}" KREW_ARCH="${arch}" GOWORK=off go -C hack/cmd/krew tool krew \
      install --manifest "${out}/pvc-why.yaml" --archive "${out}/kubectl-pvc_why_${VERSION}_${os}_${arch}.tar.gz" >/dev/null 2>&1 ||
      { echo "dist.sh: krew could not install the ${os}/${arch} plugin" >&2; exit 1; }
  done
done
"${krew_root}/$(go env GOOS)_$(go env GOARCH)/bin/kubectl-pvc_why" --version

# The default release's image in a real containerd (root): imported from the OCI tar, run as its user.
if [[ "${DIST_CHECK_IMAGE:-$([[ ${EUID} -eq 0 ]] && echo 1 || echo 0)}" == "1" ]]; then
  say "the ${UPSTREAM} image in containerd (hack/e2e/check-image.sh)"
  IMAGE="${IMAGE_REPO}:${VERSION}-k8s${UPSTREAM#v}" IMAGE_TAR="${out}/pv-controller-manager_${VERSION}_k8s${UPSTREAM#v}.oci.tar" \
    WANT_VERSION="${VERSION}" hack/e2e/check-image.sh
fi
rm -rf "${stage}"
say "done: ${out}"
(cd "${out}" && ls -l --block-size=K)
