#!/usr/bin/env bash
# Kubernetes' own storage e2e (k8s.io/kubernetes/test/e2e at the line's upstream tag, unmodified)
# against a kind cluster: the specs that drive the PV binder, chosen in test/upstream-e2e/specs.txt.
# hack/e2e/e2e-kind.sh calls it; docs/maintainers/upstream-e2e.md says what runs where.
#
#   upstream-e2e.sh prepare REGISTRY   build e2e.test (go test -c, cached per tag) and the test
#                                      images the specs pull (agnhost, busybox and an nginx stand-in
#                                      under upstream's names, local-path-provisioner), push them to REGISTRY
#                                      (hack/e2e/registry.sh); writes the KUBE_TEST_REPO_LIST file
#   upstream-e2e.sh run ARM SET        the specs of SET (ci or full) against KUBECONFIG, with a
#                                      default provisioning StorageClass installed for the run and
#                                      removed after; junit in _output/upstream-e2e/ARM.xml. ARM
#                                      names the binder in place: upstream (KCM's) or ours
#   upstream-e2e.sh report             the parity table of the arms that ran:
#                                      _output/upstream-e2e/parity.md
#   upstream-e2e.sh list SET           the focus and skip expressions SET runs with
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "${REPO_ROOT}"

out="${REPO_ROOT}/_output/upstream-e2e"
specs="${REPO_ROOT}/test/upstream-e2e/specs.txt"
module="${REPO_ROOT}/test/upstream-e2e"
mkdir -p "${out}"

# The module that pins upstream's e2e for KUBE_VERSION: test/upstream-e2e on the default line; for
# another line a copy of it pinned to that line's tag (its go.sum filled in by go mod tidy, from
# the versions upstream's own go.mod names).
e2e_module() {
  if [[ "${KUBE_VERSION}" == "$(upstream_tag)" ]]; then
    echo "${module}"
    return
  fi
  local dir="${out}/${KUBE_VERSION}/module"
  if [[ ! -f "${dir}/go.sum" || "$(cat "${dir}/.tag" 2>/dev/null)" != "${KUBE_VERSION}" ]]; then
    rm -rf "${dir}" && mkdir -p "${dir}"
    cp "${module}/go.mod" "${module}/tools.go" "${dir}/"
    hack/release/pin-kubernetes.sh "${KUBE_VERSION}" "${dir}/go.mod" >&2
    (cd "${dir}" && GOWORK=off go mod tidy >&2)
    echo "${KUBE_VERSION}" >"${dir}/.tag"
  fi
  echo "${dir}"
}

# set_expressions SET prints two lines: the focus (every ci line, and full lines for SET=full) and
# the skip (every skip line), each an alternation of the file's regular expressions.
set_expressions() {
  local set="$1"
  # An unknown SET would select nothing, and an empty focus runs the whole suite.
  if [[ "${set}" != ci && "${set}" != full ]]; then
    echo "upstream-e2e: SET must be ci or full, got ${set:-<empty>}" >&2
    exit 2
  fi
  awk -F '\t+' -v set="${set}" '
    /^#/ || NF < 2 { next }
    $1 == "ci" || ($1 == "full" && set == "full") { focus = focus (focus == "" ? "" : "|") "(" $2 ")" }
    $1 == "skip" { skip = skip (skip == "" ? "" : "|") "(" $2 ")" }
    END { print focus; print skip }' "${specs}"
}

prepare() {
  local registry="$1" dir tag version
  dir="$(e2e_module)"
  version="$(cd "${dir}" && GOWORK=off go list -m -f '{{.Version}}' k8s.io/kubernetes)"
  local bin="${out}/${version}"
  mkdir -p "${bin}"
  if [[ ! -x "${bin}/e2e.test" || "$(cat "${bin}/.stamp" 2>/dev/null)" != "${version}" ]]; then
    local t=${SECONDS}
    echo "upstream-e2e: building e2e.test and agnhost of k8s.io/kubernetes ${version}" >&2
    (cd "${dir}" && GOWORK=off CGO_ENABLED=0 go test -c -trimpath -ldflags '-s -w' -o "${bin}/e2e.test" k8s.io/kubernetes/test/e2e)
    (cd "${dir}" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "${bin}/agnhost" k8s.io/kubernetes/test/images/agnhost)
    echo "${version}" >"${bin}/.stamp"
    echo "upstream-e2e: built in $((SECONDS - t))s" >&2
  fi
  hack/cluster/build-tools.sh local-path-provisioner >&2

  # The images, under the names upstream's image manifest gives them (test/utils/image/manifest.go
  # of the same tag), in REGISTRY instead of registry.k8s.io: KUBE_TEST_REPO_LIST moves only the
  # e2e-test-images repository, the one these specs pull from.
  local manifest k8s_dir busybox links=() agnhost_tag busybox_tag nginx_tag
  k8s_dir="$(cd "${dir}" && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes)"
  manifest="${k8s_dir}/test/utils/image/manifest.go"
  nginx_tag="$(sed -n 's/.*configs\[Nginx\] = Config{list.PromoterE2eRegistry, "nginx", "\(.*\)"}/\1/p' "${manifest}")"
  agnhost_tag="$(sed -n 's/.*configs\[Agnhost\] = Config{list.PromoterE2eRegistry, "agnhost", "\(.*\)"}/\1/p' "${manifest}")"
  busybox_tag="$(sed -n 's/.*configs\[BusyBox\] = Config{list.PromoterE2eRegistry, "busybox", "\(.*\)"}/\1/p' "${manifest}")"
  [[ -n "${agnhost_tag}" && -n "${busybox_tag}" && -n "${nginx_tag}" ]] || { echo "upstream-e2e: agnhost, busybox or nginx not found in ${manifest}" >&2; exit 1; }
  busybox="$(busybox_static)"
  # Every applet busybox has, at /bin: upstream's busybox image has them, and the hostexec pods
  # run nsenter and sh from agnhost's image.
  local applet
  for applet in $("${busybox}" --list); do
    [[ "${applet}" == busybox ]] || links+=(--symlink "bin/${applet}=/bin/busybox")
  done
  local images="${out}/images"
  mkdir -p "${images}"
  mkimage --file "${busybox}=/bin/busybox" "${links[@]}" --entrypoint "" --cmd /bin/sh --user 0:0 \
    --title busybox --version "${busybox_tag}" --tag "${registry}/e2e-test-images/busybox:${busybox_tag}" --out "${images}/busybox.tar"
  # The hostexec pods run "nsenter --mount=/rootfs/proc/1/ns/mnt -- sh -c CMD" in agnhost: CMD must
  # run the node's own sh and tools (losetup, mkfs, blkid). busybox's nsenter would run its own
  # applets even in the node's mount namespace, so agnhost's image carries util-linux's nsenter
  # with the libraries it links, from this machine's Debian packages (as upstream's image carries
  # Alpine's), and the usual PATH with the sbin directories, where Debian keeps those tools.
  local nsenter_files=() lib
  for lib in $(ldd /usr/bin/nsenter | awk '$3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
    nsenter_files+=(--file "$(readlink -f "${lib}")=${lib}")
  done
  mkimage --file "${bin}/agnhost=/agnhost" --file "${busybox}=/bin/busybox" "${links[@]}" --file /usr/bin/nsenter=/usr/bin/nsenter \
    "${nsenter_files[@]}" --path /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --entrypoint /agnhost --cmd pause \
    --user 0:0 --title agnhost --version "${agnhost_tag}" --tag "${registry}/e2e-test-images/agnhost:${agnhost_tag}" --out "${images}/agnhost.tar"
  # The StatefulSet specs of the list run nginx only as a container that stays up with the volumes
  # mounted, or run sh, touch and test in it; no request is sent to it. So: a stand-in under nginx's
  # name, busybox's httpd in the foreground on port 80 and busybox's applets. nginx itself is
  # neither a Go module nor a static Debian binary.
  mkimage --file "${busybox}=/bin/busybox" "${links[@]}" --entrypoint /bin/httpd,-f,-p,80,-h,/ --user 0:0 \
    --title "nginx stand-in (busybox httpd)" --version "${nginx_tag}" --tag "${registry}/e2e-test-images/nginx:${nginx_tag}" --out "${images}/nginx.tar"
  mkimage --file "${TOOLS_BIN}/local-path-provisioner=/usr/bin/local-path-provisioner" --entrypoint /usr/bin/local-path-provisioner \
    --user 0:0 --title local-path-provisioner --version "${LOCAL_PATH_VERSION}" \
    --tag "${registry}/local-path-provisioner:${LOCAL_PATH_VERSION}" --out "${images}/local-path.tar"
  hack/e2e/registry.sh push "${images}/busybox.tar" "${registry}/e2e-test-images/busybox:${busybox_tag}" >/dev/null
  hack/e2e/registry.sh push "${images}/agnhost.tar" "${registry}/e2e-test-images/agnhost:${agnhost_tag}" >/dev/null
  hack/e2e/registry.sh push "${images}/nginx.tar" "${registry}/e2e-test-images/nginx:${nginx_tag}" >/dev/null
  hack/e2e/registry.sh push "${images}/local-path.tar" "${registry}/local-path-provisioner:${LOCAL_PATH_VERSION}" >/dev/null
  echo "upstream-e2e: pushed busybox:${busybox_tag}, agnhost:${agnhost_tag}, nginx:${nginx_tag} (a stand-in; e2e-test-images) and local-path-provisioner:${LOCAL_PATH_VERSION} to ${registry}" >&2
  printf 'promoterE2eRegistry: %s/e2e-test-images\n' "${registry}" >"${out}/repo-list.yaml"
  printf '%s\n' "${bin}/e2e.test" >"${out}/e2e-test-path"
  printf '%s/e2e-test-images/busybox:%s\n%s/local-path-provisioner:%s\n' "${registry}" "${busybox_tag}" "${registry}" "${LOCAL_PATH_VERSION}" >"${out}/images.txt"
}

mkimage() { (cd hack/cmd/image && GOWORK=off CGO_ENABLED=0 go run . "$@" >/dev/null); }

kubectl() { "${TOOLS_BIN}/kubectl" --kubeconfig "${KUBECONFIG:?}" "$@"; }

# loop_devices readies the block local-volume specs, which run "losetup -f FILE" on the node: loop
# devices are the kernel's, shared with this machine, and a kind node's /dev holds only the device
# nodes that existed when it started, so a free device the kernel adds later has no node there.
# Each node gets nodes for loop0-63. And a run that was killed leaves its devices attached to
# deleted files (the specs detach them as they end): those, named by the specs' backing files, are
# detached first.
loop_devices() {
  local dev node
  for dev in $(losetup -a 2>/dev/null | awk -F: '/local-volume-test-/ { print $1 }'); do
    losetup -d "${dev}" 2>/dev/null || true
  done
  for node in $(kubectl get nodes -o jsonpath='{.items[*].metadata.name}'); do
    docker exec "${node}" sh -c 'for i in $(seq 0 63); do [ -e /dev/loop$i ] || mknod -m 0660 /dev/loop$i b 7 $i; done'
  done
}

run() {
  local arm="$1" set="$2" focus skip e2e busybox_image provisioner_image apiserver expressions
  [[ "${arm}" == upstream || "${arm}" == ours ]] || { echo "upstream-e2e: ARM must be upstream or ours, got ${arm}" >&2; exit 2; }
  expressions="$(set_expressions "${set}")"
  { read -r focus; read -r skip; } <<<"${expressions}"
  [[ -n "${focus}" ]] || { echo "upstream-e2e: ${specs} selects no spec for ${set}" >&2; exit 2; }
  e2e="$(cat "${out}/e2e-test-path")"
  { read -r busybox_image; read -r provisioner_image; } <"${out}/images.txt"
  # The provisioner runs on the host network (no kube-proxy here) and reaches the apiserver of the
  # first control-plane node by its address on kind's network, which its serving certificate names.
  apiserver="$(kubectl get nodes -l node-role.kubernetes.io/control-plane -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')"
  sed -e "s#HELPER_IMAGE#${busybox_image}#g" -e "s#IMAGE#${provisioner_image}#" -e "s#APISERVER_HOST#${apiserver}#" \
    hack/e2e/upstream/local-path.yaml >"${out}/local-path.yaml"
  loop_devices
  kubectl apply -f "${out}/local-path.yaml" >/dev/null
  kubectl -n local-path-storage rollout status deployment/local-path-provisioner --timeout=3m >/dev/null
  local rc=0 t=${SECONDS}
  echo "upstream-e2e: ${arm}: $(basename "$(dirname "${e2e}")")'s e2e.test, set ${set}"
  # The framework's own defaults otherwise; --provider=skeleton: no cloud. The control-plane
  # nodes' taint is upstream's default non-blocking taint. UPSTREAM_E2E_PROCS (default 3) runs the
  # specs in that many ginkgo processes (the ginkgo CLI of the same version drives the compiled
  # e2e.test, as upstream's CI does); [Serial] specs run alone at the end. A spec mostly waits for
  # pods: the full list took ~33 s a spec in one process, about 10 minutes in 3 (upstream-e2e.md).
  local procs="${UPSTREAM_E2E_PROCS:-3}"
  local test_args=(--provider=skeleton --kubeconfig="${KUBECONFIG}" --report-dir="${out}/${arm}")
  local ginkgo_args=(--focus="${focus}" --no-color --silence-skips --timeout="${UPSTREAM_E2E_TIMEOUT:-2h}"
    --junit-report="${out}/${arm}.xml")
  [[ -n "${skip}" ]] && ginkgo_args+=(--skip="${skip}")
  rm -rf "${out:?}/${arm}" "${out}/${arm}.xml" && mkdir -p "${out}/${arm}"
  if [[ "${procs}" -gt 1 ]]; then
    hack/cluster/build-tools.sh ginkgo >/dev/null
    KUBE_TEST_REPO_LIST="${out}/repo-list.yaml" PATH="${TOOLS_BIN}:${PATH}" "${TOOLS_BIN}/ginkgo" run -p --procs="${procs}" \
      "${ginkgo_args[@]}" "${e2e}" -- "${test_args[@]}" >"${out}/${arm}.log" 2>&1 || rc=$?
  else
    KUBE_TEST_REPO_LIST="${out}/repo-list.yaml" PATH="${TOOLS_BIN}:${PATH}" "${e2e}" "${test_args[@]}" \
      "${ginkgo_args[@]/#--/--ginkgo.}" >"${out}/${arm}.log" 2>&1 || rc=$?
  fi
  grep -E '^(Ran [0-9]+ of|FAIL!|SUCCESS!|\[FAIL\]|  \[FAIL\])' "${out}/${arm}.log" | sort -u | head -40 || true
  echo "upstream-e2e: ${arm}: exit ${rc} after $((SECONDS - t))s (log ${out}/${arm}.log)"
  kubectl delete -f "${out}/local-path.yaml" --ignore-not-found --wait=false >/dev/null || true
  return "${rc}"
}

report() {
  (cd hack/cmd/e2eparity && GOWORK=off go run . -out "${out}/parity.md" "${out}"/upstream.xml "${out}"/ours.xml)
}

case "${1:-}" in
prepare) prepare "${2:?upstream-e2e.sh prepare REGISTRY}" ;;
run) run "${2:?upstream-e2e.sh run ARM SET}" "${3:?upstream-e2e.sh run ARM SET}" ;;
report) report ;;
list) set_expressions "${2:-full}" ;;
*)
  echo "usage: upstream-e2e.sh prepare REGISTRY | run ARM SET | report | list SET" >&2
  exit 2
  ;;
esac
